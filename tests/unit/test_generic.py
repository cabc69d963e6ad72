"""The pure-Python generic-form parser and printer (`shardwise.io.generic`), without jax.

Inputs are written the way MLIR prints generic form (``get_asm(print_generic_op_form=True,
enable_debug_info=True)``); `test_io.py` checks the same code against the bindings' output.
"""

from __future__ import annotations

import pytest

from shardwise import ir
from shardwise.errors import Location, ParseError, UnsupportedError
from shardwise.io import generic as gen


def _module(body: str, tail: str = "") -> str:
    return (
        '"builtin.module"() ({\n' + body + '}) : () -> () loc(#loc)\n#loc = loc("-":0:0)\n' + tail
    )


def _func(name: str, args: str, ftype: str, body: str) -> str:
    return (
        f'  "func.func"() <{{function_type = {ftype}, sym_name = "{name}"}}> ({{\n'
        f'  ^bb0({args}):\n{body}  }}) : () -> () loc("-":1:1)\n'
    )


# -- scanning helpers -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("", []),
        ("tensor<4xf32>", ["tensor<4xf32>"]),
        ("tensor<4xf32>, tensor<f32>", ["tensor<4xf32>", "tensor<f32>"]),
        ("tensor<4xf32, #enc<a, b>>, i32", ["tensor<4xf32, #enc<a, b>>", "i32"]),
        ("(i32, i32) -> i32, f32", ["(i32, i32) -> i32", "f32"]),
        ('"a, b", c', ['"a, b"', "c"]),
        ('"x\\"y, z", w', ['"x\\"y, z"', "w"]),
        ("#c<[b, 0]x[0, i]->[b, 0]>, d", ["#c<[b, 0]x[0, i]->[b, 0]>", "d"]),
    ],
    ids=["empty", "one", "two", "nested-comma", "function-type", "string", "escape", "arrow"],
)
def test_split_top_level(text: str, parts: list[str]) -> None:
    assert gen.split_top_level(text) == parts


@pytest.mark.parametrize(
    ("text", "end"),
    [
        ("<a>", 3),
        ("<{a = (i32) -> i32}>rest", 20),
        ('{s = "}"}x', 9),
        ("(loc(fused[#a, #b]))", 20),
        ("<(d0) -> (d0)>,", 14),
    ],
    ids=["angle", "arrow-inside", "string-closer", "nested", "affine"],
)
def test_skip_balanced(text: str, end: int) -> None:
    assert gen.skip_balanced(text, 0) == end


def test_skip_balanced_unbalanced_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="unbalanced '<'"):
        gen.skip_balanced("x\n<a", 2)


# -- locations --------------------------------------------------------------------------------


def test_resolve_loc_aliases_nested_and_strings() -> None:
    text = (
        '#loc1 = loc("x.py":1:2)\n"op"() : () -> () loc(#loc3)\n'
        '#loc2 = loc("f"(#loc1))\n#loc3 = loc(callsite(#loc2 at "#loc1"))\n'
    )
    body, aliases = gen.resolve_loc_aliases(text)
    assert body.split() == ['"op"()', ":", "()", "->", "()", "loc(#loc3)"]
    assert aliases == {
        "#loc1": 'loc("x.py":1:2)',
        "#loc2": 'loc("f"("x.py":1:2))',
        "#loc3": 'loc(callsite("f"("x.py":1:2) at "#loc1"))',
    }


def test_resolve_loc_aliases_of_every_shape_in_any_order() -> None:
    """Names over a location and call sites (one match each), any other definition (a fused
    location: substituted), references to definitions further down."""
    text = (
        '#loc = loc("m.py":3:4 to :9)\n"op"() : () -> () loc(#loc4)\n'
        '#loc4 = loc(callsite(#loc3 at #loc))\n#loc3 = loc("g"(#loc5))\n'
        '#loc5 = loc(fused["a", #loc])\n'
    )
    _, aliases = gen.resolve_loc_aliases(text)
    fused = 'fused["a", "m.py":3:4 to :9]'
    assert aliases == {
        "#loc": 'loc("m.py":3:4 to :9)',
        "#loc4": f'loc(callsite("g"({fused}) at "m.py":3:4 to :9))',
        "#loc3": f'loc("g"({fused}))',
        "#loc5": f"loc({fused})",
    }


