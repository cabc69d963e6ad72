"""`sdy-explicit-gather-scatter-batching` against the reference: exact text comparison.

Hand-written cases per index pattern (iota through reshape/broadcast/clamp/select, concatenate
with one input per component or not, slices, no match) and a hypothesis strategy building
random valid gathers and scatters whose index components are iotas or arguments.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shardwise.errors import ShardwiseError
from shardwise.io.mlir import load_text, write_text
from shardwise.io.reference import run_pass
from shardwise.passes import run_pass as run_ours

PASS = "sdy-explicit-gather-scatter-batching"

MESH = 'sdy.mesh @mesh = <["x"=2, "y"=2]>\n'

_GATHER_2 = (
    '"stablehlo.gather"(%arg0, %idx) <{dimension_numbers = #stablehlo.gather<'
    "collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 1>, "
    "slice_sizes = array<i64: 1, 1>}>"
)


def _gather_case(indices: str, extra_args: str = "", gather: str = _GATHER_2) -> str:
    return (
        MESH
        + f"func.func @main(%arg0: tensor<4x8xf32>, %arg1: tensor<4x1xi32>{extra_args}) -> tensor<4xf32> {{\n"
        + indices
        + f"  %r = {gather} : (tensor<4x8xf32>, tensor<4x2xi32>) -> tensor<4xf32>\n"
        + "  return %r : tensor<4xf32>\n}\n"
    )


_IOTA_CONCAT = """  %iota = stablehlo.iota dim = 0 : tensor<4x1xi32>
  %idx = stablehlo.concatenate %iota, %arg1, dim = 1 : (tensor<4x1xi32>, tensor<4x1xi32>) -> tensor<4x2xi32>
