"""``shardwise partition``: a global program with shardings -> the program each device runs.

The chain is one jaxlib 0.10.2's Shardy runs, pass for pass (`reference_chain`, in the
spelling `shardwise.io.reference.run_pass` takes); `partition` calls our implementation of
each pass directly, and prints what the reference prints wherever the reference partitions
the module:

1. `sdy-propagation-pipeline`: import, propagate, export (every value gets a sharding);
2. `sdy-insert-explicit-reshards{enable-full-version=true}`: an `sdy.reshard` wherever an
   op's operands and results do not agree on how its factors are sharded, and an
   `sdy.all_reduce` after an op that sums over a sharded dim;
   Beyond the reference, an `sdy.reshard` before each ``stablehlo.if`` branch return
   sharded unlike the result (`export/if_branch_reshards.py`: `if` is no data-flow op);
3. `sdy-reshard-to-collectives`: each reshard -> `sdy.all_gather`, `all_slice`,
   `all_to_all`, `collective_permute`;
4. `canonicalize{enable-patterns=sdy-collective}`, only with ``fuse_collectives``: an
   all-reduce followed by an all-slice becomes a reduce-scatter;
5. `sdy-pad-for-divisibility`, only when some value's sharding does not divide its shape;
6. `sdy-convert-global-to-local`: global types -> per-device types, sdy collectives ->
   StableHLO collectives with explicit replica groups; beyond the reference, calls of funcs
   whose types change and loops carrying sharded values too
   (``ConversionOptions.beyond_reference``).

A pass that cannot handle a construct raises a `ShardwiseError` naming the op; `partition`
adds which step of the chain stopped. By default the chain goes further than the reference
(docs/partition.md, "What `shardwise partition` does instead"); with ``like_shardy`` it
stops where the reference stops, and before step 6 also rejects the constructs the 0.10.2
global-to-local converts into a wrong program (`_check_before_conversion`), so that no
program it writes is silently wrong where the reference's would be.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from shardwise.errors import ShardwiseError
from shardwise.ir import Module, Op, TensorType, Value
from shardwise.passes import sdy_pass
from shardwise.sharding import TensorSharding

__all__ = ["partition", "reference_chain", "needs_padding", "STEPS"]

# The passes in order, as the reference spells them; `reference_chain` picks those one module
# needs. `run_pass(text, reference_chain(...))` runs them in jaxlib's Shardy.
STEPS = (
    "sdy-propagation-pipeline",
    "sdy-insert-explicit-reshards{enable-full-version=true}",
    "sdy-reshard-to-collectives",
    "canonicalize{enable-patterns=sdy-collective}",
    "sdy-pad-for-divisibility",
    "sdy-convert-global-to-local",
)
_CANONICALIZE, _PAD = 3, 4


def reference_chain(fuse_collectives: bool = False, pad: bool = False) -> list[str]:
    """The chain `partition` runs, in the reference's spelling (see `partition`)."""
    skip = {i for i, on in ((_CANONICALIZE, fuse_collectives), (_PAD, pad)) if not on}
    return [step for i, step in enumerate(STEPS) if i not in skip]


