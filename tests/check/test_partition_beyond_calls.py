"""`shardwise partition` beyond Shardy: calls whose types change, loops carrying sharded values.

jaxlib 0.10.2's global-to-local rejects both (the verifier: call result types, while block
arguments); `shardwise partition` converts them (`ConversionOptions.beyond_reference`,
`export/convert_global_to_local/calls.py`, `control_flow.py`). No reference output exists
there, so the truth is XLA: each program is partitioned by our chain, run on 8 simulated
devices and compared with the unsharded program run on one (`shardwise check`). The pass by
its Shardy name stays the reference's and still rejects them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import shardwise
from shardwise import cli
from shardwise.check import check
from shardwise.check.cli import EXIT_EQUAL
from shardwise.errors import ShardwiseError
from shardwise.export.convert_global_to_local.driver import convert
from shardwise.export.convert_global_to_local.state import ConversionOptions
from shardwise.io.mlir import load_text
from shardwise.passes import run_pass

_DATA = Path(__file__).parent.parent / "models" / "data"

# Corpus models stopped at a call or a while before, partitioned and EQUAL now.
MODELS_EQUAL = ["convnet", "explicit_reshard", "nested_calls", "while_loop"]

_MESH = 'sdy.mesh @mesh = <["x"=2, "y"=4]>\n'

# @scale called on a row-sharded and a column-sharded value: the propagation pipeline's
# flatten/unflatten keeps one func per sharding (@scale, @scale_0), each converted.
CALLED_TWICE = (
    _MESH
    + """func.func @main(%a: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                %b: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>})
    -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %0 = call @scale(%a) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %1 = call @scale(%b) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0, %1 : tensor<8x16xf32>, tensor<8x16xf32>
}
func.func private @scale(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = stablehlo.multiply %arg0, %arg0 : tensor<8x16xf32>
  %1 = stablehlo.tanh %0 : tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}
