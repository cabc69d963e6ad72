"""``shardwise explain IN.mlir --value NAME | --op LINE [--picture]``."""

from __future__ import annotations

import argparse

from shardwise.explain.run import explain_module, find_keys, key_type
from shardwise.explain.text import format_explanation, picture, wants_rich
from shardwise.io.mlir import load_text, read_text_file
from shardwise.sharding import resolve_mesh

__all__ = ["build_parser", "run"]


def build_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", metavar="IN.mlir", help="input file")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument(
        "--value",
        metavar="NAME",
        help="params['w1'], result['out'], model.py:12 (a Python line), %%3, main:arg0",
    )
    which.add_argument("--op", type=int, metavar="LINE", help="the op at this line of the input")
    p.add_argument("--picture", action="store_true", help="draw the tiles on the devices")
    p.add_argument("--plain", action="store_true", help="plain text even on a terminal")
    p.add_argument(
        "--allow-unregistered-dialect",
        action="store_true",
        help='accept ops of unknown dialects ("foo.bar"), as ops without a sharding rule',
    )


def run(args: argparse.Namespace) -> int:
    module = load_text(read_text_file(args.input), args.input, args.allow_unregistered_dialect)
    ex = explain_module(module)
    console = None
    if wants_rich(args.plain):
        from rich.console import Console  # only on a terminal: the core never imports rich

        from shardwise.explain.rich_text import render_explanation

        console = Console()
    for key in find_keys(module, args.value, args.op):
        exp = ex.explain(key)
        if console is not None:
            render_explanation(console, ex, exp)
        else:
            print(format_explanation(ex, exp))
        if args.picture:
            mesh = None
            if exp.sharding is not None:
                mesh = resolve_mesh(exp.sharding, module.meshes())
            print(picture(exp.sharding, key_type(module, key), mesh))
    return 0
