"""What an annotated module costs per step: communication + compute, and peak memory.

`estimate` runs what Shardy runs on the module (``sdy-propagation-pipeline``, then
``sdy-insert-explicit-reshards{enable-full-version=true}`` and ``sdy-reshard-to-collectives``),
prices each collective it inserts with the report's alpha-beta model (`explain/report.py`),
each op with the roofline of `explain/compute.py`, and takes the report's peak memory
(arguments + the most live values at once over the entry function's op order). The result is
the report's ``summary`` plus a breakdown; the planner ranks plans by ``time_s`` alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from shardwise.explain.compute import DEFAULT_HBM_BANDWIDTH, DEFAULT_PEAK_FLOPS, compute_totals
from shardwise.explain.report import (
    LinkModel,
    _collectives,
    _insert_collectives,
    op_runs_of,
    value_bytes,
)
from shardwise.explain.summary import peak_memory_bytes
from shardwise.ir import Module

__all__ = ["DEFAULT_COST", "CostParams", "estimate", "estimate_ir"]


@dataclass(frozen=True, slots=True)
class CostParams:
    """The machine the plan is for. Defaults: 100 GB/s and 5 us per link on every mesh axis
    (`per_axis` overrides one axis: ``(("data", 25e9, 10e-6),)``), 100 TFLOP/s and 1 TB/s of
    HBM per device."""

    link_bandwidth: float = 100e9
    link_latency: float = 5e-6
    per_axis: tuple[tuple[str, float, float], ...] = ()
    peak_flops: float = DEFAULT_PEAK_FLOPS
    hbm_bandwidth: float = DEFAULT_HBM_BANDWIDTH

    def link(self) -> LinkModel:
        return LinkModel(self.link_bandwidth, self.link_latency, self.per_axis)


DEFAULT_COST = CostParams()


def estimate(module: Any, params: CostParams = CostParams()) -> dict[str, Any]:
    """The cost of an annotated (unpropagated) module: a `ShardedModule`, an `ir.Module` or
    MLIR text; the module itself is not changed (a copy is propagated)."""
    from shardwise.io.mlir import load_text, write_text

    if isinstance(module, str):
        text, name = module, "<plan>"
    elif isinstance(module, Module):
        text, name = write_text(module), module.filename
    else:  # a ShardedModule
        text, name = module._unpropagated_text(), module.ir.filename
    return estimate_ir(load_text(text, name), params)


def estimate_ir(
    module: Module, params: CostParams = CostParams(), imported: bool = False
) -> dict[str, Any]:
    """`estimate` on an unpropagated module that it may change (propagates it in place).
    `imported`: Shardy's import pipeline has run on `module` already (`import_ahead`)."""
    from shardwise.passes import run_pass
    from shardwise.propagation.propagation_pipeline import propagation_pipeline

    if imported:
        propagation_pipeline(module, imported=True)
    else:
        run_pass(module, "sdy-propagation-pipeline")
    inserted = _insert_collectives(module)
    runs = op_runs_of(module)  # one count of each op's runs for collectives and compute
    collectives = _collectives(module, inserted, params.link(), runs, located=False)
    bytes_of = value_bytes(module)
    compute = compute_totals(module, bytes_of, params.peak_flops, params.hbm_bandwidth, runs)
    comm_s = sum(c.time_s for c in collectives)
    per_axis: dict[str, int] = {}
    for c in collectives:
        for axis in c.axes:
            per_axis[axis] = per_axis.get(axis, 0) + c.bytes_per_device
    return {
        "time_s": comm_s + compute.seconds,
        "comm_s": comm_s,
        "compute_s": compute.seconds,
        "comm_bytes_per_device": sum(c.bytes_per_device for c in collectives),
        "comm_bytes_per_axis": dict(sorted(per_axis.items())),
        "peak_memory_bytes_per_device": peak_memory_bytes(module, bytes_of),
        "flops_per_device": compute.flops,
        "collectives": [
            {"kind": c.kind, "axes": list(c.axes), "bytes_per_device": c.bytes_per_device}
            for c in collectives
        ],
    }
