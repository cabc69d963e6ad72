"""`sdy-constant-or-scalar-splitter`: give every non-constant user its own constant copy.

Shardy's import/constant_or_scalar_splitter.cc. ``stablehlo.constant`` becomes
``sdy.constant`` (which is never folded or deduped). Then, per func (callees first) and per
named computation, a constant expression (constants, iota, and pure broadcast / reshape /
slice / elementwise ops, calls and named computations of nothing but such ops, applied to
constant expressions) is cloned for each non-constant user, and so is every broadcast of a
scalar, so that users do not share (and fight over) one sharding. Scalars are not cloned.
The originals, left unused, are erased with their ``sdy.sharding_group`` users.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from shardwise.imports.calls import clone_func_recursively
from shardwise.imports.common import callee_name, funcs_in_call_graph_order, original_func_name
from shardwise.ir import (
    Module,
    Op,
    Region,
    SymbolTable,
    TensorType,
    Value,
    clone_op,
    string_attr_value,
    symbol_ref,
)
from shardwise.propagation.op_properties import is_elementwise

__all__ = ["constant_or_scalar_splitter"]

_SHAPE_OPS = frozenset({"stablehlo.broadcast_in_dim", "stablehlo.reshape", "stablehlo.slice"})
_NOT_PURE = frozenset({"sdy.sharding_constraint"})


@dataclass
class _State:
    module: Module
    table: SymbolTable
    non_const_named: set[str] = field(default_factory=set)
    non_const_funcs: set[str] = field(default_factory=set)
    # Clones to insert before an original op, in insertion order; applied once per region
    # (inserting one by one is quadratic in the block size).
    pending: dict[Op, list[Op]] = field(default_factory=dict)

    def insert_before(self, anchor: Op, op: Op) -> None:
        op.parent = anchor.parent
        self.pending.setdefault(anchor, []).append(op)

    def flush(self) -> None:
        blocks = {id(a.parent): a.parent for a in self.pending if a.parent is not None}
        for block in blocks.values():
            ops: list[Op] = []
            for op in block.ops:
                ops.extend(self.pending.get(op, ()))
                ops.append(op)
            block.ops = ops
        self.pending.clear()


def _is_scalar(value: Value) -> bool:
    return isinstance(value.type, TensorType) and value.type.rank == 0


def _relink_uses_in_pre_order(module: Module) -> None:
    """Every use list becomes the pre-order of its users (the op before its regions' ops).

    This is what the reference's use lists look like after this pass's dialect conversion,
    whatever the order before (after parsing, uses inside a region op's regions come before
    the op's own).
    """
    ops = list(module.walk())
    for op in ops:
        for result in op.results:
            result.uses.clear()
        for region in op.regions:
            for block in region.blocks:
                for arg in block.args:
                    arg.uses.clear()
    for op in ops:
        for i, value in enumerate(op.operands):
            value.uses.append((op, i))


def _to_sdy_constants(module: Module) -> None:
    """Retype in place; MLIR replaces the op, which reverses the result's use list."""
    for op in module.walk():
        if op.name == "stablehlo.constant":
            op.name = "sdy.constant"
            op.results[0].uses.reverse()


def _is_constant_preserving(op: Op, st: _State) -> bool:
    if op.name == "func.call":
        callee = st.table.lookup(callee_name(op))
        return callee is not None and original_func_name(callee) not in st.non_const_funcs
    if op.name == "sdy.named_computation":
        return string_attr_value(op.get_attr("name")) not in st.non_const_named
    if op.regions or op.name in _NOT_PURE:
        return False
    return op.name in _SHAPE_OPS or is_elementwise(op)


def _is_scalar_expansion(op: Op) -> bool:
    return op.name == "stablehlo.broadcast_in_dim" and _is_scalar(op.operands[0])


def _clone_into(result: Value, mapping: dict[Value, Value], st: _State) -> None:
    """Clone `result`'s defining op (after its operands, recursively) right before it."""
    if _is_scalar(result) or result in mapping:
        return
    op = result.defining_op
    assert op is not None
    for operand in op.operands:
        if operand.defining_op is not None:
            _clone_into(operand, mapping, st)
    clone = clone_op(op, mapping)
    st.insert_before(op, clone)
    if clone.name == "func.call":
        func = st.table.lookup(callee_name(clone))
        assert func is not None
        clone.properties["callee"] = symbol_ref(
            st.table.insert(clone_func_recursively(func, st.table))
        )
    # Sharding-group users go along (uses walked newest first, as MLIR's use list).
    for user, _ in reversed(list(dict.fromkeys(result.uses))):
        if user.name == "sdy.sharding_group":
            st.insert_before(op, clone_op(user, mapping))


def _clone_sub_computation(result: Value, st: _State) -> Value:
    if _is_scalar(result):
        return result
    mapping: dict[Value, Value] = {}
    _clone_into(result, mapping, st)
    return mapping[result]


def _parent_named_computation(op: Op) -> Op | None:
    return next((a for a in op.ancestors() if a.name == "sdy.named_computation"), None)


def _process_op(op: Op, func_name: str, constants: dict, expansions: dict, st: _State) -> None:
    """`func_name`: the original name of the func being split (marked non-constant here)."""
    if op.name in ("func.func", "sdy.sharding_group"):
        return
    # A constant expression: a constant or iota, or a constant-preserving op of constants.
    if op.name in ("sdy.constant", "stablehlo.iota"):
        constants[op] = None
        return
    preserving = _is_constant_preserving(op, st)
    if preserving and all(
        v.defining_op is not None and v.defining_op in constants for v in op.operands
    ):
        constants[op] = None
        return
    if not preserving and not op.is_terminator:
        named = _parent_named_computation(op)
        if named is not None:
            st.non_const_named.add(string_attr_value(named.get_attr("name")))
        st.non_const_funcs.add(func_name)
    if _is_scalar_expansion(op):
        expansions[op] = None
        return
    for i, operand in enumerate(op.operands):
        producer = operand.defining_op
        if producer is not None and (producer in constants or producer in expansions):
            op.set_operand(i, _clone_sub_computation(operand, st))


def _walk_skipping_named_computations(region: Region):
    for block in region.blocks:
        for op in list(block.ops):
            yield op
            if op.name != "sdy.named_computation":
                for nested in op.regions:
                    yield from _walk_skipping_named_computations(nested)


def _erase_unused(ops: list[Op]) -> None:
    """Erase, in order, each op whose users (if any) are all sharding groups, with them."""
    erased: set[Op] = set()
    for op in ops:
        users = [u for r in op.results for u, _ in r.uses]
        if any(u.name != "sdy.sharding_group" for u in users):
            continue
        for user in dict.fromkeys(users):
            user.drop_operands()
            erased.add(user)
        for nested in op.walk():  # named computations and calls carry regions
            nested.drop_operands()
        erased.add(op)
    blocks = {id(op.parent): op.parent for op in erased if op.parent is not None}
    for block in blocks.values():
        block.ops = [op for op in block.ops if op not in erased]
    for op in erased:
        op.parent = None


def _split_region(region: Region, func: Op, st: _State) -> None:
    constants: dict[Op, None] = {}
    expansions: dict[Op, None] = {}
    func_name = original_func_name(func)
    for op in _walk_skipping_named_computations(region):
        _process_op(op, func_name, constants, expansions, st)
    st.flush()
    _erase_unused([*expansions, *reversed(constants)])


def constant_or_scalar_splitter(module: Module) -> None:
    """Convert constants to ``sdy.constant`` and split constant/scalar-broadcast sub-graphs."""
    _relink_uses_in_pre_order(module)
    _to_sdy_constants(module)
    st = _State(module, SymbolTable(module))
    for func in funcs_in_call_graph_order(module):
        named = [op for op in func.walk_post_order() if op.name == "sdy.named_computation"]
        for op in named:
            _split_region(op.regions[0], func, st)
        _split_region(func.regions[0], func, st)
