"""Differential test of `sdy-convert-global-to-local` against Shardy's pass (jaxlib 0.10.2).

Each case is a function in the form the export pipeline leaves it (shardings on values, sdy
collectives from reshard-to-collectives); the reference runs the pass and prints the module, we
load the same text, run ours and print it through MLIR: the texts must be equal. Where the
reference rejects a module (its pass fails, or the verifier after it does), ours must raise a
`ShardwiseError` naming the same op; modules on which the reference aborts run in a child
process. A second group runs the reference's propagation pipeline, full explicit reshards and
reshard-to-collectives on small programs first, then compares the conversion of that output.
"""

from __future__ import annotations

import pytest

from shardwise.errors import ShardwiseError, UnsupportedError
from shardwise.io.mlir import load_text, write_text
from shardwise.io.reference import ReferenceError, run_pass, run_pass_isolated
from shardwise.passes import run_pass as run_ours

PASS = "sdy-convert-global-to-local"

_MESHES = """  sdy.mesh @mesh = <["x"=2, "y"=4]>
  sdy.mesh @m3 = <["x"=2, "y"=2, "z"=2]>
  sdy.mesh @perm = <["x"=2, "y"=4], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]>
"""


def _module(*funcs: str) -> str:
    return "module {\n" + _MESHES + "\n".join(funcs) + "\n}\n"


def _ours(text: str, spec: str = PASS) -> str:
    module = load_text(text)
    run_ours(module, spec)
    return write_text(module)


def _first_difference(ours: str, expected: str) -> str:
    for a, b in zip(ours.splitlines(), expected.splitlines(), strict=False):
        if a != b:
            return f"\nours:      {a.strip()}\nreference: {b.strip()}"
    return "\n(lengths differ)"


def _check(text: str, spec: str = PASS) -> None:
    try:
        expected = run_pass(text, spec)
    except ReferenceError as e:
        with pytest.raises(ShardwiseError) as ours:  # from the pass, not from writing
            run_ours(load_text(text), spec)
        _same_op(e.diagnostics[0], str(ours.value))
        return
    ours_text = _ours(text, spec)
    assert ours_text == expected, _first_difference(ours_text, expected)


def _same_op(reference: str, ours: str) -> None:
    """Both errors name the same op (the reference's message follows its location)."""
    message = reference.split(": ", 1)[1]
    if message.startswith("expect operands"):  # the while verifier names no op
        assert "stablehlo.while" in ours, (reference, ours)
        return
    if "'" not in message:  # a shape inference message names no op: ours has its words
        assert message in ours, (reference, ours)
        return
    name = message.split("'")[1]
    assert name in ours, (reference, ours)


def _main(args: str, results: str, body: str) -> str:
    return f"  func.func @main({args}) -> ({results}) {{\n{body}\n  }}"


def _s(dims: str, mesh: str = "mesh", extra: str = "") -> str:
    return f"#sdy.sharding<@{mesh}, {dims}{extra}>"


def _pv(dims: str, mesh: str = "mesh") -> str:
    return f"{{sdy.sharding = #sdy.sharding_per_value<[<@{mesh}, {dims}>]>}}"


def _t(shape: str, dims: str | None = None, mesh: str = "mesh", extra: str = "") -> str:
    if dims is None:
        return f"tensor<{shape}>"
    return f"tensor<{shape}> {{sdy.sharding = {_s(dims, mesh, extra)}}}"


def _chain(in_dims: str, body: str, out_type: str, shape: str = "8x16xf32", mesh: str = "mesh"):
    """One function: %arg0 (global `shape`, sharded `in_dims`) through `body`."""
    return _module(_main(f"%arg0: {_t(shape, in_dims, mesh)}", out_type, body))


_C0 = _pv('[{"x"}, {"y"}, {}]')
_C1 = _pv('[{"y"}, {"x"}, {}]')
_C2 = _pv('[{"y"}, {"x"}]')
_C3 = _pv('[{}, {"y"}, {"x"}]')
_C4 = _t("4x8x16xf32", '[{}, {"x"}, {"y"}]')
_C5 = _t("4x16x32xf32", '[{}, {"y"}, {}]')
_C6 = _pv('[{}, {"x"}, {}]')
_C7 = _t("16x32xf32", '[{"y"}, {}]')
_C8 = _pv('[{"x"}, {}]')
_C9 = _pv('[{}, {"y"}]')
_C10 = _pv('[{"x"}, {"y"}]')
_C11 = _t("8xf32", '[{"x"}]')
_C12 = _pv('[{"x"}]')
_C13 = _t("7xf32", '[{"x"}]')
_C14 = _t("8x16xf32", '[{"x"}, {"y"}]')
_C15 = _t("16x16xf32", '[{"x", "y"}, {}]', "m3")
T = "tensor<8x16xf32>"
XY = '[{"x"}, {"y"}]'
R2 = "[{}, {}]"

