"""The hand-written plans, derived from any module's classes (`plan/space.py`).

Which class is which is read from the structure alone:

- batch: the class whose arguments hold the smallest share of the bytes it reaches (the
  inputs are small next to the activations they make; the weights are not);
- data arguments: those with a batch dim; weights: the other planned arguments;
- hidden classes (Megatron): classes in weights and in no data argument that reach an operand
  dim of a dot or a convolution (not a scan's layer dim, which is only indexed), taken by
  fewest argument dims first (the feed-forward and head dims before the model dim), skipping
  any that shares a weight with one already taken;
- sequence: the largest other class of the data arguments that no weight has;
- experts: a class at dim 0 of at least two weights of rank >= 3.

The data-like axis is the mesh's first, the model-like axis its last:

| plan            | batch         | weights                                              |
| data_parallel   | every axis    | replicated                                           |
| fsdp            | every axis    | largest dim on every axis                            |
| megatron        | data axis     | hidden classes on the model axis                     |
| megatron_sp     | data axis     | as megatron; the sequence dim of the data on model   |
| fsdp_tp         | data axis     | as megatron; each weight's largest free dim on data  |
| fsdp_tp_sp      | data axis     | as fsdp_tp; the sequence dim of the data on model    |
| expert_parallel | data axis     | the expert class on the model axis                   |
"""

from __future__ import annotations

from collections.abc import Mapping

from shardwise.axis import AxisRef
from shardwise.plan.space import SearchSpace
from shardwise.sharding import DimensionSharding, TensorSharding

__all__ = ["StandardPlan", "standard_plans", "batch_class"]

# arg index -> axes of each dim
StandardPlan = dict[int, TensorSharding]
_Axes = list[tuple[str, ...]]


def _arg_bytes(space: SearchSpace, c: int) -> int:
    total = 0
    for a, _ in space.classes[c].arg_dims:
        n = 1
        for s in space.args[a].shape:
            n *= s
        total += n
    return total


def batch_class(space: SearchSpace) -> int | None:
    """The class the inputs are batched over (module docstring), or None. Of classes in the
    same arguments (a batch of token ids: its batch and sequence dims), the outermost dim: the
    sequence can reach more bytes (a mask of sequence x sequence), it is not the batch."""
    best: tuple[float, int] | None = None
    for c, cls in enumerate(space.classes):
        share = _arg_bytes(space, c) / max(1, cls.value_bytes)
        if best is None or share < best[0]:
            best = (share, c)
    if best is None:
        return None
    args = sorted(space.classes[best[1]].arg_dims)
    twins = [
        c
        for c, cls in enumerate(space.classes)
        if [a for a, _ in sorted(cls.arg_dims)] == [a for a, _ in args]
    ]
    return min(twins, key=lambda c: (sorted(space.classes[c].arg_dims)[0][1], c))


def _divides(space: SearchSpace, size: int, axes: tuple[str, ...]) -> bool:
    n = 1
    for a in axes:
        n *= space.mesh.axis_size(a)
    return size % n == 0 and size >= n


def _hidden_classes(space: SearchSpace, weights: list[int], data: set[int]) -> list[int]:
    in_data = {c for a in data for c in space.args[a].classes}
    in_weights = {
        c for a in weights for c in space.args[a].classes if c >= 0 and space.classes[c].in_dot
    }
    order = sorted(
        in_weights - in_data,
        key=lambda c: (len(space.classes[c].arg_dims), -space.classes[c].value_bytes, c),
    )
    taken: list[int] = []
    used_args: set[int] = set()
    for c in order:
        args = {a for a, _ in space.classes[c].arg_dims}
        if args & used_args:
            continue
        taken.append(c)
        used_args |= args
    return taken


def _sequence_class(space: SearchSpace, batch: int, weights: list[int], data: set[int]) -> int:
    in_weights = {c for a in weights for c in space.args[a].classes}
    options = {c for a in data for c in space.args[a].classes if c >= 0} - in_weights - {batch}
    if not options:
        return -1
    return max(sorted(options), key=lambda c: space.classes[c].value_bytes)


