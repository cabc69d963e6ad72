"""`sdy-export-named-computations` (``export/export_named_computations.cc``).

Each ``sdy.named_computation`` (innermost first) becomes a private ``func.func`` named after
it (uniqued with ``_N`` suffixes like MLIR's SymbolTable) that carries its body, its
in-shardings as argument shardings and ``sdy.original_func_name``; the op itself becomes a
``func.call`` with the op's discardable attributes and its out-shardings. Shardings left on
data-flow edges are sunk first and those edges removed.
"""

from __future__ import annotations

from shardwise.export.sink_data_flow_edges import shardings_from_data_flow_edges
from shardwise.ir import (
    SHARDING_ATTR,
    ArrayAttr,
    BatchErase,
    DictAttr,
    Module,
    Op,
    RawAttr,
    Region,
    SymbolTable,
    TensorType,
    Value,
    ops_in_post_order,
    release_later,
    string_attr,
    string_attr_value,
    symbol_ref,
    unescape_string,
)
from shardwise.passes import sdy_pass
from shardwise.sdy.funcs import EXECUTION_THREAD_ATTR, ORIGINAL_FUNC_NAME_ATTR, fill_open
from shardwise.sdy.sharding_walker import get_per_value, set_per_value
from shardwise.sdy.shardings import get_sharding
from shardwise.sharding import TensorSharding

__all__ = ["export_named_computations", "export_named_computations_merged"]

_NAMED_COMPUTATION = frozenset({"sdy.named_computation"})


def _remove_data_flow_edges(values: list[Value], batch: BatchErase | None = None) -> None:
    """Erase the data-flow edge that is a value's first user (MLIR's newest use); with
    `batch`, the edges leave their blocks' op lists when it closes (one pass per block)."""
    for value in values:
        if not value.uses:
            continue
        edge = value.uses[-1][0]
        if edge.name != "sdy.data_flow_edge":
            continue
        assert len(value.uses) == 1, "a data-flow edge owner with several uses"
        edge.results[0].replace_all_uses_with(edge.operands[0])
        if batch is None:
            edge.erase()
        else:
            batch.erase(edge)


def _sink_edges(op: Op) -> None:
    shardings = shardings_from_data_flow_edges(list(op.regions[0].entry.args))
    if shardings:
        set_per_value(op, "in_shardings", shardings)
    shardings = shardings_from_data_flow_edges(list(op.results))
    if shardings:
        set_per_value(op, "out_shardings", shardings)


def _function_type(op: Op) -> RawAttr:
    args = ", ".join(str(a.type) for a in op.regions[0].entry.args)
    results = ", ".join(str(r.type) for r in op.results)
    return RawAttr(f"({args}) -> ({results})")


def _move_body(op: Op) -> Region:
    """`inlineRegionAndConvertTerminatorOp<func::ReturnOp>`: take the blocks, sdy.return ->
    func.return."""
    region = Region()
    for block in list(op.regions[0].blocks):
        region.add_block(block)
        old = block.ops[-1]
        ret = Op("func.return", list(old.operands), location=old.location, loc_text=old.loc_text)
        block.append(ret)
        old.erase()
    op.regions[0].blocks = []
    return region


def _create_func(op: Op, table: SymbolTable) -> str:
    name = string_attr_value(op.get_attr("name"))
    func = Op(
        "func.func",
        properties={
            "sym_name": string_attr(name),
            "function_type": _function_type(op),
            "sym_visibility": string_attr("private"),
        },
        attributes={ORIGINAL_FUNC_NAME_ATTR: string_attr(name)},
        location=op.location,
        loc_text=op.loc_text,
    )
    func.add_region(_move_body(op))
    _remove_data_flow_edges(list(func.regions[0].entry.args))
    in_shardings = get_per_value(op, "in_shardings")
    if in_shardings:
        func.properties["arg_attrs"] = ArrayAttr(
            [DictAttr({SHARDING_ATTR: s}) for s in in_shardings]
        )
    thread = op.attributes.get(EXECUTION_THREAD_ATTR)
    if thread is not None:
        func.attributes[EXECUTION_THREAD_ATTR] = thread
    return table.insert(func)


def _replace_with_call(op: Op, callee: str, positions: dict[int, int]) -> Op:
    """Replace `op` by a call of `callee` at its place in its block.

    `positions` caches each op's index in its block: the call takes the op's slot, so no
    other op moves (insert_before + erase scanned the block twice per op: quadratic).
    """
    attrs = {k: v for k, v in op.attributes.items() if k != EXECUTION_THREAD_ATTR}
    call = Op(
        "func.call",
        list(op.operands),
        [r.type for r in op.results],
        properties={"callee": symbol_ref(callee)},
        attributes=attrs,
        location=op.location,
        loc_text=op.loc_text,
        result_names=[r.name for r in op.results],
    )
    out_shardings = get_per_value(op, "out_shardings")
    if out_shardings:
        set_per_value(call, SHARDING_ATTR, out_shardings)
    block = op.parent
    assert block is not None
    index = positions.get(id(op))
    if index is None or index >= len(block.ops) or block.ops[index] is not op:
        positions.update({id(other): i for i, other in enumerate(block.ops)})
        index = positions[id(op)]
    call.parent = block
    block.ops[index] = call
    for old, new in zip(op.results, call.results, strict=True):
        old.replace_all_uses_with(new)
    op._release()  # `erase` without its list scan: the call has taken the op's slot
    op.parent = None
    return call


