"""Basic and aggressive factor propagation on hand-built projections.

Scenarios follow Shardy's `basic_factor_propagation_test.cc` and
`aggressive_factor_propagation_test.cc` (conflicts within and across factors, replicated and
unreduced axes, closed factors, overflow axes, divisibility, per-factor directions,
conservative mode, source-tensor preference) plus the worked examples of shardy-notes 4.2-4.3,
with our own axis names and values. Expectations are derived by hand from the rules and written
in Shardy notation: ``["a", ?]`` is an open factor sharding, ``["a"]`` a closed one. As in the
C++ tests, `mesh=None` means divisibility is not checked.

Every case is also run a second time: propagation must then report no update.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from shardwise.mesh import Mesh, MeshAxis
from shardwise.propagation.aggressive_factor_propagation import AggressiveFactorPropagation
from shardwise.propagation.basic_factor_propagation import (
    BasicFactorPropagation,
    merge_compatible_major_axes,
)
from shardwise.propagation.factor_propagation import (
    FactorPropagation,
    PropagationDirection,
    propagate_anything,
    propagate_op_shardings,
)
from shardwise.propagation.projection import (
    FactorSharding,
    ShardingProjection,
    TensorFactorShardings,
)
from shardwise.rules.rule import OpShardingRule
from tests.unit.propagation_notation import axes, fs, sharding, show, tfs

BASIC = BasicFactorPropagation()
AGGRESSIVE = AggressiveFactorPropagation()
B, F, BW, N = (
    PropagationDirection.BOTH,
    PropagationDirection.FORWARD,
    PropagationDirection.BACKWARD,
    PropagationDirection.NONE,
)

Tensor = dict[int, str | FactorSharding]


def make_mesh(**sizes: int) -> Mesh:
    return Mesh(tuple(MeshAxis(name, size) for name, size in sizes.items()))


@dataclass
class Case:
    """One op's factor shardings before and after, and the expected update bits."""

    operands: list[Tensor]
    results: list[Tensor]
    want_operands: list[Tensor | None]  # None: unchanged
    want_results: list[Tensor | None]
    updated_operands: list[int]
    updated_results: list[int]
    factor_sizes: tuple[int, ...] | None = None  # default: all 1
    mesh: Mesh | None = None
    directions: dict[int, PropagationDirection] = field(default_factory=dict)
    conservative: bool = False
    elementwise: bool = False
    replicated: dict[int, str] = field(default_factory=dict)  # tensor index -> axes
    unreduced: dict[int, str] = field(default_factory=dict)


def build(case: Case) -> ShardingProjection:
    def tensor(index: int, factors: Tensor) -> TensorFactorShardings:
        return tfs(factors, case.replicated.get(index, ""), case.unreduced.get(index, ""))

    n = len(case.operands)
    return ShardingProjection(
        [tensor(i, t) for i, t in enumerate(case.operands)],
        [tensor(n + i, t) for i, t in enumerate(case.results)],
    )


def num_factors(case: Case) -> int:
    return 1 + max(f for t in [*case.operands, *case.results] for f in t)


def run(strategy: FactorPropagation, case: Case, projection: ShardingProjection):
    sizes = case.factor_sizes or (1,) * num_factors(case)
    return strategy.propagate_factor_shardings(
        projection,
        lambda f: case.directions.get(f, PropagationDirection.BOTH),
        sizes,
        case.mesh,
        case.conservative,
        case.elementwise,
    )


def check(strategy: FactorPropagation, case: Case) -> None:
    projection = build(case)
    before = build(case)
    bits = run(strategy, case, projection)
    assert bits.operand_indices() == case.updated_operands
    assert bits.result_indices() == case.updated_results
    for got, old, want in zip(
        [*projection.operands, *projection.results],
        [*before.operands, *before.results],
        [*case.want_operands, *case.want_results],
        strict=True,
    ):
        expected = old if want is None else tfs(want)
        assert show(got) == show(expected)
    again = run(strategy, case, projection)
    assert not again.any(), "propagating a second time must not change anything"


