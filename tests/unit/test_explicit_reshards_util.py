"""Hand-derived tables for the common-axes search of ``sdy-insert-explicit-reshards``.

Mesh ``["x"=2, "y"=4, "z"=2]``. Each row is worked out by hand from the algorithm as Shardy
states it (``exp/explicit_reshards_util.cc``, ``prop/sharding_projection.cc``); the
differential test checks the same code against the reference end to end.
"""

from __future__ import annotations

import pytest

from shardwise.export.explicit_reshards.explicit_reshards_util import (
    compatible_factor_shardings,
    distribute_axes_across_factors,
    find_common_axes,
)
from shardwise.propagation.projection import FactorSharding, ShardingProjection
from shardwise.syntax import (
    parse_axis_ref,
    parse_mesh,
    parse_op_sharding_rule,
    parse_tensor_sharding,
)

MESH = parse_mesh('#sdy.mesh<["x"=2, "y"=4, "z"=2]>')


def _axes(text: str) -> tuple:
    return tuple(parse_axis_ref(a.strip()) for a in text.split(",") if a.strip())


def _fmt(axes: tuple) -> str:
    return ", ".join(str(a) for a in axes)


# factor sizes, axes to place -> per factor (axes, overflow axes)
DISTRIBUTE = [
    ("split-between-factors", [6, 4], '"y"', [('"y":(1)2', ""), ('"y":(2)2', "")]),
    ("coprime-factor-skipped", [3, 4], '"y"', [("", ""), ('"y"', "")]),
    ("rest-overflows-last", [2, 2], '"x", "y"', [('"x"', ""), ('"y":(1)2', '"y":(2)2')]),
    ("nothing-fits", [3], '"x"', [("", '"x"')]),
    ("sub-axis-input", [2, 8], '"y":(1)2, "z"', [('"y":(1)2', ""), ('"z"', "")]),
]


@pytest.mark.parametrize(
    "sizes, axes, expected", [r[1:] for r in DISTRIBUTE], ids=[r[0] for r in DISTRIBUTE]
)
def test_distribute_axes_across_factors(sizes, axes, expected) -> None:
    shardings = [FactorSharding() for _ in sizes]
    distribute_axes_across_factors(shardings, sizes, _axes(axes), MESH)
    got = [(_fmt(s.axis_refs), _fmt(s.overflow_axes)) for s in shardings]
    assert got == expected


def _projection(rule_text: str, *shardings: str) -> tuple:
    rule = parse_op_sharding_rule(rule_text)
    parsed = [parse_tensor_sharding(f"#sdy.sharding<@mesh, {s}>") for s in shardings]
    n = rule.num_operands
    return rule, ShardingProjection.build(
        parsed[:n], parsed[n:], rule, MESH, closed_if_missing=True
    )


_ADD = "#sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=8, j=16}>"
_DOT = "#sdy.op_sharding_rule<([i, k], [k, j])->([i, j]) {i=8, j=16, k=32} reduction={k}>"
_TRANSPOSE = "#sdy.op_sharding_rule<([i, j])->([j, i]) {i=8, j=16}>"
# rule, shardings (operands then results), sizes, expected axes per factor
COMMON_AXES = [
    # compatible already: kept as is.
    ("compatible", _ADD, ['[{"x"}, {"y"}]'] * 3, [128] * 3, ['"x"', '"y"']),
    # i=[x] and j=[y] are each on two tensors (256); j=[y] is larger, then i=[x].
    (
        "greedy-majority",
        _ADD,
        ['[{"x"}, {"y"}]', '[{"y"}, {"x"}]', '[{"x"}, {"y"}]'],
        [128] * 3,
        ['"x"', '"y"'],
    ),
    # two tensors: the larger (the result here) is kept as is, the other resharded to it.
    (
        "two-tensors-larger-kept",
        _TRANSPOSE,
        ['[{"x"}, {"y"}]', '[{"x"}, {"y"}]'],
        [128, 256],
        ['"y"', '"x"'],
    ),
    # k=[x] on both operands (256+512) beats i and j; i=[y] then still fits.
    (
        "dot-contracting",
        _DOT,
        ['[{"y"}, {"x"}]', '[{"x"}, {}]', '[{"x"}, {}]'],
        [256, 512, 128],
        ['"y"', "", '"x"'],
    ),
]


@pytest.mark.parametrize(
    "rule_text, shardings, sizes, expected",
    [r[1:] for r in COMMON_AXES],
    ids=[r[0] for r in COMMON_AXES],
)
def test_find_common_axes(rule_text, shardings, sizes, expected) -> None:
    rule, projection = _projection(rule_text, *shardings)
    common = find_common_axes(projection, rule, sizes, MESH)
    assert [_fmt(a) for a in common] == expected


def test_incompatible_when_need_replication_factor_is_sharded() -> None:
    rule, projection = _projection(
        "#sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16} need_replication={j}>",
        '[{}, {"y"}]',
        '[{}, {"y"}]',
    )
    assert compatible_factor_shardings(projection, rule) is None
