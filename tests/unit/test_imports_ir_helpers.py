"""The rewriting helpers of `shardwise.ir` used by the import passes.

Expected values are MLIR's documented behaviour: `SymbolTable::insert` renames a clashing
symbol ``name_<k>`` with one counter per table; `Operation::clone` shares nothing mutable;
`replaceUsesWithIf` walks the use list newest first.
"""

from __future__ import annotations

import pytest

from shardwise.io.mlir import load_text
from shardwise.ir import (
    SHARDING_ATTR,
    SymbolTable,
    clone_op,
    func_arg_attrs,
    insert_after_value,
    is_before_in_block,
    move_after,
    replace_uses_if,
    symbol_ref,
    symbol_ref_name,
)

TEXT = """
sdy.mesh @mesh = <["a"=2]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}]>}) -> tensor<8xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8xf32>
  %1 = stablehlo.abs %arg0 : tensor<8xf32>
  %2 = stablehlo.add %0, %1 : tensor<8xf32>
  return %2 : tensor<8xf32>
}
func.func private @f(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
func.func private @f_0(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
"""


@pytest.fixture
def module():
    return load_text(TEXT)


def test_symbol_table_uniques_with_one_counter(module):
    table = SymbolTable(module)
    f = table.lookup("f")
    names = [table.insert(clone_op(f)) for _ in range(3)]
    # "f_0" exists, so the first clone burns counter 0 and takes "f_1".
    assert names == ["f_1", "f_2", "f_3"]
    assert [module.symbol_name(op) for op in module.body.ops][-3:] == names
    assert table.insert(clone_op(table.lookup("mesh"))) == "mesh_4"


def test_clone_shares_nothing_mutable(module):
    main = module.funcs[0]
    clone = clone_op(main)
    func_arg_attrs(clone, 0)[SHARDING_ATTR] = None
    assert func_arg_attrs(main, 0)[SHARDING_ATTR] is not None
    old_ops = list(main.walk())
    new_ops = list(clone.walk())
    assert [o.name for o in old_ops] == [o.name for o in new_ops]
    assert not {id(o) for o in old_ops} & {id(o) for o in new_ops}
    # Operands of the clone refer to the clone's own values.
    add = new_ops[3]
    assert add.operands[0].defining_op is new_ops[1]


def test_replace_uses_if_keeps_mlir_order(module):
    block = module.funcs[0].regions[0].entry
    arg = block.args[0]
    neg, abs_, add, _ = block.ops
    replace_uses_if(arg, neg.results[0], lambda op, _i: op is abs_)
    assert [op for op, _ in arg.uses] == [neg]
    assert [op for op, _ in neg.results[0].uses] == [add, abs_]


def test_moves(module):
    block = module.funcs[0].regions[0].entry
    neg, abs_, add, ret = block.ops
    move_after(neg, abs_)
    assert block.ops == [abs_, neg, add, ret]
    assert is_before_in_block(abs_, neg) and not is_before_in_block(add, neg)
    insert_after_value(add, block.args[0])
    assert block.ops[0] is add


@pytest.mark.parametrize(
    ("name", "text"), [("f", "@f"), ("a-b", '@"a-b"'), ("m.x$1", "@m.x$1"), ("1a", '@"1a"')]
)
def test_symbol_refs_round_trip(name: str, text: str):
    assert str(symbol_ref(name)) == text
    assert symbol_ref_name(text) == name
    # The attribute itself, and again (names are kept by text after the first lookup).
    for _ in range(2):
        assert symbol_ref_name(symbol_ref(name)) == name
        assert symbol_ref_name(f" {text} ") == name
