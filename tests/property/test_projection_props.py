"""Laws of the sharding projection and of factor propagation, on random ops and shardings.

- build then inverse projection gives the sharding back (priorities aside), for dimensions
  made of one factor and for compound (reshape-like) dimensions;
- expanding never shrinks a factor sharding;
- propagation (basic and aggressive) is deterministic, idempotent (a second run changes
  nothing), reports exactly the tensors it changed, only grows factor shardings, never
  touches a closed factor, and never makes two axes of one tensor overlap.
"""

from __future__ import annotations

from hypothesis import assume, given
from hypothesis import strategies as st

from shardwise.axis import AxisRef, SubAxisInfo, is_axis_list_prefix_of
from shardwise.mesh import Mesh, MeshAxis
from shardwise.propagation.aggressive_factor_propagation import AggressiveFactorPropagation
from shardwise.propagation.basic_factor_propagation import BasicFactorPropagation
from shardwise.propagation.factor_propagation import FactorPropagation, PropagationDirection
from shardwise.propagation.projection import ShardingProjection, TensorFactorShardings
from shardwise.rules.rule import OpShardingRule, TensorMapping
from shardwise.sharding import DimensionSharding, TensorSharding

STRATEGIES: list[FactorPropagation] = [BasicFactorPropagation(), AggressiveFactorPropagation()]
AXIS_SIZES = [1, 2, 3, 4, 6, 8]
FACTOR_SIZES = [1, 2, 3, 4, 6, 8, 12, 16]


@st.composite
def meshes(draw) -> Mesh:
    sizes = draw(st.lists(st.sampled_from(AXIS_SIZES), min_size=1, max_size=3))
    return Mesh(tuple(MeshAxis(name, size) for name, size in zip("xyz", sizes, strict=False)))


def _split(size: int, parts: int) -> list[int]:
    """Cut `size` into up to `parts` factors > 1 (major to minor), e.g. 8 -> [2, 4]."""
    pieces: list[int] = []
    rest = size
    for _ in range(parts - 1):
        divisor = next((d for d in range(2, rest) if rest % d == 0), None)
        if divisor is None:
            break
        pieces.append(divisor)
        rest //= divisor
    return [*pieces, rest]


@st.composite
def axis_pieces(draw, mesh: Mesh) -> list[AxisRef]:
    """Each mesh axis whole, or cut into sub-axes; a random subset of the pieces."""
    pieces: list[AxisRef] = []
    for axis in mesh.axes:
        parts = draw(st.integers(1, 3))
        sizes = _split(axis.size, parts)
        if len(sizes) == 1 or axis.size == 1:
            pieces.append(AxisRef(axis.name))
            continue
        pre = 1
        for size in sizes:
            pieces.append(AxisRef(axis.name, SubAxisInfo(pre, size)))
            pre *= size
    return draw(st.permutations(pieces))


@st.composite
def shardings(draw, mesh: Mesh, rank: int) -> TensorSharding:
    """A valid sharding: disjoint pieces spread over dims and replicated axes."""
    pieces = draw(axis_pieces(mesh))
    slots = draw(st.lists(st.integers(-1, rank), min_size=len(pieces), max_size=len(pieces)))
    dims: list[list[AxisRef]] = [[] for _ in range(rank)]
    replicated: list[AxisRef] = []
    for piece, slot in zip(pieces, slots, strict=True):
        if slot == rank:
            replicated.append(piece)
        elif slot >= 0:
            dims[slot].append(piece)
    for dim in dims:
        assume(not any(a.can_merge(b) for a, b in zip(dim, dim[1:], strict=False)))
    replicated.sort(key=mesh.axis_key)
    assume(not any(a.can_merge(b) for a, b in zip(replicated, replicated[1:], strict=False)))
    closed = draw(st.lists(st.booleans(), min_size=rank, max_size=rank))
    return TensorSharding(
        "mesh",
        tuple(DimensionSharding(tuple(d), c) for d, c in zip(dims, closed, strict=True)),
        replicated_axes=tuple(replicated),
    )


@st.composite
def tensor_mappings(draw, num_factors: int, factor_sizes: list[int], compound: bool):
    """A tensor's dims: a random subset of the factors, 1 (or up to 3) factors per dim."""
    factors = draw(st.permutations(range(num_factors)))
    factors = factors[: draw(st.integers(1, num_factors))]
    dims: list[tuple[int, ...]] = []
    i = 0
    while i < len(factors):
        width = draw(st.integers(1, 3)) if compound else 1
        dim = tuple(factors[i : i + width])
        if len(dim) > 1 and any(factor_sizes[f] == 1 for f in dim):
            dim = dim[:1]
        dims.append(dim)
        i += len(dim)
    return tuple(dims)