HAND: list[tuple[str, str, str]] = [
    (
        "elementwise-unsharded-and-replicated",
        _module(
            _main(
                f"%arg0: {_t('8x16xf32', XY)}, %arg1: {T}, %arg2: {_t('8x16xf32', R2)}",
                f"{_t('8x16xf32', XY)}, {T}",
                f"""    %0 = stablehlo.multiply %arg0, %arg0 {_pv(XY)} : {T}
    %1 = stablehlo.negate %0 {_pv(XY)} : {T}
    %2 = stablehlo.add %arg1, %arg2 : {T}
    return %1, %2 : {T}, {T}""",
            )
        ),
        PASS,
    ),
    (
        "replicated-and-unreduced-axes-do-not-shrink",
        _chain(
            '[{"x"}, {}], replicated={"y"}',
            f"""    %0 = stablehlo.add %arg0, %arg0 {{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{{"x"}}, {{}}], unreduced={{"y"}}>]>}} : {T}
    %1 = sdy.all_reduce {{"y"}} %0 out_sharding=<@mesh, [{{"x"}}, {{}}]> : {T}
    return %1 : {T}""",
            _t("8x16xf32", '[{"x"}, {}]'),
        ),
        PASS,
    ),
    (
        "reshape-transpose-broadcast-reduce",
        _chain(
            XY,
            f"""    %0 = stablehlo.reshape %arg0 {_C0} : ({T}) -> tensor<8x4x4xf32>
    %1 = stablehlo.transpose %0, dims = [1, 0, 2] {_C1} : (tensor<8x4x4xf32>) -> tensor<4x8x4xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %2 = stablehlo.reduce(%1 init: %cst) applies stablehlo.add across dimensions = [2] {_C2} : (tensor<4x8x4xf32>, tensor<f32>) -> tensor<4x8xf32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [1, 2] {_C3} : (tensor<4x8xf32>) -> tensor<2x4x8xf32>
    return %3 : tensor<2x4x8xf32>""",
            _t("2x4x8xf32", '[{}, {"y"}, {"x"}]'),
        ),
        PASS,
    ),
    (
        "dot-general-batch-and-contracting-all-reduce",
        _module(
            _main(
                f"%arg0: {_C4}, %arg1: {_C5}",
                _t("4x8x32xf32", '[{}, {"x"}, {}]'),
                f"""    %0 = stablehlo.dot_general %arg0, %arg1, batching_dims = [0] x [0], contracting_dims = [2] x [1] {_C6} : (tensor<4x8x16xf32>, tensor<4x16x32xf32>) -> tensor<4x8x32xf32>
    %1 = sdy.all_reduce {{"y"}} %0 out_sharding=<@mesh, [{{}}, {{"x"}}, {{}}]> : tensor<4x8x32xf32>
    return %1 : tensor<4x8x32xf32>""",
            )
        ),
        PASS,
    ),
    (
        "dot-contracting-all-reduce",
        _module(
            _main(
                f"%arg0: {_t('8x16xf32', XY)}, %arg1: {_C7}",
                _t("8x32xf32", '[{"x"}, {}]'),
                f"""    %0 = stablehlo.dot %arg0, %arg1 {_C8} : ({T}, tensor<16x32xf32>) -> tensor<8x32xf32>
    %1 = sdy.all_reduce {{"y"}} %0 out_sharding=<@mesh, [{{"x"}}, {{}}]> : tensor<8x32xf32>
    return %1 : tensor<8x32xf32>""",
            )
        ),
        PASS,
    ),
    (
        "all-gather-one-dim",
        _chain(
            XY,
            f"""    %0 = sdy.all_gather [{{}}, {{"y"}}] %arg0 out_sharding=<@mesh, [{{"x"}}, {{}}]> : {T}
    return %0 : {T}""",
            _t("8x16xf32", '[{"x"}, {}]'),
        ),
        PASS,
    ),
]

_MULTI_GATHER = _chain(
    XY,
    f"""    %0 = sdy.all_gather [{{"x"}}, {{"y"}}] %arg0 out_sharding=<@mesh, [{{}}, {{}}]> : {T}
    return %0 : {T}""",
    _t("8x16xf32", R2),
)
HAND += [
    ("all-gather-two-dims-combined", _MULTI_GATHER, PASS),
    ("all-gather-two-dims-per-dim", _MULTI_GATHER, PASS + "{per-dim-all-gather=true}"),
    ("all-gather-two-dims-rgv3", _MULTI_GATHER, PASS + "{enable-rgv3=true}"),
    (
        "all-gather-sub-axes-perm-mesh",
        _chain(
            '[{"y":(1)2}, {"x", "y":(2)2}]',
            f"""    %0 = sdy.all_gather [{{"y":(1)2}}, {{"y":(2)2}}] %arg0 out_sharding=<@perm, [{{}}, {{"x"}}]> : {T}
    return %0 : {T}""",
            _t("8x16xf32", '[{}, {"x"}]', "perm"),
            mesh="perm",
        ),
        PASS,
    ),
    (
        "all-slice-two-dims-sub-axes",
        _chain(
            R2,
            f"""    %0 = sdy.all_slice [{{"y":(2)2}}, {{"x", "y":(1)2}}] %arg0 out_sharding=<@mesh, [{{"y":(2)2}}, {{"x", "y":(1)2}}]> : {T}
    return %0 : {T}""",
            _t("8x16xf32", '[{"y":(2)2}, {"x", "y":(1)2}]'),
        ),
        PASS,
    ),
    (
        "all-slice-device-ids",
        _chain(
            R2,
            f"""    %0 = sdy.all_slice [{{"y"}}, {{}}] %arg0 out_sharding=<@perm, [{{"y"}}, {{}}]> : {T}
    return %0 : {T}""",
            _t("8x16xf32", '[{"y"}, {}]', "perm"),
            mesh="perm",
        ),
        PASS,
    ),
    (
        "all-reduce-two-axes-three-axis-mesh",
        _chain(
            '[{"y"}, {}]',
            f"""    %0 = stablehlo.add %arg0, %arg0 {{sdy.sharding = #sdy.sharding_per_value<[<@m3, [{{"y"}}, {{}}], unreduced={{"x", "z"}}>]>}} : {T}
    %1 = sdy.all_reduce {{"z", "x"}} %0 out_sharding=<@m3, [{{"y"}}, {{}}]> : {T}
    return %1 : {T}""",
            _t("8x16xf32", '[{"y"}, {}]', "m3"),
            mesh="m3",
        ),
        PASS,
    ),
]

