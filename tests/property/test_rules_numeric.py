"""Semantic check of the rules with numpy: sharding along a factor commutes with the op.

For an op and its rule, pick a factor of size divisible by k and split it into k pieces in every
tensor that maps it (a tensor without it is replicated). A dimension with several factors is
viewed as its factors (major to minor), so splitting a minor factor gives strided shards, as in
Shardy. Then run the op on each shard with numpy and assemble:

- pass-through factor: the per-shard results are the shards of the full result;
- reduction factor: the per-shard results (which lack the factor) sum to the full result.

A wrong factor size, order or type breaks one of these equalities.

This is deliberately not `shardwise.rules.validate`: it is the independent oracle for the
built-in rules (and so for the validator's verdicts), and it covers what the validator cannot
offer users: kernels that see their local result shapes (reshape, broadcast) and factors that
appear only in results.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from shardwise.ir import Block, Op, RawAttr, TensorType
from shardwise.rules.registry import create_op_sharding_rule
from shardwise.rules.rule import FactorType, OpShardingRule, TensorMapping

SIZES = (1, 2, 3, 4, 6, 8, 12)

# (local operands, local result shapes) -> local results
Kernel = Callable[[list[np.ndarray], list[tuple[int, ...]]], list[np.ndarray]]


@dataclass(frozen=True)
class NumericCase:
    name: str
    operands: list[np.ndarray]
    result_shapes: list[tuple[int, ...]]
    attrs: dict[str, str]
    kernel: Kernel
    result_only_ok: bool = False

    def op(self) -> Op:
        op = Op(
            self.name,
            result_types=[TensorType(s, "f64") for s in self.result_shapes],
            properties={k: RawAttr(v) for k, v in self.attrs.items()},
        )
        for x in self.operands:
            op.add_operand(Block([TensorType(x.shape, "f64")]).args[0])
        return op


# -- splitting tensors along a factor -----------------------------------------------------------


def _axis_sizes(shape: Sequence[int], mapping: TensorMapping, sizes: Sequence[int]) -> list[int]:
    """The tensor viewed with one axis per factor; a single-factor dim keeps its own size
    (a concatenate's operands are smaller than their concat-dim factor)."""
    result: list[int] = []
    for dim_size, dim in zip(shape, mapping, strict=True):
        result += [dim_size] if len(dim) == 1 else [sizes[f] for f in dim]
    return result


def _factor_axis(mapping: TensorMapping, factor: int) -> int | None:
    flat = [f for dim in mapping for f in dim]
    return flat.index(factor) if factor in flat else None


def _local_shape(
    shape: Sequence[int], mapping: TensorMapping, sizes: Sequence[int], factor: int, k: int
) -> tuple[int, ...]:
    axes = _axis_sizes(shape, mapping, sizes)
    axis = _factor_axis(mapping, factor)
    if axis is not None:
        axes[axis] //= k
    local, i = [], 0
    for dim in mapping:
        local.append(math.prod(axes[i : i + len(dim)]))
        i += len(dim)
    return tuple(local)


def split(
    x: np.ndarray, mapping: TensorMapping, sizes: Sequence[int], factor: int, k: int
) -> list[np.ndarray]:
    """The k shards of `x` along `factor` (k copies if `x` does not map it)."""
    axis = _factor_axis(mapping, factor)
    if axis is None:
        return [x] * k
    local = _local_shape(x.shape, mapping, sizes, factor, k)
    pieces = np.split(x.reshape(_axis_sizes(x.shape, mapping, sizes)), k, axis=axis)
    return [p.reshape(local) for p in pieces]


def join(
    pieces: list[np.ndarray],
    shape: Sequence[int],
    mapping: TensorMapping,
    sizes: Sequence[int],
    factor: int,
) -> np.ndarray:
    """Inverse of `split`: the full tensor of `shape` from its shards along `factor`."""
    axis = _factor_axis(mapping, factor)
    assert axis is not None
    axes = _axis_sizes(shape, mapping, sizes)
    axes[axis] //= len(pieces)
    return np.concatenate([p.reshape(axes) for p in pieces], axis=axis).reshape(shape)


def check_factor(case: NumericCase, rule: OpShardingRule, factor: int, k: int) -> None:
    sizes = rule.factor_sizes
    shards = [
        split(x, m, sizes, factor, k)
        for x, m in zip(case.operands, rule.operand_mappings, strict=True)
    ]
    local_shapes = [
        _local_shape(s, m, sizes, factor, k)
        for s, m in zip(case.result_shapes, rule.result_mappings, strict=True)
    ]
    local_results = [case.kernel([s[p] for s in shards], local_shapes) for p in range(k)]
    full = case.kernel(case.operands, case.result_shapes)
    for r, mapping in enumerate(rule.result_mappings):
        pieces = [local[r] for local in local_results]
        if rule.factor_type(factor) == FactorType.REDUCTION:
            assembled = sum(pieces[1:], pieces[0])
        elif _factor_axis(mapping, factor) is None:
            assembled = pieces[0]
        else:
            assembled = join(pieces, case.result_shapes[r], mapping, sizes, factor)
        np.testing.assert_allclose(assembled, full[r], rtol=1e-9, atol=1e-9)


def checkable_factors(case: NumericCase, rule: OpShardingRule, k: int) -> list[int]:
    """Unblocked factors of size divisible by k that a shard-local op can compute: reduction
    factors, and pass-through factors in every result and in some operand (result-only
    factors too when the op makes new data, like a broadcast)."""

    def mapped(factor: int, mappings: tuple[TensorMapping, ...]) -> list[bool]:
        return [any(factor in dim for dim in m) for m in mappings]

    factors = []
    for f, size in enumerate(rule.factor_sizes):
        if size % k or size == 1 or rule.is_blocked(f):
            continue
        in_operand = any(mapped(f, rule.operand_mappings))
        if rule.factor_type(f) == FactorType.REDUCTION:
            factors += [f] if in_operand else []
        elif rule.factor_type(f) == FactorType.PASS_THROUGH and all(
            mapped(f, rule.result_mappings)
        ):
            factors += [f] if in_operand or case.result_only_ok else []
    return factors


# -- cases ---------------------------------------------------------------------------------------


def arrays(draw: st.DrawFn, shape: Sequence[int]) -> np.ndarray:
    seed = draw(st.integers(0, 2**16))
    return np.random.default_rng(seed).standard_normal(tuple(shape))


def shape_of(draw: st.DrawFn, min_rank: int = 0, max_rank: int = 4) -> tuple[int, ...]:
    return tuple(draw(st.lists(st.sampled_from(SIZES), min_size=min_rank, max_size=max_rank)))


def i64(values: Sequence[int]) -> str:
    return "array<i64" + (": " + ", ".join(map(str, values)) if values else "") + ">"


@st.composite
def elementwise(draw: st.DrawFn) -> NumericCase:
    shape = shape_of(draw)
    name, fn = draw(
        st.sampled_from(
            [
                ("stablehlo.add", np.add),
                ("stablehlo.multiply", np.multiply),
                ("stablehlo.maximum", np.maximum),
            ]
        )
    )
    return NumericCase(
        name, [arrays(draw, shape), arrays(draw, shape)], [shape], {}, lambda xs, _: [fn(*xs)]
    )


@st.composite
def transpose(draw: st.DrawFn) -> NumericCase:
    shape = shape_of(draw)
    perm = draw(st.permutations(range(len(shape))))
    out = tuple(shape[p] for p in perm)
    return NumericCase(
        "stablehlo.transpose",
        [arrays(draw, shape)],
        [out],
        {"permutation": i64(perm)},
        lambda xs, _: [np.transpose(xs[0], perm)],
    )


@st.composite
def broadcast_in_dim(draw: st.DrawFn) -> NumericCase:
    out = shape_of(draw)
    dims = sorted(draw(st.sets(st.sampled_from(range(len(out))))) if out else set())
    in_shape = tuple(1 if draw(st.booleans()) else out[d] for d in dims)

    def kernel(xs: list[np.ndarray], shapes: list[tuple[int, ...]]) -> list[np.ndarray]:
        local = shapes[0]
        placed = [1] * len(local)
        for in_dim, out_dim in enumerate(dims):
            placed[out_dim] = xs[0].shape[in_dim]
        return [np.broadcast_to(xs[0].reshape(placed), local)]

    return NumericCase(
        "stablehlo.broadcast_in_dim",
        [arrays(draw, in_shape)],
        [out],
        {"broadcast_dimensions": i64(dims)},
        kernel,
    )


@st.composite
def reshape(draw: st.DrawFn) -> NumericCase:
    in_shape = shape_of(draw, max_rank=4)
    primes = [p for d in in_shape for p in _primes(d)]
    order = draw(st.permutations(primes))
    out: list[int] = []
    for p in order:
        if out and draw(st.booleans()):
            out[-1] *= p
        else:
            out.append(p)
    return NumericCase(
        "stablehlo.reshape",
        [arrays(draw, in_shape)],
        [tuple(out)],
        {},
        lambda xs, shapes: [xs[0].reshape(shapes[0])],
    )


def _primes(n: int) -> list[int]:
    result, p = [], 2
    while n > 1:
        while n % p == 0:
            result.append(p)
            n //= p
        p += 1
    return result


@st.composite
def dot_general(draw: st.DrawFn) -> NumericCase:
    b = shape_of(draw, max_rank=2)
    c = shape_of(draw, max_rank=2)
    lf = shape_of(draw, max_rank=2)
    rf = shape_of(draw, max_rank=2)
    letters = iter("abcdefghijklmnop")
    bl, cl, ll, rl = ([next(letters) for _ in s] for s in (b, c, lf, rf))
    lhs_order = draw(st.permutations(bl + cl + ll))
    rhs_order = draw(st.permutations(bl + cl + rl))
    size = dict(zip(bl + cl + ll + rl, b + c + lf + rf, strict=True))
    lhs_free = [x for x in lhs_order if x in ll]
    rhs_free = [x for x in rhs_order if x in rl]
    out_letters = bl + lhs_free + rhs_free
    nums = [
        f"lhs_batching_dimensions = [{', '.join(str(lhs_order.index(x)) for x in bl)}]",
        f"rhs_batching_dimensions = [{', '.join(str(rhs_order.index(x)) for x in bl)}]",
        f"lhs_contracting_dimensions = [{', '.join(str(lhs_order.index(x)) for x in cl)}]",
        f"rhs_contracting_dimensions = [{', '.join(str(rhs_order.index(x)) for x in cl)}]",
    ]
    spec = f"{''.join(lhs_order)},{''.join(rhs_order)}->{''.join(out_letters)}"
    return NumericCase(
        "stablehlo.dot_general",
        [arrays(draw, [size[x] for x in lhs_order]), arrays(draw, [size[x] for x in rhs_order])],
        [tuple(size[x] for x in out_letters)],
        {"dot_dimension_numbers": f"#stablehlo.dot<{', '.join(nums)}>"},
        lambda xs, _: [np.einsum(spec, *xs)],
    )


@st.composite
def reduce(draw: st.DrawFn) -> NumericCase:
    shape = shape_of(draw, min_rank=1)
    dims = sorted(draw(st.sets(st.sampled_from(range(len(shape))))))
    out = tuple(s for d, s in enumerate(shape) if d not in dims)
    # A reduce with two inputs and scalar init values 0: sums of each input.
    operands = [arrays(draw, shape), arrays(draw, shape), np.zeros(()), np.zeros(())]
    return NumericCase(
        "stablehlo.reduce", operands, [out, out], {"dimensions": i64(dims)},
        lambda xs, _: [np.sum(xs[0], axis=tuple(dims)), np.sum(xs[1], axis=tuple(dims))],
    )  # fmt: skip


@st.composite
def concatenate(draw: st.DrawFn) -> NumericCase:
    shape = list(shape_of(draw, min_rank=1))
    dim = draw(st.integers(0, len(shape) - 1))
    sizes = draw(st.lists(st.sampled_from(SIZES), min_size=1, max_size=3))
    operands = [arrays(draw, shape[:dim] + [s] + shape[dim + 1 :]) for s in sizes]
    out = tuple(shape[:dim] + [sum(sizes)] + shape[dim + 1 :])
    return NumericCase(
        "stablehlo.concatenate",
        operands,
        [out],
        {"dimension": f"{dim} : i64"},
        lambda xs, _: [np.concatenate(xs, axis=dim)],
    )


@st.composite
def slice_(draw: st.DrawFn) -> NumericCase:
    shape = shape_of(draw)
    keep = [draw(st.booleans()) for _ in shape]
    starts = [
        0 if kept else draw(st.integers(0, s - 1)) for s, kept in zip(shape, keep, strict=True)
    ]
    limits = [
        s if kept else draw(st.integers(b + 1, s))
        for b, s, kept in zip(starts, shape, keep, strict=True)
    ]
    strides = [1 if kept else draw(st.sampled_from((1, 2))) for kept in keep]
    out = tuple(-(-(lim - b) // st_) for b, lim, st_ in zip(starts, limits, strides, strict=True))
    full = [s == o for s, o in zip(shape, out, strict=True)]

    def kernel(xs: list[np.ndarray], _: list[tuple[int, ...]]) -> list[np.ndarray]:
        # An unsliced dim (a pass-through factor) may be sharded: take all of its shard.
        index = tuple(
            slice(None) if f else slice(b, lim, st_)
            for f, b, lim, st_ in zip(full, starts, limits, strides, strict=True)
        )
        return [xs[0][index]]

    attrs = {"start_indices": i64(starts), "limit_indices": i64(limits), "strides": i64(strides)}
    return NumericCase("stablehlo.slice", [arrays(draw, shape)], [out], attrs, kernel)


CASES = {
    "elementwise": elementwise,
    "transpose": transpose,
    "broadcast_in_dim": broadcast_in_dim,
    "reshape": reshape,
    "dot_general": dot_general,
    "reduce": reduce,
    "concatenate": concatenate,
    "slice": slice_,
}


@pytest.mark.parametrize("kind", sorted(CASES))
# Some cases draw shapes a factor of `k` must divide: many draws are rejected (on a busy
# machine the health check then stops the test, though enough cases run).
@settings(suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(data=st.data())
def test_sharding_a_factor_commutes_with_the_op(kind: str, data: st.DataObject) -> None:
    case = data.draw(CASES[kind](), label="case")
    k = data.draw(st.sampled_from((2, 3, 4)), label="k")
    rule = create_op_sharding_rule(case.op())
    assert rule is not None
    factors = checkable_factors(case, rule, k)
    assume(factors)
    check_factor(case, rule, data.draw(st.sampled_from(factors), label="factor"), k)


def test_check_detects_a_wrong_factor_order() -> None:
    """The check can fail: a transpose rule with its factors swapped is caught."""
    x = np.arange(24.0).reshape(4, 6)
    case = NumericCase(
        "stablehlo.transpose", [x], [(6, 4)], {"permutation": i64((1, 0))}, lambda xs, _: [xs[0].T]
    )
    wrong = OpShardingRule((4, 6), (((0,), (1,)),), (((0,), (1,)),))
    try:
        check_factor(case, wrong, 1, 2)
    except (AssertionError, ValueError):
        return
    raise AssertionError("a wrong rule passed the numeric check")
