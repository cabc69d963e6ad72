"""`sdy-import-func-calls`: calls become ``sdy.named_computation`` ops holding the callee's
body (Shardy's `import/import_func_calls.cc`).
"""

from __future__ import annotations

import warnings
from collections import deque
from collections.abc import Iterable, Iterator

from shardwise.errors import InputError, VerifyError
from shardwise.imports.add_data_flow_edges import EdgePlacer, add_data_flow_edges_to
from shardwise.imports.symbol_dce import symbol_dce
from shardwise.ir import (
    SHARDING_ATTR,
    BatchErase,
    Module,
    Op,
    Region,
    SymbolTable,
    clone_region,
    string_attr,
)
from shardwise.passes import sdy_pass
from shardwise.rules.registry import attach_rules_to_clone
from shardwise.sdy import data_flow
from shardwise.sdy.call_graph import (
    callee_name,
    calls_by_func,
    calls_in_call_graph_order,
    func_arg_shardings,
    has_body,
    ops_in_post_order,
    original_func_name,
)
from shardwise.sdy.funcs import callee_of
from shardwise.sdy.op_properties import ISOLATED_FROM_ABOVE
from shardwise.sharding import TensorShardingPerValue

__all__ = [
    "import_flattened_calls",
    "import_func_calls",
]


_EXECUTION_THREAD_ATTR = "execution_thread"


_NAMED_COMPUTATION = frozenset({"sdy.named_computation"})
_EDGE = "sdy.data_flow_edge"


def _move_body_converting_return(func: Op, target: Region) -> None:
    """`inlineRegionAndConvertTerminatorOp<sdy.return>`: move the blocks, retype the return."""
    _move_blocks_converting_return(func.regions[0], target)


def _move_blocks_converting_return(source: Region, target: Region) -> None:
    for block in list(source.blocks):
        source.blocks.remove(block)
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
    old._release()  # `erase` without its list scan: `new` has taken the slot
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
        func = callee_of(module, call, table)
        if name not in moved and (not func.regions or not func.regions[0].blocks):
            # Shardy aborts here; a declaration has no body to inline into the call.
            raise InputError(
                f"cannot import the call to @{name}: the function is a declaration without "
                "a body; give it a body or inline it before propagation",
                call.location,
            )
        named = _named_computation_in_place_of(module, call, func, position)
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
    _erase_callees(table, moved)
    if add_data_flow_edges_on_named_computations:
        _add_edges_on_named_computations(module)


def import_flattened_calls(module: Module, rules_conservative: bool | None = None) -> bool:
    """``sdy-flatten-call-graph``, ``symbol-dce``, ``sdy-import-func-calls`` in one go, when no
    callee makes a call itself (a call-heavy model: conv_256 calls one ReLU func per layer);
    False, the module untouched, otherwise (or when a callee is missing or has no body: the
    passes one by one report that).

    `rules_conservative`: when propagation comes next (with that `conservative_propagation`),
    the body of a callee called more than once gets its ops' sharding rules before it is
    cloned (`attach_rules_to_clone`): the rules propagation would store on every op on its
    first visit, created once per op of the body instead of once per clone.

    Flattening would give every call after a callee's first its own clone of the callee, then
    the import would move each clone's body into its call's named computation and erase every
    callee. Here those calls get a clone of the callee's region straight away (made before the
    first call takes the body: a clone of the original, as flattening's), and no func is
    cloned, named, inserted or erased for them. Symbol-dce runs first, as it runs between the
    two passes there: the calls of a dead func would otherwise be imported too (the second
    symbol-dce erases them with it either way, but they would take the callee's body first).
    """
    table = SymbolTable(module)
    by_func = calls_by_func(module)
    for calls in by_func.values():
        for call in calls:
            func = table.lookup(callee_name(call))
            if func is None or func.name != "func.func" or not has_body(func) or by_func[func]:
                return False
    symbol_dce(module)
    table = SymbolTable(module)
    # Symbol-dce erased funcs, and changed nothing in the others: their calls are known.
    live = {id(op) for op in module.body.ops}
    by_func = {func: calls for func, calls in by_func.items() if id(func) in live}
    calls = calls_in_call_graph_order(module, calls=by_func)
    callees: dict[str, Op] = {}
    counts: dict[str, int] = {}
    for call in calls:
        name = callee_name(call)
        callees[name] = callee_of(module, call, table)
        counts[name] = counts.get(name, 0) + 1
    position = _positions(calls)
    clones: dict[str, list[Region]] = {}
    for call in calls:
        name = callee_name(call)
        func = callees[name]
        named = _named_computation_in_place_of(module, call, func, position)
        region = named.add_region(Region())
        pending = clones.get(name)
        if pending is None:
            if rules_conservative is not None and counts[name] > 1:
                attach_rules_to_clone(func.walk_list(), rules_conservative)
            # Clones for the later calls, taken before this one takes the body.
            pending = clones[name] = [
                clone_region(func.regions[0]) for _ in range(counts[name] - 1)
            ]
            pending.reverse()
            _move_body_converting_return(func, region)
        else:
            _move_blocks_converting_return(pending.pop(), region)
        _replace_op(call, named)
    _erase_callees(table, clones)
    _add_edges_on_named_computations(module)
    return True


