"""Parser for the ``#sdy...`` attribute text (Shardy's `ir/parsers.cc` + tablegen formats).

A hand-written recursive-descent parser in xDSL style: `SdyParser.parse_optional_x` returns
None when the text at the cursor does not start an ``x``, `SdyParser.parse_x` raises
`ParseError` ("expected x") at that spot. Tokens may be separated by whitespace, as in MLIR.
Printing is the `str()` of the value classes; for everything Shardy prints,
``str(parse(text)) == text``.

Forms (see docs/notation.md):

| form | example |
| --- | --- |
| mesh | ``#sdy.mesh<["a"=2, "b"=4], device_ids=[0, 2, 1, 3, 4, 5, 6, 7]>`` |
| axis ref | ``"a"``, ``"a":(2)4`` |
| dimension sharding | ``{"a", ?}p1`` |
| tensor sharding | ``#sdy.sharding<@mesh, [{"a"}, {}], replicated={"b"}>`` |
| per-value shardings | ``#sdy.sharding_per_value<[<@mesh, [{"a"}]>, <@mesh, []>]>`` |
| op sharding rule | ``#sdy.op_sharding_rule<([i, k], [k, j])->([i, j]) {i=8, j=32, k=16} reduction={k}>`` |
| manual axes | ``#sdy<manual_axes{"a", "b"}>`` |

The generic dialect-attribute form ``#sdy<mnemonic BODY>`` is accepted for every form.
Errors carry ``Location("-", 1, column)``; the io layer shifts them to the file position.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import TypeVar

from shardwise.axis import AxisRef, SubAxisInfo
from shardwise.errors import Location, ParseError
from shardwise.mesh import Mesh, MeshAxis
from shardwise.rules.rule import OpShardingRule, TensorMapping, factor_symbol
from shardwise.sharding import (
    DimensionSharding,
    ManualAxes,
    TensorSharding,
    TensorShardingPerValue,
    interned,
)

__all__ = [
    "SdyParser",
    "SdyAttribute",
    "parse_sdy_attribute",
    "parse_mesh",
    "parse_axis_ref",
    "parse_dimension_sharding",
    "parse_tensor_sharding",
    "parse_sharding_per_value",
    "parse_op_sharding_rule",
    "parse_manual_axes",
    "parse_factor_symbols",
]

SdyAttribute = Mesh | TensorSharding | TensorShardingPerValue | OpShardingRule | ManualAxes

T = TypeVar("T")

_INT64_MAX = 2**63 - 1
# Factors 0..17 are the letters i..z; factor 18 onward is z_1, z_2, ... (Shardy's kStartAtZ).
_START_AT_Z = 17
_BARE_START = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_BARE_CHARS = _BARE_START | set("0123456789$.")
_HEX = set("0123456789abcdefABCDEF")
_WHITESPACE = " \t\r\n"
_WHITESPACE_RE = re.compile(r"[ \t\r\n]*")
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}
_REDUCTION_OPS = ("sum", "max", "min")
_TYPED_FACTOR_LISTS = ("reduction", "need_replication", "permutation", "blocked_propagation")


class SdyParser:
    """A cursor over one attribute text with MLIR's token rules and the ``#sdy`` grammar."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    # -- errors and whitespace --------------------------------------------------------------

    def error(self, message: str, pos: int | None = None) -> ParseError:
        """A `ParseError` at `pos` (default: the next token), column 1-based."""
        if pos is None:
            self._skip_ws()
            pos = self.pos
        return ParseError(message, Location("-", 1, pos + 1))

    def _skip_ws(self) -> None:
        if self.pos < len(self.text) and self.text[self.pos] in _WHITESPACE:
            match = _WHITESPACE_RE.match(self.text, self.pos)
            assert match is not None
            self.pos = match.end()

    def at_end(self) -> bool:
        self._skip_ws()
        return self.pos >= len(self.text)

    def expect_end(self) -> None:
        if not self.at_end():
            raise self.error("expected end of attribute text")

    # -- tokens -----------------------------------------------------------------------------

    def parse_optional_punctuation(self, punct: str) -> bool:
        """Consume `punct` (``->``, ``<``, ``{``, ...) if it is next."""
        self._skip_ws()
        if self.text.startswith(punct, self.pos):
            self.pos += len(punct)
            return True
        return False

    def parse_punctuation(self, punct: str) -> None:
        if not self.parse_optional_punctuation(punct):
            raise self.error(f"expected '{punct}'")

    def parse_optional_keyword(self, keyword: str | None = None) -> str | None:
        """A bare identifier ``[A-Za-z_][A-Za-z0-9_$.]*`` (exactly `keyword` if given)."""
        self._skip_ws()
        start = self.pos
        if start >= len(self.text) or self.text[start] not in _BARE_START:
            return None
        end = start + 1
        while end < len(self.text) and self.text[end] in _BARE_CHARS:
            end += 1
        word = self.text[start:end]
        if keyword is not None and word != keyword:
            return None
        self.pos = end
        return word

    def parse_keyword(self, keyword: str | None = None) -> str:
        word = self.parse_optional_keyword(keyword)
        if word is None:
            raise self.error(f"expected '{keyword}'" if keyword else "expected keyword")
        return word

    def parse_optional_integer(self) -> int | None:
        """A decimal or ``0x`` hexadecimal integer with an optional ``-``."""
        self._skip_ws()
        start = self.pos
        negative = self.text.startswith("-", start)
        digits_at = start + 1 if negative else start
        end = digits_at
        if self.text.startswith(("0x", "0X"), digits_at) and digits_at + 2 < len(self.text):
            end = digits_at + 2
            while end < len(self.text) and self.text[end] in _HEX:
                end += 1
            value = int(self.text[digits_at + 2 : end], 16) if end > digits_at + 2 else None
        else:
            while end < len(self.text) and self.text[end].isdigit() and self.text[end].isascii():
                end += 1
            value = int(self.text[digits_at:end]) if end > digits_at else None
        if value is None:
            return None
        self.pos = end
        return -value if negative else value

    def parse_integer(self, what: str = "integer value", bits: int = 64) -> int:
        """A signed integer that fits in `bits` bits (factor sizes are 32-bit in Shardy)."""
        self._skip_ws()
        start = self.pos
        value = self.parse_optional_integer()
        if value is None:
            raise self.error(f"expected {what}")
        if not -(2 ** (bits - 1)) <= value < 2 ** (bits - 1):
            raise self.error("integer value too large", start)
        return value

    def parse_optional_string(self) -> str | None:
        """An MLIR string literal: escapes ``\\n \\t \\" \\\\`` and ``\\XX`` (hex byte)."""
        self._skip_ws()
        if not self.text.startswith('"', self.pos):
            return None
        start = self.pos
        data = bytearray()
        i = self.pos + 1
        while True:
            if i >= len(self.text) or self.text[i] in "\n\r":
                raise self.error("expected '\"' in string literal", start)
            ch = self.text[i]
            if ch == '"':
                break
            if ch != "\\":
                data += ch.encode("utf-8")
                i += 1
                continue
            nxt = self.text[i + 1 : i + 2]
            if nxt in _SIMPLE_ESCAPES:
                data += _SIMPLE_ESCAPES[nxt].encode()
                i += 2
            elif len(self.text) > i + 2 and nxt in _HEX and self.text[i + 2] in _HEX:
                data.append(int(self.text[i + 1 : i + 3], 16))
                i += 3
            else:
                raise self.error("unknown escape in string literal", i)
        self.pos = i + 1
        return data.decode("utf-8", errors="surrogateescape")

    def parse_string(self) -> str:
        value = self.parse_optional_string()
        if value is None:
            raise self.error("expected string")
        return value

    def parse_optional_symbol_ref(self) -> str | None:
        """``@name`` or ``@"any name"``; returns the name."""
        self._skip_ws()
        if not self.text.startswith("@", self.pos):
            return None
        self.pos += 1
        if self.text.startswith('"', self.pos):
            return self.parse_string()
        if self.text[self.pos : self.pos + 1] not in _BARE_START:
            raise self.error("expected symbol name after '@'", self.pos)
        name = self.parse_optional_keyword()
        assert name is not None
        return name

    def parse_comma_separated(self, parse_element: Callable[[], T]) -> list[T]:
        """One or more elements separated by commas."""
        items = [parse_element()]
        while self.parse_optional_punctuation(","):
            items.append(parse_element())
        return items

    # -- meshes -----------------------------------------------------------------------------

    def parse_mesh_axis(self) -> MeshAxis:
        """``"a"=4``."""
        name = self.parse_string()
        self.parse_punctuation("=")
        return MeshAxis(name, self.parse_integer())

    def parse_mesh_body(self) -> Mesh:
        """``<["a"=2, "b"=4], device_ids=[...]>``; explicit iota device ids are dropped.

        Like Shardy's `MeshAttr::get`, device ids equal to iota(total size) are not kept
        (``<["a"=2], device_ids=[0, 1]>`` is ``<["a"=2]>``).
        """
        self.parse_punctuation("<")
        self.parse_punctuation("[")
        axes: list[MeshAxis] = []
        if not self.parse_optional_punctuation("]"):
            axes = self.parse_comma_separated(self.parse_mesh_axis)
            self.parse_punctuation("]")
        device_ids: list[int] = []
        if self.parse_optional_punctuation(","):
            self.parse_keyword("device_ids")
            self.parse_punctuation("=")
            self.parse_punctuation("[")
            device_ids = self.parse_comma_separated(self.parse_integer)
            self.parse_punctuation("]")
        self.parse_punctuation(">")
        total = 1
        for axis in axes:
            total *= axis.size
        if axes and len(device_ids) == total and device_ids == list(range(total)):
            device_ids = []
        return Mesh(tuple(axes), tuple(device_ids))

    # -- axis refs and dimension shardings --------------------------------------------------

    def parse_optional_axis_ref(self) -> AxisRef | None:
        """``"a"`` or ``"a":(pre)size``."""
        name = self.parse_optional_string()
        if name is None:
            return None
        if not self.parse_optional_punctuation(":"):
            return AxisRef(name)
        self.parse_punctuation("(")
        pre_size = self.parse_integer()
        self.parse_punctuation(")")
        return AxisRef(name, SubAxisInfo(pre_size, self.parse_integer()))

    def parse_axis_ref(self) -> AxisRef:
        axis = self.parse_optional_axis_ref()
        if axis is None:
            raise self.error("expected string")
        return axis

    def parse_axis_list(self) -> tuple[AxisRef, ...]:
        """``{"a", "b":(1)2}``: braces around one or more axis refs."""
        self.parse_punctuation("{")
        axes = self.parse_comma_separated(self.parse_axis_ref)
        self.parse_punctuation("}")
        return tuple(axes)

    def parse_dimension_sharding(self) -> DimensionSharding:
        """``{}``, ``{?}``, ``{"a", "b"}``, ``{"a", ?}p2``: ``?`` (open) comes last."""
        self.parse_punctuation("{")
        axes: list[AxisRef] = []
        is_closed = True
        while not self.parse_optional_punctuation("}"):
            if axes:
                self.parse_punctuation(",")
            if self.parse_optional_punctuation("?"):
                is_closed = False
                self.parse_punctuation("}")
                break
            axes.append(self.parse_axis_ref())
        return DimensionSharding(tuple(axes), is_closed, self._parse_optional_priority())

    def _parse_optional_priority(self) -> int | None:
        """``p<number>`` right after a dimension sharding (Shardy's wording on errors)."""
        start = self.pos
        word = self.parse_optional_keyword()
        if word is None:
            return None
        digits = word[1:]
        if len(word) < 2 or word[0] != "p" or not (digits.isascii() and digits.isdigit()):
            raise self.error(f"expecting priority in format 'p<number>', got: {word}", start)
        if digits.startswith("0") and len(digits) > 1:
            raise self.error(f"priorities with leading zeros are not allowed, got: {word}", start)
        if int(digits) > _INT64_MAX:
            raise self.error(f"expecting integer priority, got: {word}", start)
        return int(digits)

    # -- tensor shardings -------------------------------------------------------------------

    def parse_mesh_or_ref(self) -> str | Mesh:
        """``@name`` or an inline ``mesh<[...]>``."""
        if self.parse_optional_keyword("mesh") is not None:
            return self.parse_mesh_body()
        name = self.parse_optional_symbol_ref()
        if name is None:
            raise self.error("expected mesh symbol reference '@name' or inline 'mesh<[...]>'")
        return name

    def parse_tensor_sharding_body(self) -> TensorSharding:
        """``<@mesh, [dims...], replicated={...}, unreduced={...}>`` (clauses in any order)."""
        self.parse_punctuation("<")
        mesh_or_ref = self.parse_mesh_or_ref()
        self.parse_punctuation(",")
        self.parse_punctuation("[")
        dims: list[DimensionSharding] = []
        if not self.parse_optional_punctuation("]"):
            dims = self.parse_comma_separated(self.parse_dimension_sharding)
            self.parse_punctuation("]")
        replicated: tuple[AxisRef, ...] = ()
        unreduced: tuple[AxisRef, ...] = ()
        reduction_op = "sum"
        while self.parse_optional_punctuation(","):
            if not replicated and self.parse_optional_keyword("replicated"):
                self.parse_punctuation("=")
                replicated = self.parse_axis_list()
            elif not unreduced and self.parse_optional_keyword("unreduced"):
                self.parse_punctuation("=")
                reduction_op = self._parse_reduction_op()
                unreduced = self.parse_axis_list()
            else:
                raise self.error(
                    "failed to parse Sdy_TensorSharding, expected valid named axis list after comma"
                )
        self.parse_punctuation(">")
        return interned(
            TensorSharding(mesh_or_ref, tuple(dims), replicated, unreduced, reduction_op)
        )

    def _parse_reduction_op(self) -> str:
        for op in _REDUCTION_OPS:
            if self.parse_optional_keyword(op):
                return op
        return "sum"

    def parse_sharding_per_value_body(self) -> TensorShardingPerValue:
        """``<[<@mesh, [...]>, ...]>`` (possibly ``<[]>``)."""
        self.parse_punctuation("<")
        self.parse_punctuation("[")
        shardings: list[TensorSharding] = []
        if not self.parse_optional_punctuation("]"):
            shardings = self.parse_comma_separated(self.parse_tensor_sharding_body)
            self.parse_punctuation("]")
        self.parse_punctuation(">")
        return TensorShardingPerValue(tuple(shardings))

    # -- op sharding rules ------------------------------------------------------------------

    def _parse_factor_symbol(self, word: str, at: int) -> tuple[int, str]:
        """Split one factor symbol off `word`: ``"jk"`` -> (1, ``"k"``), ``"z_2"`` -> (19, "")."""
        if not word.startswith("z_"):
            if not "i" <= word[0] <= "z":
                raise self.error(f"expecting symbol from 'i' to 'z'. Received: '{word[0]}'", at)
            return ord(word[0]) - ord("i"), word[1:]
        end = 2
        while end < len(word) and word[end].isdigit():
            end += 1
        number = word[2:end]
        if not number:
            raise self.error(f"expecting integer after 'z_'. Received: '{word}'", at)
        if number.startswith("0"):
            raise self.error(
                f"expecting positive integer without leading zeros. Received: '{number}'", at
            )
        return int(number) + _START_AT_Z, word[end:]

    def parse_factor_symbols(self, word: str, at: int) -> tuple[int, ...]:
        """The factor indices of a compound symbol: ``"ij"`` -> (0, 1), ``"z_1z_2"`` -> (18, 19)."""
        indices: list[int] = []
        while word:
            index, word = self._parse_factor_symbol(word, at)
            indices.append(index)
        return tuple(indices)

    def _parse_dim_mapping(self) -> tuple[int, ...]:
        at = self.pos
        word = self.parse_optional_keyword()
        # No symbol at all is an empty mapping; the verifier rejects it (as Shardy does).
        return () if word is None else self.parse_factor_symbols(word, at)

    def parse_tensor_mapping(self) -> TensorMapping:
        """``[i, jk]`` (or ``[]`` for a scalar)."""
        self.parse_punctuation("[")
        if self.parse_optional_punctuation("]"):
            return ()
        dims = self.parse_comma_separated(self._parse_dim_mapping)
        self.parse_punctuation("]")
        return tuple(dims)

    def _parse_tensor_mappings(self) -> tuple[TensorMapping, ...]:
        self.parse_punctuation("(")
        mappings = self.parse_comma_separated(self.parse_tensor_mapping)
        self.parse_punctuation(")")
        return tuple(mappings)

    def _parse_factor_size(self, expected: int) -> int:
        at = self.pos
        word = self.parse_keyword()
        index, rest = self._parse_factor_symbol(word, at)
        if index != expected:
            raise self.error(
                "expecting factor indices to be ordered like an iota ([0,1,2,...], e.g. "
                f"{{i=#, j=#, ...}}). Expecting factor index symbol '{factor_symbol(expected)}', "
                f"received: '{factor_symbol(index)}'",
                at,
            )
        if rest:
            raise self.error(f"expecting single factor symbol: {rest}", at)
        self.parse_punctuation("=")
        return self.parse_integer(bits=32)

    def _parse_optional_braced_list(self, parse_element: Callable[[], T]) -> list[T]:
        """MLIR's optional-braces list: no ``{`` means empty; ``{}`` is empty too."""
        if not self.parse_optional_punctuation("{"):
            return []
        if self.parse_optional_punctuation("}"):
            return []
        items = self.parse_comma_separated(parse_element)
        self.parse_punctuation("}")
        return items

    def _parse_factor_sizes(self) -> tuple[int, ...]:
        count = 0

        def element() -> int:
            nonlocal count
            count += 1
            return self._parse_factor_size(count - 1)

        return tuple(self._parse_optional_braced_list(element))

    def _parse_factor_reference(self) -> int:
        at = self.pos
        word = self.parse_keyword()
        # Like Shardy, only the first symbol of the word counts: `reduction={kl}` means {k}.
        index, _ = self._parse_factor_symbol(word, at)
        return index

    def parse_op_sharding_rule_body(self) -> OpShardingRule:
        """``<([i, k], [k, j])->([i, j]) {i=8, j=32, k=16} reduction={k}, custom>``."""
        self.parse_punctuation("<")
        operands = self._parse_tensor_mappings()
        self.parse_punctuation("->")
        results = self._parse_tensor_mappings()
        sizes = self._parse_factor_sizes()
        typed: dict[str, tuple[int, ...]] = {}
        for label in _TYPED_FACTOR_LISTS:
            if self.parse_optional_keyword(label):
                self.parse_punctuation("=")
                typed[label] = tuple(self._parse_optional_braced_list(self._parse_factor_reference))
        is_custom = False
        if self.parse_optional_punctuation(","):
            self.parse_keyword("custom")
            is_custom = True
        self.parse_punctuation(">")
        return OpShardingRule(
            sizes,
            operands,
            results,
            typed.get("reduction", ()),
            typed.get("need_replication", ()),
            typed.get("permutation", ()),
            typed.get("blocked_propagation", ()),
            is_custom,
        )

    # -- manual axes ------------------------------------------------------------------------

    def parse_manual_axes_body(self) -> ManualAxes:
        """``{"a", "b"}`` (the part after ``manual_axes``)."""
        self.parse_punctuation("{")
        if self.parse_optional_punctuation("}"):
            return ManualAxes(())
        names = self.parse_comma_separated(self.parse_string)
        self.parse_punctuation("}")
        return ManualAxes(tuple(names))

    # -- whole attributes -------------------------------------------------------------------

    def parse_sdy_prefix(self) -> tuple[str, bool]:
        """``#sdy.name`` (pretty) or ``#sdy<name`` (generic); returns (name, is_generic)."""
        self.parse_punctuation("#sdy")
        if self.text.startswith(".", self.pos):
            self.pos += 1
            return self.parse_keyword(), False
        self.parse_punctuation("<")
        return self.parse_keyword(), True


