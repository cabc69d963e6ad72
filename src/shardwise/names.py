"""The names a JAX user knows, read from a loaded module's locations and attributes.

JAX's lowering (``as_text(debug_info=True)``) leaves in the module:
- each ``main`` argument's pytree path as its location: ``loc("params['layers'][0]['wq']")``;
- each result's path as ``jax.result_info = "result['out']"``;
- for every op, the JAX primitive under its name stack and the Python call stack:
  ``loc("jit(model)/dot_general"(callsite("layer"("/path/ex.py":5:17 to :23) at ...)))``.

`user_name` gives a value the name the user wrote (None for intermediates), `op_source` says
which primitive and which Python line made an op (``dot_general in layer (ex.py:5)``), and
`find_by_user_name` finds values by those names. Raw ``loc(...)`` text never leaves here.
Pure Python; the locations are parsed from the text the loader keeps.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable
from dataclasses import dataclass

from shardwise.ir import Module, Op, Value, func_result_attrs

__all__ = [
    "Frame",
    "SourceInfo",
    "parse_location",
    "op_source",
    "arg_name",
    "result_name",
    "user_name",
    "find_by_user_name",
]


@dataclass(frozen=True, slots=True)
class Frame:
    """One Python frame: ``layer (ex.py:5)``."""

    function: str
    file: str
    line: int
    col: int = 0

    def __str__(self) -> str:
        return f"{self.function} ({os.path.basename(self.file)}:{self.line})"


@dataclass(frozen=True, slots=True)
class SourceInfo:
    """What a location says: a plain name, a JAX primitive (with its name stack) and the
    Python frames that called it, innermost first."""

    name: str | None = None
    primitive: str | None = None
    frames: tuple[Frame, ...] = ()

    def __str__(self) -> str:
        """``dot_general in layer (ex.py:5)``, ``dot_general``, ``layer (ex.py:5)`` or ``""``."""
        what = self.primitive or ""
        if not self.frames:
            return what
        return f"{what} in {self.frames[0]}" if what else str(self.frames[0])


# -- the location grammar -----------------------------------------------------------------------
# loc := unknown | "file":L:C [to [L:]C] | "name" [( loc )] | callsite( loc at loc )
#      | fused [<attr>] [ loc, ... ]      (inside ``loc( ... )``; #aliases are resolved already)


@dataclass(frozen=True, slots=True)
class _Node:
    kind: str  # "unknown" | "file" | "name" | "callsite" | "fused"
    text: str = ""
    line: int = 0
    col: int = 0
    children: tuple[_Node, ...] = ()


class _LocParser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def skip_ws(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in " \t\n":
            self.pos += 1

    def take(self, s: str) -> bool:
        self.skip_ws()
        if self.text.startswith(s, self.pos):
            self.pos += len(s)
            return True
        return False

    def string(self) -> str:
        out = []
        self.pos += 1  # the opening quote
        while self.pos < len(self.text) and self.text[self.pos] != '"':
            c = self.text[self.pos]
            if c == "\\" and self.pos + 1 < len(self.text):
                nxt = self.text[self.pos + 1]
                if nxt in '"\\':
                    out.append(nxt)
                    self.pos += 2
                    continue
                hexa = self.text[self.pos + 1 : self.pos + 3]
                if len(hexa) == 2 and all(h in "0123456789abcdefABCDEF" for h in hexa):
                    out.append(chr(int(hexa, 16)))
                    self.pos += 3
                    continue
            out.append(c)
            self.pos += 1
        self.pos += 1
        return "".join(out)

    def number(self) -> int:
        self.skip_ws()
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos].isdigit():
            self.pos += 1
        return int(self.text[start : self.pos] or 0)

    def loc(self) -> _Node:
        self.skip_ws()
        if self.take("callsite("):
            callee = self.loc()
            self.take("at")
            caller = self.loc()
            self.take(")")
            return _Node("callsite", children=(callee, caller))
        if self.take("fused"):
            if self.take("<"):
                self._skip_to(">")
            self.take("[")
            parts = [self.loc()]
            while self.take(","):
                parts.append(self.loc())
            self.take("]")
            return _Node("fused", children=tuple(parts))
        if self.pos < len(self.text) and self.text[self.pos] == '"':
            return self._quoted()
        if not self.take("unknown"):
            self._skip_to(",)]")  # an unresolved alias, or a form we do not read
        return _Node("unknown")

    def _quoted(self) -> _Node:
        text = self.string()
        if self.take(":"):
            line = self.number()
            col = self.number() if self.take(":") else 0
            if self.take("to"):
                self.number()
                if self.take(":"):
                    self.number()
            return _Node("file", text, line, col)
        if self.take("("):
            child = self.loc()
            self.take(")")
            return _Node("name", text, children=(child,))
        return _Node("name", text)

    def _skip_to(self, closers: str) -> None:
        """Move to the first of `closers` outside brackets and strings (past it if ``>``)."""
        depth = 0
        while self.pos < len(self.text):
            c = self.text[self.pos]
            if c == '"':
                self.string()
                continue
            if depth == 0 and c in closers:
                self.pos += c == ">"
                return
            if c in "([<":
                depth += 1
            elif c in ")]>":
                depth -= 1
            self.pos += 1


def _frames(node: _Node) -> tuple[Frame, ...]:
    """The Python frames of a location, innermost first."""
    if node.kind == "file":
        return (Frame("?", node.text, node.line, node.col),)
    if node.kind == "name" and node.children:
        child = node.children[0]
        if child.kind == "file":
            return (Frame(node.text, child.text, child.line, child.col),)
        return _frames(child)
    if node.kind == "callsite":
        return _frames(node.children[0]) + _frames(node.children[1])
    if node.kind == "fused":
        for part in node.children:
            found = _frames(part)
            if found:
                return found
    return ()


def _primitive(name_stack: str) -> str:
    """``jit(model)/transpose(jvp())/dot_general`` -> ``transpose(jvp())/dot_general``."""
    head, sep, rest = name_stack.partition("/")
    if sep and head.startswith("jit(") and head.endswith(")"):
        return rest
    return name_stack


@functools.lru_cache(maxsize=4096)
def parse_location(loc_text: str | None) -> SourceInfo:
    """What a ``loc(...)`` text says (an empty `SourceInfo` for anything unreadable)."""
    if not loc_text or not loc_text.startswith("loc("):
        return SourceInfo()
    node = _LocParser(loc_text[4:-1]).loc()
    if node.kind == "fused":  # canonicalization fuses the locations of merged ops
        node = next((p for p in node.children if p.kind != "unknown"), node)
    if node.kind == "name" and not node.children:
        return SourceInfo(name=node.text)
    if node.kind == "name" and node.children[0].kind != "file":
        return SourceInfo(primitive=_primitive(node.text), frames=_frames(node.children[0]))
    return SourceInfo(frames=_frames(node))


# -- values -------------------------------------------------------------------------------------


def op_source(op: Op | None) -> SourceInfo:
    """The JAX primitive and the Python line that made `op` (empty if the module has none)."""
    return SourceInfo() if op is None else parse_location(op.loc_text)


def _func_of_arg(value: Value) -> Op | None:
    if not value.is_block_arg:
        return None
    parent = value.owner.parent_op  # type: ignore[union-attr]
    return parent if parent is not None and parent.name == "func.func" else None


def _func_name(module: Module, func: Op) -> str:
    return module.symbol_name(func) or ""


def arg_name(value: Value) -> str | None:
    """The pytree path JAX gave a function argument (``params['w1']``), if any."""
    if _func_of_arg(value) is None:
        return None
    return parse_location(value.loc_text).name


def result_name(func: Op, index: int) -> str | None:
    """The ``jax.result_info`` path of result `index` of `func` (``result['out']``), if any."""
    attrs = func_result_attrs(func, index)
    info = None if attrs is None else attrs.get("jax.result_info")
    if info is None:
        return None
    text = str(info)
    if not (text.startswith('"') and text.endswith('"')):
        return None
    return _LocParser(text).string() or None


def user_name(module: Module, key: Value | str) -> str | None:
    """The user's name of a func argument or result (``main:result0`` keys); None otherwise.

    Arguments and results of ``main`` go by their bare path; those of other functions
    are prefixed by the function: ``inner:x``.
    """
    if isinstance(key, Value):
        func = _func_of_arg(key)
        name = arg_name(key)
    else:
        func_name, _, rest = key.partition(":")
        func = module.lookup_symbol(func_name)
        if func is None or not rest.startswith("result") or not rest[6:].isdigit():
            return None
        name = result_name(func, int(rest[6:]))
    if func is None or name is None:
        return None
    prefix = _func_name(module, func)
    return name if prefix == "main" else f"{prefix}:{name}"


def _normal(name: str) -> str:
    return name.replace('"', "'").replace(" ", "")


def find_by_user_name(module: Module, name: str, keys: Iterable[Value | str]) -> list[Value | str]:
    """The keys whose user name is `name` (quotes and spaces as the user likes), else those
    whose last pytree key it is (``wq``), else the results of the ops made at a Python line
    ``ex.py:5`` / ``/path/ex.py:5``."""
    wanted = _normal(name)
    keys = list(keys)
    named = [(k, _normal(n)) for k in keys if (n := user_name(module, k)) is not None]
    found = [k for k, n in named if n == wanted]
    if found:
        return found
    # A leaf by its last key: ``wq`` for ``params['layers'][0]['wq']`` (and every other ``wq``).
    found = [k for k, n in named if n.endswith((f"['{wanted}']", f".{wanted}"))]
    if found:
        return found
    file, sep, line = name.rpartition(":")
    if not sep or not line.isdigit() or not file:
        return []
    return [
        k
        for k in keys
        if isinstance(k, Value)
        and (frames := op_source(k.defining_op).frames)
        and frames[0].line == int(line)
        and (frames[0].file == file or os.path.basename(frames[0].file) == file)
    ]