# -- step A: merging compatible major axes (shardy-notes 4.2) -----------------------------------


@pytest.mark.parametrize(
    ("old", "new", "can_expand", "want", "want_can_expand"),
    [
        ('"a"', '"a", "b"', True, '"a", "b"', True),
        ('"a", "b"', '"a", "c"', True, '"a"', False),
        ('"a":(1)2', '"a":(1)4', True, '"a":(1)4', True),
        ('"a":(1)2, "b"', '"a":(1)4, "b"', True, '"a":(1)2', False),
        ('"a":(1)4', '"a":(1)2, "b"', True, '"a":(1)2', False),
        ('"a":(1)4', '"a":(1)2', True, '"a":(1)4', True),
        ('"a":(1)2', '"a":(2)2', True, "", False),
        ('"a"', '"a"', False, '"a"', False),
        ('"a"', '"a", "b"', False, '"a"', False),
        ('"a", "b"', '"a"', False, '"a", "b"', False),
        ('"a":(1)2', '"a":(1)4', False, '"a":(1)2', False),
        ("", '"a", "b"', True, '"a", "b"', True),
    ],
    ids=[
        "extend",
        "diverge",
        "sub_axis_grows",
        "sub_axis_then_more_old",
        "sub_axis_then_more_new",
        "new_sub_axis_prefix",
        "incompatible_sub_axes",
        "no_expand_equal",
        "no_expand_longer_new",
        "no_expand_shorter_new",
        "no_expand_sub_axis",
        "from_empty",
    ],
)
def test_merge_compatible_major_axes(old, new, can_expand, want, want_can_expand) -> None:
    got, got_can_expand = merge_compatible_major_axes(axes(old), axes(new), can_expand)
    assert got == axes(want)
    assert got_can_expand == want_can_expand


# -- basic strategy -----------------------------------------------------------------------------