_RS2 = _chain(
    R2,
    f"""    %0 = stablehlo.add %arg0, %arg0 {{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{{}}, {{}}], unreduced={{"x", "y"}}>]>}} : {T}
    %1 = sdy.reduce_scatter [{{"y"}}, {{"x"}}] %0 out_sharding=<@mesh, [{{"y"}}, {{"x"}}]> : {T}
    return %1 : {T}""",
    _t("8x16xf32", '[{"y"}, {"x"}]'),
)
HAND += [
    (
        "reduce-scatter-one-dim",
        _chain(
            '[{"x"}, {}]',
            f"""    %0 = stablehlo.add %arg0, %arg0 {{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{{"x"}}, {{}}], unreduced={{"y"}}>]>}} : {T}
    %1 = sdy.reduce_scatter [{{}}, {{"y"}}] %0 out_sharding=<@mesh, [{{"x"}}, {{"y"}}]> : {T}
    return %1 : {T}""",
            _t("8x16xf32", XY),
        ),
        PASS,
    ),
    ("reduce-scatter-two-dims", _RS2, PASS),
    ("reduce-scatter-two-dims-rgv3", _RS2, PASS + "{enable-rgv3=true}"),
    (
        "reduce-scatter-two-dims-combined",
        _RS2,
        PASS + "{combine-multi-dimension-reduce-scatter=true}",
    ),
    (
        "all-to-all-one-param",
        _chain(
            '[{"y"}, {}]',
            f"""    %0 = sdy.all_to_all [{{"y"}}: 0->1] %arg0 out_sharding=<@mesh, [{{}}, {{"y"}}]> : {T}
    return %0 : {T}""",
            _t("8x16xf32", '[{}, {"y"}]'),
        ),
        PASS,
    ),
    (
        "all-to-all-two-params",
        _chain(
            '[{"x"}, {"y"}, {}]',
            """    %0 = sdy.all_to_all [{"x"}: 0->2, {"y"}: 1->0] %arg0 out_sharding=<@mesh, [{"y"}, {}, {"x"}]> : tensor<8x8x16xf32>
    return %0 : tensor<8x8x16xf32>""",
            _t("8x8x16xf32", '[{"y"}, {}, {"x"}]'),
            shape="8x8x16xf32",
        ),
        PASS,
    ),
    (
        "collective-permute-sub-axes",
        _chain(
            '[{}, {"y"}]',
            f"""    %0 = sdy.collective_permute %arg0 out_sharding=<@mesh, [{{}}, {{"y":(2)2, "y":(1)2}}]> : {T}
    return %0 : {T}""",
            _t("8x16xf32", '[{}, {"y":(2)2, "y":(1)2}]'),
        ),
        PASS,
    ),
    (
        "collective-permute-swap-axes",
        _chain(
            XY,
            f"""    %0 = sdy.collective_permute %arg0 out_sharding=<@m3, [{{"y"}}, {{"x"}}]> : {T}
    return %0 : {T}""",
            _t("8x16xf32", '[{"y"}, {"x"}]', "m3"),
            mesh="m3",
        ),
        PASS,
    ),
    (
        "collective-permute-between-device-orders",
        _chain(
            XY,
            f"""    %0 = sdy.collective_permute %arg0 out_sharding=<@perm, [{{"x"}}, {{"y"}}]> : {T}
    return %0 : {T}""",
            _t("8x16xf32", XY, "perm"),
        ),
        PASS,
    ),
    (
        "channel-ids-continue-after-existing",
        _chain(
            '[{"x"}, {}]',
            f"""    %0 = "stablehlo.all_reduce"(%arg0) <{{channel_handle = #stablehlo.channel_handle<handle = 5, type = 1>, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, use_global_device_ids}}> ({{
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }}) {_pv('[{"x"}, {}]')} : ({T}) -> {T}
    %1 = sdy.all_gather [{{"x"}}, {{}}] %0 out_sharding=<@mesh, [{{}}, {{}}]> : {T}
    %2 = sdy.all_slice [{{}}, {{"x"}}] %1 out_sharding=<@mesh, [{{}}, {{"x"}}]> : {T}
    %3 = sdy.all_gather [{{}}, {{"x"}}] %2 out_sharding=<@mesh, [{{}}, {{}}]> : {T}
    return %3 : {T}""",
            _t("8x16xf32", R2),
        ),
        PASS,
    ),
    (
        "sdy-constants-splat-dense-unsharded",
        _module(
            _main(
                "",
                f"{_t('4x2xf32', XY, 'm3')}, tensor<2xi32>",
                f"""    %0 = sdy.constant {_pv(XY, "m3")} dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]> : tensor<4x2xf32>
    %1 = sdy.constant {_pv(XY, "m3")} dense<1.0> : tensor<4x2xf32>
    %2 = stablehlo.add %0, %1 {_pv(XY, "m3")} : tensor<4x2xf32>
    %3 = sdy.constant dense<[1, 2]> : tensor<2xi32>
    return %2, %3 : tensor<4x2xf32>, tensor<2xi32>""",
            )
        ),
        PASS,
    ),
    (
        "iota-sharded-on-and-off-iota-dim",
        _module(
            _main(
                "",
                f"{_t('8x16xi32', XY)}, {_t('8x16xf32', XY)}, tensor<4xi32>",
                f"""    %0 = stablehlo.iota dim = 0 {_pv(XY)} : tensor<8x16xi32>
    %1 = stablehlo.iota dim = 1 {_pv(XY)} : tensor<8x16xf32>
    %2 = stablehlo.add %1, %1 {_pv(XY)} : tensor<8x16xf32>
    %3 = stablehlo.iota dim = 0 : tensor<4xi32>
    return %0, %2, %3 : tensor<8x16xi32>, tensor<8x16xf32>, tensor<4xi32>""",
            )
        ),
        PASS,
    ),
    (
        "slice-full-on-sharded-dim",
        _chain(
            '[{}, {"y"}]',
            f"""    %0 = stablehlo.slice %arg0 [2:6, 0:16] {_C9} : ({T}) -> tensor<4x16xf32>
    %1 = stablehlo.slice %0 [0:4, 0:16:2] {_C9} : (tensor<4x16xf32>) -> tensor<4x8xf32>
    return %1 : tensor<4x8xf32>""",
            _t("4x8xf32", '[{}, {"y"}]'),
        ),
        PASS,
    ),
    (
        "slice-partial-on-sharded-dim",
        _chain(
            XY,
            f"""    %0 = stablehlo.slice %arg0 [0:4, 0:16] {_pv(XY)} : ({T}) -> tensor<4x16xf32>
    return %0 : tensor<4x16xf32>""",
            _t("4x16xf32", XY),
        ),
        PASS,
    ),
    (
        "concatenate-on-unsharded-dim",
        _chain(
            '[{"x"}, {}]',
            f"""    %0 = stablehlo.concatenate %arg0, %arg0, dim = 1 {_C8} : ({T}, {T}) -> tensor<8x32xf32>
    return %0 : tensor<8x32xf32>""",
            _t("8x32xf32", '[{"x"}, {}]'),
        ),
        PASS,
    ),
    (
        "concatenate-on-sharded-dim",
        _chain(
            XY,
            f"""    %0 = stablehlo.concatenate %arg0, %arg0, dim = 1 {_pv(XY)} : ({T}, {T}) -> tensor<8x32xf32>
    return %0 : tensor<8x32xf32>""",
            _t("8x32xf32", XY),
        ),
        PASS,
    ),
    (
        "manual-computation-inlined",
        _chain(
            XY,
            f"""    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{{"x"}}, {{"y"}}]>] out_shardings=[<@mesh, [{{"x"}}, {{"y"}}]>] manual_axes={{"x"}} (%arg1: tensor<4x16xf32>) {{
      %1 = stablehlo.add %arg1, %arg1 {_C9} : tensor<4x16xf32>
      %2 = sdy.all_gather [{{}}, {{"y"}}] %1 out_sharding=<@mesh, [{{}}, {{}}]> : tensor<4x16xf32>
      %3 = sdy.all_slice [{{}}, {{"y"}}] %2 out_sharding=<@mesh, [{{}}, {{"y"}}]> : tensor<4x16xf32>
      sdy.return %3 : tensor<4x16xf32>
    }} : ({T}) -> {T}
    return %0 : {T}""",
            _t("8x16xf32", XY),
        ),
        PASS,
    ),
    (
        "named-computation-kept",
        _chain(
            XY,
            f"""    %0 = sdy.named_computation<"foo">(%arg0) in_shardings=[<@mesh, [{{"x"}}, {{"y"}}]>] out_shardings=[<@mesh, [{{"x"}}, {{}}]>] (%arg1: {T}) {{
      %1 = sdy.all_gather [{{}}, {{"y"}}] %arg1 out_sharding=<@mesh, [{{"x"}}, {{}}]> : {T}
      sdy.return %1 : {T}
    }} : ({T}) -> {T}
    return %0 : {T}""",
            _t("8x16xf32", '[{"x"}, {}]'),
        ),
        PASS,
    ),
    (
        "case-branches-converted",
        _module(
            _main(
                f"%arg0: {_t('8x16xf32', XY)}, %arg1: tensor<i32>",
                _t("8x16xf32", XY),
                f"""    %0 = "stablehlo.case"(%arg1) ({{
      stablehlo.return %arg0 : {T}
    }}, {{
      %1 = stablehlo.add %arg0, %arg0 {_pv(XY)} : {T}
      stablehlo.return %1 : {T}
    }}) {_pv(XY)} : (tensor<i32>) -> {T}
    return %0 : {T}""",
            )
        ),
        PASS,
    ),
    (
        "custom-call-and-top-k-converted-like-any-op",
        _chain(
            '[{"x"}, {}]',
            f"""    %0:2 = stablehlo.custom_call @mhlo.topk(%arg0) {{mhlo.attributes = {{k = 2 : i64, largest = true}}, mhlo.version = 1 : i64, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{{"x"}}, {{}}]>, <@mesh, [{{"x"}}, {{}}]>]>}} : ({T}) -> (tensor<8x2xf32>, tensor<8x2xi32>)
    %1 = stablehlo.custom_call @foo(%0#0) {_C8} : (tensor<8x2xf32>) -> tensor<8x2xf32>
    return %1 : tensor<8x2xf32>""",
            _t("8x2xf32", '[{"x"}, {}]'),
        ),
        PASS,
    ),
]


