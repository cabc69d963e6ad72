"""Propagation debug info (``debug-sharding-origins``, ``debug-propagation-edge-sharding``),
ours vs Shardy's, on small hand-written modules.

Each case is a module and a list of passes run in order; the whole printed module must equal
the reference's, so every ``sdy.sharding_origins`` dict, ``sdy.sharding_origin_name`` and
``#sdy.propagation_edges`` (steps, sources, sorted targets and axes) is compared, as are the
``block_arg_``/``result_`` variants that sinking leaves on data-flow ops.
"""

from __future__ import annotations

import difflib
import re

import pytest

from shardwise.io.mlir import load_text, write_text
from shardwise.io.reference import run_pass as reference_run_pass
from shardwise.ir import func_result_attrs, func_result_types
from shardwise.passes import run_pass
from shardwise.propagation.options import PropagationOptions
from shardwise.propagation.propagation_pipeline import import_and_propagate, propagation_pipeline

MESH = 'sdy.mesh @mesh = <["a"=2, "b"=4, "c"=2]>'

ORIGINS = "debug-sharding-origins=true"
EDGES = "debug-propagation-edge-sharding=true"
BOTH = f"{ORIGINS} {EDGES}"
DEBUG_OPTIONS = PropagationOptions(
    debug_sharding_origins=True, debug_propagation_edge_sharding=True
)
SINK = "sdy-sink-data-flow-edges{sink-debug-sharding-origins=true sink-debug-propagation-edge-sharding=true}"


def m(body: str) -> str:
    """The mesh, then `body` with ``S<...>S`` short for an ``sdy.sharding`` arg/result attr."""
    body = body.replace("S<", "{sdy.sharding = #sdy.sharding<@mesh, ").replace(">S", ">}")
    return MESH + "\n" + body + "\n"


def each(pass_name: str) -> list[list[str]]:
    return [[f"{pass_name}{{{o}}}"] for o in (ORIGINS, EDGES, BOTH)]


T = "tensor<8x16xf32>"

