"""ShardingProjection: forward projection, inverse projection and updates.

Scenarios follow Shardy's `sharding_projection_test.cc` (dot_general, reshape split/merge,
non-divisible and overflowing factors, size-one axes, axes-per-factor builds, expand/update,
greatest common prefix) with our own meshes and shardings. Expectations are derived by hand
from the rules in shardy-notes 3.2-3.4 and written in Shardy notation: a factor sharding
prints like a dimension sharding (``["a", ?]`` open, ``["a"]`` closed) plus its overflow axes.
"""

from __future__ import annotations

import pytest

from shardwise.errors import InternalError
from shardwise.mesh import Mesh, MeshAxis
from shardwise.propagation.projection import (
    ShardingProjection,
    TensorFactorShardings,
    is_strict_prefix,
)
from shardwise.rules.rule import OpShardingRule
from tests.unit.propagation_notation import axes, fs, sharding, show, tfs


def make_mesh(**sizes: int) -> Mesh:
    return Mesh(tuple(MeshAxis(name, size) for name, size in sizes.items()))


# ([i, k], [k, j])->([i, j]) {i=4, j=8, k=16} reduction={k}
DOT = OpShardingRule(
    factor_sizes=(4, 8, 16),
    operand_mappings=(((0,), (2,)), ((2,), (1,))),
    result_mappings=(((0,), (1,)),),
    reduction_factors=(2,),
)


def reshape_rule(in_shape_factors, out_shape_factors, sizes) -> OpShardingRule:
    return OpShardingRule(
        factor_sizes=tuple(sizes),
        operand_mappings=(tuple(tuple(d) for d in in_shape_factors),),
        result_mappings=(tuple(tuple(d) for d in out_shape_factors),),
    )


def expected(factors: dict[int, str]) -> dict[int, str]:
    """Normalise expectation text through the parser so spacing does not matter."""
    return {f: str(fs(text)) for f, text in factors.items()}


def minor_most(tensor: TensorFactorShardings) -> set[int]:
    return {f for f, s in tensor.factor_index_to_sharding.items() if s.is_minor_most}


def round_trips(projection: ShardingProjection, rule: OpShardingRule, mesh: Mesh, inputs) -> None:
    """The inverse projection of every tensor gives back its sharding (priorities aside)."""
    operands, results = projection.create_tensor_shardings(rule, "mesh", mesh)
    for got, want in zip([*operands, *results], inputs, strict=True):
        if want is not None:
            assert str(got) == str(want)


# -- forward projection --------------------------------------------------------------------------


def test_dot_general_simple() -> None:
    mesh = make_mesh(x=2, y=4, z=2, w=2)
    lhs = sharding('[{"x"}, {"y", ?}]')
    rhs = sharding('[{"y", "z"}, {"w", ?}] replicated={"x"}')
    out = sharding('[{?}, {"w"}] replicated={"y"}')
    projection = ShardingProjection.build([lhs, rhs], [out], DOT, mesh)

    assert show(projection.operands[0]) == expected({0: '["x"]', 2: '["y", ?]'})
    assert show(projection.operands[1]) == expected({2: '["y", "z"]', 1: '["w", ?]'})
    assert show(projection.results[0]) == expected({0: "[?]", 1: '["w"]'})
    assert projection.operands[1].replicated_axes == axes('"x"')
    assert projection.results[0].replicated_axes == axes('"y"')
    assert all(minor_most(t) == set(t.factor_index_to_sharding) for t in projection.tensors())
    round_trips(projection, DOT, mesh, [lhs, rhs, out])


def test_dot_general_unreduced_axes_are_kept() -> None:
    mesh = make_mesh(x=4, y=2, z=4)
    lhs = sharding('[{"y"}, {"x"}]')
    rhs = sharding('[{?}, {?}] replicated={"y"}')
    out = sharding('[{"y"}, {}] replicated={"z":(1)2} unreduced={"x", "z":(2)2}')
    projection = ShardingProjection.build([lhs, rhs], [out], DOT, mesh)

    assert show(projection.results[0]) == expected({0: '["y"]', 1: "[]"})
    assert projection.results[0].replicated_axes == axes('"z":(1)2')
    assert projection.results[0].unreduced_axes == axes('"x", "z":(2)2')
    assert projection.operands[0].unreduced_axes == ()
    round_trips(projection, DOT, mesh, [lhs, rhs, out])


