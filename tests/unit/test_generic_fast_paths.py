"""The one-line fast path of the generic parser and the aliases of the generic printer.

An op written on one line is read from its head and the tail matched from the line's last
``" : ("``; these rows are op lines whose attributes hold text that looks like a tail, and
every location shape, with what MLIR means by them (hand-derived). The printer's aliases are
checked against the bindings in `test_io.py`-style round trips elsewhere; here: which texts
get one.
"""

from __future__ import annotations

import pytest

from shardwise import ir
from shardwise.errors import Location
from shardwise.io import generic as gen


def _one_op(line: str) -> ir.Op:
    text = (
        '"builtin.module"() ({\n'
        '  "func.func"() <{function_type = (i32) -> (), sym_name = "f"}> ({\n'
        '  ^bb0(%arg0: i32 loc("-":1:9)):\n'
        f"    {line}\n"
        '    "func.return"() : () -> () loc("-":9:1)\n'
        '  }) : () -> () loc("-":1:1)\n'
        '}) : () -> () loc("-":1:1)\n'
    )
    module = gen.parse_generic(text, "m.mlir")
    return module.funcs[0].regions[0].entry.ops[0]


@pytest.mark.parametrize(
    ("line", "props", "attrs", "result_types", "location"),
    [
        (
            '%0 = "t.a"(%arg0) : (i32) -> i32 loc("-":3:5)',
            {},
            {},
            ["i32"],
            Location("m.mlir", 3, 5),
        ),
        (
            '%0 = "t.a"(%arg0) <{k = array<i64: 1, 2>}> : (i32) -> tensor<2xi32> loc("-":3:5)',
            {"k": "array<i64: 1, 2>"},
            {},
            ["tensor<2xi32>"],
            Location("m.mlir", 3, 5),
        ),
        (
            '%0 = "t.a"(%arg0) {note = "x : (i32) -> i32 loc(\\"-\\":7:7)"} : (i32) -> i32'
            ' loc("-":4:2)',
            {},
            {"note": '"x : (i32) -> i32 loc(\\"-\\":7:7)"'},
            ["i32"],
            Location("m.mlir", 4, 2),
        ),
        (
            '%0:2 = "t.a"(%arg0) <{p}> {q = "a : (b)", r = 1 : i32} : (i32) -> (i32, f32)'
            ' loc("-":5:3)',
            {"p": "unit"},
            {"q": '"a : (b)"', "r": "1 : i32"},
            ["i32", "f32"],
            Location("m.mlir", 5, 3),
        ),
        (
            '%0 = "t.a"(%arg0) : (i32) -> i32 loc(unknown)',
            {},
            {},
            ["i32"],
            Location("m.mlir"),
        ),
        (
            '%0 = "t.a"(%arg0) : (i32) -> i32 loc("name")',
            {},
            {},
            ["i32"],
            Location("m.mlir"),
        ),
        (
            '%0 = "t.a"(%arg0) : (i32) -> i32 loc(fused["a", "-":6:1])',
            {},
            {},
            ["i32"],
            Location("m.mlir"),
        ),
        (
            '%0 = "t.a"(%arg0) : (i32) -> tuple<i32, i32> loc("-":6:4)',
            {},
            {},
            ["tuple<i32, i32>"],
            Location("m.mlir", 6, 4),
        ),
        (
            '"t.b"(%arg0) {s = "-> ()"} : (i32) -> () loc("-":8:8)',
            {},
            {"s": '"-> ()"'},
            [],
            Location("m.mlir", 8, 8),
        ),
    ],
    ids=[
        "bare",
        "properties",
        "string-like-a-tail",
        "props-and-attrs",
        "unknown-loc",
        "name-loc",
        "fused-loc-general-path",
        "comma-type",
        "no-results",
    ],
)
def test_one_line_op(
    line: str,
    props: dict[str, str],
    attrs: dict[str, str],
    result_types: list[str],
    location: Location,
) -> None:
    op = _one_op(line)
    assert op.name in ("t.a", "t.b")
    assert {k: str(v) for k, v in op.properties.items()} == props
    assert {k: str(v) for k, v in op.attributes.items()} == attrs
    assert [str(r.type) for r in op.results] == result_types
    assert op.location == location
    arg = op.parent.args[0]  # type: ignore[union-attr]
    assert op.operands == [arg] and arg.uses == [(op, 0)]


def test_ops_with_the_same_attribute_text_get_their_own_dicts() -> None:
    text = (
        '"builtin.module"() ({\n'
        '  "t.a"() <{k = 1 : i64}> {n = "x"} : () -> () loc("-":2:1)\n'
        '  "t.a"() <{k = 1 : i64}> {n = "x"} : () -> () loc("-":3:1)\n'
        '}) : () -> () loc("-":1:1)\n'
    )
    first, second = gen.parse_generic(text).body.ops
    first.attributes["n"] = ir.RawAttr('"y"')
    first.properties.pop("k")
    assert str(second.attributes["n"]) == '"x"' and "k" in second.properties