BASIC_CASES = {
    # f0: ["p"], [], ["p","q","r"], ["p","q","s"] -> ["p","q"]; f1: ["t"], ["t","u"] ->
    # ["t","u"]; f2: ["v"], [] -> ["v"]; f3: ["w"] vs ["x"] -> nothing.
    "full_axes_conflicts_only_for_same_factor": Case(
        operands=[
            {0: '["p", ?]', 3: '["w", ?]'},
            {0: "[?]", 2: '["v", ?]', 3: '["x", ?]'},
            {1: '["t", ?]'},
        ],
        results=[
            {0: '["p", "q", "r", ?]', 1: '["t", "u", ?]'},
            {0: '["p", "q", "s", ?]', 2: "[?]", 3: '["x", "y", ?]'},
        ],
        want_operands=[
            {0: '["p", "q", ?]', 3: '["w", ?]'},
            {0: '["p", "q", ?]', 2: '["v", ?]', 3: '["x", ?]'},
            {1: '["t", "u", ?]'},
        ],
        want_results=[None, {0: '["p", "q", "s", ?]', 2: '["v", ?]', 3: '["x", "y", ?]'}],
        updated_operands=[0, 1, 2],
        updated_results=[1],
    ),
    # f0 -> ["p","q"]; f1: ["r":(2)2,"s"], ["r":(2)4], ["r":(2)4,"s"] -> ["r":(2)2] (nobody
    # grows); f2: ["t":(2)4,"u":(4)2] & ["t":(2)4,"u":(4)8] -> the longer; f3: ["v","w":(1)8]
    # & ["v","w":(1)4,"x"] -> ["v","w":(1)4]; f4: ["y":(1)4] vs ["y":(2)4] -> nothing;
    # f5: ["z":(1)8], ["z":(1)4] closed, ["z":(1)2], [] -> cut to the closed ["z":(1)4].
    "sub_axes_conflicts_only_for_same_factor": Case(
        operands=[
            {
                0: '["p", "q", ?]',
                1: '["r":(2)2, "s", ?]',
                4: '["y":(1)4, ?]',
                5: '["z":(1)8, ?]',
            },
            {0: "[?]", 1: '["r":(2)4, ?]', 3: '["v", "w":(1)8, ?]', 5: '["z":(1)4]'},
        ],
        results=[
            {
                0: '["p":(1)2, ?]',
                2: '["t":(2)4, "u":(4)2, ?]',
                3: '["v", "w":(1)4, "x", ?]',
                5: '["z":(1)2, ?]',
            },
            {
                1: '["r":(2)4, "s", ?]',
                2: '["t":(2)4, "u":(4)8, ?]',
                4: '["y":(2)4, ?]',
                5: "[?]",
            },
        ],
        want_operands=[
            None,
            {0: '["p", "q", ?]', 1: '["r":(2)4, ?]', 3: '["v", "w":(1)8, ?]', 5: '["z":(1)4]'},
        ],
        want_results=[
            {
                0: '["p", "q", ?]',
                2: '["t":(2)4, "u":(4)8, ?]',
                3: '["v", "w":(1)4, "x", ?]',
                5: '["z":(1)4, ?]',
            },
            {
                1: '["r":(2)4, "s", ?]',
                2: '["t":(2)4, "u":(4)8, ?]',
                4: '["y":(2)4, ?]',
                5: '["z":(1)4, ?]',
            },
        ],
        updated_operands=[1],
        updated_results=[0, 1],
    ),
    # f0: candidates ["a","b","c"], "b" is f1's in operand 1 -> ["a"]; f1: ["b"] is f0's in the
    # results -> nothing; f2: ["f","g"] but closed ["f"] in operand 1 -> ["f"] (no change);
    # f3: ["h":(1)2,"i"], result 0 replicates "i":(2)2 -> ["h":(1)2,"i":(1)2];
    # f4: ["j":(1)8,"k":(2)4], "k":(1)4 is f5's -> ["j":(1)8]; f5: ["k":(1)4] vs f4's
    # "k":(2)4 -> ["k":(1)2].
    "conflicts_between_factors_and_replicated": Case(
        operands=[
            {0: '["a", ?]', 3: '["h":(1)2, "i", ?]'},
            {1: '["b", ?]', 2: '["f"]'},
            {0: "[?]", 4: '["j":(1)8, "k":(2)4, ?]'},
        ],
        results=[
            {0: '["a", "b", "c", "d", ?]', 3: "[?]"},
            {0: '["a", "b", "c", "e", ?]', 2: '["f", "g"]'},
            {4: '["j":(1)4, ?]', 5: '["k":(1)4, ?]'},
        ],
        replicated={1: '"h":(1)2', 3: '"h":(2)4, "i":(2)2'},
        want_operands=[None, None, {0: '["a", ?]', 4: '["j":(1)8, "k":(2)4, ?]'}],
        want_results=[
            {0: '["a", "b", "c", "d", ?]', 3: '["h":(1)2, "i":(1)2, ?]'},
            None,
            {4: '["j":(1)8, ?]', 5: '["k":(1)4, ?]'},
        ],
        updated_operands=[2],
        updated_results=[0, 2],
    ),
    # f0: ["a","b"] but "b" overflows f1 in the result -> ["a"]; f1: ["c"] but the result's
    # f1 has overflow axes -> nothing.
    "conflicts_with_overflow_axes": Case(
        operands=[{0: '["a", "b", ?]', 1: '["c", ?]'}],
        results=[{0: "[?]", 1: '[?] overflow=["b":(1)2]'}],
        want_operands=[None],
        want_results=[{0: '["a", ?]', 1: '[?] overflow=["b":(1)2]'}],
        updated_operands=[],
        updated_results=[0],
    ),
    # Unreduced axes of a tensor with the factor block it like replicated ones; a tensor
    # without the factor does not block it.
    "unreduced_axes": Case(
        operands=[{0: '["a", "b", ?]'}, {1: "[?]"}],
        results=[{0: "[?]", 1: "[?]"}],
        unreduced={2: '"b"', 1: '"a"'},
        want_operands=[None, None],
        want_results=[{0: '["a", ?]', 1: "[?]"}],
        updated_operands=[],
        updated_results=[0],
    ),
    # f0, f4 BOTH; f1, f5 FORWARD (only operands contribute); f2, f6 BACKWARD; f3, f7 NONE.
    "different_directions_for_different_factors": Case(
        operands=[
            {0: '["a", ?]', 1: '["b", ?]', 2: '["c", ?]', 3: '["d", ?]'}
            | {f: "[?]" for f in range(4, 8)},
            {f: "[?]" for f in range(8)},
        ],
        results=[
            {f: "[?]" for f in range(4)}
            | {4: '["e", ?]', 5: '["f", ?]', 6: '["g", ?]', 7: '["h", ?]'},
            {f: "[?]" for f in range(8)},
        ],
        directions={1: F, 5: F, 2: BW, 6: BW, 3: N, 7: N},
        want_operands=[
            {0: '["a", ?]', 1: '["b", ?]', 2: '["c", ?]', 3: '["d", ?]', 4: '["e", ?]'}
            | {5: "[?]", 6: '["g", ?]', 7: "[?]"},
            {0: '["a", ?]', 1: '["b", ?]', 2: "[?]", 3: "[?]", 4: '["e", ?]'}
            | {5: "[?]", 6: '["g", ?]', 7: "[?]"},
        ],
        want_results=[
            {0: '["a", ?]', 1: '["b", ?]', 2: "[?]", 3: "[?]", 4: '["e", ?]'}
            | {5: '["f", ?]', 6: '["g", ?]', 7: '["h", ?]'},
            {0: '["a", ?]', 1: '["b", ?]', 2: "[?]", 3: "[?]", 4: '["e", ?]'}
            | {5: "[?]", 6: '["g", ?]', 7: "[?]"},
        ],
        updated_operands=[0, 1],
        updated_results=[0, 1],
    ),
    # f0 FORWARD: ["a","b"] cut by the result's ["b"] -> nothing; f1 BACKWARD: ["c","d"] cut
    # by "d" being f2's in the operand -> ["c"].
    "unidirectional_with_conflict": Case(
        operands=[{0: '["a", "b", ?]', 1: "[?]", 2: '["d", ?]'}],
        results=[{0: '["b", ?]', 1: '["c", "d", ?]', 2: "[?]"}],
        directions={0: F, 1: BW, 2: N},
        want_operands=[{0: '["a", "b", ?]', 1: '["c", ?]', 2: '["d", ?]'}],
        want_results=[None],
        updated_operands=[0],
        updated_results=[],
    ),
    # Conservative: stop at the first sub-axis -> only "a" reaches the result.
    "conservative_stops_at_sub_axes": Case(
        operands=[{0: '["a", "b":(1)2, "c", ?]', 1: '["b":(2)4, ?]'}],
        results=[{0: "[?]", 1: "[?]"}],
        conservative=True,
        want_operands=[None],
        want_results=[{0: '["a", ?]', 1: "[?]"}],
        updated_operands=[],
        updated_results=[0],
    ),
    # Divisibility (mesh a=b=c=3): f0 is non-minor-most in the result. Size 9 takes ["a","b"].
    "non_minor_most_divisible": Case(
        operands=[{0: fs('["a", "b", ?]', minor=True), 1: fs('["c", ?]', minor=True)}],
        results=[{0: fs("[?]"), 1: fs("[?]", minor=True)}],
        factor_sizes=(9, 4),
        mesh=make_mesh(a=3, b=3, c=3),
        want_operands=[None],
        want_results=[{0: '["a", "b", ?]', 1: '["c", ?]'}],
        updated_operands=[],
        updated_results=[0],
    ),
    # Size 6 takes only "a" (3 divides 6, 9 does not); minor-most f1 takes "c" regardless.
    "non_minor_most_partly_divisible": Case(
        operands=[{0: fs('["a", "b", ?]', minor=True), 1: fs('["c", ?]', minor=True)}],
        results=[{0: fs("[?]"), 1: fs("[?]", minor=True)}],
        factor_sizes=(6, 19),
        mesh=make_mesh(a=3, b=3, c=3),
        want_operands=[None],
        want_results=[{0: '["a", ?]', 1: '["c", ?]'}],
        updated_operands=[],
        updated_results=[0],
    ),
    # Size 4 takes nothing of a size-3 axis.
    "non_minor_most_not_divisible": Case(
        operands=[{0: fs('["a", "b", ?]', minor=True), 1: fs('["c", ?]', minor=True)}],
        results=[{0: fs("[?]"), 1: fs("[?]", minor=True)}],
        factor_sizes=(4, 1),
        mesh=make_mesh(a=3, b=3, c=3),
        want_operands=[None],
        want_results=[{0: "[?]", 1: '["c", ?]'}],
        updated_operands=[],
        updated_results=[0],
    ),
    # gcd rule: a non-minor-most factor of size 4 takes the sub-axis "x":(1)4 of "x"=8; the
    # operand (full "x") is not a strict prefix of that, so it keeps "x".
    "non_minor_most_takes_gcd_sub_axis": Case(
        operands=[{0: fs('["x", ?]', minor=True)}],
        results=[{0: fs("[?]"), 1: fs("[?]", minor=True)}],
        factor_sizes=(4, 2),
        mesh=make_mesh(x=8),
        want_operands=[None],
        want_results=[{0: '["x":(1)4, ?]', 1: "[?]"}],
        updated_operands=[],
        updated_results=[0],
    ),
    # prev size: ["y", "x"] on a non-minor-most factor of size 8 with y=2, x=8: "y" fits, then
    # gcd(8/2, 8) = 4 -> "x":(1)4.
    "gcd_uses_size_of_previous_candidates": Case(
        operands=[{0: fs('["y", "x", ?]', minor=True)}],
        results=[{0: fs("[?]"), 1: fs("[?]", minor=True)}],
        factor_sizes=(8, 2),
        mesh=make_mesh(x=8, y=2),
        want_operands=[None],
        want_results=[{0: '["y", "x":(1)4, ?]', 1: "[?]"}],
        updated_operands=[],
        updated_results=[0],
    ),
    # shardy-notes 4.3, C = dot(A, B), case 1: A/f0 = "a", C/f1 = "a": basic does nothing.
    "dot_single_choice": Case(
        operands=[{0: '["a", ?]', 2: "[?]"}, {2: "[?]", 1: "[?]"}],
        results=[{0: "[?]", 1: '["a", ?]'}],
        want_operands=[None, None],
        want_results=[None],
        updated_operands=[],
        updated_results=[],
    ),
}