@pytest.mark.parametrize(
    ("mesh_sizes", "mapping", "sizes", "dim", "want", "want_minor"),
    [
        # shardy-notes 3.2 / the header example: "x" split by gcd(2, 4) = 2.
        (
            {"x": 4, "y": 2},
            [[0, 1]],
            [2, 4],
            '[{"x", "y"}]',
            {0: '["x":(1)2]', 1: '["x":(2)2, "y"]'},
            {1},
        ),
        # shardy-notes 3.2: dim of size 8 as [ij] {i=4, j=2}, "x"=8.
        ({"x": 8}, [[0, 1]], [4, 2], '[{"x"}]', {0: '["x":(1)4]', 1: '["x":(4)2]'}, {1}),
        # An axis already split in the sharding is split further.
        (
            {"p": 8, "q": 4},
            [[0], [1, 2]],
            [8, 2, 4],
            '[{"q"}, {"p":(2)4}]',
            {0: '["q"]', 1: '["p":(2)2]', 2: '["p":(4)2]'},
            {0, 2},
        ),
        # Merge dims: each input dim is its own factor; open stays open.
        (
            {"a": 2, "b": 2},
            [[0], [1]],
            [4, 4],
            '[{"a", ?}, {"b"}]',
            {0: '["a", ?]', 1: '["b"]'},
            {0, 1},
        ),
        # Minor-most factor takes a non-dividing rest: gcd(2, 6) = 2, then "x":(2)3 on j=4.
        ({"x": 6}, [[0, 1]], [2, 4], '[{"x"}]', {0: '["x":(1)2]', 1: '["x":(2)3]'}, {1}),
        # Minor-most factor takes more than its size (padding): "x":(2)8 on j=4.
        ({"x": 16}, [[0, 1]], [2, 4], '[{"x"}]', {0: '["x":(1)2]', 1: '["x":(2)8]'}, {1}),
        # Size-one axes after the split stay on the minor-most factor.
        (
            {"x": 16, "u": 1, "v": 1},
            [[0, 1]],
            [2, 4],
            '[{"x", "u", "v"}]',
            {0: '["x":(1)2]', 1: '["x":(2)8, "u", "v"]'},
            {1},
        ),
        # Size-one axes are always taken by a non-minor-most factor, even when it is full.
        (
            {"u": 1, "x": 2, "v": 1},
            [[0, 1]],
            [2, 4],
            '[{"u", "x", "v"}]',
            {0: '["u", "x", "v"]', 1: "[]"},
            {1},
        ),
        # Coprime: i=3 cannot take "x"=2 -> overflow; j is closed and empty.
        ({"x": 2}, [[0, 1]], [3, 4], '[{"x", ?}]', {0: '[?] overflow=["x"]', 1: "[]"}, {1}),
        # Partial take then coprime rest: i=4 takes "x":(1)2 of "x"=6, "x":(2)3 overflows.
        (
            {"x": 6},
            [[0, 1]],
            [4, 4],
            '[{"x"}]',
            {0: '["x":(1)2] overflow=["x":(2)3]', 1: "[]"},
            {1},
        ),
        # Several axes overflow at once.
        (
            {"a": 2, "b": 3, "c": 2},
            [[0, 1]],
            [4, 4],
            '[{"a", "b", "c"}]',
            {0: '["a"] overflow=["b", "c"]', 1: "[]"},
            {1},
        ),
    ],
    ids=[
        "split_full_axis",
        "split_gcd_4",
        "split_already_split_axis",
        "merge_dims",
        "minor_most_non_divisible",
        "minor_most_larger_than_factor",
        "minor_most_size_one_axes",
        "non_minor_most_size_one_axes",
        "overflow_coprime",
        "overflow_sub_axis",
        "overflow_multiple_axes",
    ],
)
def test_build_single_tensor(mesh_sizes, mapping, sizes, dim, want, want_minor) -> None:
    mesh = make_mesh(**mesh_sizes)
    result_mapping = [[f] for f in range(len(sizes))]
    rule = reshape_rule(mapping, result_mapping, sizes)
    operand = sharding(dim)
    projection = ShardingProjection.build([operand], [None], rule, mesh)

    assert show(projection.operands[0]) == expected(want)
    assert minor_most(projection.operands[0]) == want_minor
    # The result has no sharding: every factor open, empty and minor-most.
    assert show(projection.results[0]) == {f: "[?]" for f in range(len(sizes))}
    round_trips(projection, rule, mesh, [operand, None])


