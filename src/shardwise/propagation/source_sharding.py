"""Propagation debug info: sharding origins and propagation edges (Shardy `source_sharding`).

With ``debug-sharding-origins`` every axis of a user-given sharding (func inputs
``input: i``, func outputs ``output: i``, sharding constraints ``constraint_<n>``, manual
computation in/out shardings ``mc_<n>_input: i`` / ``mc_<n>_output: i``) is its own origin,
and origins travel with the axes as propagation copies them: each value ends with a dict
``{axis = "origin"}`` (``"self"`` on the holder that gave the axis).

With ``debug-propagation-edge-sharding`` every propagation step that changed something gets a
number (continuing after the largest step already in the module), and each newly added axis
records the edge it came through: ``"a" = operand-0 -> [operand-1, result-0]``, stored on the
op it flowed through (func results keep theirs in their result attributes, always index 0).

`DebugInfoRecorder` is a propagation observer (see `PropagationDriver`): it sees the factor
shardings before and after each step, finds which operand/result each new axis came from
(sub-axes split over adjacent factors of one dim merged back), and `save` writes the
attributes. `record_update` records the step `sdy-apply-sharding-constraints` makes.

Where Shardy's output depends on hash-map order (two entries of one step for the same axis
name, e.g. two sub-axes of it or two sources), we sort by axis then source. Shardy crashes on
debug info with sharding groups and on ops erased as dead; we record what we can.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from shardwise.axis import AxisRef, PrefixStatus, is_axis_list_prefix_of
from shardwise.ir import (
    ArrayAttr,
    DictAttr,
    Module,
    Op,
    RawAttr,
    Value,
    func_arg_attrs,
    func_result_attrs,
)
from shardwise.mesh import Mesh
from shardwise.propagation.projection import ShardingProjection, TensorFactorShardings
from shardwise.rules.rule import OpShardingRule, TensorMapping
from shardwise.sdy.shardings import (
    data_flow_edge_for_target,
    get_func_result_sharding,
    get_sharding,
    owning_op,
    shardable_value,
)
from shardwise.sharding import TensorSharding, TensorShardingPerValue

__all__ = ["DebugInfoRecorder", "combine_observers", "maximum_propagation_step"]

ORIGINS_ATTR = "sdy.sharding_origins"
ORIGIN_NAME_ATTR = "sdy.sharding_origin_name"
EDGES_ATTR = "sdy.propagation_edges"

OPERAND, RESULT = 0, 1
_NODE_NAMES = ("operand", "result")


@dataclass(frozen=True, slots=True)
class Origin:
    """`OriginSharding`: kind is input, output, constraint, mc_input or mc_output."""

    kind: str
    index: int = 0
    source_id: int = 0

    def __str__(self) -> str:
        if self.kind == "constraint":
            return f"constraint_{self.source_id}"
        if self.kind in ("mc_input", "mc_output"):
            return f"mc_{self.source_id}_{self.kind[3:]}: {self.index}"
        return f"{self.kind}: {self.index}"


@dataclass(frozen=True, slots=True)
class Edge:
    """`PropagationEdge`: (kind, index) of the source and the target, and the step."""

    source: tuple[int, int]
    target: tuple[int, int]
    step: int


def maximum_propagation_step(module: Module) -> int:
    """The largest ``step-N`` in any op's ``sdy.propagation_edges`` (-1 if none)."""
    steps = [-1]
    for op in module.walk():
        attr = op.attributes.get(EDGES_ATTR)
        if attr is not None:
            steps.extend(int(s) for s in re.findall(r"step-(\d+)", str(attr)))
    return max(steps)


def _quoted(text: str) -> RawAttr:
    return RawAttr('"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"')


# -- finding the source of new axes (createSourceMap) ------------------------------------------


def _match(new_axes, factor: int, old_tensors: Sequence[TensorFactorShardings]) -> int | None:
    for index, tensor in enumerate(old_tensors):
        old = tensor.get(factor)
        if old is not None and is_axis_list_prefix_of(new_axes, old.axis_refs) != (
            PrefixStatus.NOT_A_PREFIX
        ):
            return index
    return None


def _save_edges(new_axes, old_axes, edge: Edge, into: dict) -> None:
    last = len(old_axes) - 1
    if old_axes and last < len(new_axes) and old_axes[last] != new_axes[last]:
        into.setdefault(new_axes[last], edge)
    for axis in new_axes[len(old_axes) :]:
        into.setdefault(axis, edge)