# -- windows, padding, feature groups (modules written out in full) ----------------------------

WINDOWED: list[tuple[str, str]] = [
    (
        "convolution-contracting-all-reduce",
        """module {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @main(%arg0: tensor<8x16x16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}, {}, {"y"}]>}, %arg1: tensor<3x3x8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {"y"}, {}]>}) -> (tensor<8x16x16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}, {}, {}]>}) {
    %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}, {}, {}]>]>} : (tensor<8x16x16x8xf32>, tensor<3x3x8x16xf32>) -> tensor<8x16x16x16xf32>
    %1 = sdy.all_reduce {"y"} %0 out_sharding=<@mesh, [{"x"}, {}, {}, {}]> : tensor<8x16x16x16xf32>
    return %1 : tensor<8x16x16x16xf32>
  }
}
""",
    ),
    (
        "convolution-feature-groups-sharded",
        """module {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @main(%arg0: tensor<8x16x16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}, {"y"}]>}, %arg1: tensor<3x3x1x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}, {"y"}]>}) -> (tensor<8x16x16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}, {"y"}]>}) {
    %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 8 : i64, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}, {}, {"y"}]>]>} : (tensor<8x16x16x8xf32>, tensor<3x3x1x8xf32>) -> tensor<8x16x16x8xf32>
    return %0 : tensor<8x16x16x8xf32>
  }
}
""",
    ),
    (
        "gather-replicated-operand-sharded-batch",
        """module {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @main(%arg0: tensor<16x8xf32>, %arg1: tensor<8x1xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
    %0 = "stablehlo.gather"(%arg0, %arg1) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 8>}> {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<16x8xf32>, tensor<8x1xi32>) -> tensor<8x8xf32>
    return %0 : tensor<8x8xf32>
  }
}
""",
    ),
    (
        "pad-non-uniform-offsets",
        """module {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<12x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
    %cst = stablehlo.constant dense<0.0> : tensor<f32>
    %0 = stablehlo.pad %arg0, %cst, low = [1, 0], high = [3, 0], interior = [0, 0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : (tensor<8x16xf32>, tensor<f32>) -> tensor<12x16xf32>
    return %0 : tensor<12x16xf32>
  }
}
""",
    ),
    (
        "pad-uniform-interior-and-replicated",
        """module {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) -> (tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}, tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
    %cst = stablehlo.constant dense<0.0> : tensor<f32>
    %0 = stablehlo.pad %arg0, %cst, low = [2, 0], high = [-1, 0], interior = [1, 0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>} : (tensor<8x16xf32>, tensor<f32>) -> tensor<16x16xf32>
    %1 = stablehlo.pad %arg0, %cst, low = [0, 0], high = [0, 0], interior = [0, 0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>} : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
    %2 = sdy.all_gather [{}, {"y"}] %1 out_sharding=<@mesh, [{}, {}]> : tensor<8x16xf32>
    %3 = stablehlo.pad %2, %cst, low = [0, 0], high = [0, 0], interior = [0, 0] : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
    return %0, %3 : tensor<16x16xf32>, tensor<8x16xf32>
  }
}
""",
    ),
    (
        "reduce-window-pass-through-sharded-dim",
        """module {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
    %cst = stablehlo.constant dense<0.0> : tensor<f32>
    %0 = "stablehlo.reduce_window"(%arg0, %cst) <{window_dimensions = array<i64: 1, 2>, window_strides = array<i64: 1, 2>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %1 = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %1 : tensor<f32>
    }) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x8xf32>
    return %0 : tensor<8x8xf32>
  }
}
""",
    ),
    (
        "gather-collapsed-sharded-dim-sharded-batch",
        """module {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @main(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}, %arg1: tensor<8x1xi64> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
    %0 = "stablehlo.gather"(%arg0, %arg1) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 8>}> {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}], unreduced={"y"}>]>} : (tensor<16x8xf32>, tensor<8x1xi64>) -> tensor<8x8xf32>
    %1 = sdy.all_reduce {"y"} %0 out_sharding=<@mesh, [{"x"}, {}]> : tensor<8x8xf32>
    return %1 : tensor<8x8xf32>
  }
}
""",
    ),
    (
        "gather-whole-sharded-offset-dim",
        """module {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @main(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}, %arg1: tensor<8x1xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
    %0 = "stablehlo.gather"(%arg0, %arg1) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = true, slice_sizes = array<i64: 1, 8>}> {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : (tensor<16x8xf32>, tensor<8x1xi32>) -> tensor<8x8xf32>
    return %0 : tensor<8x8xf32>
  }
}
""",
    ),
    (
        "gather-two-collapsed-sharded-dims",
        """module {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @main(%arg0: tensor<16x8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}, {}]>}, %arg1: tensor<6x2xi64>) -> (tensor<6x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
    %0 = "stablehlo.gather"(%arg0, %arg1) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 1>, slice_sizes = array<i64: 1, 1, 4>}> {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}], unreduced={"x", "y"}>]>} : (tensor<16x8x4xf32>, tensor<6x2xi64>) -> tensor<6x4xf32>
    %1 = sdy.all_reduce {"x", "y"} %0 out_sharding=<@mesh, [{}, {}]> : tensor<6x4xf32>
    return %1 : tensor<6x4xf32>
  }
}
""",
    ),
    (
        "gather-sharded-dim-outside-start-index-map",
        """module {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @main(%arg0: tensor<16x8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}, {}]>}, %arg1: tensor<6x1xi64>) -> (tensor<6x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
    %0 = "stablehlo.gather"(%arg0, %arg1) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0, 1], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 1, 4>}> {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}], unreduced={"x", "y"}>]>} : (tensor<16x8x4xf32>, tensor<6x1xi64>) -> tensor<6x4xf32>
    %1 = sdy.all_reduce {"x", "y"} %0 out_sharding=<@mesh, [{}, {}]> : tensor<6x4xf32>
    return %1 : tensor<6x4xf32>
  }
}
""",
    ),
    (
        "gather-scalar-index-vector",
        """module {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @main(%arg0: tensor<8x10xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<2xi64>) -> tensor<2x10xf32> {
    %0 = "stablehlo.gather"(%arg0, %arg1) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 10>}> : (tensor<8x10xf32>, tensor<2xi64>) -> tensor<2x10xf32>
    %1 = sdy.all_reduce {"x"} %0 out_sharding=<@mesh, [{}, {}]> : tensor<2x10xf32>
    return %1 : tensor<2x10xf32>
  }
}
""",
    ),
    (
        "gather-index-vector-of-one",
        """module {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @main(%arg0: tensor<8x10xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<2x1xi64>) -> tensor<2x10xf32> {
    %0 = "stablehlo.gather"(%arg0, %arg1) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 10>}> : (tensor<8x10xf32>, tensor<2x1xi64>) -> tensor<2x10xf32>
    %1 = sdy.all_reduce {"x"} %0 out_sharding=<@mesh, [{}, {}]> : tensor<2x10xf32>
    return %1 : tensor<2x10xf32>
  }
}
""",
    ),
    (
        "gather-i32-indices-sharded-dim-outside-start-index-map",
        """module {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @main(%arg0: tensor<16x8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}, {}]>}, %arg1: tensor<6x1xi32>) -> (tensor<6x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
    %0 = "stablehlo.gather"(%arg0, %arg1) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0, 1], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 1, 4>}> {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}], unreduced={"x"}>]>} : (tensor<16x8x4xf32>, tensor<6x1xi32>) -> tensor<6x4xf32>
    %1 = sdy.all_reduce {"x"} %0 out_sharding=<@mesh, [{}, {}]> : tensor<6x4xf32>
    return %1 : tensor<6x4xf32>
  }
}
""",
    ),
    (
        "scatter-into-sharded-indexed-dim",
        """module {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @main(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}, %arg1: tensor<4x1xi64>, %arg2: tensor<4x8xf32>) -> (tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}) {
    %0 = "stablehlo.scatter"(%arg0, %arg1, %arg2) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}, {}]>]>} : (tensor<16x8xf32>, tensor<4x1xi64>, tensor<4x8xf32>) -> tensor<16x8xf32>
    return %0 : tensor<16x8xf32>
  }
}
""",
    ),
    (
        "scatter-updates-sharded-on-batch-dim-leader-mask",
        """module {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @main(%arg0: tensor<16x8xf32>, %arg1: tensor<4x1xi64> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg2: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
    %0 = "stablehlo.scatter"(%arg0, %arg1, %arg2) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}], unreduced={"x"}>]>} : (tensor<16x8xf32>, tensor<4x1xi64>, tensor<4x8xf32>) -> tensor<16x8xf32>
    %1 = sdy.all_reduce {"x"} %0 out_sharding=<@mesh, [{}, {}]> : tensor<16x8xf32>
    return %1 : tensor<16x8xf32>
  }
}
""",
    ),
    (
        "scatter-sharded-window-dim-i32-indices",
        """module {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @main(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}, %arg1: tensor<4x1xi32>, %arg2: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) -> (tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) {
    %0 = "stablehlo.scatter"(%arg0, %arg1, %arg2) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>} : (tensor<16x8xf32>, tensor<4x1xi32>, tensor<4x8xf32>) -> tensor<16x8xf32>
    return %0 : tensor<16x8xf32>
  }
}
""",
    ),
    (
        "scatter-max-leader-and-local-indices",
        """module {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @main(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}, %arg1: tensor<4x1xi64> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg2: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}) {
    %0 = "stablehlo.scatter"(%arg0, %arg1, %arg2) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.maximum %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}, {}], unreduced={"x"}>]>} : (tensor<16x8xf32>, tensor<4x1xi64>, tensor<4x8xf32>) -> tensor<16x8xf32>
    %1 = sdy.all_reduce {"x"} %0 out_sharding=<@mesh, [{"y"}, {}]> : tensor<16x8xf32>
    return %1 : tensor<16x8xf32>
  }
}
""",
    ),
    (
        "scatter-two-index-dims-multiply",
        """module {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @main(%arg0: tensor<16x8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}, {}]>}, %arg1: tensor<6x2xi64>, %arg2: tensor<6x4xf32>) -> (tensor<16x8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}, {}]>}) {
    %0 = "stablehlo.scatter"(%arg0, %arg1, %arg2) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 1>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.multiply %b, %a : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}, {}]>]>} : (tensor<16x8x4xf32>, tensor<6x2xi64>, tensor<6x4xf32>) -> tensor<16x8x4xf32>
    return %0 : tensor<16x8x4xf32>
  }
}
""",
    ),
    (
        "scatter-two-index-dims-i32",
        """module {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @main(%arg0: tensor<16x8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}, {}]>}, %arg1: tensor<6x2xi32>, %arg2: tensor<6x4xf32>) -> (tensor<16x8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}, {}]>}) {
    %0 = "stablehlo.scatter"(%arg0, %arg1, %arg2) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 1>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.multiply %b, %a : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}, {}]>]>} : (tensor<16x8x4xf32>, tensor<6x2xi32>, tensor<6x4xf32>) -> tensor<16x8x4xf32>
    return %0 : tensor<16x8x4xf32>
  }
}
""",
    ),
    (
        "call-of-unsharded-func-drops-call-attributes",
        """module {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func private @f(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    %0 = stablehlo.abs %arg0 : tensor<8xf32>
    return %0 : tensor<8xf32>
  }
  func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) -> tensor<8xf32> {
    %0 = func.call @f(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}]>]>} : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}
""",
    ),
    (
        "declaration-loses-its-arguments",
        """module {
  sdy.mesh @mesh = <["x"=2]>
  func.func private @ext(tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>})
  func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) {
    %0 = "stablehlo.optimization_barrier"(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>} : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}
""",
    ),
    (
        "dense-constant-and-iota-on-device-ids-mesh",
        """module {
  sdy.mesh @mesh = <["x"=2, "y"=4], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]>
  func.func @main() -> (tensor<8x4xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {"x"}]>}, tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y":(2)2}, {"x"}]>}) {
    %0 = sdy.constant {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}, {"x"}]>]>} dense<[[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11], [12, 13, 14, 15], [16, 17, 18, 19], [20, 21, 22, 23], [24, 25, 26, 27], [28, 29, 30, 31]]> : tensor<8x4xi32>
    %1 = stablehlo.iota dim = 0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y":(2)2}, {"x"}]>]>} : tensor<8x4xf32>
    return %0, %1 : tensor<8x4xi32>, tensor<8x4xf32>
  }
}
""",
    ),
    (
        "inline-mesh",
        """module {
  func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<mesh<["a"=2, "b"=2]>, [{"a"}, {"b"}]>}) -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<mesh<["a"=2, "b"=2]>, [{}, {}]>}) {
    %0 = stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<mesh<["a"=2, "b"=2]>, [{"a"}, {"b"}]>]>} : tensor<8x4xf32>
    %1 = sdy.all_gather [{"a"}, {"b"}] %0 out_sharding=<mesh<["a"=2, "b"=2]>, [{}, {}]> : tensor<8x4xf32>
    return %1 : tensor<8x4xf32>
  }
}
""",
    ),
    (
        "dot-of-zero-padded-operand-sharded-contracting",
        """module {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @main(%arg0: tensor<8x12xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}, %arg1: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}) -> (tensor<8x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
    %z = stablehlo.constant dense<0.0> : tensor<f32>
    %p = stablehlo.pad %arg0, %z, low = [0, 0], high = [0, 4], interior = [0, 0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : (tensor<8x12xf32>, tensor<f32>) -> tensor<8x16xf32>
    %0 = stablehlo.dot %p, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
    %1 = sdy.all_reduce {"y"} %0 out_sharding=<@mesh, [{"x"}, {}]> : tensor<8x32xf32>
    return %1 : tensor<8x32xf32>
  }
}
""",
    ),
]
HAND += [(name, text, PASS) for name, text in WINDOWED]

