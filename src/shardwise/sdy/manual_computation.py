"""Manual computations (``sdy.manual_computation``): their manual axes, and shardings seen
inside and outside them (Shardy's ``ir/utils.cc`` manual-axes helpers).
"""

from __future__ import annotations

from shardwise.ir import Module, Op, ops_in_pre_order
from shardwise.sharding import DimensionSharding, TensorSharding

__all__ = [
    "MANUAL_COMPUTATION",
    "manual_axes_of",
    "erase_manual_axes",
    "add_free_axes_to_manual_sharding",
    "op_in_manual_computation",
]

MANUAL_COMPUTATION = frozenset({"sdy.manual_computation"})


def manual_axes_of(op: Op) -> tuple[str, ...]:
    attr = op.get_attr("manual_axes")
    return tuple(getattr(attr, "axes", ()))


def _first_free_axis(axes, manual_axes: tuple[str, ...]) -> int:
    i = 0
    while i < len(axes) and axes[i].name in manual_axes:
        i += 1
    return i


def _erase_axes(sharding: TensorSharding, manual_axes: tuple[str, ...], keep_manual: bool):
    dims = []
    for d in sharding.dim_shardings:
        cut = _first_free_axis(d.axes, manual_axes)
        axes = d.axes[:cut] if keep_manual else d.axes[cut:]
        dims.append(DimensionSharding(axes, d.is_closed, d.priority))
    return TensorSharding(
        sharding.mesh_or_ref,
        tuple(dims),
        tuple(a for a in sharding.replicated_axes if a.name not in manual_axes),
        tuple(a for a in sharding.unreduced_axes if a.name not in manual_axes),
        sharding.reduction_op,
    )


def erase_manual_axes(sharding: TensorSharding, manual_axes: tuple[str, ...]) -> TensorSharding:
    """Drop each dim's leading manual axes and manual replicated/unreduced axes."""
    if not manual_axes:
        return sharding
    return _erase_axes(sharding, manual_axes, keep_manual=False)


def add_free_axes_to_manual_sharding(
    outer: TensorSharding, new: TensorSharding, manual_axes: tuple[str, ...]
) -> TensorSharding:
    """Outer dims' manual prefix + `new`'s axes (open/closed and priority from `new`)."""
    manual_only = _erase_axes(outer, manual_axes, keep_manual=True)
    dims = tuple(
        DimensionSharding(m.axes + n.axes, n.is_closed, n.priority)
        for m, n in zip(manual_only.dim_shardings, new.dim_shardings, strict=False)
    )
    return TensorSharding(
        new.mesh_or_ref, dims, outer.replicated_axes, outer.unreduced_axes, outer.reduction_op
    )


def op_in_manual_computation(module: Module, op_name: str) -> bool:
    """Whether an `op_name` op sits (at any depth) in an ``sdy.manual_computation``: where a
    pass can make a valid module invalid by naming an axis the body made manual."""
    names = frozenset({op_name})
    return any(
        ops_in_pre_order(manual, names)
        for manual in ops_in_pre_order(module.op, MANUAL_COMPUTATION)
    )
