"""Partition every corpus and benchmark model with shardwise and check it: a table.

    python benchmarks/check_models.py                       # corpus + benchmark models
    python benchmarks/check_models.py --seed 1 tests/models/data/moe.mlir
    python benchmarks/check_models.py --json out.json       # the rows as data too

Models: `tests/models/data/*.mlir` and, when they exist, the benchmark models of
`benchmarks/data/` that `docs/check.md` records (`gen_models.py`, `gen_gpt.py`,
`gen_models.py adam`; the gpt files at depths 16 and 64 and 128). Each model is partitioned
(`shardwise.partition`, as `shardwise partition` does) and checked (`shardwise.check`, one
XLA worker for all). Columns: the verdict (EQUAL, DIFFERENT, UNDECIDED, or `cannot run` /
`partition error` with the first line of the message), over the results the largest absolute
and relative error (against the float64 truth when there is one), the largest of the
unsharded f32 program's own errors against that truth, the ratio (the largest multiple of
the reference's own error an element of a result has, beyond the floor: it passes up to
`values.K_REFERENCE`), and the seconds of partition and check (wall clock: the machine may
be shared).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from shardwise.check.checker import check  # noqa: E402
from shardwise.check.executor import Executor  # noqa: E402
from shardwise.errors import ShardwiseError, UnsupportedError  # noqa: E402
from shardwise.io.mlir import load_text, read_text_file, write_text  # noqa: E402
from shardwise.partition import partition  # noqa: E402

CORPUS = ROOT / "tests" / "models" / "data"
BENCH = ROOT / "benchmarks" / "data"
BENCH_MODELS = (
    "scan_64",
    "conv_256",
    "moe_128",
    "train_32",
    "adam_64",
    "gpt_16",
    "gpt_64",
    "gpt_128",
)


def default_models() -> list[Path]:
    corpus = sorted(CORPUS.glob("*.mlir"))
    bench = [BENCH / f"{name}.mlir" for name in BENCH_MODELS if (BENCH / f"{name}.mlir").exists()]
    return corpus + bench


def check_model(path: Path, seed: int, executor: Executor) -> dict[str, object]:
    """One row: partition and check `path`."""
    row: dict[str, object] = {"model": path.stem, "verdict": "", "note": ""}
    start = time.perf_counter()
    text = read_text_file(str(path))
    try:
        module = load_text(text, str(path))
        partition(module)
        local = write_text(module)
    except ShardwiseError as e:
        row.update(verdict="partition error", note=str(e).splitlines()[0][:120])
        row["partition_s"] = time.perf_counter() - start
        return row
    row["partition_s"] = time.perf_counter() - start
    start = time.perf_counter()
    try:
        result = check(
            text,
            local,
            seed=seed,
            executor=executor,
            global_name=str(path),
            local_name=f"{path.name} (partitioned by shardwise)",
        )
    except UnsupportedError as e:
        row.update(verdict="cannot run", note=str(e).splitlines()[0][:160])
        row["check_s"] = time.perf_counter() - start
        return row
    row["check_s"] = time.perf_counter() - start
    diffs = [r.difference for r in result.results]
    refs = [d.reference_error for d in diffs if d.reference_error is not None]
    ratios = [d.error_ratio for d in diffs if d.error_ratio is not None]
    off_path = sum(d.off_path for d in diffs)
    row.update(
        verdict=result.verdict,
        max_abs=max((d.max_abs_error for d in diffs), default=0.0),
        max_rel=max((d.max_rel_error for d in diffs), default=0.0),
        ref_err=max(refs) if refs else None,
        ratio=max(ratios) if ratios else None,
        off_path=off_path,
        tolerance=result.tolerance,
        differing=[r.index for r in result.results if not r.equal],
    )
    notes = []
    if not result.equal:
        bad = [r for r in result.results if not r.equal]
        notes.append(
            "; ".join(
                f"result {r.index}: {r.difference.mismatches}/{r.difference.size} differ"
                for r in bad
            )[:160]
        )
    if result.tolerance != "float64":
        notes.append(f"fixed tolerance ({result.tolerance[:80]})")
    vacuous = [r.index for r in result.results if r.vacuous]
    if vacuous:
        notes.append(f"vacuous: {len(vacuous)}/{len(result.results)} results all NaN/inf")
    if off_path:
        notes.append(f"f32 reference off the float64 truth by > sqrt(eps) at {off_path} elements")
    row["note"] = "; ".join(notes)
    return row


def _num(value: object) -> str:
    return "-" if not isinstance(value, float) else f"{value:.2g}"


def table(rows: list[dict[str, object]]) -> str:
    lines = [
        "| model | verdict | max abs error | max rel error | f32 reference's own | ratio | partition s | check s | note |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        lines.append(
            f"| {r['model']} | {r['verdict']} | {_num(r.get('max_abs'))} | "
            f"{_num(r.get('max_rel'))} | {_num(r.get('ref_err'))} | {_num(r.get('ratio'))} | "
            f"{_num(r.get('partition_s'))} | {_num(r.get('check_s'))} | {r['note']} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", help="model files (default: corpus + benchmarks)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=600.0, help="per XLA run, seconds")
    parser.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    args = parser.parse_args(argv)
    paths = [Path(m) for m in args.models] or default_models()
    rows = []
    with Executor(devices=8, timeout=args.timeout) as executor:
        for path in paths:
            row = check_model(path, args.seed, executor)
            rows.append(row)
            print(f"{row['model']}: {row['verdict']} {row['note']}", file=sys.stderr, flush=True)
    print(table(rows))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1, default=str))
    bad = [r for r in rows if r["verdict"] != "EQUAL"]
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
