"""Read the StableHLO attributes the sharding rules need from their generic-form MLIR text.

Every function takes the attribute object of an op (anything whose `str()` is the MLIR text,
e.g. `RawAttr`) and returns plain Python values; malformed text raises `RuleError` naming the
attribute. Texts handled (as MLIR prints them in generic form):

| form | example |
| --- | --- |
| integer | ``1 : i64`` |
| boolean | ``true`` |
| string | ``"Eigh"`` |
| dense i64 array | ``array<i64: 1, 0>``, ``array<i64>`` |
| dense elements | ``dense<[[0, 0], [1, 1]]> : tensor<2x2xi64>``, ``dense<0> : tensor<2x2xi64>`` |
| enum | ``#stablehlo<transpose TRANSPOSE>``, ``#stablehlo<fft_type RFFT>`` |
| struct | ``#stablehlo.dot<lhs_batching_dimensions = [0], ...>``, ``.gather``, ``.scatter`` |
| conv dims | ``#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>`` or ``#stablehlo.conv<raw ...>`` |
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from shardwise.errors import RuleError
from shardwise.ir import Op

__all__ = [
    "ConvDimensionNumbers",
    "DotDimensionNumbers",
    "GatherDimensionNumbers",
    "ScatterDimensionNumbers",
    "parse_bool",
    "parse_conv_dimension_numbers",
    "parse_dense_ints",
    "parse_dot_dimension_numbers",
    "parse_enum",
    "parse_gather_dimension_numbers",
    "parse_i64_array",
    "parse_int",
    "parse_scatter_dimension_numbers",
    "parse_string",
    "required_attr",
]

_INT_RE = re.compile(r"-?\d+")
_STRUCT_FIELD_RE = re.compile(r"(\w+)\s*=\s*(\[[^\]]*\]|-?\d+)")


def _bad(what: str, text: str) -> RuleError:
    return RuleError(f"expected {what}, got '{text}'")


def required_attr(op: Op, name: str) -> Any:
    """The inherent or discardable attribute `name` of `op`; `RuleError` if it is absent."""
    value = op.get_attr(name)
    if value is None:
        raise RuleError(f"'{op.name}' op requires attribute '{name}'", op.location)
    return value


def parse_int(attr: object) -> int:
    """``1 : i64`` -> 1."""
    text = str(attr).strip()
    head = text.split(":", 1)[0].strip()
    if not _INT_RE.fullmatch(head):
        raise _bad("an integer attribute", text)
    return int(head)


def parse_bool(attr: object) -> bool:
    """``true`` / ``false``."""
    text = str(attr).strip()
    if text not in ("true", "false"):
        raise _bad("a boolean attribute", text)
    return text == "true"


def parse_string(attr: object) -> str:
    """``"Eigh"`` -> ``Eigh``."""
    text = str(attr).strip()
    if len(text) < 2 or text[0] != '"' or text[-1] != '"':
        raise _bad("a string attribute", text)
    return text[1:-1]


def parse_i64_array(attr: object) -> tuple[int, ...]:
    """``array<i64: 1, 0>`` -> (1, 0); ``array<i64>`` -> ()."""
    return _i64_array_of_text(str(attr).strip())


@functools.lru_cache(maxsize=4096)
def _i64_array_of_text(text: str) -> tuple[int, ...]:
    """Parsed once per text: a deep model repeats the same few arrays thousands of times."""
    if not (text.startswith("array<i64") and text.endswith(">")):
        raise _bad("an 'array<i64: ...>' attribute", text)
    body = text[len("array<i64") : -1]
    return tuple(int(v) for v in _INT_RE.findall(body.lstrip(":")))


def parse_dense_ints(attr: object, count: int) -> tuple[int, ...]:
    """The `count` integers of ``dense<...> : tensor<...>`` in row-major order (splats expand)."""
    text = str(attr).strip()
    if not text.startswith("dense<"):
        raise _bad("a 'dense<...>' attribute", text)
    body = text[len("dense<") : text.rfind(">", 0, text.rfind(":"))]
    values = tuple(int(v) for v in _INT_RE.findall(body))
    if len(values) == 1 and count != 1:
        return values * count
    if len(values) != count:
        raise _bad(f"{count} integers", text)
    return values


def parse_enum(attr: object) -> str:
    """``#stablehlo<transpose TRANSPOSE>`` -> ``TRANSPOSE``."""
    text = str(attr).strip()
    m = re.fullmatch(r"#\w+<\w+\s+(\w+)>", text)
    if m is None:
        raise _bad("an enum attribute", text)
    return m.group(1)


def _struct_fields(attr: object, mnemonic: str) -> dict[str, tuple[int, ...] | int]:
    text = str(attr).strip()
    prefix = f"#stablehlo.{mnemonic}<"
    if not (text.startswith(prefix) and text.endswith(">")):
        raise _bad(f"a '{prefix}...>' attribute", text)
    fields: dict[str, tuple[int, ...] | int] = {}
    for name, value in _STRUCT_FIELD_RE.findall(text[len(prefix) : -1]):
        if value.startswith("["):
            fields[name] = tuple(int(v) for v in _INT_RE.findall(value))
        else:
            fields[name] = int(value)
    return fields


def _ints(fields: dict[str, tuple[int, ...] | int], name: str) -> tuple[int, ...]:
    value = fields.get(name, ())
    return value if isinstance(value, tuple) else (value,)


