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

import functools
import re
import weakref
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from shardwise.errors import UNKNOWN_LOCATION, Location
from shardwise.hashing import cached_hash

__all__ = [
    "TensorType",
    "OpaqueType",
    "Type",
    "parse_type",
    "RawAttr",
    "DictAttr",
    "ArrayAttr",
    "Value",
    "Op",
    "BatchErase",
    "ops_in_pre_order",
    "ops_in_post_order",
    "Block",
    "Region",
    "Module",
    "SHARDING_ATTR",
    "SHARDING_RULE_ATTR",
    "func_arg_attrs",
    "func_result_attrs",
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
    "SymbolTable",
]

SHARDING_ATTR = "sdy.sharding"
SHARDING_RULE_ATTR = "sdy.sharding_rule"

DYNAMIC = -1

# -- types ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TensorType:
    """A ranked tensor type; `DYNAMIC` (-1) marks a ``?`` dimension."""

    shape: tuple[int, ...]
    element_type: str
    encoding: str | None = None
    # Hashed once: types are keys of the rule cache and of memoized steps' rules, per op.
    _hash: int = field(default=0, init=False, repr=False, compare=False)

    __hash__ = cached_hash

    def __str__(self) -> str:
        dims = "".join(("?" if d == DYNAMIC else str(d)) + "x" for d in self.shape)
        enc = f", {self.encoding}" if self.encoding is not None else ""
        return f"tensor<{dims}{self.element_type}{enc}>"

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def is_static(self) -> bool:
        return DYNAMIC not in self.shape

    @property
    def num_elements(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n


@dataclass(frozen=True, slots=True)
class OpaqueType:
    """Any other type (token, tuple, unranked tensor, ...), kept as its text."""

    text: str

    def __str__(self) -> str:
        return self.text

    @property
    def rank(self) -> int:
        return 0


Type = TensorType | OpaqueType

_DIMS_RE = re.compile(r"((?:(?:\d+|\?)x)*)")


_TYPE_CACHE: dict[str, Type] = {}


def parse_type(text: str) -> Type:
    """Parse a type's text; ranked tensors become `TensorType`, the rest `OpaqueType`."""
    cached = _TYPE_CACHE.get(text)
    if cached is not None:
        return cached
    result: Type = OpaqueType(text)
    if text.startswith("tensor<") and text.endswith(">") and not text.startswith("tensor<*"):
        inner = text[len("tensor<") : -1]
        m = _DIMS_RE.match(inner)
        assert m is not None
        dims_text = m.group(1)
        rest, encoding = _split_top_level_comma_arrow_aware(inner[m.end() :])
        shape = tuple(DYNAMIC if d == "?" else int(d) for d in dims_text.split("x")[:-1])
        result = TensorType(shape, rest, encoding)
    _TYPE_CACHE[text] = result
    return result


# -- attributes -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RawAttr:
    """An attribute we do not interpret, kept as its exact text."""

    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(slots=True)
class DictAttr:
    """A dictionary attribute ``{a = 1, b}``; entries keep their order (MLIR sorts on print)."""

    entries: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        parts = []
        for name, value in self.entries.items():
            key = name if is_bare_key(name) else '"' + name + '"'
            parts.append(key if value is UNIT else f"{key} = {value}")
        return "{" + ", ".join(parts) + "}"


@dataclass(slots=True)
class ArrayAttr:
    """An array attribute ``[a, b]``."""

    elements: list[Any] = field(default_factory=list)

    def __str__(self) -> str:
        return "[" + ", ".join(str(e) for e in self.elements) + "]"


UNIT = RawAttr("unit")

_BARE_KEY_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_$.]*$")


def is_bare_key(name: str) -> bool:
    """Whether a dictionary key prints bare (``a.b``) rather than quoted (``"a-b"``)."""
    return bool(_BARE_KEY_RE.match(name))


# -- values, ops, blocks, regions -------------------------------------------------------------


class Value:
    """An SSA value: an op result or a block argument. Compared by identity."""

    __slots__ = ("type", "owner", "index", "uses", "name", "location", "__weakref__")

    def __init__(
        self,
        type: Type,
        owner: Op | Block,
        index: int,
        name: str = "",
        location: Location | None = None,
    ) -> None:
        self.type = type
        self.owner = owner
        self.index = index
        self.uses: list[tuple[Op, int]] = []
        self.name = name
        self.location = location

    def __repr__(self) -> str:
        return f"<Value {self.name or '?'}: {self.type}>"

    @property
    def is_block_arg(self) -> bool:
        return isinstance(self.owner, Block)

    @property
    def defining_op(self) -> Op | None:
        return self.owner if isinstance(self.owner, Op) else None

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
        for op, i in reversed(list(self.uses)):
            if op is not except_op:
                op.set_operand(i, other)


