"""The planner against the hand-written standard plans, case by case and budget by budget.

    python benchmarks/plan/gen.py          # once: writes benchmarks/plan/data/<case>/*.mlir
    python benchmarks/plan/run.py          # every case in benchmarks/plan/data/
    python benchmarks/plan/run.py gpt_2x4 mlp --budgets 1,0.5 --json out.json

For each case: every standard plan (`data/<case>/<plan>.mlir`, written by `gen.py`) is
costed by `shardwise.plan.cost.estimate` (time, communication bytes per device, peak memory
per device); then, for each memory budget (unlimited, and the given fractions of data
parallel's peak, by default 50% and 25%), `shardwise.plan.search.plan_module` plans the
unannotated `input.mlir` on the case's mesh, and its plan is costed the same way.

Columns: `time_s` (communication + compute, the planner's objective), `comm B/dev`, `peak
MiB/dev`, `fits` (peak <= budget), `search s` (end to end, the planner's own count, and the
process's CPU seconds for it: the number to compare on a shared machine), and
`vs best` = the plan's time over the best standard plan that fits the same budget (<= 1.00:
the planner is at least as good; `-` when no standard plan fits), and the gap of the plan's
time to the planner's lower bound.

If the planner's search is not importable yet, the standard plans' table is still printed.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
from pathlib import Path
from typing import Any

DATA_DIR = Path(__file__).resolve().parent / "data"
MiB = 1024 * 1024


def _load(name: str) -> Any | None:
    try:
        return importlib.import_module(name)
    except ImportError as e:
        print(f"note: {name} is not available ({e})", file=sys.stderr)
        return None


def _cases(names: list[str]) -> list[Path]:
    if not DATA_DIR.is_dir():
        sys.exit(f"no {DATA_DIR}: run `python benchmarks/plan/gen.py` first")
    found = sorted(p for p in DATA_DIR.iterdir() if (p / "input.mlir").is_file())
    if not names:
        return found
    by_name = {p.name: p for p in found}
    missing = [n for n in names if n not in by_name]
    if missing:
        sys.exit(f"unknown case(s) {', '.join(missing)}; generated: {', '.join(by_name)}")
    return [by_name[n] for n in names]


def _row(label: str, s: dict[str, Any] | None, budget: int | None, extra: str = "") -> str:
    if s is None:
        return f"  {label:<14} {'(failed)':>10}"
    fits = "yes" if budget is None or s["peak_memory_bytes_per_device"] <= budget else "no"
    return (
        f"  {label:<14} {s['time_s']:>10.4g} {s['comm_bytes_per_device']:>12} "
        f"{s['peak_memory_bytes_per_device'] / MiB:>10.2f} {fits:>5} {extra}"
    )


def _best_fitting(standard: dict[str, dict[str, Any] | None], budget: int | None) -> float | None:
    times = [
        s["time_s"]
        for s in standard.values()
        if s is not None and (budget is None or s["peak_memory_bytes_per_device"] <= budget)
    ]
    return min(times) if times else None


def run_case(case: Path, fractions: list[float], cost: Any, search: Any) -> dict[str, Any]:
    mesh = (case / "mesh.txt").read_text().strip()
    print(f"\n{case.name} (mesh {mesh})")
    print(f"  {'plan':<14} {'time_s':>10} {'comm B/dev':>12} {'peak MiB':>10} {'fits':>5} notes")
    standard: dict[str, dict[str, Any] | None] = {}
    for path in sorted(case.glob("*.mlir")):
        if path.stem == "input":
            continue
        start = time.perf_counter()
        try:
            standard[path.stem] = cost.estimate(path.read_text())
        except Exception as e:  # noqa: BLE001 - one failing plan must not stop the table
            print(f"  {path.stem:<14} estimate failed: {type(e).__name__}: {e}")
            standard[path.stem] = None
            continue
        took = time.perf_counter() - start
        print(_row(path.stem, standard[path.stem], None, f"estimated in {took:.1f} s"))
    dp = standard.get("dp")
    budgets: list[tuple[str, int | None]] = [("unlimited", None)]
    if dp is not None:
        peak = dp["peak_memory_bytes_per_device"]
        budgets += [(f"{int(100 * f)}% dp", int(f * peak)) for f in fractions]
    out: dict[str, Any] = {"mesh": mesh, "standard": standard, "planned": {}}
    if search is None:
        print("  (planner not available: shardwise.plan.search is missing)")
        return out
    text = (case / "input.mlir").read_text()
    for label, budget in budgets:
        best = _best_fitting(standard, budget)
        cpu = time.process_time()
        try:
            plan = search.plan_module(text, mesh=mesh, memory=budget)
        except Exception as e:  # noqa: BLE001 - an infeasible budget or a planner failure
            cpu = time.process_time() - cpu
            print(
                f"  plan[{label}]: {type(e).__name__} ({cpu:.1f} s CPU): {str(e).splitlines()[0]}"
            )
            out["planned"][label] = {"error": str(e), "budget": budget}
            continue
        cpu = time.process_time() - cpu
        s = plan.summary
        ratio = "-" if best is None else f"{s['time_s'] / best:.2f}"
        extra = (
            f"search {plan.search_time_s:.1f} s ({cpu:.1f} s CPU), vs best {ratio} ({plan.name}), "
            f"gap to bound {100 * plan.gap:.0f}%"
        )
        print(_row(f"plan[{label}]", s, budget, extra))
        out["planned"][label] = {
            "budget": budget,
            "summary": s,
            "name": plan.name,
            "search_time_s": plan.search_time_s,
            "search_cpu_s": cpu,
            "lower_bound_s": plan.lower_bound,
            "vs_best_standard": None if best is None else s["time_s"] / best,
        }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="*", help="case names (default: every generated case)")
    parser.add_argument(
        "--budgets",
        default="0.5,0.25",
        help="memory budgets as fractions of data parallel's peak (default 0.5,0.25); "
        "unlimited is always run",
    )
    parser.add_argument("--json", metavar="OUT", help="also write every number as JSON")
    args = parser.parse_args(argv)
    fractions = [float(f) for f in args.budgets.split(",") if f.strip()]
    cost = _load("shardwise.plan.cost")
    if cost is None:
        print("shardwise.plan.cost (estimate) is needed to cost the plans", file=sys.stderr)
        return 1
    search = _load("shardwise.plan.search")
    results = {c.name: run_case(c, fractions, cost, search) for c in _cases(args.cases)}
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
