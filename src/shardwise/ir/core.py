"""The IR graph: Value, Op, Block, Region, Module (types in `types`, attributes in `attrs`;
the package's doc says what the IR mirrors). Values compare by identity: they are graph nodes."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from shardwise.errors import UNKNOWN_LOCATION, Location
from shardwise.ir.attrs import unescape_string
from shardwise.ir.types import Type

SHARDING_ATTR = "sdy.sharding"
SHARDING_RULE_ATTR = "sdy.sharding_rule"


class Value:
    """An SSA value: an op result or a block argument. Compared by identity."""

    __slots__ = ("type", "owner", "index", "uses", "name", "location", "loc_text", "__weakref__")

    def __init__(
        self,
        type: Type,
        owner: Op | Block,
        index: int,
        name: str = "",
        location: Location | None = None,
        loc_text: str | None = None,
    ) -> None:
        self.type = type
        self.owner = owner
        self.index = index
        self.uses: list[tuple[Op, int]] = []
        self.name = name
        self.location = location
        # A block argument's explicit ``loc(...)`` text, kept when the input was read with
        # locations (as `Op.loc_text`); None otherwise.
        self.loc_text = loc_text

    def __repr__(self) -> str:
        return f"<Value {self.name or '?'}: {self.type}>"

    @property
    def is_block_arg(self) -> bool:
        return isinstance(self.owner, Block)

    @property
    def defining_op(self) -> Op | None:
        return self.owner if isinstance(self.owner, Op) else None

    @property
    def loc(self) -> tuple[Location | None, str | None]:
        """Where the value is (MLIR's `Value::getLoc`): its defining op's location, or for a
        block argument its own; as (position, explicit ``loc(...)`` text or None)."""
        if isinstance(self.owner, Op):
            return self.owner.location, self.owner.loc_text
        return self.location, self.loc_text

    @property
    def users(self) -> list[Op]:
        """The ops using this value, in use order, each once."""
        seen: dict[int, Op] = {}
        for op, _ in self.uses:
            seen.setdefault(id(op), op)
        return list(seen.values())

    def replace_all_uses_with(self, other: Value, except_op: Op | None = None) -> None:
        """Move every use (but those of `except_op`) to `other`, in MLIR's use-list order.

        `uses` is kept in creation order; MLIR's use lists iterate newest first and prepend,
        so moving the newest use first reproduces the order MLIR ends up with.
        """
        if except_op is None and other is not self:
            # Every use moves: `set_operand` per use, without its search of this list.
            moved = self.uses[::-1]
            for op, i in moved:
                op.operands[i] = other
            other.uses += moved
            self.uses.clear()
            return
        for op, i in reversed(list(self.uses)):
            if op is not except_op:
                op.set_operand(i, other)


_NO_REGIONS: tuple = ()
_NO_SUCCESSORS: tuple = ()


class Op:
    """An operation in generic form."""

    __slots__ = (
        "name",
        "operands",
        "results",
        "properties",
        "attributes",
        "regions",
        "successors",
        "location",
        "loc_text",
        "parent",
        "__weakref__",
    )

    def __init__(
        self,
        name: str,
        operands: list[Value] | None = None,
        result_types: list[Type] | None = None,
        properties: dict[str, Any] | None = None,
        attributes: dict[str, Any] | None = None,
        regions: list[Region] | None = None,
        location: Location | None = None,
        loc_text: str | None = None,
        result_names: list[str] | None = None,
    ) -> None:
        self.name = name
        self.operands: list[Value] = []
        # The parser makes its ops without results (it adds them): no comprehension to run.
        self.results: list[Value] = (
            [
                Value(t, self, i, result_names[i] if result_names else "")
                for i, t in enumerate(result_types)
            ]
            if result_types
            else []
        )
        self.properties: dict[str, Any] = properties or {}
        self.attributes: dict[str, Any] = attributes or {}
        # Most ops have no region: they share one empty tuple (`add_region` makes the list),
        # so the walks' `op.regions` test reads no per-op object (a cache miss per op).
        self.regions: list[Region] = _NO_REGIONS  # type: ignore[assignment]
        # Block successors (``^bb1``) are rare: ops without share one empty tuple, as regions.
        self.successors: list[str] = _NO_SUCCESSORS  # type: ignore[assignment]
        self.location = location or UNKNOWN_LOCATION
        self.loc_text = loc_text
        self.parent: Block | None = None
        for v in operands or []:
            self.add_operand(v)
        for r in regions or []:
            self.add_region(r)

    def __repr__(self) -> str:
        # Not `str(location)` of a position not looked up yet: with debug info that is a second
        # MLIR parse of the whole input (and `list.index`'s ValueError formats `repr(op)`).
        loc = self.location
        return f"<Op {self.name} at {loc if loc.looked_up else repr(loc)}>"

    # -- operands ---------------------------------------------------------------------------

    def add_operand(self, value: Value) -> None:
        value.uses.append((self, len(self.operands)))
        self.operands.append(value)

    def set_operand(self, index: int, value: Value) -> None:
        old = self.operands[index]
        old.uses.remove((self, index))
        value.uses.append((self, index))
        self.operands[index] = value

    def drop_operands(self) -> None:
        for i, v in enumerate(self.operands):
            v.uses.remove((self, i))
        self.operands = []

    # -- structure --------------------------------------------------------------------------

    def add_region(self, region: Region) -> Region:
        region.parent = self
        if self.regions is _NO_REGIONS:
            self.regions = []
        self.regions.append(region)
        return region

    @property
    def parent_op(self) -> Op | None:
        if self.parent is None or self.parent.parent is None:
            return None
        return self.parent.parent.parent

    def ancestors(self) -> Iterator[Op]:
        op = self.parent_op
        while op is not None:
            yield op
            op = op.parent_op

    def walk(self) -> Iterator[Op]:
        """Pre-order: this op, then every op nested in its regions, in program order.

        An explicit stack instead of nested generators (a `yield from` per level made every op
        cost one generator frame per ancestor); as lazy as the recursive form: an op's regions
        are read when the walk resumes after yielding it.
        """
        yield self
        stack = [_nested_ops(self)] if self.regions else []
        while stack:
            for op in stack[-1]:  # a for loop, not next() per op: resumed after each descent
                yield op
                if op.regions:
                    stack.append(_nested_ops(op))
                    break
            else:
                stack.pop()

    def walk_list(self) -> list[Op]:
        """`list(self.walk())`, built by a loop per block: no generator step per op (taking
        the whole walk at once is most of its uses: a driver's seed, `Module.release`)."""
        found = [self]
        _append_pre_order(self, found)
        return found

    def walk_post_order(self) -> Iterator[Op]:
        """MLIR's default walk order: nested ops before their parent.

        Each block's op list is copied when the walk enters the block (ops erased or inserted
        while walking do not disturb it); an explicit stack, as in `walk`.
        """
        stack = [(self, _nested_ops_copied(self))]
        while stack:
            op, children = stack[-1]
            for child in children:  # resumed after each descent, as in `walk`
                if child.regions:
                    stack.append((child, _nested_ops_copied(child)))
                    break
                yield child
            else:
                stack.pop()
                yield op

    @property
    def is_terminator(self) -> bool:
        """The last op of a block, except in a module body (which has no terminator)."""
        block = self.parent
        if block is None or not block.ops or block.ops[-1] is not self:
            return False
        parent = block.parent_op
        return parent is not None and parent.name != "builtin.module"

    def erase(self) -> None:
        """Remove this op from its block; its results must be unused."""
        self._release()
        if self.parent is not None:
            self.parent.ops.remove(self)
            self.parent = None

    def _release(self) -> None:
        """The use-list half of `erase`: drop the uses this op and its nested ops make."""
        for result in self.results:
            assert not result.uses, f"erasing {self.name} with uses"
        if _ERASED:
            _ERASED[-1].append(self)
        if self.operands:
            self.drop_operands()
        for region in self.regions:
            for block in region.blocks:
                for op in reversed(list(block.ops)):
                    op.drop_operands()

    # -- attributes -------------------------------------------------------------------------

    def get_attr(self, name: str) -> Any | None:
        """An inherent or discardable attribute by name."""
        value = self.properties.get(name)
        if value is None:
            value = self.attributes.get(name)
        return value


_new = object.__new__


def bare_op(
    name: str,
    properties: dict[str, Any],
    attributes: dict[str, Any],
    location: Location,
    loc_text: str | None,
) -> Op:
    """`Op(name, properties=..., attributes=..., location=..., loc_text=...)`: no operands,
    results or regions yet, and its dicts taken as given, without `__init__`'s defaults and
    loops (the parser makes one per op of its input)."""
    op = _new(Op)
    op.name = name
    op.operands = []
    op.results = []
    op.properties = properties
    op.attributes = attributes
    op.regions = _NO_REGIONS  # type: ignore[assignment]
    op.successors = _NO_SUCCESSORS  # type: ignore[assignment]
    op.location = location
    op.loc_text = loc_text
    op.parent = None
    return op


class BatchErase:
    """Erase many ops of big blocks: each `erase` drops the op's uses at once (as `Op.erase`),
    and leaving the `with` block takes the ops out of their blocks' lists, one pass per block.

    Erasing them one by one is quadratic (`list.remove` scans the whole block each time).
    """

    def __init__(self) -> None:
        self._erased: dict[int, tuple[Block, set[int]]] = {}

    def erase(self, op: Op) -> None:
        op._release()
        if op.parent is not None:
            self._erased.setdefault(id(op.parent), (op.parent, set()))[1].add(id(op))
            op.parent = None

    def __enter__(self) -> BatchErase:
        return self

    def __exit__(self, *_exc: object) -> None:
        for block, ids in self._erased.values():
            block.ops[:] = [op for op in block.ops if id(op) not in ids]
        self._erased.clear()


def _append_pre_order(op: Op, found: list[Op]) -> None:
    for region in op.regions:
        for block in region.blocks:
            for nested in block.ops:
                found.append(nested)
                if nested.regions:
                    _append_pre_order(nested, found)


def _nested_ops(op: Op) -> Iterator[Op]:
    """The ops directly inside `op`'s regions, in program order."""
    for region in op.regions:
        for block in region.blocks:
            yield from block.ops


def _nested_ops_copied(op: Op) -> Iterator[Op]:
    """`_nested_ops`, each block's list copied when the iteration reaches the block."""
    for region in op.regions:
        for block in region.blocks:
            yield from list(block.ops)


class Block:
    """A list of ops with block arguments."""

    __slots__ = ("args", "ops", "parent", "label", "__weakref__")

    def __init__(self, arg_types: list[Type] | None = None, label: str = "") -> None:
        self.args: list[Value] = [Value(t, self, i) for i, t in enumerate(arg_types or [])]
        self.ops: list[Op] = []
        self.parent: Region | None = None
        self.label = label

    def add_arg(
        self,
        type: Type,
        name: str = "",
        location: Location | None = None,
        loc_text: str | None = None,
    ) -> Value:
        value = Value(type, self, len(self.args), name, location, loc_text)
        self.args.append(value)
        return value

    def append(self, op: Op) -> Op:
        op.parent = self
        self.ops.append(op)
        return op

    def insert(self, index: int, op: Op) -> Op:
        op.parent = self
        self.ops.insert(index, op)
        return op

    def insert_before(self, anchor: Op, op: Op) -> Op:
        return self.insert(self.ops.index(anchor), op)

    def insert_after(self, anchor: Op, op: Op) -> Op:
        return self.insert(self.ops.index(anchor) + 1, op)

    @property
    def parent_op(self) -> Op | None:
        return self.parent.parent if self.parent is not None else None

    @property
    def terminator(self) -> Op | None:
        return self.ops[-1] if self.ops else None


class Region:
    """A list of blocks owned by an op."""

    __slots__ = ("blocks", "parent", "__weakref__")

    def __init__(self, blocks: list[Block] | None = None) -> None:
        self.blocks: list[Block] = []
        self.parent: Op | None = None
        for b in blocks or []:
            self.add_block(b)

    def add_block(self, block: Block) -> Block:
        block.parent = self
        self.blocks.append(block)
        return block

    @property
    def entry(self) -> Block:
        return self.blocks[0]


class Module:
    """A `builtin.module` op plus convenience views (meshes, funcs) and the source text."""

    def __init__(self, op: Op, source: str | None = None, filename: str = "-") -> None:
        assert op.name == "builtin.module", op.name
        self.op = op
        self.source = source
        self.filename = filename
        # Read with ops of unregistered dialects allowed: written back the same way. Those
        # ops' names (MLIR gives them no traits: no rule, unknown effects, maybe a symbol table).
        self.allow_unregistered_dialect = False
        self.unregistered_ops: frozenset[str] = frozenset()
        # A pass changed value types (global to local, padding): the ops' own type checks,
        # which only MLIR's verifier has (stablehlo shape inference), run when it is written.
        self.types_changed = False
        # MLIR's verifier of the ops' own types, which the core has no copy of: set by the
        # loader (`shardwise.io`), run between the passes of a chain once types changed.
        self.verify_types: Callable[[Module], None] | None = None

    @property
    def body(self) -> Block:
        return self.op.regions[0].entry

    def walk(self) -> Iterator[Op]:
        return self.op.walk()

    def release(self) -> None:
        """Break the reference cycles of every op in the module (parent links, value owners,
        use lists), so that dropping the module frees it at once by reference counting.

        Left to the cyclic GC, a 20k-op module is garbage that one full collection (at the
        latest, the one at interpreter exit) has to walk: 0.3-0.5 s. The module is unusable
        afterwards; ops erased earlier keep their own (small) cycles.
        """
        release_ops(self.op.walk_list())

    def top_level_ops(self, name: str) -> Iterator[Op]:
        return (op for op in self.body.ops if op.name == name)

    @property
    def funcs(self) -> list[Op]:
        return list(self.top_level_ops("func.func"))

    def symbol_name(self, op: Op) -> str | None:
        """The ``sym_name`` of a symbol op, unquoted."""
        attr = op.get_attr("sym_name")
        if attr is None:
            return None
        text = str(attr)
        return unescape_string(text[1:-1]) if text.startswith('"') else text

    def lookup_symbol(self, name: str) -> Op | None:
        """The first top-level op whose `symbol_name` is `name` (a scan: passes call this
        per call op, so `symbol_name` is inlined)."""
        for op in self.body.ops:
            attr = op.properties.get("sym_name")
            if attr is None:
                attr = op.attributes.get("sym_name")
                if attr is None:
                    continue
            text = str(attr)
            if (unescape_string(text[1:-1]) if text.startswith('"') else text) == name:
                return op
        return None

    def meshes(self) -> dict[str, Any]:
        """Every ``sdy.mesh`` symbol: name -> `Mesh` (or the raw attribute if unparsed)."""
        return {
            self.symbol_name(op) or "": op.get_attr("mesh") for op in self.top_level_ops("sdy.mesh")
        }


def release_ops(ops: list[Op]) -> None:
    """Break the reference cycles of `ops` (`Module.release`); give it the ops of a module
    taken before passes erased some, and the erased ones are freed at once too."""
    # Released, the IR leaves its own types on purpose: value owners become None.
    for op in ops:
        op.parent = None
        op.operands = []
        for value in op.results:
            value.owner = None  # type: ignore[assignment]
            value.uses = []
        for region in op.regions:
            region.parent = None
            for block in region.blocks:
                block.parent = None
                for arg in block.args:
                    arg.owner = None  # type: ignore[assignment]
                    arg.uses = []


# The open `releasing_erased` blocks' lists of erased ops (and discarded blocks), innermost
# last.
_ERASED: list[list[Op | Block]] = []


def release_later(dropped: Iterable[Op | Block]) -> None:
    """Note ops a pass took out of the IR itself (their uses dropped: `erase` without its
    list scan) or blocks it took out of their region whole, to be released with the erased
    ops when the `releasing_erased` block ends."""
    if _ERASED:
        _ERASED[-1].extend(dropped)


@contextlib.contextmanager
def releasing_erased() -> Iterator[None]:
    """Keep the ops erased inside the block, and break their reference cycles when it ends
    (as `release_ops` does, but only in what each still owns: `_release_owned`), so that they
    are freed then by reference counting.

    An erased op keeps its own cycles (results and their owner, regions and their parent):
    left to the cyclic GC, they are the young generation a collection walks once the GC
    resumes after `gc_paused` (16k objects, 2.3 ms, at the end of a 0.08 s run of a 128-layer
    conv stack whose calls are inlined and outlined again; 76k objects, 30 ms, for a 49k-op
    GPT train step). Kept alive until the block ends, no erased op's `id` is reused by a new
    op inside it (as when the GC is paused), so identity-keyed tables stay sound. Only for
    code that drops every erased op by the end of the block: released ops are unusable.
    """
    erased: list[Op | Block] = []
    _ERASED.append(erased)
    try:
        yield
    finally:
        _ERASED.pop()
        for item in erased:
            if isinstance(item, Block):
                _release_block(item)
            elif item.parent is None:  # not put back into a block since
                _release_owned(item)


def _release_owned(op: Op) -> None:
    """`release_ops` of an erased op and what it still owns: a region, block or nested op
    moved elsewhere before the erase (a region taken over by a new op) is left alone."""
    for value in op.results:  # their users, if any, are in the same erased tree
        value.owner = None  # type: ignore[assignment]
        value.uses = []
    for region in op.regions:
        if region.parent is not op:
            continue
        region.parent = None
        for block in region.blocks:
            if block.parent is region:
                _release_block(block)


def _release_block(block: Block) -> None:
    block.parent = None
    for arg in block.args:
        arg.owner = None  # type: ignore[assignment]
        arg.uses = []
    for nested in block.ops:
        if nested.parent is block:
            nested.parent = None
            _release_owned(nested)


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic GC until the block ends (the GC's state before comes back): a module is one
    long-lived object graph with few cycles, which collections would only walk again and
    again while it is built, transformed or costed; free it with `Module.release`."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