_BODY_PARSERS: dict[str, Callable[[SdyParser], SdyAttribute]] = {
    "mesh": SdyParser.parse_mesh_body,
    "sharding": SdyParser.parse_tensor_sharding_body,
    "sharding_per_value": SdyParser.parse_sharding_per_value_body,
    "op_sharding_rule": SdyParser.parse_op_sharding_rule_body,
    "manual_axes": SdyParser.parse_manual_axes_body,
}


# -- public entry points ----------------------------------------------------------------------


@lru_cache(maxsize=8192)
def parse_sdy_attribute(text: str) -> SdyAttribute | None:
    """Parse a whole ``#sdy...`` attribute; None for an ``#sdy`` form we do not model.

    Modelled: mesh, sharding, sharding_per_value, op_sharding_rule, manual_axes. Other
    mnemonics (``#sdy.propagation_edges<...>``, ...) give None. Raises `ParseError` for
    malformed text or text that is not an ``#sdy`` attribute. Results are immutable values
    and cached by text (a model repeats the same few shardings thousands of times).
    """
    parser = SdyParser(text)
    mnemonic, generic = parser.parse_sdy_prefix()
    body = _BODY_PARSERS.get(mnemonic)
    if body is None:
        return None
    value = body(parser)
    if generic:
        parser.parse_punctuation(">")
    parser.expect_end()
    return value


