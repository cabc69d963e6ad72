"""One warm `shardwise propagate` in process, for callgrind to count (deterministic, unlike
CPU seconds on a shared machine):

    valgrind --tool=callgrind --collect-atstart=no --toggle-collect=functools_reduce \\
        --callgrind-out-file=/dev/null python benchmarks/count_instructions.py FILE [-n N]

Two untimed runs warm the caches (as `run.py`'s warm-up does); then N runs (default 1) inside
`functools.reduce`, the only code collected. `Collected` / N is the instructions of one run.
"""

from __future__ import annotations

import argparse
import functools
import gc
import tempfile
from pathlib import Path

from shardwise import cli


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file")
    parser.add_argument("-n", "--runs", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = str(Path(tmp) / "out.mlir")
        argv = ["propagate", args.file, "-o", out]
        cli.main(argv)
        cli.main(argv)

        def runs(_a: int, _b: int) -> int:
            for _ in range(args.runs):
                cli.main(argv)
            return 0

        gc.collect()
        functools.reduce(runs, [0], 0)


if __name__ == "__main__":
    main()
