"""Differential test of `shardwise.verify` against Shardy's verifier (jaxlib's reference).

For every input module the reference (`run_pass(text, None)`, which parses and verifies) and
`verify_module` must give the same verdict; for rejected inputs our message must equal the
reference's diagnostic text (its location prefix removed).

Our loader parses through the reference, so an invalid module cannot be loaded as is. Each
invalid case is therefore loaded in a masked form and then restored in our IR:
- discardable ``sdy.sharding`` / ``sdy.sharding_rule`` are written as ``zz.sharding`` /
  ``zz.sharding_rule`` (names no verifier looks at) and renamed back after loading;
- an inherent attribute (a mesh body, a constraint's sharding, a manual computation's
  shardings) is written ``⟪invalid‖filler⟫``: the reference sees `invalid`, the loader sees the
  valid `filler`, whose value in our IR is then replaced by the parsed `invalid`.
The result is the IR the invalid text describes, built without the reference's verifier -
exactly the situation of a value built in Python.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shardwise.errors import ParseError, VerifyError
from shardwise.io.mlir import load_text, write_text
from shardwise.io.reference import ReferenceError, run_pass
from shardwise.ir import Module, parse_type
from shardwise.mesh import Mesh
from shardwise.propagation.options import PropagationOptions
from shardwise.propagation.propagation_pipeline import propagation_pipeline
from shardwise.sharding import ManualAxes, TensorSharding, TensorShardingPerValue
from shardwise.syntax import (
    parse_manual_axes,
    parse_mesh,
    parse_sharding_per_value,
    parse_tensor_sharding,
)
from shardwise.verify import verify_manual_computation, verify_module

PRELUDE = """\
sdy.mesh @mesh = <["a"=8, "b"=2, "c"=4]>
sdy.mesh @maximal = <[], device_ids=[1]>
sdy.mesh @empty = <[]>
"""

T = "tensor<8x8xf32>"


def arg(sharding: str, type: str = T) -> str:
    """A func whose argument 0 carries `sharding`."""
    return (
        f"func.func @main(%arg0: {type} {{sdy.sharding = {sharding}}}) -> {type} {{\n"
        f"  return %arg0 : {type}\n}}"
    )


def result(sharding: str, type: str = T) -> str:
    return (
        f"func.func @main(%arg0: {type}) -> ({type} {{sdy.sharding = {sharding}}}) {{\n"
        f"  return %arg0 : {type}\n}}"
    )


def op(attrs: str, results: str = T, operands: str = T) -> str:
    """A custom_call on `operands` (comma-separated types) with discardable `attrs`."""
    types = [t.strip() for t in re.split(r",(?![^<]*>)", operands)] if operands else []
    params = ", ".join(f"%p{i}: {t}" for i, t in enumerate(types))
    args = ", ".join(f"%p{i}" for i in range(len(types)))
    count = len(re.split(r",(?![^<]*>)", results)) if results else 0
    name = "" if count == 0 else "%0 = " if count == 1 else f"%0:{count} = "
    return (
        f"func.func @main({params}) {{\n"
        f"  {name}stablehlo.custom_call @foo({args}) {{{attrs}}} : ({operands}) -> ({results})\n"
        "  return\n}"
    )


def manual(
    in_shardings: str,
    out_shardings: str,
    axes: str,
    local: str,
    body: str = "",
    global_type: str = T,
) -> str:
    ret = body or f"sdy.return %x : {local}"
    return (
        f"func.func @main(%arg0: {global_type}) -> {global_type} {{\n"
        f"  %0 = sdy.manual_computation(%arg0) in_shardings=[{in_shardings}] "
        f"out_shardings=[{out_shardings}] manual_axes={{{axes}}} (%x: {local}) {{\n"
        f"    {ret}\n"
        f"  }} : ({global_type}) -> {global_type}\n"
        f"  return %0 : {global_type}\n}}"
    )


INVALID: list[tuple[str, str]] = [
    # -- tensor shardings on a func argument / result ----------------------------------------
    ("unknown-mesh", arg("#sdy.sharding<@other, [{}, {}]>")),
    ("unknown-mesh-quoted", arg('#sdy.sharding<@"odd-1", [{}, {}]>')),
    ("unknown-axis", arg('#sdy.sharding<@mesh, [{"d"}, {}]>')),
    ("unknown-axis-replicated", arg('#sdy.sharding<@mesh, [{}, {}], replicated={"z"}>')),
    ("rank-too-small", arg('#sdy.sharding<@mesh, [{"a"}]>')),
    ("rank-too-big", arg("#sdy.sharding<@mesh, [{}, {}, {}]>")),
    ("duplicate-in-dim", arg('#sdy.sharding<@mesh, [{"a", "a"}, {}]>')),
    ("duplicate-across-dims", arg('#sdy.sharding<@mesh, [{"b"}, {"b"}]>')),
    ("duplicate-dim-replicated", arg('#sdy.sharding<@mesh, [{"c"}, {}], replicated={"c"}>')),
    ("duplicate-sub-axis", arg('#sdy.sharding<@mesh, [{"a":(2)2}, {"a":(2)2}]>')),
    ("replicated-unsorted", arg('#sdy.sharding<@mesh, [{}, {}], replicated={"c", "b"}>')),
    ("unreduced-unsorted", arg('#sdy.sharding<@mesh, [{}, {}], unreduced={"b", "a"}>')),
    (
        "replicated-sub-axes-unsorted",
        arg('#sdy.sharding<@mesh, [{}, {}], replicated={"a":(4)2, "a":(1)2}>'),
    ),
    ("mergeable-sub-axes", arg('#sdy.sharding<@mesh, [{"a":(1)2, "a":(2)4}, {}]>')),
    (
        "mergeable-in-replicated",
        arg('#sdy.sharding<@mesh, [{}, {}], replicated={"a":(1)2, "a":(2)2}>'),
    ),
    ("pre-size-zero", arg('#sdy.sharding<@mesh, [{"a":(0)2}, {}]>')),
    ("pre-size-negative", arg('#sdy.sharding<@mesh, [{"a":(-1)2}, {}]>')),
    ("sub-axis-size-one", arg('#sdy.sharding<@mesh, [{"a":(2)1}, {}]>')),
    ("next-pre-size-not-dividing", arg('#sdy.sharding<@mesh, [{"a":(3)2}, {}]>')),
    ("sub-axis-beyond-axis", arg('#sdy.sharding<@mesh, [{"a":(4)4}, {}]>')),
    ("sub-axis-is-full-axis", arg('#sdy.sharding<@mesh, [{"a":(1)8}, {}]>')),
    ("overlapping-sub-axes", arg('#sdy.sharding<@mesh, [{"a":(1)4}, {"a":(2)4}]>')),
    ("overlap-dim-unreduced", arg('#sdy.sharding<@mesh, [{"c":(1)2}, {}], unreduced={"c":(1)4}>')),
    ("full-and-sub-axis", arg('#sdy.sharding<@mesh, [{"a"}, {"a":(1)2}]>')),
    (
        "full-in-replicated-sub-in-dim",
        arg('#sdy.sharding<@mesh, [{"a":(2)2}, {}], replicated={"a"}>'),
    ),
    ("priority-closed-empty", arg('#sdy.sharding<@mesh, [{}p1, {"a"}]>')),
    ("priority-closed-empty-dim1", arg('#sdy.sharding<@mesh, [{"a"}, {}p0]>')),
    ("maximal-with-dims", arg("#sdy.sharding<@maximal, [{}, {}]>")),
    ("maximal-inline-with-dims", arg("#sdy.sharding<mesh<[], device_ids=[3]>, [{}, {}]>")),
    ("non-shaped-rank", arg("#sdy.sharding<@mesh, [{}]>", "!stablehlo.token")),
    (
        "non-shaped-replicated",
        arg('#sdy.sharding<@mesh, [], replicated={"a"}>', "!stablehlo.token"),
    ),
    ("tuple-of-two", arg("#sdy.sharding<@mesh, [{}]>", "tuple<tensor<8xf32>, tensor<8xf32>>")),
    ("tuple-of-one-rank", arg("#sdy.sharding<@mesh, [{}, {}]>", "tuple<tensor<8xf32>>")),
    ("unranked", arg("#sdy.sharding<@mesh, []>", "tensor<*xf32>")),
    ("func-result-unknown-axis", result('#sdy.sharding<@mesh, [{"q"}, {}]>')),
    ("func-arg-not-a-sharding", arg("1 : i32")),
    ("inline-mesh-unknown-axis", arg('#sdy.sharding<mesh<["x"=2]>, [{"a"}, {}]>')),
    # -- per-value shardings on op results ----------------------------------------------------
    (
        "per-value-count",
        op("sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>, <@mesh, [{}, {}]>]>"),
    ),
    (
        "per-value-single-result",
        op('sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"d"}, {}]>]>'),
    ),
    (
        "per-value-second-result",
        op(
            'sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>, <@mesh, [{"a"}]>]>',
            f"{T}, {T}",
        ),
    ),
    ("per-value-not-a-list", op("sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>")),
    (
        "per-value-no-results-sharded",
        op('sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}]>]>', ""),
    ),
    (
        "per-value-no-results-maximal",
        op("sdy.sharding = #sdy.sharding_per_value<[<@maximal, [{}]>]>", ""),
    ),
    (
        "per-value-no-results-rank",
        op("sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>", ""),
    ),
    # -- sharding constraint / reshard (inherent attribute) -----------------------------------
    (
        "constraint-unknown-axis",
        "func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
        '  %0 = sdy.sharding_constraint %arg0 ⟪<@mesh, [{"e"}]>‖<@mesh, [{"b", ?}]>⟫ : tensor<8xf32>\n'
        "  return %0 : tensor<8xf32>\n}",
    ),
    (
        "reshard-rank",
        "func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
        '  %0 = sdy.reshard %arg0 ⟪<@mesh, [{"a"}, {}]>‖<@mesh, [{"b"}]>⟫ : tensor<8xf32>\n'
        "  return %0 : tensor<8xf32>\n}",
    ),
    # -- manual computations ------------------------------------------------------------------
    (
        "manual-axis-used-inside",
        manual(
            '<@mesh, [{"a"}, {}]>',
            '<@mesh, [{"a"}, {}]>',
            '"a"',
            "tensor<1x8xf32>",
            '%1 = stablehlo.negate %x {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"a"}]>]>}'
            " : tensor<1x8xf32>\n    sdy.return %1 : tensor<1x8xf32>",
        ),
    ),
    (
        "manual-after-free",
        manual(
            '⟪<@mesh, [{"b", "c"}, {}]>‖<@mesh, [{"c", "b"}, {}]>⟫',
            '<@mesh, [{"c", "b"}, {}], replicated={"a"}>',
            '"c"',
            "tensor<2x8xf32>",
        ),
    ),
    (
        "manual-local-shape",
        manual(
            '⟪<@mesh, [{"c"}, {}]>‖<@mesh, [{"b"}, {}]>⟫',
            '<@mesh, [{"b"}, {}], replicated={"a"}>',
            '"b"',
            "tensor<4x8xf32>",
        ),
    ),
    (
        "manual-not-divisible",
        manual(
            '⟪<@mesh, [{"c"}]>‖<@mesh, [{"b"}]>⟫',
            '<@mesh, [{"b"}], replicated={"a"}>',
            '"b"',
            "tensor<3xf32>",
            global_type="tensor<6xf32>",
        ),
    ),
    (
        "manual-unknown-axis",
        manual('<@mesh, [{"b"}, {}]>', '<@mesh, [{"b"}, {}]>', '⟪"b", "x"‖"b"⟫', "tensor<4x8xf32>"),
    ),
    (
        "manual-in-sharding-unknown-axis",
        manual(
            '⟪<@mesh, [{"w"}, {}]>‖<@mesh, [{}, {}]>⟫', '<@mesh, [{}, {}], replicated={"a"}>', "", T
        ),
    ),
    (
        "manual-per-value-count",
        manual(
            "⟪<@mesh, [{}, {}]>, <@mesh, [{}, {}]>‖<@mesh, [{}, {}]>⟫",
            '<@mesh, [{}, {}], replicated={"a"}>',
            "",
            T,
        ),
    ),
    (
        "manual-nested-same-axis",
        manual(
            '<@mesh, [{"a"}, {}]>',
            '<@mesh, [{"a"}, {}]>',
            '"a"',
            "tensor<1x8xf32>",
            "%1 = sdy.manual_computation(%x) in_shardings=[<@mesh, [{}, {}]>] "
            'out_shardings=[<@mesh, [{}, {}]>] manual_axes={⟪"a"‖"b"⟫} (%y: tensor<1x8xf32>) {\n'
            "      sdy.return %y : tensor<1x8xf32>\n"
            "    } : (tensor<1x8xf32>) -> tensor<1x8xf32>\n"
            "    sdy.return %1 : tensor<1x8xf32>",
        ),
    ),
    (
        "manual-result-local-shape",
        manual(
            '<@mesh, [{"b"}, {}]>',
            '⟪<@mesh, [{}, {"b"}]>‖<@mesh, [{"b"}, {}], replicated={"c"}>⟫',
            '"b"',
            "tensor<4x8xf32>",
        ),
    ),
    (
        "manual-out-sharding-bad-sub-axis",
        manual("<@mesh, [{}, {}]>", '⟪<@mesh, [{"c":(1)4}, {}]>‖<@mesh, [{"c"}, {}]>⟫', "", T),
    ),
    # -- named computations and data-flow edges ----------------------------------------------
    (
        "named-computation-in",
        "func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
        '  %0 = sdy.named_computation<"foo">(%arg0) in_shardings=[⟪<@mesh, [{"q"}]>‖<@mesh, [{"a", ?}]>⟫]'
        ' out_shardings=[<@mesh, [{"a"}]>] (%x: tensor<8xf32>) {\n'
        "    sdy.return %x : tensor<8xf32>\n"
        "  } : (tensor<8xf32>) -> tensor<8xf32>\n"
        "  return %0 : tensor<8xf32>\n}",
    ),
    (
        "named-computation-out",
        "func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
        '  %0 = sdy.named_computation<"foo">(%arg0) in_shardings=[<@mesh, [{"a"}]>]'
        ' out_shardings=[⟪<@mesh, [{"a"}, {}]>‖<@mesh, [{"b"}]>⟫] (%x: tensor<8xf32>) {\n'
        "    sdy.return %x : tensor<8xf32>\n"
        "  } : (tensor<8xf32>) -> tensor<8xf32>\n"
        "  return %0 : tensor<8xf32>\n}",
    ),
    (
        "data-flow-edge",
        "func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
        '  %0 = sdy.data_flow_edge %arg0 sharding=⟪<@mesh, [{"q"}]>‖<@mesh, [{"a"}]>⟫ : tensor<8xf32>\n'
        "  return %0 : tensor<8xf32>\n}",
    ),
    (
        "collective-out-sharding",
        "func.func @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {\n"
        '  %c = sdy.sharding_constraint %arg0 <@mesh, [{"a"}, {"b"}]> : tensor<8x8xf32>\n'
        '  %0 = sdy.all_gather [{}, {"b"}] %c out_sharding=⟪<@mesh, [{"q"}, {}]>‖<@mesh, [{"a"}, {}]>⟫'
        " : tensor<8x8xf32>\n"
        "  return %0 : tensor<8x8xf32>\n}",
    ),
    # -- op sharding rules --------------------------------------------------------------------
    (
        "rule-operand-count",
        op("sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=8, j=8}>"),
    ),
    (
        "rule-result-count",
        op("sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j], [i, j]) {i=8, j=8}>"),
    ),
    ("rule-rank", op("sdy.sharding_rule = #sdy.op_sharding_rule<([i])->([i, j]) {i=8, j=8}>")),
    (
        "rule-factor-out-of-range",
        op("sdy.sharding_rule = #sdy.op_sharding_rule<([i, k])->([i, j]) {i=8, j=8}>"),
    ),
    (
        "rule-factor-reuse",
        op("sdy.sharding_rule = #sdy.op_sharding_rule<([i, i])->([i, j]) {i=8, j=8}>"),
    ),
    (
        "rule-size-one-in-compound",
        op("sdy.sharding_rule = #sdy.op_sharding_rule<([i, jk])->([i, jk]) {i=8, j=8, k=1}>"),
    ),
    (
        "rule-unused-factor",
        op("sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=8, k=3}>"),
    ),
    (
        "rule-reduction-unsorted",
        op(
            "sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=8} permutation={j, i}>"
        ),
    ),
    (
        "rule-reduction-duplicate",
        op(
            "sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=8} need_replication={i, i}>"
        ),
    ),
    (
        "rule-index-too-big",
        op(
            "sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=8} permutation={m}>"
        ),
    ),
    (
        "rule-two-kinds",
        op(
            "sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=8} need_replication={i} permutation={i}>"
        ),
    ),
    (
        "rule-reduction-in-result",
        op(
            "sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=8} reduction={j}>"
        ),
    ),
    (
        "rule-blocked-unsorted",
        op(
            "sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=8} blocked_propagation={j, i}>"
        ),
    ),
    (
        "rule-dynamic-operand",
        op(
            "sdy.sharding_rule = #sdy.op_sharding_rule<([i])->([i]) {i=8}>",
            "tensor<8xf32>",
            "tensor<?xf32>",
        ),
    ),
    (
        "rule-second-operand-rank",
        op(
            "sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [i])->([i, j]) {i=8, j=8}>",
            T,
            f"{T}, {T}",
        ),
    ),
    ("rule-not-a-rule", op("sdy.sharding_rule = #sdy.sharding<@mesh, [{}, {}]>")),
    # -- two errors: which one is reported first ---------------------------------------------
    (
        "order-op-attr-before-earlier-constraint",
        "func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
        '  %0 = sdy.sharding_constraint %arg0 ⟪<@mesh, [{"e"}]>‖<@mesh, [{"b"}]>⟫ : tensor<8xf32>\n'
        '  %1 = stablehlo.negate %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"f"}]>]>}'
        " : tensor<8xf32>\n"
        "  return %1 : tensor<8xf32>\n}",
    ),
    (
        "order-pre-order-ops",
        'func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"g"}]>})'
        " -> tensor<8xf32> {\n"
        '  %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"f"}]>]>}'
        " : tensor<8xf32>\n"
        "  return %0 : tensor<8xf32>\n}",
    ),
    (
        "order-mesh-before-everything",
        'sdy.mesh @m2 = ⟪<["x"=0]>‖<["x"=1]>⟫\n'
        'func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"g"}]>})'
        " -> tensor<8xf32> {\n"
        "  return %arg0 : tensor<8xf32>\n}",
    ),
    # -- meshes (attribute-level: no op prefix) -----------------------------------------------
    ("mesh-axis-size-zero", 'sdy.mesh @m2 = ⟪<["x"=0]>‖<["x"=1]>⟫'),
    ("mesh-duplicate-axis", 'sdy.mesh @m2 = ⟪<["x"=2, "x"=2]>‖<["x"=2, "y"=2]>⟫'),
    (
        "mesh-device-count",
        'sdy.mesh @m2 = ⟪<["x"=2], device_ids=[1, 0, 2]>‖<["x"=2], device_ids=[1, 0]>⟫',
    ),
    (
        "mesh-not-permutation",
        'sdy.mesh @m2 = ⟪<["x"=3], device_ids=[0, 2, 3]>‖<["x"=3], device_ids=[2, 1, 0]>⟫',
    ),
    ("mesh-negative-id", "sdy.mesh @m2 = ⟪<[], device_ids=[-2]>‖<[], device_ids=[2]>⟫"),
    ("mesh-empty-two-ids", "sdy.mesh @m2 = ⟪<[], device_ids=[0, 1]>‖<[], device_ids=[0]>⟫"),
]

VALID: list[tuple[str, str]] = [
    ("open-and-priorities", arg('#sdy.sharding<@mesh, [{"a", ?}p0, {?}p3]>')),
    (
        "sub-axes",
        arg('#sdy.sharding<@mesh, [{"a":(1)2, "c"}, {"a":(4)2}], replicated={"a":(2)2, "b"}>'),
    ),
    ("non-adjacent-sub-axes", arg('#sdy.sharding<@mesh, [{"a":(1)2, "b", "a":(2)2}, {}]>')),
    ("sub-axes-unmergeable-order", arg('#sdy.sharding<@mesh, [{"a":(2)2, "a":(1)2}, {}]>')),
    ("unreduced", arg('#sdy.sharding<@mesh, [{"b"}, {}], replicated={"a"}, unreduced={"c"}>')),
    (
        "replicated-sorted",
        arg('#sdy.sharding<@mesh, [{}, {}], replicated={"a":(1)2, "a":(4)2, "c"}>'),
    ),
    ("non-divisible", arg('#sdy.sharding<@mesh, [{"a", "b", "c"}, {}]>', "tensor<3x5xf32>")),
    ("dynamic-dim", arg('#sdy.sharding<@mesh, [{"a"}, {}]>', "tensor<?x8xf32>")),
    ("scalar", arg("#sdy.sharding<@mesh, []>", "tensor<f32>")),
    ("maximal", arg("#sdy.sharding<@maximal, []>")),
    ("token", arg("#sdy.sharding<@mesh, []>", "!stablehlo.token")),
    ("tuple-of-one", arg('#sdy.sharding<@mesh, [{"a"}]>', "tuple<tensor<8xf32>>")),
    (
        "inline-mesh",
        arg(
            '#sdy.sharding<mesh<["x"=2, "y"=4], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]>, [{"y":(2)2}, {"x"}]>'
        ),
    ),
    ("empty-mesh", arg("#sdy.sharding<@empty, [{}, {}]>")),
    ("func-result", result('#sdy.sharding<@mesh, [{}, {"c", "b"}]>')),
    (
        "per-value-two",
        op(
            'sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}, {}]>, <@mesh, [{}]>]>',
            f"{T}, tensor<4xf32>",
        ),
    ),
    (
        "per-value-no-results-replicated",
        op("sdy.sharding = #sdy.sharding_per_value<[<@mesh, []>]>", ""),
    ),
    (
        "rule-dot",
        op(
            "sdy.sharding_rule = #sdy.op_sharding_rule<([i, k], [k, j])->([i, j]) {i=8, j=8, k=8} reduction={k}>",
            T,
            f"{T}, {T}",
        ),
    ),
    (
        "rule-all-kinds",
        op(
            "sdy.sharding_rule = #sdy.op_sharding_rule<([ij, k])->([ij, l]) {i=2, j=4, k=8, l=8}"
            " reduction={k} need_replication={l} permutation={i} blocked_propagation={i, k}, custom>",
            T,
        ),
    ),
    (
        "rule-size-one-alone",
        op("sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=1, j=8}>"),
    ),
    (
        "constraint",
        "func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
        '  %0 = sdy.sharding_constraint %arg0 <@mesh, [{"a", ?}]> : tensor<8xf32>\n'
        '  %1 = sdy.reshard %0 <@mesh, [{"c":(2)2}]> : tensor<8xf32>\n'
        "  return %1 : tensor<8xf32>\n}",
    ),
    (
        "manual",
        manual('<@mesh, [{"b", "c"}, {}]>', '<@mesh, [{"b", "a"}, {}]>', '"b"', "tensor<4x8xf32>"),
    ),
    ("manual-no-axes", manual('<@mesh, [{"a"}, {}]>', "<@mesh, [{}, {}]>", "", T)),
    (
        "manual-nested",
        manual(
            '<@mesh, [{"a"}, {}]>',
            '<@mesh, [{"a"}, {}]>',
            '"a"',
            "tensor<1x8xf32>",
            '%1 = sdy.manual_computation(%x) in_shardings=[<@mesh, [{}, {"b"}]>] '
            'out_shardings=[<@mesh, [{}, {"b"}]>] manual_axes={"b"} (%y: tensor<1x4xf32>) {\n'
            "      sdy.return %y : tensor<1x4xf32>\n"
            "    } : (tensor<1x8xf32>) -> tensor<1x8xf32>\n"
            "    sdy.return %1 : tensor<1x8xf32>",
        ),
    ),
    ("mesh-permuted", 'sdy.mesh @m2 = <["x"=2, "y"=2], device_ids=[0, 2, 1, 3]>'),
    ("mesh-size-one", 'sdy.mesh @m2 = <["x"=1]>'),
]

_MARKED = re.compile(r"⟪(.*?)‖(.*?)⟫", re.S)
_LOC_PREFIX = re.compile(r"^loc\([^)]*\): ")
# Meshes are verified while the reference parses them; the parser adds this context.
_PARSE_CONTEXT = "custom op 'sdy.mesh' "


def reference_text(case: str) -> str:
    return PRELUDE + _MARKED.sub(lambda m: m.group(1), case)


def reference_message(text: str) -> str | None:
    """None if the reference accepts `text`, else its first diagnostic without location."""
    try:
        run_pass(text, None)
    except ReferenceError as err:
        message = _LOC_PREFIX.sub("", err.diagnostics[0] if err.diagnostics else str(err))
        return message.removeprefix(_PARSE_CONTEXT)
    return None


def _parse_like(value: object, text: str) -> object | None:
    """`text` (pretty syntax of an inherent attribute) parsed as the kind of `value`."""
    try:
        if isinstance(value, TensorShardingPerValue):
            return parse_sharding_per_value(f"<[{text}]>")
        if isinstance(value, ManualAxes):
            return parse_manual_axes("{" + text + "}")
        if isinstance(value, Mesh):
            return parse_mesh(text)
        if isinstance(value, TensorSharding):
            return parse_tensor_sharding(text)
    except ParseError:
        pass  # a different kind of attribute
    return None


def our_module(case: str) -> Module:
    """The IR of the case's text, built without the reference's verifier (see module doc)."""
    masked = _MARKED.sub(lambda m: m.group(2), case)
    masked = masked.replace("sdy.sharding =", "zz.sharding =").replace(
        "sdy.sharding_rule =", "zz.sharding_rule ="
    )
    module = load_text(PRELUDE + masked)
    swaps = [(m.group(2), m.group(1)) for m in _MARKED.finditer(case)]
    replaced: list[int] = []
    for op in module.walk():
        _unmask(op.attributes)
        for dicts in (op.properties.get("arg_attrs"), op.properties.get("res_attrs")):
            for entry in getattr(dicts, "elements", []):
                _unmask(entry.entries)
        for key, value in op.properties.items():
            for index, (filler, invalid) in enumerate(swaps):
                if value == _parse_like(value, filler):
                    op.properties[key] = _parse_like(value, invalid)
                    replaced.append(index)
    assert sorted(replaced) == list(range(len(swaps))), "each filler must occur exactly once"
    return module


def _unmask(attrs: dict[str, object]) -> None:
    for key in list(attrs):
        if key.startswith("zz."):
            attrs["sdy." + key[3:]] = attrs.pop(key)


def our_message(module: Module) -> str | None:
    try:
        verify_module(module)
    except VerifyError as err:
        return err.message
    return None


@pytest.mark.parametrize("case", [c for _, c in INVALID], ids=[i for i, _ in INVALID])
def test_invalid_case_rejected_with_reference_message(case: str) -> None:
    expected = reference_message(reference_text(case))
    assert expected is not None, "the reference accepts this case; it is not an invalid case"
    assert our_message(our_module(case)) == expected


@pytest.mark.parametrize("case", [c for _, c in VALID], ids=[i for i, _ in VALID])
def test_valid_case_accepted(case: str) -> None:
    assert reference_message(reference_text(case)) is None
    assert our_message(our_module(case)) is None


def test_enough_invalid_cases() -> None:
    assert len(INVALID) >= 40
    assert len({i for i, _ in INVALID}) == len(INVALID)


# -- hypothesis: random shardings, same verdict and message ----------------------------------
# Sub-axes only of "a": Shardy checks the sub-axes of different names in hash-map order, so
# with two names carrying bad sub-axes the first error reported is not specified.

RANDOM_PRELUDE = """\
sdy.mesh @mesh = <["a"=8, "b"=2, "c"=4, "d"=1]>
sdy.mesh @maximal = <[], device_ids=[1]>
"""
_AXIS_NAMES = ["a", "b", "c", "d", "e"]  # "d" has size 1, "e" is not in the mesh


@st.composite
def random_axis(draw: st.DrawFn) -> str:
    name = draw(st.sampled_from(_AXIS_NAMES))
    if name != "a" or draw(st.booleans()):
        return f'"{name}"'
    pre = draw(st.sampled_from([0, 1, 2, 3, 4, 8]))
    size = draw(st.sampled_from([1, 2, 3, 4, 8]))
    return f'"a":({pre}){size}'


@st.composite
def random_sharding(draw: st.DrawFn) -> tuple[str, str]:
    """(sharding text, tensor type) - often invalid, sometimes valid."""
    rank = draw(st.integers(0, 3))
    type_rank = rank if draw(st.integers(0, 9)) else draw(st.integers(0, 3))
    dims = []
    for _ in range(rank):
        axes = draw(st.lists(random_axis(), max_size=2))
        open_ = draw(st.booleans())
        items = ", ".join(axes + (["?"] if open_ else []))
        priority = draw(st.sampled_from(["", "", "p0", "p2"]))
        dims.append("{" + items + "}" + priority)
    text = "<@mesh, [" + ", ".join(dims) + "]"
    for clause in ("replicated", "unreduced"):
        axes = draw(st.lists(random_axis(), max_size=2))
        if axes:
            text += f", {clause}={{" + ", ".join(axes) + "}"
    mesh = draw(st.sampled_from(["@mesh", "@mesh", "@mesh", "@maximal", "@nope"]))
    text = "#sdy.sharding" + text.replace("@mesh", mesh, 1) + ">"
    type = "tensor<" + "".join("8x" for _ in range(type_rank)) + "f32>"
    return text, type


@settings(max_examples=100)
@given(random_sharding())
def test_random_sharding_same_verdict_and_message(case: tuple[str, str]) -> None:
    sharding, type = case
    text = RANDOM_PRELUDE + arg(sharding, type)
    expected = reference_message(text)
    masked = text.replace("sdy.sharding =", "zz.sharding =")
    module = load_text(masked)
    for entry in module.funcs[0].properties["arg_attrs"].elements:
        _unmask(entry.entries)
    assert our_message(module) == expected


# -- real programs: no false rejections ------------------------------------------------------

MODELS = sorted((Path(__file__).parent.parent / "models" / "data").glob("*.mlir"))


@pytest.mark.parametrize("path", MODELS, ids=[p.stem for p in MODELS])
def test_model_verifies_before_and_after_reference_propagation(path: Path) -> None:
    """The reference accepts these modules, so must we - also once Shardy has sharded them."""
    text = path.read_text()
    verify_module(load_text(text))
    verify_module(load_text(run_pass(text, "sdy-propagation-pipeline")))


# -- hypothesis: random op sharding rules ------------------------------------------------------


_SYMBOLS = "ijklmn"


@st.composite
def random_rule_case(draw: st.DrawFn) -> tuple[str, str, str]:
    """(rule text, operand types, result types): a valid rule, often with one flaw."""
    n = draw(st.integers(1, 4))
    count = draw(st.integers(2, 3))
    sizes = [draw(st.sampled_from([1, 2, 8])) for _ in range(n)]
    flaw = draw(
        st.sampled_from(["none", "none", "reuse", "range", "rank", "count", "size1", "unused"])
    )
    homes = [draw(st.sets(st.integers(0, count - 1), min_size=1)) for _ in range(n)]
    order = draw(st.permutations(range(n)))
    all_dims: list[list[list[int]]] = []
    for t in range(count):
        dims: list[list[int]] = []
        for f in (f for f in order if t in homes[f]):
            if dims and sizes[f] > 1 and sizes[dims[-1][-1]] > 1 and draw(st.booleans()):
                dims[-1].append(f)  # compound dimension
            else:
                dims.append([f])
        all_dims.append(dims)
    if flaw == "reuse":
        all_dims[0].append([0])
    elif flaw == "range":
        all_dims[0].append([n])
    elif flaw == "size1":
        all_dims[0].append([0, n])
        sizes.append(1)
    elif flaw == "unused":
        sizes.append(4)

    def size_of(f: int) -> int:
        return sizes[f] if f < len(sizes) else 5

    types = [
        "tensor<" + "".join(f"{math.prod(size_of(f) for f in d)}x" for d in dims) + "f32>"
        for dims in all_dims
    ]
    if flaw == "rank":
        types[-1] = types[-1].replace("tensor<", "tensor<3x")
    maps = [
        "[" + ", ".join("".join(_SYMBOLS[f] for f in d) for d in dims) + "]" for dims in all_dims
    ]
    split = draw(st.integers(1, count - 1))
    operand_types, result_types = types[:split], types[split:]
    if flaw == "count":
        operand_types = operand_types + ["tensor<8xf32>"]
    text = f"({', '.join(maps[:split])})->({', '.join(maps[split:])})"
    text += " {" + ", ".join(f"{_SYMBOLS[i]}={size}" for i, size in enumerate(sizes)) + "}"
    for label in ("reduction", "need_replication", "permutation", "blocked_propagation"):
        chosen = sorted(draw(st.sets(st.integers(0, len(sizes) - 1), max_size=2)))
        if draw(st.integers(0, 7)) == 0:
            chosen = chosen[::-1] + draw(st.lists(st.integers(0, len(sizes)), max_size=1))
        if chosen:
            text += f" {label}={{" + ", ".join(_SYMBOLS[f] for f in chosen) + "}"
    return f"#sdy.op_sharding_rule<{text}>", ", ".join(operand_types), ", ".join(result_types)


@settings(max_examples=100)
@given(random_rule_case())
def test_random_rule_same_verdict_and_message(case: tuple[str, str, str]) -> None:
    rule, operands, results = case
    text = op(f"sdy.sharding_rule = {rule}", results, operands)
    module = load_text(PRELUDE + text.replace("sdy.sharding_rule =", "zz.sharding_rule ="))
    for each in module.walk():
        _unmask(each.attributes)
    assert our_message(module) == reference_message(PRELUDE + text)


# -- hypothesis: random manual computations, checked at the API level ---------------------------
# Our side calls `verify_manual_computation` on values (no IR needed), the reference verifies
# the same computation written as text.

_MANUAL_MESH = parse_mesh('<["a"=8, "b"=2, "c"=4]>')
# Sub-axes of "a" only, for the reason given above the random sharding test.
_MANUAL_POOL = ['"a"', '"b"', '"c"', '"a":(1)2', '"a":(2)4', '"a":(4)2']


@st.composite
def random_manual_case(draw: st.DrawFn) -> tuple[str, str, list[str], str, str]:
    """(in sharding, out sharding, manual axes, global type, local type)."""
    shape = [draw(st.sampled_from([6, 8])), 8]

    def sharding() -> str:
        dims = [
            draw(st.lists(st.sampled_from(_MANUAL_POOL), max_size=2, unique=True)) for _ in shape
        ]
        return "<@mesh, [" + ", ".join("{" + ", ".join(d) + "}" for d in dims) + "]>"

    in_sharding, out_sharding = sharding(), sharding()
    manual = sorted(draw(st.sets(st.sampled_from(["a", "b", "c", "x"]), max_size=2)))
    local = list(shape)
    in_value = parse_tensor_sharding(in_sharding)
    for dim, dim_sharding in enumerate(in_value.dim_shardings):
        for axis in dim_sharding.axes:
            if axis.name in manual:
                local[dim] = max(local[dim] // axis.size(_MANUAL_MESH), 1)
    if not draw(st.integers(0, 5)):
        local[0] += 1
    as_type = lambda dims: "tensor<" + "".join(f"{d}x" for d in dims) + "f32>"  # noqa: E731
    return in_sharding, out_sharding, manual, as_type(shape), as_type(local)


@settings(max_examples=100)
@given(random_manual_case())
def test_random_manual_computation_same_verdict_and_message(
    case: tuple[str, str, list[str], str, str],
) -> None:
    in_sharding, out_sharding, manual_axes, global_type, local_type = case
    axes = ", ".join(f'"{a}"' for a in manual_axes)
    text = 'sdy.mesh @mesh = <["a"=8, "b"=2, "c"=4]>\n' + manual(
        in_sharding, out_sharding, axes, local_type, global_type=global_type
    )
    expected = reference_message(text)
    global_ = parse_type(global_type)
    local = parse_type(local_type)
    try:
        verify_manual_computation(
            parse_sharding_per_value(f"<[{in_sharding}]>"),
            parse_sharding_per_value(f"<[{out_sharding}]>"),
            ManualAxes(tuple(manual_axes)),
            ([global_], [local], [global_], [local]),
            {"mesh": _MANUAL_MESH},
        )
        ours = None
    except VerifyError as err:
        ours = "'sdy.manual_computation' op " + err.message
    assert ours == expected


# -- valid modules that the pipeline makes invalid --------------------------------------------
# `sdy-import-func-calls` inlines a call made in a manual computation's body (a jit inside a
# shard_map) and Shardy verifies after every pass: a callee naming an axis the body has made
# manual is rejected there, though the input verifies. Fuzzer seed 11-205 found the first case
# (a manual computation in the callee, the outer manual axis one of its free axes).

_INLINED_CALL = """module {
  sdy.mesh @mesh = <["a"=2, "b"=2]>
  func.func @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"a"}, {}]>] out_shardings=[<@mesh, [{"a"}, {}]>] manual_axes={"a"} (%x: tensor<4x8xf32>) {
      %1 = func.call @f(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
      sdy.return %1 : tensor<4x8xf32>
    } : (tensor<8x8xf32>) -> tensor<8x8xf32>
    return %0 : tensor<8x8xf32>
  }
  func.func private @f(%y: tensor<4x8xf32>ARG) -> tensor<4x8xf32> {
BODY
  }
}
"""


def _callee_manual(in_sharding: str, out_sharding: str, axis: str, local: str, out: str) -> str:
    return (
        f"    %2 = sdy.manual_computation(%y) in_shardings=[{in_sharding}] "
        f"out_shardings=[{out_sharding}] manual_axes={{{axis}}} (%z: {local}) {{\n"
        f"      sdy.return %z : {local}\n"
        f"    }} : (tensor<4x8xf32>) -> {out}\n"
    )


_RETURN_2 = "    return %2 : tensor<4x8xf32>"
# name -> (callee body, callee argument attributes)
INLINED_INVALID: dict[str, tuple[str, str]] = {
    "inner-manual-free-axis-in-result": (
        _callee_manual("<@mesh, [{}, {}]>", '<@mesh, [{"b"}, {"a"}]>', '"b"', "tensor<4x8xf32>", T)
        + "    %3 = stablehlo.slice %2 [0:4, 0:8] : (tensor<8x8xf32>) -> tensor<4x8xf32>\n"
        + "    return %3 : tensor<4x8xf32>",
        "",
    ),
    "inner-manual-free-axis-in-operand": (
        _callee_manual(
            '<@mesh, [{}, {"a"}]>', "<@mesh, [{}, {}]>", '"b"', "tensor<4x8xf32>", "tensor<4x8xf32>"
        )
        + _RETURN_2,
        "",
    ),
    "inner-manual-same-manual-axis": (
        _callee_manual(
            '<@mesh, [{"a"}, {}]>',
            '<@mesh, [{"a"}, {}]>',
            '"a"',
            "tensor<2x8xf32>",
            "tensor<4x8xf32>",
        )
        + _RETURN_2,
        "",
    ),
    "constraint": (
        '    %2 = sdy.sharding_constraint %y <@mesh, [{}, {"a"}]> : tensor<4x8xf32>\n' + _RETURN_2,
        "",
    ),
    "op-sharding": (
        "    %2 = stablehlo.negate %y {sdy.sharding = #sdy.sharding_per_value<"
        '[<@mesh, [{}, {"a"}]>]>} : tensor<4x8xf32>\n' + _RETURN_2,
        "",
    ),
    "callee-argument": (
        "    return %y : tensor<4x8xf32>",
        ' {sdy.sharding = #sdy.sharding<@mesh, [{}, {"a"}]>}',
    ),
}
_NOTE = re.compile(r'note: "-":(\d+):(\d+): parent bounding this axis as manual')


def _inlined_call_module(body: str, arg_attrs: str) -> str:
    return _INLINED_CALL.replace("ARG", arg_attrs).replace("BODY", body)


@pytest.mark.parametrize("case", sorted(INLINED_INVALID))
def test_pipeline_rejects_a_callee_naming_the_callers_manual_axes(case: str) -> None:
    text = _inlined_call_module(*INLINED_INVALID[case])
    assert reference_message(text) is None, "the input itself must verify"
    with pytest.raises(ReferenceError) as ref:
        run_pass(text, "sdy-propagation-pipeline")
    with pytest.raises(VerifyError) as ours:
        propagation_pipeline(load_text(text, "-"))
    loc = ours.value.location
    assert f'loc("-":{loc.line}:{loc.col}): {ours.value.message}' == ref.value.diagnostics[0]
    parent = _NOTE.search(str(ref.value))
    assert parent is not None
    assert ours.value.notes == (f"-:{parent[1]}:{parent[2]}: parent bounding this axis as manual",)


def test_pipeline_accepts_a_callee_naming_only_free_axes() -> None:
    body = _callee_manual(
        '<@mesh, [{"b"}, {}]>', '<@mesh, [{"b"}, {}]>', '"b"', "tensor<2x8xf32>", "tensor<4x8xf32>"
    )
    text = _inlined_call_module(body + _RETURN_2, "")
    module = load_text(text, "-")
    propagation_pipeline(module)
    assert write_text(module) == run_pass(text, "sdy-propagation-pipeline")


# In dedup mode (``dedup-functions-fully=true``) nothing is inlined: the call stays in the
# body and its func data-flow edge takes the callee's sharding during propagation, which Shardy's
# verifier rejects right after ``sdy-user-priority-propagate``.
DEDUP_PIPELINE = "sdy-propagation-pipeline{dedup-functions-fully=true}"


# In one case (inner-manual-free-axis-in-operand) the reference rejects later: a reshard to the
# callee's argument sharding that ``sdy-insert-explicit-reshards`` puts in the body.
@pytest.mark.parametrize("case", sorted(INLINED_INVALID))
def test_dedup_pipeline_rejects_a_callee_naming_the_callers_manual_axes(case: str) -> None:
    text = _inlined_call_module(*INLINED_INVALID[case])
    with pytest.raises(ReferenceError) as ref:
        run_pass(text, DEDUP_PIPELINE)
    with pytest.raises(VerifyError) as ours:
        propagation_pipeline(load_text(text, "-"), PropagationOptions(dedup_functions_fully=True))
    loc = ours.value.location
    assert f'loc("-":{loc.line}:{loc.col}): {ours.value.message}' == ref.value.diagnostics[0]
    parent = _NOTE.search(str(ref.value))
    assert parent is not None
    assert ours.value.notes == (f"-:{parent[1]}:{parent[2]}: parent bounding this axis as manual",)