@sdy_pass("shardwise-partition")
def partition(module: Module, fuse_collectives: bool = False, like_shardy: bool = False) -> None:
    """The whole chain on `module`, in place: global types in, per-device types out.

    `fuse_collectives` runs ``canonicalize{enable-patterns=sdy-collective}`` after
    reshard-to-collectives (an all-reduce then an all-slice -> one reduce-scatter). The
    0.10.2 global-to-local cannot lower a sharded contracting dot whose all-reduce was fused,
    so it is off by default: the plain chain partitions more programs. Padding runs only
    when some value's sharding does not divide its shape (`needs_padding`).

    Unless `like_shardy`, the chain goes further than the reference where the reference
    stops (docs/partition.md, "Where Shardy stops"): before step 3 the ops the 0.10.2
    global-to-local rejects get reshards that make them local
    (`convert_global_to_local.fallback`); after padding, reduces over padded dims are
    masked (`convert_global_to_local.padding_masks`) and padding's own pads along sharded
    dims are replicated; step 6 converts chlo ops, sharded constants, whole-dim dynamic
    slices and non-sum all-reduces, and counts sub-axis offsets right
    (`convert_global_to_local.extended`). Where the reference partitions a module into a
    right program, both modes print its text; with `like_shardy` the programs it gets
    wrong are errors (`_check_before_conversion`).
    """
    # Imported here: the command line loads this module, not the whole engine.
    from shardwise.export.convert_global_to_local.driver import convert
    from shardwise.export.convert_global_to_local.fallback import (
        replicate_where_the_reference_stops,
    )
    from shardwise.export.convert_global_to_local.padding_indices import (
        clamp_padded_gathers,
        record_gathers,
    )
    from shardwise.export.convert_global_to_local.padding_masks import (
        mask_padded_reductions,
        record_reductions,
    )
    from shardwise.export.convert_global_to_local.state import ConversionOptions
    from shardwise.export.explicit_reshards.insert_explicit_reshards import (
        insert_explicit_reshards,
    )
    from shardwise.export.if_branch_reshards import insert_if_branch_reshards
    from shardwise.export.pad_for_divisibility import pad_for_divisibility
    from shardwise.export.reshard_to_collectives.conversion import reshard_to_collectives
    from shardwise.export.unlabelled_patterns import run_canonicalize
    from shardwise.export.wrong_conversions import check_sub_axes_coexist
    from shardwise.propagation.propagation_pipeline import propagation_pipeline

    check_sub_axes_coexist(module)  # the user's shardings, before propagation
    _step(0, propagation_pipeline, module)
    _step(
        1,
        lambda m: insert_explicit_reshards(
            m, enable_full_version=True, replicated_on_any_mesh=not like_shardy
        ),
        module,
    )
    if not like_shardy:
        _step(1, insert_if_branch_reshards, module)  # `if` is no data-flow op in Shardy
        _step(1, replicate_where_the_reference_stops, module)
    _step(2, reshard_to_collectives, module)
    if fuse_collectives:
        _step(_CANONICALIZE, lambda m: run_canonicalize(m, "sdy-collective"), module)
    if needs_padding(module):
        _step(_PAD, _check_reshapes_divide, module)
        reductions, gathers = record_reductions(module), record_gathers(module)
        _step(_PAD, pad_for_divisibility, module)
        if not like_shardy:  # padding's pads along a sharded dim: replicated around them
            mask_padded_reductions(module, reductions)
            clamp_padded_gathers(module, gathers)
            _step(_PAD, replicate_where_the_reference_stops, module)
            _step(2, reshard_to_collectives, module)
    if like_shardy:
        _step(5, _check_before_conversion, module)
    else:
        # What the fallback leaves that the conversion would still get wrong (a reduce from
        # an init that is not its identity, unreduced values summed twice, reshapes that do not factor, operands on another
        # mesh or device order: `export/wrong_conversions.py`, found by `fuzz --check`).
        from shardwise.export.wrong_conversions import check_wrong_conversions

        _step(5, lambda m: check_wrong_conversions(m, sub_axes=False), module)
    options = ConversionOptions(beyond_reference=not like_shardy)
    _step(5, lambda m: convert(m, options), module)


def _step(index: int, run: Callable[[Module], None], module: Module) -> None:
    try:
        run(module)
    except ShardwiseError as e:
        name = STEPS[index].split("{")[0]
        e.notes = (*e.notes, f"while partitioning, in {name} (step {index + 1} of the chain)")
        raise


def _check_before_conversion(module: Module) -> None:
    """Reject what the 0.10.2 global-to-local would convert into a wrong program.

    A ``stablehlo.pad`` along a sharded dim: converted as it is, every device pads its own
    shard, so the shards shift (the global pad moves data between devices). Shardy's
    padding makes such pads where the input of an all-slice is sharded on a sub-axis.

    An ``sdy.collective_permute`` from or to a sharding with a sub-axis: the pairs the
    conversion computes give devices the wrong tiles. Measured with `shardwise check` on
    every reshard of one tensor between shardings of whole axes on 2x4, 4x2 and 2x2x2 meshes
    that makes a permute: the 40 permutes over sub-axes all compute wrong values, the 414
    others all compute right ones.
    """
    from shardwise.export.convert_global_to_local.fallback import reject_wrong_conversions
    from shardwise.export.wrong_conversions import check_wrong_conversions
    from shardwise.rules.stablehlo_attrs import parse_i64_array
    from shardwise.sdy.shardings import get_sharding

    reject_wrong_conversions(module)  # reverse, convolution windows, dynamic_update_slice
    for op in module.walk():
        if op.name == "sdy.collective_permute":
            _check_permute(op, get_sharding(op.operands[0]), get_sharding(op.results[0]))
        if op.name != "stablehlo.pad":
            continue
        sharding = get_sharding(op.results[0]) or get_sharding(op.operands[0])
        if sharding is None:
            continue
        pads = zip(*(parse_i64_array(op.properties[k]) for k in _PAD_ATTRS), strict=True)
        for dim, (amounts, dim_sharding) in enumerate(
            zip(pads, sharding.dim_shardings, strict=True)
        ):
            if any(amounts) and dim_sharding.axes:
                axes = ", ".join(str(a) for a in dim_sharding.axes)
                raise ShardwiseError(
                    f"'stablehlo.pad' pads dimension {dim}, which is sharded on {axes}: in the "
                    "per-device program each device would pad its own shard, and the shards "
                    "would shift (jaxlib 0.10.2's sdy-convert-global-to-local converts it so, "
                    "into a wrong program); shard that dimension so that its size divides, or "
                    "replicate it before the pad",
                    op.location,
                )
    check_wrong_conversions(module)  # sharded reverses and updates, skewed sub-axes