_NO_REGIONS: tuple = ()


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
        self.results: list[Value] = [
            Value(t, self, i, result_names[i] if result_names else "")
            for i, t in enumerate(result_types or [])
        ]
        self.properties: dict[str, Any] = properties or {}
        self.attributes: dict[str, Any] = attributes or {}
        # Most ops have no region: they share one empty tuple (`add_region` makes the list),
        # so the walks' `op.regions` test reads no per-op object (a cache miss per op).
        self.regions: list[Region] = _NO_REGIONS  # type: ignore[assignment]
        self.successors: list[str] = []
        self.location = location or UNKNOWN_LOCATION
        self.loc_text = loc_text
        self.parent: Block | None = None
        for v in operands or []:
            self.add_operand(v)
        for r in regions or []:
            self.add_region(r)

    def __repr__(self) -> str:
        return f"<Op {self.name} at {self.location}>"

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
        assert all(not r.uses for r in self.results), f"erasing {self.name} with uses"
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


def ops_in_pre_order(root: Op, names: frozenset[str]) -> list[Op]:
    """The ops named one of `names` in `root` (included), in the order of `Op.walk`.

    Cheaper than filtering `Op.walk`: a loop per block, no generator per op.
    """
    found = [root] if root.name in names else []
    _collect_pre_order(root, names, found)
    return found


def ops_in_post_order(root: Op, names: frozenset[str]) -> list[Op]:
    """The ops named one of `names` in `root` (included), in the order of MLIR's walk
    (`Op.walk_post_order`: nested ops before their parent)."""
    found: list[Op] = []
    _collect_post_order(root, names, found)
    if root.name in names:
        found.append(root)
    return found


def _collect_pre_order(op: Op, names: frozenset[str], found: list[Op]) -> None:
    for region in op.regions:
        for block in region.blocks:
            for nested in block.ops:
                if nested.name in names:
                    found.append(nested)
                if nested.regions:
                    _collect_pre_order(nested, names, found)


def _collect_post_order(op: Op, names: frozenset[str], found: list[Op]) -> None:
    for region in op.regions:
        for block in region.blocks:
            for nested in block.ops:
                if nested.regions:
                    _collect_post_order(nested, names, found)
                if nested.name in names:
                    found.append(nested)


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

    def add_arg(self, type: Type, name: str = "", location: Location | None = None) -> Value:
        value = Value(type, self, len(self.args), name, location)
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
        for op in list(self.op.walk()):
            op.parent = None
            op.operands = []
            for value in op.results:
                value.owner = None
                value.uses = []
            for region in op.regions:
                region.parent = None
                for block in region.blocks:
                    block.parent = None
                    for arg in block.args:
                        arg.owner = None
                        arg.uses = []

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


# -- func.func helpers ------------------------------------------------------------------------
# In generic form a func's argument/result attributes are the properties ``arg_attrs`` and
# ``res_attrs``: an `ArrayAttr` of `DictAttr`, one per argument/result (absent when all empty).


def _attr_dicts(func: Op, key: str, count: int, create: bool) -> list[DictAttr] | None:
    array = func.properties.get(key)
    if array is None:
        if not create:
            return None
        array = ArrayAttr([DictAttr() for _ in range(count)])
        func.properties[key] = array
    return array.elements


def func_arg_attrs(func: Op, index: int, create: bool = False) -> dict[str, Any] | None:
    """The attribute dict of argument `index` of a ``func.func`` (None if it has none)."""
    dicts = _attr_dicts(func, "arg_attrs", len(func.regions[0].entry.args), create)
    return None if dicts is None else dicts[index].entries


def func_result_attrs(func: Op, index: int, create: bool = False) -> dict[str, Any] | None:
    """The attribute dict of result `index` of a ``func.func`` (None if it has none)."""
    dicts = _attr_dicts(func, "res_attrs", len(func_result_types(func)), create)
    return None if dicts is None else dicts[index].entries


def func_result_types(func: Op) -> list[Type]:
    """The result types from the ``function_type`` property: ``(a, b) -> (c, d)``."""
    return list(_result_types_of(str(func.properties["function_type"])))


