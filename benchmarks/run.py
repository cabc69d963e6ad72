"""Time the reference (Shardy in jaxlib) and shardwise on the same files, in one process.

    python benchmarks/gen_gpt.py            # once: writes benchmarks/data/gpt_<depth>.mlir
    python benchmarks/run.py                # every file in benchmarks/data/
    python benchmarks/run.py -n 7 benchmarks/data/gpt_16.mlir

Each repetition runs the reference then shardwise on the same text (alternating, so both see
the same machine state); the table shows the median over repetitions, after one untimed
warm-up each, and `best`: the ratio of the two fastest runs (interference on a shared machine
only ever slows a run down, so the minimum is the steadier estimate). A full GC runs before
each timed run, so neither side's garbage is collected in the other's time. Both sides do the
whole job: parse the text, run the default propagation pipeline
(`sdy-propagation-pipeline`), print the module.

- reference: `shardwise.io.reference.run_pass(text, "sdy-propagation-pipeline")`.
- shardwise: `shardwise.cli.main(["propagate", FILE, "-o", OUT])`, i.e. `shardwise propagate`
  with its default pipeline, called in this process. If it fails (not written yet, or an
  error), the shardwise columns are skipped with "shardwise: not available yet".
The `same` column says whether shardwise's output text equals the reference's.

`--fresh`: each timed run (either side) in a new process that first loads both engines on a
two-op module, then times one run of the input. Without it, the repetitions after the warm-up
find shardwise's caches filled by the earlier runs of the same input (memoized steps, rules,
parsed attributes, printed texts): 10-25% of a 1-3k-op model's time (llama_debug 0.95x warm,
1.05x fresh). `--fresh` is what one command per model sees, minus start-up and imports.

`--command`: time processes instead, `python -m shardwise propagate FILE -o OUT` against the
lean reference process `benchmarks/lean_reference.py FILE OUT` (jaxlib's MLIR bindings and
Shardy, no jax import), in CPU seconds of the child (user + system) with `--cpu`, else wall
clock. Both run with bytecode caching on (`PYTHONPYCACHEPREFIX` under benchmarks/data/), as an
installed package would, whatever `PYTHONDONTWRITEBYTECODE` says.

Memory: after the timed runs, one more (untimed) shardwise run under `tracemalloc` gives the
peak of Python allocations during the command (`sw peak MiB`; the C++ MLIR objects of
loading are not counted); the process's peak RSS (everything: jax, both sides) is printed
at the end. `--no-memory` skips the extra run. A scaling line compares the deepest and the
shallowest file: time ratio against depth ratio (linear scaling = equal ratios).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

from shardwise.io.reference import run_pass

ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = ROOT / "benchmarks" / "data"
PIPELINE = "sdy-propagation-pipeline"


def count_ops(text: str) -> int:
    """Operations in the module at every nesting level, the module op excluded."""
    from jax._src.interpreters import mlir as jax_mlir
    from jax._src.lib.mlir import ir

    count = 0

    def visit(_op) -> ir.WalkResult:
        nonlocal count
        count += 1
        return ir.WalkResult.ADVANCE

    with jax_mlir.make_ir_context():
        ir.Module.parse(text).operation.walk(visit)
    return count - 1


def run_reference(path: Path, text: str) -> str:
    # An input with debug info (`loc(...)`) is printed with its locations, as shardwise does.
    return run_pass(text, PIPELINE, debug_info="loc(" in text)


def run_shardwise(path: Path, text: str) -> str:
    """`shardwise propagate FILE -o OUT` in this process; raises if it does not succeed."""
    from shardwise import cli  # not written yet on early checkouts: ImportError

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.mlir"
        sink = io.StringIO()
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            try:
                code = cli.main(["propagate", str(path), "-o", str(out)])
            except SystemExit as e:
                code = e.code
        if code not in (0, None) or not out.exists():
            raise RuntimeError(f"exit code {code}: {sink.getvalue().strip()[-500:]}")
        return out.read_text()


LEAN_REFERENCE = ROOT / "benchmarks" / "lean_reference.py"


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(DATA_DIR / "pycache")
    return env


def _run_child(argv: list[str], out: Path) -> str:
    """Run a process; its output file's text. Raises if it fails."""
    done = subprocess.run(argv, env=_child_env(), capture_output=True, text=True)
    if done.returncode != 0 or not out.exists():
        raise RuntimeError(f"exit code {done.returncode}: {done.stderr.strip()[-500:]}")
    return out.read_text()


