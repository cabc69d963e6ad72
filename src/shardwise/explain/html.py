"""A self-contained HTML report: the program graph, inline CSS, JS and SVG, no network.

On top the summary (estimated communication time, bytes per mesh axis, peak memory per
device); below it the program graph (`graph.program_graph`, laid out in the page by
`html_script`): ops as nodes colored by sharding (the legend names each), calls and loops as
groups (collapsed at first), the collectives the report inserts as red edges with their
bytes. A click on a node shows its values' explanations, by the user's names; the URL
fragment ``#value=<name>`` opens one. Then the collectives and the totals per mesh axis.

Size: each value's explanation is stored once, as indices into one table of distinct lines
(long chains repeat the same lines from value to value); the page joins them on a click. The
data is gzipped JSON in base64, which the browser inflates (`DecompressionStream`).
"""

from __future__ import annotations

import base64
import gzip
import html
import json
from typing import Any

from shardwise.explain.html_script import CSS, ERRORS_JS, GRAPH_JS
from shardwise.explain.report import Report
from shardwise.explain.summary import summary_line

__all__ = ["FILE_MARK", "decode_data", "encode_data", "page_data", "render_html"]


def _cost_line(report: Report) -> str:
    """The summary: time, bytes sent, peak memory per device."""
    return summary_line(report.summary) if report.summary else ""


def _axes_line(report: Report) -> str:
    return "bytes per mesh axis: " + (
        ", ".join(
            f"{axis}: {int(t['bytes_per_device'])} B/device in {int(t['count'])} collectives"
            for axis, t in report.totals.items()
        )
        or "none (no collective)"
    )


def _explanation(value: dict) -> str:
    """The value's explanation text, or (a report built without prose) its facts."""
    if "explanation" in value:
        return value["explanation"]
    sharding = value["sharding"] or "(none: replicated)"
    return f"{value['name']} : {value['type']}\n  sharding: {sharding}"


# Stands for the input's file name in the lines of the explanations (every location names it).
FILE_MARK = "\u0001"


def page_data(report: Report, title: str) -> dict[str, Any]:
    """What the page's script reads: compact lists (see `graph.py` for the graph's). The
    explanations' lines name `title` (the input file) as `FILE_MARK`."""
    lines: dict[str, int] = {}
    values = []
    for v in report.values:
        text = _explanation(v).replace(title + ":", FILE_MARK + ":") if title else _explanation(v)
        ids = [lines.setdefault(line, len(lines)) for line in text.split("\n")]
        values.append(
            [v["name"], v["mlir_name"], v["type"], v["sharding"], v["bytes_per_device"], ids]
        )
    collectives = [
        [c.kind, c.axes, c.bytes_per_device, c.time_s, c.loc, c.source, c.cause]
        for c in report.collectives
    ]
    return {
        "title": title,
        "file": title,
        "summary": report.summary,
        "values": values,
        "lines": list(lines),
        "collectives": collectives,
        "graph": report.graph,
    }


def encode_data(data: dict[str, Any]) -> str:
    """The page's data as the script reads it: JSON, gzipped, in base64."""
    text = json.dumps(data, separators=(",", ":")).encode()
    return base64.b64encode(gzip.compress(text, mtime=0)).decode()


def decode_data(page: str) -> dict[str, Any]:
    """The data of a page `render_html` wrote (for tests and tools)."""
    payload = page.split('id="data">', 1)[1].split("</script>", 1)[0]
    return json.loads(gzip.decompress(base64.b64decode(payload)))


def _tables(report: Report) -> str:
    e = html.escape
    coll = "".join(
        f"<tr><td>{e(c.kind)}</td><td>{e(', '.join(c.axes))}</td><td>{c.bytes_per_device}</td>"
        f"<td>{c.time_s:.3g}</td><td>{e(c.source or c.loc)}</td><td>{e(c.cause)}</td></tr>"
        for c in report.collectives
    )
    totals = "".join(
        f"<tr><td>{e(axis)}</td><td>{int(t['count'])}</td><td>{int(t['bytes_per_device'])}</td>"
        f"<td>{t['time_s']:.3g}</td></tr>"
        for axis, t in report.totals.items()
    )
    return (
        '<h2>Collectives</h2><table id="collectives"><tr><th>kind</th><th>axes</th>'
        "<th>bytes/device</th><th>time (s)</th><th>at</th><th>for</th></tr>"
        + coll
        + '</table><h2>Totals per mesh axis</h2><table id="totals"><tr><th>axis</th>'
        "<th>count</th><th>bytes/device</th><th>time (s)</th></tr>" + totals + "</table>"
    )


def _legend(report: Report) -> str:
    return "".join(
        f'<div><span class="swatch" style="background:{color}"></span>'
        f"{html.escape(key)} <span style='color:#777'>({count})</span></div>"
        for key, color, count in report.graph.get("colors", [])
    )


def render_html(report: Report, title: str) -> str:
    graph = report.graph
    n_ops = sum(1 for n in graph.get("nodes", []) if n[1] == "op")
    counts = (
        f"{n_ops} ops in {len(graph.get('graphs', []))} graphs, {len(report.values)} values, "
        f"{len(report.collectives)} collectives"
    )
    payload = encode_data(page_data(report, title))
    e = html.escape
    return "".join(
        [
            "<!DOCTYPE html>\n",
            '<html><head><meta charset="utf-8">',
            f"<title>{e(title)}</title><style>{CSS}</style>",
            f"<script>{ERRORS_JS}</script></head><body><header>",
            f"<h1>{e(title)}</h1>",
            f'<p id="summary">{e(counts)}</p>',
            f'<p id="cost">{e(_cost_line(report))}</p>',
            f'<p id="axes">{e(_axes_line(report))}</p></header>',
            '<div id="tools"><button id="expand">expand all</button>'
            '<button id="collapse">collapse all</button><button id="zout">zoom \u2212</button>'
            '<button id="zin">zoom +</button> <span id="shown"></span> \u2014 click an op for '
            "its explanation, a red label for its collective, + to open a call or loop</div>",
            '<div id="main"><div id="view"></div><div id="side"><h2>Explanation</h2>',
            '<div id="detail">click an op</div><h2>Shardings</h2>',
            f'<div id="legend">{_legend(report)}</div></div></div>',
            _tables(report),
            f'<script type="application/octet-stream" id="data">{payload}</script>',
            f"<script>{GRAPH_JS}</script>",
            "</body></html>\n",
        ]
    )
