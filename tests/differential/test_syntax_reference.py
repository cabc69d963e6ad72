"""Differential test of the ``#sdy`` printer/parser against Shardy (jaxlib's reference).

Every case is an attribute text: the reference parses and prints it (`run_pass(text, None)`),
we parse it and print it (`str(parse_sdy_attribute(text))`), and the two printed texts must be
equal. Inputs may be non-canonical (extra whitespace, hex integers, clauses swapped, explicit
iota device ids, the generic ``#sdy<...>`` form) - both sides must normalise them the same way.

Batching: the cases of one table or one hypothesis example go into a single module as
discardable attributes of one ``func.func`` (no verifier looks at those names), so one
reference call covers dozens of cases. A second test puts attributes where they are verified
(``sdy.mesh``, func argument/result shardings, op per-value shardings, sharding rules,
manual computations) and round-trips every ``#sdy`` text the reference prints.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shardwise.axis import AxisRef, SubAxisInfo
from shardwise.io.reference import run_pass
from shardwise.mesh import Mesh, MeshAxis
from shardwise.rules.rule import OpShardingRule
from shardwise.sharding import (
    DimensionSharding,
    ManualAxes,
    TensorSharding,
    TensorShardingPerValue,
)
from shardwise.syntax import parse_mesh, parse_sdy_attribute

_OPEN = "<([{"
_CLOSE = ">)]}"


def attr_end(text: str, start: int) -> int:
    """Index just past the attribute starting at `start` (balanced brackets, strings, ``->``)."""
    depth = 0
    i = start
    while i < len(text):
        c = text[i]
        if c == '"':
            i += 1
            while text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif c in _OPEN:
            depth += 1
        elif c in _CLOSE and not (c == ">" and text[i - 1] == "-"):
            depth -= 1
            if depth < 0:
                return i
        elif c in ", \n" and depth == 0:
            return i
        i += 1
    return i


def reference_print(texts: list[str]) -> list[str]:
    """The reference's printing of each attribute text (one module for all of them)."""
    names = [f"x{i:04d}" for i in range(len(texts))]
    attrs = ", ".join(f"{n} = {t}" for n, t in zip(names, texts, strict=True))
    printed = run_pass(f"func.func @f() attributes {{{attrs}}} {{\n  return\n}}", None)
    result = []
    for name in names:
        start = printed.index(f"{name} = ") + len(name) + 3
        result.append(printed[start : attr_end(printed, start)])
    return result


def ours(text: str) -> str:
    return str(parse_sdy_attribute(text))


# -- hand-written table ---------------------------------------------------------------------

TABLE = [
    # meshes
    '#sdy.mesh<["a"=2, "b"=4]>',
    "#sdy.mesh<[]>",
    "#sdy.mesh<[], device_ids=[7]>",
    '#sdy.mesh<["a"=1, "b"=1]>',
    '#sdy.mesh<["a"=3, "b"=2], device_ids=[0, 2, 4, 1, 3, 5]>',
    '#sdy.mesh<["a"=2, "b"=2], device_ids=[0, 1, 2, 3]>',  # explicit iota is dropped
    '#sdy.mesh< [ "a" = 0x10 ] , device_ids = [ 15,14,13,12,11,10,9,8,7,6,5,4,3,2,1,0 ] >',
    '#sdy<mesh<["x"=2]>>',
    '#sdy.mesh<["a b"=2, "\\22q\\\\"=2, "\\09tab"=2, "\\C3\\A9"=2, "ü"=2, "\\n"=2]>',
    # tensor shardings
    '#sdy.sharding<@mesh, [{"a", ?}p1, {}], replicated={"b"}>',
    '#sdy.sharding<@mesh, [{"a":(1)2, "b"}, {?}p0], unreduced={"c"}>',
    '#sdy.sharding<@mesh, [{}, {}], unreduced={"c"}, replicated={"a", "b":(2)2}>',
    "#sdy.sharding<@mesh, []>",
    "#sdy.sharding<@mesh, [{?}, {?}, {?}]>",
    '#sdy.sharding<@"m-1", [{"a"}]>',
    '#sdy.sharding<@"mesh", [{"a"}]>',
    '#sdy.sharding<@m.x$1_, [{"a"}]>',
    '#sdy.sharding<@"\\22", [{"a"}]>',
    '#sdy.sharding<@_m, [{"a"}]>',
    '#sdy.sharding<mesh<["a"=2, "b"=2], device_ids=[3, 2, 1, 0]>, [{"a"}, {"b", ?}p3]>',
    '#sdy.sharding<mesh<["a"=2], device_ids=[0, 1]>, [{"a"}]>',
    "#sdy.sharding<mesh<[], device_ids=[0]>, []>",
    "#sdy.sharding<mesh<[]>, []>",
    '#sdy.sharding<@m,[ { "a" , ? } p12 ,{"b" : ( 0x2 ) 0x4}] ,replicated = { "c" }>',
    '#sdy.sharding<@m, [{"a", "b", "c", "d", "e"}p9223372036854775807]>',
    '#sdy.sharding<@m, [{"a":(-1)2, "a":(1)0}]>',  # semantically wrong, syntactically fine
    '#sdy<sharding<@m, [{"a"}]>>',
    # per-value shardings
    '#sdy.sharding_per_value<[<@mesh, [{"a"}]>, <@mesh, []>]>',
    "#sdy.sharding_per_value<[]>",
    '#sdy.sharding_per_value<[<mesh<["a"=2]>, [{"a", ?}]>, <@m, [{}], replicated={"z"}>]>',
    # op sharding rules
    "#sdy.op_sharding_rule<([i, k], [k, j])->([i, j]) {i=8, j=32, k=16} reduction={k}>",
    "#sdy.op_sharding_rule<([ij, k])->([i, jk]) {i=2, j=4, k=8} need_replication={i}"
    " permutation={j} blocked_propagation={k}, custom>",
    "#sdy.op_sharding_rule<([])->([])>",
    "#sdy.op_sharding_rule<([])->([]) {}>",
    "#sdy.op_sharding_rule<([i])->([i]) {i=4} reduction={} , custom>",
    "#sdy.op_sharding_rule<([ij])->([ij]) {i=2, j=2} reduction={ij}>",
    "#sdy.op_sharding_rule<([i])->([i]) {i=0x8} reduction= need_replication={i}>",
    "#sdy.op_sharding_rule< ( [ i , j ] ) -> ( [ ij ] ) { i = 2 , j = 3 } >",
    "#sdy.op_sharding_rule<([i], [j])->([k], [l]) {i=1, j=-1, k=0, l=5}>",
    "#sdy.op_sharding_rule<([z_1z_2, z])->([z_3]) reduction={z_1, z_3}>",
    "#sdy.op_sharding_rule<([i])->([i]) {i=2147483647}>",
    # Not here: an empty dim mapping (`[, i]`), which the reference prints as
    # `[#sdy.dim_mapping, i]` and cannot parse back; we print `[, i]`.
    "#sdy<op_sharding_rule<([i])->([i]) {i=4}>>",
    # manual axes
    '#sdy<manual_axes{"a", "b"}>',
    "#sdy<manual_axes{}>",
    '#sdy<manual_axes{ "\\22" ,"b b" }>',
]