@pytest.mark.parametrize(
    ("with_locs", "second_loc", "aliased"),
    [
        (False, 'loc("-":3:1)', True),
        (True, 'loc("-":3:1)', True),
        (True, "loc(unknown)", False),
    ],
    ids=["without-locations", "with-locations", "an-op-without-location"],
)
def test_printer_aliases_long_texts(with_locs: bool, second_loc: str, aliased: bool) -> None:
    """Aliases unless an op printed with locations has none (MLIR would give it its position
    in the printout, which the alias definitions shift)."""
    long_text = '"' + "a" * 30 + '"'
    text = (
        '"builtin.module"() ({\n'
        f'  %0 = "t.a"() {{s = {long_text}, t = 1 : i32}} : () -> tensor<4xf32> loc("-":2:1)\n'
        f'  "t.b"(%0) {{s = {long_text}}} : (tensor<4xf32>) -> () {second_loc}\n'
        '}) : () -> () loc("-":1:1)\n'
    )
    printed = gen.print_generic(gen.parse_generic(text), with_locs=with_locs)
    assert (f"#sw_a0 = {long_text}\n" in printed) is aliased
    assert ("!sw_t1 = tensor<4xf32>\n" in printed) is aliased
    assert printed.count(long_text) == (1 if aliased else 2)
    assert "t = 1 : i32" in printed  # short attributes stay inline


_NESTED_VALUES = [
    '#sdy.sharding<@mesh, [{"data"}, {}]>',
    '#sdy.sharding<@mesh, [{"x", ?}, {"y":(2)4}]>',
    "[#stablehlo<precision DEFAULT>, #stablehlo<precision HIGHEST>]",
    "#stablehlo.dot<lhs_batching_dimensions = [0], lhs_contracting_dimensions = [2]>",
    '{axes = [{name = "data", size = 2 : i64}, {name = "model", size = 4 : i64}]}',
    '#sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>, <@mesh, [{}, {"y"}]>]>',
    "dense<(1.000000e+00,2.000000e+00)> : tensor<complex<f32>>",
    "affine_map<(d0, d1) -> (d1, d0)>",
    "#sdy.op_sharding_rule<([i, j])->([j, i]) {i=4, j=8}>",
    '"a string, with [brackets} and <>"',
    "array<i64: 1, 2, 3>",
    "#foo<a >= b>",
    "[[[[1]]]]",
]


@pytest.mark.parametrize("value", _NESTED_VALUES)
@pytest.mark.parametrize("after", [",", "}"])
def test_nested_value_pattern_ends_values_where_the_bracket_scan_does(
    value: str, after: str
) -> None:
    """`_value_end` uses the pattern only after `_NESTED_AFTER` values: wherever it is used,
    it must end a value where `scan_item` does."""
    import re

    from shardwise.io import generic_text
    from shardwise.ir.attrs import scan_item

    text = f"{value}{after} b = 1}}"
    scanned = scan_item(text, 0, len(text))
    m = re.compile(generic_text._NESTED_VALUE).match(text, 0)
    if m is not None and text[m.end()] in ",}":
        assert m.end() == scanned


@pytest.mark.parametrize("compiled", [False, True])
def test_attribute_dicts_read_the_same_with_the_nested_pattern_or_without(
    compiled: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from shardwise.io import generic_text

    monkeypatch.setattr(generic_text, "_nested_value_re", None)
    monkeypatch.setattr(generic_text, "_NESTED_AFTER", 0 if compiled else 10**9)
    text = "{" + ", ".join(f"k{i} = {v}" for i, v in enumerate(_NESTED_VALUES)) + "}"
    parsed = generic_text.parse_attr_dict(text, None)
    assert list(parsed) == [f"k{i}" for i in range(len(_NESTED_VALUES))]
    assert (generic_text._nested_value_re is not None) == compiled
    monkeypatch.setattr(generic_text, "_nested_value_re", None)
    monkeypatch.setattr(generic_text, "_NESTED_AFTER", 10**9 if compiled else 0)
    assert generic_text.parse_attr_dict(text, None) == parsed


# `dense<"...">` values, which `_value_end` ends by `str.find` past the string: each must end
# where the bracket scan from the value's start ends it (escapes and unclosed strings go to the
# general scan; brackets and commas after the string still count, one level deep).
_DENSE_STRINGS = {
    "hex": 'dense<"0x' + "0A1B" * 50 + '"> : tensor<100xi16>',
    "empty": 'dense<""> : tensor<0xi8>',
    "escaped_quote": 'dense<"a\\"b, c"> : tensor<!x.s>',
    "escaped_quote_then_closer": 'dense<"\\">" , "> : tensor<!x.s>',
    "escaped_backslash": 'dense<"a\\\\"> : tensor<1x!x.s>',
    "brackets_in_string": 'dense<"<,{[("> : tensor<1xi8>',
    "unclosed": 'dense<"abc',
    "nested_type": 'dense<"0x00"> : tensor<1xcomplex<f32>>',
    "closer_after": 'dense<"0x00">) , x',
    "string_list": 'dense<["a", "b"]> : tensor<2x!x.s>',
}


@pytest.mark.parametrize("value", _DENSE_STRINGS.values(), ids=_DENSE_STRINGS.keys())
@pytest.mark.parametrize("after", [",", "}", ""])
def test_dense_string_values_end_where_the_bracket_scan_ends_them(value: str, after: str) -> None:
    from shardwise.io import generic_text
    from shardwise.ir.attrs import scan_item

    text = f"{value}{after} b = 1}}"
    assert generic_text._value_end(text, 0) == scan_item(text, 0, len(text))


def test_a_hex_constant_is_read_whole() -> None:
    from shardwise.io import generic_text

    hex_text = '"0x' + "0A" * 50_000 + '"'
    text = f"{{value = dense<{hex_text}> : tensor<50000xi8>, next = 1}}"
    parsed = generic_text.parse_attr_dict(text, None)
    assert str(parsed["value"]) == f"dense<{hex_text}> : tensor<50000xi8>"
    assert str(parsed["next"]) == "1"
