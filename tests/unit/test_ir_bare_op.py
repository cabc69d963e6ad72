"""`bare_op` makes the op `Op(...)` makes from the same parts (the parser's one per op)."""

from __future__ import annotations

from shardwise.errors import Location
from shardwise.ir import Op, RawAttr, bare_op


def _slots(op: Op) -> dict[str, object]:
    return {name: getattr(op, name) for name in Op.__slots__ if name != "__weakref__"}


def test_bare_op_is_op_from_the_same_parts() -> None:
    properties = {"value": RawAttr("dense<1.0> : tensor<f32>")}
    attributes = {"foo": RawAttr("1 : i64")}
    location = Location("f.mlir", 3, 5)
    made = Op(
        "stablehlo.constant",
        properties=dict(properties),
        attributes=dict(attributes),
        location=location,
        loc_text='loc("f":3:5)',
    )
    bare = bare_op(
        "stablehlo.constant", dict(properties), dict(attributes), location, 'loc("f":3:5)'
    )
    assert _slots(bare) == _slots(made)
    assert bare.regions is made.regions  # the shared empty tuple, as every region-free op
    assert bare.successors is made.successors


def test_bare_op_takes_its_dicts_as_given() -> None:
    properties: dict[str, object] = {}
    op = bare_op("test.op", properties, {}, Location(), None)
    assert op.properties is properties
    assert op.operands == [] and op.results == [] and op.parent is None
