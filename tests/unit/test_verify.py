"""Unit tests of `shardwise.verify` on values built in Python (no reference involved).

Messages are Shardy's (`ir/verifiers.cc`); the same wording is checked against the
reference in tests/differential/test_verify_reference.py. Rows here also cover what text
cannot express: negative priorities, explicit iota device ids, rules with no mappings, etc.
"""

from __future__ import annotations

import pytest

from shardwise.axis import AxisRef
from shardwise.errors import Location, VerifyError
from shardwise.ir import OpaqueType, TensorType, Type
from shardwise.mesh import Mesh, MeshAxis
from shardwise.rules.rule import OpShardingRule
from shardwise.sharding import (
    DimensionSharding,
    ManualAxes,
    TensorSharding,
    TensorShardingPerValue,
)
from shardwise.syntax import parse_mesh, parse_op_sharding_rule, parse_tensor_sharding
from shardwise.verify import (
    resolve_mesh,
    verify_manual_computation,
    verify_mesh,
    verify_op_sharding_rule,
    verify_sharding_per_value,
    verify_tensor_sharding,
)

LOC = Location("model.mlir", 3, 7)
MESHES = {
    "mesh": parse_mesh('<["a"=8, "b"=2, "c"=4]>'),
    "maximal": parse_mesh("<[], device_ids=[1]>"),
}


def t(*shape: int) -> TensorType:
    return TensorType(shape, "f32")


def sharding_error(text: str, type: Type | None = None, **kwargs) -> str | None:
    """The message `verify_tensor_sharding` raises for `text` on `type` (default 8x8)."""
    try:
        verify_tensor_sharding(
            parse_tensor_sharding(text), t(8, 8) if type is None else type, MESHES, LOC, **kwargs
        )
    except VerifyError as err:
        assert err.location == LOC
        return err.message
    return None


SHARDING_ROWS = [
    ("valid", '<@mesh, [{"a", ?}p1, {"c":(1)2}], replicated={"b"}>', None),
    ("unknown-mesh", "<@other, [{}, {}]>", "unknown mesh: @other"),
    ("unknown-mesh-quoted", '<@"x y", [{}, {}]>', 'unknown mesh: @"x y"'),
    ("unknown-axis", '<@mesh, [{"d"}, {}]>', 'unknown axis name: "d"'),
    ("rank", '<@mesh, [{"a"}]>', "sharding doesn't match tensor rank: 1 != 2"),
    ("duplicate", '<@mesh, [{"a"}, {"a"}]>', 'duplicate axis ref: "a"'),
    ("duplicate-unreduced", '<@mesh, [{"b"}, {}], unreduced={"b"}>', 'duplicate axis ref: "b"'),
    (
        "replicated-order",
        '<@mesh, [{}, {}], replicated={"c", "a"}>',
        "replicated axes are not ordered w.r.t. mesh",
    ),
    (
        "unreduced-order",
        '<@mesh, [{}, {}], unreduced={"a":(2)2, "a":(1)2}>',
        "unreduced axes are not ordered w.r.t. mesh",
    ),
    (
        "mergeable",
        '<@mesh, [{"a":(2)2, "a":(4)2}, {}]>',
        'two consecutive sub-axes can be merged: "a":(2)2, "a":(4)2',
    ),
    ("not-mergeable-reversed", '<@mesh, [{"a":(4)2, "a":(2)2}, {}]>', None),
    (
        "full-and-sub",
        '<@mesh, [{"a":(1)2}, {}], replicated={"a"}>',
        'both sub-axis and full-axis are used for axis name: "a"',
    ),
    ("pre-size", '<@mesh, [{"a":(0)2}, {}]>', 'sub-axis pre-size must be at least 1: "a":(0)2'),
    ("size-one", '<@mesh, [{"a":(2)1}, {}]>', 'sub-axis sizes must be greater than 1: "a":(2)1'),
    (
        "not-dividing",
        '<@mesh, [{"a":(2)3}, {}]>',
        'sub-axis next pre-size 6 doesn\'t divide the size of the full axis 8: "a":(2)3',
    ),
    (
        "full-size",
        '<@mesh, [{"c":(1)4}, {}]>',
        'sub-axis size is equal to the full axis size: "c":(1)4',
    ),
    ("overlap", '<@mesh, [{"a":(2)4}, {"a":(1)4}]>', 'overlapping sub-axes: "a":(1)4, "a":(2)4'),
    (
        "priority-closed-empty",
        "<@mesh, [{}p0, {}]>",
        "dim 0 is empty and closed but has a priority",
    ),
    ("priority-open-empty", "<@mesh, [{?}p0, {}]>", None),
    (
        "maximal",
        "<@maximal, [{}, {}]>",
        "a maximal sharding can only have a sharding with rank 0 and no replicated or unreduced axes.",
    ),
    ("maximal-scalar", "<@maximal, []>", None),
    ("inline-mesh", '<mesh<["z"=2]>, [{"z"}, {}]>', None),
    ("inline-mesh-invalid", '<mesh<["z"=2, "z"=2]>, [{"z"}, {}]>', 'duplicate axis name: "z"'),
]


