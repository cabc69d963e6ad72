"""``shardwise plan IN.mlir --mesh data=2,model=4 [--memory 16GiB] [-o OUT.mlir] [--json P]``."""

from __future__ import annotations

import argparse
import json
import sys

from shardwise.io.mlir import read_text_file, write_text_file

__all__ = ["build_parser", "run"]


def build_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", metavar="IN.mlir", help="the module to plan (its shardings are kept)")
    p.add_argument("--mesh", help="the mesh, NAME=SIZE,... (default: the module's one mesh)")
    p.add_argument("--memory", help="per-device memory budget: 16GiB, 512MiB, 2.5GB, 1e9")
    p.add_argument("-o", "--output", metavar="OUT.mlir", help="write the planned module")
    p.add_argument("--json", metavar="P.json", help="write the plan as JSON ('-' = stdout)")
    p.add_argument(
        "--executor",
        default=None,
        help="where candidates run: processes, inline or dask://HOST:PORT (default: "
        "in-process for small modules, else local processes)",
    )
    p.add_argument("--link-bandwidth", type=float, default=100e9, help="bytes/s (default 1e11)")
    p.add_argument("--link-latency", type=float, default=5e-6, help="seconds (default 5e-6)")
    p.add_argument("--peak-flops", type=float, default=100e12, help="FLOP/s (default 1e14)")
    p.add_argument("--hbm-bandwidth", type=float, default=1e12, help="bytes/s (default 1e12)")


def run(args: argparse.Namespace) -> int:
    from shardwise.plan.cost import CostParams
    from shardwise.plan.search import plan_module

    text = read_text_file(args.input)
    params = CostParams(
        link_bandwidth=args.link_bandwidth,
        link_latency=args.link_latency,
        peak_flops=args.peak_flops,
        hbm_bandwidth=args.hbm_bandwidth,
    )
    from shardwise.explain.progress import Progress

    with Progress("planning") as progress:  # drawn only on a terminal
        # The text, not a module loaded from it: the planner loads it once (loading it here
        # too cost MLIR's parse and our load of the whole input again, and a printout of it).
        plan = plan_module(
            text, args.mesh, args.memory, params, args.executor, progress, name=args.input
        )
    if args.output:
        write_text_file(args.output, plan.text)
    if args.json == "-":
        json.dump(plan.to_json(), sys.stdout, indent=1)
        print()
    elif args.json:
        write_text_file(args.json, plan.json_text())
    if args.json != "-":
        print(plan)
    return 0