@pytest.mark.parametrize("case", BASIC_CASES.values(), ids=BASIC_CASES.keys())
def test_basic(case: Case) -> None:
    check(BASIC, case)


def test_basic_closed_factor_blocks_every_tensor() -> None:
    # Basic: one closed empty factor sharding stops the factor for all (shardy-notes 4.4).
    case = Case(
        operands=[{0: '["a", ?]'}, {0: "[?]"}],
        results=[{0: "[]"}],
        want_operands=[None, None],
        want_results=[None],
        updated_operands=[],
        updated_results=[],
    )
    check(BASIC, case)
    aggressive = Case(**{**case.__dict__, "want_operands": [None, {0: '["a", ?]'}]})
    aggressive.updated_operands = [1]
    check(AGGRESSIVE, aggressive)


# -- aggressive strategy ------------------------------------------------------------------------

AGGRESSIVE_CASES = {
    # "a" could reach the result along f0 or f1 (a real conflict): f0 wins (source operand 0
    # comes first, sizes tie). The other conflicts are fake: "c", "b", "e", "f", "g" reach the
    # result along f3, f5, f7, f8, f9; f2 has overflow, f4 and f6 are closed there.
    "real_and_fake_conflicts": Case(
        operands=[
            {0: '["a", ?]', 2: '["c", ?]', 4: '["b", ?]', 6: '["e", ?]', 7: "[?]"}
            | {8: '["f", ?]', 10: '["g", ?]'},
            {1: '["a", ?]', 2: "[?]", 3: '["c", ?]', 4: "[?]", 5: '["b", ?]', 6: "[?]"}
            | {7: '["e", ?]', 9: '["g", ?]', 10: '["f", ?]'},
        ],
        results=[
            {0: "[?]", 1: "[?]", 2: '[?] overflow=["d"]', 3: "[?]", 4: "[]", 5: "[?]"}
            | {6: "[]", 7: "[?]", 8: "[?]", 9: "[?]"},
        ],
        want_operands=[None, None],
        want_results=[
            {0: '["a", ?]', 1: "[?]", 2: '[?] overflow=["d"]', 3: '["c", ?]', 4: "[]"}
            | {5: '["b", ?]', 6: "[]", 7: '["e", ?]', 8: '["f", ?]', 9: '["g", ?]'}
        ],
        updated_operands=[],
        updated_results=[0],
    ),
    # Two factors never in the same tensor can both use "a".
    "two_factors_do_not_coexist": Case(
        operands=[{0: '["a", ?]'}, {1: '["a", ?]'}],
        results=[{0: "[?]"}, {1: "[?]"}],
        want_operands=[None, None],
        want_results=[{0: '["a", ?]'}, {1: '["a", ?]'}],
        updated_operands=[],
        updated_results=[0, 1],
    ),
    # Per tensor: operand 0 has "c" unreduced, so it stops before "c"; operand 2 takes
    # ["a","b","c"] (no conflict there). Result 0 replicates "i":(2)2; result 2's f4 is cut
    # by f5's "k":(1)4.
    "conflicts_between_factors_and_replicated_or_unreduced": Case(
        operands=[
            {0: '["a", ?]', 3: '["h":(1)2, "i", ?]'},
            {1: '["b", ?]', 2: '["f"]'},
            {0: "[?]", 4: '["j":(1)8, "k":(2)4, ?]'},
        ],
        results=[
            {0: '["a", "b", "c", "d", ?]', 3: "[?]"},
            {0: '["a", "b", "c", "e", ?]', 2: '["f", "g"]'},
            {4: '["j":(1)4, ?]', 5: '["k":(1)4, ?]'},
        ],
        unreduced={0: '"c"'},
        replicated={1: '"h":(1)2', 3: '"h":(2)4, "i":(2)2'},
        want_operands=[
            {0: '["a", "b", ?]', 3: '["h":(1)2, "i", ?]'},
            None,
            {0: '["a", "b", "c", ?]', 4: '["j":(1)8, "k":(2)4, ?]'},
        ],
        want_results=[
            {0: '["a", "b", "c", "d", ?]', 3: '["h":(1)2, "i":(1)2, ?]'},
            None,
            {4: '["j":(1)8, ?]', 5: '["k":(1)4, ?]'},
        ],
        updated_operands=[0, 2],
        updated_results=[0, 2],
    ),
    # "a" can go to result 0 along f0 or f2; f0 wins (source operand 0 first). Operand 2 gets
    # only "b" of f1 (its f2 holds "a").
    "new_axes_conflict": Case(
        operands=[
            {0: '["a", "b", "c", ?]', 1: "[?]", 2: "[]", 3: "[?]"},
            {0: "[?]", 1: '["b", "a", ?]', 2: "[?]", 3: '["d", ?]'},
            {0: "[]", 1: "[?]", 2: '["c", "a", ?]', 3: "[?]"},
        ],
        results=[
            {0: "[?]", 1: "[]", 2: "[?]", 3: "[?]"},
            {0: '["a", "b", "d", ?]', 1: "[?]", 2: "[?]", 3: "[?]"},
        ],
        replicated={0: '"d"'},
        want_operands=[
            None,
            {0: "[?]", 1: '["b", "a", ?]', 2: '["c", ?]', 3: '["d", ?]'},
            {0: "[]", 1: '["b", ?]', 2: '["c", "a", ?]', 3: '["d", ?]'},
        ],
        want_results=[
            {0: '["a", "b", ?]', 1: "[]", 2: '["c", ?]', 3: '["d", ?]'},
            {0: '["a", "b", "d", ?]', 1: "[?]", 2: '["c", ?]', 3: "[?]"},
        ],
        updated_operands=[1, 2],
        updated_results=[0, 1],
    ),
    # shardy-notes 4.3 case 1: A/f0 = "a", C/f1 = "a" -> B/f1 gets "a".
    "dot_single_choice": Case(
        operands=[{0: '["a", ?]', 2: "[?]"}, {2: "[?]", 1: "[?]"}],
        results=[{0: "[?]", 1: '["a", ?]'}],
        factor_sizes=(8, 32, 16),
        want_operands=[None, {2: "[?]", 1: '["a", ?]'}],
        want_results=[None],
        updated_operands=[1],
        updated_results=[],
    ),
    # Case 2: A/f0 = "a", B/f1 = "a": B (16x32) is larger than A (8x16), so C takes f1.
    "dot_larger_source_wins": Case(
        operands=[{0: '["a", ?]', 2: "[?]"}, {2: "[?]", 1: '["a", ?]'}],
        results=[{0: "[?]", 1: "[?]"}],
        factor_sizes=(8, 32, 16),
        want_operands=[None, None],
        want_results=[{0: "[?]", 1: '["a", ?]'}],
        updated_operands=[],
        updated_results=[0],
    ),
    # Same, but A is the larger tensor now: C takes f0.
    "dot_larger_source_wins_other_way": Case(
        operands=[{0: '["a", ?]', 2: "[?]"}, {2: "[?]", 1: '["a", ?]'}],
        results=[{0: "[?]", 1: "[?]"}],
        factor_sizes=(64, 2, 16),
        want_operands=[None, None],
        want_results=[{0: '["a", ?]', 1: "[?]"}],
        updated_operands=[],
        updated_results=[0],
    ),
    # Elementwise op: the result is closed and replicated, so "a" is not pushed sideways from
    # operand 0 into operand 1.
    "elementwise_no_sideways_into_operand": Case(
        operands=[{0: '["a", ?]'}, {0: "[?]"}],
        results=[{0: "[]"}],
        elementwise=True,
        mesh=make_mesh(a=2),
        factor_sizes=(8,),
        want_operands=[None, None],
        want_results=[None],
        updated_operands=[],
        updated_results=[],
    ),
    # Elementwise op, f0 and f1 both want "b" with equally large sources: the more sharded
    # candidate (f1: ["a", "b"]) wins, although its source comes later.
    "elementwise_more_sharded_factor_wins": Case(
        operands=[{0: '["b", ?]', 1: "[?]"}, {0: "[?]", 1: '["a", "b", ?]'}],
        results=[{0: "[?]", 1: "[?]"}],
        elementwise=True,
        mesh=make_mesh(a=2, b=2),
        factor_sizes=(8, 8),
        want_operands=[{0: '["b", ?]', 1: '["a", ?]'}, None],
        want_results=[{0: "[?]", 1: '["a", "b", ?]'}],
        updated_operands=[0],
        updated_results=[0],
    ),
    # Not elementwise: the earlier source (f0) wins and f1 is cut before "b".
    "non_elementwise_earlier_source_wins": Case(
        operands=[{0: '["b", ?]', 1: "[?]"}, {0: "[?]", 1: '["a", "b", ?]'}],
        results=[{0: "[?]", 1: "[?]"}],
        mesh=make_mesh(a=2, b=2),
        factor_sizes=(8, 8),
        want_operands=[{0: '["b", ?]', 1: '["a", ?]'}, {0: "[?]", 1: '["a", "b", ?]'}],
        want_results=[{0: '["b", ?]', 1: '["a", ?]'}],
        updated_operands=[0],
        updated_results=[0],
    ),
}


