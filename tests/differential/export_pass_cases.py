"""Own inputs for `test_export_passes.py`: one table per Shardy export pass.

Each `Case` names the pass (Shardy's spelling), its options, the input module and optionally
a reference pipeline `pre` that turns the input into the pass's real input (e.g.
``sdy-add-data-flow-edges`` before `sdy-sink-data-flow-edges`), so the edge ops are exactly the
ones Shardy creates.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Case", "CASES"]


@dataclass(frozen=True)
class Case:
    id: str
    pass_name: str
    text: str
    options: dict[str, bool | str] = field(default_factory=dict)
    pre: str | None = None
    expect_error: bool = False


MESHES = """
sdy.mesh @mesh = <["x"=2, "y"=4, "z"=2]>
sdy.mesh @m2 = <["a"=4, "b"=3]>
sdy.mesh @maximal = <[], device_ids=[3]>
"""


def _func(body: str, args: str = "%arg0: tensor<8x8xf32>", results: str = "tensor<8x8xf32>"):
    return f"{MESHES}\nfunc.func @main({args}) -> ({results}) {{\n{body}\n}}\n"


CASES: list[Case] = []


def add(
    pass_name: str,
    id: str,
    text: str,
    pre: str | None = None,
    expect_error: bool = False,
    **options: bool | str,
) -> None:
    case_id = f"{pass_name.removeprefix('sdy-')}/{id}"
    CASES.append(Case(case_id, pass_name, text, options, pre, expect_error))


# -- sdy-close-shardings ----------------------------------------------------------------------

CLOSE = "sdy-close-shardings"
add(
    CLOSE,
    "func-args-results",
    MESHES
    + """
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {?}], replicated={"y"}>},
                %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", ?}p2, {"x"}p1], unreduced={"z"}>},
                %arg2: tensor<8x8xf32>)
    -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {"z", ?}]>}, tensor<8x8xf32>) {
  return %arg0, %arg2 : tensor<8x8xf32>, tensor<8x8xf32>
}
""",
)
add(
    CLOSE,
    "op-kinds",
    _func(
        """
  %0 = stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", ?}, {?}], replicated={"z"}>]>} : tensor<8x8xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{"y", ?}, {?}]> : tensor<8x8xf32>
  %2 = sdy.reshard %1 <@mesh, [{?}, {"y", ?}p0]> : tensor<8x8xf32>
  %3:2 = stablehlo.optimization_barrier {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}, {?}]>, <@mesh, [{"x"}, {?}], replicated={"y"}>]>} %2, %1 : tensor<8x8xf32>, tensor<8x8xf32>
  %4 = sdy.all_gather [{}, {"y"}] %2 out_sharding=<@mesh, [{?}, {}]> : tensor<8x8xf32>
  %5 = stablehlo.custom_call @foo(%4) {has_side_effect = true, sdy.sharding = #sdy.sharding_per_value<[<@maximal, []>]>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  stablehlo.custom_call @bar(%5) {has_side_effect = true, sdy.sharding = #sdy.sharding_per_value<[<@maximal, []>]>} : (tensor<8x8xf32>) -> ()
  return %3#1 : tensor<8x8xf32>
""",
        args='%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<mesh<["q"=2]>, [{"q", ?}, {?}]>}',
    ),
)
add(
    CLOSE,
    "regions",
    _func(
        """
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %c) : tensor<8x8xf32>, tensor<i32>
    attributes {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", ?}, {?}]>, <@mesh, []>]>}
    cond {
    %1 = stablehlo.compare LT, %iterArg_0, %iterArg_0 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %1 = stablehlo.negate %iterArg {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}, {"y", ?}]>]>} : tensor<8x8xf32>
    stablehlo.return %1, %iterArg_0 : tensor<8x8xf32>, tensor<i32>
  }
  %2 = sdy.manual_computation(%0#0) in_shardings=[<@mesh, [{"x", ?}, {?}], replicated={"z"}>] out_shardings=[<@mesh, [{"x", ?}, {"y", ?}]>] manual_axes={"x"} (%a: tensor<4x8xf32>) {
    %3 = stablehlo.abs %a {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}, {"y", ?}]>]>} : tensor<4x8xf32>
    sdy.return %3 : tensor<4x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %4 = sdy.named_computation<"foo">(%2) in_shardings=[<@mesh, [{?}, {"z", ?}]>] out_shardings=[<@mesh, [{"y", ?}, {?}], replicated={"x"}>] (%b: tensor<8x8xf32>) {
    sdy.return %b : tensor<8x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %4 : tensor<8x8xf32>
"""
    ),
)
add(
    CLOSE,
    "data-flow-edges",
    _func(
        """
  %0 = stablehlo.optimization_barrier %arg0 : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
""",
        args='%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {?}]>}',
    ),
    pre="sdy-add-data-flow-edges,sdy-aggressive-propagate",
)

# -- sdy-remove-sharding-groups ---------------------------------------------------------------

GROUPS = "sdy-remove-sharding-groups"
add(
    GROUPS,
    "flat-and-nested",
    _func(
        """
  sdy.sharding_group %arg0 group_id = 0 : tensor<8x8xf32>
  %0 = stablehlo.add %arg0, %arg0 : tensor<8x8xf32>
  sdy.sharding_group %0 group_id = 0 : tensor<8x8xf32>
  %1 = sdy.named_computation<"n">(%0) (%b: tensor<8x8xf32>) {
    sdy.sharding_group %b group_id = 7 : tensor<8x8xf32>
    sdy.return %b : tensor<8x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
"""
    ),
)
add(GROUPS, "none", _func("  return %arg0 : tensor<8x8xf32>"))

# -- sdy-sharding-constraint-to-reshard -------------------------------------------------------

TO_RESHARD = "sdy-sharding-constraint-to-reshard"
add(
    TO_RESHARD,
    "attrs-and-uses",
    _func(
        """
  %0 = sdy.sharding_constraint %arg0 <@mesh, [{"x", ?}, {}]> {foo = "bar", sdy.sharding_origin_name = "constraint_0"} : tensor<8x8xf32>
  %1 = stablehlo.add %0, %0 : tensor<8x8xf32>
  %2 = sdy.sharding_constraint %1 <@mesh, [{}, {"y"}], replicated={"x"}> : tensor<8x8xf32>
  %3 = stablehlo.multiply %2, %0 : tensor<8x8xf32>
  return %3 : tensor<8x8xf32>
"""
    ),
)
add(
    TO_RESHARD,
    "nested",
    _func(
        """
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%a: tensor<4x8xf32>) {
    %1 = sdy.sharding_constraint %a <@mesh, [{}, {"y"}]> : tensor<4x8xf32>
    sdy.return %1 : tensor<4x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %2 = sdy.sharding_constraint %0 <mesh<["w"=2]>, [{"w"}, {}]> : tensor<8x8xf32>
  return %2 : tensor<8x8xf32>
"""
    ),
)

# -- sdy-drop-sharding-rules ------------------------------------------------------------------

DROP_RULES = "sdy-drop-sharding-rules"
add(
    DROP_RULES,
    "custom-kept",
    _func(
        """
  %0 = stablehlo.add %arg0, %arg0 {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=8, j=8}>} : tensor<8x8xf32>
  %1 = stablehlo.custom_call @foo(%0) {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=8}, custom>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %2 = stablehlo.custom_call @bar(%1) {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([j, i]) {i=8, j=8} need_replication={i}>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %3 = stablehlo.dot_general %2, %1, contracting_dims = [1] x [0] {sdy.sharding_rule = #sdy.op_sharding_rule<([i, k], [k, j])->([i, j]) {i=8, j=8, k=8} reduction={k}>} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %3 : tensor<8x8xf32>
"""
    ),
)
add(
    DROP_RULES,
    "nested",
    _func(
        """
  %0 = sdy.named_computation<"n">(%arg0) (%b: tensor<8x8xf32>) {
    %1 = stablehlo.negate %b {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=8}>} : tensor<8x8xf32>
    sdy.return %1 : tensor<8x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
"""
    ),
)

# -- sdy-remove-propagation-debug-info --------------------------------------------------------

DEBUG_INFO = "sdy-remove-propagation-debug-info"
DEBUG_PRE = (
    "sdy-add-data-flow-edges,"
    "sdy-aggressive-propagate{debug-sharding-origins=true debug-propagation-edge-sharding=true}"
)
DEBUG_SINK = "sdy-sink-data-flow-edges{sink-debug-sharding-origins=true sink-debug-propagation-edge-sharding=true}"
DEBUG_INPUT = (
    MESHES
    + """
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                %arg1: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{}, {"y"}]> : tensor<8x8xf32>
  %2:2 = stablehlo.optimization_barrier %1, %arg1 : tensor<8x8xf32>, tensor<8x8xf32>
  %3 = stablehlo.negate %2#0 : tensor<8x8xf32>
  return %3, %2#1 : tensor<8x8xf32>, tensor<8x8xf32>
}
func.func private @other(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"z"}]>}) -> tensor<8xf32> {
  %0 = stablehlo.abs %arg0 : tensor<8xf32>
  return %0 : tensor<8xf32>
}
"""
)
add(DEBUG_INFO, "after-propagation", DEBUG_INPUT, pre=DEBUG_PRE + "," + DEBUG_SINK)
add(DEBUG_INFO, "none", _func("  return %arg0 : tensor<8x8xf32>"))

# -- sdy-inline-meshes ------------------------------------------------------------------------

INLINE = "sdy-inline-meshes"
add(
    INLINE,
    "all-places",
    MESHES
    + """