def command_reference(path: Path, text: str) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.mlir"
        return _run_child([sys.executable, str(LEAN_REFERENCE), str(path), str(out)], out)


def command_shardwise(path: Path, text: str) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.mlir"
        argv = [sys.executable, "-m", "shardwise", "propagate", str(path), "-o", str(out)]
        return _run_child(argv, out)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


# The clock of `timed`: wall clock, or with --cpu this process's CPU time (steadier when other
# jobs share the cores; both sides run in this process, so it counts the same work).
clock = time.perf_counter


def timed(fn: Callable[[Path, str], str], path: Path, text: str) -> tuple[float, str]:
    # Each side starts with no garbage of the other's run left: a full collection of it would
    # otherwise land in whichever timed run triggers it.
    gc.collect()
    start = clock()
    out = fn(path, text)
    return clock() - start, out


# `--fresh`: each timed run in a new process that first loads both engines on a two-op module
# (imports, dialects, MLIR's context), then times one run of the input: no run starts with what
# an earlier run of the same input left in the caches (shardwise's memoized steps, rules,
# parsed attributes and printed texts; MLIR's uniqued attributes and types). What a user's one
# command per model does, minus the start-up and imports that `--command` also counts.
WARM_UP = """sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<8xf32> {
  %0 = stablehlo.abs %arg0 : tensor<8xf32>
  return %0 : tensor<8xf32>
}
"""


def timed_fresh(fn: Callable[[Path, str], str], path: Path, text: str) -> tuple[float, str]:
    """`timed` of `fn` in a new process (`--one`), its time and output read back."""
    side = "ref" if fn is run_reference else "sw"
    cpu = "--cpu" if clock is time.process_time else "--wall"
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.mlir"
        argv = [sys.executable, str(Path(__file__).resolve()), "--one", side, cpu, str(path)]
        done = subprocess.run([*argv, str(out)], env=_child_env(), capture_output=True, text=True)
        if done.returncode != 0 or not out.exists():
            raise RuntimeError(f"exit code {done.returncode}: {done.stderr.strip()[-500:]}")
        return float(done.stdout.split()[-1]), out.read_text()


def _one(argv: list[str]) -> int:
    """`--one ref|sw --cpu|--wall FILE OUT`: warm both engines up on `WARM_UP`, then time one
    run of one side on FILE; print the seconds, write the output to OUT."""
    global clock
    side, how, file, out = argv
    clock = time.process_time if how == "--cpu" else time.perf_counter
    with tempfile.TemporaryDirectory() as tmp:
        warm = Path(tmp) / "warm_up.mlir"
        warm.write_text(WARM_UP)
        run_reference(warm, WARM_UP)
        run_shardwise(warm, WARM_UP)
    path = Path(file)
    elapsed, text = timed(run_reference if side == "ref" else run_shardwise, path, path.read_text())
    Path(out).write_text(text)
    print(elapsed)
    return 0


def peak_memory_mib(path: Path, text: str) -> float:
    """Peak traced Python memory of one shardwise run, in MiB (no profiler, just tracemalloc)."""
    tracemalloc.start()
    try:
        run_shardwise(path, text)
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def shardwise_available(path: Path, text: str) -> bool:
    try:
        run_shardwise(path, text)
    except Exception as e:  # any failure means: nothing to time yet
        print(f"shardwise: not available yet ({type(e).__name__}: {str(e)[:200]})")
        return False
    return True


def bench_file(
    path: Path, reps: int, with_shardwise: bool, memory: bool = False, fresh: bool = False
) -> dict:
    text = path.read_text()
    timer = timed_fresh if fresh else timed
    if not fresh:
        run_reference(path, text)  # warm-up
    ref_times, sw_times, ref_out, sw_out, sw_error = [], [], "", None, None
    for _ in range(reps):
        t, ref_out = timer(run_reference, path, text)
        ref_times.append(t)
        if with_shardwise and sw_error is None:
            try:
                t, sw_out = timer(run_shardwise, path, text)
                sw_times.append(t)
            except Exception as e:  # report and keep timing the reference
                sw_error = f"{type(e).__name__}: {str(e)[:200]}"
    row = {"file": path.name, "ops": count_ops(text), "ref_s": statistics.median(ref_times)}
    row["ref_min"] = min(ref_times)
    if sw_error is not None:
        row["sw_error"] = sw_error
    elif with_shardwise:
        row["sw_s"] = statistics.median(sw_times)
        row["sw_min"] = min(sw_times)
        row["same"] = sw_out == ref_out
        if memory:
            row["sw_mib"] = peak_memory_mib(path, text)
    return row


