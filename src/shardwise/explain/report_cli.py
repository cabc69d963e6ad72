"""``shardwise report IN.mlir [--json OUT] [--html OUT.html]``: what the sharding costs."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from shardwise.errors import ShardwiseError
from shardwise.explain.html import render_html
from shardwise.explain.progress import Progress
from shardwise.explain.report import LinkModel, build_report
from shardwise.explain.summary import summary_line
from shardwise.explain.text import wants_rich
from shardwise.io.mlir import read_text_file, write_text_file

__all__ = ["build_parser", "run"]


def build_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", metavar="IN.mlir", help="input file")
    p.add_argument(
        "--json", metavar="OUT", help="write the report as JSON ('-' = stdout, indented)"
    )
    p.add_argument("--html", metavar="OUT.html", help="write a self-contained HTML report")
    p.add_argument("--link-bandwidth", type=float, default=100e9, help="bytes/s (default 1e11)")
    p.add_argument("--link-latency", type=float, default=5e-6, help="seconds (default 5e-6)")
    p.add_argument(
        "--link-model", metavar="FILE.json", help='per-axis links: {"axes": {"x": {...}}}'
    )
    p.add_argument(
        "--explanations",
        action="store_true",
        help="give each value of the JSON its explanation text (the HTML always has them)",
    )
    p.add_argument(
        "--progress", action="store_true", help="progress bar on stderr (default: on a terminal)"
    )
    p.add_argument("--plain", action="store_true", help="plain text even on a terminal")
    p.add_argument(
        "--allow-unregistered-dialect",
        action="store_true",
        help='accept ops of unknown dialects ("foo.bar"), as ops without a sharding rule',
    )


def _link(args: argparse.Namespace) -> LinkModel:
    if args.link_model:
        try:
            return LinkModel.from_json(Path(args.link_model).read_text())
        except (OSError, ValueError, AttributeError) as e:
            raise ShardwiseError(f"--link-model {args.link_model}: cannot read it: {e}") from None
    return LinkModel(args.link_bandwidth, args.link_latency)


def _without_prose(value: dict) -> dict:
    return {k: v for k, v in value.items() if k != "explanation"}


def run(args: argparse.Namespace) -> int:
    text = read_text_file(args.input)
    prose = bool(args.explanations or args.html)
    with Progress("report", force=args.progress) as progress:
        report = build_report(
            text,
            args.input,
            _link(args),
            progress,
            explanations=prose,
            allow_unregistered_dialect=args.allow_unregistered_dialect,
        )
    data = report.to_json()
    if not args.explanations:  # the structured facts only, unless asked
        data = {**data, "values": [_without_prose(v) for v in data["values"]]}
    if args.json == "-":
        json.dump(data, sys.stdout, indent=1)
        print()
    elif args.json:  # compact: the C encoder (an indent takes Python's, 3x slower)
        write_text_file(args.json, json.dumps(data))
    if args.html:
        write_text_file(args.html, render_html(report, args.input))
    if not args.json and wants_rich(args.plain):
        from rich.console import Console  # only on a terminal: the core never imports rich

        from shardwise.explain.rich_text import render_report

        render_report(Console(), report)
    elif not args.json:
        print(f"{len(report.collectives)} collectives")
        for c in report.collectives:
            print(
                f"  {c.kind} {{{', '.join(c.axes)}}} {c.bytes_per_device} B/device "
                f"~{c.time_s:.3g} s at {c.loc} for {c.cause}"
            )
        for axis, t in report.totals.items():
            print(f"axis {axis}: {t['count']} collectives, {t['bytes_per_device']} B/device")
        print(summary_line(report.summary))
        if report.ops_without_rule:
            names = ", ".join(report.ops_without_rule)
            print(f"no sharding rule (what flows through them is replicated): {names}")
    return 0