@pytest.fixture(scope="module")
def table_reference() -> list[str]:
    return reference_print(TABLE)


@pytest.mark.parametrize("index", range(len(TABLE)), ids=TABLE)
def test_table_matches_reference(index: int, table_reference: list[str]) -> None:
    assert ours(TABLE[index]) == table_reference[index]


# -- attributes in verified positions -------------------------------------------------------

VERIFIED_MODULE = r"""
sdy.mesh @mesh = <["a"=2, "b"=4, "c"=2]>
sdy.mesh @"odd mesh" = <["\22x"=2, "y y"=2], device_ids=[3, 1, 2, 0]>
sdy.mesh @maximal = <[], device_ids=[5]>
sdy.mesh @empty = <[]>
sdy.mesh @iota = <["x"=2, "y"=2], device_ids=[0, 1, 2, 3]>
func.func @main(
    %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", ?}p1, {"b":(1)2}], replicated={"c"}>},
    %arg1: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@"odd mesh", [{"\22x"}, {?}p4], unreduced={"y y"}>},
    %arg2: tensor<4xf32> {sdy.sharding = #sdy.sharding<mesh<["q"=4]>, [{"q":(2)2, ?}]>},
    %arg3: tensor<f32> {sdy.sharding = #sdy.sharding<@maximal, []>})
    -> (tensor<8x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}], unreduced={"b"}>}) {
  %0 = stablehlo.custom_call @foo(%arg0, %arg1) {
      sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a", "b"}, {"c", ?}p2]>]>,
      sdy.sharding_rule = #sdy.op_sharding_rule<([i, k], [k, j])->([i, j]) {i=8, j=32, k=16} reduction={k}, custom>}
      : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %1:2 = stablehlo.custom_call @bar(%0) {
      sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>, <@empty, [{}]>]>,
      sdy.sharding_rule = #sdy.op_sharding_rule<([ij, k])->([i, jk], [l]) {i=2, j=4, k=8, l=256} need_replication={l} permutation={k} blocked_propagation={i, j}>}
      : (tensor<8x32xf32>) -> (tensor<2x32xf32>, tensor<256xf32>)
  %2 = sdy.sharding_constraint %0 <@mesh, [{"a", ?}, {?}]> : tensor<8x32xf32>
  %3 = sdy.reshard %2 <@mesh, [{"b":(2)2}, {"a"}]> : tensor<8x32xf32>
  %4 = sdy.manual_computation(%3) in_shardings=[<@mesh, [{"a"}, {}]>]
      out_shardings=[<@mesh, [{"a"}, {}]>] manual_axes={"a"} (%x: tensor<4x32xf32>) {
    sdy.return %x : tensor<4x32xf32>
  } : (tensor<8x32xf32>) -> tensor<8x32xf32>
  return %4 : tensor<8x32xf32>
}
"""

