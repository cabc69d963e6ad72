"""Shardy's verifier (`ir/verifiers.cc`) over our values and IR, with Shardy's wording.

Each `verify_*` function checks one value in its context and raises `VerifyError` with the
message Shardy emits for the same failure (without the op prefix). `verify_module` walks a
`Module` like MLIR's verifier does and adds the op context Shardy adds, e.g.
``'func.func' op arg 0 - unknown axis name: "c"`` or ``'stablehlo.add' op result - ...``.

Checked (Shardy notes 1.7, 2.3): meshes (axis sizes, names, device ids); tensor shardings
(mesh resolves, maximal and non-shaped rules, rank, priorities, axis names, duplicates,
mergeable neighbours, sub-axis sizes/divisibility/overlap, full axis next to its sub-axes,
replicated/unreduced order, axes already manual in an enclosing manual computation);
per-value lists (count); op sharding rules (mapping counts/ranks, factor indices, unused
factors, typed lists sorted/unique/disjoint, reduction factors not in results); manual
computations (manual axes first, divisibility, local shapes, common mesh, unknown and
nested manual axes); named computations, data-flow edges, constraints, reshards and the
``out_sharding`` of collectives. Divisibility of dims by sharded size is off by default, as in
Shardy's op verification.

Not checked (no shardings involved, or export-only): the operand/result relation of
collectives, unreduced-axes transitions (absent from the jaxlib 0.10.2 reference),
``sdy.propagation_edges``, data-flow-edge use counts, propagation-barrier directions.
"""

from __future__ import annotations

from shardwise.verify.attrs import (
    COLLECTIVE_OPS,
    resolve_mesh,
    verify_mesh,
    verify_op_sharding_rule,
    verify_sharding_per_value,
    verify_tensor_sharding,
)
from shardwise.verify.ops import sdy_values, verify_manual_computation, verify_module

__all__ = [
    "COLLECTIVE_OPS",
    "verify_mesh",
    "verify_tensor_sharding",
    "verify_sharding_per_value",
    "verify_op_sharding_rule",
    "verify_manual_computation",
    "verify_module",
    "resolve_mesh",
    "sdy_values",
]