def _check_permute(op: Op, source: TensorSharding | None, target: TensorSharding | None) -> None:
    for sharding in (source, target):
        if sharding is None:
            continue
        subs = [a for d in sharding.dim_shardings for a in d.axes if a.sub_axis_info is not None]
        if subs:
            raise ShardwiseError(
                f"'sdy.collective_permute' from {source} to {target} moves tiles of the "
                f"sub-axis {subs[0]}: jaxlib 0.10.2's sdy-convert-global-to-local lowers such "
                "a permute with source-target pairs that give devices the wrong tiles (a wrong "
                "program); reshard through whole axes instead (an sdy.sharding_constraint on "
                "a sharding without this split), or give the per-device program yourself",
                op.location,
            )


_PAD_ATTRS = ("edge_padding_low", "edge_padding_high", "interior_padding")


def _check_reshapes_divide(module: Module) -> None:
    """Padding a reshape's operand and result each to a multiple of its shard count moves the
    elements (``4 -> 2x2`` on 8 devices: the padded ``8`` reshaped to ``2x4`` is not the padded
    ``2x2``), and jaxlib 0.10.2's chain writes that wrong program (fuzz --check 2030-129-3):
    a reshape with a sharding that does not divide its operand or result is rejected, unless
    every padded dim is a dim the reshape keeps (`_padding_keeps_positions`)."""
    from shardwise.sdy.shardings import get_sharding

    meshes = module.meshes()
    for op in module.walk():
        if op.name != "stablehlo.reshape" or _padding_keeps_positions(op, meshes):
            continue
        for value in (op.operands[0], op.results[0]):
            if _undivided(value, meshes):
                raise ShardwiseError(
                    f"'stablehlo.reshape' of {op.operands[0].type} to {op.results[0].type}: "
                    f"the sharding of its {'operand' if value is op.operands[0] else 'result'} "
                    f"({get_sharding(value)}) does not divide it, and padding both sides moves "
                    "elements (a wrong program); shard so that the dims divide, or replicate "
                    "around the reshape with an sdy.sharding_constraint",
                    op.location,
                )


def _padding_keeps_positions(op: Op, meshes: dict[str, Any]) -> bool:
    """Whether each dim padding changes is one the reshape keeps: a group of its own, one
    operand dim to one result dim of the same size, padded alike (``9 -> 9x1``, the last dim
    of ``16x16x4 -> 256x4``). The reshape then reshapes each group alone, and padding one such
    dim moves no element (fuzz --check 2030-127-4, 2030-436-2)."""
    from shardwise.export.pad_for_divisibility_conversion import padded_type
    from shardwise.sdy.shardings import get_sharding

    source, target = op.operands[0], op.results[0]
    if not isinstance(source.type, TensorType) or not isinstance(target.type, TensorType):
        return False
    padded_source = padded_type(source.type, get_sharding(source), meshes)
    padded_target = padded_type(target.type, get_sharding(target), meshes)
    assert isinstance(padded_source, TensorType) and isinstance(padded_target, TensorType)
    groups = _reshape_groups(source.type.shape, target.type.shape)
    if groups is None:
        return False
    for ins, outs in groups:
        padded = [d for d in ins if padded_source.shape[d] != source.type.shape[d]]
        padded_out = [e for e in outs if padded_target.shape[e] != target.type.shape[e]]
        if not padded and not padded_out:
            continue
        if len(ins) != 1 or len(outs) != 1:
            return False
        if padded_source.shape[ins[0]] != padded_target.shape[outs[0]]:
            return False
    return True


def _reshape_groups(
    source: tuple[int, ...], target: tuple[int, ...]
) -> list[tuple[list[int], list[int]]] | None:
    """The smallest runs of consecutive dims with equal products (``2x3x4 -> 6x4``: ``[0, 1] ->
    [0]``, ``[2] -> [1]``), or None for a dynamic shape."""
    if any(s < 0 for s in (*source, *target)):
        return None
    groups: list[tuple[list[int], list[int]]] = []
    i = j = 0
    while i < len(source) or j < len(target):
        ins: list[int] = []
        outs: list[int] = []
        product_in = product_out = 1
        # A group ends when both sides have a dim (or have none left) and the products agree.
        while not (
            product_in == product_out and (ins or i == len(source)) and (outs or j == len(target))
        ):
            if i < len(source) and (not ins or product_in < product_out or j == len(target)):
                ins.append(i)
                product_in *= source[i]
                i += 1
            elif j < len(target):
                outs.append(j)
                product_out *= target[j]
                j += 1
            else:
                return None  # the element counts differ (the verifier rejects that)
        groups.append((ins, outs))
    return groups


def needs_padding(module: Module) -> bool:
    """Whether a value's sharding does not divide its shape (then padding is needed)."""
    meshes = module.meshes()
    for op in module.walk():
        for value in (*op.results, *(a for r in op.regions for b in r.blocks for a in b.args)):
            if _undivided(value, meshes):
                return True
    return False


def _undivided(value: Value, meshes: dict[str, Any]) -> bool:
    """Whether `value`'s sharding does not divide its shape (padding changes its type)."""
    from shardwise.export.pad_for_divisibility_conversion import padded_type
    from shardwise.sdy.shardings import get_sharding

    return padded_type(value.type, get_sharding(value), meshes) != value.type
