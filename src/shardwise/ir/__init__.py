"""Our small IR: Module, Op, Value, Block, Region, types and attribute containers.

This mirrors the structure of MLIR's generic op form so that any StableHLO + sdy module can be
held and written back unchanged: an op has a name, operands, results, inherent attributes
(``properties``, the generic form's ``<{...}>``), discardable attributes (``attributes``),
regions and a location. Attribute values are objects whose ``str()`` is their MLIR text:
`RawAttr` for anything we do not interpret, and the typed values of `shardwise.sharding`,
`shardwise.mesh` and the rules package for the `#sdy...` attributes we do.

Values compare by identity (they are graph nodes); the attribute and type values are frozen.
"""

from __future__ import annotations

from shardwise.ir.attrs import (
    UNIT,
    ArrayAttr,
    DictAttr,
    RawAttr,
    copy_attr,
    is_bare_key,
    split_top_level,
    string_attr,
    string_attr_value,
    unescape_string,
)
from shardwise.ir.core import (
    SHARDING_ATTR,
    SHARDING_RULE_ATTR,
    BatchErase,
    Block,
    Module,
    Op,
    Region,
    Value,
    bare_op,
    gc_paused,
    release_later,
    release_ops,
    releasing_erased,
)
from shardwise.ir.edit import (
    clone_op,
    clone_region,
    detach,
    insert_after_value,
    is_before_in_block,
    move_after,
    move_before,
    replace_uses_if,
)
from shardwise.ir.funcs import (
    func_arg_attrs,
    func_input_types,
    func_result_attrs,
    func_result_types,
)
from shardwise.ir.symbols import SymbolTable, symbol_ref, symbol_ref_name
from shardwise.ir.types import DYNAMIC, OpaqueType, TensorType, Type, parse_type
from shardwise.ir.walk import ops_in_post_order, ops_in_pre_order, ops_named

__all__ = [
    "bare_op",
    "gc_paused",
    "releasing_erased",
    "release_later",
    "release_ops",
    "TensorType",
    "OpaqueType",
    "Type",
    "DYNAMIC",
    "UNIT",
    "parse_type",
    "RawAttr",
    "DictAttr",
    "ArrayAttr",
    "Value",
    "Op",
    "BatchErase",
    "ops_in_pre_order",
    "ops_named",
    "ops_in_post_order",
    "Block",
    "Region",
    "Module",
    "SHARDING_ATTR",
    "SHARDING_RULE_ATTR",
    "func_arg_attrs",
    "func_result_attrs",
    "func_input_types",
    "func_result_types",
    "split_top_level",
    "is_bare_key",
    "copy_attr",
    "clone_op",
    "clone_region",
    "detach",
    "move_before",
    "move_after",
    "insert_after_value",
    "replace_uses_if",
    "is_before_in_block",
    "symbol_ref_name",
    "symbol_ref",
    "string_attr",
    "string_attr_value",
    "unescape_string",
    "SymbolTable",
]
