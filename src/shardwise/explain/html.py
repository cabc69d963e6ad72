"""A self-contained HTML report: inline CSS and JS, no network.

The op graph is an arc diagram: one box per value in program order, colored by its sharding
(one color per distinct sharding), an arc from each operand to the value computed from it; a
click on a box or a table row shows the value's explanation. Below: the values, the
collectives with their costs and the totals per mesh axis.
"""

from __future__ import annotations

import html
import json

from shardwise.explain.report import Report
from shardwise.explain.summary import summary_line

__all__ = ["render_html"]

_CSS = """
body{font-family:system-ui,sans-serif;margin:1em;color:#222}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 6px;
font-size:13px;text-align:left}.value{cursor:pointer}.value:hover{outline:2px solid #333}
.selected td{font-weight:bold}g.selected rect{stroke:#000;stroke-width:2}
#detail{position:sticky;top:0;white-space:pre-wrap;font-family:monospace;background:#f6f6f6;padding:.5em;
border:1px solid #ddd;min-height:3em}.swatch{display:inline-block;width:1em;height:1em;
vertical-align:middle;margin-right:4px;border:1px solid #999}
"""

# The first script records any error of the page (its own or a later script's) on the root
# element, where a headless browser's --dump-dom shows it; a test asserts there is none.
_ERRORS_JS = """
window.addEventListener('error',function(e){var r=document.documentElement;
r.dataset.jsErrors=(r.dataset.jsErrors||'')+String(e.message)+';';});
"""

# Fills the summary, wires the clicks and opens the value named by the URL's fragment
# (#value=%3, percent-encoded): a link can point at one explanation. `data-ready` on <body>
# says the script ran to its end.
_JS = """
const DATA = JSON.parse(document.getElementById('data').textContent);
function show(i){
  document.getElementById('detail').textContent=DATA.values[i].explanation;
  document.querySelectorAll('.selected').forEach(function(el){el.classList.remove('selected');});
  document.querySelectorAll('.value[data-index="'+i+'"]').forEach(function(el){
    el.classList.add('selected');});
}
function fromHash(){
  var m=/^#value=(.*)$/.exec(location.hash);
  if(!m)return;
  var name=decodeURIComponent(m[1]);
  var i=DATA.values.findIndex(function(v){return v.name===name;});
  if(i>=0)show(i);
}
document.querySelectorAll('.value').forEach(function(el){
  el.addEventListener('click',function(){
    var i=Number(el.dataset.index);
    history.replaceState(null,'','#value='+encodeURIComponent(DATA.values[i].name));
    show(i);});});
window.addEventListener('hashchange',fromHash);
document.getElementById('summary').textContent=DATA.values.length+' values, '
  +DATA.collectives.length+' collectives';
fromHash();
document.body.dataset.ready='1';
"""

_ROW = 16


def _graph(values: list[dict], colors: dict[str, str]) -> str:
    """An arc diagram of the values: boxes top to bottom, arcs operand -> value on the left."""
    index = {v["name"]: i for i, v in enumerate(values)}
    arcs = []
    for i, v in enumerate(values):
        for name in v.get("operands", []):
            j = index.get(name)
            if j is None or j == i:
                continue
            y1, y2 = j * _ROW + 8, i * _ROW + 8
            bend = 150 - min(140, abs(i - j) * 3)
            arcs.append(
                f'<path d="M150 {y1} C{bend} {y1} {bend} {y2} 150 {y2}" fill="none" '
                'stroke="#999" stroke-width="0.8"/>'
            )
    boxes = [
        f'<g class="value" data-index="{i}"><rect x="150" y="{i * _ROW + 1}" width="260" '
        f'height="{_ROW - 2}" fill="{colors[_color_key(v["sharding"])]}"/>'
        f'<text x="154" y="{i * _ROW + 12}" font-size="11">'
        f"{html.escape(v['name'])} {html.escape(v['op'].split(' at ')[0])}</text></g>"
        for i, v in enumerate(values)
    ]
    height = max(1, len(values)) * _ROW
    return (
        f'<svg id="graph" width="420" height="{height}" xmlns="http://www.w3.org/2000/svg">'
        + "".join(arcs)
        + "".join(boxes)
        + "</svg>"
    )