sdy.mesh @empty = <[]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {}], replicated={"y"}>}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m2, [{"a"}, {}]>}) {
  %0 = stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y":(1)2}, {}], unreduced={"z"}>]>} : tensor<8x8xf32>
  %1 = sdy.reshard %0 <@m2, [{"a"}, {}]> : tensor<8x8xf32>
  %2 = stablehlo.custom_call @foo(%1) {sdy.sharding = #sdy.sharding_per_value<[<@maximal, []>]>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %3 = sdy.sharding_constraint %2 <@empty, [{}, {}]> : tensor<8x8xf32>
  %4 = sdy.sharding_constraint %3 <mesh<["w"=2]>, [{}, {"w"}]> : tensor<8x8xf32>
  return %4 : tensor<8x8xf32>
}
""",
)
add(INLINE, "unused-meshes", _func("  return %arg0 : tensor<8x8xf32>"))

# -- sdy-constant-or-scalar-merger ------------------------------------------------------------

MERGER = "sdy-constant-or-scalar-merger"
add(
    MERGER,
    "constants",
    _func(
        """
  %c0 = stablehlo.constant dense<1.0> : tensor<8x8xf32>
  %c1 = stablehlo.constant dense<1.0> : tensor<8x8xf32>
  %c2 = stablehlo.constant {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} dense<1.0> : tensor<8x8xf32>
  %c3 = stablehlo.constant {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} dense<1.0> : tensor<8x8xf32>
  %c4 = stablehlo.constant dense<2.0> : tensor<8x8xf32>
  %c5 = sdy.constant dense<1.0> : tensor<8x8xf32>
  %c6 = sdy.constant dense<1.0> : tensor<8x8xf32>
  %0 = stablehlo.add %c0, %c1 : tensor<8x8xf32>
  %1 = stablehlo.add %c2, %c3 : tensor<8x8xf32>
  %2 = stablehlo.add %0, %1 : tensor<8x8xf32>
  %3 = stablehlo.add %2, %c4 : tensor<8x8xf32>
  %4 = stablehlo.add %c5, %c6 : tensor<8x8xf32>
  %5 = stablehlo.add %3, %4 : tensor<8x8xf32>
  return %5 : tensor<8x8xf32>
"""
    ),
)
add(
    MERGER,
    "scalar-broadcasts",
    _func(
        """
  %s = stablehlo.constant dense<1.0> : tensor<f32>
  %t = stablehlo.constant dense<2.0> : tensor<f32>
  %v = stablehlo.constant dense<1.0> : tensor<8xf32>
  %0 = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<8x8xf32>
  %1 = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<8x8xf32>
  %2 = stablehlo.broadcast_in_dim %t, dims = [] : (tensor<f32>) -> tensor<8x8xf32>
  %3 = stablehlo.broadcast_in_dim %s, dims = [] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>} : (tensor<f32>) -> tensor<8x8xf32>
  %4 = stablehlo.broadcast_in_dim %v, dims = [0] : (tensor<8xf32>) -> tensor<8x8xf32>
  %5 = stablehlo.broadcast_in_dim %v, dims = [0] : (tensor<8xf32>) -> tensor<8x8xf32>
  %6 = stablehlo.broadcast_in_dim %s, dims = [] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>} : (tensor<f32>) -> tensor<8x8xf32>
  %7 = stablehlo.add %0, %1 : tensor<8x8xf32>
  %8 = stablehlo.add %2, %3 : tensor<8x8xf32>
  %9 = stablehlo.add %4, %5 : tensor<8x8xf32>
  %10 = stablehlo.add %7, %8 : tensor<8x8xf32>
  %11 = stablehlo.add %9, %10 : tensor<8x8xf32>
  %12 = stablehlo.add %11, %6 : tensor<8x8xf32>
  return %12 : tensor<8x8xf32>