@pytest.mark.parametrize(
    ("text", "message"), [r[1:] for r in SHARDING_ROWS], ids=[r[0] for r in SHARDING_ROWS]
)
def test_tensor_sharding(text: str, message: str | None) -> None:
    assert sharding_error(text) == message


TYPE_ROWS = [
    ("scalar", "<@mesh, []>", t(), None),
    ("dynamic-dim", '<@mesh, [{"a"}, {}]>', TensorType((-1, 8), "f32"), None),
    ("token", "<@mesh, []>", OpaqueType("!stablehlo.token"), None),
    (
        "token-rank",
        "<@mesh, [{}]>",
        OpaqueType("!stablehlo.token"),
        "non-shaped tensors can only have a sharding with rank 0 and no replicated or unreduced axes."
        " type: '!stablehlo.token', sharding: #sdy.sharding<@mesh, [{}]>",
    ),
    ("tuple-one", '<@mesh, [{"a"}]>', OpaqueType("tuple<tensor<8xf32>>"), None),
    (
        "tuple-two",
        "<@mesh, []>",
        OpaqueType("tuple<tensor<8xf32>, tensor<8xf32>>"),
        "ops can only have a sharding for a tuple of size 1: 'tuple<tensor<8xf32>, tensor<8xf32>>'",
    ),
    (
        "unranked",
        "<@mesh, []>",
        OpaqueType("tensor<*xf32>"),
        "only ranked tensors can have a sharding. type: 'tensor<*xf32>'",
    ),
    ("vector", '<@mesh, [{"c"}]>', OpaqueType("vector<8xf32>"), None),
]


@pytest.mark.parametrize(
    ("text", "type", "message"), [r[1:] for r in TYPE_ROWS], ids=[r[0] for r in TYPE_ROWS]
)
def test_tensor_sharding_against_types(text: str, type: Type, message: str | None) -> None:
    assert sharding_error(text, type) == message


def test_negative_priority_only_from_python() -> None:
    sharding = TensorSharding(
        "mesh", (DimensionSharding((AxisRef("a"),), True, -1), DimensionSharding())
    )
    with pytest.raises(VerifyError) as info:
        verify_tensor_sharding(sharding, t(8, 8), MESHES, LOC)
    assert info.value.message == "dim 0 has a negative priority"


def test_divisibility_only_when_asked() -> None:
    text = '<@mesh, [{"a", "b"}, {}]>'
    assert sharding_error(text, t(8, 8)) is None
    assert sharding_error(text, t(8, 8), check_divisibility=True) == (
        "dim 0 with size 8 is not divisible by its sharded size 16"
    )


def test_axis_bound_by_enclosing_manual_computation() -> None:
    owner = Location("model.mlir", 1, 1)
    with pytest.raises(VerifyError) as info:
        verify_tensor_sharding(
            parse_tensor_sharding('<@mesh, [{}, {"b"}]>'), t(8, 8), MESHES, LOC, {"b": owner}
        )
    assert info.value.message == (
        'operates on axis "b" which is already bound by a parent sdy.manual_computation op'
    )
    assert info.value.notes == ("model.mlir:1:1: parent bounding this axis as manual",)


