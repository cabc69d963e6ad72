"""Our op sharding rules against Shardy's own `sdy-populate-op-sharding-rules`, op by op.

Each test builds one module holding many functions, runs the reference pass on it once
(normal and conservative), loads the reference output and the input with `load_text`, runs
`populate_op_sharding_rules` on the input and requires the printed rule of every op (or its
absence) to be identical, in walk order. Cases: a hand-written table of the interesting shapes
of every op kind, plus hypothesis strategies per op family (`rule_strategies`).
"""

from __future__ import annotations

import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shardwise.io.mlir import load_text
from shardwise.io.reference import run_pass
from shardwise.ir import SHARDING_RULE_ATTR, Module
from shardwise.rules.populate import populate_op_sharding_rules
from shardwise.rules.registry import UnknownOpWarning
from tests.differential import rule_strategies as rs
from tests.differential.rule_strategies_special import FAMILIES

PASS = "sdy-populate-op-sharding-rules"
CONSERVATIVE_PASS = PASS + "{conservative-propagation=true}"

# Few examples per test (each is one reference call with many ops); the fuzz profile scales up.
EXAMPLES = max(4, settings.default.max_examples // 10)

RuleList = list[tuple[str, str | None]]


def rules_by_func(module: Module) -> dict[str, RuleList]:
    """Function name -> (op name, rule text or None) of every op, post-order."""
    result: dict[str, RuleList] = {}
    for func in module.funcs:
        name = module.symbol_name(func) or ""
        result[name] = [
            (op.name, None if (r := op.attributes.get(SHARDING_RULE_ATTR)) is None else str(r))
            for op in func.walk_post_order()
        ]
    return result


def reference_and_ours(
    text: str, conservative: bool
) -> tuple[dict[str, RuleList], dict[str, RuleList]]:
    reference = load_text(run_pass(text, CONSERVATIVE_PASS if conservative else PASS, generic=True))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnknownOpWarning)
        ours = populate_op_sharding_rules(load_text(text), conservative)
    return rules_by_func(reference), rules_by_func(ours)


def mismatches(reference: RuleList, ours: RuleList) -> list[str]:
    if [n for n, _ in reference] != [n for n, _ in ours]:
        return [f"different ops: {reference} vs {ours}"]
    return [
        f"{name}:\n  reference: {ref}\n  ours:      {our}"
        for (name, ref), (_, our) in zip(reference, ours, strict=True)
        if ref != our
    ]


def assert_module_matches(text: str) -> None:
    for conservative in (False, True):
        reference, ours = reference_and_ours(text, conservative)
        problems = [
            f"@{func} (conservative={conservative}) {p}"
            for func in reference
            for p in mismatches(reference[func], ours[func])
        ]
        assert not problems, "\n".join(problems[:8]) + "\n\n" + text


# -- the table ----------------------------------------------------------------------------------
# (id, function body text): `%argN` are the function's arguments, declared in ARGS order.

MESH = 'sdy.mesh @mesh = <["x"=2, "y"=4]>\n'

