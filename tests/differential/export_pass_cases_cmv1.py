"""Inputs for `sdy-remove-all-gather-reduce-scatter-for-cmv1` in `test_export_passes.py`.

Appends to the full table of `export_pass_cases_more` (import this module to get it all). One
case per row of the pass's table (`shardwise.export.remove_all_gather_reduce_scatter_for_cmv1`): patterns
removed and patterns kept. Expected outputs come from the reference at test time.

Not here: a dot without a sharding followed by a reduce-scatter, on which the reference
segfaults (tests/unit/test_remove_ag_rs_for_cmv1.py).
"""

from __future__ import annotations

from tests.differential.export_pass_cases import MESHES, add
from tests.differential.export_pass_cases_more import CASES, Case

__all__ = ["CASES", "Case"]

CMV1 = "sdy-remove-all-gather-reduce-scatter-for-cmv1"

_LHS = '%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}'
_RHS = '%arg1: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}'
_X = '#sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>'
_DOT = "(tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>"
_DOT_GENERAL = "stablehlo.dot_general %{lhs}, %{rhs}, contracting_dims = [1] x [0]"


def _main(body: str, results: str = "tensor<8x8xf32>", args: str = f"{_LHS}, {_RHS}") -> str:
    return f"{MESHES}\nfunc.func @main({args}) -> ({results}) {{\n{body}\n}}\n"


