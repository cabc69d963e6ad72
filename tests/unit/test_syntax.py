"""Unit tests of the ``#sdy`` attribute parser (`shardwise.syntax`) and the printers.

Round-trip rows are texts in the form Shardy prints them (checked against the reference in
tests/differential/test_syntax_reference.py); value rows pin what the parser builds; error
rows pin class, message and column.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shardwise.axis import AxisRef, SubAxisInfo
from shardwise.errors import Location, ParseError
from shardwise.mesh import Mesh, MeshAxis
from shardwise.rules.rule import OpShardingRule
from shardwise.sharding import (
    DimensionSharding,
    ManualAxes,
    TensorSharding,
    TensorShardingPerValue,
)
from shardwise.syntax import (
    parse_axis_ref,
    parse_dimension_sharding,
    parse_factor_symbols,
    parse_manual_axes,
    parse_mesh,
    parse_op_sharding_rule,
    parse_sdy_attribute,
    parse_sharding_per_value,
    parse_tensor_sharding,
)

ROUND_TRIP = [
    '#sdy.mesh<["a"=2, "b"=4]>',
    '#sdy.mesh<["a"=3, "b"=2], device_ids=[0, 2, 4, 1, 3, 5]>',
    "#sdy.mesh<[]>",
    "#sdy.mesh<[], device_ids=[3]>",
    '#sdy.mesh<["a"=1]>',
    '#sdy.mesh<["a b"=2, "\\22q\\\\"=2, "\\C3\\A9"=2]>',
    '#sdy.sharding<@mesh, [{"a", ?}p1, {}], replicated={"b"}>',
    '#sdy.sharding<@mesh, [{"a":(1)2, "b"}, {?}p0], unreduced={"c"}>',
    '#sdy.sharding<@mesh, [{}, {}], replicated={"a", "b":(2)2}, unreduced={"c"}>',
    "#sdy.sharding<@mesh, []>",
    '#sdy.sharding<@"m-1", [{"a"}]>',
    '#sdy.sharding<@m.x$1, [{"a"}]>',
    '#sdy.sharding<mesh<["a"=2, "b"=2], device_ids=[3, 2, 1, 0]>, [{"a"}, {"b", ?}p3]>',
    "#sdy.sharding<mesh<[], device_ids=[0]>, []>",
    '#sdy.sharding<@mesh, [{"a"}], unreduced=max{"b"}>',
    '#sdy.sharding<@mesh, [{"a"}], unreduced=min{"b"}>',
    '#sdy.sharding_per_value<[<@mesh, [{"a"}]>, <@mesh, []>]>',
    "#sdy.sharding_per_value<[]>",
    "#sdy.op_sharding_rule<([i, k], [k, j])->([i, j]) {i=8, j=32, k=16} reduction={k}>",
    "#sdy.op_sharding_rule<([ij, k])->([i, jk]) {i=2, j=4, k=8} need_replication={i}"
    " permutation={j} blocked_propagation={k}, custom>",
    "#sdy.op_sharding_rule<([])->([])>",
    "#sdy.op_sharding_rule<([], [i])->([i]) {i=4}, custom>",
    '#sdy<manual_axes{"a", "b"}>',
    "#sdy<manual_axes{}>",
]


@pytest.mark.parametrize("text", ROUND_TRIP, ids=range(len(ROUND_TRIP)))
def test_round_trip(text: str) -> None:
    assert str(parse_sdy_attribute(text)) == text


def test_many_factors_use_z_numbers() -> None:
    symbols = [*"ijklmnopqrstuvwxyz", "z_1", "z_2"]
    mapping = "[" + ", ".join(symbols) + "]"
    sizes = ", ".join(f"{s}=2" for s in symbols)
    text = f"#sdy.op_sharding_rule<({mapping})->({mapping}) {{{sizes}}} reduction={{z_2}}>"
    rule = parse_op_sharding_rule(text)
    assert rule.factor_sizes == (2,) * 20
    assert rule.reduction_factors == (19,)
    assert str(rule) == text


# -- values ---------------------------------------------------------------------------------


def a(name: str, pre: int | None = None, size: int | None = None) -> AxisRef:
    return AxisRef(name) if pre is None else AxisRef(name, SubAxisInfo(pre, size or 0))


VALUE_ROWS = [
    ('"a"', parse_axis_ref, a("a")),
    ('"a":(2)4', parse_axis_ref, a("a", 2, 4)),
    (' "a" : ( 0x2 ) 4 ', parse_axis_ref, a("a", 2, 4)),
    ('"\\22\\n\\\\"', parse_axis_ref, a('"\n\\')),
    ("{}", parse_dimension_sharding, DimensionSharding()),
    ("{?}", parse_dimension_sharding, DimensionSharding((), False)),
    ('{"a", ?}p2', parse_dimension_sharding, DimensionSharding((a("a"),), False, 2)),
    (
        '{"a", "b":(1)2}p0',
        parse_dimension_sharding,
        DimensionSharding((a("a"), a("b", 1, 2)), True, 0),
    ),
    ('<["a"=2], device_ids=[0, 1]>', parse_mesh, Mesh((MeshAxis("a", 2),))),
    ("<[], device_ids=[0]>", parse_mesh, Mesh((), (0,))),
    ('#sdy<mesh<["x"=-1]>>', parse_mesh, Mesh((MeshAxis("x", -1),))),
    (
        '<@m, [{}], unreduced={"b"}, replicated={"a"}>',
        parse_tensor_sharding,
        TensorSharding("m", (DimensionSharding(),), (a("a"),), (a("b"),)),
    ),
    (
        '#sdy.sharding<@m, [{"a"}], unreduced=sum{"b"}>',
        parse_tensor_sharding,
        TensorSharding("m", (DimensionSharding((a("a"),)),), (), (a("b"),), "sum"),
    ),
    (
        '#sdy.sharding<mesh<["a"=2]>, [{"a"}]>',
        parse_tensor_sharding,
        TensorSharding(Mesh((MeshAxis("a", 2),)), (DimensionSharding((a("a"),)),)),
    ),
    ('#sdy.sharding<@"m\\22", []>', parse_tensor_sharding, TensorSharding('m"', ())),
    (
        "<[<@m, []>, <@n, []>]>",
        parse_sharding_per_value,
        TensorShardingPerValue((TensorSharding("m"), TensorSharding("n"))),
    ),
    (
        "<([i, jk])->([ij]) {i=2, j=3, k=5} reduction={k}>",
        parse_op_sharding_rule,
        OpShardingRule((2, 3, 5), (((0,), (1, 2)),), (((0, 1),),), reduction_factors=(2,)),
    ),
    (
        "#sdy.op_sharding_rule<([i])->([i]) {} reduction= , custom>",
        parse_op_sharding_rule,
        OpShardingRule((), (((0,),),), (((0,),),), is_custom_rule=True),
    ),
    (
        "<([i])->([i]) {i=4} blocked_propagation={i}>",
        parse_op_sharding_rule,
        OpShardingRule((4,), (((0,),),), (((0,),),), blocked_propagation_factors=(0,)),
    ),
    (  # Shardy reads only the first symbol of a word in a typed factor list.
        "<([ij])->([ij]) {i=2, j=2} reduction={ij}>",
        parse_op_sharding_rule,
        OpShardingRule((2, 2), (((0, 1),),), (((0, 1),),), reduction_factors=(0,)),
    ),
    (
        "<([, i])->([i]) {i=4}>",
        parse_op_sharding_rule,
        OpShardingRule((4,), (((), (0,)),), (((0,),),)),
    ),
    ('{"a"}', parse_manual_axes, ManualAxes(("a",))),
    ('#sdy<manual_axes{"b", "a"}>', parse_manual_axes, ManualAxes(("b", "a"))),
]


@pytest.mark.parametrize(("text", "parse", "expected"), VALUE_ROWS, ids=[r[0] for r in VALUE_ROWS])
def test_parsed_value(text: str, parse, expected: object) -> None:
    assert parse(text) == expected


FACTOR_SYMBOL_ROWS = [
    ("i", (0,)),
    ("z", (17,)),
    ("z_1", (18,)),
    ("ijk", (0, 1, 2)),
    ("zz_1z_10", (17, 18, 27)),
]


@pytest.mark.parametrize(
    ("text", "expected"), FACTOR_SYMBOL_ROWS, ids=[r[0] for r in FACTOR_SYMBOL_ROWS]
)
def test_factor_symbols(text: str, expected: tuple[int, ...]) -> None:
    assert parse_factor_symbols(text) == expected


def test_unmodelled_sdy_attribute_is_none() -> None:
    assert parse_sdy_attribute("#sdy.propagation_edges<[]>") is None
    assert parse_sdy_attribute('#sdy<axis_ref_list{"a"}>') is None


# -- errors ---------------------------------------------------------------------------------

ERROR_ROWS = [
    ('#sdy.sharding<@m, [{?, "a"}]>', "expected '}'", 22),
    ('#sdy.sharding<@m, [{, "a"}]>', "expected string", 21),
    (
        '#sdy.sharding<@m, [{"a"}p01]>',
        "priorities with leading zeros are not allowed, got: p01",
        25,
    ),
    ('#sdy.sharding<@m, [{"a"}q1]>', "expecting priority in format 'p<number>', got: q1", 25),
    ('#sdy.sharding<@m, [{"a"}p]>', "expecting priority in format 'p<number>', got: p", 25),
    (
        '#sdy.sharding<@m, [{"a"}p99999999999999999999]>',
        "expecting integer priority, got: p99999999999999999999",
        25,
    ),
    (
        '#sdy.sharding<@m, [{}], foo={"a"}>',
        "failed to parse Sdy_TensorSharding, expected valid named axis list after comma",
        25,
    ),
    (
        '#sdy.sharding<@m, [{}], replicated={"a"}, replicated={"b"}>',
        "failed to parse Sdy_TensorSharding, expected valid named axis list after comma",
        43,
    ),
    ("#sdy.sharding<@m, [{}], replicated={}>", "expected string", 37),
    (
        '#sdy.sharding<@m, [{"a"}],>',
        "failed to parse Sdy_TensorSharding, expected valid named axis list after comma",
        27,
    ),
    (
        '#sdy.sharding<m, [{"a"}]>',
        "expected mesh symbol reference '@name' or inline 'mesh<[...]>'",
        15,
    ),
    ('#sdy.sharding<@m [{"a"}]>', "expected ','", 18),
    ('#sdy.sharding<@m, [{"a":(1)2:(1)2}]>', "expected ','", 29),
    ('#sdy.mesh<["a"=2], device_ids=[]>', "expected integer value", 32),
    ('#sdy.mesh<["a"=2], ids=[1, 0]>', "expected 'device_ids'", 20),
    ('#sdy.mesh<["a"]>', "expected '='", 15),
    ('#sdy.mesh<["a=2]>', "expected '\"' in string literal", 12),
    ('#sdy.mesh<["\\q"=2]>', "unknown escape in string literal", 13),
    ("#sdy.op_sharding_rule<()->([i]) {i=8}>", "expected '['", 24),
    ("#sdy.op_sharding_rule<([*])->([i]) {i=8}>", "expected ']'", 25),
    ("#sdy.op_sharding_rule<([a])->([i])>", "expecting symbol from 'i' to 'z'. Received: 'a'", 25),
    (
        "#sdy.op_sharding_rule<([z_01])->([i])>",
        "expecting positive integer without leading zeros. Received: '01'",
        25,
    ),
    ("#sdy.op_sharding_rule<([z_])->([i])>", "expecting integer after 'z_'. Received: 'z_'", 25),
    (
        "#sdy.op_sharding_rule<([i])->([i]) {j=2}>",
        "expecting factor indices to be ordered like an iota ([0,1,2,...], e.g. {i=#, j=#, ...})."
        " Expecting factor index symbol 'i', received: 'j'",
        37,
    ),
    ("#sdy.op_sharding_rule<([i])->([i]) {ij=2}>", "expecting single factor symbol: j", 37),
    (
        "#sdy.op_sharding_rule<([i])->([i]) {i=8} blocked_propagation={i} reduction={i}>",
        "expected '>'",
        66,
    ),
    ("#sdy.op_sharding_rule<([i])->([i]) {i=8} reduction=k>", "expected '>'", 52),
    ("#sdy.op_sharding_rule<([i])->([i]) {i=8}, foo>", "expected 'custom'", 43),
    ('#sdy<manual_axes{"a",}>', "expected string", 22),
    ("#sdy.op_sharding_rule<([i])->([i]) {i=2147483648}>", "integer value too large", 39),
    ('#sdy.mesh<["a"=9223372036854775808]>', "integer value too large", 16),
    ("#sdy.sharding<@m, []> x", "expected end of attribute text", 23),
    ("#foo.sharding<@m, []>", "expected '#sdy'", 1),
]


@pytest.mark.parametrize(("text", "message", "col"), ERROR_ROWS, ids=[r[0] for r in ERROR_ROWS])
def test_parse_error(text: str, message: str, col: int) -> None:
    with pytest.raises(ParseError) as info:
        parse_sdy_attribute(text)
    assert info.value.message == message
    assert info.value.location == Location("-", 1, col)


def test_typed_entry_point_rejects_other_form() -> None:
    with pytest.raises(ParseError, match="expected #sdy.mesh"):
        parse_mesh("#sdy.sharding<@m, []>")


# -- printer/parser agreement on generated values -------------------------------------------

names = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=4)


@st.composite
def axis_refs(draw: st.DrawFn) -> AxisRef:
    name = draw(names)
    if draw(st.booleans()):
        return AxisRef(name)
    return AxisRef(name, SubAxisInfo(draw(st.integers(1, 64)), draw(st.integers(2, 64))))


@st.composite
def dimension_shardings(draw: st.DrawFn) -> DimensionSharding:
    axes = tuple(draw(st.lists(axis_refs(), max_size=3)))
    priority = draw(st.none() | st.integers(0, 2**63 - 1))
    return DimensionSharding(axes, draw(st.booleans()), priority)


@st.composite
def tensor_shardings(draw: st.DrawFn) -> TensorSharding:
    mesh: str | Mesh = draw(names)
    if draw(st.booleans()):
        axes = draw(st.lists(st.builds(MeshAxis, names, st.integers(1, 16)), max_size=3))
        mesh = Mesh(
            tuple(axes), tuple(draw(st.lists(st.integers(0, 9), max_size=3))) if not axes else ()
        )
    dims = tuple(draw(st.lists(dimension_shardings(), max_size=3)))
    replicated = tuple(draw(st.lists(axis_refs(), max_size=2)))
    unreduced = tuple(draw(st.lists(axis_refs(), max_size=2)))
    op = draw(st.sampled_from(["sum", "max", "min"])) if unreduced else "sum"
    return TensorSharding(mesh, dims, replicated, unreduced, op)


@given(tensor_shardings())
def test_generated_sharding_round_trips(sharding: TensorSharding) -> None:
    assert parse_tensor_sharding(str(sharding)) == sharding
    per_value = TensorShardingPerValue((sharding, sharding))
    assert parse_sharding_per_value(str(per_value)) == per_value


@st.composite
def rules(draw: st.DrawFn) -> OpShardingRule:
    n = draw(st.integers(1, 24))
    factors = list(range(n))

    def mapping() -> tuple[tuple[int, ...], ...]:
        chosen = draw(st.lists(st.sampled_from(factors), max_size=4, unique=True))
        split = draw(st.integers(0, len(chosen)))
        dims: list[tuple[int, ...]] = [(f,) for f in chosen[:split]]
        if chosen[split:]:
            dims.append(tuple(chosen[split:]))
        return tuple(dims)

    operands = tuple(mapping() for _ in range(draw(st.integers(1, 3))))
    results = tuple(mapping() for _ in range(draw(st.integers(1, 2))))
    typed = [tuple(sorted(draw(st.sets(st.sampled_from(factors), max_size=2)))) for _ in range(4)]
    sizes = tuple(draw(st.lists(st.integers(1, 64), min_size=n, max_size=n)))
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


@given(rules())
def test_generated_rule_round_trips(rule: OpShardingRule) -> None:
    assert parse_op_sharding_rule(str(rule)) == rule
