"""The program graph of the HTML report: ops as nodes, values as edges, calls and loops as groups.

`program_graph` reads a propagated module in which the report inserted its collectives
(`report._collectives_of_propagated`) and returns compact JSON-ready lists the page lays out:

- ``graphs``: one per block shown: ``[title, kind, owner node or -1]``; graph 0 is the entry
  func's body. A ``func.call`` owns its callee's graph (built once, shared by every call to
  it); an op with regions (``stablehlo.while``/``case``, ``sdy.named_computation``,
  ``sdy.manual_computation``) owns one graph per region.
- ``nodes``: ``[graph, kind, label, [value indices], [child graphs], color index]``, kind
  ``arg``, ``op`` or ``result``: each func or region argument, each op (but collectives and
  terminators), each func result. A value index points into the report's ``values``.
- ``edges``: ``[graph, source node, target node, [collective indices]]``, always inside one
  graph: a value captured from an enclosing block is drawn to the op that holds the region.
  A collective the report inserted is no node but a mark on the edge it sits on, with its
  index in the report's ``collectives`` (a chain of them: all, in order).

Colors: one per distinct sharding of the values drawn, in order of first use; tensors with no
axis on any dim share a grey (``colors``: ``[sharding, color, count]``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from shardwise.explain.provenance import Key, func_name
from shardwise.explain.summary import entry_func
from shardwise.ir import Block, Module, Op, Value
from shardwise.sdy.funcs import callee_name

__all__ = ["GROUP_OPS", "is_collective", "program_graph"]

# Ops drawn as groups holding their regions' ops (other regions, a reduce's or a sort's
# scalar body, are details of their op and not drawn).
GROUP_OPS = frozenset(
    {
        "stablehlo.while",
        "stablehlo.case",
        "stablehlo.if",
        "sdy.named_computation",
        "sdy.manual_computation",
    }
)
_COLLECTIVES = frozenset(
    {
        "sdy.all_reduce",
        "sdy.all_gather",
        "sdy.all_slice",
        "sdy.all_to_all",
        "sdy.collective_permute",
        "sdy.reduce_scatter",
    }
)
_TERMINATORS = frozenset({"func.return", "stablehlo.return", "sdy.return"})

# Distinct light colors (hues far apart first); replicated tensors are grey.
_PALETTE = (
    "#a6cee3", "#b2df8a", "#fb9a99", "#fdbf6f", "#cab2d6", "#ffff99",
    "#8dd3c7", "#bebada", "#fccde5", "#ccebc5", "#ffed6f", "#80b1d3",
)  # fmt: skip
GREY = "#e0e0e0"
REPLICATED = "replicated (no axis)"


def is_collective(op: Op) -> bool:
    """A collective `sdy-reshard-to-collectives` writes (the report lists each)."""
    return op.name in _COLLECTIVES


def color_key(sharding: str | None) -> str:
    """Tensors with no axis on any dim share one (grey) color."""
    return sharding if sharding is not None and '{"' in sharding else REPLICATED


def color(index: int) -> str:
    if index < len(_PALETTE):
        return _PALETTE[index]
    return f"hsl({(index * 137) % 360},60%,{75 + 10 * (index % 2)}%)"


@dataclass
class _Graph:
    """The lists being built, and what they refer to."""

    module: Module
    value_index: dict[Key, int]  # report key (Value or "main:result0") -> values index
    shardings: list[str | None]  # the sharding text of each value of the report
    collective_index: dict[int, int]  # id(collective op) -> index in the report's list
    graphs: list[list[Any]] = field(default_factory=list)
    nodes: list[list[Any]] = field(default_factory=list)
    edges: list[list[Any]] = field(default_factory=list)
    colors: dict[str, int] = field(default_factory=dict)
    counts: list[int] = field(default_factory=list)
    func_graphs: dict[str, list[int]] = field(default_factory=dict)

    def new_graph(self, title: str, kind: str, owner: int) -> int:
        self.graphs.append([title, kind, owner])
        return len(self.graphs) - 1

    def color_of(self, values: list[int]) -> int:
        key = color_key(self.shardings[values[0]]) if values else REPLICATED
        if key not in self.colors:
            self.colors[key] = len(self.colors)
            self.counts.append(0)
        index = self.colors[key]
        self.counts[index] += 1
        return index

    def add_node(self, graph: int, kind: str, label: str, values: list[int]) -> int:
        self.nodes.append([graph, kind, label, values, [], self.color_of(values)])
        return len(self.nodes) - 1

    def values_of(self, keys: list[Any]) -> list[int]:
        return [self.value_index[k] for k in keys if k in self.value_index]


def program_graph(
    module: Module,
    value_index: dict[Key, int],
    shardings: list[str | None],
    collective_ops: list[Op],
) -> dict[str, Any]:
    """The graph of `module`'s entry func (see the module doc); `value_index` maps each key
    of the report's values (a `Value`, or a func result key) to its index there."""
    g = _Graph(module, value_index, shardings, {id(op): i for i, op in enumerate(collective_ops)})
    func = entry_func(module)
    if func is not None:
        _func_graph(g, func, -1)
    ordered = sorted(g.colors, key=g.colors.__getitem__)
    grey_first = {key: i for i, key in enumerate(k for k in ordered if k != REPLICATED)}
    return {
        "graphs": g.graphs,
        "nodes": g.nodes,
        "edges": g.edges,
        "colors": [
            [key, GREY if key == REPLICATED else color(grey_first[key]), g.counts[i]]
            for i, key in enumerate(ordered)
        ],
    }


