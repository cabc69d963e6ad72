"""The Python API (`shardwise.load`, `propagate`, `sharding_of`, `write`, JAX bridges) and the
tutorial script, whose printed lines are asserted."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import pytest

import shardwise
from shardwise.io.reference import run_pass

ROOT = Path(__file__).resolve().parents[2]
TEXT = """
sdy.mesh @mesh = <["x"=2, "y"=4]>
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                %arg1: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) -> tensor<8x32xf32> {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}
"""


def test_load_propagate_write_matches_reference(tmp_path):
    module = shardwise.load(TEXT).propagate()
    assert module.text == run_pass(TEXT, "sdy-propagation-pipeline")
    out = tmp_path / "out.mlir"
    assert module.write(out) == out.read_text()


def test_sharding_of_names():
    module = shardwise.load(TEXT).propagate("sdy-basic-propagate")
    assert str(module.sharding_of("main:arg1")) == '#sdy.sharding<@mesh, [{}, {"y"}]>'
    assert str(module.sharding_of("main:result0")) == '#sdy.sharding<@mesh, [{"x", ?}, {"y", ?}]>'
    dot = next(op for op in module.ops() if op.name == "stablehlo.dot_general")
    assert module.sharding_of(dot.results[0]) == module.sharding_of("main:result0")
    with pytest.raises(shardwise.ShardwiseError, match="no function 'nope'"):
        module.sharding_of("nope:arg0")


def test_propagate_options_use_shardy_spelling():
    module = shardwise.load(TEXT).propagate("sdy-basic-propagate", keep_sharding_rules=True)
    assert "sdy.sharding_rule" in module.text
    assert module.text == run_pass(TEXT, "sdy-basic-propagate{keep-sharding-rules=true}")


def test_partition_spec_round_trip():
    from jax.sharding import PartitionSpec as P

    sharding = shardwise.from_partition_spec(P("x", None, ("x", "y")), rank=4)
    assert str(sharding) == '#sdy.sharding<@mesh, [{"x"}, {}, {"x", "y"}, {}]>'
    assert shardwise.to_partition_spec(sharding) == P("x", None, ("x", "y"))
    sub = shardwise.parse_sharding('<@mesh, [{"x":(1)2}]>')
    with pytest.raises(shardwise.ShardwiseError, match="sub-axes"):
        shardwise.to_partition_spec(sub)


def test_from_jax_lowers_without_devices():
    import jax
    import jax.numpy as jnp
    from jax.sharding import PartitionSpec as P

    module = shardwise.from_jax(
        lambda a: jnp.sin(a) * 2,
        jax.ShapeDtypeStruct((8, 4), jnp.float32),
        mesh={"data": 8},
        in_shardings=[P("data")],
    )
    assert str(module.sharding_of("main:arg0")) == '#sdy.sharding<@mesh, [{"data"}, {}]>'
    assert module.meshes()["mesh"].axis_size("data") == 8


def test_tutorial_runs_and_prints_the_documented_results(capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["tutorial.py"])
    shardwise.rules.custom.unregister_rule("my_row_softmax")
    try:
        runpy.run_path(str(ROOT / "docs" / "tutorial" / "tutorial.py"), run_name="__main__")
    finally:
        shardwise.rules.custom.unregister_rule("my_row_softmax")
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        'y: #sdy.sharding<@mesh, [{"data"}, {}]>',
        "norm: None",
        'hidden: stablehlo.dot_general #sdy.sharding<@mesh, [{"data"}, {"model"}]>',
        'hidden: stablehlo.tanh #sdy.sharding<@mesh, [{"data"}, {"model"}]>',
        "%2 (stablehlo.dot_general at model.mlir:11:10 (dot_general in layer (tutorial.py:28)))"
        " : tensor<16x64xf32>",
        '  sharding: #sdy.sharding<@mesh, [{"data"}, {}]>',
        "  model stops: reduction factor k",
        "3 collectives",
        "  all_reduce {model} 2048 B/device ~3e-05 s at model.mlir:11:10 for "
        "stablehlo.dot_general at model.mlir:11:10 (dot_general in layer (tutorial.py:28))",
        "  all_reduce {model} 2048 B/device ~3e-05 s at model.mlir:15:10 for "
        "stablehlo.dot_general at model.mlir:15:10 (dot_general in layer (tutorial.py:28))",
        "  all_reduce {data} 4 B/device ~1e-05 s at model.mlir:19:26 for "
        "stablehlo.reduce at model.mlir:19:26 (reduce_sum in model (tutorial.py:34))",
        "axis model: 2 collectives, 4096 B/device",
        "axis data: 1 collectives, 4 B/device",
        "~7.01e-05 s communication, 4100 B/device sent, peak memory 73728 B/device",
        "html report written: True",
        "without a rule: None",
        'with a rule: #sdy.sharding<@mesh, [{"data", ?}, {"model", ?}]>',
        "rule written back: True",
    ]


def test_readme_python_example_runs(tmp_path, capsys, monkeypatch):
    import re

    code = re.search(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S).group(1)
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {})
    assert capsys.readouterr().out.strip() == '#sdy.sharding<@mesh, [{"data"}, {}]>'
    assert "sdy.sharding" in (tmp_path / "mlp.sharded.mlir").read_text()


@pytest.mark.parametrize(
    ("text", "placements"),
    [
        ('<@mesh, [{"x"}, {}]>', ["Shard(0)", "Replicate()"]),
        ('<@mesh, [{}, {"x", "y"}]>', ["Shard(1)", "Shard(1)"]),
        ('<@mesh, [{"y"}, {}], unreduced={"x"}>', ["Partial()", "Shard(0)"]),
        ("<@mesh, [{}, {}]>", ["Replicate()", "Replicate()"]),
    ],
)
def test_dtensor_placements_round_trip(text, placements):
    mesh = shardwise.Mesh((shardwise.MeshAxis("x", 2), shardwise.MeshAxis("y", 4)))
    sharding = shardwise.parse_sharding(text)
    assert shardwise.to_placements(sharding, mesh) == placements
    assert shardwise.from_placements(placements, mesh, rank=2) == sharding


def test_dtensor_placements_refuse_what_dtensor_cannot_say():
    mesh = shardwise.Mesh((shardwise.MeshAxis("x", 2), shardwise.MeshAxis("y", 4)))
    with pytest.raises(shardwise.ShardwiseError, match="out of mesh order"):
        shardwise.to_placements(shardwise.parse_sharding('<@mesh, [{"y", "x"}]>'), mesh)
    with pytest.raises(shardwise.ShardwiseError, match="unknown placement"):
        shardwise.from_placements(["Shard(0)", "Strided()"], mesh, rank=1)