def test_resolve_loc_aliases_skips_references_in_escaped_strings() -> None:
    """A ``#loc`` inside a string is text, also after an escaped quote or backslash."""
    text = (
        '#loc1 = loc("x.py":1:2)\n"op"() : () -> () loc(#loc2)\n'
        '#loc2 = loc(callsite("a\\"#loc1\\\\"(#loc1) at "b\\\\"))\n'
    )
    _, aliases = gen.resolve_loc_aliases(text)
    assert aliases["#loc2"] == 'loc(callsite("a\\"#loc1\\\\"("x.py":1:2) at "b\\\\"))'


@pytest.mark.parametrize(
    "text",
    [
        '"op"() : () -> () loc(#loc1)\n#loc = loc(unknown)\n#loc1 = loc("f"(#loc))\n',
        '#loc = loc(unknown)\n"op"() : () -> () loc(#loc1)\n#loc1 = loc("f"(#loc))\n',
        '#loc = loc(unknown)\n"a"() : () -> () loc(#loc1)\n#loc1 = loc("f"(#loc))\n"b"() : () -> ()\n',
    ],
    ids=["after", "before-and-after", "in-the-middle"],
)
def test_resolve_loc_aliases_wherever_the_lines_are(text: str) -> None:
    """MLIR prints its alias lines before and after the module; any other line is found too."""
    body, aliases = gen.resolve_loc_aliases(text)
    assert " = loc(" not in body
    assert [line.split(" :")[0] for line in body.split("\n") if line] == [
        line.split(" :")[0] for line in text.split("\n") if line.startswith('"')
    ]
    assert aliases["#loc1"] == 'loc("f"(unknown))'
    assert aliases["#loc"] == "loc(unknown)"


@pytest.mark.parametrize(
    ("loc", "expected"),
    [
        ('loc("-":3:8)', Location("f.mlir", 3, 8)),
        ("loc(unknown)", Location("f.mlir")),
        ('loc("a.py":3:8)', Location("f.mlir")),
        (None, Location("f.mlir")),
    ],
    ids=["position", "unknown", "other-file", "none"],
)
def test_loc_position(loc: str | None, expected: Location) -> None:
    assert gen.loc_position(loc, "f.mlir") == expected


# -- parsing ----------------------------------------------------------------------------------


def test_multi_result_and_nested_region_scoping() -> None:
    body = (
        '    %0:2 = "t.pair"(%arg0) : (i32) -> (i32, f32) loc("-":2:5)\n'
        '    %1 = "t.wrap"(%0#1) ({\n'
        '    ^bb0(%arg1: f32 loc("-":3:9)):\n'
        '      "t.yield"(%arg1, %0#0) : (f32, i32) -> () loc("-":4:7)\n'
        '    }) : (f32) -> f32 loc("-":3:5)\n'
        '    "func.return"(%1) : (f32) -> () loc("-":5:5)\n'
    )
    text = _module(_func("f", '%arg0: i32 loc("-":1:14)', "(i32) -> f32", body))
    module = gen.parse_generic(text, "m.mlir")
    func = module.funcs[0]
    pair, wrap, ret = func.regions[0].entry.ops
    assert [str(r.type) for r in pair.results] == ["i32", "f32"]
    assert wrap.operands == [pair.results[1]]
    inner_yield = wrap.regions[0].entry.ops[0]
    assert inner_yield.operands == [wrap.regions[0].entry.args[0], pair.results[0]]
    assert ret.operands == [wrap.results[0]]
    assert pair.results[0].users == [inner_yield]
    assert wrap.location == Location("m.mlir", 3, 5)
    assert func.regions[0].entry.args[0].location == Location("m.mlir", 1, 14)
    assert pair.loc_text is None  # no explicit locations: positions only


def test_same_names_in_two_functions() -> None:
    body = '    "func.return"(%arg0) : (i32) -> () loc("-":2:1)\n'
    text = _module(
        _func("a", "%arg0: i32", "(i32) -> i32", body)
        + _func("b", "%arg0: i32", "(i32) -> i32", body)
    )
    module = gen.parse_generic(text)
    a, b = module.funcs
    assert a.regions[0].entry.ops[0].operands[0] is a.regions[0].entry.args[0]
    assert b.regions[0].entry.ops[0].operands[0] is b.regions[0].entry.args[0]


