"""Own inputs for the differential test of ``sdy-insert-explicit-reshards``, one table per op family.

Shardings are written in a short notation: ``"x,y|z"`` is ``[{"x", "y"}, {"z"}]``, an empty
dim is ``""`` (so ``"|"`` is a replicated rank-2 tensor), sub-axes as in Shardy (``x:(1)2``),
and ``"...!x,z"`` adds ``unreduced={"x", "z"}``. Every case is a module on the mesh
``["x"=2, "y"=4, "z"=2]`` (plus a permuted copy and a maximal mesh); a case marked
`propagate` is first run through the reference's propagation and export prefix.
"""

from __future__ import annotations

from dataclasses import dataclass

MESHES = """sdy.mesh @mesh = <["x"=2, "y"=4, "z"=2]>
sdy.mesh @mesh_perm = <["x"=2, "y"=4, "z"=2], device_ids=[15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0]>
sdy.mesh @mesh_iota = <["x"=2, "y"=4, "z"=2], device_ids=[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]>
sdy.mesh @maximal = <[], device_ids=[3]>
sdy.mesh @mesh6 = <["a"=6, "b"=4]>
"""


@dataclass(frozen=True)
class Case:
    id: str
    text: str
    propagate: bool = False


def _axis(name: str) -> str:
    if ":" in name:
        base, sub = name.split(":", 1)
        return f'"{base}":{sub}'
    return f'"{name}"'


def body(spec: str, mesh: str = "mesh") -> str:
    """``"x|y!z"`` -> ``<@mesh, [{"x"}, {"y"}], unreduced={"z"}>``."""
    dims_text, _, unreduced = spec.partition("!")
    dims = [] if dims_text == "-" else dims_text.split("|")
    parts = ["{" + ", ".join(_axis(a) for a in d.split(",") if a) + "}" for d in dims]
    text = f"<@{mesh}, [" + ", ".join(parts) + "]"
    if unreduced:
        text += ", unreduced={" + ", ".join(_axis(a) for a in unreduced.split(",")) + "}"
    return text + ">"


def sh(spec: str | None, mesh: str = "mesh") -> str:
    """A func argument/result attribute dict (empty for None)."""
    if spec is None:
        return ""
    return " {sdy.sharding = #sdy.sharding" + body(spec, mesh) + "}"


def per(*specs: str, mesh: str = "mesh") -> str:
    """An op's ``{sdy.sharding = #sdy.sharding_per_value<[...]>}``."""
    return (
        " {sdy.sharding = #sdy.sharding_per_value<["
        + ", ".join(body(s, mesh) for s in specs)
        + "]>}"
    )


def func(
    args: list[tuple[str, str | None]],
    lines: list[str],
    results: list[tuple[str, str | None]],
    name: str = "main",
) -> str:
    arg_text = ", ".join(f"%arg{i}: {t}{sh(s)}" for i, (t, s) in enumerate(args))
    res_text = ", ".join(f"{t}{sh(s)}" for t, s in results)
    body_text = "\n".join("  " + line for line in lines)
    return f"func.func @{name}({arg_text}) -> ({res_text}) {{\n{body_text}\n}}\n"


def module(*funcs: str) -> str:
    return MESHES + "".join(funcs)


T2 = "tensor<8x16xf32>"


def _binary(op: str, a: str, b: str, r: str, ret: str | None = None) -> str:
    return module(
        func(
            [(T2, a), (T2, b)],
            [f"%0 = {op} %arg0, %arg1{per(r)} : {T2}", f"return %0 : {T2}"],
            [(T2, ret)],
        )
    )


ELEMENTWISE = [
    ("same", "x|y", "x|y", "x|y"),
    ("operand-conflict", "x|y", "y|x", "x|y"),
    ("result-conflict", "x|y", "x|y", "y|x"),
    ("all-differ", "x|", "|y", "z|"),
    ("prefix", "x,y|", "x|", "x,y|"),
    ("sub-axis", "y:(1)2|", "y|", "y:(1)2|z"),
    ("replicated-vs-sharded", "|", "x,z|y", "|"),
    ("three-axes", "x,y,z|", "|x,y,z", "z|x"),
    ("overlap-across-dims", "x|y", "y|x", "y|x"),
    ("larger-sharding", "x|", "x,y|z", "|"),
    ("sub-axes-both", "y:(1)2|y:(2)2", "y|", "|y"),
    ("unreduced-operand", "x|!y", "x|", "x|"),
    ("unreduced-kept", "x|!y", "x|!y", "x|!y"),
    ("unreduced-result-only", "x|", "x|", "x|!y"),
]

CASES: list[Case] = []
for _id, _a, _b, _r in ELEMENTWISE:
    CASES.append(Case(f"add/{_id}", _binary("stablehlo.add", _a, _b, _r)))