MODULES = {
    "elementwise_chain": m(
        f"""func.func @main(%arg0: {T} S<[{{"a"}}, {{"b"}}]>S, %arg1: {T}) -> {T} {{
  %0 = stablehlo.add %arg0, %arg1 : {T}
  %1 = stablehlo.multiply %0, %0 : {T}
  %2 = stablehlo.negate %1 : {T}
  return %2 : {T}
}}"""
    ),
    "backward_from_results": m(
        f"""func.func @main(%arg0: {T}, %arg1: {T}) -> ({T} S<[{{"b", ?}}, {{?}}]>S, {T} S<[{{?}}, {{"c", ?}}]>S) {{
  %0 = stablehlo.add %arg0, %arg1 : {T}
  %1 = stablehlo.exponential %0 : {T}
  %2 = stablehlo.abs %0 : {T}
  return %1, %2 : {T}, {T}
}}"""
    ),
    "dot_general": m(
        """func.func @main(%arg0: tensor<8x16xf32> S<[{"a"}, {"b"}]>S, %arg1: tensor<16x32xf32> S<[{?}, {"c", ?}]>S) -> tensor<8x32xf32> {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %1 = stablehlo.negate %0 : tensor<8x32xf32>
  return %1 : tensor<8x32xf32>
}"""
    ),
    "reshape_split_then_merge": m(
        """func.func @main(%arg0: tensor<16x4xf32> S<[{"b", "a"}, {}]>S) -> tensor<16x4xf32> {
  %0 = stablehlo.reshape %arg0 : (tensor<16x4xf32>) -> tensor<2x8x4xf32>
  %1 = stablehlo.abs %0 : tensor<2x8x4xf32>
  %2 = stablehlo.reshape %1 : (tensor<2x8x4xf32>) -> tensor<16x4xf32>
  return %2 : tensor<16x4xf32>
}"""
    ),
    "reshape_merge_backward": m(
        """func.func @main(%arg0: tensor<2x4x8xf32>) -> (tensor<8x8xf32> S<[{"b", "c"}, {"a"}]>S) {
  %0 = stablehlo.cosine %arg0 : tensor<2x4x8xf32>
  %1 = stablehlo.reshape %0 : (tensor<2x4x8xf32>) -> tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}"""
    ),
    "constraint_in_chain": m(
        f"""func.func @main(%arg0: {T} S<[{{"a", ?}}, {{?}}]>S) -> {T} {{
  %0 = stablehlo.negate %arg0 : {T}
  %1 = sdy.sharding_constraint %0 <@mesh, [{{?}}, {{"b", ?}}]> : {T}
  %2 = stablehlo.add %1, %1 : {T}
  %3 = sdy.sharding_constraint %2 <@mesh, [{{"a", "c"}}, {{"b"}}]> : {T}
  return %3 : {T}
}}"""
    ),
    "aggressive_conflict": m(
        f"""func.func @main(%arg0: {T} S<[{{"a", "b"}}, {{}}]>S, %arg1: {T} S<[{{"a", "c"}}, {{?}}]>S, %arg2: {T} S<[{{?}}, {{"b"}}]>S) -> {T} {{
  %0 = stablehlo.add %arg0, %arg1 : {T}
  %1 = stablehlo.subtract %0, %arg2 : {T}
  return %1 : {T}
}}"""
    ),
    "returned_argument_and_value": m(
        f"""func.func @main(%arg0: {T} S<[{{"a"}}, {{?}}]>S, %arg1: {T}) -> ({T}, {T} S<[{{?}}, {{"b"}}]>S) {{
  %0 = stablehlo.maximum %arg0, %arg1 : {T}
  return %arg0, %0 : {T}, {T}
}}"""
    ),
    "multi_result_op": m(
        """func.func @main(%arg0: tensor<8x16xf32> S<[{"a"}, {"b"}]>S, %arg1: tensor<8x16xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %cst = stablehlo.constant dense<0.0> : tensor<f32>
  %0:2 = stablehlo.reduce(%arg0 init: %cst), (%arg1 init: %cst) across dimensions = [1] : (tensor<8x16xf32>, tensor<8x16xf32>, tensor<f32>, tensor<f32>) -> (tensor<8xf32>, tensor<8xf32>)
   reducer(%a0: tensor<f32>, %b0: tensor<f32>) (%a1: tensor<f32>, %b1: tensor<f32>) {
    %1 = stablehlo.add %a0, %b0 : tensor<f32>
    %2 = stablehlo.add %a1, %b1 : tensor<f32>
    stablehlo.return %1, %2 : tensor<f32>, tensor<f32>
  }
  return %0#0, %0#1 : tensor<8xf32>, tensor<8xf32>
}"""
    ),
    # The private func gets origins from its own argument; only main's results get edges.
    "two_funcs": m(
        f"""func.func @main(%arg0: {T} S<[{{"a"}}, {{}}]>S) -> {T} {{
  %0 = stablehlo.negate %arg0 : {T}
  return %0 : {T}
}}
func.func private @f(%arg0: {T} S<[{{"b"}}, {{}}]>S) -> ({T}, {T}) {{
  %0 = stablehlo.abs %arg0 : {T}
  return %0, %0 : {T}, {T}
}}"""
    ),
    # One value returned twice: only one result attribute receives its origins.
    "returned_twice": m(
        f"""func.func @main(%arg0: {T} S<[{{"a"}}, {{}}]>S) -> ({T}, {T} S<[{{?}}, {{"c"}}]>S) {{
  %0 = stablehlo.negate %arg0 : {T}
  return %0, %0 : {T}, {T}
}}"""
    ),
    # "b"=4 split over the reshape's two factors, recorded merged back as "b".
    "sub_axes_same_step": m(
        """func.func @main(%arg0: tensor<16xf32> S<[{"b"}]>S, %arg1: tensor<2x8xf32> S<[{?}, {"a", ?}]>S) -> tensor<2x8xf32> {
  %0 = stablehlo.reshape %arg0 : (tensor<16xf32>) -> tensor<2x8xf32>
  %1 = stablehlo.add %0, %arg1 : tensor<2x8xf32>
  return %1 : tensor<2x8xf32>
}"""
    ),
    "barrier": m(
        f"""func.func @main(%arg0: {T} S<[{{"a"}}, {{}}]>S) -> ({T} S<[{{?}}, {{"b"}}]>S) {{
  %0 = sdy.propagation_barrier %arg0 allowed_direction=FORWARD : {T}
  %1 = stablehlo.negate %0 : {T}
  return %1 : {T}
}}"""
    ),
}

