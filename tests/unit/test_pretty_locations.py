"""Locations in the pure-Python pretty printer (`shardwise.io.pretty_locations`) against MLIR.

Every expected text is MLIR's own printout of the same module with debug info
(`_write_with_mlir(..., debug_info=True)`: our generic text parsed and printed by the bindings),
never a text written from our printer.
"""

from __future__ import annotations

import pytest

from shardwise.io import mlir, pretty_locations, pretty_ops, pretty_printer, pretty_stablehlo  # noqa: F401 (registers formats)
from shardwise.io.generic_text import LOC_ALIASES, read_loc_table
from shardwise.io.mlir import load_text, write_text

MESH = 'sdy.mesh @mesh = <["x"=2]> loc("mesh")'


def _fast(module) -> str:
    return pretty_printer.print_pretty(
        module, pretty_ops.OP_PRINTERS, pretty_ops.NAME_HINTS, debug_info=True
    )


def _reference(module) -> str:
    return mlir._write_with_mlir(module, generic=False, debug_info=True)


def _module(body: str, args: str = '%arg0: tensor<8xf32> loc("x")', head: str = "") -> str:
    return (
        f"{head}module @m {{\n{MESH}\n"
        f'func.func @main({args}) -> tensor<8xf32> {{\n{body}\n}} loc("main")\n}} loc(unknown)\n'
    )


_CALLS = (
    '#f1 = loc("a.py":10:4 to :30)\n'
    '#f2 = loc("b.py":20:8 to 22:1)\n'
    '#n1 = loc("inner"(#f1))\n'
    '#n2 = loc("outer"(#f2))\n'
    "#c = loc(callsite(#n1 at #n2))\n"
)

