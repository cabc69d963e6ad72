"""The numeric rule validator: built-in rules pass, deliberately wrong rules are caught."""

from __future__ import annotations

import numpy as np
import pytest

from shardwise.cli import main
from shardwise.io.mlir import load_text
from shardwise.rules.registry import create_op_sharding_rule
from shardwise.rules.rule import OpShardingRule
from shardwise.rules.validate import validate_rule

RNG = np.random.default_rng(0)


def _op(body: str, args: str):
    text = f"func.func @main({args}) {{\n  {body}\n  return\n}}"
    text = text.replace("  return\n", "  func.return\n")
    module = load_text(text)
    return next(
        op for op in module.walk() if op.name not in ("builtin.module", "func.func", "func.return")
    )


# (op text, func args, operand shapes, numpy implementation)
FAMILIES = [
    (
        "%0 = stablehlo.add %a, %b : tensor<4x6xf64>",
        "%a: tensor<4x6xf64>, %b: tensor<4x6xf64>",
        [(4, 6), (4, 6)],
        np.add,
    ),
    (
        "%0 = stablehlo.transpose %a, dims = [1, 0] : (tensor<4x6xf64>) -> tensor<6x4xf64>",
        "%a: tensor<4x6xf64>",
        [(4, 6)],
        np.transpose,
    ),
    (
        "%0 = stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<6xf64>) -> tensor<4x6xf64>",
        "%a: tensor<6xf64>",
        [(6,)],
        lambda a: np.broadcast_to(a, (a.shape[0] and 4, a.shape[0])),
    ),
    (
        "%0 = stablehlo.reshape %a : (tensor<4x6xf64>) -> tensor<24xf64>",
        "%a: tensor<4x6xf64>",
        [(4, 6)],
        lambda a: a.reshape(-1),
    ),
    (
        "%0 = stablehlo.reshape %a : (tensor<24xf64>) -> tensor<4x6xf64>",
        "%a: tensor<24xf64>",
        [(24,)],
        lambda a: a.reshape(4, -1),
    ),
    (
        "%0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1] : "
        "(tensor<2x4x6xf64>, tensor<2x6x8xf64>) -> tensor<2x4x8xf64>",
        "%a: tensor<2x4x6xf64>, %b: tensor<2x6x8xf64>",
        [(2, 4, 6), (2, 6, 8)],
        np.matmul,
    ),
    (
        "%0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [1] : "
        "(tensor<4x6xf64>, tensor<f64>) -> tensor<4xf64>",
        "%a: tensor<4x6xf64>, %z: tensor<f64>",
        [(4, 6), ()],
        lambda a, z: a.sum(axis=1) + z,
    ),
    (  # operands smaller than the concat dim's factor: split along the other dim only
        "%0 = stablehlo.concatenate %a, %b, dim = 1 : "
        "(tensor<4x3xf64>, tensor<4x5xf64>) -> tensor<4x8xf64>",
        "%a: tensor<4x3xf64>, %b: tensor<4x5xf64>",
        [(4, 3), (4, 5)],
        lambda a, b: np.concatenate([a, b], axis=1),
    ),
]


def _case(index):
    body, args, shapes, fn = FAMILIES[index]
    op = _op(body, args)
    rule = create_op_sharding_rule(op)
    # Scalars are init values: the reduction's identity, as a reduce body requires.
    operands = [RNG.standard_normal(s) if s else np.zeros(()) for s in shapes]
    return rule, fn, operands


@pytest.mark.parametrize("index", range(len(FAMILIES)), ids=[f[0].split()[2] for f in FAMILIES])
def test_builtin_rules_pass(index):
    rule, fn, operands = _case(index)
    checks = validate_rule(rule, fn, operands)
    assert all(c.ok for c in checks), [str(c) for c in checks]
    assert any(c.kind != "skipped" for c in checks)


def _broken(rule: OpShardingRule, **changes) -> OpShardingRule:
    from dataclasses import replace

    return replace(rule, **changes)


def test_reduction_marked_pass_through_is_caught():
    rule, fn, operands = _case(5)  # dot_general
    wrong = _broken(rule, reduction_factors=())
    assert not all(c.ok for c in validate_rule(wrong, fn, operands))


def test_swapped_transpose_mapping_is_caught():
    rule, fn, operands = _case(1)
    wrong = _broken(rule, result_mappings=(tuple(reversed(rule.result_mappings[0])),))
    assert not all(c.ok for c in validate_rule(wrong, fn, operands))


def test_reduce_dim_marked_pass_through_is_caught():
    rule, fn, operands = _case(6)
    wrong = _broken(rule, reduction_factors=())
    assert not all(c.ok for c in validate_rule(wrong, fn, operands))


def test_cli_validate_rule(capsys):
    assert (
        main(
            [
                "validate-rule",
                "i j, j k -> i k",
                "--reduction",
                "j",
                "--fn",
                "numpy:matmul",
                "--shapes",
                "8x16,16x4",
            ]
        )
        == 0
    )
    assert (
        main(["validate-rule", "i j, j k -> i k", "--fn", "numpy:matmul", "--shapes", "8x16,16x4"])
        == 1
    )
    out = capsys.readouterr().out
    assert "factor j (pass-through): FAILED" in out