def test_factors_after_an_overflow_are_absent() -> None:
    # [ijk] {i=3, j=2, k=2}, "x"=2: i overflows, j closed and empty, k not in the map at all.
    rule = reshape_rule([[0, 1, 2]], [[0], [1], [2]], [3, 2, 2])
    projection = ShardingProjection.build([sharding('[{"x"}]')], [None], rule, make_mesh(x=2))
    assert show(projection.operands[0]) == expected({0: '[] overflow=["x"]', 1: "[]"})
    assert projection.operands[0].get(2) is None


def test_replicated_axes_and_closed_if_missing() -> None:
    rule = reshape_rule([[0, 1]], [[0], [1]], [2, 4])
    mesh = make_mesh(a=4, b=2, c=3)
    operand = sharding('[{"a", "b"}] replicated={"c"}')
    projection = ShardingProjection.build([operand], [None], rule, mesh, closed_if_missing=True)
    assert show(projection.operands[0]) == expected({0: '["a":(1)2]', 1: '["a":(2)2, "b"]'})
    assert projection.operands[0].replicated_axes == axes('"c"')
    assert show(projection.results[0]) == expected({0: "[]", 1: "[]"})


def test_build_rejects_mismatched_counts_and_ranks() -> None:
    mesh = make_mesh(x=2)
    with pytest.raises(InternalError, match="operand shardings"):
        ShardingProjection.build([None], [None], DOT, mesh)
    with pytest.raises(InternalError, match="rank"):
        ShardingProjection.build([sharding("[{}]"), None], [None], DOT, mesh)


def test_build_from_axes_per_factor() -> None:
    projection = ShardingProjection.build_from_axes_per_factor(
        [axes('"a"'), axes('"b"'), axes('"c", "d"')], DOT
    )
    assert show(projection.operands[0]) == expected({0: '["a"]', 2: '["c", "d"]'})
    assert show(projection.operands[1]) == expected({2: '["c", "d"]', 1: '["b"]'})
    assert show(projection.results[0]) == expected({0: '["a"]', 1: '["b"]'})


def test_build_from_axes_per_factor_compound_dim() -> None:
    rule = reshape_rule([[0, 1]], [[0], [1]], [2, 4])
    projection = ShardingProjection.build_from_axes_per_factor(
        [axes('"a"'), axes('"b", "c"')], rule
    )
    assert show(projection.operands[0]) == expected({0: '["a"]', 1: '["b", "c"]'})
    assert minor_most(projection.operands[0]) == {1}
    assert minor_most(projection.results[0]) == {0, 1}


