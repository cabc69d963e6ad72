"""What the verifier run after `sdy-reshard-to-collectives` rejects and later passes would hide.

Shardy's pass manager verifies the module after every pass; we verify once, when the module is
written. So inside the export pipeline an invalid collective this pass creates can be erased by
the ``sdy-collective`` canonicalization before anything looks at it: the reference fails, we
would not. From verified input the pass creates one such collective: an
``sdy.collective_permute`` between two meshes that differ only in their names (same axes, same
device ids - e.g. two one-device meshes, whose ``device_ids=[0]`` is dropped as iota), which
``CollectivePermuteOp::verifySymbolUses`` rejects. The export pipeline checks it right after
the pass.
"""

from __future__ import annotations

from shardwise.errors import VerifyError
from shardwise.ir import Module
from shardwise.sdy.shardings import get_sharding
from shardwise.sharding import TensorSharding
from shardwise.verify import resolve_mesh

__all__ = ["verify_collective_permute_meshes"]

SAME_DEVICE_IDS = (
    "'sdy.collective_permute' op result mesh name is different but same device ids as operand"
)


def verify_collective_permute_meshes(module: Module) -> None:
    """Raise Shardy's verifier error for the first collective-permute whose result mesh is
    another name for its operand's mesh (same axes and device ids)."""
    meshes = module.meshes()
    for op in module.walk():
        if op.name != "sdy.collective_permute":
            continue
        operand = get_sharding(op.operands[0])
        result = op.properties.get("out_sharding")
        if operand is None or not isinstance(result, TensorSharding):
            continue  # rejected by the op's own verifier, on write
        if operand.mesh_or_ref == result.mesh_or_ref:
            continue
        operand_mesh, result_mesh = resolve_mesh(operand, meshes), resolve_mesh(result, meshes)
        if operand_mesh is None or result_mesh is None or operand_mesh.axes != result_mesh.axes:
            continue
        if operand_mesh.device_ids == result_mesh.device_ids:
            note = f"operand mesh: #sdy.mesh{operand_mesh.body_str()}"
            raise VerifyError(SAME_DEVICE_IDS, op.location, (note,))