"""

_SCATTER = """func.func @main(%arg0: tensor<4x8xf32>, %arg1: tensor<4x1xi32>, %upd: tensor<4xf32>) -> tensor<4x8xf32> {
  %iota = stablehlo.iota dim = 0 : tensor<4x1xi32>
  %idx = stablehlo.concatenate %arg1, %iota, dim = 1 : (tensor<4x1xi32>, tensor<4x1xi32>) -> tensor<4x2xi32>
  %r = "stablehlo.scatter"(%arg0, %idx, %upd) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [1, 0], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<4x8xf32>, tensor<4x2xi32>, tensor<4xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
"""

_VARIADIC_SCATTER = """func.func @main(%arg0: tensor<4x8xf32>, %arg1: tensor<4x8xi32>, %i: tensor<4x1xi32>, %u0: tensor<4xf32>, %u1: tensor<4xi32>) -> (tensor<4x8xf32>, tensor<4x8xi32>) {
  %iota = stablehlo.iota dim = 0 : tensor<4xi32>
  %b = stablehlo.broadcast_in_dim %iota, dims = [0] : (tensor<4xi32>) -> tensor<4x1xi32>
  %idx = stablehlo.concatenate %b, %i, dim = 1 : (tensor<4x1xi32>, tensor<4x1xi32>) -> tensor<4x2xi32>
  %r:2 = "stablehlo.scatter"(%arg0, %arg1, %idx, %u0, %u1) <{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 1>, unique_indices = true}> ({
  ^bb0(%a: tensor<f32>, %c: tensor<i32>, %d: tensor<f32>, %e: tensor<i32>):
    stablehlo.return %d, %e : tensor<f32>, tensor<i32>
  }) : (tensor<4x8xf32>, tensor<4x8xi32>, tensor<4x2xi32>, tensor<4xf32>, tensor<4xi32>) -> (tensor<4x8xf32>, tensor<4x8xi32>)
  return %r#0, %r#1 : tensor<4x8xf32>, tensor<4x8xi32>
}
"""

_THREE_COMPONENTS = """func.func @main(%arg0: tensor<4x8x6xf32>, %arg1: tensor<4x1xi32>, %arg2: tensor<4x1xi32>) -> tensor<4xf32> {
  %iota = stablehlo.iota dim = 0 : tensor<4x1xi32>
  %idx = stablehlo.concatenate %arg1, %iota, %arg2, dim = 1 : (tensor<4x1xi32>, tensor<4x1xi32>, tensor<4x1xi32>) -> tensor<4x3xi32>
  %r = "stablehlo.gather"(%arg0, %idx) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0, 1, 2], start_index_map = [1, 0, 2], index_vector_dim = 1>, slice_sizes = array<i64: 1, 1, 1>}> : (tensor<4x8x6xf32>, tensor<4x3xi32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
"""

_SLICED = """func.func @main(%arg0: tensor<4x8x6xf32>, %arg1: tensor<4x2xi32>) -> tensor<4xf32> {
  %iota = stablehlo.iota dim = 0 : tensor<4x1xi32>
  %idx = stablehlo.concatenate %iota, %arg1, dim = 1 : (tensor<4x1xi32>, tensor<4x2xi32>) -> tensor<4x3xi32>
  %r = "stablehlo.gather"(%arg0, %idx) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0, 1, 2], start_index_map = [0, 1, 2], index_vector_dim = 1>, slice_sizes = array<i64: 1, 1, 1>}> : (tensor<4x8x6xf32>, tensor<4x3xi32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
"""

_SLICED_MIDDLE = """func.func @main(%arg0: tensor<4x8x6xf32>, %arg1: tensor<4x2xi32>) -> tensor<4xf32> {
  %iota = stablehlo.iota dim = 0 : tensor<4x1xi32>
  %idx = stablehlo.concatenate %arg1, %iota, dim = 1 : (tensor<4x2xi32>, tensor<4x1xi32>) -> tensor<4x3xi32>
  %r = "stablehlo.gather"(%arg0, %idx) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0, 1, 2], start_index_map = [1, 0, 2], index_vector_dim = 1>, slice_sizes = array<i64: 1, 1, 1>}> : (tensor<4x8x6xf32>, tensor<4x3xi32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
"""

_OFFSET_DIMS = """func.func @main(%arg0: tensor<4x8x6xf32>, %arg1: tensor<4x5x1xi32>) -> tensor<4x5x6xf32> {
  %iota = stablehlo.iota dim = 0 : tensor<4x5x1xi32>
  %idx = stablehlo.concatenate %iota, %arg1, dim = 2 : (tensor<4x5x1xi32>, tensor<4x5x1xi32>) -> tensor<4x5x2xi32>
  %r = "stablehlo.gather"(%arg0, %idx) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 2>, slice_sizes = array<i64: 1, 1, 6>}> {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}, {"y"}]>]>} : (tensor<4x8x6xf32>, tensor<4x5x2xi32>) -> tensor<4x5x6xf32>
  return %r : tensor<4x5x6xf32>
}
"""

_SHARED_AND_DEAD = """func.func @main(%arg0: tensor<4x8xf32>, %arg1: tensor<4x1xi32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %iota = stablehlo.iota dim = 0 : tensor<4x1xi32>
  %dead = stablehlo.add %iota, %iota : tensor<4x1xi32>
  %idx = stablehlo.concatenate %iota, %arg1, dim = 1 : (tensor<4x1xi32>, tensor<4x1xi32>) -> tensor<4x2xi32>
  %c1 = stablehlo.constant dense<0> : tensor<i32>
  %r0 = "stablehlo.gather"(%arg0, %idx) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 1>, slice_sizes = array<i64: 1, 1>}> : (tensor<4x8xf32>, tensor<4x2xi32>) -> tensor<4xf32>
  %r1 = "stablehlo.gather"(%arg0, %idx) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 1>, slice_sizes = array<i64: 1, 1>}> : (tensor<4x8xf32>, tensor<4x2xi32>) -> tensor<4xf32>
  return %r0, %r1 : tensor<4xf32>, tensor<4xf32>
}
"""

_NESTED = """func.func @main(%arg0: tensor<4x8xf32>, %arg1: tensor<4x1xi32>, %p: tensor<i1>) -> tensor<4xf32> {
  %r = "stablehlo.if"(%p) ({
    %iota = stablehlo.iota dim = 0 : tensor<4x1xi32>
    %idx = stablehlo.concatenate %iota, %arg1, dim = 1 : (tensor<4x1xi32>, tensor<4x1xi32>) -> tensor<4x2xi32>
    %g = "stablehlo.gather"(%arg0, %idx) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 1>, slice_sizes = array<i64: 1, 1>}> : (tensor<4x8xf32>, tensor<4x2xi32>) -> tensor<4xf32>
    stablehlo.return %g : tensor<4xf32>
  }, {
    %c = stablehlo.constant dense<1.0> : tensor<4xf32>
    stablehlo.return %c : tensor<4xf32>
  }) : (tensor<i1>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
"""

CASES = {
    "gather/iota-concat": _gather_case(_IOTA_CONCAT),
    "gather/iota-reshape": _gather_case(
        """  %iota = stablehlo.iota dim = 0 : tensor<4xi32>
  %rs = stablehlo.reshape %iota : (tensor<4xi32>) -> tensor<4x1xi32>
  %idx = stablehlo.concatenate %rs, %arg1, dim = 1 : (tensor<4x1xi32>, tensor<4x1xi32>) -> tensor<4x2xi32>
"""
    ),
    "gather/iota-clamp": _gather_case(
        """  %lo = stablehlo.constant dense<0> : tensor<4x1xi32>
  %hi = stablehlo.constant dense<3> : tensor<4x1xi32>
  %iota = stablehlo.iota dim = 0 : tensor<4x1xi32>
  %cl = stablehlo.clamp %lo, %iota, %hi : tensor<4x1xi32>
  %idx = stablehlo.concatenate %cl, %arg1, dim = 1 : (tensor<4x1xi32>, tensor<4x1xi32>) -> tensor<4x2xi32>
"""
    ),
    "gather/iota-select-false": _gather_case(
        """  %iota = stablehlo.iota dim = 0 : tensor<4x1xi32>
  %sel = stablehlo.select %p, %arg1, %iota : tensor<4x1xi1>, tensor<4x1xi32>
  %idx = stablehlo.concatenate %sel, %arg1, dim = 1 : (tensor<4x1xi32>, tensor<4x1xi32>) -> tensor<4x2xi32>
""",
        ", %p: tensor<4x1xi1>",
    ),
    "gather/iota-select-true": _gather_case(
        """  %iota = stablehlo.iota dim = 0 : tensor<4x1xi32>
  %sel = stablehlo.select %p, %iota, %arg1 : tensor<4x1xi1>, tensor<4x1xi32>
  %idx = stablehlo.concatenate %sel, %arg1, dim = 1 : (tensor<4x1xi32>, tensor<4x1xi32>) -> tensor<4x2xi32>
""",
        ", %p: tensor<4x1xi1>",
    ),
    "gather/select-not-iota": _gather_case(
        """  %iota = stablehlo.iota dim = 0 : tensor<4x1xi32>
  %sel = stablehlo.select %p, %arg1, %arg1 : tensor<4x1xi1>, tensor<4x1xi32>
  %idx = stablehlo.concatenate %sel, %iota, dim = 1 : (tensor<4x1xi32>, tensor<4x1xi32>) -> tensor<4x2xi32>
""",
        ", %p: tensor<4x1xi1>",
    ),
    "gather/iota-dim-1": _gather_case(
        """  %iota = stablehlo.iota dim = 1 : tensor<4x1xi32>
  %idx = stablehlo.concatenate %iota, %arg1, dim = 1 : (tensor<4x1xi32>, tensor<4x1xi32>) -> tensor<4x2xi32>
"""
    ),
    "gather/not-collapsed": _gather_case(
        _IOTA_CONCAT,
        gather=_GATHER_2.replace(
            "collapsed_slice_dims = [0, 1]", "offset_dims = [1], collapsed_slice_dims = [1]"
        ),
    )
    .replace(
        ") -> tensor<4xf32>\n  return %r : tensor<4xf32>",
        ") -> tensor<4x1xf32>\n  return %r : tensor<4x1xf32>",
    )
    .replace("-> tensor<4xf32> {", "-> tensor<4x1xf32> {"),
    "gather/already-batched": """func.func @main(%arg0: tensor<4x8xf32>, %arg1: tensor<4x1xi32>) -> tensor<4xf32> {
  %r = "stablehlo.gather"(%arg0, %arg1) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [0], start_index_map = [1], index_vector_dim = 1>, slice_sizes = array<i64: 1, 1>}> : (tensor<4x8xf32>, tensor<4x1xi32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
""",
    "gather/implicit-index-vector-dim": """func.func @main(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %iota = stablehlo.iota dim = 0 : tensor<4xi32>
  %r = "stablehlo.gather"(%arg0, %iota) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 8>}> : (tensor<4x8xf32>, tensor<4xi32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
""",
    "gather/three-components": _THREE_COMPONENTS,
    "gather/sliced-front": _SLICED,
    "gather/sliced-middle": _SLICED_MIDDLE,
    "gather/offset-dims-sharded": MESH + _OFFSET_DIMS,
    "gather/shared-indices-dead-code-constants": _SHARED_AND_DEAD,
    "gather/nested-region": _NESTED,
    "scatter/iota-second": MESH + _SCATTER,
    "scatter/variadic-broadcast": _VARIADIC_SCATTER,
    "no-gather/constants-and-dead-code": """func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.abs %arg0 : tensor<4xf32>
  %c = stablehlo.constant dense<1.0> : tensor<4xf32>
  %1 = stablehlo.add %arg0, %c : tensor<4xf32>
  %c2 = stablehlo.constant dense<1.0> : tensor<4xf32>
  %2 = stablehlo.add %1, %c2 : tensor<4xf32>
  return %2 : tensor<4xf32>
}
func.func @other(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %c = stablehlo.constant dense<1.0> : tensor<4xf32>
  %1 = stablehlo.add %arg0, %c : tensor<4xf32>
  return %1 : tensor<4xf32>
}
""",
}


def _ours(text: str) -> str:
    module = load_text(text)
    run_ours(module, PASS)
    return write_text(module)


@pytest.mark.parametrize("name", list(CASES))
def test_explicit_gather_scatter_batching_matches_reference(name: str) -> None:
    text = CASES[name]
    expected = run_pass(text, PASS)
    assert _ours(text) == expected


def test_cases_cover_rewrites_and_non_rewrites() -> None:
    """The table is meant to have both: rewritten ops and ops left alone."""
    rewritten = [n for n in CASES if "batching_dims = [0]" in run_pass(CASES[n], PASS)]
    assert 8 <= len(rewritten) < len(CASES)


def test_after_propagation() -> None:
    """The pass's input in a pipeline: shardings on every op."""
    text = run_pass(
        MESH + _OFFSET_DIMS.replace("{sdy.sharding", "{other.x = 1 : i32, sdy.sharding"),
        "sdy-propagation-pipeline",
    )
    assert _ours(text) == run_pass(text, PASS)


# -- hypothesis ---------------------------------------------------------------------------


@st.composite
def _component(draw, batch: int, name: str, arg: str) -> tuple[list[str], str]:
    """One ``tensor<Bx1xi32>`` index component: an iota (maybe wrapped) or an argument."""
    kind = draw(st.sampled_from(["arg", "iota", "iota1", "reshape", "broadcast", "clamp"]))
    t = f"tensor<{batch}x1xi32>"
    if kind == "arg":
        return [], arg
    if kind in ("iota", "iota1"):
        dim = 0 if kind == "iota" else 1
        return [f"  %{name} = stablehlo.iota dim = {dim} : {t}"], f"%{name}"
    if kind == "clamp":
        return [
            f"  %{name}_i = stablehlo.iota dim = 0 : {t}",
            f"  %{name} = stablehlo.clamp %{name}_i, %{name}_i, %{name}_i : {t}",
        ], f"%{name}"
    flat = f"tensor<{batch}xi32>"
    lines = [f"  %{name}_i = stablehlo.iota dim = 0 : {flat}"]
    if kind == "reshape":
        lines.append(f"  %{name} = stablehlo.reshape %{name}_i : ({flat}) -> {t}")
    else:
        lines.append(
            f"  %{name} = stablehlo.broadcast_in_dim %{name}_i, dims = [0] : ({flat}) -> {t}"
        )
    return lines, f"%{name}"


@st.composite
def _gather_or_scatter(draw) -> str:
    batch = draw(st.sampled_from([2, 4]))
    rank = draw(st.integers(2, 3))
    sizes = [batch] + [draw(st.sampled_from([4, 6])) for _ in range(rank - 1)]
    k = draw(st.integers(1, rank))
    index_map = draw(st.permutations(range(rank)))[:k]
    lines: list[str] = []
    parts = []
    for i in range(k):
        more, value = draw(_component(batch, f"c{i}", f"%i{i}"))
        lines += more
        parts.append(value)
    idx_t = f"tensor<{batch}x{k}xi32>"
    comp_t = f"tensor<{batch}x1xi32>"
    if k == 1:
        idx = parts[0]
    else:
        lines.append(
            f"  %idx = stablehlo.concatenate {', '.join(parts)}, dim = 1 : "
            f"({', '.join([comp_t] * k)}) -> {idx_t}"
        )
        idx = "%idx"
    collapsed = sorted(index_map)
    if draw(st.booleans()) and 0 in collapsed and len(collapsed) > 1:
        collapsed.remove(0)  # dim 0 becomes a window dim of size 1
    window = [d for d in range(rank) if d not in collapsed]
    slice_sizes = [1 if d in index_map else sizes[d] for d in range(rank)]
    out_shape = [batch] + [slice_sizes[d] for d in window]
    operand_t = "tensor<" + "x".join(map(str, sizes)) + "xf32>"
    out_t = "tensor<" + "x".join(map(str, out_shape)) + "xf32>"
    args = [f"%arg0: {operand_t}"] + [f"%i{i}: {comp_t}" for i in range(k)]
    offsets = ", ".join(str(d) for d in range(1, len(out_shape)))
    lists = lambda v: ", ".join(map(str, v))  # noqa: E731
    if draw(st.booleans()):
        dims = (
            f"#stablehlo.gather<{f'offset_dims = [{offsets}], ' if offsets else ''}"
            f"collapsed_slice_dims = [{lists(collapsed)}], start_index_map = [{lists(index_map)}], "
            "index_vector_dim = 1>"
        )
        op = (
            f'  %r = "stablehlo.gather"(%arg0, {idx}) <{{dimension_numbers = {dims}, '
            f"slice_sizes = array<i64: {lists(slice_sizes)}>}}> : ({operand_t}, {idx_t}) -> {out_t}"
        )
        result_t = out_t
    else:
        args.append(f"%upd: {out_t}")
        dims = (
            f"#stablehlo.scatter<{f'update_window_dims = [{offsets}], ' if offsets else ''}"
            f"inserted_window_dims = [{lists(collapsed)}], "
            f"scatter_dims_to_operand_dims = [{lists(index_map)}], index_vector_dim = 1>"
        )
        op = (
            f'  %r = "stablehlo.scatter"(%arg0, {idx}, %upd) <{{scatter_dimension_numbers = {dims}}}> ({{\n'
            "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n    stablehlo.return %b : tensor<f32>\n"
            f"  }}) : ({operand_t}, {idx_t}, {out_t}) -> {operand_t}"
        )
        result_t = operand_t
    return (
        f"func.func @main({', '.join(args)}) -> {result_t} {{\n"
        + "\n".join(lines + [op])
        + f"\n  return %r : {result_t}\n}}\n"
    )


@settings(max_examples=60, deadline=None)
@given(_gather_or_scatter())
def test_random_gathers_and_scatters_match_reference(text: str) -> None:
    assert _ours(text) == run_pass(text, PASS)


@pytest.mark.parametrize(
    "name", ["gather/sliced-middle", "gather/three-components", "scatter/iota-second"]
)
def test_new_ops_get_the_reference_locations(name: str) -> None:
    text = run_pass(CASES[name], None, debug_info=True)
    expected = run_pass(text, PASS, debug_info=True)
    assert "loc(" in expected
    assert _ours(text) == expected


def test_strategy_rewrites_often() -> None:
    """The random modules are not all left alone: most draws have an iota component."""
    from hypothesis import find

    find(_gather_or_scatter(), lambda t: "batching_dims = [0]" in run_pass(t, PASS))


_IVD0 = {
    "gather": """func.func @main(%arg0: tensor<2x8xf32>, %arg1: tensor<1x2xi32>) -> tensor<2xf32> {
  %iota = stablehlo.iota dim = 0 : tensor<1x2xi32>
  %idx = stablehlo.concatenate %iota, %arg1, dim = 0 : (tensor<1x2xi32>, tensor<1x2xi32>) -> tensor<2x2xi32>
  %r = "stablehlo.gather"(%arg0, %idx) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 0>, slice_sizes = array<i64: 1, 1>}> : (tensor<2x8xf32>, tensor<2x2xi32>) -> tensor<2xf32>
  return %r : tensor<2xf32>
}
""",
    "scatter": """func.func @main(%arg0: tensor<2x8xf32>, %arg1: tensor<1x2xi32>, %u: tensor<2xf32>) -> tensor<2x8xf32> {
  %iota = stablehlo.iota dim = 0 : tensor<1x2xi32>
  %idx = stablehlo.concatenate %iota, %arg1, dim = 0 : (tensor<1x2xi32>, tensor<1x2xi32>) -> tensor<2x2xi32>
  %r = "stablehlo.scatter"(%arg0, %idx, %u) <{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 0>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    stablehlo.return %b : tensor<f32>
  }) : (tensor<2x8xf32>, tensor<2x2xi32>, tensor<2xf32>) -> tensor<2x8xf32>
  return %r : tensor<2x8xf32>
}
""",
}


@pytest.mark.parametrize("name", list(_IVD0))
def test_index_vector_dim_0_fails_like_reference(name: str) -> None:
    """Dim 0 is both the implicit batch and the index vector dim: the rewrite is invalid."""
    from shardwise.errors import VerifyError
    from shardwise.io.reference import ReferenceError

    with pytest.raises(ReferenceError) as ref:
        run_pass(_IVD0[name], PASS)
    message = ref.value.diagnostics[0].split(": ", 1)[1]
    with pytest.raises(VerifyError, match="index_vector_dim 0") as ours:
        _ours(_IVD0[name])
    assert message in str(ours.value)
    loc = ours.value.location
    assert ref.value.diagnostics[0].startswith(f'loc("-":{loc.line}:{loc.col})')


def test_options_are_rejected_like_the_reference() -> None:
    """The 0.10.2 build of this pass takes no options."""
    from shardwise.passes import prepare_pass

    with pytest.raises(ValueError, match="no such option"):
        run_pass("module {}", PASS + "{bogus=1}")
    with pytest.raises(ShardwiseError, match="takes no options"):
        prepare_pass(PASS + "{bogus=1}")
