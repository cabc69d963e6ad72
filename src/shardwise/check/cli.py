"""``shardwise check IN.mlir [--partitioned LOCAL.mlir] [--seed N] [--devices N] [--against xla]``.

Exit status: 0 the partitioned program computes what the global one does, 1 it does not (or
an input is wrong), 2 XLA's CPU backend cannot run one of the programs (the message names
the ops), 3 undecided: the results differ only where the unsharded program itself is
unstable at rounding level (near-ties of a discrete decision, `check/conditioning.py`);
never "equal" for a program that did not run.
"""

from __future__ import annotations

import argparse
import sys

from shardwise.errors import UnsupportedError
from shardwise.explain.progress import Progress
from shardwise.io.mlir import load_text, read_text_file, write_text
from shardwise.partition import reference_chain

__all__ = [
    "build_parser",
    "run",
    "PARTITION_CHAIN",
    "EXIT_EQUAL",
    "EXIT_DIFFER",
    "EXIT_CANNOT_RUN",
    "EXIT_UNDECIDED",
]

EXIT_EQUAL, EXIT_DIFFER, EXIT_CANNOT_RUN, EXIT_UNDECIDED = 0, 1, 2, 3

# What `shardwise` runs to partition IN.mlir when no --partitioned file is given
# (`shardwise.partition.partition`, our implementation of each pass); the same chain, run by
# the reference, makes the local programs of the tests.
PARTITION_CHAIN = tuple(reference_chain())


def build_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", metavar="IN.mlir", help="the global (sharded, unpartitioned) program")
    p.add_argument(
        "--partitioned",
        metavar="LOCAL.mlir",
        help="its per-device program (default: partition IN.mlir with shardwise's passes)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    p.add_argument("--devices", type=int, help="expected device count (default: the mesh's)")
    p.add_argument(
        "--against",
        choices=["xla"],
        help="xla: also run XLA's own SPMD partitioning of IN.mlir and compare it with the "
        "unsharded program (exit 1 if either differs)",
    )


def partition(text: str, filename: str) -> tuple[str, str]:
    """IN.mlir partitioned by shardwise's own passes: (local text, name shown in messages)."""
    from shardwise.partition import partition as partition_module

    module = load_text(text, filename)
    partition_module(module)
    return write_text(module), f"{filename} (partitioned by shardwise)"


def run(args: argparse.Namespace) -> int:
    from shardwise.check.checker import check

    global_text = read_text_file(args.input)
    bar = Progress("check")  # drawn on a terminal only
    if args.partitioned is None:
        bar.update(0, 2, "check: partitioning")
        local_text, local_name = partition(global_text, args.input)
    else:
        local_text, local_name = read_text_file(args.partitioned), args.partitioned
    try:
        bar.update(1, 2, "check: running both programs")
        result = check(
            global_text,
            local_text,
            seed=args.seed,
            devices=args.devices,
            global_name=args.input,
            local_name=local_name,
            against_xla=getattr(args, "against", None) == "xla",
        )
        bar.update(2, 2, "check")
    except UnsupportedError as e:
        bar.close()
        print(e.format(None), file=sys.stderr)
        return EXIT_CANNOT_RUN
    bar.close()
    print(result)
    if result.xla_equal is False:
        return EXIT_DIFFER
    if result.undecided:
        return EXIT_UNDECIDED
    return EXIT_EQUAL if result.equal else EXIT_DIFFER