# -- inverse projection --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mesh_sizes", "sizes", "factors", "want"),
    [
        # Contiguous sub-axes at the factor boundary merge back into the full axis.
        (
            {"x": 4, "y": 2},
            (2, 8),
            {0: fs('["x":(1)2]'), 1: fs('["x":(2)2, "y"]', minor=True)},
            '[{"x", "y"}]',
        ),
        # i is not fully sharded: j would need a strided view and is dropped.
        (
            {"x": 4, "y": 2},
            (4, 2),
            {0: fs('["x":(1)2, ?]'), 1: fs('["y"]', minor=True)},
            '[{"x":(1)2, ?}]',
        ),
        # Closed if any visited factor is closed.
        (
            {"x": 8, "y": 2},
            (4, 2),
            {0: fs('["x":(1)4]'), 1: fs('["y", ?]', minor=True)},
            '[{"x":(1)4, "y"}]',
        ),
        # Overflow axes are appended (merged) and end the dimension.
        (
            {"x": 6},
            (4, 4),
            {0: fs('["x":(1)2, ?] overflow=["x":(2)3]'), 1: fs("[]", minor=True)},
            '[{"x", ?}]',
        ),
        # Minor-most factor may hold more than its size.
        (
            {"x": 4, "y": 2},
            (2, 2),
            {0: fs('["y", ?]'), 1: fs('["x", ?]', minor=True)},
            '[{"y", "x", ?}]',
        ),
        # Unsharded open factors give an open empty dimension.
        ({"x": 4}, (2, 2), {0: fs("[?]"), 1: fs("[?]", minor=True)}, "[{?}]"),
    ],
    ids=["merge", "strided_stop", "closed_or", "overflow", "minor_most_padding", "open_empty"],
)
def test_create_tensor_sharding(mesh_sizes, sizes, factors, want) -> None:
    tensor = TensorFactorShardings(factors)
    got = tensor.create_tensor_sharding(((0, 1),), sizes, "mesh", make_mesh(**mesh_sizes))
    assert str(got) == str(sharding(want))


def test_create_tensor_sharding_keeps_replicated_unreduced_and_drops_priorities() -> None:
    mesh = make_mesh(x=2, y=2, z=2)
    rule = OpShardingRule((4,), (((0,),),), (((0,),),))
    prioritized = sharding('[{"x", ?}] replicated={"y"} unreduced={"z"}')
    dims = (prioritized.dim_shardings[0].__class__(prioritized.dim_shardings[0].axes, False, 3),)
    projection = ShardingProjection.build([prioritized.replace_dims(dims)], [None], rule, mesh)
    operands, results = projection.create_tensor_shardings(rule, "mesh", mesh)
    assert str(operands[0]) == '#sdy.sharding<@mesh, [{"x", ?}], replicated={"y"}, unreduced={"z"}>'
    assert str(results[0]) == "#sdy.sharding<@mesh, [{?}]>"


# -- updates and queries -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "second", "want"),
    [
        ("", "", False),
        ("", '"a"', True),
        ('"a"', '"a"', False),
        ('"a"', '"a", "b"', True),
        ('"a":(1)2', '"a", "b"', True),
        ('"a":(1)2', '"a"', True),
        ('"a":(2)2', '"a"', False),
        ('"b"', '"a", "b"', False),
        ('"a", "b"', '"a"', False),
    ],
    ids=[
        "empty_empty",
        "empty",
        "equal",
        "longer",
        "sub_axis_then_more",
        "sub_axis",
        "not_prefix_sub",
        "other",
        "shorter",
    ],
)
def test_is_strict_prefix(first, second, want) -> None:
    assert is_strict_prefix(axes(first), axes(second)) == want


@pytest.mark.parametrize(
    ("current", "new", "changed", "after"),
    [
        ("[?]", '"a"', True, '["a", ?]'),
        ('["a":(1)2, ?]', '"a", "b"', True, '["a", "b", ?]'),
        ('["a", ?]', '"a"', False, '["a", ?]'),
        ('["b", ?]', '"a", "b"', False, '["b", ?]'),
        ('["a", "b", ?]', '"a"', False, '["a", "b", ?]'),
        # Closed-ness is the caller's business: expansion itself does not check it.
        ("[]", '"a"', True, '["a"]'),
    ],
    ids=["from_empty", "sub_axis_prefix", "equal", "not_prefix", "shrink", "closed"],
)
def test_expand_sharding_axes(current, new, changed, after) -> None:
    tensor = tfs({0: current})
    assert tensor.expand_sharding_axes(0, axes(new)) is changed
    assert str(tensor.get(0)) == str(fs(after))
    assert tensor.expand_sharding_axes(1, axes(new)) is False  # factor not in this tensor


