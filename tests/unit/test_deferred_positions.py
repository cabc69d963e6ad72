"""Positions of an input with explicit locations are looked up on first use, and equal the
eager lookup (a parse of the blanked text); `has_loc_annotation` agrees with `blank_locations`."""

from __future__ import annotations

import pytest

from shardwise.errors import Location
from shardwise.io import mlir
from shardwise.io.deferred_positions import DeferredLocation

TEXT = """\
#loc1 = loc("f.py":3:4)
module {
  func.func @main(%arg0: tensor<8xf32> loc("x"), %arg1: tensor<8xf32>) -> tensor<8xf32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<8xf32> loc(#loc1)
    %1 = stablehlo.multiply %0, %0 : tensor<8xf32> loc(callsite("g"("f.py":1:1) at #loc1))
    return %1 : tensor<8xf32> loc(unknown)
  } loc("main")
} loc(unknown)
"""


def _eager(text: str, filename: str) -> tuple[list[Location], list[Location]]:
    blanked, _ = mlir.blank_locations(text)
    positions = mlir._walk_positions(mlir._parse(blanked), filename)
    return positions.ops, positions.args


def test_deferred_positions_equal_the_eager_ones() -> None:
    module = mlir.load_text(TEXT, "in.mlir")
    ops = list(module.walk())
    assert all(isinstance(op.location, DeferredLocation) for op in ops)
    eager_ops, eager_args = _eager(TEXT, "in.mlir")
    assert [op.location for op in ops] == eager_ops
    args = [a for op in ops for r in op.regions for b in r.blocks for a in b.args]
    assert [a.location for a in args] == eager_args
    add = next(op for op in ops if op.name == "stablehlo.add")
    assert str(add.location) == "in.mlir:4:10"
    assert (add.location.line, add.location.col) == (4, 10)
    assert add.location == Location("in.mlir", 4, 10) and Location("in.mlir", 4, 10) == add.location
    assert hash(add.location) == hash(Location("in.mlir", 4, 10))


def test_locations_kept_for_printing() -> None:
    module = mlir.load_text(TEXT, "in.mlir")
    add = next(op for op in module.walk() if op.name == "stablehlo.add")
    assert add.loc_text == 'loc("f.py":3:4)'
    assert 'loc("f.py":3:4)' in mlir.write_text(module)


@pytest.mark.parametrize(
    "text",
    [
        TEXT,
        "module {}",
        'module attributes {a = "loc(x)"} {}',
        "module {} // loc(x)",
        "module { func.func @my_loc(%a: tensor<f32>) { return } }",
        'module {} loc("a")',
        "#loc = loc(unknown)\nmodule {} loc(#loc)",
    ],
)
def test_has_loc_annotation_agrees_with_blank_locations(text: str) -> None:
    assert mlir.has_loc_annotation(text) == mlir.blank_locations(text)[1]


def test_positions_without_locations() -> None:
    text = "module {\n  func.func @f(%a: tensor<f32>) -> tensor<f32> {\n    return %a : tensor<f32>\n  }\n}\n"
    plain = mlir.load_text(text, "p.mlir")
    ret = next(op for op in plain.walk() if op.name == "func.return")
    assert str(ret.location) == "p.mlir:3:5" and ret.loc_text is None
    arg = next(op for op in plain.walk() if op.name == "func.func").regions[0].entry.args[0]
    assert arg.location == Location("p.mlir", 2, 16)
    assert "loc(" not in mlir.write_text(plain)


def test_repr_of_an_op_does_not_look_positions_up(monkeypatch) -> None:
    """A debug print of an op (or `list.index`'s ValueError, which formats `repr(op)`) must not
    cost a second MLIR parse of the input: its position is shown once it is looked up."""
    module = mlir.load_text(TEXT, "in.mlir")
    add = next(op for op in module.walk() if op.name == "stablehlo.add")
    assert not add.location.looked_up
    monkeypatch.setattr(mlir, "_parse", lambda *a, **k: pytest.fail("positions looked up"))
    assert repr(add).startswith("<Op stablehlo.add at DeferredLocation('in.mlir', ")
    with pytest.raises(ValueError):
        [].index(add)
    monkeypatch.undo()
    assert str(add.location) == "in.mlir:4:10" and add.location.looked_up
    assert repr(add) == "<Op stablehlo.add at in.mlir:4:10>"