def _func_graph(g: _Graph, func: Op, owner: int) -> list[int]:
    """The graph of a func body (once per func: later calls share it)."""
    name = func_name(func)
    if name in g.func_graphs:
        return g.func_graphs[name]
    gid = g.new_graph(f"func @{name}", "func", owner)
    g.func_graphs[name] = [gid]
    block = func.regions[0].entry
    results = [f"{name}:result{i}" for i in range(len(_terminator_operands(block)))]
    _block_graph(g, gid, block, name, results)
    return [gid]


def _terminator_operands(block: Block) -> list[Value]:
    term = block.terminator
    return list(term.operands) if term is not None and term.name in _TERMINATORS else []


def _block_graph(g: _Graph, gid: int, block: Block, func: str, result_keys: list[str]) -> None:
    """Nodes and edges of one block: its arguments, its ops, its results."""
    node_of: dict[int, int] = {}  # id(value) -> the node that defines it in this block
    for i, arg in enumerate(block.args):
        label = f"{func}:arg{i}" if result_keys or gid == 0 else f"arg{i}"
        node_of[id(arg)] = g.add_node(gid, "arg", label, g.values_of([arg]))
    for op in block.ops:
        if is_collective(op) or op.name in _TERMINATORS:
            continue
        label = op.name.removeprefix("stablehlo.")
        if op.name == "func.call":
            label = f"call @{callee_name(op)}"
        node = g.add_node(gid, "op", label, g.values_of(op.results))
        for v in op.results:
            node_of[id(v)] = node
        operands = list(op.operands) + _captured(op, block)
        _add_edges(g, gid, node_of, operands, node)
        g.nodes[node][4] = _children(g, op, node)
    term = block.terminator
    if term is None or term.name not in _TERMINATORS:
        return
    if result_keys:  # a func: one node per result, named as the report names it
        for key, v in zip(result_keys, term.operands, strict=True):
            node = g.add_node(gid, "result", key, g.values_of([key]))
            _add_edges(g, gid, node_of, [v], node)
    elif term.operands:  # a region: what it yields
        node = g.add_node(gid, "result", "return", [])
        _add_edges(g, gid, node_of, list(term.operands), node)


def _add_edges(g: _Graph, gid: int, node_of: dict[int, int], operands: list[Value], dst: int):
    """An edge from the node defining each operand (through inserted collectives) to `dst`."""
    seen: set[tuple[int, tuple[int, ...]]] = set()
    for v in operands:
        marks: list[int] = []
        while (op := v.defining_op) is not None and is_collective(op) and op.operands:
            marks.append(g.collective_index.get(id(op), -1))
            v = op.operands[0]
        src = node_of.get(id(v))
        edge = (src, tuple(reversed(marks)))
        if src is None or edge in seen:
            continue  # defined in an enclosing block: drawn to the op holding this region
        seen.add(edge)  # type: ignore[arg-type]
        g.edges.append([gid, src, dst, list(edge[1])])


def _captured(op: Op, block: Block) -> list[Value]:
    """The values of `block` that ops inside `op`'s regions use (captured, not operands)."""
    if not op.regions:
        return []
    out: list[Value] = []
    own = {id(v) for v in op.operands}
    for inner in op.walk():
        if inner is op or is_collective(inner):  # a collective: a mark on its user's edge
            continue
        for v in inner.operands:
            root = _through_collectives(v)
            owner = root.owner if root.is_block_arg else root.owner.parent  # type: ignore[union-attr]
            if owner is block and id(v) not in own:
                own.add(id(v))
                out.append(v)
    return out


def _through_collectives(v: Value) -> Value:
    while (op := v.defining_op) is not None and is_collective(op) and op.operands:
        v = op.operands[0]
    return v


def _children(g: _Graph, op: Op, node: int) -> list[int]:
    """The graphs a node holds: its callee's body, or one per region of a group op."""
    if op.name == "func.call":
        callee = g.module.lookup_symbol(callee_name(op))
        if callee is None or callee.name != "func.func" or not callee.regions[0].blocks:
            return []
        return _func_graph(g, callee, node)
    if op.name not in GROUP_OPS:
        return []
    out = []
    for i, region in enumerate(op.regions):
        if not region.blocks:
            continue
        title = _region_title(op, i)
        gid = g.new_graph(title, "region", node)
        _block_graph(g, gid, region.entry, title, [])
        out.append(gid)
    return out


def _region_title(op: Op, i: int) -> str:
    short = op.name.split(".", 1)[1]
    if op.name == "stablehlo.while":
        return f"{short} {'cond' if i == 0 else 'body'}"
    if op.name in ("stablehlo.case", "stablehlo.if"):
        return f"{short} branch {i}"
    name = op.get_attr("name")
    return f"{short} {str(name).strip(chr(34))}" if name is not None else short