def test_resolve_mesh() -> None:
    inline = parse_tensor_sharding('<mesh<["q"=2]>, []>')
    assert resolve_mesh(inline, {}) == Mesh((MeshAxis("q", 2),))
    assert resolve_mesh(parse_tensor_sharding("<@mesh, []>"), MESHES) is MESHES["mesh"]
    assert resolve_mesh(parse_tensor_sharding("<@nope, []>"), MESHES) is None


# -- meshes -----------------------------------------------------------------------------------

MESH_ROWS = [
    ("valid", Mesh((MeshAxis("a", 2), MeshAxis("b", 2)), (0, 2, 1, 3)), None),
    ("empty", Mesh(), None),
    ("maximal", Mesh((), (4,)), None),
    ("size-one", Mesh((MeshAxis("a", 1),)), None),
    ("size-zero", Mesh((MeshAxis("a", 0),)), "axis size must be at least 1, got: 0"),
    ("negative-id", Mesh((), (-1,)), "device id must be non-negative, got: -1"),
    ("two-ids-no-axes", Mesh((), (0, 1)), "axes is empty and device_ids has more than one element"),
    ("duplicate-name", Mesh((MeshAxis("a", 2), MeshAxis("a", 2))), 'duplicate axis name: "a"'),
    (
        "id-count",
        Mesh((MeshAxis("a", 2),), (1, 0, 2)),
        "total product of axis sizes must match total number of device ids, got: 2 != 3",
    ),
    (
        "not-permutation",
        Mesh((MeshAxis("a", 3),), (0, 3, 1)),
        "sorted device ids must be iota(product(axes)), got: 0, 1, 3",
    ),
    (
        "explicit-iota",
        Mesh((MeshAxis("a", 2),), (0, 1)),
        "if the ordered device ids are the same as iota(product(axes)), no need to specify them for simplicity",
    ),
]


@pytest.mark.parametrize(
    ("mesh", "message"), [r[1:] for r in MESH_ROWS], ids=[r[0] for r in MESH_ROWS]
)
def test_mesh(mesh: Mesh, message: str | None) -> None:
    if message is None:
        verify_mesh(mesh, LOC)
        return
    with pytest.raises(VerifyError) as info:
        verify_mesh(mesh, LOC)
    assert (info.value.message, info.value.location) == (message, LOC)


# -- per-value lists ------------------------------------------------------------------------


def per_value(*texts: str) -> TensorShardingPerValue:
    return TensorShardingPerValue(tuple(parse_tensor_sharding(s) for s in texts))


PER_VALUE_ROWS = [
    ("one", per_value('<@mesh, [{"a"}]>'), [t(8)], None),
    (
        "count",
        per_value("<@mesh, []>", "<@mesh, []>"),
        [t()],
        "shardings don't match number of values: 2 shardings vs 1 values",
    ),
    ("single-prefix", per_value('<@mesh, [{"x"}]>'), [t(8)], '- unknown axis name: "x"'),
    (
        "index-prefix",
        per_value("<@mesh, [{}]>", '<@mesh, [{"x"}]>'),
        [t(8), t(8)],
        '1 - unknown axis name: "x"',
    ),
    ("no-values-replicated", per_value("<@mesh, []>"), [], None),
    ("no-values-maximal", per_value("<@maximal, []>"), [], None),
    (
        "no-values-rank",
        per_value("<@maximal, [{}]>"),
        [],
        "0 - a maximal sharding can only have a sharding with rank 0 and no replicated or unreduced axes.",
    ),
    (
        "no-values-sharded",
        per_value('<@mesh, [{"a"}]>'),
        [],
        "shardings don't match number of values: 1 shardings vs 0 values",
    ),
]