def test_successors_and_forward_reference_across_blocks() -> None:
    body = (
        '    "cf.br"()[^bb2] : () -> ()\n'
        "  ^bb1:  // pred: ^bb2\n"
        '    "func.return"(%0) : (i32) -> ()\n'
        "  ^bb2:  // pred: ^bb0\n"
        '    %0 = "t.c"() : () -> i32\n'
        '    "cf.br"()[^bb1] : () -> ()\n'
    )
    module = gen.parse_generic(_module(_func("f", "", "() -> i32", body)))
    blocks = module.funcs[0].regions[0].blocks
    assert [b.label for b in blocks] == ["^bb0", "^bb1", "^bb2"]
    assert blocks[0].ops[0].successors == ["^bb2"]
    assert blocks[1].ops[0].operands == [blocks[2].ops[0].results[0]]


def test_undefined_value_is_a_parse_error() -> None:
    body = '    "func.return"(%9) : (i32) -> ()\n'
    with pytest.raises(ParseError, match="undefined value %9"):
        gen.parse_generic(_module(_func("f", "", "() -> i32", body)))


def test_attributes_keep_text_and_tricky_values() -> None:
    conv = "#stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>"
    props = (
        f'<{{dimension_numbers = {conv}, "odd key" = "a}}\\"b", value = dense<"0xDEADBEEF"> '
        ": tensor<2xi16>, flag}>"
    )
    body = f'    "t.op"() {props} {{mhlo.x = [1, 2], z}} : () -> () loc("-":2:3)\n'
    module = gen.parse_generic(_module(body))
    op = module.body.ops[0]
    assert op.properties == {
        "dimension_numbers": ir.RawAttr(conv),
        "odd key": ir.RawAttr('"a}\\"b"'),
        "value": ir.RawAttr('dense<"0xDEADBEEF"> : tensor<2xi16>'),
        "flag": ir.UNIT,
    }
    assert op.attributes == {"mhlo.x": ir.RawAttr("[1, 2]"), "z": ir.UNIT}


def test_func_arg_attrs_become_dicts() -> None:
    props = (
        "<{arg_attrs = [{a.b = 1 : i64}, {}], function_type = (i32, i32) -> (), "
        'res_attrs = [], sym_name = "f"}>'
    )
    text = _module(
        f'  "func.func"() {props} ({{\n  ^bb0(%arg0: i32, %arg1: i32):\n'
        '    "func.return"() : () -> ()\n  }) : () -> ()\n'
    )
    func = gen.parse_generic(text).funcs[0]
    assert ir.func_arg_attrs(func, 0) == {"a.b": ir.RawAttr("1 : i64")}
    assert ir.func_arg_attrs(func, 1) == {}
    assert str(func.properties["arg_attrs"]) == "[{a.b = 1 : i64}, {}]"


def test_sdy_attributes_go_through_the_sdy_parser() -> None:
    seen: list[str] = []

    def fake(text: str) -> object:
        seen.append(text)
        return ir.RawAttr("typed:" + text) if "sharding<" in text else None

    body = (
        '    "t.op"() {sdy.sharding = #sdy.sharding<@m, [{"x"}]>, '
        "sdy.other = #sdy.propagation_edges<[]>} : () -> ()\n"
    )
    op = gen.parse_generic(_module(body), sdy_parser=fake).body.ops[0]
    assert seen == ['#sdy.sharding<@m, [{"x"}]>', "#sdy.propagation_edges<[]>"]
    assert op.attributes["sdy.sharding"] == ir.RawAttr('typed:#sdy.sharding<@m, [{"x"}]>')
    assert op.attributes["sdy.other"] == ir.RawAttr("#sdy.propagation_edges<[]>")


def test_rejected_sdy_attribute_is_reported_at_its_op() -> None:
    def strict(text: str) -> object:
        raise ParseError("expected '>'", Location("-", 1, 9))

    body = (
        '  "t.outer"() <{s = #sdy.bad<x>}> ({\n'
        '    "t.inner"() : () -> () loc("-":3:5)\n'
        '  }) : () -> () loc("-":2:3)\n'
    )
    with pytest.raises(UnsupportedError) as info:
        gen.parse_generic(_module(body), "m.mlir", sdy_parser=strict)
    assert info.value.location == Location("m.mlir", 2, 3)
    assert info.value.message == "cannot read an attribute of 't.outer': expected '>'"