TABLE: list[tuple[str, str]] = [
    (
        "reshape_merge",
        "(%a: tensor<2x4xf32>) { %0 = stablehlo.reshape %a : (tensor<2x4xf32>) -> tensor<8xf32>",
    ),
    (
        "reshape_compound",
        "(%a: tensor<8x4x5xf32>) { %0 = stablehlo.reshape %a : (tensor<8x4x5xf32>) -> tensor<2x16x5xf32>",
    ),
    (
        "reshape_swap_6x4",
        "(%a: tensor<6x4xf32>) { %0 = stablehlo.reshape %a : (tensor<6x4xf32>) -> tensor<4x6xf32>",
    ),
    (
        "reshape_no_common",
        "(%a: tensor<5x2x5x3xf32>) { %0 = stablehlo.reshape %a : (tensor<5x2x5x3xf32>) -> tensor<5x3x5x2xf32>",
    ),
    (
        "reshape_zero_elements",
        "(%a: tensor<0x4xf32>) { %0 = stablehlo.reshape %a : (tensor<0x4xf32>) -> tensor<4x0xf32>",
    ),
    (
        "reshape_size1_dims",
        "(%a: tensor<1x6x1xf32>) { %0 = stablehlo.reshape %a : (tensor<1x6x1xf32>) -> tensor<2x1x3xf32>",
    ),
    (
        "reshape_scalar",
        "(%a: tensor<f32>) { %0 = stablehlo.reshape %a : (tensor<f32>) -> tensor<1x1xf32>",
    ),
    (
        "reshape_12_to_3x4",
        "(%a: tensor<12x10xf32>) { %0 = stablehlo.reshape %a : (tensor<12x10xf32>) -> tensor<3x4x2x5xf32>",
    ),
    (
        "reshape_diverging",
        "(%a: tensor<6x10xf32>) { %0 = stablehlo.reshape %a : (tensor<6x10xf32>) -> tensor<4x15xf32>",
    ),
    (
        "broadcast_expand_size1",
        "(%a: tensor<1x4xf32>) { %0 = stablehlo.broadcast_in_dim %a, dims = [0, 2] : (tensor<1x4xf32>) -> tensor<8x3x4xf32>",
    ),
    (
        "broadcast_keep_size1",
        "(%a: tensor<1x4xf32>) { %0 = stablehlo.broadcast_in_dim %a, dims = [1, 2] : (tensor<1x4xf32>) -> tensor<3x1x4xf32>",
    ),
    (
        "broadcast_scalar",
        "(%a: tensor<f32>) { %0 = stablehlo.broadcast_in_dim %a, dims = [] : (tensor<f32>) -> tensor<3x4xf32>",
    ),
    (
        "concat_of_slices",
        """(%a: tensor<8x4xf32>, %b: tensor<8x4xf32>) {
      %0 = stablehlo.slice %a [0:4, 0:4] : (tensor<8x4xf32>) -> tensor<4x4xf32>
      %1 = stablehlo.slice %b [4:8, 0:4] : (tensor<8x4xf32>) -> tensor<4x4xf32>
      %2 = stablehlo.concatenate %0, %1, dim = 0 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<8x4xf32>""",
    ),
    (
        "concat_slice_and_source",
        """(%a: tensor<8x4xf32>) {
      %0 = stablehlo.slice %a [0:2, 0:4] : (tensor<8x4xf32>) -> tensor<2x4xf32>
      %1 = stablehlo.concatenate %0, %a, dim = 0 : (tensor<2x4xf32>, tensor<8x4xf32>) -> tensor<10x4xf32>""",
    ),
    (
        "concat_same_value_no_slice",
        "(%a: tensor<8x4xf32>) { %0 = stablehlo.concatenate %a, %a, dim = 1 : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x8xf32>",
    ),
    (
        "concat_slice_and_other",
        """(%a: tensor<8x4xf32>, %b: tensor<2x4xf32>) {
      %0 = stablehlo.slice %a [0:2, 0:4] : (tensor<8x4xf32>) -> tensor<2x4xf32>
      %1 = stablehlo.concatenate %0, %b, dim = 0 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<4x4xf32>""",
    ),
    (
        "dus_sdy_constant_indices",
        """(%a: tensor<8x4xf32>, %u: tensor<2x4xf32>) {
      %c = sdy.constant dense<0> : tensor<i32>
      %0 = stablehlo.dynamic_update_slice %a, %u, %c, %c : (tensor<8x4xf32>, tensor<2x4xf32>, tensor<i32>, tensor<i32>) -> tensor<8x4xf32>""",
    ),
    (
        "dus_mixed_indices",
        """(%a: tensor<8x4xf32>, %u: tensor<2x1xf32>, %i: tensor<i32>) {
      %c = stablehlo.constant dense<0> : tensor<i32>
      %0 = stablehlo.dynamic_update_slice %a, %u, %c, %i : (tensor<8x4xf32>, tensor<2x1xf32>, tensor<i32>, tensor<i32>) -> tensor<8x4xf32>""",
    ),
    (
        "conv_2d_nhwc",
        """(%x: tensor<2x8x8x3xf32>, %k: tensor<3x3x3x16xf32>) {
      %0 = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x8x8x3xf32>, tensor<3x3x3x16xf32>) -> tensor<2x8x8x16xf32>""",
    ),
    (
        "conv_window_larger",
        """(%x: tensor<2x4x3xf32>, %k: tensor<3x3x16xf32>) {
      %0 = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {stride = [2], pad = [[0, 0]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x4x3xf32>, tensor<3x3x16xf32>) -> tensor<2x1x16xf32>""",
    ),
    (
        "conv_feature_groups",
        """(%x: tensor<2x8x6xf32>, %k: tensor<3x2x9xf32>) {
      %0 = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 3 : i64} : (tensor<2x8x6xf32>, tensor<3x2x9xf32>) -> tensor<2x6x9xf32>""",
    ),
    (
        "conv_batch_groups",
        """(%x: tensor<4x8x2xf32>, %k: tensor<3x2x4xf32>) {
      %0 = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {} {batch_group_count = 2 : i64, feature_group_count = 1 : i64} : (tensor<4x8x2xf32>, tensor<3x2x4xf32>) -> tensor<2x6x4xf32>""",
    ),
    (
        "scatter_overwrite_batching",
        """(%op: tensor<3x8x4xf32>, %i: tensor<3x5x1xi32>, %u: tensor<3x5x4xf32>) {
      %0 = "stablehlo.scatter"(%op, %i, %u) ({
      ^bb0(%x: tensor<f32>, %y: tensor<f32>):
        stablehlo.return %y : tensor<f32>
      }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2], inserted_window_dims = [1], input_batching_dims = [0], scatter_indices_batching_dims = [0], scatter_dims_to_operand_dims = [1], index_vector_dim = 2>} : (tensor<3x8x4xf32>, tensor<3x5x1xi32>, tensor<3x5x4xf32>) -> tensor<3x8x4xf32>""",
    ),
    (
        "scatter_i1_or",
        """(%op: tensor<8x4xi1>, %i: tensor<5x1xi32>, %u: tensor<5x4xi1>) {
      %0 = "stablehlo.scatter"(%op, %i, %u) ({
      ^bb0(%x: tensor<i1>, %y: tensor<i1>):
        %s = stablehlo.or %x, %y : tensor<i1>
        stablehlo.return %s : tensor<i1>
      }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>} : (tensor<8x4xi1>, tensor<5x1xi32>, tensor<5x4xi1>) -> tensor<8x4xi1>""",
    ),
    (
        "scatter_f32_and_is_not_reduction",
        """(%op: tensor<8x4xi32>, %i: tensor<5x1xi32>, %u: tensor<5x4xi32>) {
      %0 = "stablehlo.scatter"(%op, %i, %u) ({
      ^bb0(%x: tensor<i32>, %y: tensor<i32>):
        %s = stablehlo.and %x, %y : tensor<i32>
        stablehlo.return %s : tensor<i32>
      }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>} : (tensor<8x4xi32>, tensor<5x1xi32>, tensor<5x4xi32>) -> tensor<8x4xi32>""",
    ),
    (
        "gather_offset_sliced",
        """(%op: tensor<8x6xf32>, %i: tensor<5x2xi32>) {
      %0 = "stablehlo.gather"(%op, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [1, 2], start_index_map = [0, 1], index_vector_dim = 1>, slice_sizes = array<i64: 1, 3>} : (tensor<8x6xf32>, tensor<5x2xi32>) -> tensor<5x1x3xf32>""",
    ),
    (
        "custom_eigh",
        "(%a: tensor<2x4x4xf32>) { %0:2 = stablehlo.custom_call @Eigh(%a) : (tensor<2x4x4xf32>) -> (tensor<2x4x4xf32>, tensor<2x4xf32>)",
    ),
    (
        "custom_qr",
        "(%a: tensor<2x6x4xf32>) { %0:2 = stablehlo.custom_call @Qr(%a) : (tensor<2x6x4xf32>) -> (tensor<2x6x4xf32>, tensor<2x4xf32>)",
    ),
    (
        "custom_householder",
        "(%a: tensor<6x4xf32>, %t: tensor<4xf32>) { %0 = stablehlo.custom_call @ProductOfElementaryHouseholderReflectors(%a, %t) : (tensor<6x4xf32>, tensor<4xf32>) -> tensor<6x4xf32>",
    ),
    (
        "custom_topk",
        "(%a: tensor<3x16xf32>) { %0:2 = stablehlo.custom_call @mhlo.topk(%a) : (tensor<3x16xf32>) -> (tensor<3x4xf32>, tensor<3x4xi32>)",
    ),
    (
        "custom_approx_topk",
        """(%a: tensor<3x16xf32>, %b: tensor<3x16xi32>, %c: tensor<f32>, %d: tensor<i32>) {
      %0:2 = stablehlo.custom_call @ApproxTopK(%a, %b, %c, %d) : (tensor<3x16xf32>, tensor<3x16xi32>, tensor<f32>, tensor<i32>) -> (tensor<3x4xf32>, tensor<3x4xi32>)""",
    ),
    (
        "custom_x64_combine_rng",
        """(%a: tensor<2xui32>, %b: tensor<2xui32>) {
      %0 = stablehlo.custom_call @X64Combine(%a, %b) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui64>
      %1:2 = stablehlo.rng_bit_generator %0, algorithm = DEFAULT : (tensor<2xui64>) -> (tensor<2xui64>, tensor<4x4xui32>)""",
    ),
    (
        "custom_x64_combine_plain",
        "(%a: tensor<2xui32>, %b: tensor<2xui32>) { %0 = stablehlo.custom_call @X64Combine(%a, %b) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui64>",
    ),
    (
        "custom_unknown_and_silent",
        """(%a: tensor<4xf32>) {
      %0 = stablehlo.custom_call @my_kernel(%a) : (tensor<4xf32>) -> tensor<4xf32>
      %1 = stablehlo.custom_call @xla_python_cpu_callback(%a) : (tensor<4xf32>) -> tensor<4xf32>
      %2 = stablehlo.custom_call @Cholesky(%a) : (tensor<4xf32>) -> tensor<4xf32>
      %3 = stablehlo.custom_call @_SPMDInternalOp_MultiPad(%a) : (tensor<4xf32>) -> tensor<4xf32>""",
    ),
    (
        "sharding_constraint",
        '(%a: tensor<8x4xf32>) { %0 = sdy.sharding_constraint %a <@mesh, [{"x"}, {}]> : tensor<8x4xf32>',
    ),
    (
        "user_rule_wins",
        "(%a: tensor<8x4xf32>) { %0 = stablehlo.tanh %a {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=4} need_replication={j}, custom>} : tensor<8x4xf32>",
    ),
    (
        "no_rule_ops",
        """(%a: tensor<8x4xf32>) {
      %c = stablehlo.constant dense<1.0> : tensor<8x4xf32>
      %i = stablehlo.iota dim = 0 : tensor<8xi32>
      %b:2 = stablehlo.optimization_barrier %a, %c : tensor<8x4xf32>, tensor<8x4xf32>
      %p = stablehlo.partition_id : tensor<ui32>
      %t = stablehlo.after_all : !stablehlo.token
      %r = sdy.reshard %a <@mesh, [{"x"}, {}]> : tensor<8x4xf32>
      %q = sdy.propagation_barrier %a allowed_direction=NONE : tensor<8x4xf32>""",
    ),
    (
        "unknown_ops",
        """(%a: tensor<8x4xf32>, %s: tensor<4xf32>) {
      %0:3 = "stablehlo.batch_norm_training"(%a, %s, %s) {epsilon = 0.001 : f32, feature_index = 1 : i64} : (tensor<8x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<8x4xf32>, tensor<4xf32>, tensor<4xf32>)
      %2 = stablehlo.constant dense<0> : tensor<2xi32>
      %3 = stablehlo.constant dense<1> : tensor<2xi32>
      %1 = stablehlo.real_dynamic_slice %a, %2, %2, %3 : (tensor<8x4xf32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) -> tensor<8x4xf32>""",
    ),
    (
        "while_loop",
        """(%a: tensor<8x4xf32>, %n: tensor<i32>) {
      %0:2 = stablehlo.while(%x = %a, %i = %n) : tensor<8x4xf32>, tensor<i32>
      cond {
        %c = stablehlo.compare LT, %i, %i : (tensor<i32>, tensor<i32>) -> tensor<i1>
        stablehlo.return %c : tensor<i1>
      } do {
        %y = stablehlo.add %x, %x : tensor<8x4xf32>
        stablehlo.return %y, %i : tensor<8x4xf32>, tensor<i32>
      }""",
    ),
    (
        "sort_blocked",
        """(%a: tensor<1x8x1xf32>) {
      %0 = "stablehlo.sort"(%a) ({
      ^bb0(%x: tensor<f32>, %y: tensor<f32>):
        %c = stablehlo.compare GT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
        stablehlo.return %c : tensor<i1>
      }) {dimension = 1 : i64} : (tensor<1x8x1xf32>) -> tensor<1x8x1xf32>""",
    ),
    (
        "pad_shift_no_resize",
        "(%a: tensor<8x4xf32>, %p: tensor<f32>) { %0 = stablehlo.pad %a, %p, low = [1, 0], high = [-1, 2], interior = [0, 0] : (tensor<8x4xf32>, tensor<f32>) -> tensor<8x6xf32>",
    ),
    (
        "reduce_window_no_padding_attr",
        """(%a: tensor<8x4xf32>, %s: tensor<f32>) {
      %0 = "stablehlo.reduce_window"(%a, %s) ({
      ^bb0(%x: tensor<f32>, %y: tensor<f32>):
        %m = stablehlo.add %x, %y : tensor<f32>
        stablehlo.return %m : tensor<f32>
      }) {window_dimensions = array<i64: 1, 2>, window_dilations = array<i64: 1, 2>} : (tensor<8x4xf32>, tensor<f32>) -> tensor<8x2xf32>""",
    ),
    (
        "variadic_all_reduce",
        """(%a: tensor<8x4xf32>, %b: tensor<8x4xf32>) {
      %0:2 = "stablehlo.all_reduce"(%a, %b) ({
      ^bb0(%x: tensor<f32>, %y: tensor<f32>):
        %s = stablehlo.add %x, %y : tensor<f32>
        stablehlo.return %s : tensor<f32>
      }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<8x4xf32>, tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>)""",
    ),
    (
        "dot_general_batch_only",
        """(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) {
      %0 = stablehlo.dot_general %a, %b, batching_dims = [0, 1] x [0, 1], contracting_dims = [] x [] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>""",
    ),
    (
        "regions_and_sdy_ops",
        """(%a: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}, {}]>}, %p: tensor<i32>) {
      %0 = sdy.named_computation<"foo">(%a) (%x: tensor<8x4xf32>) {
        %1 = stablehlo.negate %x : tensor<8x4xf32>
        sdy.return %1 : tensor<8x4xf32>
      } : (tensor<8x4xf32>) -> tensor<8x4xf32>
      %2 = sdy.manual_computation(%a) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%x: tensor<4x4xf32>) {
        %3 = stablehlo.abs %x : tensor<4x4xf32>
        sdy.return %3 : tensor<4x4xf32>
      } : (tensor<8x4xf32>) -> tensor<8x4xf32>
      %4 = "stablehlo.case"(%p) ({
        stablehlo.return %a : tensor<8x4xf32>
      }, {
        %5 = stablehlo.sine %a : tensor<8x4xf32>
        stablehlo.return %5 : tensor<8x4xf32>
      }) : (tensor<i32>) -> tensor<8x4xf32>
      %6 = sdy.all_gather [{"y"}, {}] %a out_sharding=<@mesh, [{"x"}, {}]> : tensor<8x4xf32>""",
    ),
    (
        "conv_dilations",
        """(%x: tensor<1x9x2xf32>, %k: tensor<2x2x4xf32>) {
      %0 = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {stride = [1], lhs_dilate = [2], rhs_dilate = [3]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x9x2xf32>, tensor<2x2x4xf32>) -> tensor<1x14x4xf32>""",
    ),
    (
        "sort_default_and_negative_dimension",
        """(%a: tensor<8x4xf32>) {
      %0 = "stablehlo.sort"(%a) ({
      ^bb0(%x: tensor<f32>, %y: tensor<f32>):
        %c = stablehlo.compare GT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
        stablehlo.return %c : tensor<i1>
      }) : (tensor<8x4xf32>) -> tensor<8x4xf32>
      %1 = "stablehlo.sort"(%a) ({
      ^bb0(%x: tensor<f32>, %y: tensor<f32>):
        %c = stablehlo.compare GT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
        stablehlo.return %c : tensor<i1>
      }) {dimension = -1 : i64} : (tensor<8x4xf32>) -> tensor<8x4xf32>""",
    ),
    (
        "func_call",
        """(%a: tensor<8x4xf32>) {
      %0 = func.call @callee(%a) : (tensor<8x4xf32>) -> tensor<8x4xf32>""",
    ),
]