# Each case: a module with locations of one kind (MLIR reads it; both print it).
CASES = {
    "names_and_files": _module(
        '%0 = stablehlo.negate %arg0 : tensor<8xf32> loc("neg")\n'
        '%1 = stablehlo.abs %0 : tensor<8xf32> loc("f.py":3:7)\n'
        '%2 = stablehlo.sqrt %1 : tensor<8xf32> loc("f.py":3:7 to :19)\n'
        '%3 = stablehlo.exponential %2 : tensor<8xf32> loc("f.py":3:7 to 5:2)\n'
        'return %3 : tensor<8xf32> loc("neg")'
    ),
    "unknown": _module(
        "%0 = stablehlo.negate %arg0 : tensor<8xf32> loc(unknown)\n"
        "return %0 : tensor<8xf32> loc(unknown)",
        "%arg0: tensor<8xf32> loc(unknown)",
    ),
    "shared_call_sites": _module(
        '%0 = stablehlo.negate %arg0 : tensor<8xf32> loc("jit(f)/neg"(#c))\n'
        '%1 = stablehlo.abs %0 : tensor<8xf32> loc("jit(f)/abs"(#c))\n'
        '%2 = stablehlo.sqrt %1 : tensor<8xf32> loc(callsite("g"("c.py":1:1) at #c))\n'
        "return %2 : tensor<8xf32> loc(#c)",
        head=_CALLS,
    ),
    "fused": _module(
        '%0 = stablehlo.negate %arg0 : tensor<8xf32> loc(fused["a", "b.py":1:2])\n'
        '%1 = stablehlo.abs %0 : tensor<8xf32> loc(fused<"meta">["a", "c"])\n'
        '%2 = stablehlo.sqrt %1 : tensor<8xf32> loc(fused<"only">["a"])\n'
        '%3 = stablehlo.sine %2 : tensor<8xf32> loc(fused[callsite("x" at "y"), "a"])\n'
        'return %3 : tensor<8xf32> loc("a")'
    ),
    "argument_locations": _module(
        '%0 = stablehlo.add %arg0, %arg1 : tensor<8xf32> loc("add")\n'
        'return %0 : tensor<8xf32> loc("ret")',
        '%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>} loc("params[0]"), '
        "%arg1: tensor<8xf32> loc(#c)",
        head=_CALLS,
    ),
    # A location first seen on an op (deferrable), then on an argument: it and its parts move
    # to the table before the module.
    "op_then_argument": _module(
        '%0 = stablehlo.negate %arg0 : tensor<8xf32> loc("n"(#c))\n'
        '%1 = sdy.named_computation<"g">(%0) (%a: tensor<8xf32> loc("n"(#c))) {\n'
        "  %2 = stablehlo.abs %a : tensor<8xf32> loc(#n1)\n"
        "  sdy.return %2 : tensor<8xf32> loc(#c)\n"
        '} : (tensor<8xf32>) -> tensor<8xf32> loc("nc")\n'
        'return %1 : tensor<8xf32> loc("ret")',
        head=_CALLS,
    ),
    "region_arguments": _module(
        '%c = stablehlo.constant dense<0.0> : tensor<f32> loc("zero")\n'
        "%0 = stablehlo.reduce(%arg0 init: %c) across dimensions = [0] : "
        "(tensor<8xf32>, tensor<f32>) -> tensor<f32>\n"
        ' reducer(%p: tensor<f32> loc("p"(#f1)), %q: tensor<f32> loc("q"))  {\n'
        '  %s = stablehlo.multiply %p, %q : tensor<f32> loc("mul")\n'
        '  stablehlo.return %s : tensor<f32> loc("r")\n'
        '} loc("reduce")\n'
        "%1:2 = stablehlo.while(%w = %0, %v = %c) : tensor<f32>, tensor<f32>\n"
        " cond {\n"
        '  %k = stablehlo.compare LT, %w, %v : (tensor<f32>, tensor<f32>) -> tensor<i1> loc("lt")\n'
        '  stablehlo.return %k : tensor<i1> loc("cr")\n'
        "} do {\n"
        '  stablehlo.return %w, %v : tensor<f32>, tensor<f32> loc("wr")\n'
        '} loc("while")\n'
        '%2 = "stablehlo.sort"(%arg0) ({\n'
        '^bb0(%x: tensor<f32> loc("sx"), %y: tensor<f32> loc(#c)):\n'
        '  %z = stablehlo.compare GT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1> loc("gt")\n'
        "  stablehlo.return %z : tensor<i1> loc(unknown)\n"
        '}) {dimension = 0 : i64} : (tensor<8xf32>) -> tensor<8xf32> loc("sort")\n'
        '%3 = stablehlo.broadcast_in_dim %1#0, dims = [] : (tensor<f32>) -> tensor<8xf32> loc("b")\n'
        '%4 = stablehlo.add %2, %3 : tensor<8xf32> loc("add")\n'
        'return %4 : tensor<8xf32> loc("ret")',
        head=_CALLS,
    ),
    "manual_computation": _module(
        '%0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}]>] '
        'out_shardings=[<@mesh, [{"x"}]>] manual_axes={"x"} '
        '(%a: tensor<4xf32> loc("local"(#f2))) {\n'
        '  %1 = stablehlo.negate %a : tensor<4xf32> loc("neg"(#f2))\n'
        '  sdy.return %1 : tensor<4xf32> loc("ret"(#f2))\n'
        '} : (tensor<8xf32>) -> tensor<8xf32> loc("mc"(#c))\n'
        'return %0 : tensor<8xf32> loc("r")',
        head=_CALLS,
    ),
    # Aliases deeper than 2: numbered after every shallower one, whatever the visit order.
    "deep_chain": _module(
        '%0 = stablehlo.negate %arg0 : tensor<8xf32> loc(callsite("d"(#c) at callsite(#n2 at #c)))\n'
        '%1 = stablehlo.abs %0 : tensor<8xf32> loc("shallow")\n'
        'return %1 : tensor<8xf32> loc(callsite(#c at "top":1:1))',
        head=_CALLS,
    ),
    "escaped_strings": _module(
        '%0 = stablehlo.negate %arg0 : tensor<8xf32> loc("say \\"hi\\"\\0A"("p\\\\q.py":1:2))\n'
        'return %0 : tensor<8xf32> loc("ret")'
    ),
}


