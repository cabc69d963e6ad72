"""Where shardwise's time goes: the default pipeline on one file, phase by phase.

    python benchmarks/phases.py benchmarks/data/gpt_64.mlir [-n 3] [--cpu]

Prints the median wall time (with `--cpu`: CPU seconds of this process) of each phase (load, the import pipeline, the rest of the import
steps, propagation, export, write) next to the reference's whole run in the same process
(alternating, as `run.py`), and the ratio of the sum to the reference.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time

from shardwise.imports.import_pipeline import import_pipeline
from shardwise.io.mlir import load_text, write_text
from shardwise.io.reference import run_pass
from shardwise.propagation.options import PropagationOptions
from shardwise.propagation.propagation_pipeline import (
    export_after_propagation,
    prepare_for_propagation,
)
from shardwise.propagation.user_priority_propagation import user_priority_propagate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file")
    parser.add_argument("-n", "--reps", type=int, default=3)
    parser.add_argument("--cpu", action="store_true", help="CPU seconds, not wall clock")
    args = parser.parse_args()
    clock = time.process_time if args.cpu else time.perf_counter
    gc.set_threshold(100_000)  # as `shardwise.cli.main` (its `_fewer_gc_passes`)
    with open(args.file, encoding="utf-8") as f:
        text = f.read()
    options = PropagationOptions()
    times: dict[str, list[float]] = {}

    def timed(name, fn, *fn_args):
        start = clock()
        result = fn(*fn_args)
        times.setdefault(name, []).append(clock() - start)
        return result

    for _ in range(args.reps + 1):  # the first repetition warms up and is dropped below
        timed("reference", run_pass, text, "sdy-propagation-pipeline", "loc(" in text)
        gc.disable()  # as `shardwise propagate` does for each input (`cli._gc_paused`)
        module = timed("load", load_text, text, args.file)
        timed("import pipeline", import_pipeline, module)
        timed("rest of import", prepare_for_propagation, module, options)
        keep_rules = options.with_options(keep_sharding_rules=True)
        timed("propagate", user_priority_propagate, module, keep_rules)
        timed("export", export_after_propagation, module, options)
        timed("write", write_text, module)
        gc.enable()
    total = 0.0
    for name, values in times.items():
        median = statistics.median(values[1:])
        if name != "reference":
            total += median
        print(f"{name:16s} {median:7.3f} s")
    reference = statistics.median(times["reference"][1:])
    print(f"{'shardwise':16s} {total:7.3f} s  = {total / reference:.2f}x the reference")


if __name__ == "__main__":
    main()
