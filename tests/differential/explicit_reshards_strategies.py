"""Hypothesis strategy: a func with one op of a random family and random (closed) shardings.

Every operand, the op's results and optionally the func result get a random sharding on
``["x"=2, "y"=4, "z"=2]``: a random subset of ``"x"``, ``"y"``, ``"y":(1)2``, ``"y":(2)2``,
``"z"`` (no two overlapping), spread over the dims, some axes unreduced instead.
"""

from __future__ import annotations

from hypothesis import strategies as st

from tests.differential.explicit_reshards_cases import MESHES

__all__ = ["single_op_modules", "TEMPLATES"]

_ATOMS = ('"x"', '"y"', '"y":(1)2', '"y":(2)2', '"z"')
_T = "tensor<8x16xf32>"
_REDUCE_BODY = (
    "({{\n  ^bb0(%p: tensor<f32>, %q: tensor<f32>):\n    %s = stablehlo.add %p, %q : tensor<f32>\n"
    "    stablehlo.return %s : tensor<f32>\n  }})"
)
_CST = "%cst = stablehlo.constant dense<0.0> : tensor<f32>\n  "

# name -> (operand types, result types, op text with {r} for the sharding attribute)
TEMPLATES: dict[str, tuple[list[str], list[str], str]] = {
    "add": ([_T, _T], [_T], f"%0 = stablehlo.add %arg0, %arg1{{r}} : {_T}"),
    "select": (
        ["tensor<8x16xi1>", _T, _T],
        [_T],
        f"%0 = stablehlo.select %arg0, %arg1, %arg2{{r}} : tensor<8x16xi1>, {_T}",
    ),
    "mm": (
        ["tensor<8x32xf32>", "tensor<32x16xf32>"],
        [_T],
        "%0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0]{r} : "
        f"(tensor<8x32xf32>, tensor<32x16xf32>) -> {_T}",
    ),
    "bmm": (
        ["tensor<4x8x32xf32>", "tensor<4x32x16xf32>"],
        ["tensor<4x8x16xf32>"],
        "%0 = stablehlo.dot_general %arg0, %arg1, batching_dims = [0] x [0], "
        "contracting_dims = [2] x [1]{r} : (tensor<4x8x32xf32>, tensor<4x32x16xf32>) -> "
        "tensor<4x8x16xf32>",
    ),
    "reshape-merge": (
        [_T],
        ["tensor<128xf32>"],
        f"%0 = stablehlo.reshape %arg0{{r}} : ({_T}) -> tensor<128xf32>",
    ),
    "reshape-both": (
        ["tensor<4x32xf32>"],
        [_T],
        f"%0 = stablehlo.reshape %arg0{{r}} : (tensor<4x32xf32>) -> {_T}",
    ),
    "reshape-overflow": (
        ["tensor<6x4xf32>"],
        ["tensor<24xf32>"],
        "%0 = stablehlo.reshape %arg0{r} : (tensor<6x4xf32>) -> tensor<24xf32>",
    ),
    "reshape-3d": (
        ["tensor<2x6x4xf32>"],
        ["tensor<12x4xf32>"],
        "%0 = stablehlo.reshape %arg0{r} : (tensor<2x6x4xf32>) -> tensor<12x4xf32>",
    ),
    "transpose": (
        [_T],
        ["tensor<16x8xf32>"],
        f"%0 = stablehlo.transpose %arg0, dims = [1, 0]{{r}} : ({_T}) -> tensor<16x8xf32>",
    ),
    "concatenate": (
        [_T, _T],
        ["tensor<16x16xf32>"],
        f"%0 = stablehlo.concatenate %arg0, %arg1, dim = 0{{r}} : ({_T}, {_T}) -> tensor<16x16xf32>",
    ),
    "broadcast": (
        ["tensor<16xf32>"],
        [_T],
        f"%0 = stablehlo.broadcast_in_dim %arg0, dims = [1]{{r}} : (tensor<16xf32>) -> {_T}",
    ),
    "reduce": (
        [_T],
        ["tensor<8xf32>"],
        _CST
        + '%0 = "stablehlo.reduce"(%arg0, %cst) <{{dimensions = array<i64: 1>}}> '
        + _REDUCE_BODY
        + f"{{r}} : ({_T}, tensor<f32>) -> tensor<8xf32>",
    ),
    "pad": (
        [_T],
        ["tensor<16x16xf32>"],
        _CST + '%0 = "stablehlo.pad"(%arg0, %cst) <{{edge_padding_high = array<i64: 8, 0>, '
        "edge_padding_low = array<i64: 0, 0>, interior_padding = array<i64: 0, 0>}}>"
        f"{{r}} : ({_T}, tensor<f32>) -> tensor<16x16xf32>",
    ),
}


def _rank(type_text: str) -> int:
    return type_text.count("x")


def _mesh_index(atom: str) -> int:
    return "xyz".index(atom.strip('"')[0])


def _overlaps(a: str, b: str) -> bool:
    return a.split(":")[0] == b.split(":")[0] and (a == b or ":" not in a or ":" not in b)


@st.composite
def _sharding(draw: st.DrawFn, rank: int, unreduced: bool = True) -> str | None:
    if draw(st.integers(0, 9)) == 0:
        return None
    chosen: list[str] = []
    for atom in draw(st.permutations(_ATOMS)):
        if draw(st.booleans()) and not any(_overlaps(atom, c) for c in chosen):
            chosen.append(atom)
    dims: list[list[str]] = [[] for _ in range(rank)]
    reduced: list[str] = []
    for atom in chosen:
        if unreduced and ":" not in atom and draw(st.integers(0, 6)) == 0:
            reduced.append(atom)
        elif rank:
            dims[draw(st.integers(0, rank - 1))].append(atom)
    for d in dims:  # "y":(1)2 right before "y":(2)2 would have to be merged
        for i in range(len(d) - 1):
            if d[i] == '"y":(1)2' and d[i + 1] == '"y":(2)2':
                d[i], d[i + 1] = d[i + 1], d[i]
    text = "<@mesh, [" + ", ".join("{" + ", ".join(d) + "}" for d in dims) + "]"
    if reduced:
        text += ", unreduced={" + ", ".join(sorted(reduced, key=_mesh_index)) + "}"
    return text + ">"


@st.composite
def single_op_modules(draw: st.DrawFn) -> str:
    name = draw(st.sampled_from(sorted(TEMPLATES)))
    operand_types, result_types, op_text = TEMPLATES[name]
    args = [(t, draw(_sharding(_rank(t)))) for t in operand_types]
    result = draw(_sharding(_rank(result_types[0])))
    attr = "" if result is None else f" {{sdy.sharding = #sdy.sharding_per_value<[{result}]>}}"
    ret = draw(st.one_of(st.none(), _sharding(_rank(result_types[0]), unreduced=False)))
    arg_text = ", ".join(
        f"%arg{i}: {t}" + ("" if s is None else f" {{sdy.sharding = #sdy.sharding{s}}}")
        for i, (t, s) in enumerate(args)
    )
    ret_attr = "" if ret is None else f" {{sdy.sharding = #sdy.sharding{ret}}}"
    return (
        MESHES
        + f"func.func @main({arg_text}) -> ({result_types[0]}{ret_attr}) {{\n  "
        + op_text.format(r=attr)
        + f"\n  return %0 : {result_types[0]}\n}}\n"
    )
