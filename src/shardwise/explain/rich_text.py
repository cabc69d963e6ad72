"""Terminal rendering with `rich`: the explanation as a tree of chains and a table of stopped
axes, the report's collectives and totals as tables. Only the commands import this module, and
only when stdout is a terminal (`text.wants_rich`); the text they print otherwise is
`text.format_explanation`'s.
"""

from __future__ import annotations

from rich.console import Console, Group, JustifyMethod, RenderableType
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from shardwise.explain.chains import chain_lines, path_text
from shardwise.explain.places import value_where, where
from shardwise.explain.provenance import Explanation
from shardwise.explain.report import Report
from shardwise.explain.run import Explained, key_name, key_type
from shardwise.explain.summary import summary_line

__all__ = ["render_explanation", "render_report"]

# One colour per reason kind (`Blocked.kind`); the reasons that come from the program (its
# rule, its annotations) are red/yellow, the ones from propagation's order are blue/magenta.
_KIND_STYLE = {
    "reduction": "red",
    "blocked": "red",
    "no-rule": "red",
    "different-meshes": "red",
    "not-in-tensor": "yellow",
    "closed": "yellow",
    "replicated": "yellow",
    "manual": "yellow",
    "non-divisible": "yellow",
    "conservative": "yellow",
    "need-replication": "magenta",
    "permutation": "magenta",
    "priority": "magenta",
    "conflict": "blue",
    "conflict-tensor": "blue",
}


def _header(ex: Explained, exp: Explanation) -> Text:
    head = Text()
    head.append(exp.name, style="bold cyan")
    head.append(value_where(exp.key), style="dim")
    type_ = key_type(ex.module, exp.key)
    if type_ is not None:
        head.append(f" : {type_}")
    return head


def _sharding_lines(exp: Explanation) -> Text:
    out = Text()
    out.append("sharding: ", style="bold")
    out.append(str(exp.sharding) if exp.sharding is not None else "(none: replicated)", "green")
    if exp.propagated is not None:
        out.append("\npropagation left (before the export steps): ", style="bold")
        out.append(str(exp.propagated), style="green")
    return out


def _chains(ex: Explained, exp: Explanation) -> Tree | Text:
    if not exp.chains:
        return Text("no axis shards this tensor", style="dim")
    tree = Tree(Text("axes and where they came from", style="bold"))
    for axis, chain in exp.chains.items():
        header, *hops = (line.strip() for line in chain_lines(ex, exp.key, axis, chain))
        node = tree.add(Text(header.rstrip(":"), style="bold green"))
        for hop in hops:
            node.add(Text(hop, style="dim" if hop.startswith("<- ...") else ""))
    return tree


def _stopped(ex: Explained, exp: Explanation) -> Table | None:
    if not exp.blocked:
        return None
    table = Table(title="axes a connected tensor has and this one lacks", title_justify="left")
    for column in ("axis", "on", "stopped at", "reason"):
        table.add_column(column, overflow="fold")
    for b in exp.blocked:
        on = key_name(ex.module, b.other)
        if b.path:
            names = [key_name(ex.module, k) for k in (b.other, *b.path)]
            on += f"\n({len(b.path)} ops away: {path_text(names)})"
        reason = Text()
        reason.append(b.kind or "reason", style=f"bold {_KIND_STYLE.get(b.kind, 'white')}")
        reason.append(": " + b.reason)
        table.add_row(b.axis, on, where(b.op), reason)
    return table


def render_explanation(console: Console, ex: Explained, exp: Explanation) -> None:
    """Print one explanation: header, sharding, the chain tree, the stopped-axes table."""
    parts: list[RenderableType] = [_header(ex, exp), _sharding_lines(exp), _chains(ex, exp)]
    table = _stopped(ex, exp)
    if table is not None:
        parts.append(table)
    console.print(Group(*parts))


def render_report(console: Console, report: Report) -> None:
    """The report's terminal summary: the collectives, then the totals per mesh axis."""
    table = Table(title=f"{len(report.collectives)} collectives", title_justify="left")
    for column in ("kind", "axes", "B/device", "time (s)", "at", "for"):
        justify: JustifyMethod = "right" if column in ("B/device", "time (s)") else "left"
        table.add_column(column, justify=justify, overflow="fold")
    for c in report.collectives:
        table.add_row(
            Text(c.kind, style="bold magenta"),
            ", ".join(c.axes),
            f"{c.bytes_per_device}",
            f"{c.time_s:.3g}",
            c.loc,
            c.cause,
        )
    console.print(table)
    if report.summary:
        console.print(Text(summary_line(report.summary), style="bold"))
    if not report.totals:
        return
    totals = Table(title="totals per mesh axis", title_justify="left")
    for column in ("axis", "collectives", "B/device", "time (s)"):
        totals.add_column(column, justify="left" if column == "axis" else "right")
    for axis, t in report.totals.items():
        totals.add_row(
            Text(axis, style="bold green"),
            str(t["count"]),
            str(t["bytes_per_device"]),
            f"{t['time_s']:.3g}",
        )
    console.print(totals)
