"""Small accessors shared by the rule families: tensor shapes and typed attributes of an op."""

from __future__ import annotations

from shardwise.ir import Op
from shardwise.rules import stablehlo_attrs as attrs
from shardwise.rules.builder import tensor_shape

__all__ = ["operand_shape", "result_shape", "int_attr", "i64_array_attr", "bool_attr"]


def operand_shape(op: Op, index: int = 0) -> tuple[int, ...]:
    return tensor_shape(op.operands[index].type)


def result_shape(op: Op, index: int = 0) -> tuple[int, ...]:
    return tensor_shape(op.results[index].type)


def int_attr(op: Op, name: str) -> int:
    """A required integer attribute such as ``dimension = 0 : i64``."""
    return attrs.parse_int(attrs.required_attr(op, name))


def i64_array_attr(op: Op, name: str, default: tuple[int, ...] | None = None) -> tuple[int, ...]:
    """An ``array<i64: ...>`` attribute; `default` when absent (required if None)."""
    value = op.get_attr(name)
    if value is None:
        if default is not None:
            return default
        value = attrs.required_attr(op, name)
    return attrs.parse_i64_array(value)


def bool_attr(op: Op, name: str, default: bool = False) -> bool:
    value = op.get_attr(name)
    return default if value is None else attrs.parse_bool(value)