@pytest.mark.parametrize(
    ("value", "types", "message"),
    [r[1:] for r in PER_VALUE_ROWS],
    ids=[r[0] for r in PER_VALUE_ROWS],
)
def test_sharding_per_value(
    value: TensorShardingPerValue, types: list[Type], message: str | None
) -> None:
    try:
        verify_sharding_per_value(value, types, MESHES, LOC)
    except VerifyError as err:
        assert err.message == message
        return
    assert message is None


# -- op sharding rules ------------------------------------------------------------------------

RULE_ROWS = [
    ("dot", "([i, k], [k, j])->([i, j]) {i=8, j=8, k=8} reduction={k}", 2, None),
    (
        "operand-count",
        "([i])->([i]) {i=8}",
        2,
        "number of operands and mappings must match: 2 != 1",
    ),
    ("rank", "([i], [i])->([i]) {i=8}", 2, "operand 0 - mapping rank must match: 1 != 2"),
    (
        "out-of-range",
        "([i, j], [i, k])->([i, j]) {i=8, j=8}",
        2,
        "operand 1 - expecting factor indices to be within 0<=...<num_factors; received: 2, num_factors: 2",
    ),
    (
        "reuse",
        "([i, i], [i, j])->([i, j]) {i=8, j=8}",
        2,
        "operand 0 - cannot reuse factors for the same tensor value",
    ),
    (
        "size-one-compound",
        "([ij, k], [k, l])->([ij, l]) {i=1, j=8, k=8, l=8}",
        2,
        "operand 0 - dim mapping can't have a factor of size 1 if there are multiple factors",
    ),
    (
        "unused",
        "([i, j], [i, j])->([i, j]) {i=8, j=8, k=2}",
        2,
        "has factor k=2 that isn't used in operand and result mappings",
    ),
    (
        "unsorted",
        "([i, j], [i, j])->([i, j]) {i=8, j=8} need_replication={j, i}",
        2,
        "indices of special factors must be sorted",
    ),
    (
        "not-unique",
        "([i, j], [i, j])->([i, j]) {i=8, j=8} permutation={i, i}",
        2,
        "indices of special factors must be unique",
    ),
    (
        "too-big",
        "([i, j], [i, j])->([i, j]) {i=8, j=8} permutation={n}",
        2,
        "index must be less than 2, got: 5",
    ),
    (
        "two-kinds",
        "([i, j], [i, j])->([i, j]) {i=8, j=8} reduction={i} permutation={i}",
        2,
        "a factor can only be in one of the reduction, need replication, or permutation factor sets",
    ),
    (
        "blocked-unsorted",
        "([i, j], [i, j])->([i, j]) {i=8, j=8} blocked_propagation={j, i}",
        2,
        "indices of special factors must be sorted",
    ),
    (
        "reduction-in-result",
        "([i, j], [i, j])->([i, j]) {i=8, j=8} reduction={j}",
        2,
        "reduction factor cannot be in result mappings",
    ),
    (
        "empty-dim",
        "([i, ], [i, j])->([i, j]) {i=8, j=8}",
        2,
        "operand 0 - dim mapping must have at least one factor",
    ),
]


@pytest.mark.parametrize(
    ("text", "operands", "message"), [r[1:] for r in RULE_ROWS], ids=[r[0] for r in RULE_ROWS]
)
def test_op_sharding_rule(text: str, operands: int, message: str | None) -> None:
    rule = parse_op_sharding_rule(f"<{text}>")
    try:
        verify_op_sharding_rule(rule, [t(8, 8)] * operands, [t(8, 8)], LOC)
    except VerifyError as err:
        assert err.message == message
        return
    assert message is None


def test_rule_with_no_mappings_and_negative_index() -> None:
    no_operands = OpShardingRule((8,), (), (((0,),),))
    with pytest.raises(VerifyError) as info:
        verify_op_sharding_rule(no_operands, [], [t(8)], LOC)
    assert info.value.message == (
        "number of operands mappings cannot be 0. Op sharding rules can only be defined on "
        "operations with at least one operand and result."
    )
    negative = OpShardingRule((8,), (((0,),),), (((0,),),), permutation_factors=(-1,))
    with pytest.raises(VerifyError) as info:
        verify_op_sharding_rule(negative, [t(8)], [t(8)], LOC)
    assert info.value.message == "index must be non-negative"


