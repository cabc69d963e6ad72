"""Rules of hand-built ops, rows in Shardy notation (from Shardy's registry tests and notes).

The ops are built directly in our IR (no MLIR), so these rows pin each rule function alone;
`tests/differential/test_rules_reference.py` checks the same functions against Shardy itself.
"""

from __future__ import annotations

import pytest

from shardwise.ir import Block, Op, RawAttr, TensorType
from shardwise.rules.registry import create_op_sharding_rule


def parse_shape(text: str) -> TensorType:
    """``8x4`` -> tensor<8x4xf32>; ``-`` -> a scalar."""
    return TensorType(() if text == "-" else tuple(int(d) for d in text.split("x")), "f32")


def make_op(name: str, operands: str, results: str, **attrs: str) -> Op:
    op = Op(
        name,
        result_types=[parse_shape(s) for s in results.split()],
        properties={k: RawAttr(v) for k, v in attrs.items()},
    )
    for shape in operands.split():
        op.add_operand(Block([parse_shape(shape)]).args[0])
    return op


def rule(op: Op, conservative: bool = False) -> str | None:
    r = create_op_sharding_rule(op, conservative)
    return None if r is None else str(r)[len("#sdy.op_sharding_rule<") : -1]


ROWS = [
    # (id, op name, operand shapes, result shapes, attributes, expected rule)
    ("tanh", "stablehlo.tanh", "8x4", "8x4", {}, "([i, j])->([i, j]) {i=8, j=4}"),
    ("add_scalar", "stablehlo.add", "- -", "-", {}, "([], [])->([])"),
    ("clamp_scalar_bounds", "stablehlo.clamp", "- 8 -", "8", {}, "([], [i], [])->([i]) {i=8}"),
    ("select_scalar_pred", "stablehlo.select", "- 8 8", "8", {}, "([], [i], [i])->([i]) {i=8}"),
    ("reshape_2x4_to_8", "stablehlo.reshape", "2x4", "8", {}, "([i, j])->([ij]) {i=2, j=4}"),
    (
        "reshape_8x4x5_to_2x16x5",
        "stablehlo.reshape",
        "8x4x5",
        "2x16x5",
        {},
        "([ij, k, l])->([i, jk, l]) {i=2, j=4, k=4, l=5}",
    ),
    (
        "reshape_6x4_to_4x6",
        "stablehlo.reshape",
        "6x4",
        "4x6",
        {},
        "([ij, mn])->([ik, ln]) {i=2, j=3, k=2, l=3, m=2, n=2}",
    ),
    (
        "reshape_5x2x5x3_to_5x3x5x2",
        "stablehlo.reshape",
        "5x2x5x3",
        "5x3x5x2",
        {},
        "([i, j, l, n])->([i, k, m, o]) {i=5, j=2, k=3, l=5, m=5, n=3, o=2}",
    ),
    ("reshape_zero_elements", "stablehlo.reshape", "0x4", "4x0", {}, None),
    ("reshape_size1", "stablehlo.reshape", "1x4", "4x1", {}, "([i, j])->([j, k]) {i=1, j=4, k=1}"),
    (
        "transpose",
        "stablehlo.transpose",
        "2x3x5",
        "5x2x3",
        {"permutation": "array<i64: 2, 0, 1>"},
        "([j, k, i])->([i, j, k]) {i=5, j=2, k=3}",
    ),
    (
        "broadcast_new_dim",
        "stablehlo.broadcast_in_dim",
        "8x4",
        "8x3x4",
        {"broadcast_dimensions": "array<i64: 0, 2>"},
        "([i, k])->([i, j, k]) {i=8, j=3, k=4}",
    ),
    (
        "broadcast_expand_size1",
        "stablehlo.broadcast_in_dim",
        "1x4",
        "8x4",
        {"broadcast_dimensions": "array<i64: 0, 1>"},
        "([i, k])->([j, k]) {i=1, j=8, k=4}",
    ),
    (
        "dot_general_matmul",
        "stablehlo.dot_general",
        "8x4 4x16",
        "8x16",
        {
            "dot_dimension_numbers": "#stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>"
        },
        "([i, k], [k, j])->([i, j]) {i=8, j=16, k=4} reduction={k}",
    ),
    (
        "dot_general_batched",
        "stablehlo.dot_general",
        "2x8x4 2x4x16",
        "2x8x16",
        {
            "dot_dimension_numbers": "#stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>"
        },
        "([i, j, l], [i, l, k])->([i, j, k]) {i=2, j=8, k=16, l=4} reduction={l}",
    ),
    (
        "dot_vector_matrix",
        "stablehlo.dot",
        "4 4x16",
        "16",
        {},
        "([j], [j, i])->([i]) {i=16, j=4} reduction={j}",
    ),
    (
        "reduce",
        "stablehlo.reduce",
        "8x4 -",
        "8",
        {"dimensions": "array<i64: 1>"},
        "([i, j], [])->([i]) {i=8, j=4} reduction={j}",
    ),
    ("slice", "stablehlo.slice", "8x4", "8x2", {}, "([i, j])->([i, j]) {i=8, j=4} permutation={j}"),
    (
        "pad",
        "stablehlo.pad",
        "8x4 -",
        "8x7",
        {},
        "([i, j], [])->([i, j]) {i=8, j=4} permutation={j}",
    ),
    (
        "dynamic_slice",
        "stablehlo.dynamic_slice",
        "8x4 - -",
        "2x4",
        {},
        "([i, j], [], [])->([i, j]) {i=8, j=4} need_replication={i} blocked_propagation={i}",
    ),
    (
        "dynamic_update_slice",
        "stablehlo.dynamic_update_slice",
        "8x4 2x4 - -",
        "8x4",
        {},
        "([i, k], [j, k], [], [])->([i, k]) {i=8, j=2, k=4} need_replication={j}",
    ),
    (
        "concatenate",
        "stablehlo.concatenate",
        "8x4 2x4",
        "10x4",
        {"dimension": "0 : i64"},
        "([i, j], [i, j])->([i, j]) {i=10, j=4} need_replication={i}",
    ),
    (
        "reverse",
        "stablehlo.reverse",
        "8x4",
        "8x4",
        {"dimensions": "array<i64: 1>"},
        "([i, j])->([i, j]) {i=8, j=4} permutation={j}",
    ),
    (
        "sort",
        "stablehlo.sort",
        "8x4 8x4",
        "8x4 8x4",
        {"dimension": "1 : i64"},
        "([i, j], [i, j])->([i, j], [i, j]) {i=8, j=4} need_replication={j}",
    ),
    (
        "sort_blocked",
        "stablehlo.sort",
        "1x4",
        "1x4",
        {"dimension": "1 : i64"},
        "([i, j])->([i, j]) {i=1, j=4} need_replication={j} blocked_propagation={j}",
    ),
    (
        "all_gather",
        "stablehlo.all_gather",
        "8x4",
        "8x8",
        {"all_gather_dim": "1 : i64"},
        "([i, j])->([i, k]) {i=8, j=4, k=8} need_replication={j, k}",
    ),
    (
        "all_to_all",
        "stablehlo.all_to_all",
        "8x4",
        "4x8",
        {"split_dimension": "0 : i64", "concat_dimension": "1 : i64"},
        "([i, k])->([j, l]) {i=8, j=4, k=4, l=8} need_replication={i, j, k, l}",
    ),
    (
        "cholesky",
        "stablehlo.cholesky",
        "2x4x4",
        "2x4x4",
        {},
        "([i, j, k])->([i, j, k]) {i=2, j=4, k=4} need_replication={j, k}",
    ),
    (
        "triangular_solve_left",
        "stablehlo.triangular_solve",
        "2x4x4 2x4x3",
        "2x4x3",
        {"left_side": "true"},
        "([i, j, l], [i, j, k])->([i, l, k]) {i=2, j=4, k=3, l=4} need_replication={j, k, l}",
    ),
    (
        "fft_rfft",
        "stablehlo.fft",
        "8x4",
        "8x3",
        {"fft_length": "array<i64: 4>"},
        "([i, j])->([i, j]) {i=8, j=4} need_replication={j} blocked_propagation={j}",
    ),
    (
        "rng_bit_generator",
        "stablehlo.rng_bit_generator",
        "2",
        "2 4x5",
        {},
        "([i])->([i], [j, k]) {i=2, j=4, k=5} need_replication={i} blocked_propagation={i}",
    ),
    (
        "batch_norm_inference",
        "stablehlo.batch_norm_inference",
        "2x3 3 3 3 3",
        "2x3",
        {"feature_index": "1 : i64"},
        "([i, j], [j], [j], [j], [j])->([i, j]) {i=2, j=3}",
    ),
    (
        "reduce_window",
        "stablehlo.reduce_window",
        "8x4 -",
        "4x4",
        {"window_dimensions": "array<i64: 2, 1>", "window_strides": "array<i64: 2, 1>"},
        "([i, j], [])->([i, j]) {i=4, j=4} permutation={i}",
    ),
    (
        "custom_eigh",
        "stablehlo.custom_call",
        "4x4",
        "4x4 4",
        {"call_target_name": '"Eigh"'},
        "([i, j])->([i, j], [j]) {i=4, j=4}",
    ),
    (
        "custom_topk",
        "stablehlo.custom_call",
        "3x16",
        "3x4 3x4",
        {"call_target_name": '"mhlo.topk"'},
        "([i, j])->([i, j], [i, j]) {i=3, j=16} need_replication={j} blocked_propagation={j}",
    ),
]