"""
    ),
)
add(
    MERGER,
    "regions-kept-apart",
    _func(
        """
  %c0 = stablehlo.constant dense<1.0> : tensor<8x8xf32>
  %0 = sdy.named_computation<"n">(%arg0) (%b: tensor<8x8xf32>) {
    %c1 = stablehlo.constant dense<1.0> : tensor<8x8xf32>
    %c2 = stablehlo.constant dense<1.0> : tensor<8x8xf32>
    %1 = stablehlo.add %b, %c1 : tensor<8x8xf32>
    %2 = stablehlo.add %1, %c2 : tensor<8x8xf32>
    sdy.return %2 : tensor<8x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %c3 = stablehlo.constant dense<1.0> : tensor<8x8xf32>
  %3 = stablehlo.add %0, %c0 : tensor<8x8xf32>
  %4 = stablehlo.add %3, %c3 : tensor<8x8xf32>
  return %4 : tensor<8x8xf32>
"""
    ),
)
add(
    MERGER,
    "after-splitter-and-propagation",
    _func(
        """
  %c = stablehlo.constant dense<1.0> : tensor<8x8xf32>
  %s = stablehlo.constant dense<3.0> : tensor<f32>
  %b = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<8x8xf32>
  %0 = stablehlo.add %arg0, %c : tensor<8x8xf32>
  %1 = stablehlo.add %arg1, %c : tensor<8x8xf32>
  %2 = stablehlo.multiply %0, %b : tensor<8x8xf32>
  %3 = stablehlo.multiply %1, %b : tensor<8x8xf32>
  %4 = stablehlo.add %2, %3 : tensor<8x8xf32>
  return %4 : tensor<8x8xf32>
""",
        args='%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, '
        '%arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}',
    ),
    pre="sdy-constant-or-scalar-splitter,sdy-aggressive-propagate",
)

# -- sdy-sink-data-flow-edges -----------------------------------------------------------------

SINK = "sdy-sink-data-flow-edges"
SINK_INPUT = _func(
    """
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %c) : tensor<8x8xf32>, tensor<i32>
    cond {
    %1 = stablehlo.compare LT, %iterArg_0, %iterArg_0 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %1 = stablehlo.negate %iterArg : tensor<8x8xf32>
    stablehlo.return %1, %iterArg_0 : tensor<8x8xf32>, tensor<i32>
  }
  %2:2 = stablehlo.optimization_barrier %0#0, %arg1 : tensor<8x8xf32>, tensor<8x8xf32>
  %3 = sdy.named_computation<"n">(%2#0, %2#1) (%b: tensor<8x8xf32>, %d: tensor<8x8xf32>) {
    %4 = stablehlo.add %b, %d : tensor<8x8xf32>
    sdy.return %4 : tensor<8x8xf32>
  } : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %5 = sdy.manual_computation(%3) in_shardings=[<@mesh, [{"x"}, {?}]>] out_shardings=[<@mesh, [{"x"}, {?}]>] manual_axes={"x"} (%a: tensor<4x8xf32>) {
    %6 = stablehlo.abs %a : tensor<4x8xf32>
    sdy.return %6 : tensor<4x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %5 : tensor<8x8xf32>
""",
    args='%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {?}]>}, '
    '%arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {"y", ?}]>}',
)
add(SINK, "edges-only", SINK_INPUT, pre="sdy-add-data-flow-edges")
add(SINK, "after-propagation", SINK_INPUT, pre="sdy-add-data-flow-edges,sdy-aggressive-propagate")
# Propagation-edge debug info recorded on the edges of a 2-operand barrier names operand
# indices the edge op does not have, and the reference verifier then rejects the module; so
# the edge option is exercised on DEBUG_INPUT only.
DEBUG_ORIGINS_PRE = "sdy-add-data-flow-edges,sdy-aggressive-propagate{debug-sharding-origins=true}"
add(
    SINK,
    "debug-info",
    DEBUG_INPUT,
    pre=DEBUG_PRE,
    **{"sink-debug-sharding-origins": True, "sink-debug-propagation-edge-sharding": True},
)
add(
    SINK,
    "debug-origins",
    SINK_INPUT,
    pre=DEBUG_ORIGINS_PRE,
    **{"sink-debug-sharding-origins": True},
)
add(
    SINK,
    "debug-edges",
    DEBUG_INPUT,
    pre=DEBUG_PRE,
    **{"sink-debug-propagation-edge-sharding": True},
)
add(
    SINK,
    "unsharded",
    _func(
        "  %0 = stablehlo.optimization_barrier %arg0 : tensor<8x8xf32>\n  return %0 : tensor<8x8xf32>"
    ),
    pre="sdy-add-data-flow-edges",
)

# -- sdy-sink-func-data-flow-edges ------------------------------------------------------------

SINK_FUNC = "sdy-sink-func-data-flow-edges"
CALLS_INPUT = (
    MESHES
    + """
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {?}]>}, %arg1: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %0:2 = call @foo(%arg0, %arg1) : (tensor<8x8xf32>, tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>)
  %1 = call @bar(%0#1) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %0#0, %1 : tensor<8x8xf32>, tensor<8x8xf32>
}
func.func private @foo(%arg0: tensor<8x8xf32>, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {"y", ?}]>}) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>
  return %0, %arg1 : tensor<8x8xf32>, tensor<8x8xf32>
}
func.func private @bar(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
"""
)
add(SINK_FUNC, "edges-only", CALLS_INPUT, pre="sdy-add-func-data-flow-edges")
add(
    SINK_FUNC,
    "after-propagation",
    CALLS_INPUT,
    pre="sdy-add-func-data-flow-edges,sdy-aggressive-propagate",
)

# -- sdy-update-non-divisible-input-output-shardings ------------------------------------------

DIVISIBLE = "sdy-update-non-divisible-input-output-shardings"
add(
    DIVISIBLE,
    "func-table",
    """
sdy.mesh @mesh = <["x"=4, "y"=2]>
sdy.mesh @m6 = <["a"=6, "b"=4]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>},
                %arg1: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}]>},
                %arg2: tensor<2x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>},
                %arg3: tensor<3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>},
                %arg4: tensor<3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}]>},
                %arg5: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}]>},
                %arg6: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", "x"}]>},
                %arg7: tensor<9x10xf32> {sdy.sharding = #sdy.sharding<@m6, [{"a", ?}p1, {"b"}p0]>},
                %arg8: tensor<12xf32> {sdy.sharding = #sdy.sharding<@m6, [{"b", "a"}]>},
                %arg9: tensor<6x4xf32> {sdy.sharding = #sdy.sharding<@m6, [{"a":(2)3}, {}], unreduced={"b"}>},
                %arg10: tensor<?x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>},
                %arg11: tensor<6xf32>)
    -> (tensor<2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", "x", ?}]>}, tensor<6xf32> {sdy.sharding = #sdy.sharding<@m6, [{"b"}p3]>}, tensor<f32>) {
  %0 = stablehlo.constant dense<1.0> : tensor<2xf32>
  %1 = stablehlo.constant dense<1.0> : tensor<f32>
  return %0, %arg11, %1 : tensor<2xf32>, tensor<6xf32>, tensor<f32>
}
""",
)
add(
    DIVISIBLE,
    "calls-and-manual",
    """
sdy.mesh @mesh = <["x"=4, "y"=2, "z"=3]>
func.func @main(%arg0: tensor<6x8xf32>) -> tensor<6x8xf32> {
  %0:2 = call @foo(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", "y"}, {"z"}]>, <@mesh, [{"y"}]>]>} : (tensor<6x8xf32>) -> (tensor<6x8xf32>, tensor<3xf32>)
  %1 = sdy.manual_computation(%0#0) in_shardings=[<@mesh, [{"y", "x"}, {"z", ?}]>] out_shardings=[<@mesh, [{"y", "z"}, {"x"}]>] manual_axes={"y"} (%a: tensor<3x8xf32>) {
    %2 = stablehlo.abs %a {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"z"}]>]>} : tensor<3x8xf32>
    sdy.return %2 : tensor<3x8xf32>
  } : (tensor<6x8xf32>) -> tensor<6x8xf32>
  %3 = stablehlo.negate %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"z"}]>]>} : tensor<6x8xf32>
  %4 = sdy.named_computation<"n">(%3) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"z"}, {"x"}]>] (%b: tensor<6x8xf32>) {
    sdy.return %b : tensor<6x8xf32>
  } : (tensor<6x8xf32>) -> tensor<6x8xf32>
  return %4 : tensor<6x8xf32>
}
func.func private @foo(%arg0: tensor<6x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"z", "x"}, {"y"}]>}) -> (tensor<6x8xf32>, tensor<3xf32>) {
  %0 = stablehlo.constant dense<1.0> : tensor<3xf32>
  return %arg0, %0 : tensor<6x8xf32>, tensor<3xf32>
}
""",
)
add(
    DIVISIBLE,
    "inline-and-maximal",
    """