def test_update_sharding_axes() -> None:
    tensor = tfs({0: '["a", "b", ?]', 1: "[]"})
    assert tensor.update_sharding_axes(0, axes('"c"')) is True
    assert str(tensor.get(0)) == '["c", ?]'
    assert tensor.update_sharding_axes(0, axes('"c"')) is False
    assert tensor.update_sharding_axes(0, axes('"c"'), axes('"d"')) is True
    assert str(tensor.get(0)) == '["c", ?] overflow=["d"]'
    assert tensor.update_sharding_axes(7, axes('"c"')) is False


def test_projection_expand_and_update_bits() -> None:
    projection = ShardingProjection(
        [tfs({0: '["a", ?]', 1: "[?]"}), tfs({1: "[?]"})],
        [tfs({0: "[?]", 1: '["b", ?]'})],
    )
    bits = projection.expand_sharding(0, axes('"a", "c"'))
    assert (bits.operands, bits.results) == ([True, False], [True])
    bits |= projection.update_sharding(1, axes('"b"'))
    assert (bits.operands, bits.results) == ([True, True], [True])
    assert bits.operand_indices() == [0, 1] and bits.result_indices() == [0]
    assert projection.expand_operand_sharding(1, 1, axes('"b", "d"'))
    assert not projection.expand_result_sharding(0, 1, axes('"c"'))
    assert projection.tensor(2) is projection.results[0]


def test_sharding_size_counts_overflow_axes() -> None:
    mesh = make_mesh(a=2, b=3, c=4)
    tensor = tfs({0: '["a"] overflow=["b"]', 1: '["c":(1)2]', 2: "[?]"})
    assert tensor.sharding_size(mesh) == 2 * 3 * 2
    assert tfs({0: "[?]"}).sharding_size(mesh) == 1


@pytest.mark.parametrize(
    ("tensors", "want"),
    [
        # The dot: factor k is ["a", "c"] vs ["a", "c"]; i ["b"] vs [] -> [].
        (
            [
                {0: '["b"]', 2: '["a", "c"]'},
                {2: '["a", "c"]', 1: '["d"]'},
                {0: "[?]", 1: '["d", "e"]'},
            ],
            ["", '"d"', '"a", "c"'],
        ),
        # Different full axes have no common prefix.
        ([{0: '["a"]'}, {0: '["b"]'}], [""]),
        # Sub-axes: the greatest common prefix of "a":(1)2 and "a" is "a":(1)2, then stop.
        ([{0: '["a", "b"]'}, {0: '["a":(1)2, "c"]'}], ['"a":(1)2']),
        # A factor no tensor has gets no axes.
        ([{1: '["b"]'}], ["", '"b"']),
    ],
    ids=["dot", "conflict", "sub_axes", "unused_factor"],
)
def test_greatest_common_prefix_axes(tensors, want) -> None:
    projection = ShardingProjection([tfs(t) for t in tensors[:-1]], [tfs(tensors[-1])])
    got = projection.greatest_common_prefix_axes(len(want))
    assert got == [axes(w) for w in want]


def test_tensors_contain_overflow_axes() -> None:
    projection = ShardingProjection(
        [tfs({0: '["a"]'}), tfs({0: '[] overflow=["b"]', 1: "[]"})],
        [tfs({1: '[?] overflow=["c"]'})],
    )
    bits = projection.tensors_contain_overflow_axes()
    assert (bits.operands, bits.results) == ([False, True], [True])


def test_copy_is_deep_for_factor_shardings() -> None:
    projection = ShardingProjection([tfs({0: "[?]"})], [tfs({0: "[?]"})])
    clone = projection.copy()
    clone.expand_sharding(0, axes('"a"'))
    assert str(projection.operands[0].get(0)) == "[?]"
    assert clone != projection
