"""Sub-axes, axis references and their algebra (Shardy `SubAxisInfoAttr`, `AxisRefAttr`).

A full mesh axis of size N behaves like the multiplicative interval [1, N): pre-size 1, next
pre-size N. A sub-axis ``"x":(p)s`` is the interval [p, p*s). Every operation below is defined
on those intervals; the tables in the docstrings are the examples from Shardy's
`ir/attrs.td` comments (mesh ``"a"=8`` where a size is needed) and are repeated as the rows
of `tests/unit/test_axis.py`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

__all__ = [
    "AxisSizes",
    "SubAxisInfo",
    "AxisRef",
    "add_axis_or_merge",
    "sort_and_merge_axes",
    "axes_size",
    "greatest_common_prefix_of_lists",
    "prefix_without_overlap_with_list",
    "truncate_axes_by_removing_overlaps",
    "lists_overlap",
    "axis_set_diff",
    "PrefixStatus",
    "is_axis_list_prefix_of",
    "quote_string",
]

_INF = float("inf")


class AxisSizes(Protocol):
    """Anything that knows the size of a full mesh axis (a `Mesh`)."""

    def axis_size(self, name: str) -> int: ...


def quote_string(s: str) -> str:
    r"""Print a string as MLIR does (`llvm::printEscapedString`).

    Printable ASCII is kept, a backslash is doubled, `"` and every other byte (of the UTF-8
    encoding) becomes ``\XX`` in upper-case hex: ``a"\`` prints as ``"a\22\\"``.
    """
    out = []
    for byte in s.encode("utf-8"):
        ch = chr(byte)
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"' or not (0x20 <= byte < 0x7F):
            out.append(f"\\{byte:02X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


@dataclass(frozen=True, slots=True)
class SubAxisInfo:
    """A slice of a mesh axis: the axis reshaped as [..., pre_size, size, ...], size > 1."""

    pre_size: int
    size: int

    @property
    def next_pre_size(self) -> int:
        return self.pre_size * self.size

    def __str__(self) -> str:
        return f"({self.pre_size}){self.size}"


@dataclass(frozen=True, slots=True)
class AxisRef:
    """A full mesh axis (``"x"``) or a sub-axis of one (``"x":(2)4``)."""

    name: str
    sub_axis_info: SubAxisInfo | None = None

    # -- printing and ordering ------------------------------------------------------------

    def __str__(self) -> str:
        text = quote_string(self.name)
        if self.sub_axis_info is not None:
            text += f":{self.sub_axis_info}"
        return text

    def sort_key(self) -> tuple[str, int, float]:
        """Shardy's mesh-independent `operator<`: name, then ``"a":(1)k < "a" < "a":(p)k``."""
        if self.sub_axis_info is None:
            return (self.name, 1, _INF)
        return (self.name, self.sub_axis_info.pre_size, self.sub_axis_info.size)

    # -- sizes ------------------------------------------------------------------------------

    @property
    def is_sub_axis(self) -> bool:
        return self.sub_axis_info is not None

    def size(self, mesh: AxisSizes) -> int:
        if self.sub_axis_info is not None:
            return self.sub_axis_info.size
        return mesh.axis_size(self.name)

    @property
    def pre_size(self) -> int:
        """The sub-axis pre-size, 1 for a full axis."""
        return 1 if self.sub_axis_info is None else self.sub_axis_info.pre_size

    def next_pre_size(self, mesh: AxisSizes) -> int:
        """pre*size for a sub-axis, the full size for a full axis."""
        if self.sub_axis_info is None:
            return mesh.axis_size(self.name)
        return self.sub_axis_info.next_pre_size

    def _next_or_inf(self) -> float:
        # Mesh-independent upper bound: a full axis extends to "infinity" for overlap tests.
        return _INF if self.sub_axis_info is None else self.sub_axis_info.next_pre_size

    def full(self) -> AxisRef:
        return AxisRef(self.name)

    # -- relations --------------------------------------------------------------------------

    def contains(self, other: AxisRef) -> bool:
        """This interval covers `other`'s.

        | this        | other       | result |
        | "a"         | "a":(2)2    | True   |
        | "a":(2)16   | "a":(4)2    | True   |
        | "a":(1)4    | "a":(2)4    | False  |
        """
        if self.name != other.name:
            return False
        if self.sub_axis_info is None:
            return True
        if other.sub_axis_info is None:
            return False
        return (
            self.pre_size <= other.pre_size
            and self.sub_axis_info.next_pre_size >= other.sub_axis_info.next_pre_size
        )

    def strictly_contains(self, other: AxisRef) -> bool:
        return self.contains(other) and self != other

    def prefix_of(self, other: AxisRef) -> bool:
        """`other` contains this and both start at the same pre-size.

        | this      | other     | result |
        | "a":(1)2  | "a"       | True   |
        | "a":(2)2  | "a":(2)4  | True   |
        | "a":(1)4  | "a":(2)8  | False  |
        """
        return other.contains(self) and self.pre_size == other.pre_size

    def strict_prefix_of(self, other: AxisRef) -> bool:
        return self.prefix_of(other) and self != other

    def suffix_of(self, other: AxisRef, mesh: AxisSizes) -> bool:
        """`other` contains this and both end at the same next pre-size.

        | this      | other     | result (a=8) |
        | "a":(2)4  | "a"       | True         |
        | "a":(2)4  | "a":(1)8  | True         |
        """
        return other.contains(self) and self.next_pre_size(mesh) == other.next_pre_size(mesh)

    def strict_suffix_of(self, other: AxisRef, mesh: AxisSizes) -> bool:
        return self.suffix_of(other, mesh) and self != other

    def overlaps(self, other: AxisRef) -> bool:
        """The two intervals intersect.

        | this      | other     | result |
        | "a":(1)4  | "a":(2)4  | True   |
        | "a":(1)2  | "a":(4)2  | False  |
        """
        if self.name != other.name:
            return False
        if self.sub_axis_info is None or other.sub_axis_info is None:
            return True
        return (
            self.pre_size < other.sub_axis_info.next_pre_size
            and other.pre_size < self.sub_axis_info.next_pre_size
        )

    def can_coexist(self, other: AxisRef) -> bool:
        """Both can be sub-axes of one decomposition of the axis.

        | this      | other     | result |
        | "a":(1)2  | "a":(1)3  | False  |
        | "a":(1)2  | "a":(3)2  | False  |
        | "a":(1)4  | "a":(2)4  | True   |
        """
        if self.name != other.name:
            return True
        if self.sub_axis_info is None or other.sub_axis_info is None:
            return True
        a_pre, a_next = self.pre_size, self.sub_axis_info.next_pre_size
        b_pre, b_next = other.pre_size, other.sub_axis_info.next_pre_size
        lo_pre, hi_pre = min(a_pre, b_pre), max(a_pre, b_pre)
        lo_next, hi_next = min(a_next, b_next), max(a_next, b_next)
        if lo_next > hi_pre:  # overlapping
            return lo_next % hi_pre == 0 and hi_pre % lo_pre == 0 and hi_next % lo_next == 0
        return hi_pre % lo_next == 0

    # -- constructions ----------------------------------------------------------------------

    def overlap(self, other: AxisRef) -> AxisRef | None:
        """The common part of the two intervals.

        | this      | other     | result    |
        | "a":(1)4  | "a":(2)4  | "a":(2)2  |
        | "a":(2)8  | "a":(4)2  | "a":(4)2  |
        """
        if self.name != other.name:
            return None
        if self.sub_axis_info is None:
            return other
        if other.sub_axis_info is None:
            return self
        if not self.overlaps(other) or not self.can_coexist(other):
            return None
        hi_pre = max(self.pre_size, other.pre_size)
        lo_next = min(self.sub_axis_info.next_pre_size, other.sub_axis_info.next_pre_size)
        return AxisRef(self.name, SubAxisInfo(hi_pre, lo_next // hi_pre))

    def prefix_without_overlap(self, other: AxisRef) -> AxisRef | None:
        """The longest prefix of this that does not overlap `other` (None if empty).

        | this      | other     | result    |
        | "a"       | "a":(2)2  | "a":(1)2  |
        | "a":(2)8  | "a":(4)2  | "a":(2)2  |
        | "a":(2)2  | "a":(2)2  | None      |
        """
        if not self.can_coexist(other):
            return None
        if not self.overlaps(other):
            return self
        if self.pre_size >= other.pre_size:
            return None
        return AxisRef(self.name, SubAxisInfo(self.pre_size, other.pre_size // self.pre_size))

    def suffix_without_overlap(self, other: AxisRef, mesh: AxisSizes) -> AxisRef | None:
        """The longest suffix of this that does not overlap `other` (None if empty).

        | this      | other     | result (a=8) |
        | "a"       | "a":(2)2  | "a":(4)2     |
        | "a":(1)4  | "a":(1)2  | "a":(2)2     |
        """
        if not self.can_coexist(other):
            return None
        if not self.overlaps(other):
            return self
        self_next, other_next = self.next_pre_size(mesh), other.next_pre_size(mesh)
        if self_next <= other_next:
            return None
        return AxisRef(self.name, SubAxisInfo(other_next, self_next // other_next))

    def greatest_common_prefix(self, other: AxisRef) -> AxisRef | None:
        """The longer of the two if one is a prefix of the other, else None.

        | this      | other     | result    |
        | "a":(1)4  | "a"       | "a":(1)4  |
        | "a":(1)2  | "a":(2)4  | None      |
        """
        if not self.can_coexist(other):
            return None
        if self.prefix_of(other):
            return self
        if other.prefix_of(self):
            return other
        return None

    def can_merge(self, other: AxisRef) -> bool:
        """Both are sub-axes of one axis and `other` starts where this ends.

        | this      | other     | result |
        | "a":(2)4  | "a":(8)2  | True   |
        | "c":(1)2  | "c":(4)2  | False  |
        """
        if self.name != other.name:
            return False
        if self.sub_axis_info is None or other.sub_axis_info is None:
            return False
        return self.sub_axis_info.next_pre_size == other.pre_size

    def merge(self, other: AxisRef, mesh: AxisSizes) -> AxisRef:
        """The concatenation of two mergeable sub-axes (a full axis if it covers it all).

        | this      | other     | result (a=16, b=8) |
        | "a":(2)4  | "a":(8)2  | "a":(2)8           |
        | "b":(1)2  | "b":(2)4  | "b"                |
        """
        assert self.can_merge(other), f"cannot merge {self} and {other}"
        size = self.size(mesh) * other.size(mesh)
        if self.pre_size == 1 and size == mesh.axis_size(self.name):
            return AxisRef(self.name)
        return AxisRef(self.name, SubAxisInfo(self.pre_size, size))


def sub_axis(name: str, pre_size: int, size: int) -> AxisRef:
    return AxisRef(name, SubAxisInfo(pre_size, size))


# -- axis lists ------------------------------------------------------------------------------


def axes_size(axes: Iterable[AxisRef], mesh: AxisSizes) -> int:
    """Product of the sizes of the axes (1 for none)."""
    return math.prod(a.size(mesh) for a in axes)


def add_axis_or_merge(axes: list[AxisRef], axis: AxisRef, mesh: AxisSizes) -> None:
    """Append `axis`, merging it into the last element when they are contiguous sub-axes."""
    if axes and axes[-1].can_merge(axis):
        axes[-1] = axes[-1].merge(axis, mesh)
    else:
        axes.append(axis)


def sort_and_merge_axes(axes: Iterable[AxisRef], mesh: AxisSizes, key) -> list[AxisRef]:
    """Sort with `key` (a mesh comparator key) and merge adjacent mergeable sub-axes."""
    result: list[AxisRef] = []
    for axis in sorted(axes, key=key):
        add_axis_or_merge(result, axis, mesh)
    return result


def greatest_common_prefix_of_lists(
    first: Sequence[AxisRef], second: Sequence[AxisRef]
) -> list[AxisRef]:
    """Equal leading elements, then the per-axis greatest common prefix at the first difference."""
    result: list[AxisRef] = []
    for a, b in zip(first, second, strict=False):
        if a == b:
            result.append(a)
            continue
        common = a.greatest_common_prefix(b)
        if common is not None:
            result.append(common)
        break
    return result


def prefix_without_overlap_with_list(axis: AxisRef, others: Iterable[AxisRef]) -> AxisRef | None:
    """Fold `prefix_without_overlap` over `others`; None as soon as nothing is left."""
    result = axis
    for other in others:
        prefix = result.prefix_without_overlap(other)
        if prefix is None:
            return None
        result = prefix
    return result


def lists_overlap(first: Iterable[AxisRef], second: Sequence[AxisRef]) -> bool:
    return any(a.overlaps(b) for a in first for b in second)


def truncate_axes_by_removing_overlaps(
    axes: Sequence[AxisRef], others: Sequence[AxisRef]
) -> list[AxisRef]:
    """Cut `axes` at its first element overlapping `others`, keeping that element's free prefix."""
    result: list[AxisRef] = []
    for axis in axes:
        if not any(axis.overlaps(o) for o in others):
            result.append(axis)
            continue
        prefix = prefix_without_overlap_with_list(axis, others)
        if prefix is not None:
            result.append(prefix)
        break
    return result


def axis_set_diff(
    axes: Iterable[AxisRef], remove: Iterable[AxisRef], mesh: AxisSizes
) -> list[AxisRef]:
    """The parts of `axes` not covered by `remove`, at sub-axis granularity."""
    remove_list = list(remove)
    result: list[AxisRef] = []
    for axis in axes:
        pieces = [axis]
        for r in remove_list:
            next_pieces: list[AxisRef] = []
            for piece in pieces:
                if not piece.overlaps(r):
                    next_pieces.append(piece)
                    continue
                prefix = piece.prefix_without_overlap(r)
                if prefix is not None:
                    next_pieces.append(prefix)
                suffix = piece.suffix_without_overlap(r, mesh)
                if suffix is not None:
                    next_pieces.append(suffix)
            pieces = next_pieces
        result.extend(pieces)
    return result


class PrefixStatus:
    EQUAL = "equal"
    STRICT_PREFIX = "strict_prefix"
    NOT_A_PREFIX = "not_a_prefix"


def is_axis_list_prefix_of(first: Sequence[AxisRef], second: Sequence[AxisRef]) -> str:
    """Whether `first` is EQUAL to, a STRICT_PREFIX of, or NOT_A_PREFIX of `second`.

    All but the last element of `first` must equal `second`'s; the last may be a sub-axis
    prefix of `second`'s element at that position: ``["a":(1)2]`` is a strict prefix of
    ``["a", "b"]``.
    """
    if not first:
        return PrefixStatus.EQUAL if not second else PrefixStatus.STRICT_PREFIX
    if len(first) > len(second):
        return PrefixStatus.NOT_A_PREFIX
    n = len(first)
    if any(first[i] != second[i] for i in range(n - 1)):
        return PrefixStatus.NOT_A_PREFIX
    last, other = first[-1], second[n - 1]
    if last == other:
        return PrefixStatus.EQUAL if n == len(second) else PrefixStatus.STRICT_PREFIX
    if last.prefix_of(other):
        return PrefixStatus.STRICT_PREFIX
    return PrefixStatus.NOT_A_PREFIX
