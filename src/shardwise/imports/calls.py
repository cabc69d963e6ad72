"""Import passes about funcs and calls.

* `propagate_sharding_from_func_to_call` (``sdy-propagate-sharding-from-func-to-call``)
* `flatten_call_graph` (``sdy-flatten-call-graph``): one callee clone per call
* `import_func_calls` (``sdy-import-func-calls``): calls become ``sdy.named_computation``
* `pre_order_funcs` (``sdy-pre-order-funcs``): callers before callees in the module
* `add_func_data_flow_edges` (``sdy-add-func-data-flow-edges``)

Shardy's import/{propagate_sharding_from_func_to_call, flatten_call_graph, import_func_calls,
pre_order_funcs, add_func_data_flow_edges}.cc.
"""

from __future__ import annotations

import warnings

from shardwise.errors import InputError
from shardwise.imports.data_flow_edges import EdgePlacer, add_data_flow_edges_to
from shardwise.ir import (
    SHARDING_ATTR,
    Module,
    Op,
    Region,
    SymbolTable,
    Value,
    clone_op,
    clone_region,
    detach,
    string_attr,
    symbol_ref,
)
from shardwise.passes import sdy_pass
from shardwise.sdy.call_graph import (
    ORIGINAL_FUNC_NAME_ATTR,
    callee_name,
    calls_in_call_graph_order,
    func_arg_shardings,
    func_result_shardings,
    funcs_in_call_graph_order,
    has_body,
    is_static_shaped,
    ops_in_post_order,
    original_func_name,
)
from shardwise.sdy.funcs import main_func
from shardwise.sdy.shardings import get_sharding
from shardwise.sharding import TensorShardingPerValue

__all__ = [
    "propagate_sharding_from_func_to_call",
    "flatten_call_graph",
    "clone_func_recursively",
    "import_func_calls",
    "pre_order_funcs",
    "add_func_data_flow_edges",
]

_EXECUTION_THREAD_ATTR = "execution_thread"
_CALL = frozenset({"func.call"})
_NAMED_COMPUTATION = frozenset({"sdy.named_computation"})


def _lookup_func(table: SymbolTable, call: Op) -> Op:
    func = table.lookup(callee_name(call))
    if func is None or func.name != "func.func":
        raise InputError(f"Failed to lookup function: {callee_name(call)}", call.location)
    return func


@sdy_pass("sdy-propagate-sharding-from-func-to-call")
def propagate_sharding_from_func_to_call(module: Module) -> None:
    """Calls without ``sdy.sharding`` take their callee's result shardings (if any)."""
    table = SymbolTable(module)
    for op in ops_in_post_order(module.op, _CALL):
        if SHARDING_ATTR in op.attributes:
            continue
        shardings = func_result_shardings(module, _lookup_func(table, op))
        if shardings is not None:
            op.attributes[SHARDING_ATTR] = shardings


# -- flatten ------------------------------------------------------------------------------------


def clone_func_recursively(func: Op, table: SymbolTable) -> Op:
    """`cloneFuncRecursively`: a detached clone naming its origin, callees cloned (inserted)."""
    clone = clone_op(func)
    clone.attributes[ORIGINAL_FUNC_NAME_ATTR] = string_attr(original_func_name(func))
    for call in ops_in_post_order(clone, _CALL):
        callee = _lookup_func(table, call)
        call.properties["callee"] = symbol_ref(table.insert(clone_func_recursively(callee, table)))
    return clone


@sdy_pass("sdy-flatten-call-graph")
def flatten_call_graph(module: Module) -> None:
    """Every call after the first one of a callee gets its own (recursive) clone of it."""
    table = SymbolTable(module)
    seen: set[str] = set()
    for call in calls_in_call_graph_order(module):
        func = _lookup_func(table, call)
        name = module.symbol_name(func) or ""
        if name in seen:
            clone = clone_func_recursively(func, table)
            call.properties["callee"] = symbol_ref(table.insert(clone))
        else:
            seen.add(name)


# -- import func calls --------------------------------------------------------------------------


def _move_body_converting_return(func: Op, target: Region) -> None:
    """`inlineRegionAndConvertTerminatorOp<sdy.return>`: move the blocks, retype the return."""
    for block in list(func.regions[0].blocks):
        func.regions[0].blocks.remove(block)
        target.add_block(block)
        terminator = block.terminator
        if terminator is not None and terminator.name == "func.return":
            # MLIR creates a new sdy.return and erases the func.return: its uses become the
            # newest ones of their values.
            operands = list(terminator.operands)
            terminator.drop_operands()
            for value in operands:
                terminator.add_operand(value)
            terminator.name = "sdy.return"


