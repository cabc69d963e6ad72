"""Parse and print the axis-list attributes of sdy collectives (kept as raw text in our IR).

| attribute                        | text                                                  |
| -------------------------------- | ----------------------------------------------------- |
| `AxisRefListAttr`                | ``#sdy<axis_ref_list{"x", "y":(1)2}>``                |
| `ListOfAxisRefListsAttr`         | ``#sdy<list_of_axis_ref_lists[{}, {"x"}]>``           |
| `AllToAllParamListAttr`          | ``#sdy<all_to_all_param_list[{"x"}: 0->1]>``          |
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from shardwise.axis import AxisRef
from shardwise.ir import RawAttr
from shardwise.syntax import SdyParser

__all__ = [
    "AllToAllParam",
    "parse_axis_ref_list",
    "parse_list_of_axis_ref_lists",
    "parse_all_to_all_params",
    "axis_ref_list_attr",
    "list_of_axis_ref_lists_attr",
    "all_to_all_params_attr",
]

AxisList = tuple[AxisRef, ...]


@dataclass(frozen=True, slots=True)
class AllToAllParam:
    """One ``{axes}: src->tgt`` entry of an all-to-all."""

    axes: AxisList
    src_dim: int
    tgt_dim: int

    def __str__(self) -> str:
        return f"{_braced(self.axes)}: {self.src_dim}->{self.tgt_dim}"


def _braced(axes: AxisList) -> str:
    return "{" + ", ".join(str(a) for a in axes) + "}"


def _parse_braced(parser: SdyParser) -> AxisList:
    parser.parse_punctuation("{")
    if parser.parse_optional_punctuation("}"):
        return ()
    axes = parser.parse_comma_separated(parser.parse_axis_ref)
    parser.parse_punctuation("}")
    return tuple(axes)


def _parser(attr: Any, mnemonic: str) -> SdyParser:
    parser = SdyParser(str(attr))
    parser.parse_punctuation("#sdy<")
    parser.parse_keyword(mnemonic)
    return parser


def _bracketed(parser: SdyParser, element) -> list:
    parser.parse_punctuation("[")
    if parser.parse_optional_punctuation("]"):
        return []
    items = parser.parse_comma_separated(element)
    parser.parse_punctuation("]")
    return items


def parse_axis_ref_list(attr: Any) -> AxisList:
    parser = _parser(attr, "axis_ref_list")
    return _parse_braced(parser)


def parse_list_of_axis_ref_lists(attr: Any) -> tuple[AxisList, ...]:
    parser = _parser(attr, "list_of_axis_ref_lists")
    return tuple(_bracketed(parser, lambda: _parse_braced(parser)))


def parse_all_to_all_params(attr: Any) -> tuple[AllToAllParam, ...]:
    parser = _parser(attr, "all_to_all_param_list")

    def element() -> AllToAllParam:
        axes = _parse_braced(parser)
        parser.parse_punctuation(":")
        src = parser.parse_integer()
        parser.parse_punctuation("->")
        return AllToAllParam(axes, src, parser.parse_integer())

    return tuple(_bracketed(parser, element))


def axis_ref_list_attr(axes: AxisList) -> RawAttr:
    return RawAttr(f"#sdy<axis_ref_list{_braced(axes)}>")


def list_of_axis_ref_lists_attr(lists: tuple[AxisList, ...]) -> RawAttr:
    return RawAttr("#sdy<list_of_axis_ref_lists[" + ", ".join(_braced(a) for a in lists) + "]>")


def all_to_all_params_attr(params: tuple[AllToAllParam, ...]) -> RawAttr:
    return RawAttr("#sdy<all_to_all_param_list[" + ", ".join(str(p) for p in params) + "]>")
