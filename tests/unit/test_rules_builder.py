"""OpShardingRuleBuilder: factor order, size-1 factors, typing and blocking (rows in Shardy notation)."""

from __future__ import annotations

import pytest

from shardwise.ir import Op, OpaqueType, TensorType
from shardwise.rules.builder import (
    NULL_DIM,
    OpShardingRuleBuilder,
    build_pointwise,
    create_identity_sharding_rule,
)
from shardwise.rules.rule import FactorType

NR = FactorType.NEED_REPLICATION
P = FactorType.PERMUTATION
R = FactorType.REDUCTION


def t(*shape: int) -> TensorType:
    return TensorType(tuple(shape), "f32")


def rule_text(builder: OpShardingRuleBuilder) -> str:
    return str(builder.build())[len("#sdy.op_sharding_rule<") : -1]


CASES = [
    (
        "add_factor_maps_listed_dims",
        lambda: (
            OpShardingRuleBuilder([t(8, 4), t(4, 16)], [t(8, 16)])
            .add_factor((0, NULL_DIM), (0,), 8)
            .add_factor((NULL_DIM, 1), (1,), 16)
            .add_factor((1, 0), (NULL_DIM,), 4, R)
        ),
        "([i, k], [k, j])->([i, j]) {i=8, j=16, k=4} reduction={k}",
    ),
    (
        "size1_factor_not_added_to_mapped_dim",
        lambda: (
            OpShardingRuleBuilder([t(4)], [t(4)])
            .add_factor((0,), (0,), 4)
            .add_factor((0,), (0,), 1)
        ),
        "([i])->([i]) {i=4, j=1}",
    ),
    (
        "size1_factor_added_to_free_dim",
        lambda: OpShardingRuleBuilder([t(1)], [t(4)]).add_factor((0,), (NULL_DIM,), 1),
        "([i])->([j]) {i=1, j=1}",
    ),
    (
        "compound_dim_keeps_major_to_minor",
        lambda: (
            OpShardingRuleBuilder([t(8)], [t(2, 4)])
            .add_factor((0,), (0,), 2)
            .add_factor((0,), (1,), 4)
        ),
        "([ij])->([i, j]) {i=2, j=4}",
    ),
    (
        "build_fills_operands_then_results",
        lambda: OpShardingRuleBuilder([t(2, 3)], [t(5, 3)]).add_factor((1,), (1,), 3),
        "([j, i])->([k, i]) {i=3, j=1, k=1}",
    ),
    (
        "for_all_skips_scalars",
        lambda: OpShardingRuleBuilder([t(), t(8)], [t(8)]).add_factor_for_all(0, 8),
        "([], [i])->([i]) {i=8}",
    ),
    (
        "for_all_appends_even_size1",
        lambda: (
            OpShardingRuleBuilder([t(4)], [t(4)]).add_factor_for_all(0, 4).add_factor_for_all(0, 1)
        ),
        "([ij])->([ij]) {i=4, j=1}",
    ),
    (
        "operands_only_and_results_only",
        lambda: (
            OpShardingRuleBuilder([t(4)], [t(8)])
            .add_factor_for_all_operands(0, 4, NR)
            .add_factor_for_all_results(0, 8, NR)
        ),
        "([i])->([j]) {i=4, j=8} need_replication={i, j}",
    ),
    (
        "pointwise_types_and_conditional_blocking",
        lambda: OpShardingRuleBuilder([t(4, 6)], [t(4, 6)]).add_pointwise(
            (4, 6), lambda d: P if d == 1 else FactorType.PASS_THROUGH, lambda ft: ft == P
        ),
        "([i, j])->([i, j]) {i=4, j=6} permutation={j} blocked_propagation={j}",
    ),
    (
        "pointwise_if",
        lambda: OpShardingRuleBuilder([t(4, 6)], [t(4, 6)]).add_pointwise_if(
            (4, 6), lambda d: d == 1
        ),
        "([j, i])->([k, i]) {i=6, j=1, k=1}",
    ),
    (
        "mismatch_uses_input_size",
        lambda: OpShardingRuleBuilder(
            [t(8, 4)], [t(8, 2)]
        ).add_pointwise_with_diff_type_for_mismatch((8, 4), (8, 2), P, mismatch_blocked=True),
        "([i, j])->([i, j]) {i=8, j=4} permutation={j} blocked_propagation={j}",
    ),
    (
        "token_operand_is_rank0",
        lambda: OpShardingRuleBuilder(
            [OpaqueType("!stablehlo.token"), t(2)], [t(2)]
        ).add_factor_for_all(0, 2),
        "([], [i])->([i]) {i=2}",
    ),
]


@pytest.mark.parametrize(("make", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_builder(make, expected: str) -> None:
    assert rule_text(make()) == expected


def test_build_leaves_builder_unchanged() -> None:
    builder = OpShardingRuleBuilder([t(2, 3)], [t(2, 3)]).add_factor((1,), (1,), 3)
    first = builder.build()
    assert builder.build() == first
    builder.add_factor((0,), (0,), 2)
    assert str(builder.build()) == "#sdy.op_sharding_rule<([j, i])->([j, i]) {i=3, j=2}>"


def test_build_pointwise_follows_first_result() -> None:
    op = Op("stablehlo.add", result_types=[t(8, 4)])
    for _ in range(2):
        op.add_operand(Op("x", result_types=[t(8, 4)]).results[0])
    assert str(build_pointwise(op)) == (
        "#sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=8, j=4}>"
    )


@pytest.mark.parametrize(
    "results",
    [[], [OpaqueType("!stablehlo.token")]],
    ids=["no_result", "token_result"],
)
def test_build_pointwise_needs_a_tensor_result(results) -> None:
    assert build_pointwise(Op("stablehlo.after_all", result_types=results)) is None


def test_identity_rule() -> None:
    rule = create_identity_sharding_rule(t(2, 3), num_operands=2, num_results=1)
    assert str(rule) == "#sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=2, j=3}>"
    assert str(create_identity_sharding_rule(t())) == "#sdy.op_sharding_rule<([])->([])>"