def _named_computation_for(module: Module, call: Op, func: Op) -> Op:
    properties: dict = {"name": string_attr(original_func_name(func))}
    in_shardings = func_arg_shardings(module, func)
    if in_shardings is not None:
        properties["in_shardings"] = in_shardings
    out_shardings = call.attributes.get(SHARDING_ATTR)
    if isinstance(out_shardings, TensorShardingPerValue):
        properties["out_shardings"] = out_shardings
    attributes = {k: v for k, v in call.attributes.items() if k != SHARDING_ATTR}
    thread = func.get_attr(_EXECUTION_THREAD_ATTR)
    if thread is not None:
        attributes[_EXECUTION_THREAD_ATTR] = thread
    return Op(
        "sdy.named_computation",
        list(call.operands),
        [r.type for r in call.results],
        properties,
        attributes,
        location=call.location,
        loc_text=call.loc_text,
        result_names=[r.name for r in call.results],
    )


def _positions(ops: list[Op]) -> dict[Op, int]:
    wanted = set(ops)
    blocks = {id(op.parent): op.parent for op in ops if op.parent is not None}
    return {op: i for block in blocks.values() for i, op in enumerate(block.ops) if op in wanted}


def _replace_op(old: Op, new: Op) -> None:
    """`RewriterBase::replaceOp` once `new` has taken `old`'s place in the block."""
    for a, b in zip(old.results, new.results, strict=True):
        a.replace_all_uses_with(b)
    old.drop_operands()
    old.parent = None


@sdy_pass("sdy-import-func-calls")
def import_func_calls(module: Module, add_data_flow_edges_on_named_computations: bool = True):
    """Replace each ``func.call`` by an ``sdy.named_computation`` holding the callee's body.

    The first call of a callee takes the body; later ones get a clone (with a warning). The
    callees are erased, and data-flow edges are added to every named computation.
    """
    table = SymbolTable(module)
    moved: dict[str, Region] = {}
    calls = calls_in_call_graph_order(module)
    # Each call is replaced by one op in its place, so positions found up front stay valid
    # (and finding them one by one would be quadratic on large blocks).
    position = _positions(calls)
    for call in calls:
        name = callee_name(call)
        func = _lookup_func(table, call)
        if name not in moved and (not func.regions or not func.regions[0].blocks):
            # Shardy aborts here; a declaration has no body to inline into the call.
            raise InputError(
                f"cannot import the call to @{name}: the function is a declaration without "
                "a body; give it a body or inline it before propagation",
                call.location,
            )
        named = _named_computation_for(module, call, func)
        block = call.parent
        assert block is not None
        named.parent = block
        block.ops[position[call]] = named
        if name in moved:
            warnings.warn(
                f"function @{name} has multiple call ops, we need to clone the function "
                "body for each call",
                stacklevel=2,
            )
            named.add_region(clone_region(moved[name]))
        else:
            region = named.add_region(Region())
            _move_body_converting_return(func, region)
            moved[name] = region
        _replace_op(call, named)
    for name in moved:
        callee = table.lookup(name)
        if callee is not None:
            table.erase(callee)
    if add_data_flow_edges_on_named_computations:
        placer = EdgePlacer()
        for op in ops_in_post_order(module.op, _NAMED_COMPUTATION):
            add_data_flow_edges_to(op, placer)
        placer.flush()


# -- func order and func data-flow edges --------------------------------------------------------


@sdy_pass("sdy-pre-order-funcs")
def pre_order_funcs(module: Module, without_calls: bool = False) -> None:
    """Move the funcs to the end of the module in call-graph pre-order (callers first).

    `without_calls`: the caller knows that no func holds a ``func.call`` (every call was
    imported as a named computation), so the call graph is read without a walk.
    """
    calls = {f: [] for f in module.funcs if has_body(f)} if without_calls else None
    for func in funcs_in_call_graph_order(module, pre_order=True, calls=calls):
        detach(func)
        module.body.append(func)


def _main_func(module: Module) -> Op:
    main = main_func(module)
    if main is None:
        raise InputError("Failed to lookup function: main", module.op.location)
    return main


def _add_func_edge(value: Value, anchor_block, index: int, owner: Op) -> int:
    """Insert a ``sdy.func_data_flow_edge`` of `value` at `index`; returns the next index."""
    if not is_static_shaped(value):
        return index
    edge = Op(
        "sdy.func_data_flow_edge",
        [value],
        [value.type],
        location=owner.location,
        loc_text=owner.loc_text,
    )
    anchor_block.insert(index, edge)
    value.replace_all_uses_with(edge.results[0], except_op=edge)
    sharding = get_sharding(value)
    if sharding is not None:
        edge.attributes[SHARDING_ATTR] = TensorShardingPerValue((sharding,))
    return index + 1


@sdy_pass("sdy-add-func-data-flow-edges")
def add_func_data_flow_edges(module: Module) -> None:
    """Edge ops after every argument of non-main funcs and after every call result."""
    main = _main_func(module)
    for func in module.funcs:
        if func is main or not func.regions[0].blocks:
            continue
        entry = func.regions[0].entry
        index = 0
        for arg in list(entry.args):
            index = _add_func_edge(arg, entry, index, func)
    for call in ops_in_post_order(module.op, _CALL):
        block = call.parent
        assert block is not None
        index = block.ops.index(call) + 1
        for result in list(call.results):
            index = _add_func_edge(result, block, index, call)
