"""The collectives of a per-device program, for ``shardwise partition --json``.

Each StableHLO collective of the partitioned program is listed with its kind, its device
groups as explicit device-id lists (``replica_groups``; a ``collective_permute`` gives its
``source_target_pairs`` instead), the bytes one device holds of its operands and results, and
the global op it came from. Shardy gives every op it creates the location of the op it
rewrites, so a collective's location is its source op's ``file:line:col`` in the global
program (a dot's all-reduce points at the dot, a reshard's all-gather at the op that needed
the reshard).
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from typing import Any

from shardwise.explain.report import local_bytes
from shardwise.ir import Module, Op

__all__ = ["COLLECTIVE_KINDS", "Collective", "collectives", "source_ops", "to_json"]

COLLECTIVE_KINDS = (
    "stablehlo.all_gather",
    "stablehlo.all_reduce",
    "stablehlo.all_to_all",
    "stablehlo.collective_broadcast",
    "stablehlo.collective_permute",
    "stablehlo.reduce_scatter",
)

_DENSE = re.compile(r"dense<(\[.*\])>")


@dataclass(frozen=True, slots=True)
class Collective:
    """One collective of the per-device program."""

    kind: str  # "all_reduce", "all_gather", ...
    location: str  # file:line:col of the collective = of its source op in the global program
    source_op: str | None  # the global op at that location ("stablehlo.dot_general")
    replica_groups: list[list[int]] | None  # device ids, one list per group
    source_target_pairs: list[list[int]] | None  # collective_permute: [source, target] ids
    operand_bytes: int  # per device: the bytes of its operands (what it contributes)
    result_bytes: int  # per device: the bytes of its results
    operand_types: list[str]
    result_types: list[str]


def source_ops(module: Module) -> dict[tuple[int, int], str]:
    """(line, col) -> op name, for every op of the global program (before partitioning)."""
    found: dict[tuple[int, int], str] = {}
    for op in module.walk():  # pre-order: a reduce before the ops of its body at its place
        found.setdefault((op.location.line, op.location.col), op.name)
    return found


def collectives(
    module: Module, sources: dict[tuple[int, int], str] | None = None
) -> list[Collective]:
    """The collectives of the per-device `module`, in program order."""
    found = []
    for op in module.walk():
        if op.name not in COLLECTIVE_KINDS:
            continue
        loc = op.location
        found.append(
            Collective(
                kind=op.name.removeprefix("stablehlo."),
                location=str(loc),
                source_op=(sources or {}).get((loc.line, loc.col)),
                replica_groups=_device_lists(op, "replica_groups"),
                source_target_pairs=_device_lists(op, "source_target_pairs"),
                operand_bytes=sum(local_bytes(v.type, None, None) for v in op.operands),
                result_bytes=sum(local_bytes(v.type, None, None) for v in op.results),
                operand_types=[str(v.type) for v in op.operands],
                result_types=[str(v.type) for v in op.results],
            )
        )
    return found


def _device_lists(op: Op, name: str) -> list[list[int]] | None:
    attr = op.get_attr(name)
    if attr is None:
        return None
    match = _DENSE.match(str(attr).strip())
    if match is None:
        return None  # not a dense list (e.g. the mesh-axes form): the op's text says it
    groups = json.loads(match.group(1))
    return groups if groups and isinstance(groups[0], list) else [groups]


def to_json(found: list[Collective]) -> dict[str, Any]:
    """``{"collectives": [...]}`` with one object per collective (the fields of `Collective`)."""
    return {"collectives": [asdict(c) for c in found]}
