"""``shardwise partition``: a global program with shardings -> the program each device runs.

The chain is the one jaxlib 0.10.2's Shardy accepts, pass for pass (`REFERENCE_CHAIN`, the
spelling `shardwise.io.reference.run_pass` takes); `partition` calls our implementation of
each pass directly:

1. `sdy-propagation-pipeline`: import, propagate, export (every value gets a sharding);
2. `sdy-insert-explicit-reshards{enable-full-version=true}`: an `sdy.reshard` wherever an
   op's operands and results do not agree on how its factors are sharded;
3. `sdy-reshard-to-collectives`: each reshard -> `sdy.all_gather`, `all_slice`,
   `all_to_all`, `collective_permute` (and `sdy.all_reduce` after reductions);
4. `canonicalize{enable-patterns=sdy-collective}`: fuse and drop collectives (an all-reduce
   followed by an all-slice becomes a reduce-scatter, identities disappear);
5. `sdy-pad-for-divisibility`, only when some value's sharding does not divide its shape;
6. `sdy-convert-global-to-local`: global types -> per-device types, sdy collectives ->
   StableHLO collectives with explicit replica groups.

A pass that cannot handle a construct raises a `ShardwiseError` naming the op; `partition`
adds which step of the chain stopped.
"""

from __future__ import annotations

from shardwise.errors import ShardwiseError
from shardwise.export.convert_global_to_local.driver import convert_global_to_local
from shardwise.export.explicit_reshards.insert_explicit_reshards import insert_explicit_reshards
from shardwise.export.pad_for_divisibility import pad_for_divisibility
from shardwise.export.pad_for_divisibility_conversion import padded_type
from shardwise.export.reshard_to_collectives.conversion import reshard_to_collectives
from shardwise.export.unlabelled_patterns import run_canonicalize
from shardwise.ir import Module
from shardwise.passes import sdy_pass
from shardwise.propagation.propagation_pipeline import propagation_pipeline
from shardwise.sdy.shardings import get_sharding

__all__ = ["REFERENCE_CHAIN", "PAD_STEP", "partition", "needs_padding"]

PAD_STEP = "sdy-pad-for-divisibility"

# The chain as the reference runs it (`run_pass(text, list(REFERENCE_CHAIN))`); `PAD_STEP`
# goes before the last pass when `needs_padding`.
REFERENCE_CHAIN = (
    "sdy-propagation-pipeline",
    "sdy-insert-explicit-reshards{enable-full-version=true}",
    "sdy-reshard-to-collectives",
    "canonicalize{enable-patterns=sdy-collective}",
    "sdy-convert-global-to-local",
)

_STEPS = (
    "sdy-propagation-pipeline",
    "sdy-insert-explicit-reshards",
    "sdy-reshard-to-collectives",
    "canonicalize",
    PAD_STEP,
    "sdy-convert-global-to-local",
)


@sdy_pass("shardwise-partition")
def partition(module: Module) -> None:
    """The whole chain on `module`, in place: global types in, per-device types out."""
    _step(0, propagation_pipeline, module)
    _step(1, lambda m: insert_explicit_reshards(m, enable_full_version=True), module)
    _step(2, reshard_to_collectives, module)
    _step(3, lambda m: run_canonicalize(m, enable_patterns="sdy-collective"), module)
    if needs_padding(module):
        _step(4, pad_for_divisibility, module)
    _step(5, convert_global_to_local, module)


def _step(index: int, run, module: Module) -> None:
    try:
        run(module)
    except ShardwiseError as e:
        note = f"while partitioning, in step {index + 1} of 6 ({_STEPS[index]})"
        e.notes = (*e.notes, note)
        raise


def needs_padding(module: Module) -> bool:
    """Whether a value's sharding does not divide its shape (then padding is needed)."""
    meshes = module.meshes()
    for op in module.walk():
        for value in (*op.results, *(a for r in op.regions for b in r.blocks for a in b.args)):
            if padded_type(value.type, get_sharding(value), meshes) != value.type:
                return True
    return False
