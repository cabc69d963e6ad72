"""Frozen values used as cache keys hash once, and equal values hash alike."""

from __future__ import annotations

from dataclasses import replace

import pytest

from shardwise.api import parse_sharding
from shardwise.hashing import InternTable, cached_hash
from shardwise.rules.rule import OpShardingRule
from shardwise.sharding import TensorSharding
from shardwise.syntax import parse_sdy_attribute as parse_attr


@pytest.mark.parametrize("cls", [TensorSharding, OpShardingRule])
def test_dataclass_keeps_the_cached_hash(cls) -> None:
    assert cls.__hash__ is cached_hash


@pytest.mark.parametrize(
    "text",
    [
        '#sdy.sharding<@mesh, [{"x", "y"}, {?}p1], replicated={"z"}>',
        "#sdy.op_sharding_rule<([i, j], [j, k])->([i, k]) {i=8, j=4, k=2} reduction={j}>",
    ],
)
def test_equal_values_hash_alike_and_once(text: str) -> None:
    a = parse_attr(text)
    b = replace(a)  # a fresh copy (the parser interns what it reads)
    assert a is not b and a == b
    assert hash(a) == hash(b) != 0
    assert a._hash == hash(a)  # stored on first use


def test_values_differing_in_one_field_differ() -> None:
    a = parse_attr('#sdy.sharding<@mesh, [{"x"}, {}]>')
    b = parse_attr('#sdy.sharding<@mesh, [{"x"}, {}], unreduced={"y"}>')
    assert a != b and hash(a) != hash(b)


def test_intern_table_returns_the_first_equal_value() -> None:
    table = InternTable(max_size=8)
    first = parse_sharding('<@mesh, [{"x"}, {}]>')
    second = TensorSharding("mesh", first.dim_shardings)
    assert second == first and second is not first
    assert table(first) is first
    assert table(second) is first


def test_intern_table_starts_afresh_when_full() -> None:
    table = InternTable(max_size=2)
    a, b, c = (TensorSharding.fully_closed("mesh", rank) for rank in (1, 2, 3))
    table(a), table(b)
    table(c)  # full: forgets a and b
    a_again = TensorSharding("mesh", a.dim_shardings)
    assert table(a_again) is a_again
