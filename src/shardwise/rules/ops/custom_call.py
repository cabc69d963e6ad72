"""`stablehlo.custom_call`: the rule depends on ``call_target_name``.

Known pointwise targets, a few linear-algebra and top-k targets with their own rule, targets
that silently get no rule, and a once-per-process warning for every other target.
"""

from __future__ import annotations

from collections.abc import Callable

from shardwise.ir import Op
from shardwise.rules import stablehlo_attrs as attrs
from shardwise.rules.builder import NULL_DIM, OpShardingRuleBuilder, build_pointwise
from shardwise.rules.ops.common import operand_shape, result_shape
from shardwise.rules.registry import register, warn_once
from shardwise.rules.rule import FactorType, OpShardingRule

NR = FactorType.NEED_REPLICATION

# Targets that get no rule and no warning (opaque callbacks, kernels, test-only).
NO_RULE_TARGETS = frozenset(
    {
        "sdy_testonly",
        "tpu_custom_call",
        "xla.debug.Log",
        "xla_ffi_python_cpu_callback",
        "xla_ffi_python_gpu_callback",
        "xla_python_cpu_callback",
        "xla_python_gpu_callback",
    }
)

# Targets whose results correspond element-wise to their operands (incl. SPMD-internal ops
# that only permute data between partitions and keep the input's sharding).
POINTWISE_TARGETS = frozenset(
    {
        "Cholesky",
        "CompactWyHelper",
        "InspectSharding",
        "InvertDiagBlocksLowerTriangular",
        "InvertDiagBlocksUpperTriangular",
        "LayoutConstraint",
        "MoveToDevice",
        "MoveToHost",
        "X64SplitHigh",
        "X64SplitLow",
        "_SPMDInternalOp_MultiPad",
        "_SPMDInternalOp_MultiRotate",
        "_SPMDInternalOp_MultiSlice",
        "_SPMDInternalOp_RotateRight",
        "_SPMDInternalOp_Wrap",
        "annotate_device_placement",
        "mhlo.erf",
        "xla.megascale.provide_metadata",
    }
)

TargetRule = Callable[[Op], OpShardingRule | None]


def _eigh(op: Op) -> OpShardingRule:
    """``([i, j, k])->([i, j, k], [i, k])``: eigenvectors follow the input matrix, eigenvalues
    its last dim."""
    shape = operand_shape(op)
    d1, d2 = len(shape) - 2, len(shape) - 1
    return (
        OpShardingRuleBuilder.for_op(op)
        .add_pointwise(shape[:-2])
        .add_factor((d1,), (d1, NULL_DIM), shape[d1])
        .add_factor((d2,), (d2, d1), shape[d2])
        .build()
    )


def _qr(op: Op) -> OpShardingRule:
    """``([i, j, k])->([i, j, k], [i, l]) need_replication={j, k, l}``: the decomposition needs
    whole matrices; taus (result 1) are unrelated to either matrix dim."""
    shape = operand_shape(op)
    d1, d2 = len(shape) - 2, len(shape) - 1
    return (
        OpShardingRuleBuilder.for_op(op)
        .add_pointwise(shape[:-2])
        .add_factor((d1,), (d1, NULL_DIM), shape[d1], NR)
        .add_factor((d2,), (d2, NULL_DIM), shape[d2], NR)
        .add_factor((NULL_DIM,), (NULL_DIM, d1), result_shape(op, 1)[d1], NR)
        .build()
    )


def _householder_product(op: Op) -> OpShardingRule:
    """``([i, j, k], [i, l])->([i, j, k]) need_replication={j, k, l}``: like Qr in reverse."""
    a, taus = operand_shape(op, 0), operand_shape(op, 1)
    d1, d2 = len(a) - 2, len(a) - 1
    return (
        OpShardingRuleBuilder.for_op(op)
        .add_pointwise(a[:-2])
        .add_factor((d1, NULL_DIM), (d1,), a[d1], NR)
        .add_factor((d2, NULL_DIM), (d2,), a[d2], NR)
        .add_factor((NULL_DIM, d1), (NULL_DIM,), taus[d1], NR)
        .build()
    )


def _top_k(op: Op) -> OpShardingRule:
    """``([i, j])->([i, j], [i, j]) need_replication={j} blocked_propagation={j}``: top-k needs
    the whole reduced dim."""
    return (
        OpShardingRuleBuilder.for_op(op)
        .add_pointwise_with_diff_type_for_mismatch(
            operand_shape(op), result_shape(op), NR, mismatch_blocked=True
        )
        .build()
    )


def _approx_top_k(op: Op) -> OpShardingRule:
    """``([i, j], [i, j], [], [])->([i, k], [i, k]) need_replication={k} blocked={k}``: the
    reduced dim is shared by operand and iota; the results' k dim is separate."""
    builder = OpShardingRuleBuilder.for_op(op)
    for dim, (in_size, out_size) in enumerate(
        zip(operand_shape(op), result_shape(op), strict=True)
    ):
        if in_size == out_size:
            builder.add_factor_for_all(dim, in_size)
            continue
        builder.add_factor((dim, dim, NULL_DIM, NULL_DIM), (NULL_DIM, NULL_DIM), in_size)
        builder.add_factor((NULL_DIM,) * 4, (dim, dim), out_size, NR, True)
    return builder.build()


def _x64_combine(op: Op) -> OpShardingRule | None:
    """Pointwise, except when feeding an rng_bit_generator: ``([i], [i])->([i])`` need_replication
    and blocked, since the generator's state must stay replicated."""
    if not op.results or not any(
        user.name == "stablehlo.rng_bit_generator" for user in op.results[0].users
    ):
        return build_pointwise(op)
    shape = result_shape(op)
    return (
        OpShardingRuleBuilder.for_op(op).add_factor_for_all(0, shape[0], NR, blocked=True).build()
    )


_TARGET_RULES: dict[str, TargetRule] = {
    "ApproxTopK": _approx_top_k,
    "Eigh": _eigh,
    "PartialReduce": _approx_top_k,
    "ProductOfElementaryHouseholderReflectors": _householder_product,
    "Qr": _qr,
    "QrDecompositionBlock": _qr,
    "X64Combine": _x64_combine,
    "mhlo.topk": _top_k,
}


@register("stablehlo.custom_call")
def custom_call_rule(op: Op, conservative: bool) -> OpShardingRule | None:
    """By ``call_target_name``: pointwise targets, `_TARGET_RULES`, silent or warned no-rule."""
    target = attrs.parse_string(attrs.required_attr(op, "call_target_name"))
    if target in NO_RULE_TARGETS:
        return None
    if target in POINTWISE_TARGETS:
        return build_pointwise(op)
    target_rule = _TARGET_RULES.get(target)
    if target_rule is not None:
        return target_rule(op)
    warn_once(
        "custom_call",
        f"custom call @{target} is unknown to SDY sharding rule registry",
        f"stablehlo.custom_call @{target}",
    )
    return None
