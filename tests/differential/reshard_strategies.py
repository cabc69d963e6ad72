"""Random `sdy.reshard` chains for `test_reshard_to_collectives.py` (hypothesis or seeded).

A `Chooser` draws from hypothesis (`HypothesisChooser`) or, for long runs by hand, from a seeded
`random.Random` (`RandomChooser`): ``random_module(RandomChooser(seed), funcs=4)``.

A `Variant` picks the mesh axis sizes and how sub-axes are cut:

- `DEFAULT`: axes of size 2-16 (non-powers of two included); each axis has one random
  decomposition per module, and every sharding cuts it at a random subset of its boundaries, so
  in and out sub-axes always come from a common decomposition.
- `SIZE_ONE_AND_INDEPENDENT_CUTS`: size-1 axes too (a mesh may have a single device), and every
  sharding decomposes each axis afresh, so the input may hold ``"z":(1)2`` where the output
  holds ``"z":(1)4`` or ``"z":(2)2``.

A mesh of one device has a single device order: its ``@mesh_p`` is ``@mesh`` under another name
(a random permutation of one id is the identity, so drawing until it differs never ends).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from hypothesis import strategies as st

from shardwise.axis import AxisRef, SubAxisInfo, add_axis_or_merge
from shardwise.mesh import Mesh, MeshAxis
from shardwise.sharding import DimensionSharding, TensorSharding

__all__ = [
    "DEFAULT",
    "SIZE_ONE_AND_INDEPENDENT_CUTS",
    "HypothesisChooser",
    "RandomChooser",
    "Variant",
    "random_case",
    "random_module",
    "random_modules",
]


@dataclass(frozen=True, slots=True)
class Variant:
    """Mesh axis sizes to draw from; whether each sharding decomposes the axes afresh."""

    axis_sizes: tuple[int, ...]
    independent_cuts: bool = False


DEFAULT = Variant((2, 2, 3, 4, 4, 6, 8, 8, 12, 16))
SIZE_ONE_AND_INDEPENDENT_CUTS = Variant((1, 1, 2, 3, 4, 4, 6, 8, 12), independent_cuts=True)

_DIM_SIZES = (1, 2, 3, 4, 5, 6, 8, 12, 16, 24, 32, 48, 64, 96, 120, 240)
_AXIS_NAMES = ("x", "y", "z")


class HypothesisChooser:
    def __init__(self, draw) -> None:
        self.draw = draw

    def choice(self, items):
        return self.draw(st.sampled_from(list(items)))

    def integer(self, lo: int, hi: int) -> int:
        return self.draw(st.integers(lo, hi))

    def chance(self, one_in: int) -> bool:
        return self.draw(st.integers(0, one_in - 1)) == 0

    def permutation(self, items):
        return self.draw(st.permutations(list(items)))


class RandomChooser:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def choice(self, items):
        return self.rng.choice(list(items))

    def integer(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def chance(self, one_in: int) -> bool:
        return self.rng.randrange(one_in) == 0

    def permutation(self, items):
        items = list(items)
        self.rng.shuffle(items)
        return items


def _factors(c, size: int) -> list[int]:
    """A random ordered factorization of `size` (the common decomposition of one axis)."""
    factors = []
    while size > 1:
        factor = c.choice([d for d in range(2, size + 1) if size % d == 0])
        factors.append(factor)
        size //= factor
    return factors


def _atoms(c, name: str, factors: list[int]) -> list[AxisRef]:
    """The axis cut at a random subset of its decomposition's boundaries."""
    if not factors:  # a size-1 axis
        return [AxisRef(name)]
    atoms, pre, size = [], 1, 1
    total = math.prod(factors)
    for i, factor in enumerate(factors):
        size *= factor
        if i == len(factors) - 1 or c.chance(2):
            if size == total:
                atoms.append(AxisRef(name))
            else:
                atoms.append(AxisRef(name, SubAxisInfo(pre, size)))
            pre, size = pre * size, 1
    return atoms


def _dims(c, mesh: Mesh, atoms: list[AxisRef], rank: int) -> list[list[AxisRef]]:
    placed: list[list[AxisRef]] = [[] for _ in range(rank)]
    for atom in atoms:
        dim = c.integer(-1, rank - 1)
        if dim >= 0:
            placed[dim].append(atom)
    dims = []
    for axes in placed:
        merged: list[AxisRef] = []
        for axis in c.permutation(axes):
            add_axis_or_merge(merged, axis, mesh)
        dims.append(merged)
    return dims


def _random_sharding(c, mesh: Mesh, factors: dict[str, list[int]], rank: int, unreduced, on_arg):
    atoms = [a for n, f in factors.items() if n not in unreduced for a in _atoms(c, n, f)]
    dims = _dims(c, mesh, atoms, rank)
    used = {a.name for axes in dims for a in axes}
    replicated = tuple(
        AxisRef(n) for n in mesh.axis_names if n not in used | set(unreduced) and c.chance(4)
    )
    dim_shardings = []
    for axes in dims:
        closed = not c.chance(3 if on_arg else 12)
        priority = c.integer(0, 2) if on_arg and axes and c.chance(5) else None
        dim_shardings.append(DimensionSharding(tuple(axes), closed, priority))
    return TensorSharding(
        "mesh", tuple(dim_shardings), replicated, tuple(AxisRef(n) for n in unreduced)
    )