def test_rule_needs_static_tensors() -> None:
    rule = parse_op_sharding_rule("<([i])->([i]) {i=8}>")
    with pytest.raises(VerifyError) as info:
        verify_op_sharding_rule(rule, [TensorType((-1,), "f32")], [t(8)], LOC)
    assert (
        info.value.message
        == "operand - expected a ranked tensor with a static shape. type: 'tensor<?xf32>'"
    )


# -- manual computations ----------------------------------------------------------------------


def manual_error(
    in_text: str,
    out_text: str,
    axes: tuple[str, ...],
    local: TensorType,
    global_: TensorType | None = None,
) -> str | None:
    global_ = global_ or t(8, 8)
    types = ([global_], [local], [global_], [local])
    try:
        verify_manual_computation(
            per_value(in_text), per_value(out_text), ManualAxes(axes), types, MESHES, LOC
        )
    except VerifyError as err:
        return err.message
    return None


MANUAL_ROWS = [
    ("valid", '<@mesh, [{"b", "a"}, {}]>', '<@mesh, [{"b"}, {}]>', ("b",), t(4, 8), None),
    (
        "free-before-manual",
        '<@mesh, [{"a", "b"}, {}]>',
        '<@mesh, [{"b"}, {}]>',
        ("b",),
        t(4, 8),
        'operand sharding at index 0 must have all manual axes come before free axes in its dimension sharding at index 0. Saw manual axis "b" after free axis "a"',
    ),
    (
        "local-shape",
        '<@mesh, [{"b"}, {}]>',
        '<@mesh, [{"b"}, {}]>',
        ("b",),
        t(8, 8),
        "operand shape, corresponding sharding, and region operand shape at index 0 must match. Expected local shape 'tensor<4x8xf32>', actual local shape 'tensor<8x8xf32>'",
    ),
    (
        "unknown-manual-axis",
        '<@mesh, [{"b"}, {}]>',
        '<@mesh, [{"b"}, {}]>',
        ("b", "q"),
        t(4, 8),
        'unknown manual axis: "q"',
    ),
    (
        "result-sharding",
        '<@mesh, [{"b"}, {}]>',
        '<@mesh, [{"b"}, {"x"}]>',
        ("b",),
        t(4, 8),
        'result - unknown axis name: "x"',
    ),
]


@pytest.mark.parametrize(
    ("in_text", "out_text", "axes", "local", "message"),
    [r[1:] for r in MANUAL_ROWS],
    ids=[r[0] for r in MANUAL_ROWS],
)
def test_manual_computation(
    in_text: str, out_text: str, axes: tuple[str, ...], local: TensorType, message: str | None
) -> None:
    assert manual_error(in_text, out_text, axes, local) == message


def test_manual_computation_not_divisible_and_mixed_meshes() -> None:
    assert manual_error('<@mesh, [{"c"}]>', '<@mesh, [{"c"}]>', ("c",), t(1), t(6)) == (
        "operand dimension size 6 is not divisible by the manual axes size 4"
    )
    MESHES["other"] = parse_mesh('<["b"=2]>')
    try:
        message = manual_error('<@mesh, [{"b"}, {}]>', '<@other, [{"b"}, {}]>', ("b",), t(4, 8))
    finally:
        del MESHES["other"]
    assert message == "all in and out shardings must be bound to the same mesh or an empty mesh."


def test_nested_manual_axis() -> None:
    outer = Location("f.mlir", 2, 3)
    with pytest.raises(VerifyError) as info:
        verify_manual_computation(
            per_value("<@mesh, [{}]>"),
            per_value("<@mesh, [{}]>"),
            ManualAxes(("a",)),
            ([t(8)], [t(8)], [t(8)], [t(8)]),
            MESHES,
            LOC,
            {"a": outer},
        )
    assert info.value.message.startswith('operates on axis "a" which is already bound')
    assert info.value.notes == ("f.mlir:2:3: parent bounding this axis as manual",)