add(
    CMV1,
    "all-gather-into-dot",
    _main(f"""
  %0 = sdy.all_gather [{{}}, {{"y"}}] %arg0 out_sharding=<@mesh, [{{"x"}}, {{}}]> : tensor<8x16xf32>
  %1 = stablehlo.dot %0, %arg1 {{sdy.sharding = {_X}}} : {_DOT}
  return %1 : tensor<8x8xf32>"""),
)
add(
    CMV1,
    "all-gathers-into-both-operands",
    _main(f"""
  %0 = sdy.all_gather [{{}}, {{"y"}}] %arg0 out_sharding=<@mesh, [{{"x"}}, {{}}]> : tensor<8x16xf32>
  %1 = sdy.all_gather [{{"y"}}, {{}}] %arg1 out_sharding=<@mesh, [{{}}, {{}}]> : tensor<16x8xf32>
  %2 = stablehlo.dot %0, %1 {{sdy.sharding = {_X}}} : {_DOT}
  return %2 : tensor<8x8xf32>"""),
)
add(
    CMV1,
    "all-gather-dot-reduce-scatter-keeps-scatter",
    _main(f"""
  %0 = sdy.all_gather [{{"x"}}, {{}}] %arg0 out_sharding=<@mesh, [{{}}, {{"y"}}]> : tensor<8x16xf32>
  %1 = {_DOT_GENERAL.format(lhs=0, rhs="arg1")} {{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{{}}, {{}}]>]>}} : {_DOT}
  %2 = sdy.reduce_scatter [{{"x"}}, {{}}] %1 out_sharding=<@mesh, [{{"x"}}, {{}}]> : tensor<8x8xf32>
  return %2 : tensor<8x8xf32>"""),
)
add(
    CMV1,
    "dot-reduce-scatter-many-uses",
    _main(
        f"""
  %0 = stablehlo.dot %arg0, %arg1 {{sdy.sharding = {_X}}} : {_DOT}
  %1 = sdy.reduce_scatter [{{}}, {{"y"}}] %0 out_sharding=<@mesh, [{{"x"}}, {{"y"}}]> : tensor<8x8xf32>
  %2 = stablehlo.negate %1 : tensor<8x8xf32>
  %3 = stablehlo.add %1, %2 : tensor<8x8xf32>
  return %3, %1 : tensor<8x8xf32>, tensor<8x8xf32>""",
        "tensor<8x8xf32>, tensor<8x8xf32>",
    ),
)
add(
    CMV1,
    "dot-general-reduce-scatter-open-rule-kept",
    _main(f"""
  %0 = {_DOT_GENERAL.format(lhs="arg0", rhs="arg1")} {{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{{"x", ?}}, {{?}}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, k], [k, j])->([i, j]) {{i=8, j=8, k=16}} reduction={{k}}>}} : {_DOT}
  %1 = sdy.reduce_scatter [{{}}, {{"y", "z"}}] %0 out_sharding=<@mesh, [{{"x"}}, {{"y", "z"}}]> : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>"""),
)
add(
    CMV1,
    "all-gather-with-another-use-kept",
    _main(
        f"""
  %0 = sdy.all_gather [{{}}, {{"y"}}] %arg0 out_sharding=<@mesh, [{{"x"}}, {{}}]> : tensor<8x16xf32>
  %1 = stablehlo.dot %0, %arg1 {{sdy.sharding = {_X}}} : {_DOT}
  %2 = sdy.reduce_scatter [{{}}, {{"y"}}] %1 out_sharding=<@mesh, [{{"x"}}, {{"y"}}]> : tensor<8x8xf32>
  return %2, %0 : tensor<8x8xf32>, tensor<8x16xf32>""",
        "tensor<8x8xf32>, tensor<8x16xf32>",
    ),
)
add(
    CMV1,
    "all-gather-used-twice-by-dot-kept",
    _main(
        f"""
  %0 = sdy.all_gather [{{}}, {{"y"}}] %arg0 out_sharding=<@mesh, [{{"x"}}, {{}}]> : tensor<8x8xf32>
  %1 = stablehlo.dot %0, %0 {{sdy.sharding = {_X}}} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %2 = sdy.reduce_scatter [{{}}, {{"y"}}] %1 out_sharding=<@mesh, [{{"x"}}, {{"y"}}]> : tensor<8x8xf32>
  return %2 : tensor<8x8xf32>""",
        args='%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}',
    ),
)
add(
    CMV1,
    "unreduced-dot-keeps-scatter",
    _main(
        """
  %0 = stablehlo.dot %arg0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}], unreduced={"y"}>]>} : """
        + _DOT
        + """
  %1 = sdy.reduce_scatter [{}, {"z"}] %0 out_sharding=<@mesh, [{"x"}, {"z"}], unreduced={"y"}> : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>"""
    ),
)
add(
    CMV1,
    "dot-with-another-use-keeps-scatter",
    _main(
        f"""
  %0 = stablehlo.dot %arg0, %arg1 {{sdy.sharding = {_X}}} : {_DOT}
  %1 = sdy.reduce_scatter [{{}}, {{"y"}}] %0 out_sharding=<@mesh, [{{"x"}}, {{"y"}}]> : tensor<8x8xf32>
  return %1, %0 : tensor<8x8xf32>, tensor<8x8xf32>""",
        "tensor<8x8xf32>, tensor<8x8xf32>",
    ),
)
add(
    CMV1,
    "not-a-dot-kept",
    _main(
        """
  %0 = sdy.all_gather [{}, {"y"}] %arg0 out_sharding=<@mesh, [{"x"}, {}]> : tensor<8x8xf32>
  %1 = stablehlo.multiply %0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<8x8xf32>
  %2 = stablehlo.convolution(%1, %1) dim_numbers = [b, f]x[i, o]->[b, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %3 = sdy.reduce_scatter [{}, {"y"}] %2 out_sharding=<@mesh, [{"x"}, {"y"}]> : tensor<8x8xf32>
  return %3 : tensor<8x8xf32>""",
        args='%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}',
    ),
)
add(
    CMV1,
    "other-collectives-kept",
    _main(f"""
  %0 = sdy.all_to_all [{{"y"}}: 1->0] %arg0 out_sharding=<@mesh, [{{"x", "y"}}, {{}}]> : tensor<8x16xf32>
  %1 = sdy.all_reduce {{"z"}} %arg1 out_sharding=<@mesh, [{{"y"}}, {{}}]> : tensor<16x8xf32>
  %2 = sdy.collective_permute %1 out_sharding=<@mesh, [{{"x", "z"}}, {{}}]> : tensor<16x8xf32>
  %3 = stablehlo.dot %0, %2 {{sdy.sharding = {_X}}} : {_DOT}
  %4 = sdy.all_slice [{{}}, {{"y"}}] %3 out_sharding=<@mesh, [{{"x"}}, {{"y"}}]> : tensor<8x8xf32>
  return %4 : tensor<8x8xf32>"""),
)
add(
    CMV1,
    "scatter-gather-between-dots",
    _main(
        f"""
  %0 = stablehlo.dot %arg0, %arg1 {{sdy.sharding = {_X}}} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %1 = sdy.reduce_scatter [{{}}, {{"y"}}] %0 out_sharding=<@mesh, [{{"x"}}, {{"y"}}]> : tensor<8x8xf32>
  %2 = sdy.all_gather [{{}}, {{"y"}}] %1 out_sharding=<@mesh, [{{"x"}}, {{}}]> : tensor<8x8xf32>
  %3 = stablehlo.dot %2, %arg1 {{sdy.sharding = {_X}}} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %4 = sdy.reduce_scatter [{{}}, {{"y"}}] %3 out_sharding=<@mesh, [{{"x"}}, {{"y"}}]> : tensor<8x8xf32>
  return %4 : tensor<8x8xf32>""",
        args='%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}, '
        "%arg1: tensor<8x8xf32>",
    ),
)
add(
    CMV1,
    "all-gather-of-all-gather",
    _main(
        """
  %0 = sdy.all_gather [{}, {"y"}] %arg0 out_sharding=<@mesh, [{"x"}, {}]> : tensor<8x8xf32>
  %1 = sdy.all_gather [{"x"}, {}] %0 out_sharding=<@mesh, [{}, {}]> : tensor<8x8xf32>
  %2 = stablehlo.dot %arg1, %1 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %2 : tensor<8x8xf32>""",
        args='%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}, '
        "%arg1: tensor<8x8xf32>",
    ),
)
add(
    CMV1,
    "nested-regions",
    _main(
        """
  %0 = sdy.named_computation<"n">(%arg0, %arg1) in_shardings=[<@mesh, [{"x"}, {"y"}]>, <@mesh, [{}, {}]>] out_shardings=[<@mesh, [{}, {}]>] (%a: tensor<8x8xf32>, %b: tensor<8x8xf32>) {
    %1 = sdy.all_gather [{}, {"y"}] %a out_sharding=<@mesh, [{"x"}, {}]> : tensor<8x8xf32>
    %2 = stablehlo.dot_general %1, %b, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    %3 = stablehlo.dot_general %b, %b, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    %4 = sdy.reduce_scatter [{}, {"y"}] %3 out_sharding=<@mesh, [{"x"}, {"y"}]> : tensor<8x8xf32>
    %5 = stablehlo.add %2, %4 : tensor<8x8xf32>
    sdy.return %5 : tensor<8x8xf32>
  } : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %6 = stablehlo.dot %arg1, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %7 = "stablehlo.case"(%c) ({
    %8 = sdy.reduce_scatter [{}, {"y"}] %6 out_sharding=<@mesh, [{"x"}, {"y"}]> : tensor<8x8xf32>
    stablehlo.return %8 : tensor<8x8xf32>
  }, {
    stablehlo.return %0 : tensor<8x8xf32>
  }) : (tensor<i32>) -> tensor<8x8xf32>
  return %7 : tensor<8x8xf32>""",
        args='%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}, '
        "%arg1: tensor<8x8xf32>, %c: tensor<i32>",
    ),
)
