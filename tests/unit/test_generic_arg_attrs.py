"""A func's ``arg_attrs`` / ``res_attrs`` list, read dict after dict in place by the generic
parser (one dictionary per argument: thousands on a deep model's main func). Expected values
are hand-derived from MLIR's generic form."""

from __future__ import annotations

import pytest

from shardwise import ir
from shardwise.io.generic_text import convert_attr, parse_attr_dict
from shardwise.syntax import parse_sdy_attribute

_SHARDING = '#sdy.sharding<@mesh, [{}, {"model"}]>'


def _dicts(*items: dict) -> ir.ArrayAttr:
    return ir.ArrayAttr([ir.DictAttr(d) for d in items])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{arg_attrs = []}", {"arg_attrs": _dicts()}),
        ("{arg_attrs = [ ]}", {"arg_attrs": _dicts()}),
        (
            '{arg_attrs = [{}, {a = 1 : i32}], sym_name = "f"}',
            {"arg_attrs": _dicts({}, {"a": ir.RawAttr("1 : i32")}), "sym_name": ir.RawAttr('"f"')},
        ),
        ("{res_attrs = [ {} ,{b} ] , c}", {"res_attrs": _dicts({}, {"b": ir.UNIT}), "c": ir.UNIT}),
        (
            "{arg_attrs = [{sdy.sharding = " + _SHARDING + "}, {}]}",
            {"arg_attrs": _dicts({"sdy.sharding": parse_sdy_attribute(_SHARDING)}, {})},
        ),
        (  # nested brackets and strings holding brackets and commas inside an item
            '{arg_attrs = [{n = "a, ]}", m = [[1, 2], [3]]}]}',
            {"arg_attrs": _dicts({"n": ir.RawAttr('"a, ]}"'), "m": ir.RawAttr("[[1, 2], [3]]")})},
        ),
    ],
)
def test_arg_attrs_are_read_dict_after_dict(text: str, expected: dict) -> None:
    assert parse_attr_dict(text, parse_sdy_attribute) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[{a}, {b}]", _dicts({"a": ir.UNIT}, {"b": ir.UNIT})),
        ("[{a} , {}  ]", _dicts({"a": ir.UNIT}, {})),
    ],
)
def test_the_list_alone_as_convert_attr_gets_it(text: str, expected: ir.ArrayAttr) -> None:
    assert convert_attr(text, parse_sdy_attribute, "arg_attrs") == expected
