"""`Value.replace_all_uses_with` moves uses as `Op.set_operand` on each use, newest first, would
(MLIR's use-list order), also when it moves them all at once."""

from __future__ import annotations

import pytest

from shardwise.ir import Op, TensorType, Value

_T = TensorType((8,), "f32")


def _one_by_one(value: Value, other: Value) -> None:
    for op, i in reversed(list(value.uses)):
        op.set_operand(i, other)


def _graph() -> tuple[Value, Value, list[Op]]:
    """Two values and users of them: one uses the first twice, one uses both."""
    a = Op("test.a", result_types=[_T]).results[0]
    b = Op("test.b", result_types=[_T]).results[0]
    users = [
        Op("test.u0", [a]),
        Op("test.u1", [a, a]),
        Op("test.u2", [b, a]),
        Op("test.u3", [a, b]),
    ]
    return a, b, users


def _state(a: Value, b: Value, users: list[Op]) -> tuple:
    index = {id(op): n for n, op in enumerate(users)}
    names = {id(a): "a", id(b): "b"}
    return (
        [(index[id(op)], i) for op, i in a.uses],
        [(index[id(op)], i) for op, i in b.uses],
        [[names[id(v)] for v in op.operands] for op in users],
    )


@pytest.mark.parametrize("to_other", [True, False], ids=["to-other", "to-itself"])
def test_moving_every_use_is_moving_them_one_by_one(to_other: bool) -> None:
    a, b, users = _graph()
    a.replace_all_uses_with(b if to_other else a)
    expected_graph = _graph()
    ea, eb, eusers = expected_graph
    _one_by_one(ea, eb if to_other else ea)
    assert _state(a, b, users) == _state(ea, eb, eusers)
    if to_other:
        assert not a.uses and len(b.uses) == 7


def test_except_op_keeps_its_uses() -> None:
    a, b, users = _graph()
    a.replace_all_uses_with(b, except_op=users[1])
    assert [(op.name, i) for op, i in a.uses] == [("test.u1", 0), ("test.u1", 1)]
    assert users[3].operands[0] is b and users[3].operands[1] is b