def _named_computation_in_place_of(
    module: Module, call: Op, func: Op, position: dict[Op, int]
) -> Op:
    """The named computation for `call`, put at the call's place in its block (the call is
    replaced by `_replace_op` once the computation has its body)."""
    named = _named_computation_for(module, call, func)
    block = call.parent
    assert block is not None
    named.parent = block
    block.ops[position[call]] = named
    return named


def _erase_callees(table: SymbolTable, names: Iterable[str]) -> None:
    """Erase the inlined functions: one pass over the module body for all of them (each
    `erase` would scan it)."""
    with BatchErase() as batch:
        for name in names:
            callee = table.lookup(name)
            if callee is not None:
                table.erase(callee, batch)


def _add_edges_on_named_computations(module: Module) -> None:
    placer = EdgePlacer()
    named = ops_in_post_order(module.op, _NAMED_COMPUTATION)
    _reject_edges_twice(module, named)
    for op in named:
        add_data_flow_edges_to(op, placer)
    placer.flush()


def _reject_edges_twice(module: Module, named: list[Op]) -> None:
    """A named computation of the input has its edges already (`sdy-import-pipeline` added
    them): adding them again leaves an edge whose input is another edge, which Shardy's
    verifier rejects after this pass. Raise its error, at the edge it names first."""
    existing = {
        id(user)
        for op in named
        for owner in data_flow.edge_owners(op)
        for user, _ in owner.uses
        if user.name == _EDGE
    }
    if not existing:
        return
    first = next(op for op in _verifier_order(module.op) if id(op) in existing)
    raise VerifyError(
        f"'{_EDGE}' op expected input of {_EDGE} to not be defined by an SdyDialect op (other "
        "than an sdy.named_computation).",
        first.location,
        (
            "an sdy.named_computation written in the input gets its data-flow edges twice in "
            "sdy-propagation-pipeline (Shardy rejects it the same way): write it as a "
            "func.call of a func instead, which the pipeline imports as a named computation",
        ),
    )


def _verifier_order(top: Op) -> Iterator[Op]:
    """Ops in the order MLIR's verifier reaches them: each region in program order, nested
    regions as met, but the bodies of ops isolated from above (funcs, named and manual
    computations) only after the region holding them."""
    pending = deque([top])
    while pending:
        root = pending.popleft()
        stack = [
            op
            for region in reversed(root.regions)
            for block in reversed(region.blocks)
            for op in reversed(block.ops)
        ]
        while stack:
            op = stack.pop()
            yield op
            if op.name in ISOLATED_FROM_ABOVE:
                pending.append(op)
            else:
                stack += [
                    nested
                    for region in reversed(op.regions)
                    for block in reversed(region.blocks)
                    for nested in reversed(block.ops)
                ]
