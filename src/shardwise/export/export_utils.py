"""Helpers of Shardy's ``exp/utils.cc`` that more than one export pass uses."""

from __future__ import annotations

from shardwise.ir import Op, TensorType
from shardwise.mesh import Mesh
from shardwise.rules.stablehlo_attrs import parse_i64_array
from shardwise.sharding import TensorSharding

__all__ = ["is_communication_free_slice_dim"]


def is_communication_free_slice_dim(
    op: Op, dim: int, sharding: TensorSharding | None, mesh: Mesh
) -> bool:
    """`isCommunicationFreeSliceDim` of a ``stablehlo.slice``: `dim` unsharded, or sliced from 0
    with stride 1 keeping as many elements per shard as before (the slice only trims
    padding-like tail elements). False without a sharding (Shardy dereferences a null one)."""
    if sharding is None:
        return False
    count = sharding.dim_shardings[dim].sharded_size(mesh)
    if count <= 1:
        return True
    starts = parse_i64_array(op.properties["start_indices"])
    strides = parse_i64_array(op.properties["strides"])
    if starts[dim] != 0 or strides[dim] != 1:
        return False
    operand, result = op.operands[0].type, op.results[0].type
    assert isinstance(operand, TensorType) and isinstance(result, TensorType)
    return -(-operand.shape[dim] // count) == -(-result.shape[dim] // count)
