"""Write shardwise's output for every corpus and benchmark model to a folder (byte-identity check).

    python benchmarks/snapshot.py /tmp/before                 # default pipeline, caches on
    python benchmarks/snapshot.py /tmp/nomemo --no-memo       # every propagation step computed
    python benchmarks/snapshot.py /tmp/check --check-skips    # every skipped visit computed
    python benchmarks/snapshot.py /tmp/ref --reference        # the reference's output instead
    diff -r /tmp/before /tmp/after

Inputs: `tests/models/data/*.mlir` and `benchmarks/data/*.mlir` (run the generators first), or
the files given with `--files`. Each output is `<folder>/<corpus>/<name>.mlir`, written by
`shardwise propagate` in this process (its default pipeline, `sdy-propagation-pipeline`); a
failure writes `<name>.error` with the message instead, so a diff shows it too. A speed change
must leave the folder byte-identical, with every cache on and off.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPORA = {"models": ROOT / "tests" / "models" / "data", "bench": ROOT / "benchmarks" / "data"}
PIPELINE = "sdy-propagation-pipeline"


def run_ours(path: Path, out: Path, pass_spec: str) -> str | None:
    """`shardwise propagate path -o out`; the error text if it fails."""
    from shardwise import cli

    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        try:
            code = cli.main(["propagate", str(path), "-o", str(out), "--pass", pass_spec])
        except SystemExit as e:
            code = e.code
    return None if code in (0, None) else f"exit {code}: {sink.getvalue()}"


def run_reference(path: Path, out: Path) -> str | None:
    from shardwise.io.reference import run_pass

    text = path.read_text()
    try:  # with locations printed when the input has them, as `shardwise propagate` does
        out.write_text(run_pass(text, PIPELINE, debug_info="loc(" in text))
    except Exception as e:  # noqa: BLE001 - recorded in the snapshot
        return f"{type(e).__name__}: {e}"
    return None


def inputs(files: list[Path]) -> list[tuple[str, Path]]:
    if files:
        return [("files", f) for f in files]
    return [(name, f) for name, folder in CORPORA.items() for f in sorted(folder.glob("*.mlir"))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="where the outputs go")
    parser.add_argument("--files", nargs="*", type=Path, default=[], help="default: both corpora")
    parser.add_argument("--no-memo", action="store_true", help="memoize-steps=false")
    parser.add_argument("--check-skips", action="store_true", help="compute every skipped visit")
    parser.add_argument("--reference", action="store_true", help="write the reference's output")
    args = parser.parse_args(argv)
    from shardwise.propagation.settled_op_skip import SettledOpSkip

    SettledOpSkip.check_skips = args.check_skips
    pass_spec = PIPELINE + ("{memoize-steps=false}" if args.no_memo else "")
    start, failures, count = time.perf_counter(), 0, 0
    for corpus, path in inputs(args.files):
        folder = args.folder / corpus
        folder.mkdir(parents=True, exist_ok=True)
        out = folder / path.name
        error = run_reference(path, out) if args.reference else run_ours(path, out, pass_spec)
        count += 1
        if error is not None:
            failures += 1
            out.unlink(missing_ok=True)
            out.with_suffix(".error").write_text(error)
    took = time.perf_counter() - start
    print(f"{count} files written to {args.folder} ({failures} failures) in {took:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
