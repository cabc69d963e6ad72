"""The sharding walker's shortcuts keep `get_sharding`/`set_sharding`'s meaning.

`_transform_op` reads an ordinary op's one result's sharding straight from its ``sdy.sharding``
list; which ops are not ordinary is spelled out twice (here and in `sharding_access`), so a
new special owner added to one place only would be read from the wrong attribute.
"""

from __future__ import annotations

import pytest

from shardwise.api import parse_sharding
from shardwise.sdy import data_flow, sharding_walker
from shardwise.sdy import shardings as sharding_access
from shardwise.sharding import TensorSharding


def test_ordinary_ops_are_those_get_sharding_reads_from_the_list():
    special = sharding_walker._OWN_PROPERTY_OPS | data_flow.DATA_FLOW_OPS | {"func.func"}
    assert special == sharding_access._SPECIAL_OWNERS


@pytest.mark.parametrize(
    ("texts", "calls"),
    [
        (['<@m, [{"x", ?}]>'] * 3, 1),
        (['<@m, [{"x", ?}]>', '<@m, [{"x"}]>', '<@m, [{"x", ?}]>'], 2),
    ],
    ids=["one-value-three-objects", "two-values"],
)
def test_memoized_transform_calls_once_per_value(texts, calls):
    seen = []

    def close(sharding: TensorSharding) -> TensorSharding:
        seen.append(sharding)
        return sharding.closed_like()

    transform = sharding_walker.memoized_transform(close)
    shardings = [parse_sharding(t) for t in texts]  # distinct objects, some equal
    results = [transform(s) for s in shardings]
    assert [str(r) for r in results] == [str(s.closed_like()) for s in shardings]
    assert len(seen) == calls


def test_memoized_transform_returns_an_unchanged_input_itself():
    sharding = parse_sharding('<@m, [{"x"}, {}]>')
    assert sharding_walker.memoized_transform(TensorSharding.closed_like)(sharding) is sharding