sdy.mesh @maximal = <[], device_ids=[0]>
func.func @main(%arg0: tensor<6xf32> {sdy.sharding = #sdy.sharding<mesh<["p"=4]>, [{"p"}]>},
                %arg1: tensor<6xf32> {sdy.sharding = #sdy.sharding<@maximal, []>}) -> tensor<6xf32> {
  return %arg0 : tensor<6xf32>
}
""",
)

# -- sdy-remove-sub-axes-in-input-output-shardings --------------------------------------------

SUB_AXES = "sdy-remove-sub-axes-in-input-output-shardings"
SUB_AXES_FUNC = """
func.func @{name}(%arg0: tensor<16xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"x":(1)2, "y", ?}}]>}},
                  %arg1: tensor<16x16xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"y", "x":(2)2, ?}}p1, {{"x":(1)2}}]>}},
                  %arg2: tensor<16xf32>)
    -> (tensor<16xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"y", "x":(1)2, ?}}p2], replicated={{"x":(2)2}}>}}, tensor<16xf32>) {{
  return %arg0, %arg2 : tensor<16xf32>, tensor<16xf32>
}}
"""
SUB_AXES_MESH = 'sdy.mesh @mesh = <["x"=4, "y"=2]>\n'
add(SUB_AXES, "single-func-any-name", SUB_AXES_MESH + SUB_AXES_FUNC.format(name="entry"))
add(
    SUB_AXES,
    "main-among-many",
    SUB_AXES_MESH
    + SUB_AXES_FUNC.format(name="helper").replace("func.func", "func.func private")
    + SUB_AXES_FUNC.format(name="main"),
)

# -- sdy-export-named-computations -------------------------------------------------------------

NAMED = "sdy-export-named-computations"
NAMED_INPUT = (
    MESHES
    + """
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {?}]>}, %arg1: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0:2 = sdy.named_computation<"foo">(%arg0, %arg1) (%a: tensor<8x8xf32>, %b: tensor<8x8xf32>) {
    %1 = stablehlo.add %a, %b : tensor<8x8xf32>
    sdy.return %1, %b : tensor<8x8xf32>, tensor<8x8xf32>
  } : (tensor<8x8xf32>, tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>)
  %2 = sdy.named_computation<"foo">(%0#0) in_shardings=[<@mesh, [{}, {"y"}]>] out_shardings=[<@mesh, [{"y"}, {}]>] (%a: tensor<8x8xf32>) {
    %3 = sdy.named_computation<"main">(%a) (%c: tensor<8x8xf32>) {
      %4 = stablehlo.negate %c : tensor<8x8xf32>
      sdy.return %4 : tensor<8x8xf32>
    } {execution_thread = "host", foo = 1 : i32} : (tensor<8x8xf32>) -> tensor<8x8xf32>
    sdy.return %3 : tensor<8x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %5 = stablehlo.add %2, %0#1 : tensor<8x8xf32>
  return %5 : tensor<8x8xf32>
}
func.func private @foo_0(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
"""
)
add(NAMED, "names-nesting-attrs", NAMED_INPUT)
add(NAMED, "with-edges", NAMED_INPUT, pre="sdy-add-data-flow-edges")
add(NAMED, "after-propagation", NAMED_INPUT, pre="sdy-add-data-flow-edges,sdy-aggressive-propagate")
add(
    NAMED,
    "unused-results-and-no-args",
    _func(
        """
  %0:2 = sdy.named_computation<"bar">() () {
    %c = stablehlo.constant dense<1.0> : tensor<8x8xf32>
    sdy.return %c, %c : tensor<8x8xf32>, tensor<8x8xf32>
  } : () -> (tensor<8x8xf32>, tensor<8x8xf32>)
  return %0#1 : tensor<8x8xf32>
"""
    ),
    pre="sdy-add-data-flow-edges",
)

# -- sdy-propagate-to-func-results ------------------------------------------------------------

TO_RESULTS = "sdy-propagate-to-func-results"
TO_RESULTS_INPUT = (
    MESHES
    + """
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x8xf32> {
  %0:3 = call @foo(%arg0, %arg0) : (tensor<8x8xf32>, tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>)
  return %0#0 : tensor<8x8xf32>
}
func.func private @foo(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {}]>}, %arg1: tensor<8x8xf32>)
    -> (tensor<8x8xf32>, tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>, jax.result_info = "r1"}, tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}) {
  %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"z", ?}]>]>} : tensor<8x8xf32>
  return %0, %arg0, %arg1 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}