CALLS = m(
    f"""func.func @main(%arg0: {T} S<[{{"a"}}, {{}}]>S) -> ({T} S<[{{?}}, {{"b"}}]>S) {{
  %0 = func.call @f(%arg0) : ({T}) -> {T}
  %1 = stablehlo.negate %0 : {T}
  return %1 : {T}
}}
func.func private @f(%arg0: {T}) -> {T} {{
  %0 = stablehlo.abs %arg0 : {T}
  return %0 : {T}
}}"""
)

WHILE = m(
    f"""func.func @main(%arg0: {T} S<[{{"a"}}, {{?}}]>S) -> ({T} S<[{{?}}, {{"b", ?}}]>S) {{
  %c = stablehlo.constant dense<0> : tensor<i32>
  %c_1 = stablehlo.constant dense<1> : tensor<i32>
  %0:2 = stablehlo.while(%iterArg = %arg0, %iterArg_2 = %c) : {T}, tensor<i32>
   cond {{
    %1 = stablehlo.compare  LT, %iterArg_2, %c_1 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  }} do {{
    %2 = stablehlo.negate %iterArg : {T}
    %3 = stablehlo.add %iterArg_2, %c_1 : tensor<i32>
    stablehlo.return %2, %3 : {T}, tensor<i32>
  }}
  %4 = stablehlo.abs %0#0 : {T}
  return %4 : {T}
}}"""
)

MANUAL = m(
    f"""func.func @main(%arg0: {T} S<[{{"a", ?}}, {{?}}]>S) -> {T} {{
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{{"a", ?}}, {{"c", ?}}]>] out_shardings=[<@mesh, [{{"a", ?}}, {{?}}]>] manual_axes={{"a"}} (%arg1: tensor<4x16xf32>) {{
    %1 = stablehlo.negate %arg1 : tensor<4x16xf32>
    sdy.return %1 : tensor<4x16xf32>
  }} : ({T}) -> {T}
  %2 = stablehlo.abs %0 : {T}
  %3 = stablehlo.add %2, %2 : {T}
  return %3 : {T}
}}"""
)

# Manual computations are numbered in post-order: the inner one is mc_0.
NESTED_MANUAL = m(
    """func.func @main(%arg0: tensor<8x16xf32> S<[{"a", ?}, {?}]>S) -> tensor<8x16xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"a", ?}, {?}]>] out_shardings=[<@mesh, [{"a", ?}, {?}]>] manual_axes={"a"} (%arg1: tensor<4x16xf32>) {
    %1 = sdy.manual_computation(%arg1) in_shardings=[<@mesh, [{?}, {"c", ?}]>] out_shardings=[<@mesh, [{?}, {"c", ?}]>] manual_axes={"c"} (%arg2: tensor<4x8xf32>) {
      %2 = stablehlo.negate %arg2 : tensor<4x8xf32>
      sdy.return %2 : tensor<4x8xf32>
    } : (tensor<4x16xf32>) -> tensor<4x16xf32>
    sdy.return %1 : tensor<4x16xf32>
  } : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %3 = sdy.manual_computation(%0) in_shardings=[<@mesh, [{?}, {"b", ?}]>] out_shardings=[<@mesh, [{?}, {"b", ?}]>] manual_axes={"b"} (%arg3: tensor<8x4xf32>) {
    %4 = stablehlo.abs %arg3 : tensor<8x4xf32>
    sdy.return %4 : tensor<8x4xf32>
  } : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %3 : tensor<8x16xf32>
}"""
)

EDGE_PASSES = ["sdy-add-data-flow-edges"]

CASES: dict[str, tuple[str, list[str]]] = {}
for _name, _text in MODULES.items():
    for _pass in ("sdy-basic-propagate", "sdy-aggressive-propagate"):
        for _opts, _passes in zip(("origins", "edges", "both"), each(_pass), strict=True):
            CASES[f"{_name}-{_pass[4:-10]}-{_opts}"] = (_text, _passes)
for _pass in ("sdy-op-priority-propagate", "sdy-user-priority-propagate"):
    CASES[f"elementwise_chain-{_pass[4:-10]}"] = (
        MODULES["elementwise_chain"],
        [f"{_pass}{{{BOTH}}}"],
    )
    CASES[f"dot_general-{_pass[4:-10]}"] = (MODULES["dot_general"], [f"{_pass}{{{BOTH}}}"])