_SDY_ATTR = re.compile(r"#sdy[.<]")
_MESH_OP = re.compile(r'sdy\.mesh @(?:\w+|"[^"]*") = ')


def sdy_texts(printed: str) -> list[str]:
    """Every ``#sdy...`` attribute text in a printed module."""
    return [printed[m.start() : attr_end(printed, m.start())] for m in _SDY_ATTR.finditer(printed)]


def test_verified_positions_round_trip() -> None:
    printed = run_pass(VERIFIED_MODULE, None, generic=True)
    texts = sdy_texts(printed)
    assert len(texts) >= 18
    kinds = {type(parse_sdy_attribute(t)).__name__ for t in texts}
    assert kinds == {
        "Mesh",
        "TensorSharding",
        "TensorShardingPerValue",
        "OpShardingRule",
        "ManualAxes",
    }
    mismatches = [(t, ours(t)) for t in texts if ours(t) != t]
    assert not mismatches


def test_mesh_op_bodies_round_trip() -> None:
    printed = run_pass(VERIFIED_MODULE, None)
    bodies = [printed[m.end() : attr_end(printed, m.end())] for m in _MESH_OP.finditer(printed)]
    assert len(bodies) == 5
    assert '<["x"=2, "y"=2]>' in bodies  # the iota device ids were dropped by the reference
    for body in bodies:
        assert parse_mesh(body).body_str() == body


# -- hypothesis: random values printed by us, reprinted by the reference ----------------------

names = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=4)
int64 = st.integers(-(2**63), 2**63 - 1)
int32 = st.integers(-(2**31), 2**31 - 1)  # the reference parses factor sizes as 32-bit


@st.composite
def meshes(draw: st.DrawFn) -> Mesh:
    """A mesh the reference's attribute verifier accepts (sizes >= 1, unique names, ids)."""
    axis_names = draw(st.lists(names, max_size=3, unique=True))
    axes = tuple(MeshAxis(n, draw(st.integers(1, 4))) for n in axis_names)
    total = 1
    for axis in axes:
        total *= axis.size
    if not axes:
        return Mesh((), tuple(draw(st.lists(st.integers(0, 2**40), max_size=1))))
    if total > 1 and draw(st.booleans()):
        ids = draw(st.permutations(range(total)))
        if list(ids) != sorted(ids):
            return Mesh(axes, tuple(ids))
    return Mesh(axes)


@st.composite
def axis_refs(draw: st.DrawFn) -> AxisRef:
    name = draw(names)
    if draw(st.booleans()):
        return AxisRef(name)
    return AxisRef(name, SubAxisInfo(draw(int64), draw(int64)))


@st.composite
def tensor_shardings(draw: st.DrawFn) -> TensorSharding:
    mesh: str | Mesh = draw(meshes()) if draw(st.booleans()) else draw(names)
    dims = tuple(
        DimensionSharding(
            tuple(draw(st.lists(axis_refs(), max_size=3))),
            draw(st.booleans()),
            draw(st.none() | st.integers(0, 2**63 - 1)),
        )
        for _ in range(draw(st.integers(0, 3)))
    )
    replicated = tuple(draw(st.lists(axis_refs(), max_size=2)))
    unreduced = tuple(draw(st.lists(axis_refs(), max_size=2)))
    return TensorSharding(mesh, dims, replicated, unreduced)


@st.composite
def rules(draw: st.DrawFn) -> OpShardingRule:
    n = draw(st.integers(0, 24))
    factor = st.integers(0, max(n - 1, 0))

    def mapping() -> tuple[tuple[int, ...], ...]:
        if n == 0:
            return ()
        return tuple(
            tuple(draw(st.lists(factor, min_size=1, max_size=3)))
            for _ in range(draw(st.integers(0, 3)))
        )

    operands = tuple(mapping() for _ in range(draw(st.integers(1, 3))))
    results = tuple(mapping() for _ in range(draw(st.integers(1, 2))))
    typed = [tuple(draw(st.lists(factor, max_size=3))) if n else () for _ in range(4)]
    sizes = tuple(draw(st.lists(int32, min_size=n, max_size=n)))
    return OpShardingRule(
        sizes,
        operands,
        results,
        reduction_factors=typed[0],
        need_replication_factors=typed[1],
        permutation_factors=typed[2],
        blocked_propagation_factors=typed[3],
        is_custom_rule=draw(st.booleans()),
    )


attributes = st.one_of(
    meshes(),
    tensor_shardings(),
    st.lists(tensor_shardings(), max_size=3).map(lambda s: TensorShardingPerValue(tuple(s))),
    rules(),
    st.lists(names, max_size=3).map(lambda a: ManualAxes(tuple(a))),
)


@settings(max_examples=30)
@given(st.lists(attributes, min_size=1, max_size=40))
def test_generated_attributes_match_reference(values: list[object]) -> None:
    texts = [str(v) for v in values]
    reference = reference_print(texts)
    for value, text, printed in zip(values, texts, reference, strict=True):
        assert text == printed
        assert parse_sdy_attribute(printed) == value
