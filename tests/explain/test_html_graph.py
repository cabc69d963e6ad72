"""The program graph the HTML page draws (`explain/graph.py`), checked without a browser on
corpus models: what each graph holds, that edges stay inside one graph and go forward (the
page's one-pass ranking needs it), and where the collectives are marked."""

from __future__ import annotations

import functools
import warnings
from pathlib import Path

import pytest

from shardwise.explain.report import build_report

DATA = Path(__file__).parents[1] / "models" / "data"
MODELS = sorted(p.name for p in DATA.glob("*.mlir"))


@functools.cache  # each model's report is read by several tests
def _report(name: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ops without a rule, reported elsewhere
        return build_report((DATA / name).read_text(), name, explanations=False)


@pytest.mark.parametrize("name", MODELS, ids=[m.removesuffix(".mlir") for m in MODELS])
def test_edges_stay_in_their_graph_and_go_forward(name: str) -> None:
    graph = _report(name).graph
    nodes = graph["nodes"]
    for g, src, dst, _marks in graph["edges"]:
        assert nodes[src][0] == g and nodes[dst][0] == g
        assert src < dst
    # Every node's graph is the entry graph or one a node owns; owners come first.
    for gid, (_title, kind, owner) in enumerate(graph["graphs"]):
        assert (owner == -1) == (gid == 0)
        assert owner == -1 or gid in nodes[owner][4]
        assert kind in ("func", "region")


@pytest.mark.parametrize(
    ("name", "groups"),
    [
        ("while_loop.mlir", ["func @main", "while cond", "while body", "func @norm"]),
        ("cond.mlir", ["func @main", "case branch 0", "case branch 1"]),
        ("nested_calls.mlir", ["func @main", "func @block", "func @dense", "func @relu"]),
    ],
    ids=["while", "case", "calls"],
)
def test_groups_of_calls_and_regions(name: str, groups: list[str]) -> None:
    graph = _report(name).graph
    assert [g[0] for g in graph["graphs"]][: len(groups)] == groups


def test_a_callee_called_twice_is_one_graph() -> None:
    graph = _report("gpt_stack_4.mlir").graph
    titles = [g[0] for g in graph["graphs"]]
    assert len(titles) == len(set(titles))
    calls = [n for n in graph["nodes"] if n[2].startswith("call @")]
    owned = [tuple(n[4]) for n in calls]
    assert len(calls) > len(set(owned))  # several calls share their callee's graph


@pytest.mark.parametrize("name", MODELS, ids=[m.removesuffix(".mlir") for m in MODELS])
def test_each_used_collective_marks_an_edge(name: str) -> None:
    report = _report(name)
    # A collective whose result feeds several ops marks each of their edges.
    marked = {i for e in report.graph["edges"] for i in e[3]}
    # sort_topk: one all_to_all's result is never used, so no edge carries it.
    assert len(marked) == len(report.collectives) - (name == "sort_topk.mlir")
    assert marked <= set(range(len(report.collectives)))
    # Each sharding's count in the legend is the number of nodes of its color.
    colors = [n[5] for n in report.graph["nodes"]]
    assert [c[2] for c in report.graph["colors"]] == [
        colors.count(i) for i in range(len(report.graph["colors"]))
    ]