# -- constructs the reference rejects (its pass or the verifier after it) -----------------------

REJECTED: list[tuple[str, str]] = [
    (
        "broadcast-of-an-operand-on-another-mesh",  # fuzz finding 1962-66-0
        """module {
  sdy.mesh @mesh = <["z"=2]>
  sdy.mesh @mesh2 = <["x"=6]>
  func.func @main(%arg0: tensor<6x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"z"}]>}) -> tensor<2x6x4x32xf32> {
    %0 = stablehlo.broadcast_in_dim %arg0, dims = [1, 3] {sdy.sharding = #sdy.sharding_per_value<[<@mesh2, [{}, {}, {}, {}]>]>} : (tensor<6x32xf32>) -> tensor<2x6x4x32xf32>
    return %0 : tensor<2x6x4x32xf32>
  }
}
""",
    ),
    (
        "dynamic-update-slice-update-larger-than-local-operand",  # fuzz finding 1813-633-0
        """module {
  sdy.mesh @mesh = <["x"=4]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}]}}
  func.func @main(%arg0: tensor<8x16x2x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}, {}, {}]>}, %arg1: tensor<7x15x1x4xf32>, %arg2: tensor<i32>) -> (tensor<8x16x2x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}, {}, {}]>}) {
    %0 = stablehlo.dynamic_update_slice %arg0, %arg1, %arg2, %arg2, %arg2, %arg2 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}, {}, {}]>]>} : (tensor<8x16x2x6xf32>, tensor<7x15x1x4xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<8x16x2x6xf32>
    return %0 : tensor<8x16x2x6xf32>
  }
}
""",
    ),
    (
        "optimization-barrier-result-unsharded",
        """module {
  sdy.mesh @mesh = <["x"=2]>
  func.func private @ext(tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>})
  func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) {
    %0 = stablehlo.optimization_barrier %arg0 : tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}
""",
    ),
    (
        "nested-manual-computation",
        """module {
  sdy.mesh @mesh = <["x"=2, "y"=2, "z"=2]>
  func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}, {"z"}]>}, %arg1: tensor<8xf32>) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, tensor<8xf32>) {
    %0:2 = sdy.manual_computation(%arg0, %arg1) in_shardings=[<@mesh, [{"x", "y"}, {"z"}]>, <@mesh, [{}]>] out_shardings=[<@mesh, [{"x"}, {}]>, <@mesh, [{}]>] manual_axes={"x"} (%arg2: tensor<4x8xf32>, %arg3: tensor<8xf32>) {
      %1 = sdy.all_gather [{"y"}, {"z"}] %arg2 out_sharding=<@mesh, [{}, {}]> : tensor<4x8xf32>
      %2 = sdy.manual_computation(%1) in_shardings=[<@mesh, [{"y"}, {}]>] out_shardings=[<@mesh, [{"y"}, {}]>] manual_axes={"y"} (%arg4: tensor<2x8xf32>) {
        %3 = stablehlo.negate %arg4 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"z"}]>]>} : tensor<2x8xf32>
        %4 = sdy.all_gather [{}, {"z"}] %3 out_sharding=<@mesh, [{}, {}]> : tensor<2x8xf32>
        sdy.return %4 : tensor<2x8xf32>
      } : (tensor<4x8xf32>) -> tensor<4x8xf32>
      %5 = sdy.all_gather [{"y"}, {}] %2 out_sharding=<@mesh, [{}, {}]> : tensor<4x8xf32>
      sdy.return %5, %arg3 : tensor<4x8xf32>, tensor<8xf32>
    } : (tensor<8x8xf32>, tensor<8xf32>) -> (tensor<8x8xf32>, tensor<8xf32>)
    return %0#0, %0#1 : tensor<8x8xf32>, tensor<8xf32>
  }
}
""",
    ),
    (
        "call-of-sharded-func",
        _module(
            f"""  func.func private @f(%arg0: {_C11}) -> ({_C11}) {{
    return %arg0 : tensor<8xf32>
  }}""",
            _main(
                f"%arg0: {_C11}",
                _t("8xf32", '[{"x"}]'),
                f"""    %0 = func.call @f(%arg0) {_C12} : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>""",
            ),
        ),
    ),
    (
        "while-carrying-sharded-value",
        _module(
            _main(
                f"%arg0: {_C11}",
                _t("8xf32", '[{"x"}]'),
                """    %c = stablehlo.constant dense<0> : tensor<i32>
    %0:2 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %c) : tensor<8xf32>, tensor<i32> attributes {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>, <@mesh, []>]>}
    cond {
      %1 = stablehlo.compare LT, %iterArg_0, %iterArg_0 : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %1 : tensor<i1>
    } do {
      stablehlo.return %iterArg, %iterArg_0 : tensor<8xf32>, tensor<i32>
    }
    return %0#0 : tensor<8xf32>""",
            )
        ),
    ),
    (
        "sharded-stablehlo-constant",
        _module(
            _main(
                "",
                _t("4x2xf32", XY, "m3"),
                f"""    %0 = stablehlo.constant {_pv(XY, "m3")} dense<1.0> : tensor<4x2xf32>
    return %0 : tensor<4x2xf32>""",
            )
        ),
    ),
    (
        "leftover-reshard",
        _chain(
            XY,
            f"""    %0 = sdy.reshard %arg0 <@mesh, [{{"y"}}, {{"x"}}]> : {T}
    return %0 : {T}""",
            _t("8x16xf32", '[{"y"}, {"x"}]'),
        ),
    ),
    (
        "leftover-sharding-constraint",
        _chain(
            XY,
            f"""    %0 = sdy.sharding_constraint %arg0 <@mesh, [{{"x"}}, {{"y"}}]> : {T}
    return %0 : {T}""",
            _t("8x16xf32", XY),
        ),
    ),
    (
        "elementwise-with-inconsistent-shardings",
        _chain(
            '[{"x"}, {}]',
            f"""    %0 = stablehlo.add %arg0, %arg0 {_pv(XY)} : {T}
    return %0 : {T}""",
            _t("8x16xf32", XY),
        ),
    ),
    (
        "slice-with-mismatched-dim-shardings",
        _chain(
            XY,
            f"""    %0 = stablehlo.slice %arg0 [2:6, 0:16] {_C9} : ({T}) -> tensor<4x16xf32>
    return %0 : tensor<4x16xf32>""",
            _t("4x16xf32", '[{}, {"y"}]'),
        ),
    ),
    (
        "return-sharding-differs-from-result",
        _chain(XY, f"""    return %arg0 : {T}""", _t("8x16xf32", '[{"y"}, {"x"}]')),
    ),
]