"""
)
add(TO_RESULTS, "main-and-private", TO_RESULTS_INPUT)
add(
    TO_RESULTS,
    "single-func-is-main",
    MESHES
    + """
func.func @entry(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x8xf32> {
  return %arg0 : tensor<8x8xf32>
}
""",
)
add(TO_RESULTS, "after-propagation", TO_RESULTS_INPUT, pre="sdy-aggressive-propagate")

# -- sdy-insert-func-call-reshards -------------------------------------------------------------

CALL_RESHARDS = "sdy-insert-func-call-reshards"
add(
    CALL_RESHARDS,
    "mismatches",
    MESHES
    + """
func.func @main(%arg0: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %0:3 = call @foo(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>, <@mesh, [{"y", ?}, {}]>, <@mesh, [{}, {}]>]>} : (tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>)
  %1 = stablehlo.add %0#0, %0#1 : tensor<8x8xf32>
  %2 = stablehlo.add %1, %0#2 : tensor<8x8xf32>
  %3 = call @bar(%2) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %4 = call @baz(%3) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"z"}, {}]>]>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %5 = call @baz(%4) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %6 = call @max(%5) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"x"}]>]>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %6, %4 : tensor<8x8xf32>, tensor<8x8xf32>
}
func.func private @foo(%arg0: tensor<8x8xf32>) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {}]>}, tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}, tensor<8x8xf32>) {
  return %arg0, %arg0, %arg0 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}
