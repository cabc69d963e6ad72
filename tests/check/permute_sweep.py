"""Which collective permutes does the 0.10.2 global-to-local lower right? (not a test: ~3 min)

    PYTHONPATH=src python -m tests.check.permute_sweep

Every reshard of one 16x16 tensor between two shardings of whole axes (at most two per dim,
no axis twice) on 2x4, 4x2 and 2x2x2 meshes, partitioned by the reference's chain without our
guard (our passes print the reference's text), keeping those that make a collective permute,
and run by `shardwise check`. Measured 2026-12-01: 454 reshards make a permute; the 40 whose
permute has a sub-axis in its source or target sharding all compute wrong values, the 414
others all compute right ones. `shardwise.partition` therefore rejects permutes over
sub-axes.
"""

from __future__ import annotations

import itertools
import re

import shardwise
from shardwise.check.executor import Executor
from shardwise.errors import ShardwiseError
from shardwise.io.mlir import load_text, write_text
from shardwise.sdy.shardings import get_sharding
from tests.differential.partition_programs import reshard

MESHES = {
    "2x4": ('<["a"=2, "b"=4]>', ["{}", '{"a"}', '{"b"}', '{"a", "b"}', '{"b", "a"}']),
    "4x2": ('<["a"=4, "b"=2]>', ["{}", '{"a"}', '{"b"}', '{"a", "b"}', '{"b", "a"}']),
    "2x2x2": (
        '<["a"=2, "b"=2, "c"=2]>',
        ["{}", '{"a"}', '{"b"}', '{"c"}', '{"a", "b"}', '{"b", "a"}', '{"c", "a"}'],
    ),
}


def _shardings(dims: list[str]) -> list[str]:
    out = []
    for d0, d1 in itertools.product(dims, repeat=2):
        if not set(re.findall(r'"(\w)"', d0)) & set(re.findall(r'"(\w)"', d1)):
            out.append(f"[{d0}, {d1}]")
    return out


def _local_and_permutes(text: str) -> tuple[str, bool] | None:
    """The reference chain by our passes, without the guard; (local text, sub-axis permute)."""
    from shardwise.export.convert_global_to_local.driver import convert_global_to_local
    from shardwise.export.explicit_reshards.insert_explicit_reshards import (
        insert_explicit_reshards,
    )
    from shardwise.export.reshard_to_collectives.conversion import reshard_to_collectives
    from shardwise.propagation.propagation_pipeline import propagation_pipeline

    module = load_text(text)
    propagation_pipeline(module)
    insert_explicit_reshards(module, enable_full_version=True)
    reshard_to_collectives(module)
    permutes = [op for op in module.walk() if op.name == "sdy.collective_permute"]
    if not permutes:
        return None
    shardings = [get_sharding(v) for op in permutes for v in (op.operands[0], op.results[0])]
    sub = any(":(" in str(s) for s in shardings)
    try:
        convert_global_to_local(module)
    except ShardwiseError:
        return None
    return write_text(module), sub


def main() -> None:
    counts: dict[tuple[bool, bool], int] = {}
    with Executor(devices=8).start() as ex:
        for mesh, dims in MESHES.values():
            for source, target in itertools.permutations(_shardings(dims), 2):
                text = reshard(mesh, source, target)
                found = _local_and_permutes(text)
                if found is None:
                    continue
                local, sub = found
                equal = shardwise.load(text).check(local, executor=ex).equal
                counts[sub, equal] = counts.get((sub, equal), 0) + 1
                if sub == equal:  # a case the rule gets wrong
                    print("exception to the rule:", mesh, source, "->", target, flush=True)
    for (sub, equal), n in sorted(counts.items()):
        print(f"permute over sub-axes={sub}, equal={equal}: {n}")


if __name__ == "__main__":
    main()