@pytest.mark.parametrize("text", CASES.values(), ids=CASES.keys())
def test_prints_locations_as_mlir(text: str) -> None:
    module = load_text(text)
    want = _reference(module)
    assert "#loc" in want and "loc(#loc" in want  # MLIR really printed aliases
    assert _fast(module) == want


def test_table_before_and_after_the_module() -> None:
    """The comparison covers both tables: argument locations go before the module."""
    want = _reference(load_text(CASES["argument_locations"]))
    head, _, tail = want.partition("module @m")
    assert '= loc("params[0]")' in head and "= loc(" in tail
    assert 'loc("params[0]")' in want.split("\n")[head.count("\n") + 2]  # printed inline


def test_positions_without_debug_info_in_the_input() -> None:
    """A module read without loc(...) written with debug info: its positions in the file."""
    module = load_text(_module("return %arg0 : tensor<8xf32>").replace(' loc("x")', ""), "in.mlir")
    module.op.loc_text = None
    for op in module.walk():
        op.loc_text = None
    want = _reference(module)
    assert 'loc("in.mlir":' in want
    assert _fast(module) == want


# Locations MLIR would print otherwise (not in `FusedLoc::get`'s canonical form), or without a
# location at all: the MLIR path prints them.
def _set_loc(text: str):
    def mutate(module) -> None:
        op = next(op for op in module.walk() if op.name == "stablehlo.negate")
        op.loc_text = text

    return mutate


def _drop_loc(module) -> None:
    op = next(op for op in module.walk() if op.name == "stablehlo.negate")
    op.loc_text = None
    op.location = None


FALLBACKS = {
    "fused_duplicates": _set_loc('loc(fused["a", "a"])'),
    "fused_unknown": _set_loc('loc(fused["a", unknown, "b"])'),
    "fused_single": _set_loc('loc(fused["a"])'),
    "fused_nested": _set_loc('loc(fused["a", fused["b", "c"]])'),
    "name_of_unknown": _set_loc('loc("a"(unknown))'),
    "fused_attribute_metadata": _set_loc('loc(fused<{a = 1 : i32}>["a", "b"])'),
    "no_location": _drop_loc,
}


@pytest.mark.parametrize("mutate", FALLBACKS.values(), ids=FALLBACKS.keys())
def test_unusual_locations_take_the_mlir_path(mutate) -> None:
    module = load_text(CASES["names_and_files"])
    mutate(module)
    with pytest.raises(pretty_printer.Unsupported):
        _fast(module)
    assert write_text(module, debug_info=True) == _reference(module)


def test_debug_info_takes_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    module = load_text(CASES["shared_call_sites"])
    want = _reference(module)
    monkeypatch.setattr(mlir, "_write_with_mlir", lambda *a: pytest.fail("MLIR path"))
    monkeypatch.setattr(mlir, "CHECK_PRETTY", False)
    assert write_text(module) == want


# `LocationAliases.seed`: the input's alias table read one definition at a time must give each
# resolved text the id that reading the text whole gives, and leave out what `node` refuses.
_TABLES = {
    "nested_calls": (
        '#loc_f1 = loc("a.py":10:4 to :30)\n#loc_f2 = loc("b.py":20:8 to 22:1)\n'
        '#loc_n1 = loc("inner"(#loc_f1))\n#loc_n2 = loc("outer"(#loc_f2))\n'
        "#loc_c = loc(callsite(#loc_n1 at #loc_n2))\n"
        '#loc_d = loc(callsite("d"(#loc_c) at callsite(#loc_n2 at #loc_c)))\n'
    ),
    "fused_and_unknown": (
        '#loc_a = loc("a")\n#loc_u = loc(unknown)\n#loc_f = loc(fused<"m">[#loc_a, "b.py":1:2])\n'
        "#loc_g = loc(fused[#loc_f, callsite(#loc_a at #loc_u)])\n"
    ),
    "defined_after_use": (
        "#loc_p = loc(callsite(#loc_q at #loc_r))\n"
        '#loc_q = loc("q\\"#loc_r"(#loc_r))\n#loc_r = loc("r.py":1:2 to :5)\n'
    ),
    "unreadable_parts": (
        '#loc_a = loc("a")\n#loc_bad = loc(fused["a", "a"])\n'
        "#loc_uses_bad = loc(callsite(#loc_a at #loc_bad))\n"
        "#loc_missing = loc(callsite(#loc_a at #loc_nowhere))\n"
        '#loc_cycle = loc("x"(#loc_cycle))\n#loc_named_unknown = loc("n"(#loc_u))\n'
        "#loc_u = loc(unknown)\n"
    ),
}


