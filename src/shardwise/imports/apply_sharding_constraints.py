"""`sdy-apply-sharding-constraints`: move constraint shardings onto unsharded inputs.

Shardy's import/apply_sharding_constraints.cc. For an ``sdy.sharding_constraint`` (and each
operand of an ``sdy.manual_computation``, whose in-sharding acts as a constraint), the input
takes the constraint's sharding when it has none, the constraint is fully closed, and no other
constraint or manual computation uses the input with a different sharding. An input that is
a data-flow edge target instead has its uses routed through the constraint. A chain of
single-use constraints first takes over the later uses of the chain's input.
"""

from __future__ import annotations

from dataclasses import replace

from shardwise.ir import (
    Module,
    Op,
    Value,
    insert_after_value,
    is_before_in_block,
    replace_uses_if,
)
from shardwise.passes import sdy_pass
from shardwise.propagation.source_sharding import DebugInfoRecorder
from shardwise.rules.registry import get_or_create_sharding_rule
from shardwise.sdy.call_graph import ops_in_post_order
from shardwise.sdy.shardings import (
    data_flow_edge_for_target,
    get_sharding,
    set_sharding,
    shardable_value,
)
from shardwise.sharding import TensorSharding, TensorShardingPerValue

__all__ = ["CONSTRAINT_TARGETS", "apply_sharding_constraints"]

_CONSTRAINT = "sdy.sharding_constraint"
_MANUAL = "sdy.manual_computation"
CONSTRAINT_TARGETS = frozenset({_CONSTRAINT, _MANUAL})


def _in_sharding(op: Op, index: int) -> TensorSharding | None:
    attr = op.get_attr("in_shardings")
    return attr.shardings[index] if isinstance(attr, TensorShardingPerValue) else None


def _used_by_constraint_with_different_sharding(value: Value, sharding: TensorSharding) -> bool:
    for user, index in value.uses:
        if user.name == _CONSTRAINT and user.get_attr("sharding") != sharding:
            return True
        if user.name == _MANUAL and _in_sharding(user, index) != sharding:
            return True
    return False


def _used_by_constraint(value: Value, excluded: Op | None = None) -> bool:
    return any(u is not excluded and u.name in (_CONSTRAINT, _MANUAL) for u, _ in value.uses)


def _should_apply(value: Value, sharding: TensorSharding) -> bool:
    if shardable_value(value) is None or get_sharding(value) is not None:
        return False
    # Only fully closed constraints apply (parity with GSPMD).
    if not sharding.is_fully_closed:
        return False
    return not _used_by_constraint_with_different_sharding(value, sharding)


def _is_edge_target(value: Value) -> bool:
    producer = value.defining_op
    if producer is not None and producer.name == "sdy.data_flow_edge":
        return True
    return data_flow_edge_for_target(value) is not None


def _apply(
    op: Op,
    value: Value,
    sharding: TensorSharding,
    constraint_after_value,
    debug: DebugInfoRecorder | None = None,
) -> None:
    if not _should_apply(value, sharding):
        return
    if not _is_edge_target(value):
        rule = get_or_create_sharding_rule(op, conservative=False, set_on_op=True)
        if debug is not None and rule is not None:
            # Shardy wraps this in a SourceShardingAction: a recorded step when it changes.
            debug.record_update(op, rule, lambda: set_sharding(value, sharding))
        else:
            set_sharding(value, sharding)
        return
    constraint = constraint_after_value()
    value.replace_all_uses_with(constraint.results[0], except_op=constraint)
    if sharding.unreduced_axes:
        # Unreduced axes do not propagate: they go on the input directly.
        current = get_sharding(value) or TensorSharding.fully_open(
            sharding.mesh_or_ref, value.type.rank
        )
        set_sharding(
            value,
            replace(
                current,
                unreduced_axes=sharding.unreduced_axes,
                reduction_op=sharding.reduction_op,
            ),
        )


def _tail_of_chain(head: Op) -> Op | None:
    """The last constraint of a chain of single-use constraints starting at `head`, if any."""
    value = head.operands[0]
    producer = value.defining_op
    if producer is not None and producer.name == _CONSTRAINT:
        return None
    if get_sharding(value) is not None or _used_by_constraint(value, excluded=head):
        return None
    tail = head
    while len(tail.results[0].uses) == 1 and tail.results[0].uses[0][0].name == _CONSTRAINT:
        tail = tail.results[0].uses[0][0]
    if tail is head or _used_by_constraint(tail.results[0]):
        return None
    return tail


def _apply_constraint_op(op: Op, debug: DebugInfoRecorder | None) -> None:
    tail = _tail_of_chain(op)
    if tail is not None:

        def later_in_block(user: Op, _index: int) -> bool:
            return (
                user is not op
                and user.name != "func.return"
                and user.parent is tail.parent
                and is_before_in_block(tail, user)
            )

        replace_uses_if(op.operands[0], tail.results[0], later_in_block)
    value = op.operands[0]

    def move_after_input() -> Op:
        insert_after_value(op, value)
        return op

    sharding = op.get_attr("sharding")
    assert isinstance(sharding, TensorSharding), "the verifier requires a constraint sharding"
    _apply(op, value, sharding, move_after_input, debug)


def _apply_manual_computation(op: Op, debug: DebugInfoRecorder | None) -> None:
    attr = op.get_attr("in_shardings")
    if not isinstance(attr, TensorShardingPerValue):
        return
    for index, sharding in enumerate(attr.shardings):
        # Read the operand now, as Shardy iterates the op's operands live: when one value
        # feeds several operands, the constraint made for the first already replaced the
        # later uses, and a second constraint would chain onto the first.
        operand = op.operands[index]

        def new_constraint(operand: Value = operand, sharding: TensorSharding = sharding) -> Op:
            constraint = Op(
                _CONSTRAINT,
                [operand],
                [operand.type],
                {"sharding": sharding},
                location=op.location,
                loc_text=op.loc_text,
            )
            insert_after_value(constraint, operand)
            return constraint

        _apply(op, operand, sharding, new_constraint, debug)


@sdy_pass("sdy-apply-sharding-constraints")
def apply_sharding_constraints(
    module: Module,
    debug_sharding_origins: bool = False,
    debug_propagation_edge_sharding: bool = False,
    targets: list[Op] | None = None,
) -> None:
    """Apply every constraint / manual-computation in-sharding (walk in MLIR's post-order).

    `targets`: the module's ``CONSTRAINT_TARGETS`` ops in post-order, if the caller has them.
    """
    debug = DebugInfoRecorder(module, debug_sharding_origins, debug_propagation_edge_sharding)
    recorder = debug if debug.enabled else None
    if targets is None:
        targets = ops_in_post_order(module.op, CONSTRAINT_TARGETS)
    for op in targets:
        if op.name == _CONSTRAINT:
            _apply_constraint_op(op, recorder)
        else:
            _apply_manual_computation(op, recorder)
    if recorder is not None:
        recorder.save()