def _visit_value(old_p, new_p, old, new, node, mapping: TensorMapping, mesh, step, into) -> None:
    for dim_mapping in mapping:
        previous: AxisRef | None = None
        for factor in dim_mapping:
            old_axes = old.factor_index_to_sharding[factor].axis_refs
            new_axes = new.factor_index_to_sharding[factor].axis_refs
            if old_axes == new_axes:
                continue
            last_new = new_axes[-1]
            if previous is not None and previous.can_merge(last_new):
                into.pop(previous, None)
                last_new = previous.merge(last_new, mesh)
            previous = new_axes[-1]
            introduced = (*new_axes[:-1], last_new)
            for kind, tensors in ((OPERAND, old_p.operands), (RESULT, old_p.results)):
                source = _match(new_axes, factor, tensors)
                if source is not None:
                    _save_edges(introduced, old_axes, Edge((kind, source), node, step), into)
                    break


def create_source_map(old_p, new_p, rule: OpShardingRule, mesh: Mesh, step: int):
    """Per operand and per result: new axis -> the edge it came through."""
    sides = []
    for kind, olds, news, mappings in (
        (OPERAND, old_p.operands, new_p.operands, rule.operand_mappings),
        (RESULT, old_p.results, new_p.results, rule.result_mappings),
    ):
        maps: list[dict[AxisRef, Edge]] = []
        for i, (old, new) in enumerate(zip(olds, news, strict=True)):
            into: dict[AxisRef, Edge] = {}
            _visit_value(old_p, new_p, old, new, (kind, i), mappings[i], mesh, step, into)
            maps.append(into)
        sides.append(maps)
    return sides[0], sides[1]


# -- printing #sdy.propagation_edges -------------------------------------------------------------


def _node(node: tuple[int, int]) -> str:
    return f"{_NODE_NAMES[node[0]]}-{node[1]}"


def propagation_edges_text(axis_to_edges: dict[AxisRef, list[Edge]]) -> str:
    """`createPropagationEdges`: min step per (axis, source, target), grouped by step."""
    min_step: dict[tuple[AxisRef, tuple[int, int], tuple[int, int]], int] = {}
    for axis, edges in axis_to_edges.items():
        for edge in edges:
            key = (axis, edge.source, edge.target)
            if key not in min_step or edge.step < min_step[key]:
                min_step[key] = edge.step
    per_step: dict[int, dict[tuple[AxisRef, tuple[int, int]], set]] = {}
    for (axis, source, target), step in min_step.items():
        per_step.setdefault(step, {}).setdefault((axis, source), set()).add(target)
    steps = []
    for step in sorted(per_step):
        entries = sorted(per_step[step].items(), key=lambda kv: (kv[0][0].sort_key(), kv[0][1]))
        items = [
            f"{{{axis} = {_node(source)} -> [{', '.join(_node(t) for t in sorted(targets))}]}}"
            for (axis, source), targets in entries
        ]
        steps.append(f"{{step-{step} = [{', '.join(items)}]}}")
    return f"#sdy.propagation_edges<[{', '.join(steps)}]>"


# -- the recorder ----------------------------------------------------------------------------------