@functools.lru_cache(maxsize=1024)
def _result_types_of(text: str) -> tuple[Type, ...]:
    """Scanned once per function type text: passes ask for a func's results per result."""
    depth = 0
    arrow = -1
    for i, c in enumerate(text):
        if c in "<([{":
            depth += 1
        elif c in ">)]}":
            if not (c == ">" and i > 0 and text[i - 1] == "-"):
                depth -= 1
        elif c == "-" and depth == 0 and text.startswith("->", i):
            arrow = i
            break
    results = text[arrow + 2 :].strip()
    if results.startswith("(") and results.endswith(")"):
        results = results[1:-1]
    return tuple(parse_type(t) for t in split_top_level(results))


def split_top_level(text: str) -> list[str]:
    """Split on commas that are not nested in brackets or strings (``->`` is not a bracket)."""
    parts: list[str] = []
    rest: str | None = text.strip()
    while rest:
        head, rest = _split_top_level_comma_arrow_aware(rest)
        parts.append(head)
    return parts


def _split_top_level_comma_arrow_aware(text: str) -> tuple[str, str | None]:
    depth = 0
    in_str = False
    i = 0
    while i < len(text):
        c = text[i]
        if in_str:
            if c == "\\":
                i += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        elif c in "<([{":
            depth += 1
        elif c in ")]}" or (c == ">" and not (i > 0 and text[i - 1] == "-")):
            depth -= 1
        elif c == "," and depth == 0:
            return text[:i].strip(), text[i + 1 :].strip()
        i += 1
    return text.strip(), None


# -- rewriting helpers ------------------------------------------------------------------------
# What MLIR's OpBuilder/RewriterBase/SymbolTable do, for passes that create, clone, move and
# erase ops. Use lists: `Value.uses` is in creation order and MLIR iterates newest first, so
# creating uses in the order MLIR creates them is all it takes to get MLIR's order.


def copy_attr(value: Any) -> Any:
    """A copy of an attribute value that shares nothing mutable (dict/array attributes)."""
    if isinstance(value, DictAttr):
        return DictAttr({k: copy_attr(v) for k, v in value.entries.items()})
    if isinstance(value, ArrayAttr):
        return ArrayAttr([copy_attr(v) for v in value.elements])
    return value


def clone_op(op: Op, mapping: dict[Value, Value] | None = None) -> Op:
    """`Operation::clone(mapping)`: a detached deep copy; operands looked up in `mapping`.

    Results and block arguments of the clone are added to `mapping`, so later clones of
    users refer to them (MLIR's `IRMapping`).
    """
    if mapping is None:
        mapping = {}
    new = Op(
        op.name,
        [mapping.get(v, v) for v in op.operands],
        [r.type for r in op.results],
        {k: copy_attr(v) for k, v in op.properties.items()},
        {k: copy_attr(v) for k, v in op.attributes.items()},
        location=op.location,
        loc_text=op.loc_text,
        result_names=[r.name for r in op.results],
    )
    new.successors = list(op.successors)
    for old, result in zip(op.results, new.results, strict=True):
        mapping[old] = result
    for region in op.regions:
        new.add_region(clone_region(region, mapping))
    return new


# The explicit ``loc(...)`` text of block arguments read from a located input (the loader
# fills it; `Value` has no field for it). Keyed weakly: entries die with the IR.
ARG_LOC_TEXTS: weakref.WeakKeyDictionary[Value, str] = weakref.WeakKeyDictionary()


def clone_region(region: Region, mapping: dict[Value, Value] | None = None) -> Region:
    """`Region::cloneInto`: blocks (and their arguments, with their locations) first, then the
    ops in order."""
    if mapping is None:
        mapping = {}
    new = Region()
    pairs = []
    for block in region.blocks:
        copy = Block(label=block.label)
        for arg in block.args:
            mapping[arg] = copy.add_arg(arg.type, arg.name, arg.location)
            loc_text = ARG_LOC_TEXTS.get(arg)
            if loc_text is not None:
                ARG_LOC_TEXTS[mapping[arg]] = loc_text
        new.add_block(copy)
        pairs.append((block, copy))
    for block, copy in pairs:
        for op in block.ops:
            copy.append(clone_op(op, mapping))
    return new


def detach(op: Op) -> Op:
    """Take `op` out of its block (uses are kept), ready to be inserted elsewhere."""
    if op.parent is not None:
        op.parent.ops.remove(op)
        op.parent = None
    return op


def move_before(op: Op, anchor: Op) -> None:
    """`Operation::moveBefore(anchor)`."""
    block = anchor.parent
    assert block is not None
    detach(op)
    block.insert_before(anchor, op)


def move_after(op: Op, anchor: Op) -> None:
    """`Operation::moveAfter(anchor)`."""
    block = anchor.parent
    assert block is not None
    detach(op)
    block.insert_after(anchor, op)


