"""Beyond the reference: a ``func.call`` whose callee's types change.

jaxlib 0.10.2's conversion gives every func its local signature but keeps each call's result
types global (its call pattern converts types only, and the type-only conversion is the
identity), so the verifier rejects every call of a func with a sharded value. With
``ConversionOptions.beyond_reference`` the call gets the callee's local result types.

One signature per func is enough: by the time the conversion runs, the propagation pipeline
has given each func one sharding per argument and result (`sdy-flatten-call-graph` cloned a
func per call, `sdy-unflatten-call-graph` merged the clones that ended alike into ``@f``,
``@f_0``, ...; `sdy-insert-func-call-reshards` resharded call results to their callee's), and
`sdy-insert-explicit-reshards` brought every call operand to its callee's argument sharding.
Each boundary is checked all the same (`require_same_layout`): were the two sides laid out
differently, equal local types would hide it.

| call                                         | per-device program                          |
| -------------------------------------------- | ------------------------------------------- |
| no type changes                              | the reference's (`ops.call`)                |
| operands and results as the callee's         | call with the callee's local result types   |
| a side laid out unlike the callee            | error naming the call and the value         |
"""

from __future__ import annotations

from shardwise.export.convert_global_to_local.builder import OpBuilder
from shardwise.export.convert_global_to_local.layout import require_same_layout
from shardwise.export.convert_global_to_local.ops import call as reference_call
from shardwise.export.convert_global_to_local.state import ConversionState
from shardwise.ir import Op
from shardwise.sdy.funcs import callee_name, callee_of
from shardwise.sdy.shardings import get_func_result_sharding

__all__ = ["CALL_PATTERNS"]


def call(state: ConversionState, op: Op) -> None:
    """A call of the callee's local signature; the reference's call where nothing changes."""
    callee = callee_of(state.module, op)
    results = [state.local_type(r, op) for r in op.results]
    operands = state.operands(op)
    changes = any(t != r.type for t, r in zip(results, op.results, strict=True)) or any(
        v.type != state.global_type(o) for v, o in zip(operands, op.operands, strict=True)
    )
    if not changes or not callee.regions or not callee.regions[0].blocks:
        # A declaration keeps no argument types; calling it with sharded values stays the
        # reference's verifier error.
        reference_call(state, op)
        return
    name = callee_name(op)
    for i, (operand, arg) in enumerate(zip(op.operands, callee.regions[0].entry.args, strict=True)):
        require_same_layout(
            state,
            op,
            f"operand {i} passed to argument {i} of @{name}",
            state.sharding(operand),
            state.sharding(arg),
        )
    for i, result in enumerate(op.results):
        require_same_layout(
            state,
            op,
            f"result {i} of @{name}",
            get_func_result_sharding(callee, i),
            state.sharding(result),
        )
    new = OpBuilder(op).create("func.call", operands, results, {"callee": op.properties["callee"]})
    state.replace(op, new.results)


CALL_PATTERNS = {"func.call": call}
