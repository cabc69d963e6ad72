"""`ShardedModule.explain` / `.report`: one result as terminal text, notebook HTML and JSON."""

from __future__ import annotations

import json
from html.parser import HTMLParser

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import AbstractMesh, AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

import shardwise
from shardwise.explain import explain_text, report_json
from shardwise.ir import Module

MESH = AbstractMesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
S = jax.ShapeDtypeStruct


def mlp(params, x):
    h = jnp.tanh(x @ params["w1"])
    return h @ params["w2"]


def _module() -> shardwise.ShardedModule:
    params = {"w1": S((16, 64), jnp.float32), "w2": S((64, 16), jnp.float32)}
    shardings = {"w1": NamedSharding(MESH, P(None, "model")), "w2": NamedSharding(MESH, P("model"))}
    return shardwise.from_jax(
        mlp,
        params,
        S((8, 16), jnp.float32),
        in_shardings=(shardings, NamedSharding(MESH, P("data"))),
    )


class _Html(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)

    def handle_data(self, data):
        self.text.append(data)


def _parse(page: str) -> _Html:
    parser = _Html()
    parser.feed(page)
    return parser


def test_explain_by_user_name_three_ways():
    module = _module()
    view = module.explain("params['w1']")
    assert str(view) == explain_text(module.source, "params['w1']", "mlp.mlir")
    (facts,) = view.to_json()
    assert (facts["name"], facts["mlir_name"]) == ("params['w1']", "main:arg0")
    assert facts["sharding"] == '#sdy.sharding<@mesh, [{}, {"model"}]>'
    assert facts["axes"] == {'"model"': ["user annotation/constraint on params['w1']"]}
    assert json.loads(json.dumps(facts)) == facts
    page = _parse(view._repr_html_())
    text = "".join(page.text)
    assert "params['w1']" in text and '#sdy.sharding<@mesh, [{}, {"model"}]>' in text
    assert {"div", "table", "code", "li"} <= set(page.tags)


def test_explain_is_the_same_before_and_after_propagate():
    module = _module()
    before = str(module.explain("result"))
    module.propagate()
    assert str(module.explain("result")) == before
    assert "result (main:result0) : tensor<8x16xf32>" in before
    assert 'axis "data":' in before


def test_explain_a_python_line_gives_every_value_made_there():
    module = _module()
    line = mlp.__code__.co_firstlineno + 1  # h = jnp.tanh(x @ params["w1"])
    view = module.explain(f"test_views.py:{line}")
    assert [v["op"].split(" ")[0] for v in view.to_json()] == [
        "stablehlo.dot_general",
        "stablehlo.tanh",
    ]


def test_report_three_ways():
    module = _module()
    view = module.propagate().report()
    assert view.to_json() == report_json(module.source, module.ir.op.location.file)
    assert str(view).splitlines()[0] == "1 collectives"
    assert "all_reduce {model}" in str(view)
    page = _parse(view._repr_html_())
    assert page.tags.count("tr") == 1 + 1 + 1 + 1  # header, one collective, header, one axis
    assert "all_reduce" in "".join(page.text)
    assert "<svg" in view.html()


def test_propagated_module_without_its_text_cannot_be_explained():
    module = shardwise.ShardedModule(_module().ir).propagate()
    assert isinstance(module.ir, Module)
    with pytest.raises(shardwise.ShardwiseError, match="does not have its text from before"):
        module.explain("x")