class DebugInfoRecorder:
    """`ShardingDebugMappings` + `SourceShardingHandler`, as a propagation observer."""

    def __init__(self, module: Module, origins: bool, edges: bool) -> None:
        self.module = module
        self.origins = origins
        self.edges = edges
        # `prepareHandler`; nothing is walked when both options are off.
        self.step = maximum_propagation_step(module) + 1 if origins or edges else 0
        self.value_origins: dict[int, tuple[Value, dict[AxisRef, Origin]]] = {}
        self.op_edges: dict[int, tuple[Op, dict[AxisRef, list[Edge]]]] = {}
        self.func_result_edges: dict[int, tuple[Op, list[dict[AxisRef, list[Edge]]]]] = {}
        self._pending: tuple | None = None
        if origins:
            self._prepare_origins()
        if edges:
            for func in module.funcs:
                func_return = _func_return(func)
                n = len(func_return.operands) if func_return is not None else 0
                self.func_result_edges[id(func)] = (func, [{} for _ in range(n)])

    @property
    def enabled(self) -> bool:
        return self.origins or self.edges

    # -- initial origins (prepareShardingOriginsHandler) ----------------------------------------

    def _add_origins(self, sharding, origin: Origin, value: Value | None) -> None:
        if sharding is None or value is None:
            return
        key = shardable_value(value)
        if key is None:
            return
        for dim in sharding.dim_shardings:
            for axis in dim.axes:
                self._origins_of(key).setdefault(axis, origin)

    def _origins_of(self, value: Value) -> dict[AxisRef, Origin]:
        entry = self.value_origins.get(id(value))
        if entry is None:
            entry = self.value_origins[id(value)] = (value, {})
        return entry[1]

    def _prepare_origins(self) -> None:
        walk = list(self.module.op.walk_post_order())
        constraints = [op for op in walk if op.name == "sdy.sharding_constraint"]
        for n, op in enumerate(constraints):
            origin = Origin("constraint", 0, n)
            self._add_origins(op.get_attr("sharding"), origin, op.results[0])
            op.attributes[ORIGIN_NAME_ATTR] = _quoted(str(origin))
            self._add_origins(get_sharding(op.operands[0]), origin, op.operands[0])
        manuals = [op for op in walk if op.name == "sdy.manual_computation"]
        for n, op in enumerate(manuals):
            self._prepare_manual_computation(op, n)
        for func in self.module.funcs:
            func_return = _func_return(func)
            if func_return is None:
                continue
            for arg in func.regions[0].entry.args:
                self._add_origins(get_sharding(arg), Origin("input", arg.index), arg)
            for i, value in enumerate(func_return.operands):
                sharding = get_func_result_sharding(func, i)
                self._add_origins(sharding, Origin("output", i), value)

    def _prepare_manual_computation(self, op: Op, n: int) -> None:
        for i, sharding in enumerate(_per_value(op, "in_shardings")):
            arg = op.regions[0].entry.args[i]
            edge = data_flow_edge_for_target(arg)
            origin = Origin("mc_input", i, n)
            if edge is not None:
                self._add_origins(sharding, origin, edge.results[0])
            self._add_origins(get_sharding(op.operands[i]), origin, op.operands[i])
        for i, sharding in enumerate(_per_value(op, "out_shardings")):
            edge = data_flow_edge_for_target(op.results[i])
            if edge is not None:
                self._add_origins(sharding, Origin("mc_output", i, n), edge.results[0])
        op.attributes[ORIGIN_NAME_ATTR] = _quoted(f"mc_{n}")

    # -- observer hooks ---------------------------------------------------------------------------

    def step_info(self, driver, op, operands, results, rule, _directions, mesh_name) -> None:
        self._pending = (list(operands), list(results), rule, driver.meshes[mesh_name])

    def before_step(self, _op: Op, projection: ShardingProjection) -> None:
        self._old = projection.copy()

    def after_step(self, op: Op, projection: ShardingProjection) -> None:
        assert self._pending is not None
        operands, results, rule, mesh = self._pending
        self.record(op, operands, results, rule, mesh, self._old, projection)

    def record_update(self, op: Op, rule: OpShardingRule, update: Callable[[], None]) -> None:
        """Run `update` (a sharding change outside propagation) as one recorded step if it
        changes `op`'s projection (`sdy-apply-sharding-constraints`)."""
        mesh = self._common_mesh(op)
        if mesh is None:
            update()
            return
        operands, results = list(op.operands), list(op.results)

        def project() -> ShardingProjection:
            return ShardingProjection.build(
                [get_sharding(v) for v in operands], [get_sharding(v) for v in results], rule, mesh
            )

        old = project()
        update()
        new = project()
        if new != old:
            self.record(op, operands, results, rule, mesh, old, new)

    def _common_mesh(self, op: Op) -> Mesh | None:
        meshes = self.module.meshes()
        for value in (*op.operands, *op.results):
            sharding = get_sharding(value)
            if sharding is None:
                continue
            ref = sharding.mesh_or_ref
            mesh = ref if isinstance(ref, Mesh) else meshes.get(ref)
            if isinstance(mesh, Mesh):
                return mesh
        return None

    # -- one changed step (SourceShardingHandler::operator()) -----------------------------------

    def record(self, op, operands, results, rule, mesh, old_p, new_p) -> None:
        operand_maps, result_maps = create_source_map(old_p, new_p, rule, mesh, self.step)
        self.step += 1
        sides = (operands, results)
        for values, maps in ((operands, operand_maps), (results, result_maps)):
            for i, value in enumerate(values):
                for axis, edge in maps[i].items():
                    self._update(op, i, axis, edge, value, sides)

    def _update(self, op, i, axis, edge: Edge, value: Value, sides) -> None:
        if self.edges:
            if op.name == "func.func":
                func_entry = self.func_result_edges.get(id(op))
                if func_entry is not None and i < len(func_entry[1]):
                    func_entry[1][i].setdefault(axis, []).append(edge)
            else:
                op_entry = self.op_edges.setdefault(id(op), (op, {}))
                op_entry[1].setdefault(axis, []).append(edge)
        if self.origins:
            key = shardable_value(value)
            if key is None:
                return
            origin = self._look_up(sides[edge.source[0]][edge.source[1]], axis)
            if origin is not None:
                self._origins_of(key).setdefault(axis, origin)

    def _look_up(self, value: Value, axis: AxisRef) -> Origin | None:
        key = shardable_value(value)
        entry = self.value_origins.get(id(key)) if key is not None else None
        if entry is None:
            return None
        origins = entry[1]
        if axis in origins:
            return origins[axis]
        for other, origin in origins.items():
            if other.contains(axis) or axis.contains(other):
                return origin
        return None

    # -- saving (saveOnModule) ---------------------------------------------------------------------

    def save(self) -> None:
        if self.origins:
            for value, origins in self.value_origins.values():
                _save_origins(value, _origins_dict(origins))
            _override_origins_to_self(self.module)
        if self.edges:
            for op, axis_to_edges in self.op_edges.values():
                if axis_to_edges:
                    op.attributes[EDGES_ATTR] = RawAttr(propagation_edges_text(axis_to_edges))
            for func, per_result in self.func_result_edges.values():
                for index, axis_to_edges in enumerate(per_result):
                    if axis_to_edges:
                        attrs = func_result_attrs(func, index, create=True)
                        attrs[EDGES_ATTR] = RawAttr(propagation_edges_text(axis_to_edges))


