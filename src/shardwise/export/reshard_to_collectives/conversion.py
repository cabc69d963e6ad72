"""The `sdy-reshard-to-collectives` pass: a dialect conversion of every `sdy.reshard`.

Legality (`ReshardToCollectivesPass::initialize`), with the input sharding read through
propagation barriers: with `keep_redundant_reshards`, a reshard between equivalent shardings
stays; a reshard to a fully replicated sharding is always converted; a reshard between meshes
that differ in more than their device order stays; everything else is converted.

Conversion (`ReshardPattern`): fully replicated to fully replicated -> the reshard's input;
otherwise the collectives of `insert_collectives` (a fully replicated output meaning "all
dims closed and empty" on the input's mesh). Ops are visited in pre-order; like MLIR's
conversion driver, a converted reshard stays in place (its users, including later reshards,
read its sharding) until every reshard of the function is done, then its uses move to the
replacement and it is erased.
"""

from __future__ import annotations

from shardwise.errors import VerifyError
from shardwise.export.reshard_to_collectives.inserter import insert_collectives
from shardwise.export.reshard_to_collectives.legalize_error import legalize_error
from shardwise.export.reshard_to_collectives.verify_after import verify_collective_permute_meshes
from shardwise.ir import Module, Op, Value
from shardwise.mesh import Mesh
from shardwise.passes import sdy_pass
from shardwise.sdy.shardings import get_sharding
from shardwise.sharding import TensorSharding

__all__ = ["reshard_to_collectives"]

_BARRIER = "sdy.propagation_barrier"


class _Meshes:
    def __init__(self, module: Module) -> None:
        self.by_name = {k: v for k, v in module.meshes().items() if isinstance(v, Mesh)}

    def of(self, sharding: TensorSharding) -> Mesh:
        ref = sharding.mesh_or_ref
        if isinstance(ref, Mesh):
            return ref
        mesh = self.by_name.get(ref)
        if mesh is None:
            raise VerifyError(f"unknown mesh: @{ref}")
        return mesh


def _bypass_barriers(value: Value) -> Value:
    while (op := value.defining_op) is not None and op.name == _BARRIER:
        value = op.operands[0]
    return value


def _is_equivalent(a: TensorSharding | None, b: TensorSharding | None) -> bool:
    """Shardy's `isEquivalent` as in the reference: a missing sharding is fully replicated,
    and unreduced axes are not compared (later Shardy compares them)."""
    if a is None or a.is_fully_replicated:
        return b is None or b.is_fully_replicated
    if b is None or a.mesh_or_ref != b.mesh_or_ref:
        return False
    return len(a.dim_shardings) == len(b.dim_shardings) and all(
        x.axes == y.axes for x, y in zip(a.dim_shardings, b.dim_shardings, strict=True)
    )


def _equivalent_on_mesh(a: TensorSharding, b: TensorSharding, meshes: _Meshes) -> bool:
    """Same mesh, or meshes that differ at most in their device order."""
    if a.mesh_or_ref == b.mesh_or_ref:
        return True
    return meshes.of(a).equals(meshes.of(b), ignore_device_ids=True)


def _is_legal(reshard: Op, meshes: _Meshes, keep_redundant_reshards: bool) -> bool:
    in_sharding = get_sharding(_bypass_barriers(reshard.operands[0]))
    out_sharding: TensorSharding = reshard.properties["sharding"]
    if keep_redundant_reshards and _is_equivalent(in_sharding, out_sharding):
        return True
    if out_sharding.is_fully_replicated:
        return False
    return in_sharding is not None and not _equivalent_on_mesh(in_sharding, out_sharding, meshes)


def _convert(reshard: Op, value: Value, meshes: _Meshes, replacements: dict[Value, Value]) -> Value:
    """`ReshardPattern::matchAndRewrite`: the value replacing `reshard` (input `value`).

    A barrier bypassed may read an earlier reshard, already converted: its replacement is
    the input then (Shardy's rewriter has replaced that reshard's uses by this time)."""
    out_sharding: TensorSharding = reshard.properties["sharding"]
    bypassed = _bypass_barriers(value)
    bypassed = replacements.get(bypassed, bypassed)
    in_sharding = get_sharding(bypassed)
    if in_sharding is None:
        in_sharding = TensorSharding.fully_open(out_sharding.mesh_or_ref, value.type.rank)
    if in_sharding.rank != out_sharding.rank:
        raise legalize_error(reshard)  # "Incompatible shardings"
    if out_sharding.is_fully_replicated:
        if in_sharding.is_fully_replicated:
            return value
        out_sharding = TensorSharding.fully_closed(in_sharding.mesh_or_ref, in_sharding.rank)
    if not _equivalent_on_mesh(in_sharding, out_sharding, meshes):
        raise legalize_error(reshard)  # "Incompatible meshes"
    mesh = meshes.of(in_sharding)
    return insert_collectives(in_sharding, out_sharding, mesh, bypassed, reshard)


def _convert_func(func: Op, meshes: _Meshes, keep_redundant_reshards: bool) -> None:
    replacements: dict[Value, Value] = {}
    converted: list[tuple[Op, Value]] = []
    for op in [op for op in func.walk() if op.name == "sdy.reshard"]:
        if _is_legal(op, meshes, keep_redundant_reshards):
            continue
        operand = op.operands[0]
        value = _convert(op, replacements.get(operand, operand), meshes, replacements)
        replacements[op.results[0]] = value
        converted.append((op, value))
    for op, value in converted:
        op.results[0].replace_all_uses_with(value)
    for op, _ in converted:
        op.erase()


@sdy_pass("sdy-reshard-to-collectives", nests_in_func=True)
def reshard_to_collectives(module: Module, keep_redundant_reshards: bool = False) -> None:
    """``sdy-reshard-to-collectives{keep-redundant-reshards}`` on every function, in place."""
    meshes = _Meshes(module)
    for func in module.funcs:
        _convert_func(func, meshes, keep_redundant_reshards)
    # Shardy's pass manager verifies right after the pass: its message, not a write error.
    verify_collective_permute_meshes(module)