CALLEE = "  func.func private @callee(%a: tensor<8x4xf32>) -> tensor<8x4xf32> {\n    return %a : tensor<8x4xf32>\n  }\n"


def _table_func(case_id: str, body: str) -> str:
    signature, _, ops = body.partition(") {")
    return f"  func.func @{case_id}{signature.strip()}) {{\n    {ops.strip()}\n    return\n  }}\n"


@pytest.fixture(scope="module")
def table_results() -> dict[bool, tuple[dict[str, RuleList], dict[str, RuleList]]]:
    text = "module {\n" + MESH + CALLEE + "".join(_table_func(i, b) for i, b in TABLE) + "}\n"
    return {c: reference_and_ours(text, c) for c in (False, True)}


@pytest.mark.parametrize("conservative", [False, True], ids=["default", "conservative"])
@pytest.mark.parametrize("case_id", [i for i, _ in TABLE])
def test_table_case_matches_reference(table_results, case_id: str, conservative: bool) -> None:
    reference, ours = table_results[conservative]
    assert reference[case_id], "the reference lost the function"
    assert mismatches(reference[case_id], ours[case_id]) == []


def test_table_exercises_rules_and_no_rules(table_results) -> None:
    reference, _ = table_results[False]
    texts = [r for ops in reference.values() for _, r in ops]
    assert sum(r is not None for r in texts) > 40
    assert sum(r is None for r in texts) > 10


# -- generated cases, one op family per test ----------------------------------------------------


@pytest.mark.parametrize("family", sorted(FAMILIES))
@settings(max_examples=EXAMPLES)
@given(data=st.data())
def test_family_matches_reference(family: str, data: st.DataObject) -> None:
    cases = data.draw(st.lists(FAMILIES[family](), min_size=4, max_size=24), label="cases")
    assert_module_matches(rs.module_text(cases))


@settings(max_examples=EXAMPLES)
@given(st.lists(st.one_of([f() for f in FAMILIES.values()]), min_size=10, max_size=40))
def test_mixed_families_match_reference(cases: list[rs.FuncCase]) -> None:
    assert_module_matches(rs.module_text(cases))
