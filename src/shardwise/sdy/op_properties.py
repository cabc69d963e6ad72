"""Op properties propagation needs: elementwise-ness and side effects (for dead-op erasure).

`is_elementwise` is Shardy's `common/op_properties.cc`. `is_trivially_dead` is MLIR's
`isOpTriviallyDead`, which the greedy rewrite driver applies to every op it pops; it needs the
memory effects declared by StableHLO's and Shardy's op definitions, tabled here.
"""

from __future__ import annotations

from shardwise.ir import Op, TensorType

__all__ = [
    "ELEMENTWISE_OPS",
    "ISOLATED_FROM_ABOVE",
    "is_elementwise",
    "is_trivially_dead",
    "has_no_memory_effect",
]

# Ops with MLIR's `IsolatedFromAbove` trait: their bodies use no value defined outside them,
# and MLIR's verifier reaches their bodies after the region holding them.
ISOLATED_FROM_ABOVE = frozenset(
    {"builtin.module", "func.func", "sdy.manual_computation", "sdy.named_computation"}
)

# Ops with MLIR's `Elementwise` trait or StableHLO's `BroadcastingElementwise` trait.
ELEMENTWISE_OPS = frozenset(
    "stablehlo." + name
    for name in (
        "abs add and atan2 cbrt ceil clamp compare complex convert cosine count_leading_zeros "
        "divide exponential exponential_minus_one floor imag is_finite log log_plus_one "
        "logistic maximum minimum multiply negate not or popcnt power real reduce_precision "
        "remainder round_nearest_afz round_nearest_even rsqrt select shift_left "
        "shift_right_arithmetic shift_right_logical sign sine sqrt subtract tan tanh "
        "uniform_dequantize uniform_quantize xor"
    ).split()
)
_SDY_ELEMENTWISE = frozenset({"sdy.propagation_barrier", "sdy.sharding_constraint", "sdy.reshard"})

# Ops declaring no memory effects (`Pure` or `NoMemoryEffect`).
_NO_EFFECT_OPS = (
    ELEMENTWISE_OPS
    | frozenset(
        "stablehlo." + name
        for name in (
            "after_all batch_norm_grad batch_norm_inference batch_norm_training bitcast_convert "
            "broadcast broadcast_in_dim cholesky concatenate constant convolution create_token "
            "dot dot_general dynamic_broadcast_in_dim dynamic_conv dynamic_gather dynamic_iota "
            "dynamic_pad dynamic_reshape dynamic_slice dynamic_update_slice einsum fft gather "
            "get_dimension_size get_tuple_element iota optimization_barrier pad partition_id "
            "real_dynamic_slice replica_id reshape return reverse rng_bit_generator "
            "set_dimension_size slice torch_index_select transpose triangular_solve tuple "
            "unary_einsum"
        ).split()
    )
    | frozenset({"sdy.reshard", "sdy.return", "sdy.constant", "sdy.propagation_barrier"})
)

# Ops whose effects are those of the ops nested in their regions.
_RECURSIVE_EFFECT_OPS = frozenset(
    "stablehlo." + name
    for name in "case if map reduce reduce_window scatter select_and_scatter sort while".split()
) | frozenset({"sdy.manual_computation", "sdy.named_computation"})

_TERMINATORS = frozenset({"func.return", "stablehlo.return", "sdy.return"})


def is_elementwise(op: Op) -> bool:
    """Elementwise for propagation purposes (Shardy's `isElementwise`)."""
    if op.name in ELEMENTWISE_OPS or op.name in _SDY_ELEMENTWISE:
        return True
    if op.name == "stablehlo.bitcast_convert":
        src, dst = op.operands[0].type, op.results[0].type
        return (
            isinstance(src, TensorType) and isinstance(dst, TensorType) and (src.shape == dst.shape)
        )
    return False


def has_no_memory_effect(op: Op) -> bool:
    """MLIR's `wouldOpBeTriviallyDead` without the use check."""
    if op.is_terminator:
        return False
    if op.name == "stablehlo.custom_call":
        return str(op.get_attr("has_side_effect") or "false") != "true"
    if op.name in _NO_EFFECT_OPS:
        return True
    if op.name in _RECURSIVE_EFFECT_OPS:
        return all(
            nested.name in _TERMINATORS or has_no_memory_effect(nested)
            for region in op.regions
            for block in region.blocks
            for nested in block.ops
        )
    return False


def is_trivially_dead(op: Op) -> bool:
    """No result is used and the op has no side effects (MLIR's `isOpTriviallyDead`)."""
    for result in op.results:  # a plain loop: called for every op the driver pops
        if result.uses:
            return False
    return has_no_memory_effect(op)