"""
)

_COUNTED_LOOP = """  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.while(%i = %c0, %acc = %a) : tensor<i32>, tensor<8x16xf32>
  cond {
    %c3 = stablehlo.constant dense<3> : tensor<i32>
    %p = stablehlo.compare LT, %i, %c3, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
BODY
    %c1 = stablehlo.constant dense<1> : tensor<i32>
    %n = stablehlo.add %i, %c1 : tensor<i32>
    stablehlo.return %n, %t : tensor<i32>, tensor<8x16xf32>
  }
  return %0#1 : tensor<8x16xf32>
}
"""

_TILED = '#sdy.sharding<@mesh, [{"x"}, {"y"}]>'

# A replicated counter and a tiled accumulator; the body's matmul contracts a sharded dim
# (an all-reduce inside the loop) against a loop-invariant weight.
LOOP = (
    _MESH
    + f"""func.func @main(%a: tensor<8x16xf32> {{sdy.sharding = {_TILED}}},
                %w: tensor<16x16xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"y"}}, {{}}]>}})
    -> (tensor<8x16xf32> {{sdy.sharding = {_TILED}}}) {{
"""
    + _COUNTED_LOOP.replace(
        "BODY",
        """    %d = stablehlo.dot_general %acc, %w, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
    %t = stablehlo.tanh %d : tensor<8x16xf32>""",
    )
)

# A call inside the loop body; the callee reduces over a sharded dim (an all-reduce inside).
CALL_IN_LOOP = (
    _MESH
    + f"""func.func @main(%a: tensor<8x16xf32> {{sdy.sharding = {_TILED}}})
    -> (tensor<8x16xf32> {{sdy.sharding = {_TILED}}}) {{
"""
    + _COUNTED_LOOP.replace(
        "BODY", "    %t = func.call @step(%acc) : (tensor<8x16xf32>) -> tensor<8x16xf32>"
    )
    + """func.func private @step(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %half = stablehlo.constant dense<0.5> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.broadcast_in_dim %half, dims = [] : (tensor<f32>) -> tensor<8x16xf32>
  %1 = stablehlo.multiply %arg0, %0 : tensor<8x16xf32>
  %2 = stablehlo.reduce(%1 init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<8x16xf32>, tensor<f32>) -> tensor<8xf32>
  %3 = stablehlo.broadcast_in_dim %2, dims = [0] : (tensor<8xf32>) -> tensor<8x16xf32>
  %4 = stablehlo.subtract %1, %3 : tensor<8x16xf32>
  return %4 : tensor<8x16xf32>
}
"""
)

# A case whose branches compute a sharded result differently (the reference converts a
# case already; the extended mode checks that each branch returns it laid out alike).
CASE = (
    _MESH
    + f"""func.func @main(%k: tensor<i32>, %a: tensor<8x16xf32> {{sdy.sharding = {_TILED}}},
                %w: tensor<16x8xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"y"}}, {{}}]>}})
    -> (tensor<8x8xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"x"}}, {{}}]>}}) {{
  %c = stablehlo.constant dense<2> : tensor<i32>
  %i = stablehlo.remainder %k, %c : tensor<i32>
  %0 = "stablehlo.case"(%i) ({{
    %d = stablehlo.dot_general %a, %w, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
    stablehlo.return %d : tensor<8x8xf32>
  }}, {{
    %t = stablehlo.tanh %a : tensor<8x16xf32>
    %d = stablehlo.dot_general %t, %w, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
    %n = stablehlo.negate %d : tensor<8x8xf32>
    stablehlo.return %n : tensor<8x8xf32>
  }}) : (tensor<i32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}}
"""
)

# Nested loops; the outer cond sums the sharded carried value (an all-reduce inside cond),
# the result leaves the loop resharded (an all-gather after it).
NESTED_LOOPS = (
    _MESH
    + """func.func @main(%a: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.while(%i = %c0, %acc = %a) : tensor<i32>, tensor<8x16xf32>
  cond {
    %z = stablehlo.constant dense<0.0> : tensor<f32>
    %s = stablehlo.reduce(%acc init: %z) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x16xf32>, tensor<f32>) -> tensor<f32>
    %lim = stablehlo.constant dense<1.0e+06> : tensor<f32>
    %p1 = stablehlo.compare LT, %s, %lim, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %c3 = stablehlo.constant dense<3> : tensor<i32>
    %p2 = stablehlo.compare LT, %i, %c3, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %p = stablehlo.and %p1, %p2 : tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %j0 = stablehlo.constant dense<0> : tensor<i32>
    %1:2 = stablehlo.while(%j = %j0, %b = %acc) : tensor<i32>, tensor<8x16xf32>
    cond {
      %c2 = stablehlo.constant dense<2> : tensor<i32>
      %q = stablehlo.compare LT, %j, %c2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %q : tensor<i1>
    } do {
      %e = stablehlo.exponential %b : tensor<8x16xf32>
      %half = stablehlo.constant dense<0.5> : tensor<8x16xf32>
      %m = stablehlo.multiply %e, %half : tensor<8x16xf32>
      %k1 = stablehlo.constant dense<1> : tensor<i32>
      %jn = stablehlo.add %j, %k1 : tensor<i32>
      stablehlo.return %jn, %m : tensor<i32>, tensor<8x16xf32>
    }
    %c1 = stablehlo.constant dense<1> : tensor<i32>
    %n = stablehlo.add %i, %c1 : tensor<i32>
    stablehlo.return %n, %1#1 : tensor<i32>, tensor<8x16xf32>
  }
  return %0#1 : tensor<8x16xf32>
}
"""
)

# `stablehlo.if` is no data-flow op in Shardy: its branches return values sharded unlike
# its result, and `shardwise partition` reshards them before each return.
IF_RESHARDED = (
    _MESH
    + """func.func @main(%k: tensor<i1>, %a: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
  %0 = "stablehlo.if"(%k) ({
    %t = stablehlo.tanh %a : tensor<8x16xf32>
    stablehlo.return %t : tensor<8x16xf32>
  }, {
    %n = stablehlo.negate %a : tensor<8x16xf32>
    stablehlo.return %n : tensor<8x16xf32>
  }) : (tensor<i1>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
"""
)

HAND = {
    "called_twice": CALLED_TWICE,
    "loop": LOOP,
    "call_in_loop": CALL_IN_LOOP,
    "case": CASE,
    "nested_loops": NESTED_LOOPS,
    "if_resharded": IF_RESHARDED,
}


@pytest.mark.parametrize("name", MODELS_EQUAL)
def test_corpus_model_partitions_and_checks_equal(executor, name, capsys) -> None:
    status = cli.main(["check", str(_DATA / f"{name}.mlir")])
    out = capsys.readouterr()
    assert status == EXIT_EQUAL, out.out + out.err
    assert "(partitioned by shardwise)" in out.out and ": EQUAL" in out.out


@pytest.mark.parametrize("name", list(HAND))
def test_hand_program_checks_equal(executor, name) -> None:
    module = shardwise.load(HAND[name])
    result = module.check(executor=executor)
    assert result.equal, str(result)


def test_a_func_called_with_two_shardings_is_two_local_funcs() -> None:
    local = shardwise.load(CALLED_TWICE).partition().text
    assert "call @scale(%arg0) : (tensor<4x16xf32>) -> tensor<4x16xf32>" in local
    assert "call @scale_0(%arg1) : (tensor<8x4xf32>) -> tensor<8x4xf32>" in local


def test_if_branches_gather_to_the_result_sharding() -> None:
    local = shardwise.load(IF_RESHARDED).partition().text
    assert local.count("stablehlo.all_gather") == 2  # one in each branch
    assert "stablehlo.return %2 : tensor<4x16xf32>" in local


def test_loop_carries_local_types_and_keeps_its_counter() -> None:
    local = shardwise.load(LOOP).partition().text
    assert "stablehlo.while(%iterArg = %c, %iterArg_0 = %arg0) : tensor<i32>, tensor<4x4xf32>" in (
        local
    )
    assert "stablehlo.all_reduce" in local


def test_fft_checks_equal_with_its_all_gathers_run_as_sums(executor, capsys) -> None:
    # XLA's CPU layout assignment makes the IFFT's result dim-1-major for the all_gather on
    # dim 1 after it, and the CPU fft thunk RET_CHECKs that layout (a jax.shard_map of ifft ->
    # all_gather(axis=1, tiled) fails the same way). The checker runs such all_gathers as the
    # all_reduce of zero-padded pieces (`check/fft_layout.py`) and says so.
    status = cli.main(["check", str(_DATA / "fft.mlir")])
    out = capsys.readouterr()
    assert status == EXIT_EQUAL, out.out + out.err
    assert "note: all_gathers along a non-major dim ran as the all_reduce" in out.out


def test_fft_all_gather_with_a_permuted_group_is_still_caught(executor) -> None:
    # The rewrite keeps the program's groups: a wrong group is as wrong in the sum.
    global_text = (_DATA / "fft.mlir").read_text()
    local = shardwise.load(str(_DATA / "fft.mlir")).partition().text
    groups = "replica_groups = dense<[[0, 1, 2, 3], [4, 5, 6, 7]]> : tensor<2x4xi64>, use_global"
    assert groups in local
    first = local.index('"stablehlo.all_gather"')
    at = local.index(groups, first)
    wrong = local[:at] + groups.replace("[0, 1, 2, 3]", "[1, 0, 2, 3]") + local[at + len(groups) :]
    result = check(global_text, wrong, executor=executor)
    assert not result.equal and result.notes


def test_linalg_lapack_custom_calls_run_and_check_equal(executor, capsys) -> None:
    # jaxlib's lapack_*_ffi targets have no kernels until jax lowers a linalg op; the worker
    # loads them (scipy's LAPACK) for a program that calls them, where it crashed before.
    status = cli.main(["check", str(_DATA / "linalg.mlir")])
    out = capsys.readouterr()
    assert status == EXIT_EQUAL, out.out + out.err


# -- the pass by its Shardy name stays the reference's ---------------------------------------

_BEFORE_CONVERSION = (
    "sdy-propagation-pipeline,sdy-insert-explicit-reshards{enable-full-version=true},"
    "sdy-reshard-to-collectives"
)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("nested_calls", "'func.call' op result type mismatch at index 0"),
        ("while_loop", "'stablehlo.while': operand 0 becomes tensor<16x64xf32>"),
    ],
)
def test_the_reference_pass_still_rejects(name, message) -> None:
    path = _DATA / f"{name}.mlir"
    module = load_text(path.read_text(), path.name)
    run_pass(module, _BEFORE_CONVERSION)
    with pytest.raises(ShardwiseError, match=message):
        run_pass(module, "sdy-convert-global-to-local")


# -- boundaries laid out differently stay errors ----------------------------------------------

# After reshard-to-collectives, by hand: the carried value arrives sharded on "y", the loop
# says "x" (on a 2x2 mesh both give 4x8 pieces, different ones).
_MESH_2X2 = 'sdy.mesh @mesh = <["x"=2, "y"=2]>\n'
_ON_Y = '#sdy.sharding<@mesh, [{"y"}, {}]>'
_ON_X = '#sdy.sharding<@mesh, [{"x"}, {}]>'
WHILE_MIXED = (
    _MESH_2X2
    + f"""func.func @main(%arg0: tensor<8x8xf32> {{sdy.sharding = {_ON_Y}}})
    -> (tensor<8x8xf32> {{sdy.sharding = {_ON_X}}}) {{
  %0 = stablehlo.while(%iterArg = %arg0) : tensor<8x8xf32> attributes {{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{{"x"}}, {{}}]>]>}}
  cond {{
    %c = stablehlo.constant dense<false> : tensor<i1>
    stablehlo.return %c : tensor<i1>
  }} do {{
    stablehlo.return %iterArg : tensor<8x8xf32>
  }}
  return %0 : tensor<8x8xf32>
}}
"""
)
CALL_MIXED = (
    _MESH_2X2
    + f"""func.func @main(%arg0: tensor<8x8xf32> {{sdy.sharding = {_ON_Y}}})
    -> (tensor<8x8xf32> {{sdy.sharding = {_ON_X}}}) {{
  %0 = call @f(%arg0) {{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{{"x"}}, {{}}]>]>}} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}}