@st.composite
def ops(draw, compound: bool = True):
    """A mesh, a rule and a sharding (or None) for every operand and result."""
    mesh = draw(meshes())
    num_factors = draw(st.integers(1, 4))
    sizes = draw(
        st.lists(st.sampled_from(FACTOR_SIZES), min_size=num_factors, max_size=num_factors)
    )
    num_operands, num_results = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    mappings: list[TensorMapping] = [
        draw(tensor_mappings(num_factors, sizes, compound))
        for _ in range(num_operands + num_results)
    ]
    rule = OpShardingRule(
        tuple(sizes), tuple(mappings[:num_operands]), tuple(mappings[num_operands:])
    )
    tensor_shardings = [draw(st.none() | shardings(mesh, len(mapping))) for mapping in mappings]
    return mesh, rule, tensor_shardings[:num_operands], tensor_shardings[num_operands:]


def _without_priorities(sharding: TensorSharding) -> TensorSharding:
    return sharding.replace_dims(tuple(d.drop_priority() for d in sharding.dim_shardings))


@given(ops(compound=False))
def test_round_trip_single_factor_dims(op) -> None:
    mesh, rule, operands, results = op
    projection = ShardingProjection.build(operands, results, rule, mesh)
    got_operands, got_results = projection.create_tensor_shardings(rule, "mesh", mesh)
    for got, want in zip([*got_operands, *got_results], [*operands, *results], strict=True):
        if want is not None:
            assert got == _without_priorities(want)


@given(ops(compound=True))
def test_round_trip_compound_dims(op) -> None:
    mesh, rule, operands, results = op
    projection = ShardingProjection.build(operands, results, rule, mesh)
    got_operands, got_results = projection.create_tensor_shardings(rule, "mesh", mesh)
    for got, want in zip([*got_operands, *got_results], [*operands, *results], strict=True):
        if want is not None:
            assert got == _without_priorities(want)


@given(ops(), st.data())
def test_expand_never_shrinks(op, data) -> None:
    mesh, rule, operands, results = op
    projection = ShardingProjection.build(operands, results, rule, mesh)
    before = projection.copy()
    factor = data.draw(st.integers(0, rule.num_factors - 1))
    pieces = data.draw(axis_pieces(mesh))
    new_axes = tuple(pieces[: data.draw(st.integers(0, len(pieces)))])
    bits = projection.expand_sharding(factor, new_axes)
    for index, (old, new) in enumerate(zip(before.tensors(), projection.tensors(), strict=True)):
        changed = old != new
        assert changed == (bits.operands + bits.results)[index]
        for f, sharding in new.factor_index_to_sharding.items():
            old_axes = old.factor_index_to_sharding[f].axis_refs
            assert is_axis_list_prefix_of(old_axes, sharding.axis_refs) != "not_a_prefix"


def _directions(data, num_factors: int) -> list[PropagationDirection]:
    return data.draw(
        st.lists(
            st.sampled_from(list(PropagationDirection)), min_size=num_factors, max_size=num_factors
        )
    )


def _propagate(strategy, projection, directions, rule, mesh, conservative, elementwise):
    return strategy.propagate_factor_shardings(
        projection, directions.__getitem__, rule.factor_sizes, mesh, conservative, elementwise
    )


def _tensor_axes(tensor: TensorFactorShardings) -> list[AxisRef]:
    result = [*tensor.replicated_axes, *tensor.unreduced_axes]
    for sharding in tensor.factor_index_to_sharding.values():
        result += [*sharding.axis_refs, *sharding.overflow_axes]
    return result


def _overlapping(axes: list[AxisRef]) -> bool:
    return any(a.overlaps(b) for i, a in enumerate(axes) for b in axes[i + 1 :])


@given(ops(), st.sampled_from(STRATEGIES), st.booleans(), st.booleans(), st.data())
def test_propagation_laws(op, strategy, conservative, elementwise, data) -> None:
    mesh, rule, operands, results = op
    directions = _directions(data, rule.num_factors)
    projection = ShardingProjection.build(operands, results, rule, mesh)
    before = projection.copy()
    assume(not any(_overlapping(_tensor_axes(t)) for t in before.tensors()))

    twin = projection.copy()
    bits = _propagate(strategy, projection, directions, rule, mesh, conservative, elementwise)
    twin_bits = _propagate(strategy, twin, directions, rule, mesh, conservative, elementwise)
    assert twin == projection and twin_bits == bits, "deterministic"

    for index, (old, new) in enumerate(zip(before.tensors(), projection.tensors(), strict=True)):
        assert (old != new) == (bits.operands + bits.results)[index], "bits say what changed"
        assert not _overlapping(_tensor_axes(new)), f"overlapping axes in {new}"
        for f, sharding in new.factor_index_to_sharding.items():
            old_sharding = old.factor_index_to_sharding[f]
            assert is_axis_list_prefix_of(old_sharding.axis_refs, sharding.axis_refs) != (
                "not_a_prefix"
            )
            if old_sharding.is_closed:
                assert sharding == old_sharding, "closed factor changed"

    again = _propagate(strategy, projection, directions, rule, mesh, conservative, elementwise)
    assert not again.any(), f"second run changed something:\n{projection}"
