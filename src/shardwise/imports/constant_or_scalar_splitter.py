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

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from shardwise.imports.flatten_call_graph import clone_func_recursively
from shardwise.ir import (
    Module,
    Op,
    Region,
    SymbolTable,
    TensorType,
    Value,
    clone_op,
    ops_in_post_order,
    release_later,
    string_attr_value,
    symbol_ref,
)
from shardwise.passes import sdy_pass
from shardwise.sdy.call_graph import callee_name, funcs_in_call_graph_order, original_func_name
from shardwise.sdy.op_properties import ELEMENTWISE_OPS, is_elementwise

__all__ = ["constant_or_scalar_splitter"]

_NAMED_COMPUTATION = frozenset({"sdy.named_computation"})

_SHAPE_OPS = frozenset({"stablehlo.broadcast_in_dim", "stablehlo.reshape", "stablehlo.slice"})
_NOT_PURE = frozenset({"sdy.sharding_constraint"})
_GROUP = "sdy.sharding_group"
_SKIPPED = frozenset({"func.func", _GROUP})
# Region-free ops of these names are constant-preserving whatever their types.
_PRESERVING = (_SHAPE_OPS | ELEMENTWISE_OPS) - _NOT_PURE
# A constant expression: a constant or iota, or a constant-preserving op of constants.
_SOURCES = frozenset({"sdy.constant", "stablehlo.iota"})


@dataclass
class _State:
    module: Module
    table: SymbolTable
    has_groups: bool
    non_const_named: set[str] = field(default_factory=set)
    non_const_funcs: set[str] = field(default_factory=set)
    # Clones to insert before an original op, in insertion order; applied once per region
    # (inserting one by one is quadratic in the block size).
    pending: dict[Op, list[Op]] = field(default_factory=dict)
    # The sharding-group users of an original result, newest use first (MLIR's use-list
    # order): read once per result, as they do not change while its region is split (groups
    # are never rewired, their clones use the clones).
    groups: dict[Value, list[Op]] = field(default_factory=dict)

    def group_users(self, result: Value) -> list[Op]:
        if not self.has_groups:
            return []
        users = self.groups.get(result)
        if users is None:
            uses = reversed(list(dict.fromkeys(result.uses)))
            users = [user for user, _ in uses if user.name == _GROUP]
            self.groups[result] = users
        return users

    def insert_before(self, anchor: Op, op: Op) -> None:
        op.parent = anchor.parent
        self.pending.setdefault(anchor, []).append(op)

    def flush(self, erased: set[Op]) -> None:
        """Insert the pending clones and take the `erased` ops out: one pass per block."""
        pending = self.pending
        blocks = {id(a.parent): a.parent for a in pending if a.parent is not None}
        blocks.update({id(op.parent): op.parent for op in erased if op.parent is not None})
        for block in blocks.values():
            ops: list[Op] = []
            for op in block.ops:
                clones = pending.get(op)
                if clones is not None:
                    ops += clones
                if op not in erased:
                    ops.append(op)
            block.ops = ops
        for op in erased:
            op.parent = None
        release_later(erased)
        pending.clear()
        self.groups.clear()


def _is_scalar(value: Value) -> bool:
    return isinstance(value.type, TensorType) and value.type.rank == 0


@dataclass
class _Walked:
    """What the pass needs to know of the module before splitting, found in one walk."""

    ops: list[Op] = field(default_factory=list)  # the whole module, in pre-order
    constants: list[Op] = field(default_factory=list)  # the ``stablehlo.constant`` ops
    calls: dict[Op, list[Op]] = field(default_factory=dict)  # `calls_by_func`
    with_named: set[Op] = field(default_factory=set)  # funcs holding a named computation
    has_groups: bool = False  # any ``sdy.sharding_group`` (the pass only clones existing ones)
    # The ops of each func with one region and no named computation, in walk order: what
    # `_walk_skipping_named_computations` yields (the func's body changes only after that).
    bodies: dict[Op, list[Op]] = field(default_factory=dict)


def _walk_module(module: Module) -> _Walked:
    ops = [module.op]
    walked = _Walked(ops=ops)
    for top in module.body.ops:
        mine = top.walk_list()
        ops += mine
        constants, calls, names = walked.constants, [], set()
        for op in mine:  # one loop: each op read once
            name = op.name
            names.add(name)
            if name == "stablehlo.constant":
                constants.append(op)
            elif name == "func.call":
                calls.append(op)
        if top.name == "func.func" and top.regions and top.regions[0].blocks:
            walked.calls[top] = calls
        if "sdy.named_computation" in names:
            walked.with_named.add(top)
        elif top.name == "func.func" and len(top.regions) == 1:
            walked.bodies[top] = mine[1:]
        walked.has_groups = walked.has_groups or _GROUP in names
    return walked


