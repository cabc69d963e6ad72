"""Beyond the reference: ``stablehlo.while``, ``case`` and ``if`` carrying sharded values.

jaxlib 0.10.2's conversion gives a while's results local types but leaves the block
arguments of its `cond` and `body` global (it converts no region signature), so the verifier
rejects every loop that carries a sharded value. With ``ConversionOptions.beyond_reference``
each carried value has one local type everywhere: the operand, the block argument of both
regions, the body's returned value and the result. The sharding of all four is the while's
``sdy.sharding`` (Shardy's data-flow edge: `sdy-insert-explicit-reshards` reshards each
operand and each body return operand to it), and every one is checked to lay out alike.

``case`` and ``if`` regions have no arguments: the reference already converts them (results
by their shardings, branch returns by their operands'). The extended mode only checks that
each branch returns its values laid out as the op's results.

| op                                 | per-device program                                   |
| ---------------------------------- | ---------------------------------------------------- |
| while whose types do not change    | the reference's (results in place)                   |
| while carrying sharded values      | block arguments and results of the carried values'    |
|                                    | local types; the block arguments' shardings known to |
|                                    | the ops of both regions                              |
| case/if                            | the reference's, after the branch-return check       |
"""

from __future__ import annotations

from shardwise.export.convert_global_to_local.layout import require_same_layout
from shardwise.export.convert_global_to_local.ops import generic
from shardwise.export.convert_global_to_local.state import ConversionState
from shardwise.ir import Op

__all__ = ["CONTROL_FLOW_PATTERNS"]


def while_op(state: ConversionState, op: Op) -> None:
    """Every carried value takes its result's local type, in both regions and out."""
    types = [state.local_type(r, op) for r in op.results]
    if all(t == r.type for t, r in zip(types, op.results, strict=True)):
        generic(state, op)
        return
    shardings = [state.sharding(r) for r in op.results]
    # The block arguments first: the body may return one of them as it is.
    for region in op.regions:
        for arg, sharding, type in zip(region.entry.args, shardings, types, strict=True):
            if sharding is not None:
                state.arg_shardings[arg] = sharding
            state.set_type(arg, type)
    body_return = op.regions[1].entry.terminator
    assert body_return is not None, "a while body without a return"
    for i, sharding in enumerate(shardings):
        require_same_layout(
            state,
            op,
            f"operand {i} carried as result {i}",
            state.sharding(op.operands[i]),
            sharding,
        )
        require_same_layout(
            state,
            op,
            f"the body's returned value {i} carried as result {i}",
            state.sharding(body_return.operands[i]),
            sharding,
        )
    state.remap_in_place(op, types)


def branches(state: ConversionState, op: Op) -> None:
    """`case`/`if`: each branch returns its values laid out as the results."""
    for r, region in enumerate(op.regions):
        terminator = region.entry.terminator
        assert terminator is not None, f"a branch of {op.name} without a return"
        for i, (value, result) in enumerate(zip(terminator.operands, op.results, strict=True)):
            require_same_layout(
                state,
                op,
                f"branch {r} returns value {i} for result {i}",
                state.sharding(value),
                state.sharding(result),
            )
    generic(state, op)


CONTROL_FLOW_PATTERNS = {
    "stablehlo.case": branches,
    "stablehlo.if": branches,
    "stablehlo.while": while_op,
}