@pytest.mark.parametrize("case", AGGRESSIVE_CASES.values(), ids=AGGRESSIVE_CASES.keys())
def test_aggressive(case: Case) -> None:
    check(AGGRESSIVE, case)


@pytest.mark.parametrize(
    ("directions", "want_result"),
    [
        ({0: B, 1: N}, {0: '["a", ?]', 1: "[?]"}),
        ({0: N, 1: B}, {0: "[?]", 1: '["a", ?]'}),
        ({}, {0: '["a", ?]', 1: "[?]"}),
    ],
    ids=["only_factor_0", "only_factor_1", "all_factors_prefer_0"],
)
def test_aggressive_propagate_along_specific_factor(directions, want_result) -> None:
    case = Case(
        operands=[{0: '["a", ?]', 1: "[?]"}, {0: "[?]", 1: '["a", ?]'}],
        results=[{0: "[?]", 1: "[?]"}],
        directions=directions,
        want_operands=[None, None],
        want_results=[want_result],
        updated_operands=[],
        updated_results=[0],
    )
    check(AGGRESSIVE, case)


def test_no_candidates_means_no_updates() -> None:
    projection = ShardingProjection([tfs({0: '["a", ?]'})], [tfs({0: "[?]"})])
    bits = AGGRESSIVE.propagate_factor_shardings(
        projection, lambda f: PropagationDirection.NONE, (4,), None
    )
    assert not bits.any()
    assert str(projection.results[0].get(0)) == "[?]"


