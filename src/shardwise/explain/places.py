"""Where a value or a step is, in the user's words: the op, its file:line:col and the JAX
primitive and Python line it came from (`where`), and the origin of an axis (`origin_line`)."""

from __future__ import annotations

from shardwise.explain.provenance import Blocked, Origin
from shardwise.explain.run import Explained, key_name
from shardwise.ir import Module, Op, Value
from shardwise.names import op_source

__all__ = ["where", "value_where", "origin_line", "stopped_json"]


def where(op: Op | None) -> str:
    if op is None:
        return ""
    text = f"{op.name} at {op.location}"
    source = str(op_source(op))  # the JAX primitive and Python line, never raw loc(...)
    return f"{text} ({source})" if source else text


def origin_line(ex: Explained, origin: Origin) -> str:
    src = key_name(ex.module, origin.source) if origin.source is not None else "?"
    if origin.op is None:
        if origin.round:
            return f"{origin.round} on {src}"
        return f"user annotation/constraint on {src}{value_where(origin.source)}"
    return f"{where(origin.op)}, factor {origin.factor}, {origin.round}" + (
        f", from {src}" if origin.source is not None else ""
    )


def value_where(key) -> str:
    if isinstance(key, Value) and key.defining_op is not None:
        return f" ({where(key.defining_op)})"
    return ""


def stopped_json(module: Module, blocked: list[Blocked]) -> list[dict[str, object]]:
    """Each stopped axis as JSON-ready facts: the axis, the tensor that has it, the op, factor
    and reason that stopped it, and the path between."""
    return [
        {
            "axis": b.axis,
            "on": key_name(module, b.other),
            "op": where(b.op),
            "factor": b.factor,
            "kind": b.kind,
            "reason": b.reason,
            "path": [key_name(module, k) for k in b.path],
        }
        for b in blocked
    ]