@pytest.mark.parametrize(
    ("name", "operands", "results", "attrs", "expected"),
    [r[1:] for r in ROWS],
    ids=[r[0] for r in ROWS],
)
def test_rule(
    name: str, operands: str, results: str, attrs: dict[str, str], expected: str | None
) -> None:
    assert rule(make_op(name, operands, results, **attrs)) == expected


CONSERVATIVE_ROWS = [
    (
        "slice",
        "stablehlo.slice",
        "8x4",
        "8x2",
        {},
        "([i, j])->([i, j]) {i=8, j=4} permutation={j} blocked_propagation={j}",
    ),
    (
        "concatenate",
        "stablehlo.concatenate",
        "8x4 2x4",
        "10x4",
        {"dimension": "0 : i64"},
        "([j, i], [k, i])->([l, i]) {i=4, j=1, k=1, l=1}",
    ),
    (
        "reduce_window",
        "stablehlo.reduce_window",
        "8x4 -",
        "4x4",
        {"window_dimensions": "array<i64: 2, 1>", "window_strides": "array<i64: 2, 1>"},
        "([i, j], [])->([i, j]) {i=4, j=4} permutation={i} blocked_propagation={i}",
    ),
]


@pytest.mark.parametrize(
    ("name", "operands", "results", "attrs", "expected"),
    [r[1:] for r in CONSERVATIVE_ROWS],
    ids=[r[0] for r in CONSERVATIVE_ROWS],
)
def test_conservative_rule(
    name: str, operands: str, results: str, attrs: dict[str, str], expected: str
) -> None:
    assert rule(make_op(name, operands, results, **attrs), conservative=True) == expected