def _func_return(func: Op) -> Op | None:
    """The return op of `func`; None if it has no body."""
    if not (func.regions and func.regions[0].blocks):
        return None
    return func.regions[0].entry.terminator


def _per_value(op: Op, key: str) -> tuple[TensorSharding, ...]:
    attr = op.get_attr(key)
    return attr.shardings if isinstance(attr, TensorShardingPerValue) else ()


def _origins_dict(origins: dict[AxisRef, Origin]) -> DictAttr:
    entries = {str(axis).replace('"', ""): str(origin) for axis, origin in origins.items()}
    return DictAttr({k: _quoted(entries[k]) for k in sorted(entries)})


def _save_origins(value: Value, attr: DictAttr) -> None:
    owner = owning_op(value)
    func: Op | None = owner
    while func is not None and func.name != "func.func":
        func = func.parent_op
    func_return = _func_return(func) if func is not None else None
    if func is not None and func_return is not None:
        for user, index in reversed(value.uses):  # MLIR use lists: newest use first
            if user is func_return:
                func_result_attrs(func, index, create=True)[ORIGINS_ATTR] = attr
                break
    if owner.name == "func.func":
        func_arg_attrs(owner, value.index, create=True)[ORIGINS_ATTR] = attr
    elif owner.name in ("sdy.sharding_constraint", "sdy.data_flow_edge"):
        owner.attributes[ORIGINS_ATTR] = attr
    elif not value.is_block_arg:
        current = owner.attributes.get(ORIGINS_ATTR)
        dicts = list(current.elements) if isinstance(current, ArrayAttr) else []
        if len(dicts) != len(owner.results):
            dicts = [DictAttr({}) for _ in owner.results]
        dicts[value.index] = attr
        owner.attributes[ORIGINS_ATTR] = ArrayAttr(dicts)


def _set_to_self(attrs: dict | None, name: str) -> None:
    if attrs is None:
        return
    current = attrs.get(ORIGINS_ATTR)
    if not isinstance(current, DictAttr):
        return
    quoted = str(_quoted(name))
    attrs[ORIGINS_ATTR] = DictAttr(
        {k: (_quoted("self") if str(v) == quoted else v) for k, v in current.entries.items()}
    )


def _override_origins_to_self(module: Module) -> None:
    walk = list(module.op.walk_post_order())
    for op in walk:
        if op.name == "sdy.sharding_constraint":
            name = op.attributes.get(ORIGIN_NAME_ATTR)
            if name is not None:
                _set_to_self(op.attributes, str(name).strip('"'))
    for func in module.funcs:
        func_return = _func_return(func)
        if func_return is None:
            continue
        for arg in func.regions[0].entry.args:
            _set_to_self(func_arg_attrs(func, arg.index), f"input: {arg.index}")
        for i in range(len(func_return.operands)):
            _set_to_self(func_result_attrs(func, i), f"output: {i}")
    for op in walk:
        if op.name != "sdy.manual_computation":
            continue
        name = str(op.attributes.get(ORIGIN_NAME_ATTR, RawAttr(""))).strip('"')
        for arg in op.regions[0].entry.args:
            edge = data_flow_edge_for_target(arg)
            if edge is not None:
                _set_to_self(edge.attributes, f"{name}_input: {arg.index}")
        for result in op.results:
            edge = data_flow_edge_for_target(result)
            if edge is not None:
                _set_to_self(edge.attributes, f"{name}_output: {result.index}")


# -- combining observers -----------------------------------------------------------------------


class _Observers:
    """Fan one driver's observer calls out to several observers."""

    def __init__(self, observers: list) -> None:
        self.observers = observers

    def step_info(self, *args) -> None:
        for o in self.observers:
            o.step_info(*args)

    def before_step(self, op, projection) -> None:
        for o in self.observers:
            o.before_step(op, projection)

    def after_step(self, op, projection) -> None:
        for o in self.observers:
            o.after_step(op, projection)


def combine_observers(*observers):
    """One observer calling each non-None observer in turn (None if there is none)."""
    present = [o for o in observers if o is not None]
    if not present:
        return None
    return present[0] if len(present) == 1 else _Observers(present)