def _relink_uses_in_pre_order(ops: list[Op]) -> None:
    """Every use list becomes the pre-order of its users (the op before its regions' ops).

    This is what the reference's use lists look like after this pass's dialect conversion,
    whatever the order before (after parsing, uses inside a region op's regions come before
    the op's own). `ops`: the whole module in pre-order. A use list is sorted by the position
    of its users there (uses by ops outside the module are dropped), which is the list that
    visiting `ops` and appending each operand's use would build, without rebuilding them all.
    """
    position = {op: i for i, op in enumerate(ops)}
    for op in ops:
        for value in op.results:
            uses = value.uses
            if len(uses) > 1 or (uses and uses[0][0] not in position):
                _sort_uses(uses, position)
        if op.regions:
            for region in op.regions:
                for block in region.blocks:
                    for arg in block.args:
                        uses = arg.uses
                        if len(uses) > 1 or (uses and uses[0][0] not in position):
                            _sort_uses(uses, position)


def _sort_uses(uses: list[tuple[Op, int]], position: dict[Op, int]) -> None:
    last, last_index = -1, -1
    for user, index in uses:  # usually in order already: checked without sorting
        at = position.get(user)
        if at is None or at < last or (at == last and index < last_index):
            break
        last, last_index = at, index
    else:
        return
    kept = [use for use in uses if use[0] in position]
    kept.sort(key=lambda use: (position[use[0]], use[1]))
    uses[:] = kept


def _to_sdy_constants(constants: list[Op]) -> None:
    """Retype in place; MLIR replaces the op, which reverses the result's use list."""
    for op in constants:
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
    # Sharding-group users go along.
    for user in st.group_users(result):
        st.insert_before(op, clone_op(user, mapping))


def _clone_sub_computation(result: Value, st: _State) -> Value:
    if _is_scalar(result):
        return result
    mapping: dict[Value, Value] = {}
    _clone_into(result, mapping, st)
    return mapping[result]


def _walk_skipping_named_computations(region: Region) -> Iterator[Op]:
    """Pre-order, without entering named computations (each is split on its own).

    The blocks are not copied: clones are inserted and originals erased after the walk.
    """
    for block in region.blocks:
        for op in block.ops:
            yield op
            if op.regions and op.name != "sdy.named_computation":
                for nested in op.regions:
                    yield from _walk_skipping_named_computations(nested)


def _unused(ops: list[Op]) -> set[Op]:
    """Release, in order, each op whose users (if any) are all sharding groups, with them:
    their uses are dropped, and the set of them returned for the blocks to leave them out."""
    erased: set[Op] = set()
    for op in ops:
        users = []
        for result in op.results:
            for user, _ in result.uses:
                users.append(user)
        if users:
            if any(u.name != _GROUP for u in users):
                continue
            for user in dict.fromkeys(users):
                user.drop_operands()
                erased.add(user)
        if op.regions:  # named computations carry regions
            for nested in op.walk():
                nested.drop_operands()
        else:
            op.drop_operands()
        erased.add(op)
    return erased


def _split_region(ops: Iterable[Op], func_name: str, named: Op | None, st: _State) -> None:
    """Split the constant expressions of a region, given as its walk (a func body or
    `named`'s body, without entering named computations).

    `func_name`: the original name of the func being split. A non-constant op in the region
    marks the func and `named` (the named computation every op of the walk is nested in, if
    any) as such: this happens once, at the first such op, whose position matters for calls
    of the func from inside itself.
    """
    constants: dict[Op, None] = {}
    expansions: dict[Op, None] = {}
    marked = False
    for op in ops:
        name = op.name
        if name in _SKIPPED:
            continue
        if name in _SOURCES:
            constants[op] = None
            continue
        operands = op.operands
        if (name in _PRESERVING and not op.regions) or _is_constant_preserving(op, st):
            for v in operands:
                # A block argument's owner is a block, never in `constants`.
                if v.owner not in constants:
                    break
            else:
                constants[op] = None
                continue
        elif not marked and not op.is_terminator:
            marked = True
            st.non_const_funcs.add(func_name)
            if named is not None:
                st.non_const_named.add(string_attr_value(named.get_attr("name")))
        if name == "stablehlo.broadcast_in_dim" and _is_scalar(operands[0]):
            expansions[op] = None
            continue
        for i, operand in enumerate(operands):
            owner = operand.owner
            if owner in constants or owner in expansions:
                op.set_operand(i, _clone_sub_computation(operand, st))
    st.flush(_unused([*expansions, *reversed(constants)]))


@sdy_pass("sdy-constant-or-scalar-splitter")
def constant_or_scalar_splitter(module: Module) -> None:
    """Convert constants to ``sdy.constant`` and split constant/scalar-broadcast sub-graphs."""
    walked = _walk_module(module)
    _relink_uses_in_pre_order(walked.ops)
    _to_sdy_constants(walked.constants)
    st = _State(module, SymbolTable(module), walked.has_groups)
    for func in funcs_in_call_graph_order(module, calls=walked.calls):
        func_name = original_func_name(func)
        if func in walked.with_named:
            named = ops_in_post_order(func, _NAMED_COMPUTATION)
            for op in named:
                _split_region(_walk_skipping_named_computations(op.regions[0]), func_name, op, st)
        body: Iterable[Op] | None = walked.bodies.get(func)
        if body is None:
            body = _walk_skipping_named_computations(func.regions[0])
        _split_region(body, func_name, None, st)
