"""The loader looks for ``{-#`` in the input once, and not at all for an alias table or a
resource block in a printout made in local scope (which has neither; `get_asm`'s, where MLIR
cannot print into a file): the same modules as when it looked, printed as the reference prints
them, even when strings hold those marks."""

from __future__ import annotations

import pytest

from shardwise.io import generic as gen
from shardwise.io import mlir
from shardwise.io.reference import run_pass

# Strings that hold alias lines and newlines (MLIR prints them escaped: no line of the printout
# starts with an alias); with a resource block's marks, the input is printed in full.
_MARKS = '"#loc1 = loc(\\"a.py\\":1:2)\\0A#loc2 = loc(unknown)\\0A"'
_PLAIN = """module attributes {mhlo.note = MARKS} {
  func.func @main(%arg0: tensor<4xf32> {mhlo.name = MARKS}) -> tensor<4xf32> {
    %0 = stablehlo.custom_call @foo(%arg0) {backend_config = MARKS} : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
"""
_TEXTS = {
    "plain": _PLAIN.replace("MARKS", _MARKS),
    "resource_marks_in_strings": _PLAIN.replace("MARKS", _MARKS[:-1] + '{-# x #-}"'),
    "locations": """module {
  func.func @main(%arg0: tensor<4xf32> loc("x")) -> tensor<4xf32> {
    %0 = stablehlo.add %arg0, %arg0 : tensor<4xf32> loc(#loc1)
    return %0 : tensor<4xf32> loc(#loc1)
  } loc(#loc1)
} loc(#loc1)
#loc1 = loc("a.py":3:4)
""",
    "resources": """module {
  func.func @main() -> tensor<2xf32> {
    %0 = stablehlo.constant dense_resource<blob> : tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}
{-#
  dialect_resources: {
    builtin: {
      blob: "0x040000000000803F00000040"
    }
  }
#-}
""",
}
# Printed in local scope (when printed through `get_asm`); with locations (`debug_info` of the
# reference).
_KIND = {
    "plain": (True, False),
    "resource_marks_in_strings": (False, False),
    "locations": (False, True),
    "resources": (False, False),
}


@pytest.mark.parametrize("to_file", [True, False], ids=["file", "get_asm"])
@pytest.mark.parametrize("name", _TEXTS)
def test_loads_print_as_the_reference_with_or_without_the_searches(
    monkeypatch: pytest.MonkeyPatch, name: str, to_file: bool
) -> None:
    text = _TEXTS[name]
    if not to_file:
        monkeypatch.setattr(mlir, "_temporary_folder", lambda: None)
    form = mlir.GenericForm.of(text, "t.mlir")
    local_scope, debug_info = _KIND[name]
    assert form.local_scope is (local_scope and not to_file)
    module = form.load()
    assert mlir.write_text(module) == run_pass(text, None, debug_info=debug_info)
    # The printout read as if its scope were unknown (every search made): the same module.
    searched = gen.parse_generic(form.printed, form.filename, mlir._sdy_parser(), form.positions)
    assert gen.print_generic(searched) == gen.print_generic(module)
    assert gen.dialect_resources(searched) == gen.dialect_resources(module)