def _int(fields: dict[str, tuple[int, ...] | int], name: str, default: int = 0) -> int:
    value = fields.get(name, default)
    return value if isinstance(value, int) else default


@dataclass(frozen=True, slots=True)
class DotDimensionNumbers:
    lhs_batching_dimensions: tuple[int, ...]
    rhs_batching_dimensions: tuple[int, ...]
    lhs_contracting_dimensions: tuple[int, ...]
    rhs_contracting_dimensions: tuple[int, ...]


def parse_dot_dimension_numbers(attr: object) -> DotDimensionNumbers:
    """``#stablehlo.dot<...>``; absent lists are empty."""
    f = _struct_fields(attr, "dot")
    return DotDimensionNumbers(
        _ints(f, "lhs_batching_dimensions"),
        _ints(f, "rhs_batching_dimensions"),
        _ints(f, "lhs_contracting_dimensions"),
        _ints(f, "rhs_contracting_dimensions"),
    )


@dataclass(frozen=True, slots=True)
class GatherDimensionNumbers:
    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    operand_batching_dims: tuple[int, ...]
    start_indices_batching_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    index_vector_dim: int


def parse_gather_dimension_numbers(attr: object) -> GatherDimensionNumbers:
    """``#stablehlo.gather<...>``; absent lists are empty, absent index_vector_dim is 0."""
    f = _struct_fields(attr, "gather")
    return GatherDimensionNumbers(
        _ints(f, "offset_dims"),
        _ints(f, "collapsed_slice_dims"),
        _ints(f, "operand_batching_dims"),
        _ints(f, "start_indices_batching_dims"),
        _ints(f, "start_index_map"),
        _int(f, "index_vector_dim"),
    )


@dataclass(frozen=True, slots=True)
class ScatterDimensionNumbers:
    update_window_dims: tuple[int, ...]
    inserted_window_dims: tuple[int, ...]
    input_batching_dims: tuple[int, ...]
    scatter_indices_batching_dims: tuple[int, ...]
    scatter_dims_to_operand_dims: tuple[int, ...]
    index_vector_dim: int


def parse_scatter_dimension_numbers(attr: object) -> ScatterDimensionNumbers:
    """``#stablehlo.scatter<...>``; absent lists are empty, absent index_vector_dim is 0."""
    f = _struct_fields(attr, "scatter")
    return ScatterDimensionNumbers(
        _ints(f, "update_window_dims"),
        _ints(f, "inserted_window_dims"),
        _ints(f, "input_batching_dims"),
        _ints(f, "scatter_indices_batching_dims"),
        _ints(f, "scatter_dims_to_operand_dims"),
        _int(f, "index_vector_dim"),
    )


@dataclass(frozen=True, slots=True)
class ConvDimensionNumbers:
    input_batch_dimension: int
    input_feature_dimension: int
    input_spatial_dimensions: tuple[int, ...]
    kernel_input_feature_dimension: int
    kernel_output_feature_dimension: int
    kernel_spatial_dimensions: tuple[int, ...]
    output_batch_dimension: int
    output_feature_dimension: int
    output_spatial_dimensions: tuple[int, ...]


def _conv_layout(text: str, batch: str, feature: str) -> tuple[int, int, tuple[int, ...]]:
    """``[b, 0, 1, f]`` -> (batch dim, feature dim, spatial dims ordered by spatial index)."""
    labels = [s.strip() for s in text.strip()[1:-1].split(",")]
    spatial = sorted((int(label), dim) for dim, label in enumerate(labels) if label.isdigit())
    return labels.index(batch), labels.index(feature), tuple(dim for _, dim in spatial)


def parse_conv_dimension_numbers(attr: object) -> ConvDimensionNumbers:
    """``#stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>`` or the ``raw`` keyword form."""
    text = str(attr).strip()
    if not (text.startswith("#stablehlo.conv<") and text.endswith(">")):
        raise _bad("a '#stablehlo.conv<...>' attribute", text)
    body = text[len("#stablehlo.conv<") : -1].strip()
    if body.startswith("raw"):
        return _parse_raw_conv(body[len("raw") :])
    m = re.fullmatch(r"(\[[^\]]*\])\s*x\s*(\[[^\]]*\])\s*->\s*(\[[^\]]*\])", body)
    if m is None:
        raise _bad("convolution dimension numbers", text)
    try:
        lhs = _conv_layout(m.group(1), "b", "f")
        rhs = _conv_layout(m.group(2), "i", "o")
        out = _conv_layout(m.group(3), "b", "f")
    except ValueError:
        raise _bad("convolution dimension numbers", text) from None
    return ConvDimensionNumbers(*lhs, *rhs, *out)


def _parse_raw_conv(body: str) -> ConvDimensionNumbers:
    fields: dict[str, Any] = {}
    for name, value in _STRUCT_FIELD_RE.findall(body):
        fields[name] = (
            tuple(int(v) for v in _INT_RE.findall(value)) if value.startswith("[") else int(value)
        )
    return ConvDimensionNumbers(
        fields.get("input_batch_dimension", 0),
        fields.get("input_feature_dimension", 0),
        fields.get("input_spatial_dimensions", ()),
        fields.get("kernel_input_feature_dimension", 0),
        fields.get("kernel_output_feature_dimension", 0),
        fields.get("kernel_spatial_dimensions", ()),
        fields.get("output_batch_dimension", 0),
        fields.get("output_feature_dimension", 0),
        fields.get("output_spatial_dimensions", ()),
    )