def _parse_whole(text: str, mnemonic: str, what: str) -> SdyAttribute:
    """Parse ``#sdy.<mnemonic>...``, ``#sdy<mnemonic...>`` or the bare body."""
    parser = SdyParser(text)
    parser._skip_ws()
    if not text.startswith("#", parser.pos):
        value = _BODY_PARSERS[mnemonic](parser)
        parser.expect_end()
        return value
    start = parser.pos
    found, generic = parser.parse_sdy_prefix()
    if found != mnemonic:
        raise parser.error(f"expected {what}", start)
    value = _BODY_PARSERS[mnemonic](parser)
    if generic:
        parser.parse_punctuation(">")
    parser.expect_end()
    return value


def parse_mesh(text: str) -> Mesh:
    """``#sdy.mesh<["a"=2], device_ids=[...]>`` or the bare body ``<["a"=2]>``."""
    value = _parse_whole(text, "mesh", "#sdy.mesh")
    assert isinstance(value, Mesh)
    return value


def parse_tensor_sharding(text: str) -> TensorSharding:
    """``#sdy.sharding<@m, [{"a"}, {}]>`` or the stripped ``<@m, [{"a"}, {}]>``."""
    value = _parse_whole(text, "sharding", "#sdy.sharding")
    assert isinstance(value, TensorSharding)
    return value


