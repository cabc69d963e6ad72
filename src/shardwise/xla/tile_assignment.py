"""XLA tile assignments: which device holds which tile, as an iota form or an explicit list.

A tile assignment is an array of device ids with shape `dims`. XLA writes it either as an
explicit list (``devices=[2,2]0,2,1,3``) or, when the array is a transposed iota, as
``devices=[2,4]<=[4,2]T(1,0)``: take ``iota(8)``, reshape it to ``[4,2]``, transpose it by
``(1,0)`` and reshape the result to ``[2,4]``. XLA keeps the iota form canonical (no size-1
reshape dims, no two reshape dims that stay adjacent after the transpose), so one array has one
spelling; `canonical_iota` computes it.

Replica groups (``replica_groups=[2,4]<=[4,2]T(1,0)``) use the same iota form without the
``devices=`` prefix; `shardwise.xla.replica_groups` prints them with `iota_suffix`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["TileAssignment", "canonical_iota", "iota_values", "iota_suffix", "transpose_flat"]


def canonical_iota(
    reshape_dims: Sequence[int], perm: Sequence[int]
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """XLA's canonical ``[reshape_dims]T(perm)``: drop size-1 dims, merge dims kept adjacent.

    | reshape_dims   | perm      | canonical        |
    | [3, 4, 5]      | (0, 1, 2) | [60], (0)        |
    | [3, 4, 5]      | (1, 2, 0) | [3, 20], (1, 0)  |
    | [3, 4, 5]      | (2, 0, 1) | [12, 5], (1, 0)  |
    | [1, 3, 1, 4]   | (3, 2, 1, 0) | [3, 4], (1, 0) |
    | [1, 1]         | (0, 1)    | [1], (0)         |
    """
    assert sorted(perm) == list(range(len(reshape_dims))), (reshape_dims, perm)
    kept = [d for d in perm if reshape_dims[d] != 1]
    if not kept:
        return (1,), (0,)
    # A run of perm entries d, d+1, ..., d+k reads reshape dims d..d+k in their own order, so
    # they act as one dim of the product size. Runs are maximal, so one pass is enough.
    runs: list[list[int]] = []
    for d in kept:
        if runs and _next_kept(reshape_dims, runs[-1][-1]) == d:
            runs[-1].append(d)
        else:
            runs.append([d])
    by_position = sorted(range(len(runs)), key=lambda r: runs[r][0])
    new_index = {run: i for i, run in enumerate(by_position)}
    dims = tuple(math.prod(reshape_dims[d] for d in runs[r]) for r in by_position)
    return dims, tuple(new_index[r] for r in range(len(runs)))


def _next_kept(reshape_dims: Sequence[int], d: int) -> int:
    """The next reshape dim after `d` whose size is not 1 (size-1 dims vanish)."""
    d += 1
    while d < len(reshape_dims) and reshape_dims[d] == 1:
        d += 1
    return d


def transpose_flat(values: Sequence[int], shape: Sequence[int], perm: Sequence[int]) -> list[int]:
    """``np.asarray(values).reshape(shape).transpose(perm).ravel()`` in plain Python.

    >>> transpose_flat(range(6), [2, 3], [1, 0])
    [0, 3, 1, 4, 2, 5]
    """
    strides = [math.prod(shape[i + 1 :]) for i in range(len(shape))]
    out_shape = [shape[p] for p in perm]
    out_strides = [strides[p] for p in perm]
    result = []
    for flat in range(math.prod(shape)):
        source, rest = 0, flat
        for size, stride in zip(reversed(out_shape), reversed(out_strides), strict=True):
            source += (rest % size) * stride
            rest //= size
        result.append(values[source])
    return result


def iota_values(reshape_dims: Sequence[int], perm: Sequence[int]) -> list[int]:
    """The flattened transposed iota ``iota(N).reshape(reshape_dims).transpose(perm)``.

    >>> iota_values([4, 2], [1, 0])
    [0, 2, 4, 6, 1, 3, 5, 7]
    """
    return transpose_flat(range(math.prod(reshape_dims)), reshape_dims, perm)


def iota_suffix(dims: Sequence[int], reshape_dims: Sequence[int], perm: Sequence[int]) -> str:
    """``[2,4]<=[4,2]T(1,0)``: XLA's iota text (the transpose is omitted for one reshape dim)."""
    text = f"[{_join(dims)}]<=[{_join(reshape_dims)}]"
    if len(reshape_dims) > 1:
        text += f"T({_join(perm)})"
    return text


def _join(values: Sequence[int]) -> str:
    return ",".join(str(v) for v in values)


@dataclass(frozen=True, slots=True)
class TileAssignment:
    """A device-id array of shape `dims`: a canonical transposed iota, or explicit `devices`.

    Exactly one of (`reshape_dims`, `perm`) and `devices` is set. Build iota forms with
    `TileAssignment.iota`, which canonicalizes as XLA does.
    """

    dims: tuple[int, ...]
    reshape_dims: tuple[int, ...] = ()
    perm: tuple[int, ...] = ()
    devices: tuple[int, ...] | None = None

    @staticmethod
    def iota(
        dims: Sequence[int], reshape_dims: Sequence[int], perm: Sequence[int]
    ) -> TileAssignment:
        """The canonical iota form of ``iota.reshape(reshape_dims).transpose(perm)``."""
        assert math.prod(dims) == math.prod(reshape_dims), (dims, reshape_dims)
        canon_dims, canon_perm = canonical_iota(reshape_dims, perm)
        return TileAssignment(tuple(dims), canon_dims, canon_perm)

    @staticmethod
    def explicit(dims: Sequence[int], devices: Sequence[int]) -> TileAssignment:
        assert math.prod(dims) == len(devices), (dims, devices)
        return TileAssignment(tuple(dims), devices=tuple(devices))

    @property
    def is_iota(self) -> bool:
        return self.devices is None

    @property
    def num_elements(self) -> int:
        return math.prod(self.dims)

    def flat_devices(self) -> list[int]:
        """Every device id in row-major order of `dims`."""
        if self.devices is not None:
            return list(self.devices)
        return iota_values(self.reshape_dims, self.perm)

    def reshape(self, dims: Sequence[int]) -> TileAssignment:
        """The same flat array viewed with another shape of the same size."""
        assert math.prod(dims) == self.num_elements, (dims, self.dims)
        if self.devices is not None:
            return TileAssignment(tuple(dims), devices=self.devices)
        return TileAssignment(tuple(dims), self.reshape_dims, self.perm)

    def __str__(self) -> str:
        if self.devices is None:
            return "devices=" + iota_suffix(self.dims, self.reshape_dims, self.perm)
        return f"devices=[{_join(self.dims)}]{_join(self.devices)}"