def print_row(row: dict) -> None:
    ops, ref = row["ops"], row["ref_s"]
    line = f"{row['file']:16s} {ops:7d} {ref:9.3f} {ops / ref:10.0f}"
    if "sw_s" in row:
        sw = row["sw_s"]
        best = row["sw_min"] / row["ref_min"]
        line += f" {sw:9.3f} {ops / sw:10.0f} {sw / ref:8.2f}x {best:6.2f}x  "
        line += f"{'yes' if row['same'] else 'no':4s}"
        if "sw_mib" in row:
            line += f" {row['sw_mib']:11.0f}"
    if "sw_error" in row:
        line += f"  shardwise failed: {row['sw_error']}"
    print(line, flush=True)


def depth_key(path: Path) -> tuple[int, str]:
    m = re.search(r"(\d+)", path.stem)
    return (int(m.group(1)) if m else 0, path.name)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--one"]:
        return _one(argv[1:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path, help="default: benchmarks/data/*.mlir")
    parser.add_argument("-n", "--reps", type=int, default=5, help="repetitions (median)")
    parser.add_argument("--reference-only", action="store_true", help="skip shardwise")
    parser.add_argument("--no-memory", action="store_true", help="skip the tracemalloc run")
    parser.add_argument(
        "--cpu", action="store_true", help="time CPU seconds of this process, not wall clock"
    )
    parser.add_argument(
        "--command",
        action="store_true",
        help="time processes: `python -m shardwise propagate` against benchmarks/lean_reference.py",
    )
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="each timed run in a child forked before any run: no cache warmed by an earlier "
        "run of the same input (what one command per model sees, minus start-up)",
    )
    args = parser.parse_args(argv)
    global clock, run_reference, run_shardwise
    clock = time.process_time if args.cpu else time.perf_counter
    if args.command:
        clock = children_cpu if args.cpu else time.perf_counter
        run_reference, run_shardwise = command_reference, command_shardwise
        args.no_memory = True
    files = args.files or sorted(DATA_DIR.glob("*.mlir"), key=depth_key)
    if not files:
        print("no input files; run: python benchmarks/gen_gpt.py", file=sys.stderr)
        return 2
    if args.fresh:
        if args.command:
            parser.error("--fresh times in-process runs; --command runs processes already")
        args.no_memory = True
    with_sw = not args.reference_only and shardwise_available(files[0], files[0].read_text())
    header = f"{'file':16s} {'ops':>7s} {'ref s':>9s} {'ref ops/s':>10s}"
    if with_sw:
        header += f" {'sw s':>9s} {'sw ops/s':>10s} {'sw/ref':>9s} {'best':>7s}  same"
        header += "" if args.no_memory else " sw peak MiB"
    what = "CPU seconds" if args.cpu else "wall-clock seconds"
    what += " of processes (lean reference vs shardwise propagate)" if args.command else ""
    what += ", each run in a fresh process" if args.fresh else ""
    print(f"pipeline: {PIPELINE}; median of {args.reps} repetitions, {what}")
    print(header)
    rows = []
    for path in files:
        rows.append(bench_file(path, args.reps, with_sw, not args.no_memory, args.fresh))
        print_row(rows[-1])
    print_scaling(rows)
    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(f"process peak RSS: {peak_rss:.0f} MiB (jax, the reference and shardwise together)")
    return 0


def print_scaling(rows: list[dict]) -> None:
    """Deepest vs shallowest file: how time grows against how the op count grows."""
    if len(rows) < 2:
        return
    small, big = rows[0], rows[-1]
    line = f"scaling {big['file']} / {small['file']}: ops x{big['ops'] / small['ops']:.1f}"
    line += f", reference time x{big['ref_s'] / small['ref_s']:.1f}"
    if "sw_s" in big and "sw_s" in small:
        line += f", shardwise time x{big['sw_s'] / small['sw_s']:.1f}"
    print(line)


if __name__ == "__main__":
    sys.exit(main())
