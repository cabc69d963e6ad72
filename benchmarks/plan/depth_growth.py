"""How `shardwise plan`'s end-to-end time grows with the depth of the GPT train step of `gen.py`.

    python benchmarks/plan/depth_growth.py                           # depths 12 24 48 96, 2x4
    python benchmarks/plan/depth_growth.py --depths 24 48 --meshes data=2,fsdp=2,model=2

Each depth is lowered once (`gen.py`'s `gpt_train_case`, no shardings) to
`benchmarks/plan/data/depth/gpt_<depth>.mlir` (git-ignored, reused when present); then, for
each mesh, `shardwise plan FILE --mesh MESH --json` runs as its own process, as a user runs it.
Each line: depth, mesh, ops in the file, the process's wall and CPU seconds (median of
`--repeat` runs; CPU of the process and its children, the planner's helper process included),
the planner's own search seconds, candidates, the plan's time_s, and the growth of the wall
and of the CPU seconds over the previous depth (issue 22's target: <= 1.1x per doubling, end
to end: what the user waits for, the wall time).
A benchmark: it prints, asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "depth"


def lowered(depth: int) -> Path:
    path = DATA / f"gpt_{depth}.mlir"
    if not path.exists():
        sys.path.insert(0, str(HERE))
        import gen  # noqa: PLC0415  (sets XLA_FLAGS, imports jax: only when lowering)

        DATA.mkdir(parents=True, exist_ok=True)
        path.write_text(gen.gpt_train_case(depth)(gen.MESH_2X4, None))
    return path


def run_plan(path: Path, mesh: str) -> tuple[float, float, dict]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "plan.json"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        wall = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                "-m",
                "shardwise",
                "plan",
                str(path),
                "--mesh",
                mesh,
                "--json",
                str(out),
                "-o",
                os.devnull,
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        wall = time.perf_counter() - wall
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        return wall, cpu, json.loads(out.read_text())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depths", nargs="*", type=int, default=[12, 24, 48, 96])
    parser.add_argument("--meshes", nargs="*", default=["data=2,model=4"])
    parser.add_argument("--repeat", type=int, default=1, help="runs per point (median)")
    args = parser.parse_args(argv)

    print(
        f"{'depth':>5} {'mesh':<22} {'ops':>6} {'wall_s':>7} {'cpu_s':>7} {'search_s':>8}"
        f" {'cands':>5} {'wall_x':>6} {'cpu_x':>6}  plan, time_s"
    )
    for mesh in args.meshes:
        previous: tuple[float, float] | None = None
        for depth in args.depths:
            path = lowered(depth)
            ops = sum(1 for line in path.read_text().splitlines() if "stablehlo." in line)
            runs = [run_plan(path, mesh) for _ in range(args.repeat)]
            wall = statistics.median(r[0] for r in runs)
            cpu = statistics.median(r[1] for r in runs)
            plan = runs[0][2]
            growth = "" if previous is None else f"{wall / previous[0]:.2f}x"
            cpu_growth = "" if previous is None else f"{cpu / previous[1]:.2f}x"
            previous = wall, cpu
            print(
                f"{depth:>5} {mesh:<22} {ops:>6} {wall:>7.2f} {cpu:>7.2f}"
                f" {plan['search_time_s']:>8.2f} {plan['candidates_evaluated']:>5} {growth:>6}"
                f" {cpu_growth:>6}"
                f"  {plan['plan']}, {plan['summary']['time_s']:.6g}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
