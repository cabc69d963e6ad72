"""`slicing.split` agrees with XLA about which device holds which slice.

Each device's piece (from `split`) enters a manual computation over the real mesh whose
out_sharding is the sharding under test; XLA then gathers the global value by its own reading
of that sharding. Getting the original array back on every device means both agree — for
sub-axes, several axes on one dimension, explicit device ids and replicated axes.
"""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from shardwise.api import parse_sharding
from shardwise.check.slicing import split
from shardwise.io.reference import ReferenceError, run_pass
from shardwise.ir import TensorType
from shardwise.syntax import parse_mesh

CASES = [
    ('<["x"=2, "y"=2]>', '[{"x"}, {"y"}]'),
    ('<["x"=2, "y"=2]>', '[{"y", "x"}, {}]'),
    ('<["x"=2, "y"=2]>', '[{}, {"y"}]'),
    ('<["x"=2, "y"=2], device_ids=[3, 1, 2, 0]>', '[{"x"}, {"y"}]'),
    ('<["x"=2, "y"=2], device_ids=[2, 0, 3, 1]>', '[{"y", "x"}, {}]'),
    ('<["x"=4, "y"=2]>', '[{"x":(1)2}, {"x":(2)2, "y"}]'),
    ('<["x"=4, "y"=2]>', '[{"y", "x":(2)2}, {"x":(1)2}]'),
    ('<["x"=8]>', '[{"x":(4)2, "x":(1)2}, {"x":(2)2}]'),
    ('<["x"=2, "y"=4], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]>', '[{"y":(2)2}, {"x", "y":(1)2}]'),
]
SHAPE = (8, 8)


def _program(mesh_text: str, dims: str, n: int, local: tuple[int, ...]) -> str:
    axes = [a.name for a in parse_mesh("#sdy.mesh" + mesh_text).axes]
    all_axes = ", ".join(f'"{a}"' for a in axes)
    stacked = TensorType((n, *local), "f32")
    piece = TensorType((1, *local), "f32")
    local_t = TensorType(local, "f32")
    glob = TensorType(SHAPE, "f32")
    return f"""sdy.mesh @mesh = {mesh_text}
func.func @main(%arg0: {stacked} {{sdy.sharding = #sdy.sharding<@mesh, [{{{all_axes}}}, {{}}, {{}}]>}})
    -> ({glob} {{sdy.sharding = #sdy.sharding<@mesh, [{{}}, {{}}]>}}) {{
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{{{all_axes}}}, {{}}, {{}}]>]
      out_shardings=[<@mesh, {dims}>] manual_axes={{{all_axes}}} (%l: {piece}) {{
    %1 = stablehlo.reshape %l : ({piece}) -> {local_t}
    sdy.return %1 : {local_t}
  }} : ({stacked}) -> {glob}
  return %0 : {glob}
}}
"""


def _check_split(executor, mesh_text: str, dims: str) -> None:
    mesh = parse_mesh("#sdy.mesh" + mesh_text)
    sharding = parse_sharding(f"<@mesh, {dims}>")
    n = mesh.total_size
    x = np.arange(np.prod(SHAPE), dtype=np.float32).reshape(SHAPE)
    pieces = split(x, sharding, mesh)
    (out,) = executor.run(_program(mesh_text, dims, n, pieces.shape[1:]), [pieces], n)
    copies = out.reshape(n, *SHAPE)
    for p in range(n):
        assert np.array_equal(copies[p], x), f"device {p}"


@pytest.mark.parametrize("mesh_text, dims", CASES, ids=[f"{d}{m}" for m, d in CASES])
def test_split_matches_xla(executor, mesh_text, dims):
    _check_split(executor, mesh_text, dims)


def test_a_wrong_split_is_caught(executor):
    """The same program with two devices' pieces swapped does not give the array back."""
    mesh_text, dims = CASES[0]
    mesh = parse_mesh("#sdy.mesh" + mesh_text)
    x = np.arange(64, dtype=np.float32).reshape(SHAPE)
    pieces = split(x, parse_sharding(f"<@mesh, {dims}>"), mesh)[[1, 0, 2, 3]]
    (out,) = executor.run(_program(mesh_text, dims, 4, pieces.shape[1:]), [pieces], 4)
    assert not np.array_equal(out.reshape(4, *SHAPE)[0], x)


# -- random meshes and shardings -------------------------------------------------------------


@st.composite
def mesh_and_sharding(draw):
    """A mesh of up to 8 devices (maybe with permuted ids) and a 2-d sharding on it.

    Each axis is cut into digits of size 2 (sub-axes) or kept whole; every piece goes to dim
    0, dim 1 or nowhere, in a random order within its dim.
    """
    sizes = draw(st.sampled_from([(2,), (4,), (8,), (2, 2), (2, 4), (4, 2), (2, 2, 2)]))
    names = ["x", "y", "z"][: len(sizes)]
    n = int(np.prod(sizes))
    ids = ""
    if draw(st.booleans()):
        perm = draw(st.permutations(list(range(n))))
        ids = f", device_ids=[{', '.join(map(str, perm))}]"
    axes = ", ".join(f'"{a}"={s}' for a, s in zip(names, sizes, strict=True))
    mesh_text = f"<[{axes}]{ids}>"
    pieces = []
    for name, size in zip(names, sizes, strict=True):
        if size == 2 or not draw(st.booleans()):
            pieces.append(f'"{name}"')
            continue
        pieces.extend(f'"{name}":({2**k})2' for k in range(size.bit_length() - 1))
    dims: list[list[str]] = [[], []]
    for piece in draw(st.permutations(pieces)):
        where = draw(st.sampled_from([0, 1, None]))
        if where is not None:
            dims[where].append(piece)
    return mesh_text, "[" + ", ".join("{" + ", ".join(d) + "}" for d in dims) + "]"


def _valid(mesh_text: str, dims: str) -> bool:
    """Whether Shardy accepts the sharding (it rejects e.g. sub-axes that should be merged)."""
    text = (
        f"sdy.mesh @mesh = {mesh_text}\n"
        f"func.func @main(%arg0: tensor<8x8xf32> {{sdy.sharding = #sdy.sharding<@mesh, {dims}>}})"
        " -> tensor<8x8xf32> {\n  return %arg0 : tensor<8x8xf32>\n}\n"
    )
    try:
        run_pass(text, None)
    except ReferenceError:
        return False
    return True


@settings(max_examples=15)
@given(case=mesh_and_sharding())
def test_random_split_matches_xla(executor, case):
    mesh_text, dims = case
    assume(_valid(mesh_text, dims))
    _check_split(executor, mesh_text, dims)