def _read_whole(text: str) -> int | None:
    fresh = pretty_locations.LocationAliases(pretty_printer.Unsupported)
    try:
        return fresh.node(text, None)
    except pretty_printer.Unsupported:
        return None


@pytest.mark.parametrize("shapes", [True, False], ids=["load-shapes", "matched-here"])
@pytest.mark.parametrize("table", _TABLES.values(), ids=_TABLES.keys())
def test_seeded_aliases_read_as_their_whole_text(table: str, shapes: bool) -> None:
    """With the definitions the load matched (`LocTable.shapes`) or matching them itself."""
    _, loc_table = read_loc_table(table + "module {\n}\n")
    raw, resolved = loc_table.raw, loc_table.resolved
    seeded = pretty_locations.LocationAliases(pretty_printer.Unsupported)
    seeded.seed(raw, resolved, loc_table.shapes if shapes else None)
    assert len(resolved) == table.count("\n")
    for name, text in resolved.items():
        whole = pretty_locations.LocationAliases(pretty_printer.Unsupported)
        want = _read_whole(text)
        if want is None:
            assert text not in seeded.by_text, name
            continue
        whole.node(text, None)
        got = seeded.by_text[text]
        # The same location: same kind, text and parts, all the way down.
        assert _shape(seeded, got) == _shape(whole, whole.by_text[text]), name


def _shape(locs, node: int) -> tuple:
    return (
        locs.kinds[node],
        locs.texts[node],
        tuple(_shape(locs, c) for c in locs.children[node]),
    )


def test_unreadable_aliases_are_left_out() -> None:
    _, table = read_loc_table(_TABLES["unreadable_parts"] + "module {\n}\n")
    raw, resolved = table.raw, table.resolved
    seeded = pretty_locations.LocationAliases(pretty_printer.Unsupported)
    seeded.seed(raw, resolved)
    assert set(seeded.by_text) == {resolved["#loc_a"], resolved["#loc_u"]}


def test_a_loaded_module_prints_from_its_alias_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ops whose location is an alias are found by text, never read token by token."""
    module = load_text(CASES["op_then_argument"])
    want = _reference(module)
    op_texts = {op.loc_text for op in module.walk()}
    assert len(op_texts) >= 4
    tokens = pretty_locations._TOKEN_RE
    read_whole: list[str] = []

    class Counted:
        def findall(self, text: str, *span: int) -> list[str]:
            read_whole.append(text)
            return tokens.findall(text, *span)

    monkeypatch.setattr(pretty_locations, "_TOKEN_RE", Counted())
    assert _fast(module) == want
    assert not op_texts.intersection(read_whole), "an op's aliased location was read whole"
    # Without the table (a module built in memory, say) every location is read whole.
    del LOC_ALIASES[module]
    assert _fast(module) == want
    assert op_texts <= set(read_whole)


@pytest.mark.parametrize("char", ["\x01", "\x02", "\x03", "\x04", "\x05", "\x06"])
def test_marker_characters_are_refused(char: str) -> None:
    """The printer's markers must never come from a location's own text."""
    text = f'loc("a{char}b")'
    with pytest.raises(pretty_printer.Unsupported):
        pretty_locations.LocationAliases(pretty_printer.Unsupported).node(text, None)
    seeded = pretty_locations.LocationAliases(pretty_printer.Unsupported)
    seeded.seed({"#loc": text, "#loc1": 'loc("ok")'}, {"#loc": text, "#loc1": 'loc("ok")'})
    assert set(seeded.by_text) == {'loc("ok")'}
