"""Per-device compute time of a sharded module: FLOPs and HBM bytes over a roofline.

Read from a module after explicit reshards (every op's operands then carry the sharding the op
computes with). Per op, on one device's shard:

| op                    | FLOPs                                                        |
| stablehlo.dot_general | 2 x local result elements x local contracting size           |
| stablehlo.convolution | 2 x local result elements x local kernel elements / local    |
|                       | output features                                              |
| data movement ops     | 0 (reshape, transpose, broadcast, slices, copies, ...)       |
| any other stablehlo   | the most local elements of an operand or result (one FLOP     |
|                       | per element: elementwise, reductions, compares, ...)          |

Bytes are the local bytes of the op's operands and results. An op takes
``max(FLOPs / peak_flops, bytes / hbm_bandwidth)``; the module takes the sum over its ops (no
overlap). Ops in a loop body count once, as the collectives of the report do.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from shardwise.ir import Module, Op, TensorType, Value
from shardwise.mesh import Mesh
from shardwise.rules import stablehlo_attrs as attrs
from shardwise.sdy.shardings import get_sharding
from shardwise.sharding import TensorSharding, resolve_mesh

__all__ = ["DEFAULT_HBM_BANDWIDTH", "DEFAULT_PEAK_FLOPS", "ComputeTotals", "compute_totals"]

DEFAULT_PEAK_FLOPS = 100e12  # FLOP/s per device (an accelerator's dense bf16 order)
DEFAULT_HBM_BANDWIDTH = 1e12  # bytes/s per device

_MOVEMENT = frozenset(
    "stablehlo." + n
    for n in (
        "reshape",
        "transpose",
        "broadcast_in_dim",
        "broadcast",
        "slice",
        "dynamic_slice",
        "dynamic_update_slice",
        "concatenate",
        "pad",
        "reverse",
        "gather",
        "scatter",
        "iota",
        "convert",
        "bitcast_convert",
        "get_tuple_element",
        "tuple",
        "optimization_barrier",
        "copy",
    )
)
_SKIPPED = frozenset(
    ("stablehlo.constant", "stablehlo.return", "stablehlo.while", "stablehlo.case", "stablehlo.if")
)


@dataclass(frozen=True, slots=True)
class ComputeTotals:
    """FLOPs, HBM bytes and roofline seconds of one device, summed over the ops."""

    flops: float
    hbm_bytes: float
    seconds: float


def _local_shape(value: Value, meshes: Mapping[str, object]) -> tuple[int, ...] | None:
    type_ = value.type
    if not isinstance(type_, TensorType) or not type_.is_static:
        return None
    sharding = get_sharding(value)
    mesh = resolve_mesh(sharding, meshes) if sharding is not None else None
    if sharding is None or mesh is None:
        return type_.shape
    return _sharded_shape(type_, sharding, mesh)


@functools.lru_cache(maxsize=4096)
def _sharded_shape(type_: TensorType, sharding: TensorSharding, mesh: Mesh) -> tuple[int, ...]:
    """A device's shape of `type_` under `sharding`: computed once per distinct triple (a
    96-layer GPT has 30k values of a few hundred types and shardings)."""
    shape = []
    for d, n in enumerate(type_.shape):
        parts = sharding.dim_shardings[d].sharded_size(mesh) if d < sharding.rank else 1
        shape.append(math.ceil(n / parts))
    return tuple(shape)


def _elements(shape: tuple[int, ...] | None) -> int:
    return math.prod(shape) if shape is not None else 0


def _dot_flops(op: Op, meshes: Mapping[str, object]) -> float:
    nums = attrs.parse_dot_dimension_numbers(attrs.required_attr(op, "dot_dimension_numbers"))
    lhs = _local_shape(op.operands[0], meshes)
    if lhs is None:
        return 0.0
    contracting = math.prod(lhs[d] for d in nums.lhs_contracting_dimensions)
    return 2.0 * _elements(_local_shape(op.results[0], meshes)) * contracting


def _conv_flops(op: Op, meshes: Mapping[str, object]) -> float:
    nums = attrs.parse_conv_dimension_numbers(attrs.required_attr(op, "dimension_numbers"))
    kernel = _local_shape(op.operands[1], meshes)
    if kernel is None:
        return 0.0
    per_output = _elements(kernel) / max(1, kernel[nums.kernel_output_feature_dimension])
    return 2.0 * _elements(_local_shape(op.results[0], meshes)) * per_output


def op_flops(op: Op, meshes: Mapping[str, object]) -> float:
    """The FLOPs one device spends on `op` (the table of the module docstring)."""
    if op.name == "stablehlo.dot_general":
        return _dot_flops(op, meshes)
    if op.name == "stablehlo.convolution":
        return _conv_flops(op, meshes)
    if op.name in _MOVEMENT:
        return 0.0
    values = [*op.operands, *op.results]
    return float(max((_elements(_local_shape(v, meshes)) for v in values), default=0))


def compute_totals(
    module: Module,
    bytes_of: Callable[[Value], int],
    peak_flops: float = DEFAULT_PEAK_FLOPS,
    hbm_bandwidth: float = DEFAULT_HBM_BANDWIDTH,
    runs: dict[int, int] | None = None,
) -> ComputeTotals:
    """Sum the roofline time of every StableHLO op of `module` (after explicit reshards),
    each as many times as it runs in one call of the entry function (`runs.op_runs`: loop
    bodies per trip, callees per call)."""
    from shardwise.explain.runs import op_runs
    from shardwise.explain.summary import entry_func

    meshes = module.meshes()
    if runs is None:  # a caller that counts the collectives too passes the same table
        runs = op_runs(module, entry_func(module))
    flops = hbm = seconds = 0.0
    sizes: dict[int, int] = {}  # a value is an operand of many ops: its bytes once

    def size(v: Value) -> int:
        n = sizes.get(id(v))
        if n is None:
            n = sizes[id(v)] = bytes_of(v)
        return n

    for op in module.walk():
        if not op.name.startswith("stablehlo.") or op.name in _SKIPPED:
            continue
        times = runs.get(id(op), 0) if runs else 1  # an op no call reaches does not run
        if not times:
            continue
        f = op_flops(op, meshes)
        b = float(sum(size(v) for v in [*op.operands, *op.results]))
        flops += f * times
        hbm += b * times
        seconds += max(f / peak_flops, b / hbm_bandwidth) * times
    return ComputeTotals(flops, hbm, seconds)