def insert_after_value(op: Op, value: Value) -> None:
    """`setInsertionPointAfterValue` + insert: after the defining op, or first in the block."""
    detach(op)
    if value.defining_op is not None:
        block = value.defining_op.parent
        assert block is not None
        block.insert_after(value.defining_op, op)
    else:
        value.owner.insert(0, op)  # type: ignore[union-attr]


def replace_uses_if(old: Value, new: Value, predicate: Any) -> None:
    """`replaceUsesWithIf`: move the uses of `old` for which `predicate(op, index)` holds.

    Walks MLIR's use list (newest first), like `Value.replace_all_uses_with`.
    """
    for op, i in reversed(list(old.uses)):
        if predicate(op, i):
            op.set_operand(i, new)


def is_before_in_block(a: Op, b: Op) -> bool:
    """`Operation::isBeforeInBlock`: both ops in the same block, `a` strictly first."""
    assert a.parent is not None and a.parent is b.parent
    ops = a.parent.ops
    return ops.index(a) < ops.index(b)


def symbol_ref_name(attr: Any) -> str:
    """``@foo`` / ``@"a-b"`` (a FlatSymbolRefAttr's text) -> ``foo`` / ``a-b``."""
    text = str(attr).strip()
    if text.startswith("@"):
        text = text[1:]
    if text.startswith('"') and text.endswith('"'):
        text = unescape_string(text[1:-1])
    return text


_ESCAPE_RE = re.compile(r'\\(["\\nt]|[0-9a-fA-F]{2})')
_ESCAPES = {'"': b'"', "\\": b"\\", "n": b"\n", "t": b"\t"}


def unescape_string(body: str) -> str:
    """The contents of an MLIR string literal without its quotes: ``\\"``, ``\\\\``, ``\\n``,
    ``\\t`` and the ``\\XX`` byte escapes MLIR prints (``"`` as ``\\22``, non-ASCII bytes)."""
    if "\\" not in body:
        return body
    out = bytearray()
    pos = 0
    for m in _ESCAPE_RE.finditer(body):
        out += body[pos : m.start()].encode()
        escape = m.group(1)
        out += _ESCAPES.get(escape) or bytes([int(escape, 16)])
        pos = m.end()
    out += body[pos:].encode()
    return out.decode("utf-8", errors="surrogateescape")


def _quote_symbol(name: str) -> str:
    if _BARE_KEY_RE.match(name):
        return name
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def symbol_ref(name: str) -> RawAttr:
    """The FlatSymbolRefAttr naming `name`: ``@foo`` or ``@"a-b"``."""
    return RawAttr("@" + _quote_symbol(name))


def string_attr(text: str) -> RawAttr:
    """A StringAttr holding `text`: ``"text"``."""
    return RawAttr('"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"')


def string_attr_value(attr: Any) -> str:
    """The contents of a StringAttr's text (``"foo"`` -> ``foo``)."""
    text = str(attr)
    if text.startswith('"') and text.endswith('"'):
        return unescape_string(text[1:-1])
    return text


class SymbolTable:
    """`mlir::SymbolTable` over a module body: lookup, insert with name uniquing, erase.

    Name clashes on insert are resolved as MLIR does: ``name_<k>`` with one counter per
    table, incremented on every attempt.
    """

    def __init__(self, module: Module) -> None:
        self.module = module
        self.counter = 0
        self.symbols: dict[str, Op] = {}
        for op in module.body.ops:
            name = module.symbol_name(op)
            if name is not None:
                self.symbols.setdefault(name, op)

    def lookup(self, name: str) -> Op | None:
        return self.symbols.get(name)

    def insert(self, op: Op, after: Op | None = None) -> str:
        """Insert a detached `op` (at the end, or after `after`); returns its final name."""
        body = self.module.body
        if op.parent is None:
            if after is not None:
                body.insert_after(after, op)
            else:
                body.append(op)
        name = self.module.symbol_name(op) or ""
        if self.symbols.get(name, op) is op:
            self.symbols[name] = op
            return name
        while True:
            candidate = f"{name}_{self.counter}"
            self.counter += 1
            if candidate not in self.symbols:
                break
        holder = op.attributes if "sym_name" in op.attributes else op.properties
        holder["sym_name"] = string_attr(candidate)
        self.symbols[candidate] = op
        return candidate

    def erase(self, op: Op) -> None:
        name = self.module.symbol_name(op)
        if name is not None and self.symbols.get(name) is op:
            del self.symbols[name]
        op.erase()