func.func private @f(%arg0: tensor<8x8xf32> {{sdy.sharding = {_ON_X}}})
    -> (tensor<8x8xf32> {{sdy.sharding = {_ON_X}}}) {{
  %0 = stablehlo.negate %arg0 {{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{{"x"}}, {{}}]>]>}} : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}}
"""
)


@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        (
            WHILE_MIXED,
            "'stablehlo.while': operand 0 carried as result 0: #sdy.sharding<@mesh, \\[{\"y\"}",
            4,
        ),
        (
            CALL_MIXED,
            "'func.call': operand 0 passed to argument 0 of @f: #sdy.sharding<@mesh, \\[{\"y\"}",
            4,
        ),
    ],
    ids=["while", "call"],
)
def test_a_boundary_laid_out_differently_is_an_error(text, message, line) -> None:
    module = load_text(text, "mixed.mlir")
    with pytest.raises(ShardwiseError, match=message) as raised:
        convert(module, ConversionOptions(beyond_reference=True))
    assert raised.value.location.line == line


# -- `same_layout`: the rows of its docstring ------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        (None, "<@mesh, [{}, {}]>", True),
        ('<@mesh, [{"x"}, {}]>', '<@mesh, [{"x", ?}, {}]>', True),
        ('<@mesh, [{"x"}, {}]>', '<@mesh, [{"y"}, {}]>', False),
        ("<@mesh, [{}]>", '<@mesh, [{}], unreduced={"x"}>', False),
        (None, '<@mesh, [{"x"}, {}]>', False),
    ],
    ids=["none-replicated", "open-closed", "other-axis", "unreduced", "none-sharded"],
)
def test_same_layout(a, b, same) -> None:
    from shardwise.api import parse_sharding
    from shardwise.export.convert_global_to_local.layout import same_layout
    from shardwise.export.convert_global_to_local.state import ConversionState

    module = load_text(WHILE_MIXED, "m.mlir")
    state = ConversionState(module, ConversionOptions(), module.meshes(), 1)
    left = parse_sharding(a) if a else None
    right = parse_sharding(b) if b else None
    assert same_layout(state, left, right) == same
    assert same_layout(state, right, left) == same