# The reference aborts (SDY_CHECK) on these: run in a child process.
ABORTS: list[tuple[str, str]] = [
    (
        "dot-of-one-padded-operand-sharded-contracting",
        """module {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @main(%arg0: tensor<8x12xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}, %arg1: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}) -> (tensor<8x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
    %z = stablehlo.constant dense<1.0> : tensor<f32>
    %p = stablehlo.pad %arg0, %z, low = [0, 0], high = [0, 4], interior = [0, 0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : (tensor<8x12xf32>, tensor<f32>) -> tensor<8x16xf32>
    %0 = stablehlo.dot %p, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
    %1 = sdy.all_reduce {"y"} %0 out_sharding=<@mesh, [{"x"}, {}]> : tensor<8x32xf32>
    return %1 : tensor<8x32xf32>
  }
}
""",
    ),
    (
        "dot-of-operand-padded-by-sdy-constant",
        """module {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @main(%arg0: tensor<8x12xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}, %arg1: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}) -> (tensor<8x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
    %z = sdy.constant dense<0.0> : tensor<f32>
    %p = stablehlo.pad %arg0, %z, low = [0, 0], high = [0, 4], interior = [0, 0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : (tensor<8x12xf32>, tensor<f32>) -> tensor<8x16xf32>
    %0 = stablehlo.dot %p, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
    %1 = sdy.all_reduce {"y"} %0 out_sharding=<@mesh, [{"x"}, {}]> : tensor<8x32xf32>
    return %1 : tensor<8x32xf32>
  }
}
""",
    ),
    (
        "gather-i32-indices-two-collapsed-sharded-dims",
        """module {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @main(%arg0: tensor<16x8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}, {}]>}, %arg1: tensor<6x1xi32>) -> (tensor<6x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
    %0 = "stablehlo.gather"(%arg0, %arg1) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0, 1], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 1, 4>}> {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}], unreduced={"x", "y"}>]>} : (tensor<16x8x4xf32>, tensor<6x1xi32>) -> tensor<6x4xf32>
    %1 = sdy.all_reduce {"x", "y"} %0 out_sharding=<@mesh, [{}, {}]> : tensor<6x4xf32>
    return %1 : tensor<6x4xf32>
  }
}
""",
    ),
    (
        "gather-collapsed-sharded-dim-with-i32-indices",
        """module {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @main(%arg0: tensor<8x10xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<2xi32>) -> tensor<2x10xf32> {
    %0 = "stablehlo.gather"(%arg0, %arg1) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 10>}> {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}], unreduced={"x"}>]>} : (tensor<8x10xf32>, tensor<2xi32>) -> tensor<2x10xf32>
    %1 = sdy.all_reduce {"x"} %0 out_sharding=<@mesh, [{}, {}]> : tensor<2x10xf32>
    return %1 : tensor<2x10xf32>
  }
}
""",
    ),
    (
        "reduce-window-over-a-sharded-dim",
        """module {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<4x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
    %cst = stablehlo.constant dense<0.0> : tensor<f32>
    %0 = "stablehlo.reduce_window"(%arg0, %cst) <{window_dimensions = array<i64: 2, 1>, window_strides = array<i64: 2, 1>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %1 = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %1 : tensor<f32>
    }) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<8x16xf32>, tensor<f32>) -> tensor<4x16xf32>
    return %0 : tensor<4x16xf32>
  }
}
""",
    ),
    (
        "non-divisible-dim",
        _module(
            _main(
                f"%arg0: {_C13}",
                _t("7xf32", '[{"x"}]'),
                "    return %arg0 : tensor<7xf32>",
            )
        ),
    ),
    (
        "sharded-contracting-dot-without-all-reduce",
        _module(
            _main(
                f"%arg0: {_t('8x16xf32', XY)}, %arg1: {_C7}",
                _t("8x32xf32", '[{"x"}, {}]'),
                f"""    %0 = stablehlo.dot %arg0, %arg1 {_C8} : ({T}, tensor<16x32xf32>) -> tensor<8x32xf32>
    return %0 : tensor<8x32xf32>""",
            )
        ),
    ),
]