def parse_sharding_per_value(text: str) -> TensorShardingPerValue:
    """``#sdy.sharding_per_value<[<@m, [...]>, ...]>`` or the body ``<[...]>``."""
    value = _parse_whole(text, "sharding_per_value", "#sdy.sharding_per_value")
    assert isinstance(value, TensorShardingPerValue)
    return value


def parse_op_sharding_rule(text: str) -> OpShardingRule:
    """``#sdy.op_sharding_rule<([i, j])->([i, j]) {i=2, j=4}>`` or the body ``<(...)->(...)>``."""
    value = _parse_whole(text, "op_sharding_rule", "#sdy.op_sharding_rule")
    assert isinstance(value, OpShardingRule)
    return value


def parse_manual_axes(text: str) -> ManualAxes:
    """``#sdy<manual_axes{"a", "b"}>`` or the body ``{"a", "b"}``."""
    value = _parse_whole(text, "manual_axes", "#sdy<manual_axes{...}>")
    assert isinstance(value, ManualAxes)
    return value


def parse_axis_ref(text: str) -> AxisRef:
    """``"a"`` or ``"a":(2)4``."""
    parser = SdyParser(text)
    axis = parser.parse_axis_ref()
    parser.expect_end()
    return axis


def parse_dimension_sharding(text: str) -> DimensionSharding:
    """``{"a", ?}p1`` and friends."""
    parser = SdyParser(text)
    dim = parser.parse_dimension_sharding()
    parser.expect_end()
    return dim


def parse_factor_symbols(text: str) -> tuple[int, ...]:
    """A compound factor symbol to indices: ``"k"`` -> (2,), ``"ijz_1"`` -> (0, 1, 18)."""
    parser = SdyParser(text)
    word = parser.parse_keyword()
    parser.expect_end()
    return parser.parse_factor_symbols(word, 0)