def _expert_class(space: SearchSpace, weights: list[int], batch: int) -> int:
    counts: dict[int, int] = {}
    for a in weights:
        arg = space.args[a]
        if len(arg.shape) >= 3 and arg.classes[0] >= 0 and arg.classes[0] != batch:
            counts[arg.classes[0]] = counts.get(arg.classes[0], 0) + 1
    found = sorted(c for c, n in counts.items() if n >= 2)
    return found[0] if found else -1


def _build(space: SearchSpace, axes_of: dict[int, _Axes]) -> StandardPlan:
    out: StandardPlan = {}
    # Arguments whose dims get the same axes share one sharding, as in `SearchSpace.shardings`
    # (the layers of a stack: one object per distinct sharding, its text printed once).
    made: dict[tuple[tuple[str, ...], ...], TensorSharding] = {}
    for arg in space.args:
        if not arg.planned:
            continue
        dims = axes_of.get(arg.index, [() for _ in arg.shape])
        used: set[str] = set()
        kept = []
        for d, axes in enumerate(dims):
            axes = tuple(a for a in axes if a not in used)
            if not _divides(space, arg.shape[d], axes):
                axes = ()
            used.update(axes)
            kept.append(axes)
        key = tuple(kept)
        sharding = made.get(key)
        if sharding is None:
            shardings = tuple(
                DimensionSharding(tuple(AxisRef(a) for a in axes), is_closed=True) for axes in key
            )
            sharding = made[key] = TensorSharding(space.mesh_name, shardings)
        out[arg.index] = sharding
    return out


def _by_class(space: SearchSpace, assign: Mapping[int, tuple[str, ...]]) -> dict[int, _Axes]:
    return {
        arg.index: [assign.get(c, ()) if c >= 0 else () for c in arg.classes] for arg in space.args
    }


def _shard_largest_free_dim(
    space: SearchSpace, axes_of: dict[int, _Axes], weights: list[int], axes: tuple[str, ...]
) -> None:
    """FSDP: each weight's largest dim not yet sharded (that `axes` divides) on `axes`."""
    for a in weights:
        dims = axes_of[a]
        used = {x for d in dims for x in d}
        if used & set(axes):
            continue
        shape = space.args[a].shape
        free = [d for d in range(len(shape)) if not dims[d] and _divides(space, shape[d], axes)]
        if free:
            d = max(free, key=lambda d: (shape[d], -d))
            dims[d] = axes


def standard_plans(space: SearchSpace) -> dict[str, StandardPlan]:
    """Each standard plan that applies to the module, by name (module docstring)."""
    batch = batch_class(space)
    if batch is None:
        return {}
    axes = tuple(a.name for a in space.mesh.axes if a.size > 1)
    if not axes:
        return {}
    data_axis, model_axis = axes[0], axes[-1]
    data = {a for a, _ in space.classes[batch].arg_dims}
    weights = [a.index for a in space.args if a.planned and a.index not in data]
    everything = axes if _divides(space, space.classes[batch].size, axes) else (data_axis,)
    plans: dict[str, StandardPlan] = {}
    plans["data_parallel"] = _build(space, _by_class(space, {batch: everything}))
    fsdp = _by_class(space, {batch: everything})
    _shard_largest_free_dim(space, fsdp, weights, everything)
    plans["fsdp"] = _build(space, fsdp)
    if len(axes) < 2:
        return plans
    hidden = _hidden_classes(space, weights, data)
    tp: dict[int, tuple[str, ...]] = {batch: (data_axis,), **{c: (model_axis,) for c in hidden}}
    plans["megatron"] = _build(space, _by_class(space, tp))
    seq = _sequence_class(space, batch, weights, data)
    if seq >= 0:
        plans["megatron_sp"] = _build(space, _by_class(space, {**tp, seq: (model_axis,)}))
    two_d = _by_class(space, tp)
    _shard_largest_free_dim(space, two_d, weights, (data_axis,))
    plans["fsdp_tp"] = _build(space, two_d)
    if seq >= 0:
        two_d_sp = _by_class(space, {**tp, seq: (model_axis,)})
        _shard_largest_free_dim(space, two_d_sp, weights, (data_axis,))
        plans["fsdp_tp_sp"] = _build(space, two_d_sp)
    expert = _expert_class(space, weights, batch)
    if expert >= 0:
        ep: dict[int, tuple[str, ...]] = {batch: (data_axis,), expert: (model_axis,)}
        plans["expert_parallel"] = _build(space, _by_class(space, ep))
    return plans