@pytest.mark.parametrize(("text", "spec"), [c[1:] for c in HAND], ids=[c[0] for c in HAND])
def test_hand_cases_match_reference(text: str, spec: str) -> None:
    _check(text, spec)


@pytest.mark.parametrize("text", [c[1] for c in REJECTED], ids=[c[0] for c in REJECTED])
def test_rejected_by_reference_and_by_us(text: str) -> None:
    with pytest.raises(ReferenceError):
        run_pass(text, PASS)
    _check(text)


def test_reference_aborts_where_we_raise() -> None:
    for name, text in ABORTS:
        result = run_pass_isolated(text, PASS)
        assert result.crashed, name
        with pytest.raises(ShardwiseError):
            _ours(text)


def test_options_of_the_reference_build() -> None:
    """The 0.10.2 build has three options: no replica-count, no partition-count."""
    text = HAND[0][1]
    for option in ("replica-count=1", "partition-count=1"):
        with pytest.raises(ValueError, match="no such option"):
            run_pass(text, f"{PASS}{{{option}}}")
        with pytest.raises(ShardwiseError, match="unknown option"):
            _ours(text, f"{PASS}{{{option}}}")


# -- after the reference's own export: propagation, explicit reshards, collectives --------------

_PREFIX = [
    "sdy-propagation-pipeline",
    "func.func(sdy-insert-explicit-reshards{enable-full-version=true})",
    "func.func(sdy-reshard-to-collectives)",
]

