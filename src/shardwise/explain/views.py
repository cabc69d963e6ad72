"""What `ShardedModule.explain` and `.report` return: one result, three ways to show it.

``str(view)`` is the terminal text (the same as the CLI's ``--plain`` output),
``view._repr_html_()`` is what a notebook shows, ``view.to_json()`` the structured facts.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any

from shardwise.explain.places import origin_line, stopped_json, where
from shardwise.explain.provenance import Explanation
from shardwise.explain.report import Report
from shardwise.explain.run import Explained, key_type, mlir_name
from shardwise.explain.summary import summary_line
from shardwise.explain.text import format_explanation

__all__ = ["ExplanationView", "ReportView", "explanation_json", "format_report", "summary_line"]

_STYLE = "font-family:ui-monospace,monospace;font-size:12px;border-collapse:collapse;margin:4px 0"


def explanation_json(ex: Explained, exp: Explanation) -> dict[str, Any]:
    """One explained value as JSON-ready facts (names, sharding, each axis's chain, stops)."""
    module = ex.module
    type_ = key_type(module, exp.key)
    op = getattr(exp.key, "defining_op", None)
    return {
        "name": exp.name,
        "mlir_name": mlir_name(module, exp.key),
        "type": str(type_) if type_ is not None else "",
        "op": where(op),
        "sharding": str(exp.sharding) if exp.sharding is not None else None,
        "propagated": str(exp.propagated) if exp.propagated is not None else None,
        "axes": {axis: [origin_line(ex, o) for o in chain] for axis, chain in exp.chains.items()},
        "stopped": stopped_json(module, exp.blocked),
    }


@dataclass
class ExplanationView:
    """Why the values of one name are sharded as they are (several for a Python line)."""

    explained: Explained
    explanations: list[Explanation]

    def __str__(self) -> str:
        return "\n".join(format_explanation(self.explained, e) for e in self.explanations)

    def to_json(self) -> list[dict[str, Any]]:
        return [explanation_json(self.explained, e) for e in self.explanations]

    def _repr_html_(self) -> str:
        return "".join(_explanation_html(v) for v in self.to_json())


def _explanation_html(v: dict[str, Any]) -> str:
    e = html.escape
    title = e(v["name"]) + (
        f" <span style='color:#888'>({e(v['mlir_name'])})</span>"
        if v["mlir_name"] != v["name"]
        else ""
    )
    rows = [("type", v["type"]), ("sharding", v["sharding"] or "(none: replicated)")]
    if v["op"]:
        rows.insert(0, ("op", v["op"]))
    if v["propagated"]:
        rows.append(("propagation left", v["propagated"]))
    table = "".join(
        f"<tr><th style='text-align:left;padding-right:8px'>{e(k)}</th><td><code>{e(x)}</code>"
        "</td></tr>"
        for k, x in rows
    )
    axes = "".join(
        f"<li>axis <code>{e(axis)}</code><ol>"
        + "".join(f"<li>{e(line)}</li>" for line in lines)
        + "</ol></li>"
        for axis, lines in v["axes"].items()
    )
    stops = "".join(
        f"<li>axis <code>{e(s['axis'])}</code> (on {e(s['on'])}) stops at {e(s['op'])}: "
        f"{e(s['reason'])}</li>"
        for s in v["stopped"]
    )
    return (
        f"<div class='shardwise-explanation'><b>{title}</b><table style='{_STYLE}'>{table}"
        f"</table><ul>{axes or '<li>no axis shards this tensor</li>'}{stops}</ul></div>"
    )


@dataclass
class ReportView:
    """What a sharding costs: the collectives, bytes per mesh axis, per-value shardings."""

    report: Report
    title: str = "shardwise report"
    _json: dict[str, Any] | None = field(default=None, repr=False)

    def __str__(self) -> str:
        return format_report(self.report)

    def to_json(self) -> dict[str, Any]:
        if self._json is None:
            self._json = self.report.to_json()
        return self._json

    def html(self) -> str:
        """The self-contained HTML page of ``shardwise report --html``."""
        from shardwise.explain.html import render_html

        return render_html(self.report, self.title)

    def _repr_html_(self) -> str:
        e = html.escape
        head = "".join(
            f"<th style='text-align:left;padding-right:10px'>{h}</th>"
            for h in ("kind", "axes", "bytes/device", "time (s)", "for")
        )
        rows = "".join(
            f"<tr><td>{e(c.kind)}</td><td>{e(', '.join(c.axes))}</td>"
            f"<td>{c.bytes_per_device}</td><td>{c.time_s:.3g}</td><td>{e(c.cause)}</td></tr>"
            for c in self.report.collectives
        )
        totals = "".join(
            f"<tr><td>{e(axis)}</td><td>{int(t['count'])}</td>"
            f"<td>{int(t['bytes_per_device'])}</td><td>{t['time_s']:.3g}</td></tr>"
            for axis, t in self.report.totals.items()
        )
        summary = summary_line(self.report.summary) if self.report.summary else ""
        return (
            f"<div class='shardwise-report'><p>{e(summary)}</p>"
            f"<b>{len(self.report.collectives)} collectives</b>"
            f"<table style='{_STYLE}'><tr>{head}</tr>{rows}</table>"
            f"<b>per mesh axis</b><table style='{_STYLE}'><tr><th>axis</th><th>count</th>"
            f"<th>bytes/device</th><th>time (s)</th></tr>{totals}</table></div>"
        )


def format_report(report: Report) -> str:
    """The plain text of ``shardwise report``: each collective, then the totals per axis."""
    lines = [f"{len(report.collectives)} collectives"]
    for c in report.collectives:
        lines.append(
            f"  {c.kind} {{{', '.join(c.axes)}}} {c.bytes_per_device} B/device "
            f"~{c.time_s:.3g} s at {c.loc} for {c.cause}"
        )
    for axis, t in report.totals.items():
        lines.append(f"axis {axis}: {t['count']} collectives, {t['bytes_per_device']} B/device")
    if report.summary:
        lines.append(summary_line(report.summary))
    return "\n".join(lines)