def test_empty_region_and_empty_module() -> None:
    decl = (
        '  "func.func"() <{function_type = () -> (), sym_name = "d", sym_visibility = "private"}>'
        " ({\n  }) : () -> ()\n"
    )
    module = gen.parse_generic(_module("^bb0:\n" + decl))
    assert module.funcs[0].regions[0].blocks == []
    empty = gen.parse_generic('"builtin.module"() ({\n^bb0:\n}) : () -> ()\n')
    assert len(empty.op.regions[0].blocks) == 1 and empty.body.ops == []


def test_dialect_resources_are_kept_and_printed_back() -> None:
    resources = '{-#\n  dialect_resources: {\n    builtin: {\n      r: "0x0400"\n    }\n  }\n#-}'
    module = gen.parse_generic(_module("", "\n" + resources + "\n"))
    assert gen.dialect_resources(module) == resources
    assert gen.print_generic(module).rstrip().endswith(resources)


def test_explicit_locations_are_kept_as_text() -> None:
    body = '    "func.return"(%arg0) : (i32) -> () loc(#loc2)\n'
    tail = '#loc1 = loc("x.py":1:2)\n#loc2 = loc("ret"(#loc1))\n'
    text = _module(_func("f", '%arg0: i32 loc("a"(#loc1))', "(i32) -> i32", body), tail)
    positions = gen.Positions(
        ops=[Location("u.mlir", 1, 1), Location("u.mlir", 2, 1), Location("u.mlir", 3, 5)],
        args=[Location("u.mlir", 2, 10)],
    )
    module = gen.parse_generic(text, "u.mlir", positions=positions)
    func = module.funcs[0]
    ret = func.regions[0].entry.ops[0]
    arg = func.regions[0].entry.args[0]
    assert ret.loc_text == 'loc("ret"("x.py":1:2))'
    assert ret.location == Location("u.mlir", 3, 5)
    assert arg.location == Location("u.mlir", 2, 10)
    assert arg.loc_text == 'loc("a"("x.py":1:2))'
    printed = gen.print_generic(module)
    assert 'loc("ret"("x.py":1:2))' in printed and 'loc("a"("x.py":1:2))' in printed


# -- printing ---------------------------------------------------------------------------------


def test_print_then_parse_keeps_structure() -> None:
    body = (
        '    %0:2 = "t.pair"(%arg0) <{k = 1 : i64}> : (i32) -> (i32, f32) loc("-":2:5)\n'
        '    %1 = "t.wrap"(%0#1) ({\n'
        "    ^bb0(%arg1: f32):\n"
        '      "t.yield"(%arg1) : (f32) -> ()\n'
        '    }) {a = "s"} : (f32) -> f32 loc("-":3:5)\n'
        '    "func.return"(%1) : (f32) -> () loc("-":5:5)\n'
    )
    first = gen.parse_generic(_module(_func("f", "%arg0: i32", "(i32) -> f32", body)))
    second = gen.parse_generic(gen.print_generic(first))

    def shape(module: ir.Module) -> list[tuple]:
        index = {}
        rows = []
        for op in module.walk():
            for r in op.results:
                index[id(r)] = len(index)
            for region in op.regions:
                for block in region.blocks:
                    for a in block.args:
                        index[id(a)] = len(index)
            rows.append(
                (
                    op.name,
                    [index.get(id(v)) for v in op.operands],
                    [str(r.type) for r in op.results],
                    {k: str(v) for k, v in op.properties.items()},
                    {k: str(v) for k, v in op.attributes.items()},
                    op.location,
                )
            )
        return rows

    assert shape(second) == shape(first)


def test_print_uses_positions_when_there_is_no_loc_text() -> None:
    module = gen.parse_generic(_module('  "t.op"() : () -> () loc("-":7:3)\n'), 'my "f".mlir')
    assert 'loc("my \\"f\\".mlir":7:3)' in gen.print_generic(module)
    assert "loc(" not in gen.print_generic(module, with_locs=False)


def test_markers_name_each_op() -> None:
    module = gen.parse_generic(_module('  "t.op"() : () -> ()\n'))
    markers: list[ir.Op] = []
    text = gen.print_generic(module, markers=markers)
    assert [op.name for op in markers] == ["t.op", "builtin.module"]  # in print order
    assert f'"t.op"() : () -> () loc("{gen.OP_MARKER}0")' in text
