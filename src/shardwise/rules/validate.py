"""Check a sharding rule numerically: simulate devices with numpy and compare with the full op.

For each factor that can be split (pass-through or reduction, size divisible by `k`), every
tensor that maps the factor is cut into `k` pieces along it (a dimension made of several
factors is viewed as its factors, major to minor); tensors without the factor are replicated.
The op runs on each piece ("device"), and:

* pass-through: the pieces of each result that has the factor, put back together along it,
  equal the full result; a result without the factor equals it on every device;
* reduction: the per-device results (which lack the factor) sum to the full result.

A rule that claims pass-through for a summed dimension, a wrong factor size or order, or a
factor mapped to the wrong dimension breaks one of these equalities. Needs numpy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from shardwise.rules.rule import FactorType, OpShardingRule, TensorMapping, factor_symbol

__all__ = ["FactorCheck", "validate_rule"]


@dataclass(frozen=True, slots=True)
class FactorCheck:
    factor: int
    kind: str  # "pass-through", "reduction", or "skipped"
    ok: bool
    detail: str = ""

    def __str__(self) -> str:
        status = "ok" if self.ok else "FAILED"
        if self.kind == "skipped":
            status = "skipped"
        text = f"factor {factor_symbol(self.factor)} ({self.kind}): {status}"
        return text + (f" - {self.detail}" if self.detail else "")


def _view_shape(
    shape: Sequence[int], mapping: TensorMapping, sizes: Sequence[int]
) -> list[int] | None:
    """The tensor's shape with one axis per factor; None if a dim is not its factors' product.

    A dim with a single factor keeps its own size: the operands of a concatenate or pad are
    smaller than the factor of their dim, and splitting them along another factor is fine."""
    view: list[int] = []
    for dim_size, dim in zip(shape, mapping, strict=True):
        if len(dim) == 1:
            view.append(dim_size)
            continue
        product = 1
        for f in dim:
            product *= sizes[f]
        if product != dim_size:
            return None
        view.extend(sizes[f] for f in dim)
    return view


def _splits_like_factor(
    shape: Sequence[int], mapping: TensorMapping, sizes: Sequence[int], factor: int
) -> bool:
    """Whether the tensor views as its factors and its axis for `factor` has the factor's size."""
    view = _view_shape(shape, mapping, sizes)
    axis = _factor_axis(mapping, factor)
    return view is not None and axis is not None and view[axis] == sizes[factor]


def _factor_axis(mapping: TensorMapping, factor: int) -> int | None:
    flat = [f for dim in mapping for f in dim]
    return flat.index(factor) if factor in flat else None


def _local_shape(shape, mapping, factor, k) -> tuple[int, ...]:
    return tuple(d // k if factor in dim else d for d, dim in zip(shape, mapping, strict=True))


def _take(np, array, mapping, sizes, factor, k, piece):
    axis = _factor_axis(mapping, factor)
    if axis is None:
        return array
    view = array.reshape(_view_shape(array.shape, mapping, sizes))
    chunk = view.shape[axis] // k
    index = [slice(None)] * view.ndim
    index[axis] = slice(piece * chunk, (piece + 1) * chunk)
    return view[tuple(index)].reshape(_local_shape(array.shape, mapping, factor, k))


def _assemble(np, pieces, mapping, sizes, factor, full_shape):
    axis = _factor_axis(mapping, factor)
    local_view = [
        s // len(pieces) if i == axis else s
        for i, s in enumerate(_view_shape(full_shape, mapping, sizes))
    ]
    joined = np.concatenate([p.reshape(local_view) for p in pieces], axis=axis)
    return joined.reshape(full_shape)


def validate_rule(
    rule: OpShardingRule,
    fn: Callable[..., object],
    operands: Sequence[object],
    k: int = 2,
    rtol: float = 1e-6,
    atol: float = 1e-6,
) -> list[FactorCheck]:
    """Check every splittable factor of `rule` for the op computed by `fn(*operands)`."""
    import numpy as np

    def run(args):
        out = fn(*args)
        return [np.asarray(o) for o in (out if isinstance(out, (tuple, list)) else (out,))]

    operands = [np.asarray(x) for x in operands]
    full = run(operands)
    sizes = rule.factor_sizes
    tensors = [*operands, *full]
    checks: list[FactorCheck] = []
    for f in range(rule.num_factors):
        kind = rule.factor_type(f)
        if kind not in (FactorType.PASS_THROUGH, FactorType.REDUCTION):
            checks.append(
                FactorCheck(f, "skipped", True, f"{kind.name.lower()} factors are not split")
            )
            continue
        label = "reduction" if kind == FactorType.REDUCTION else "pass-through"
        mismatched = [
            i
            for i, (t, m) in enumerate(zip(tensors, rule.tensor_mappings, strict=True))
            if _factor_axis(m, f) is not None and not _splits_like_factor(t.shape, m, sizes, f)
        ]
        if mismatched:
            detail = f"tensor {mismatched[0]}'s dims do not match the factor sizes"
            checks.append(FactorCheck(f, label, False, detail))
            continue
        if sizes[f] % k:
            checks.append(FactorCheck(f, "skipped", True, f"size {sizes[f]} is not split into {k}"))
            continue
        if all(_factor_axis(m, f) is None for m in rule.operand_mappings):
            checks.append(FactorCheck(f, "skipped", True, "only in results"))
            continue
        pieces = [
            run(
                [
                    _take(np, x, m, sizes, f, k, p)
                    for x, m in zip(operands, rule.operand_mappings, strict=True)
                ]
            )
            for p in range(k)
        ]
        checks.append(_compare(np, rule, f, kind, pieces, full, rtol, atol))
    return checks


def _compare(np, rule, f, kind, pieces, full, rtol, atol) -> FactorCheck:
    label = "reduction" if kind == FactorType.REDUCTION else "pass-through"
    for j, (expected, mapping) in enumerate(zip(full, rule.result_mappings, strict=True)):
        per_device = [p[j] for p in pieces]
        if kind == FactorType.REDUCTION:
            got = sum(per_device[1:], per_device[0])
            what = "the per-device results do not sum to the full result"
        elif _factor_axis(mapping, f) is not None:
            got = _assemble(np, per_device, mapping, rule.factor_sizes, f, expected.shape)
            what = "the per-device results, joined along the factor, differ from the full result"
        else:
            bad = [i for i, p in enumerate(per_device) if not np.allclose(p, expected, rtol, atol)]
            if bad:
                return FactorCheck(f, label, False, f"result {j} differs on device {bad[0]}")
            continue
        if got.shape != expected.shape or not np.allclose(got, expected, rtol, atol):
            return FactorCheck(f, label, False, f"result {j}: {what}")
    return FactorCheck(f, label, True)