# Distinct light colors (hues far apart first); replicated tensors are grey.
_PALETTE = (
    "#a6cee3",
    "#b2df8a",
    "#fb9a99",
    "#fdbf6f",
    "#cab2d6",
    "#ffff99",
    "#8dd3c7",
    "#bebada",
    "#fccde5",
    "#ccebc5",
    "#ffed6f",
    "#80b1d3",
)
_GREY = "#e0e0e0"


def _color_key(sharding: str | None) -> str:
    """Tensors with no axis on any dim share one (grey) color."""
    return sharding if sharding is not None and '{"' in sharding else _REPLICATED


_REPLICATED = "replicated (no axis)"


def _colors(values: list[dict]) -> dict[str, str]:
    """One color per distinct sharding, in order of first use; grey for no axis."""
    colors: dict[str, str] = {}
    for v in values:
        key = _color_key(v["sharding"])
        if key not in colors:
            used = len([k for k in colors if k != _REPLICATED])
            colors[key] = _GREY if key == _REPLICATED else _color(used)
    return colors


def _color(index: int) -> str:
    if index < len(_PALETTE):
        return _PALETTE[index]
    return f"hsl({(index * 137) % 360},60%,{75 + 10 * (index % 2)}%)"


def _cost_line(data: dict) -> str:
    """The summary on top: time, bytes per mesh axis, peak memory per device."""
    summary = data.get("summary")
    if not summary:
        return ""
    per_axis = ", ".join(f"{a}: {int(t['bytes_per_device'])} B" for a, t in data["totals"].items())
    return summary_line(summary) + (f" ({per_axis})" if per_axis else "")


def render_html(report: Report, title: str) -> str:
    data = report.to_json()
    colors = _colors(data["values"])
    rows = []
    for i, v in enumerate(data["values"]):
        key = v["sharding"] or "replicated"
        color = colors[_color_key(v["sharding"])]
        rows.append(
            f'<tr class="value" data-index="{i}" style="background:{color}">'
            f"<td>{html.escape(v['name'])}</td><td>{html.escape(v['type'])}</td>"
            f"<td>{html.escape(key)}</td><td>{v['bytes_per_device']}</td>"
            f"<td>{html.escape(v['op'])}</td></tr>"
        )
    coll = [
        f"<tr><td>{c['kind']}</td><td>{html.escape(', '.join(c['axes']))}</td>"
        f"<td>{c['bytes_per_device']}</td><td>{c['time_s']:.3g}</td>"
        f"<td>{html.escape(c['loc'])}</td><td>{html.escape(c['cause'])}</td></tr>"
        for c in data["collectives"]
    ]
    totals = [
        f"<tr><td>{html.escape(axis)}</td><td>{t['count']}</td><td>{t['bytes_per_device']}</td>"
        f"<td>{t['time_s']:.3g}</td></tr>"
        for axis, t in data["totals"].items()
    ]
    legend = "".join(
        f'<div><span class="swatch" style="background:{c}"></span>{html.escape(k)}</div>'
        for k, c in colors.items()
    )
    payload = json.dumps(data).replace("</", "<\\/")
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html><head><meta charset="utf-8">',
            f"<title>{html.escape(title)}</title><style>{_CSS}</style>",
            f"<script>{_ERRORS_JS}</script></head><body>",
            f"<h1>{html.escape(title)}</h1>",
            '<p id="summary"></p>',
            f'<p id="cost">{html.escape(_cost_line(data))}</p>',
            '<h2>Op graph</h2><div id="legend">' + legend + "</div>",
            '<div style="display:flex;gap:1em"><div>' + _graph(data["values"], colors) + "</div>",
            '<div style="flex:1"><h2>Explanation</h2><div id="detail">click a value</div>'
            "</div></div>",
            "<h2>Values</h2>",
            '<table id="values"><tr><th>value</th><th>type</th><th>sharding</th>'
            "<th>bytes/device</th><th>op</th></tr>" + "".join(rows) + "</table>",
            '<h2>Collectives</h2><table id="collectives"><tr><th>kind</th><th>axes</th>'
            "<th>bytes/device</th><th>time (s)</th><th>loc</th><th>for</th></tr>"
            + "".join(coll)
            + "</table>",
            '<h2>Totals per mesh axis</h2><table id="totals"><tr><th>axis</th><th>count</th>'
            "<th>bytes/device</th><th>time (s)</th></tr>" + "".join(totals) + "</table>",
            f'<script type="application/json" id="data">{payload}</script>',
            f"<script>{_JS}</script>",
            "</body></html>",
            "",
        ]
    )