CASES.append(
    Case("add/return-resharded", _binary("stablehlo.multiply", "x|y", "x|y", "x|y", ret="y|x"))
)
CASES.append(Case("add/return-unreduced", _binary("stablehlo.add", "x|", "x|", "x|!y", ret="x|")))
CASES.append(
    Case("add/return-more-unreduced", _binary("stablehlo.add", "x|!y", "x|!y", "x|!y", ret="|!x,y"))
)
CASES.append(
    Case(
        "max/device-order",
        module(
            func(
                [(T2, None), (T2, None)],
                [
                    f"%0 = stablehlo.maximum %arg0, %arg1{per('x|y', mesh='mesh_perm')} : {T2}",
                    f"%1 = stablehlo.maximum %0, %arg1{per('x|y')} : {T2}",
                    f"return %1 : {T2}",
                ],
                [(T2, None)],
            )
        ),
    )
)


def _dot_general(lhs_t, rhs_t, out_t, dims, a, b, r, ret=None) -> str:
    return module(
        func(
            [(lhs_t, a), (rhs_t, b)],
            [
                f"%0 = stablehlo.dot_general %arg0, %arg1, {dims}{per(r)} : ({lhs_t}, {rhs_t}) -> {out_t}",
                f"return %0 : {out_t}",
            ],
            [(out_t, ret)],
        )
    )


_MM = ("tensor<8x32xf32>", "tensor<32x16xf32>", "tensor<8x16xf32>", "contracting_dims = [1] x [0]")
_BMM = (
    "tensor<4x8x32xf32>",
    "tensor<4x32x16xf32>",
    "tensor<4x8x16xf32>",
    "batching_dims = [0] x [0], contracting_dims = [2] x [1]",
)
_BIG_OUT = (
    "tensor<8x4xf32>",
    "tensor<4x16xf32>",
    "tensor<8x16xf32>",
    "contracting_dims = [1] x [0]",
)
DOT_GENERAL = [
    ("mm", _MM, "|x", "x|y", "x|y"),
    ("mm-result-on-contracting", _MM, "|x", "x|y", "|x"),
    ("mm-result-on-contracting-rhs", _MM, "y|x", "x|", "x|"),
    ("mm-compatible", _MM, "y|x", "x|z", "y|z!x"),
    ("mm-reduce-scatter", _MM, "|x", "x|", "|x"),
    ("mm-lhs-rhs-conflict", _MM, "|x", "y|", "|"),
    ("mm-both-non-contracting-conflict", _MM, "x|", "|x", "x|"),
    ("mm-two-conflicts", _MM, "y|x", "x|z", "z|y"),
    ("mm-unreduced-result", _MM, "y|x", "x|", "y|!x"),
    ("mm-unreduced-result-partial", _MM, "|x,z", "x,z|", "|!x"),
    ("mm-result-larger", _BIG_OUT, "|x", "x|", "|x"),
    ("mm-sub-axes", _MM, "|y:(1)2", "y:(1)2|y:(2)2", "|y:(1)2"),
    ("bmm", _BMM, "x||y", "x|y|", "x||z"),
    ("bmm-batch-conflict", _BMM, "x||", "y||", "x||"),
    ("bmm-result-batch-on-contracting", _BMM, "x||y", "x|y|", "y||"),
    ("bmm-all-sharded", _BMM, "x|y|z", "x|z|", "x|y|"),
    ("bmm-unreduced", _BMM, "|y|x", "|x|", "|y|!x"),
    ("bmm-big-conflict", _BMM, "x,y|z|", "|z|x", "z|x|y"),
]
for _id, (_lt, _rt, _ot, _dims), _a, _b, _r in DOT_GENERAL:
    CASES.append(Case(f"dot_general/{_id}", _dot_general(_lt, _rt, _ot, _dims, _a, _b, _r)))
CASES.append(Case("dot_general/return-other", _dot_general(*_MM, "|x", "x|y", "x|y", ret="y|x")))

for _id, _a, _b, _r in [
    ("conflict", "|x", "x|", "|x"),
    ("plain", "y|", "|z", "y|z"),
    ("mixed", "x|y", "y|z", "z|x"),
]:
    CASES.append(
        Case(
            f"dot/{_id}",
            module(
                func(
                    [("tensor<8x32xf32>", _a), ("tensor<32x16xf32>", _b)],
                    [
                        f"%0 = stablehlo.dot %arg0, %arg1{per(_r)} : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>",
                        "return %0 : tensor<8x16xf32>",
                    ],
                    [("tensor<8x16xf32>", None)],
                )
            ),
        )
    )


def _reduce(a: str, r: str, dims: str = "1", out_t: str = "tensor<8xf32>", in_t: str = T2) -> str:
    return module(
        func(
            [(in_t, a)],
            [
                "%cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>",
                f'%0 = "stablehlo.reduce"(%arg0, %cst) <{{dimensions = array<i64: {dims}>}}> ({{',
                "^bb0(%p: tensor<f32>, %q: tensor<f32>):",
                "  %s = stablehlo.add %p, %q : tensor<f32>",
                "  stablehlo.return %s : tensor<f32>",
                f"}}){per(r)} : ({in_t}, tensor<f32>) -> {out_t}",
                f"return %0 : {out_t}",
            ],
            [(out_t, None)],
        )
    )