def test_convolution_spatial_factors_and_conservative_mode() -> None:
    # 1-D conv: lhs [b=2, s=8, f=3], kernel [w=3, i=3, o=16] -> out [b=2, t=6, o=16].
    attrs = {"dimension_numbers": "#stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>"}
    op = make_op("stablehlo.convolution", "2x8x3 3x3x16", "2x6x16", **attrs)
    # 6 windows >= window 3: the windows factor j takes the whole input dim (8 // 6 leaves 1).
    assert (
        rule(op)
        == "([i, j, k], [m, k, l])->([i, j, l]) {i=2, j=6, k=3, l=16, m=1} reduction={k} permutation={j}"
    )
    assert (
        rule(op, conservative=True)
        == "([i, l, j], [m, j, k])->([i, n, k]) {i=2, j=3, k=16, l=1, m=1, n=1} reduction={j}"
    )


def test_reshape_with_dynamic_dims_gets_no_rule() -> None:
    op = Op("stablehlo.reshape", result_types=[TensorType((8,), "f32")])
    op.add_operand(Block([TensorType((-1, 4), "f32")]).args[0])
    assert create_op_sharding_rule(op) is None


def test_sort_without_dimension_is_all_pass_through() -> None:
    # The default dimension -1 matches no dim (as in Shardy).
    assert rule(make_op("stablehlo.sort", "8x4", "8x4")) == "([i, j])->([i, j]) {i=8, j=4}"
