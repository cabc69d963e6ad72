"""Large ``dense<"0x...">`` constants, read and written by ``shardwise propagate`` against the
reference. MLIR re-prints a hex literal its own way (upper case, a splat as one value, its own
packing of i1), so what reaches our printer is MLIR's form, which it checks without the hex
digits (`pretty_printer._upper_hex`); each crafted input must print as the reference does."""

from __future__ import annotations

import pytest

from shardwise import passes
from shardwise.io import pretty_printer
from shardwise.io.mlir import load_text, write_text
from shardwise.io.reference import run_pass

_PIPELINE = "sdy-propagation-pipeline"
_VARIED = bytes((i * 37 + 11) % 256 for i in range(8192))

# name -> (element type, element count, hex digits as written)
_CONSTANTS = {
    "f32_upper": ("f32", 2048, _VARIED.hex().upper()),
    "f32_lower": ("f32", 2048, _VARIED.hex()),
    "f32_splat": ("f32", 2048, "0000803F" * 2048),
    "f32_splat_lower": ("f32", 2048, "0000803f" * 2048),
    "i1": ("i1", 8192, bytes(i % 3 == 0 for i in range(8192)).hex().upper()),
    "bf16": ("bf16", 4096, _VARIED.hex().upper()),
    "complex_f32": ("complex<f32>", 1024, _VARIED.hex().upper()),
    "i8": ("i8", 8192, _VARIED.hex().upper()),
    "ui16_mixed_case": ("ui16", 4096, _VARIED.hex()[:8000].upper() + _VARIED.hex()[8000:]),
}


def _module(element: str, count: int, digits: str) -> str:
    tensor = f"tensor<{count}x{element}>"
    return f"""module {{
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%arg0: {tensor} {{sdy.sharding = #sdy.sharding<@mesh, [{{"x"}}]>}}) -> ({tensor}, {tensor}) {{
    %0 = stablehlo.constant dense<"0x{digits}"> : {tensor}
    %1 = stablehlo.constant dense<"0x{digits}"> : {tensor}
    return %0, %1 : {tensor}, {tensor}
  }}
}}
"""


@pytest.mark.parametrize("name", _CONSTANTS)
@pytest.mark.parametrize("fast", [True, False], ids=["hex_skipped", "hex_checked"])
def test_hex_constants_print_as_the_reference(
    name: str, fast: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not fast:
        monkeypatch.setattr(pretty_printer, "_LONG_HEX", 10**9)
    text = _module(*_CONSTANTS[name])
    module = load_text(text, "t.mlir")
    assert write_text(module) == run_pass(text, None)
    passes.prepare_pass(_PIPELINE)(module)
    assert write_text(module) == run_pass(text, _PIPELINE)


_TAIL = '"> : tensor<4096xi8>'
_HEX = "0A" * 4096
# Texts for `Printer.check` (the first takes the fast path); the second must agree with it.
_CHECKED = {
    "plain": 'dense<"0x' + _HEX + _TAIL,
    "lower_hex": 'dense<"0x' + _HEX.lower() + _TAIL,
    "empty_hex_long_tail": 'dense<"0x"> : tensor<0xi8, #x.e<' + "a" * 5000 + ">>",
    "loc_in_tail": 'dense<"0x' + _HEX + '"> : tensor<4096xi8> loc("a")',
    "escape_in_tail": 'dense<"0x' + _HEX + '"> : tensor<4096x!x.t<"\\"">>',
    "non_ascii_in_tail": 'dense<"0x' + _HEX + '"> : tensor<4096x!x.t<"\u00e9">>',
    "non_ascii_in_hex": 'dense<"0x' + _HEX + '\u00c9"> : tensor<4096xi8>',
    "equal_list_in_tail": 'dense<"0x' + _HEX + '"> : tensor<4096xi8, #x.e<dense<[1, 1]>>>',
    "empty_closed_priority": 'dense<"0x' + _HEX + '"> : tensor<4096xi8, #x.e<{}p1>>',
}


def _check(text: str) -> str | None:
    try:
        return pretty_printer.Printer({}, {}).check(text)
    except pretty_printer.Unsupported:
        return None


@pytest.mark.parametrize("name", _CHECKED)
def test_the_hex_fast_path_accepts_what_the_full_check_accepts(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = _CHECKED[name]
    fast = _check(text)
    monkeypatch.setattr(pretty_printer, "_LONG_HEX", 10**9)
    assert fast == _check(text)
    assert fast in (text, None)
