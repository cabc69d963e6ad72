"""`shardwise.names`: the user's names and Python lines, read from JAX's debug locations.

The module under test is lowered by JAX itself (``as_text(debug_info=True)``); the expected
lines are found in this file's own source, so they are JAX's and Python's, not ours.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import AbstractMesh, AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

import shardwise
from shardwise.cli import main
from shardwise.explain import explain_text, report_json
from shardwise.explain.run import all_keys
from shardwise.names import (
    Frame,
    SourceInfo,
    find_by_user_name,
    op_source,
    parse_location,
    user_name,
)

MESH = AbstractMesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
S = jax.ShapeDtypeStruct


def attention(p, x):
    scores = x @ p["wq"]  # LINE: scores
    return jnp.tanh(scores) @ p["wo"]  # LINE: tanh


def model(params, x):
    for p in params["layers"]:
        x = attention(p, x)
    return {"out": x, "total": jnp.sum(x)}  # LINE: total


def _line(tag: str) -> int:
    lines = inspect.getsource(inspect.getmodule(_line)).splitlines()
    return next(i + 1 for i, text in enumerate(lines) if text.endswith(f"# LINE: {tag}"))


def _lowered_text() -> str:
    block = {
        "wq": S((16, 32), jnp.float32, sharding=NamedSharding(MESH, P(None, "model"))),
        "wo": S((32, 16), jnp.float32, sharding=NamedSharding(MESH, P("model"))),
    }
    params = {"layers": [block, dict(block)]}
    x = S((8, 16), jnp.float32, sharding=NamedSharding(MESH, P("data")))
    lowered = jax.jit(model).trace(params, x).lower(lowering_platforms=("cpu",))
    return lowered.as_text(debug_info=True)


TEXT = _lowered_text()
FILE = Path(__file__).name


@pytest.mark.parametrize(
    ("loc", "expected"),
    [
        ("loc(unknown)", SourceInfo()),
        ('loc("x")', SourceInfo(name="x")),
        (
            "loc(\"params['layers'][0]['wq']\")",
            SourceInfo(name="params['layers'][0]['wq']"),
        ),
        ('loc("a\\"b\\5Cc")', SourceInfo(name='a"b\\c')),
        ('loc("/p/ex.py":5:17)', SourceInfo(frames=(Frame("?", "/p/ex.py", 5, 17),))),
        (
            'loc("jit(f)/dot_general"("layer"("/p/ex.py":5:17 to :23)))',
            SourceInfo(primitive="dot_general", frames=(Frame("layer", "/p/ex.py", 5, 17),)),
        ),
        (
            'loc("jit(f)/transpose(jvp())/mul"(callsite("layer"("/p/ex.py":5:17 to 6:2) at '
            'callsite("f"("/p/ex.py":9:4) at "<module>"("/p/run.py":1:1)))))',
            SourceInfo(
                primitive="transpose(jvp())/mul",
                frames=(
                    Frame("layer", "/p/ex.py", 5, 17),
                    Frame("f", "/p/ex.py", 9, 4),
                    Frame("<module>", "/p/run.py", 1, 1),
                ),
            ),
        ),
        (
            'loc("attn/sin"("inner"("/p/ex.py":3:8)))',
            SourceInfo(primitive="attn/sin", frames=(Frame("inner", "/p/ex.py", 3, 8),)),
        ),
        (
            'loc(fused["jit(f)/add"("f"("/p/a.py":2:1)), "jit(f)/mul"("f"("/p/a.py":3:1))])',
            SourceInfo(primitive="add", frames=(Frame("f", "/p/a.py", 2, 1),)),
        ),
        (
            'loc(fused<"cse">[unknown, "jit(f)/mul"("f"("/p/a.py":3:1))])',
            SourceInfo(primitive="mul", frames=(Frame("f", "/p/a.py", 3, 1),)),
        ),
        ("loc(#loc7)", SourceInfo()),
    ],
    ids=[
        "unknown",
        "name",
        "pytree-path",
        "escapes",
        "file-line-col",
        "primitive-one-frame",
        "primitive-call-stack",
        "named-scope-in-private-func",
        "fused",
        "fused-with-metadata",
        "unresolved-alias",
    ],
)
def test_parse_location(loc, expected):
    assert parse_location(loc) == expected


@pytest.mark.parametrize(
    ("info", "text"),
    [
        (
            SourceInfo(primitive="dot_general", frames=(Frame("layer", "/p/ex.py", 5),)),
            "dot_general in layer (ex.py:5)",
        ),
        (SourceInfo(primitive="dot_general"), "dot_general"),
        (SourceInfo(frames=(Frame("f", "/p/ex.py", 5),)), "f (ex.py:5)"),
        (SourceInfo(name="x"), ""),
    ],
    ids=["primitive-and-frame", "primitive", "frame", "plain-name"],
)
def test_source_info_text(info, text):
    assert str(info) == text


def test_jax_module_argument_result_and_op_names():
    module = shardwise.load(TEXT)
    keys = all_keys(module.ir)
    assert [user_name(module.ir, k) for k in keys if user_name(module.ir, k)] == [
        "params['layers'][0]['wo']",
        "params['layers'][0]['wq']",
        "params['layers'][1]['wo']",
        "params['layers'][1]['wq']",
        "x",
        "result['out']",
        "result['total']",
    ]
    sources = {str(op_source(op)) for op in module.ops() if op.name.startswith("stablehlo.")}
    assert f"dot_general in attention ({FILE}:{_line('scores')})" in sources
    assert f"tanh in attention ({FILE}:{_line('tanh')})" in sources
    assert f"reduce_sum in model ({FILE}:{_line('total')})" in sources
    assert not any("loc(" in s for s in sources)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("params['layers'][1]['wq']", ["main:arg3"]),
        ('params["layers"][1]["wq"]', ["main:arg3"]),
        ("x", ["main:arg4"]),
        ("result['total']", ["main:result1"]),
        (f"{FILE}:{_line('tanh')}", ["%1", "%2", "%4", "%5"]),
        ("wo", ["main:arg0", "main:arg2"]),
        ("['total']", []),
        ("nope", []),
        ("ex.py:x", []),
    ],
    ids=[
        "pytree-path",
        "double-quotes",
        "plain",
        "result",
        "python-line",
        "last-key",
        "not-a-key",
        "unknown",
        "bad-line",
    ],
)
def test_find_by_user_name(name, expected):
    from shardwise.explain.run import mlir_name

    module = shardwise.load(TEXT).ir
    found = find_by_user_name(module, name, all_keys(module))
    assert [mlir_name(module, k) for k in found] == expected


@pytest.mark.parametrize(
    ("value", "header"),
    [
        ("params['layers'][0]['wq']", "params['layers'][0]['wq'] (main:arg1) : tensor<16x32xf32>"),
        ("x", "x (main:arg4) : tensor<8x16xf32>"),
        ("main:arg4", "x (main:arg4) : tensor<8x16xf32>"),
        ("result['out']", "result['out'] (main:result0) : tensor<8x16xf32>"),
        ("%0", "%0 (stablehlo.dot_general at /"),
    ],
    ids=["pytree-path", "plain", "mlir-arg", "result", "ssa"],
)
def test_explain_accepts_user_and_mlir_names(tmp_path, capsys, value, header):
    path = tmp_path / "t.mlir"
    path.write_text(TEXT)
    assert main(["explain", str(path), "--value", value, "--plain"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(header)
    assert "loc(" not in out


def test_explanations_and_report_name_values_by_user_names():
    text = explain_text(TEXT, "result['out']")
    assert f"dot_general in attention ({FILE}:{_line('scores')})" in text
    assert "user annotation/constraint on x" in text
    assert "loc(" not in text
    data = report_json(TEXT)
    names = [v["name"] for v in data["values"]]
    assert "params['layers'][1]['wo']" in names and "result['total']" in names
    assert "loc(" not in json.dumps(data)


def test_unknown_name_says_which_names_work(tmp_path, capsys):
    path = tmp_path / "t.mlir"
    path.write_text(TEXT)
    assert main(["explain", str(path), "--value", "params['w9']"]) == 1
    err = capsys.readouterr().err
    assert "no such value" in err and "params['w1']" in err and "model.py:12" in err