for _id, _a, _r in [
    ("reduced-sharded", "x|y", "x"),
    ("result-conflict", "x|y", "y"),
    ("unreduced", "x|y", "x!y"),
    ("unreduced-extra", "x|y", "x!y,z"),
    ("replicated", "|", "z"),
    ("both-dims", "x,y|z", "z"),
]:
    CASES.append(Case(f"reduce/{_id}", _reduce(_a, _r)))
CASES.append(Case("reduce/all-dims", _reduce("x|y", "-", dims="0, 1", out_t="tensor<f32>")))


def _unary(op_text: str, in_t: str, out_t: str, a: str, r: str, ret: str | None = None) -> str:
    return module(
        func(
            [(in_t, a)],
            [f"%0 = {op_text}{per(r)} : ({in_t}) -> {out_t}", f"return %0 : {out_t}"],
            [(out_t, ret)],
        )
    )


_RESHAPES = [
    ("merge", "tensor<8x16xf32>", "tensor<128xf32>", "x|y", "y"),
    ("split", "tensor<128xf32>", "tensor<8x16xf32>", "x,y", "y|x"),
    ("split-compatible", "tensor<128xf32>", "tensor<8x16xf32>", "x,y", "x|y"),
    ("overflow-operand", "tensor<6x4xf32>", "tensor<24xf32>", "|", "y"),
    ("overflow-result", "tensor<24xf32>", "tensor<6x4xf32>", "y", "|"),
    ("overflow-both", "tensor<6x4xf32>", "tensor<24xf32>", "y|", "y,x"),
    ("overflow-three-factors", "tensor<6x2x4xf32>", "tensor<48xf32>", "||", "y,z"),
    ("overflow-sub-axis", "tensor<6x4xf32>", "tensor<24xf32>", "|", "y:(1)2,x"),
]
for _id, _it, _ot, _a, _r in _RESHAPES:
    CASES.append(Case(f"reshape/{_id}", _unary("stablehlo.reshape %arg0", _it, _ot, _a, _r)))
for _id, _r in [("a", "a"), ("b", "b"), ("ba", "b,a")]:
    CASES.append(
        Case(
            f"reshape/overflow-mesh6-{_id}",
            module(
                func(
                    [("tensor<4x6xf32>", None)],
                    [
                        f"%0 = stablehlo.reshape %arg0{per(_r, mesh='mesh6')} : (tensor<4x6xf32>) -> tensor<24xf32>",
                        "return %0 : tensor<24xf32>",
                    ],
                    [("tensor<24xf32>", None)],
                )
            ),
        )
    )

for _id, _a, _r in [("swap", "x|y", "x|y"), ("same", "x|y", "y|x"), ("three", "x,y|z", "z|")]:
    CASES.append(
        Case(
            f"transpose/{_id}",
            _unary("stablehlo.transpose %arg0, dims = [1, 0]", T2, "tensor<16x8xf32>", _a, _r),
        )
    )
for _id, _a, _r in [("larger-result", "y", "x|y"), ("conflict", "x", "x|"), ("same", "z", "|z")]:
    CASES.append(
        Case(
            f"broadcast/{_id}",
            _unary("stablehlo.broadcast_in_dim %arg0, dims = [1]", "tensor<16xf32>", T2, _a, _r),
        )
    )
for _id, _a, _r in [
    ("permutation", "x|y", "|y"),
    ("replicated-result", "x|y", "|"),
    ("result-sharded", "|", "x|y"),
]:
    CASES.append(
        Case(
            f"slice/{_id}",
            _unary(
                '"stablehlo.slice"(%arg0) <{start_indices = array<i64: 0, 0>, limit_indices = array<i64: 4, 16>, '
                "strides = array<i64: 1, 1>}>",
                T2,
                "tensor<4x16xf32>",
                _a,
                _r,
            ),
        )
    )
for _id, _a, _r in [("reverse-sharded", "x|y", "y|x"), ("same", "x|y", "x|y")]:
    CASES.append(
        Case(f"reverse/{_id}", _unary("stablehlo.reverse %arg0, dims = [0]", T2, T2, _a, _r))
    )
for _id, _a, _r in [("fft", "x|y", "x|"), ("fft-batch", "|y", "x|y")]:
    CASES.append(
        Case(
            f"fft/{_id}",
            _unary(
                "stablehlo.fft %arg0, type =  FFT, length = [16]",
                "tensor<8x16xcomplex<f32>>",
                "tensor<8x16xcomplex<f32>>",
                _a,
                _r,
            ),
        )
    )
for _id, _a, _r in [("batch", "x|y|", "x||"), ("conflict", "y||z", "x|z|")]:
    CASES.append(
        Case(
            f"cholesky/{_id}",
            _unary(
                "stablehlo.cholesky %arg0, lower = true",
                "tensor<4x8x8xf32>",
                "tensor<4x8x8xf32>",
                _a,
                _r,
            ),
        )
    )