# While edges are compared for origins only: Shardy records the yield as source operand-1 on
# the one-operand sdy.data_flow_edge, and its verifier then rejects its own output.
for _name, _text, _opts in (
    ("while", WHILE, ORIGINS),
    ("manual", MANUAL, BOTH),
    ("nested_manual", NESTED_MANUAL, BOTH),
):
    for _pass in ("sdy-basic-propagate", "sdy-op-priority-propagate"):
        CASES[f"{_name}-{_pass[4:-10]}-unsunk"] = (_text, [*EDGE_PASSES, f"{_pass}{{{_opts}}}"])
        CASES[f"{_name}-{_pass[4:-10]}-sunk"] = (
            _text,
            [*EDGE_PASSES, f"{_pass}{{{_opts}}}", SINK],
        )
for _pass in ("sdy-basic-propagate", "sdy-aggressive-propagate"):
    CASES[f"func_data_flow_edges-{_pass[4:-10]}"] = (
        CALLS,
        ["sdy-add-func-data-flow-edges", f"{_pass}{{{BOTH}}}"],
    )
# (Sharding groups are not compared: the reference crashes on them with either option.)
# Steps continue across passes; the second pass rewrites the edges of ops it changes.
CASES["two_passes"] = (
    MODULES["constraint_in_chain"],
    [f"sdy-basic-propagate{{{BOTH}}}", f"sdy-aggressive-propagate{{{BOTH}}}"],
)
CASES["user_priorities"] = (
    m(
        f"""func.func @main(%arg0: {T} {{sdy.sharding = #sdy.sharding<@mesh, [{{"a"}}p1, {{"b"}}p0]>}}, %arg1: {T} {{sdy.sharding = #sdy.sharding<@mesh, [{{"c"}}p0, {{?}}]>}}) -> {T} {{
  %0 = stablehlo.add %arg0, %arg1 : {T}
  %1 = stablehlo.negate %0 : {T}
  return %1 : {T}
}}"""
    ),
    [f"sdy-user-priority-propagate{{{BOTH}}}"],
)

# sdy-apply-sharding-constraints records its input updates as steps; propagation continues.
APPLY = f"sdy-apply-sharding-constraints{{{BOTH}}}"
CONSTRAINTS = m(
    f"""func.func @main(%arg0: {T} S<[{{"a", ?}}, {{?}}]>S) -> {T} {{
  %0 = stablehlo.negate %arg0 : {T}
  %1 = sdy.sharding_constraint %0 <@mesh, [{{}}, {{"b"}}]> : {T}
  %2 = stablehlo.add %1, %1 : {T}
  %3 = sdy.sharding_constraint %2 <@mesh, [{{"a", "c"}}, {{"b"}}]> : {T}
  %4 = stablehlo.abs %3 : {T}
  return %4 : {T}
}}"""
)
CONSTRAINT_CHAIN = m(
    f"""func.func @main(%arg0: {T}, %arg1: {T}) -> ({T}, {T}) {{
  %0 = stablehlo.add %arg0, %arg1 : {T}
  %1 = sdy.sharding_constraint %0 <@mesh, [{{"b"}}, {{}}]> : {T}
  %2 = sdy.sharding_constraint %1 <@mesh, [{{"b"}}, {{"a"}}]> : {T}
  %3 = stablehlo.multiply %0, %arg1 : {T}
  %4 = stablehlo.negate %2 : {T}
  return %3, %4 : {T}, {T}
}}"""
)
for _name, _text in (("constraints", CONSTRAINTS), ("constraint_chain", CONSTRAINT_CHAIN)):
    CASES[f"apply_{_name}"] = (_text, [APPLY])
    CASES[f"apply_{_name}-origins"] = (_text, [f"sdy-apply-sharding-constraints{{{ORIGINS}}}"])
    CASES[f"apply_{_name}-then-propagate"] = (_text, [APPLY, f"sdy-aggressive-propagate{{{BOTH}}}"])
