"""MLIR generic op form <-> our IR, in pure Python (no jax import).

`parse_generic` reads the text that the MLIR bindings print with
``get_asm(print_generic_op_form=True, enable_debug_info=True)`` into `shardwise.ir` objects;
`print_generic` writes our IR back as generic-form text that MLIR parses again.

Generic form of one op (every part but the name is optional)::

    %0:2 = "dialect.op"(%a, %b#1)[^bb1] <{props}> ({ regions }) {attrs} : (types) -> (types) loc(...)

The parser lives in `generic_parser`, the printer in `generic_printer`, what both use (bracket
scanning, locations, attribute dictionaries) in `generic_text`; this module is their one entry.
"""

from __future__ import annotations

from shardwise.io.generic_parser import Positions, parse_generic
from shardwise.io.generic_printer import OP_MARKER, print_generic
from shardwise.io.generic_text import (
    SdyParser,
    convert_attr,
    dialect_resources,
    loc_position,
    parse_attr_dict,
    resolve_loc_aliases,
    skip_balanced,
    split_top_level,
)

__all__ = [
    "OP_MARKER",
    "Positions",
    "SdyParser",
    "parse_generic",
    "print_generic",
    "parse_attr_dict",
    "convert_attr",
    "resolve_loc_aliases",
    "loc_position",
    "dialect_resources",
    "skip_balanced",
    "split_top_level",
]