PROGRAMS = {
    "mlp": _module(
        _main(
            f"%arg0: {_C14}, %arg1: {_C7}",
            _t("8x32xf32", '[{}, {"x"}]'),
            """    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
    %1 = stablehlo.tanh %0 : tensor<8x32xf32>
    %c = stablehlo.constant dense<1.0> : tensor<8x32xf32>
    %2 = stablehlo.add %1, %c : tensor<8x32xf32>
    %3 = stablehlo.reshape %2 : (tensor<8x32xf32>) -> tensor<8x4x8xf32>
    %4 = stablehlo.transpose %3, dims = [1, 0, 2] : (tensor<8x4x8xf32>) -> tensor<4x8x8xf32>
    %cst = stablehlo.constant dense<0.0> : tensor<f32>
    %5 = stablehlo.reduce(%4 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<4x8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
    %6 = stablehlo.concatenate %5, %5, %5, %5, dim = 1 : (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x32xf32>
    return %6 : tensor<8x32xf32>""",
        )
    ),
    "reshard-between-layouts": _module(
        _main(
            f"%arg0: {_C15}",
            _t("16x16xf32", '[{"z"}, {"x"}]', "m3"),
            """    %0 = stablehlo.exponential %arg0 : tensor<16x16xf32>
    %1 = stablehlo.transpose %0, dims = [1, 0] : (tensor<16x16xf32>) -> tensor<16x16xf32>
    %2 = stablehlo.multiply %1, %0 : tensor<16x16xf32>
    return %2 : tensor<16x16xf32>""",
        )
    ),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_after_reference_export(name: str) -> None:
    _check(run_pass(PROGRAMS[name], _PREFIX))


def test_rgv3_with_inline_mesh_is_refused() -> None:
    """The reference's output for it does not parse back (a reference printing bug)."""
    text = dict(WINDOWED)["inline-mesh"]
    spec = PASS + "{enable-rgv3=true}"
    with pytest.raises(ReferenceError, match="mesh must be a FlatSymbolRefAttr"):
        run_pass(run_pass(text, spec), None)
    with pytest.raises(UnsupportedError, match="inline mesh"):
        run_ours(load_text(text), spec)