def _random_mesh(c, variant: Variant) -> tuple[Mesh, dict[str, list[int]]]:
    n = c.integer(1, 3)
    axes = tuple(MeshAxis(name, c.choice(variant.axis_sizes)) for name in _AXIS_NAMES[:n])
    mesh = Mesh(axes)
    return mesh, {a.name: _factors(c, a.size) for a in axes}


def _permuted_ids(c, total: int) -> list[int]:
    """Another order of the devices; a single device has no other (the identity)."""
    ids = list(range(total))
    while total > 1 and ids == list(range(total)):
        ids = c.permutation(range(total))
    return ids


def _retarget(c, sharding: TensorSharding) -> TensorSharding:
    """Occasionally move the output to the device-permuted mesh or a mesh with other axes."""
    roll = c.integer(0, 9)
    if roll == 0:
        return TensorSharding(
            "mesh_p", sharding.dim_shardings, sharding.replicated_axes, sharding.unreduced_axes
        )
    if roll == 1:
        dims = tuple(DimensionSharding(()) for _ in sharding.dim_shardings)
        if c.chance(2):
            dims = (DimensionSharding((AxisRef("a"),)),) + dims[1:]
        return TensorSharding("other", dims)
    return sharding


def _random_func(c, name: str, mesh: Mesh, factors, independent_cuts: bool) -> str:
    """One function: %arg0 resharded 1-3 times; every sharding cuts the axes' decompositions
    `factors`, or with `independent_cuts` its own fresh decompositions."""

    def sharding(unreduced: list[str], on_arg: bool) -> TensorSharding:
        cuts = {a.name: _factors(c, a.size) for a in mesh.axes} if independent_cuts else factors
        return _random_sharding(c, mesh, cuts, rank, unreduced, on_arg)

    rank = c.integer(1, 3)
    dims = [c.choice(_DIM_SIZES) if not c.chance(20) else "?" for _ in range(rank)]
    type_ = "tensor<" + "".join(f"{d}x" for d in dims) + "f32>"
    unreduced = [n for n in mesh.axis_names if c.chance(6)]
    in_sharding = sharding(unreduced, on_arg=True)
    if c.chance(16):  # the output adds or drops an unreduced axis
        unreduced = [n for n in mesh.axis_names if (n in unreduced) != c.chance(3)]
    if c.chance(8):
        in_sharding = TensorSharding(
            "mesh_p",
            in_sharding.dim_shardings,
            in_sharding.replicated_axes,
            in_sharding.unreduced_axes,
        )
    arg_attr = "" if c.chance(8) else f" {{sdy.sharding = {in_sharding}}}"
    body, last, values = [], "%arg0", []
    if c.chance(5):
        body.append(f"  %b = sdy.propagation_barrier %arg0 allowed_direction=NONE : {type_}")
        last = "%b"
    for i in range(c.integer(1, 3)):
        out = _retarget(c, sharding(unreduced, on_arg=False))
        body.append(f"  %{i} = sdy.reshard {last} {out.body_str()} : {type_}")
        last = f"%{i}"
        values.append(last)
    if len(values) > 1 and c.chance(2):
        body.append(f"  %sum = stablehlo.add {values[0]}, {last} : {type_}")
        last = "%sum"
    return (
        f"func.func @{name}(%arg0: {type_}{arg_attr}) -> {type_} {{\n"
        + "\n".join(body)
        + f"\n  return {last} : {type_}\n}}\n"
    )


def random_case(c, funcs: int, variant: Variant = DEFAULT) -> tuple[str, list[str]]:
    """Mesh declarations and `funcs` functions of random reshard chains on one random mesh."""
    mesh, factors = _random_mesh(c, variant)
    ids = ", ".join(str(i) for i in _permuted_ids(c, mesh.total_size))
    axes = ", ".join(str(a) for a in mesh.axes)
    header = (
        f"sdy.mesh @mesh = {mesh.body_str()}\n"
        f"sdy.mesh @mesh_p = <[{axes}], device_ids=[{ids}]>\n"
        f'sdy.mesh @other = <["a"={mesh.total_size}]>\n'
    )
    cuts = variant.independent_cuts
    return header, [_random_func(c, f"case{i}", mesh, factors, cuts) for i in range(funcs)]


def random_module(c, funcs: int, variant: Variant = DEFAULT) -> str:
    header, bodies = random_case(c, funcs, variant)
    return header + "".join(bodies)


def random_modules(variant: Variant = DEFAULT) -> st.SearchStrategy:
    """Hypothesis: ``((mesh declarations, 4 functions), keep_redundant_reshards)``."""

    @st.composite
    def draw_case(draw) -> tuple[tuple[str, list[str]], bool]:
        c = HypothesisChooser(draw)
        return random_case(c, funcs=4, variant=variant), c.chance(4)

    return draw_case()
