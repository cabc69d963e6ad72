"""Reading StableHLO attribute texts (as MLIR prints them in generic form)."""

from __future__ import annotations

import pytest

from shardwise.errors import RuleError
from shardwise.ir import RawAttr
from shardwise.rules import stablehlo_attrs as a


@pytest.mark.parametrize(
    ("fn", "text", "expected"),
    [
        (a.parse_int, "1 : i64", 1),
        (a.parse_int, "-3 : i32", -3),
        (a.parse_bool, "true", True),
        (a.parse_bool, "false", False),
        (a.parse_string, '"Eigh"', "Eigh"),
        (a.parse_i64_array, "array<i64: 1, 0>", (1, 0)),
        (a.parse_i64_array, "array<i64: -1>", (-1,)),
        (a.parse_i64_array, "array<i64>", ()),
        (a.parse_enum, "#stablehlo<transpose ADJOINT>", "ADJOINT"),
        (a.parse_enum, "#stablehlo<fft_type RFFT>", "RFFT"),
        (a.parse_enum, "#stablehlo<comparison_direction LT>", "LT"),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_scalar_forms(fn, text: str, expected) -> None:
    assert fn(RawAttr(text)) == expected


@pytest.mark.parametrize(
    ("text", "count", "expected"),
    [
        ("dense<[[0, 0], [1, -1]]> : tensor<2x2xi64>", 4, (0, 0, 1, -1)),
        ("dense<0> : tensor<3x2xi64>", 6, (0,) * 6),
    ],
    ids=["nested", "splat"],
)
def test_dense_ints(text: str, count: int, expected: tuple[int, ...]) -> None:
    assert a.parse_dense_ints(RawAttr(text), count) == expected


def test_dot_dimension_numbers_absent_lists_are_empty() -> None:
    nums = a.parse_dot_dimension_numbers(
        RawAttr(
            "#stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [2, 1]>"
        )
    )
    assert nums == a.DotDimensionNumbers((0,), (1,), (2, 1), ())


def test_gather_dimension_numbers() -> None:
    text = (
        "#stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], operand_batching_dims = [2], "
        "start_indices_batching_dims = [0], start_index_map = [0], index_vector_dim = 2>"
    )
    assert a.parse_gather_dimension_numbers(RawAttr(text)) == a.GatherDimensionNumbers(
        (1,), (0,), (2,), (0,), (0,), 2
    )


def test_scatter_dimension_numbers() -> None:
    text = "#stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>"
    assert a.parse_scatter_dimension_numbers(RawAttr(text)) == a.ScatterDimensionNumbers(
        (1,), (0,), (), (), (0,), 1
    )


@pytest.mark.parametrize(
    "text",
    [
        "#stablehlo.conv<[b, 1, 0, f]x[o, 1, 0, i]->[f, 0, 1, b]>",
        "#stablehlo.conv<raw input_batch_dimension = 0, input_feature_dimension = 3, input_spatial_dimensions = [2, 1], kernel_input_feature_dimension = 3, kernel_output_feature_dimension = 0, kernel_spatial_dimensions = [2, 1], output_batch_dimension = 3, output_feature_dimension = 0, output_spatial_dimensions = [1, 2]>",
    ],
    ids=["pretty", "raw"],
)
def test_conv_dimension_numbers(text: str) -> None:
    # Spatial dims are listed by spatial index (0 first), not by position.
    assert a.parse_conv_dimension_numbers(RawAttr(text)) == a.ConvDimensionNumbers(
        0, 3, (2, 1), 3, 0, (2, 1), 3, 0, (1, 2)
    )


@pytest.mark.parametrize(
    ("fn", "text", "message"),
    [
        (a.parse_int, "true", "expected an integer attribute, got 'true'"),
        (a.parse_bool, "1 : i1", "expected a boolean attribute"),
        (a.parse_string, "Eigh", "expected a string attribute"),
        (a.parse_i64_array, "[1, 0]", "expected an 'array<i64: ...>' attribute"),
        (a.parse_enum, "TRANSPOSE", "expected an enum attribute"),
        (
            a.parse_dot_dimension_numbers,
            "#stablehlo.gather<>",
            "expected a '#stablehlo.dot<...>' attribute",
        ),
        (
            a.parse_conv_dimension_numbers,
            "#stablehlo.conv<[b, f]>",
            "expected convolution dimension numbers",
        ),
    ],
    ids=["int", "bool", "string", "array", "enum", "dot", "conv"],
)
def test_malformed_text_is_a_rule_error(fn, text: str, message: str) -> None:
    with pytest.raises(RuleError) as info:
        fn(RawAttr(text))
    assert info.value.message.startswith(message)


def test_dense_count_mismatch() -> None:
    with pytest.raises(RuleError) as info:
        a.parse_dense_ints(RawAttr("dense<[1, 2]> : tensor<2xi64>"), 4)
    assert info.value.message == "expected 4 integers, got 'dense<[1, 2]> : tensor<2xi64>'"
