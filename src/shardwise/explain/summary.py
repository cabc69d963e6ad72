"""The report's `summary`: estimated time, communication and peak memory per device.

The numbers the planner compares plans by (``time_s``, ``compute_s``,
``comm_bytes_per_device``, ``peak_memory_bytes_per_device``; `shardwise.plan.cost`):

- ``time_s``: the collectives' alpha-beta times summed plus ``compute_s`` (no overlap of
  communication with compute);
- ``compute_s``: the ops' roofline time on one device (`explain/compute.py`);
- ``comm_bytes_per_device``: the bytes each device sends or receives over all collectives;
- ``peak_memory_bytes_per_device``: the arguments (live for the whole program) plus the
  most bytes of other values live at once along the entry function's op order. A value lives
  from its op to its last use at the top level of the function (a use inside a region counts
  at the op holding the region); values inside regions and callees are not counted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from shardwise.ir import Module, Op, Value

__all__ = ["summary", "summary_line", "peak_memory_bytes", "live_at_peak"]


def summary(
    collectives: Sequence[Any],
    module: Module,
    bytes_of: Callable[[Value], int],
    compute_s: float = 0.0,
) -> dict[str, float | int]:
    """The summary object of a report (`collectives` with `time_s` and `bytes_per_device`)."""
    return {
        "time_s": sum(c.time_s for c in collectives) + compute_s,
        "compute_s": compute_s,
        "comm_bytes_per_device": sum(c.bytes_per_device for c in collectives),
        "peak_memory_bytes_per_device": peak_memory_bytes(module, bytes_of),
    }


def entry_func(module: Module) -> Op | None:
    """``main`` if the module has it, else its first public function."""
    funcs = [f for f in module.funcs if f.regions and f.regions[0].blocks]
    for func in funcs:
        if module.symbol_name(func) == "main":
            return func
    public = [f for f in funcs if str(f.get_attr("sym_visibility") or "") != '"private"']
    candidates = public or funcs
    return candidates[0] if candidates else None


def peak_memory_bytes(module: Module, bytes_of: Callable[[Value], int]) -> int:
    """Arguments plus the peak of the values live at once, per device (see the module doc)."""
    return sum(size for _, size in live_at_peak(module, bytes_of))


def live_at_peak(module: Module, bytes_of: Callable[[Value], int]) -> list[tuple[Value, int]]:
    """The arguments and the values live at the peak, with their bytes per device (their sum
    is `peak_memory_bytes`)."""
    func = entry_func(module)
    if func is None:
        return []
    block = func.regions[0].entry
    position = {id(op): i for i, op in enumerate(block.ops)}
    frees: dict[int, int] = {}  # op index -> bytes whose last use is that op
    lasts: list[tuple[Value, int, int, int]] = []  # value, bytes, defining op, last use
    live = peak = peak_at = 0
    for i, op in enumerate(block.ops):
        for value in op.results:
            size = bytes_of(value)
            last = max((_top_level_index(user, position) for user, _ in value.uses), default=i)
            frees[last] = frees.get(last, 0) + size
            lasts.append((value, size, i, last))
            live += size
        if live > peak:
            peak, peak_at = live, i
        live -= frees.pop(i, 0)
    args = [(a, bytes_of(a)) for a in block.args]
    if peak == 0:
        return args
    return args + [(v, n) for v, n, i, last in lasts if i <= peak_at <= last]


def _top_level_index(user: Op, position: dict[int, int]) -> int:
    """The index in the entry block of the op that is, or holds, `user`."""
    op: Op | None = user
    while op is not None and id(op) not in position:
        block = op.parent
        op = block.parent_op if block is not None else None
    return position[id(op)] if op is not None else len(position)


def summary_line(summary: dict) -> str:
    """``~3e-05 s communication, 4096 B/device sent, peak memory 123456 B/device`` (the
    communication part of ``time_s``: the compute model's share is ``compute_s``)."""
    communication = summary["time_s"] - summary.get("compute_s", 0.0)
    return (
        f"~{communication:.3g} s communication, {summary['comm_bytes_per_device']} "
        f"B/device sent, peak memory {summary['peak_memory_bytes_per_device']} B/device"
    )