def test_propagate_anything_is_both() -> None:
    assert propagate_anything(3) == PropagationDirection.BOTH
    assert [int(d) for d in PropagationDirection] == [0, 1, 2, 3]


# -- the memoized one-op step -------------------------------------------------------------------


def test_propagate_op_shardings_dot() -> None:
    # ([i, k], [k, j])->([i, j]) {i=8, j=32, k=16} reduction={k}
    rule = OpShardingRule((8, 32, 16), (((0,), (2,)), ((2,), (1,))), (((0,), (1,)),), (2,))
    mesh = make_mesh(x=2, y=4, z=2)
    lhs = sharding('[{"x", ?}, {"y", ?}]')
    rhs = sharding('[{?}, {"z", ?}]')
    args = (BASIC, rule, (lhs, rhs), (None,), "mesh", mesh, (B, B, B))
    propagate_op_shardings.cache_clear()
    operands, results = propagate_op_shardings(*args)
    # rhs gets the contracting "y" (k) in front of its own "z" (j); the result i and j.
    assert operands == (None, sharding('[{"y", ?}, {"z", ?}]'))
    assert results == (sharding('[{"x", ?}, {"z", ?}]'),)
    # A fresh but equal strategy instance hits the cache.
    assert propagate_op_shardings(BasicFactorPropagation(), *args[1:]) == (operands, results)
    assert propagate_op_shardings.cache_info().hits == 1
    # Blocking every factor propagates nothing.
    assert propagate_op_shardings(*args[:-1], (N, N, N)) == ((None, None), (None,))
