"""How long `shardwise plan` searches: the train step of `tests/plan/models.py` (attention + MLP
layers) at several depths, on several meshes. A benchmark, not a test: it prints, asserts
nothing.

    python benchmarks/plan/search_time.py                      # depths 2 6 12 24; 2x4, 2x2x2
    python benchmarks/plan/search_time.py --depths 24 --meshes data=8,model=8

Each line: depth, mesh, candidates evaluated exactly, CPU and wall seconds of `plan_module`
(in-process: the lowering from JAX is not timed), the plan's name and its estimated step time.
On a shared machine the CPU time is the number to compare.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

DEFAULT_DEPTHS = (2, 6, 12, 24)
DEFAULT_MESHES = ("data=2,model=4", "data=2,model=2,seq=2")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depths", nargs="*", type=int, default=list(DEFAULT_DEPTHS))
    parser.add_argument("--meshes", nargs="*", default=list(DEFAULT_MESHES))
    parser.add_argument("--executor", default="inline", help="inline, processes, dask://...")
    args = parser.parse_args(argv)

    from tests.plan import models

    import shardwise
    from shardwise.plan.search import plan_module

    print(f"{'depth':>5} {'mesh':<22} {'cands':>5} {'cpu_s':>7} {'wall_s':>7}  plan, time_s")
    for depth in args.depths:
        fn, example = models.attention_train(layers=depth)
        text = shardwise.from_jax(fn, *example).text
        for mesh in args.meshes:
            wall, cpu = time.perf_counter(), time.process_time()
            plan = plan_module(text, mesh, executor=args.executor)
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            print(
                f"{depth:>5} {mesh:<22} {plan.candidates_evaluated:>5} {cpu:>7.1f} {wall:>7.1f}"
                f"  {plan.name}, {plan.summary['time_s']:.6g}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