CASES["apply_manual-then-propagate"] = (
    MANUAL,
    [*EDGE_PASSES, APPLY, f"sdy-basic-propagate{{{BOTH}}}", SINK],
)
# The steps of the propagation pipeline up to propagation, with the debug options.
PIPELINE_STEPS = [
    "sdy-import-pipeline",
    "sdy-flatten-call-graph",
    "symbol-dce",
    "sdy-import-func-calls",
    "symbol-dce",
    APPLY,
    "sdy-sharding-group-import",
    "sdy-pre-order-funcs",
    f"sdy-user-priority-propagate{{{BOTH} keep-sharding-rules=true}}",
]
PIPELINE_MODULES = {
    "constraints": CONSTRAINTS,
    "constraint_chain": CONSTRAINT_CHAIN,
    "manual": MANUAL,
    "dot_general": MODULES["dot_general"],
}


def _ours(text: str, passes: list[str]) -> str:
    module = load_text(text)
    for spec in passes:
        run_pass(module, spec)
    return write_text(module)


@pytest.mark.parametrize(("text", "passes"), CASES.values(), ids=CASES.keys())
def test_debug_info_matches_reference(text: str, passes: list[str]) -> None:
    want = reference_run_pass(text, passes)
    got = _ours(text, passes)
    diff = "\n".join(difflib.unified_diff(want.splitlines(), got.splitlines(), lineterm=""))
    assert got == want, "ours differs from Shardy's (- reference, + ours):\n" + diff


def test_cases_print_debug_attributes() -> None:
    """The reference really prints debug info for these cases (so the comparison means something)."""
    text, passes = CASES["elementwise_chain-basic-both"]
    want = reference_run_pass(text, passes)
    assert "sdy.sharding_origins" in want and "#sdy.propagation_edges" in want


@pytest.mark.parametrize("text", PIPELINE_MODULES.values(), ids=PIPELINE_MODULES.keys())
def test_import_and_propagate_matches_reference_steps(text: str) -> None:
    """`import_and_propagate` with both debug options = the reference's passes one by one."""
    want = reference_run_pass(text, PIPELINE_STEPS)
    module = load_text(text)
    import_and_propagate(module, DEBUG_OPTIONS)
    assert write_text(module) == want


@pytest.mark.parametrize("text", PIPELINE_MODULES.values(), ids=PIPELINE_MODULES.keys())
def test_pipeline_debug_info_is_removed_at_the_end(text: str) -> None:
    """The pipeline strips the debug dicts (constraint names survive, as reshard attributes);
    otherwise the result equals the registered pipeline's (which has no debug options)."""
    want = reference_run_pass(text, ["sdy-propagation-pipeline"])
    module = load_text(text)
    propagation_pipeline(module, DEBUG_OPTIONS)
    got = re.sub(r' \{sdy\.sharding_origin_name = "[a-z_0-9]+"\}', "", write_text(module))
    assert got == want


def _reference_unverified(text: str, passes: list[str]) -> str:
    """The reference's output with its verifier off (it rejects its own while-loop edges)."""
    from jax._src.lib.mlir import ir, passmanager

    from shardwise.io.reference import _context, pipeline_text

    with _context():
        module = ir.Module.parse(text)
        manager = passmanager.PassManager.parse(pipeline_text(passes))
        manager.enable_verifier(False)
        manager.run(module.operation)
        return module.operation.get_asm(assume_verified=True)


def _our_edge_attrs(text: str, passes: list[str]) -> list[str]:
    module = load_text(text)
    for spec in passes:
        run_pass(module, spec)
    found = [str(op.attributes[EDGES]) for op in module.walk() if EDGES in op.attributes]
    for func in module.funcs:
        for i in range(len(func_result_types(func))):
            attrs = func_result_attrs(func, i) or {}
            if EDGES in attrs:
                found.append(str(attrs[EDGES]))
    return sorted(found)


EDGES_ATTR_RE = re.compile(r"#sdy\.propagation_edges<\[.*?\]>(?=[,}])")
EDGES = "sdy.propagation_edges"


@pytest.mark.parametrize("pass_name", ["sdy-basic-propagate", "sdy-op-priority-propagate"])
def test_while_loop_edges_match_unverified_reference(pass_name: str) -> None:
    """Every ``#sdy.propagation_edges`` (incl. the yield as operand-1 of the while's edge op)."""
    passes = [*EDGE_PASSES, f"{pass_name}{{{BOTH}}}"]
    want = sorted(EDGES_ATTR_RE.findall(_reference_unverified(WHILE, passes)))
    assert want, "the reference recorded no edges"
    assert _our_edge_attrs(WHILE, passes) == want
