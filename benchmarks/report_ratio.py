"""How much longer `shardwise report` takes than `shardwise propagate` on the same model.

    python benchmarks/gen_gpt.py 16 64          # writes benchmarks/data/gpt_{16,64}.mlir
    python benchmarks/report_ratio.py           # gpt_16 and gpt_64, 3 runs each
    python benchmarks/report_ratio.py benchmarks/data/gpt_32.mlir --runs 5
    python benchmarks/report_ratio.py --phases  # where report's time goes (in one process)

Each command runs as its own process (``python -m shardwise ...``, start-up included, output
to a temporary file); the time is its CPU time (user + system, from `resource`), less
sensitive than wall time to other processes on the machine. The median of `--runs` runs of
each is compared: the goal is report <= 2x propagate (issue 23).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MODELS = [ROOT / "benchmarks" / "data" / f"gpt_{d}.mlir" for d in (16, 64)]


def cpu_seconds(argv: list[str]) -> float:
    """The CPU time of one child process running `argv` (it must succeed)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    subprocess.run(argv, check=True, env=env, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def ratio(model: Path, runs: int) -> tuple[float, float]:
    """Median CPU seconds of propagate and of report (JSON) on `model`."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        cli = [sys.executable, "-m", "shardwise"]
        propagate = [*cli, "propagate", str(model), "-o", str(out / "out.mlir")]
        report = [*cli, "report", str(model), "--json", str(out / "report.json")]
        times: dict[str, list[float]] = {"propagate": [], "report": []}
        for _ in range(runs):  # interleaved: a burst of load hits both alike
            times["propagate"].append(cpu_seconds(propagate))
            times["report"].append(cpu_seconds(report))
    return statistics.median(times["propagate"]), statistics.median(times["report"])


def phases(model: Path) -> None:
    """The report's phases in this process (warm imports), against the pipeline alone."""
    sys.path.insert(0, str(ROOT / "src"))
    from shardwise.explain.report import build_report
    from shardwise.io.mlir import load_text
    from shardwise.passes import run_pass

    text = model.read_text()
    start = time.process_time()
    run_pass(load_text(text, str(model)), "sdy-propagation-pipeline")
    print(f"  load + propagation pipeline: {time.process_time() - start:.2f} s")

    class Phases:
        def __init__(self) -> None:
            self.label: str | None = None
            self.start = time.process_time()

        def update(self, done: int, total: int, label: str | None = None) -> None:
            if label != self.label:
                self.close()
                self.label, self.start = label, time.process_time()

        def close(self) -> None:
            if self.label is not None:
                print(f"  {self.label}: {time.process_time() - self.start:.2f} s")

    sink = Phases()
    start = time.process_time()
    build_report(text, str(model), progress=sink, explanations=False)
    sink.close()
    print(f"  build_report in all (load included): {time.process_time() - start:.2f} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", type=Path, default=DEFAULT_MODELS)
    parser.add_argument("--runs", type=int, default=3, help="runs of each command (median)")
    parser.add_argument("--phases", action="store_true", help="time report's phases instead")
    args = parser.parse_args(argv)
    missing = [m for m in args.models if not m.exists()]
    if missing:
        print(f"missing {', '.join(map(str, missing))}: run benchmarks/gen_gpt.py first")
        return 2
    for model in args.models:
        if args.phases:
            print(model.name)
            phases(model)
            continue
        propagate, report = ratio(model, args.runs)
        print(
            f"{model.name}: propagate {propagate:.2f} s, report {report:.2f} s CPU "
            f"(median of {args.runs}): {report / propagate:.2f}x"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