@sdy_pass("sdy-export-named-computations")
def export_named_computations(module: Module) -> None:
    """Named computations -> private funcs + calls (post-order: nested ones first)."""
    table = SymbolTable(module)
    call_results: list[Value] = []
    positions: dict[int, int] = {}
    for op in ops_in_post_order(module.op, _NAMED_COMPUTATION):
        _sink_edges(op)
        callee = _create_func(op, table)
        call_results += _replace_with_call(op, callee, positions).results
    # The calls' edges sit in the big caller blocks: erasing them one by one scans the block.
    with BatchErase() as batch:
        _remove_data_flow_edges(call_results, batch)


_NAMED_COMPUTATIONS_AND_CALLS = frozenset({"sdy.named_computation", "func.call"})


def export_named_computations_merged(module: Module) -> None:
    """`export_named_computations` as the propagation pipeline runs it, right before
    propagate-to-func-results, unflatten-call-graph and symbol-dce: a named computation whose
    func those would merge into an earlier one's becomes a call of that func at once.

    Unflattening keys a func by its original name and its argument and result shardings (the
    returned values' shardings, which propagate-to-func-results gives it), and keeps the first
    func of each key in the calls' post-order; symbol-dce then erases the others. A later
    named computation with the key of an earlier one is therefore called by that func's name,
    and its own func is never created: its name is only taken (`SymbolTable.reserve`), as the
    func would hold it until symbol-dce, so later funcs get the names they would have got.
    Where the calls' order could differ from the named computations' (a call already in the
    module, a named computation inside another) or a key cannot be read off the op (a
    non-tensor argument or result), every func is created as the pass does.
    """
    found = ops_in_post_order(module.op, _NAMED_COMPUTATIONS_AND_CALLS)
    if not _mergeable(found):
        export_named_computations(module)
        return
    table = SymbolTable(module)
    kept: dict[tuple, str] = {}
    call_results: list[Value] = []
    positions: dict[int, int] = {}
    for op in found:
        _sink_edges(op)
        key = _merge_key(module, op)
        callee = kept.get(key)
        if callee is None:
            callee = kept[key] = _create_func(op, table)
        else:
            table.reserve(_symbol_name(string_attr_value(op.get_attr("name"))))
            # The body goes with the op: isolated from above, it uses no value outside it,
            # so its ops' uses need no dropping (their cycles are broken with the erased ops').
            release_later(op.regions[0].blocks)
            op.regions[0].blocks = []
        call_results += _replace_with_call(op, callee, positions).results
    with BatchErase() as batch:
        _remove_data_flow_edges(call_results, batch)


def _mergeable(found: list[Op]) -> bool:
    """Only named computations, none inside another, with tensor arguments and results."""
    for op in found:
        if op.name != "sdy.named_computation":
            return False
        parent = op.parent_op
        while parent is not None:
            if parent.name == "sdy.named_computation":
                return False
            parent = parent.parent_op
        values = list(op.regions[0].entry.args) + op.results
        if not all(type(v.type) is TensorType for v in values):
            return False
    return True


def _symbol_name(name: str) -> str:
    """`Module.symbol_name` of a func named `name` by `_create_func`."""
    text = str(string_attr(name))
    return unescape_string(text[1:-1]) if text.startswith('"') else text


def _merge_key(module: Module, op: Op) -> tuple:
    """`unflatten_call_graph`'s key of the func `_create_func` would make of `op`, once
    propagate-to-func-results has run: (original name, argument shardings, result
    shardings), each list None without a mesh, missing shardings fully open."""
    block = op.regions[0].entry
    in_shardings = get_per_value(op, "in_shardings")
    args: list[TensorSharding | None] = (
        list(in_shardings) if in_shardings else [None] * len(block.args)
    )
    results: list[TensorSharding | None] = []
    terminator = block.terminator
    assert terminator is not None, "a named computation without a return"
    for value in terminator.operands:
        # In the func, a block argument's data-flow edge is gone: the argument is returned.
        edge = value.defining_op
        if edge is not None and edge.name == "sdy.data_flow_edge":
            source = edge.operands[0]
            if source.owner is block:
                value = source
        if value.owner is block:
            results.append(args[value.index])  # the func argument's sharding
        else:
            results.append(get_sharding(value))
    arg_shardings = fill_open(module, args, [a.type.rank for a in block.args])  # type: ignore[attr-defined]
    result_shardings = fill_open(module, results, [r.type.rank for r in op.results])  # type: ignore[attr-defined]
    return (
        string_attr_value(op.get_attr("name")),
        None if arg_shardings is None else tuple(arg_shardings),
        None if result_shardings is None else tuple(result_shardings),
    )