func.func private @bar(%arg0: tensor<8x8xf32>) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"z"}, {}]>}) {
  return %arg0 : tensor<8x8xf32>
}
func.func private @baz(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
  return %arg0 : tensor<8x8xf32>
}
func.func private @max(%arg0: tensor<8x8xf32>) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@maximal, []>}) {
  return %arg0 : tensor<8x8xf32>
}
""",
)

# -- sdy-unflatten-call-graph ------------------------------------------------------------------

UNFLATTEN = "sdy-unflatten-call-graph"
UNFLATTEN_INPUT = (
    MESHES
    + """
func.func @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = call @f(%arg0) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %1 = call @f_0(%0) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %2 = call @f_1(%1) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %3 = call @f_2(%2) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %4 = call @f_2(%3) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %5 = call @g(%4) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %6 = call @g_0(%5) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %7 = call @h(%6) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %7 : tensor<8x8xf32>
}
func.func private @f(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) attributes {sdy.original_func_name = "f"} {
  return %arg0 : tensor<8x8xf32>
}
func.func private @f_0(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) attributes {sdy.original_func_name = "f"} {
  return %arg0 : tensor<8x8xf32>
}
func.func private @f_1(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) attributes {sdy.original_func_name = "f"} {
  return %arg0 : tensor<8x8xf32>
}
func.func private @f_2(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) attributes {sdy.original_func_name = "f"} {
  return %arg0 : tensor<8x8xf32>
}
func.func private @g(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> attributes {sdy.original_func_name = "g", sdy.func_manual_axes = #sdy<manual_axes{"x"}>} {
  return %arg0 : tensor<8x8xf32>
}
func.func private @g_0(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> attributes {sdy.original_func_name = "g"} {
  return %arg0 : tensor<8x8xf32>
}
func.func private @h(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {?}]>}) -> tensor<8x8xf32> {
  return %arg0 : tensor<8x8xf32>
}
"""
)
add(UNFLATTEN, "by-shardings", UNFLATTEN_INPUT)
add(UNFLATTEN, "dedup-fully", UNFLATTEN_INPUT, **{"dedup-functions-fully": True})
