"""Explain and report: why a tensor is (not) sharded, what the sharding costs, pictures.

from shardwise import explain
print(explain.explain_text(text, "main:arg0"))     # the same text as `shardwise explain`
data = explain.report_json(text)                   # the same JSON as `shardwise report`
"""

from __future__ import annotations

__all__ = ["explain_text", "report_json"]


def explain_text(text: str, name: str, source_name: str = "<input>") -> str:
    """Propagate `text` (sdy-propagation-pipeline) and explain the value `name`."""
    from shardwise.explain.run import explain_module, find_keys
    from shardwise.explain.text import format_explanation
    from shardwise.io.mlir import load_text

    module = load_text(text, source_name)
    ex = explain_module(module)
    return "\n".join(format_explanation(ex, ex.explain(k)) for k in find_keys(module, name, None))


def report_json(text: str, source_name: str = "<input>") -> dict:
    """The cost report of `text` as a JSON-ready dict (collectives, values, totals)."""
    from shardwise.explain.report import build_report

    return build_report(text, source_name).to_json()
