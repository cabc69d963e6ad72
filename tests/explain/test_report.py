"""Report: the collectives equal those Shardy inserts; bytes, totals, JSON, HTML, progress."""

from __future__ import annotations

import json
import re
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest

from shardwise.api import parse_sharding
from shardwise.explain.html import FILE_MARK, decode_data, render_html
from shardwise.explain.report import (
    COLLECTIVES,
    LinkModel,
    build_report,
    enumerate_collectives,
    local_bytes,
)
from shardwise.io.reference import pipeline_text, run_pass
from shardwise.ir import TensorType
from shardwise.syntax import parse_mesh

CORPUS = sorted((Path(__file__).parents[1] / "models" / "data").glob("*.mlir"))
PASSES = [
    "sdy-propagation-pipeline",
    "sdy-insert-explicit-reshards{enable-full-version=true}",
    "sdy-reshard-to-collectives",
]
_OP = re.compile(r"= sdy\.(" + "|".join(COLLECTIVES) + r")\b(.*)$")


def test_pipeline_text_composes_the_three_passes() -> None:
    assert pipeline_text(PASSES) == (
        "builtin.module(sdy-propagation-pipeline,"
        "func.func(sdy-insert-explicit-reshards{enable-full-version=true}),"
        "func.func(sdy-reshard-to-collectives))"
    )


def _reference_collectives(text: str) -> Counter:
    """(kind, axes) of every collective in Shardy's output, read from the printed ops."""
    found: Counter = Counter()
    for line in run_pass(text, PASSES).splitlines():
        m = _OP.search(line)
        if m is None:
            continue
        kind, rest = m.group(1), m.group(2)
        if kind == "collective_permute":
            body = rest.split("out_sharding=<", 1)[1].split(">", 1)[0]
        else:
            body = rest.split(" out_sharding=", 1)[0]
        axes = tuple(dict.fromkeys(re.findall(r'"([^"]+)"(?::\(\d+\)\d+)?', body)))
        found[kind, axes] += 1
    return found


def _base(axis: str) -> str:
    return axis.split(":")[0].strip('"')


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_collectives_equal_the_references(path: Path) -> None:
    text = path.read_text()
    ours = Counter(
        (c.kind, tuple(dict.fromkeys(_base(a) for a in c.axes)))
        for c in enumerate_collectives(text, str(path), LinkModel())
    )
    assert ours == _reference_collectives(text)


@pytest.mark.parametrize(
    ("shape", "element", "spec", "expected"),
    [
        ((64, 64), "f32", None, 64 * 64 * 4),
        ((64, 64), "bf16", '[{"y"}, {}]', 16 * 64 * 2),
        ((6,), "f32", '[{"y"}]', 2 * 4),  # ceil(6/4) = 2 rows with padding
        ((8, 8), "i8", '[{"x", "y"}, {}]', 8),
    ],
    ids=["replicated", "bf16-y", "padded", "two-axes"],
)
def test_local_bytes(shape, element, spec, expected) -> None:
    mesh = parse_mesh('<["x"=2, "y"=4]>')
    sharding = None if spec is None else parse_sharding(f"#sdy.sharding<@m, {spec}>")
    assert local_bytes(TensorType(shape, element), sharding, mesh) == expected


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.tags: Counter = Counter()
        self.external: list[str] = []

    def handle_starttag(self, tag, attrs) -> None:
        self.tags[tag] += 1
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        for key in ("src", "href"):
            if attrs.get(key):
                self.external.append(attrs[key])


def test_report_json_and_html_on_the_bundled_example() -> None:
    path = Path(__file__).parents[1] / "models" / "data" / "mlp_fwd_tp.mlir"
    report = build_report(path.read_text(), str(path))
    data = json.loads(json.dumps(report.to_json()))
    # One all_reduce over "model" after the row-parallel matmul (the reference inserts it).
    assert [(c["kind"], c["axes"]) for c in data["collectives"]] == [("all_reduce", ["model"])]
    c = data["collectives"][0]
    assert c["bytes_per_device"] == 8 * 64 * 4 // 2  # 8x64 f32 sharded on "data"=2
    assert set(c) >= {"kind", "axes", "bytes_per_device", "op", "loc"}
    assert data["totals"]["model"]["count"] == 1
    assert all(v["explanation"] for v in data["values"])
    # "model" shards the hidden dim, a reduction factor of the second matmul (line 25): the
    # result, three ops further, lacks it for that reason.
    (result,) = [v for v in data["values"] if v["mlir_name"] == "main:result0"]
    assert result["name"] == "result"  # the module's jax.result_info
    (stopped,) = [s for s in result["stopped"] if s["axis"] == '"model"']
    assert (stopped["kind"], stopped["factor"]) == ("reduction", "k")
    assert stopped["op"].startswith("stablehlo.dot_general at ") and ":25:" in stopped["op"]
    assert len(stopped["path"]) == 3 and stopped["path"][-1] == "result"
    page = render_html(report, "mlp")
    tags = _Tags()
    tags.feed(page)
    assert {"view", "detail", "collectives", "totals", "data", "legend"} <= tags.ids
    assert tags.external == []  # self-contained: no network
    # two header rows, one collective, one mesh axis (the values are in the graph)
    assert tags.tags["tr"] == 2 + 1 + 1
    embedded = decode_data(page)
    # Each value once, its explanation as indices into the table of distinct lines.
    assert len(embedded["values"]) == len(data["values"])
    for v, compact in zip(data["values"], embedded["values"], strict=True):
        text = "\n".join(embedded["lines"][i] for i in compact[5])
        assert text.replace(FILE_MARK, embedded["file"]) == v["explanation"]
    # The graph: one node per op of main, its arguments and its result; the all_reduce is a
    # mark on the edge from the second matmul to what uses it.
    graph = embedded["graph"]
    kinds = [n[1] for n in graph["nodes"]]
    assert kinds.count("arg") == 5 and kinds.count("result") == 1
    (marked,) = [e for e in graph["edges"] if e[3]]
    assert marked[3] == [0] and graph["nodes"][marked[1]][2] == "dot_general"
