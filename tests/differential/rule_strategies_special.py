"""Hypothesis strategies (continued): gather/scatter, collectives, linalg, sort, fft, rng,
custom calls, and `FAMILIES`: every op-family strategy by name."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from hypothesis import strategies as st

from tests.differential import rule_strategies as base
from tests.differential.rule_strategies import (
    FuncCase,
    _subset,
    binary_region,
    i64_array,
    int_list,
    region,
    shapes,
    tensor,
)

# -- gather / scatter ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _GatherShape:
    operand: list[int]
    indices: list[int]
    slices: list[int]
    fields: list[str]  # in MLIR's print order; gather names
    slice_sizes: list[int]


@st.composite
def _gather_shape(draw: st.DrawFn) -> _GatherShape:
    operand = list(draw(shapes(min_rank=1, max_rank=4)))
    rank = len(operand)
    batching = _subset(draw, range(rank), max_size=1)
    if rank == 1:
        batching = []
    rest = [d for d in range(rank) if d not in batching]
    index_map = list(
        draw(st.lists(st.sampled_from(rest), unique=True, min_size=1, max_size=len(rest)))
    )
    collapsed = _subset(draw, rest, max_size=2)
    slice_sizes = [
        1 if d in batching or d in collapsed else draw(st.integers(1, operand[d]))
        for d in range(rank)
    ]
    num_batch = len(batching) + draw(st.integers(0, 2))
    batch_sizes = [draw(st.sampled_from((1, 2, 3, 5))) for _ in range(num_batch)]
    batch_positions = draw(st.permutations(range(num_batch)))[: len(batching)]
    for pos, d in zip(batch_positions, batching, strict=True):
        batch_sizes[pos] = operand[d]
    index_vector_dim = draw(st.integers(0, num_batch))
    if len(index_map) == 1 and draw(st.booleans()):
        indices = list(batch_sizes)
        index_vector_dim = num_batch  # implicit trailing index vector of size 1
    else:
        indices = batch_sizes[:index_vector_dim] + [len(index_map)] + batch_sizes[index_vector_dim:]
    indices_batching = [p if p < index_vector_dim else p + 1 for p in batch_positions]
    offset_sizes = [slice_sizes[d] for d in range(rank) if d not in batching and d not in collapsed]
    out_rank = num_batch + len(offset_sizes)
    offset_dims = sorted(draw(st.permutations(range(out_rank)))[: len(offset_sizes)])
    slices, b, o = [], iter(batch_sizes), iter(offset_sizes)
    slices = [next(o) if d in offset_dims else next(b) for d in range(out_rank)]
    fields = [f"offset_dims = {int_list(offset_dims)}"] if offset_dims else []
    if collapsed:
        fields.append(f"collapsed_slice_dims = {int_list(collapsed)}")
    if batching:
        fields.append(f"operand_batching_dims = {int_list(batching)}")
        fields.append(f"start_indices_batching_dims = {int_list(indices_batching)}")
    fields.append(f"start_index_map = {int_list(index_map)}")
    fields.append(f"index_vector_dim = {index_vector_dim}")
    return _GatherShape(operand, indices, slices, fields, slice_sizes)


@st.composite
def gather_case(draw: st.DrawFn) -> FuncCase:
    g = draw(_gather_shape())
    c = FuncCase()
    props = f"dimension_numbers = #stablehlo.gather<{', '.join(g.fields)}>, slice_sizes = {i64_array(g.slice_sizes)}"
    c.op(
        "stablehlo.gather",
        [c.arg(tensor(g.operand)), c.arg(tensor(g.indices, "i32"))],
        [tensor(g.slices)],
        props,
    )
    return c


_SCATTER_NAMES = {
    "offset_dims": "update_window_dims",
    "collapsed_slice_dims": "inserted_window_dims",
    "operand_batching_dims": "input_batching_dims",
    "start_indices_batching_dims": "scatter_indices_batching_dims",
    "start_index_map": "scatter_dims_to_operand_dims",
}


def _scatter_region(draw: st.DrawFn, n: int) -> str:
    kind = draw(st.integers(0, 3))
    if kind == 0:
        return binary_region(
            draw(st.sampled_from(("stablehlo.add", "stablehlo.maximum", "stablehlo.multiply"))),
            "f32",
            n,
        )
    if kind == 1:  # overwrite: returns the update, not a reduction
        scalar = tensor(())
        return region([scalar] * (2 * n), [], [f"%a{k + n}" for k in range(n)])
    if kind == 2:  # mixed ops: not a common reduction
        if n == 1:
            return binary_region("stablehlo.subtract", "f32", n)
        scalar = tensor(())
        body = [
            f'%r0 = "stablehlo.add"(%a0, %a2) : ({scalar}, {scalar}) -> {scalar}',
            f'%r1 = "stablehlo.maximum"(%a1, %a3) : ({scalar}, {scalar}) -> {scalar}',
        ]
        return region([scalar] * 4, body, ["%r0", "%r1"])
    scalar = tensor(())  # swapped operands: still a reduction
    body = [
        f'%r{k} = "stablehlo.add"(%a{k + n}, %a{k}) : ({scalar}, {scalar}) -> {scalar}'
        for k in range(n)
    ]
    return region([scalar] * (2 * n), body, [f"%r{k}" for k in range(n)])


@st.composite
def scatter_case(draw: st.DrawFn) -> FuncCase:
    g = draw(_gather_shape())
    n = draw(st.integers(1, 2))
    fields = []
    for f in g.fields:
        name, value = f.split(" = ", 1)
        fields.append(f"{_SCATTER_NAMES.get(name, name)} = {value}")
    c = FuncCase()
    inputs = [c.arg(tensor(g.operand)) for _ in range(n)]
    indices = c.arg(tensor(g.indices, "i32"))
    updates = [c.arg(tensor(g.slices)) for _ in range(n)]
    props = f"scatter_dimension_numbers = #stablehlo.scatter<{', '.join(fields)}>"
    c.op(
        "stablehlo.scatter",
        [*inputs, indices, *updates],
        [tensor(g.operand)] * n,
        props,
        _scatter_region(draw, n),
    )
    return c


# -- collectives, linalg, misc ------------------------------------------------------------------

_GROUPS = "replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>"


@st.composite
def collective_case(draw: st.DrawFn) -> FuncCase:
    shape = list(draw(shapes(min_rank=1)))
    dim = draw(st.integers(0, len(shape) - 1))
    c = FuncCase()
    kind = draw(st.integers(0, 3))
    if kind == 0:
        out = shape[:dim] + [shape[dim] * 2] + shape[dim + 1 :]
        c.op(
            "stablehlo.all_gather",
            [c.arg(tensor(shape))],
            [tensor(out)],
            f"all_gather_dim = {dim} : i64, {_GROUPS}",
        )
    elif kind == 1:
        shape[dim] *= 2
        out = shape[:dim] + [shape[dim] // 2] + shape[dim + 1 :]
        c.op("stablehlo.reduce_scatter", [c.arg(tensor(shape))], [tensor(out)],
             f"{_GROUPS}, scatter_dimension = {dim} : i64", binary_region("stablehlo.add", "f32"))  # fmt: skip
    elif kind == 2:
        concat = draw(st.integers(0, len(shape) - 1))
        shape[dim] *= 2
        out = list(shape)
        out[dim] //= 2
        out[concat] *= 2
        props = f"concat_dimension = {concat} : i64, {_GROUPS}, split_count = 2 : i64, split_dimension = {dim} : i64"
        c.op("stablehlo.all_to_all", [c.arg(tensor(shape))], [tensor(out)], props)
    else:
        c.op(
            "stablehlo.all_reduce",
            [c.arg(tensor(shape))],
            [tensor(shape)],
            _GROUPS,
            binary_region("stablehlo.add", "f32"),
        )
        c.op("stablehlo.collective_permute", [c.arg(tensor(shape))], [tensor(shape)],
             "source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>")  # fmt: skip
    return c


@st.composite
def linalg_case(draw: st.DrawFn) -> FuncCase:
    batch = list(draw(shapes(max_rank=2)))
    n, m = draw(st.sampled_from((1, 2, 4))), draw(st.sampled_from((1, 3, 4)))
    c = FuncCase()
    kind = draw(st.integers(0, 2))
    if kind == 0:
        a = tensor(batch + [n, n])
        c.op("stablehlo.cholesky", [c.arg(a)], [a], f"lower = {str(draw(st.booleans())).lower()}")
    elif kind == 1:
        left = draw(st.booleans())
        b = tensor(batch + ([n, m] if left else [m, n]))
        transpose = draw(st.sampled_from(("NO_TRANSPOSE", "TRANSPOSE", "ADJOINT")))
        props = f"left_side = {str(left).lower()}, lower = true, transpose_a = #stablehlo<transpose {transpose}>, unit_diagonal = false"
        c.op("stablehlo.triangular_solve", [c.arg(tensor(batch + [n, n])), c.arg(b)], [b], props)
    else:
        shape = list(draw(shapes(min_rank=1)))
        feature = draw(st.integers(0, len(shape) - 1))
        stats = [c.arg(tensor([shape[feature]])) for _ in range(4)]
        props = f"epsilon = 1.000000e-03 : f32, feature_index = {feature} : i64"
        operand = c.arg(tensor(shape))
        c.op("stablehlo.batch_norm_inference", [operand, *stats], [tensor(shape)], props)
    return c


@st.composite
def sort_case(draw: st.DrawFn) -> FuncCase:
    shape = draw(shapes(min_rank=1))
    dim = draw(st.integers(0, len(shape) - 1))
    n = draw(st.integers(1, 2))
    scalar = tensor(())
    cmp = f'%p = "stablehlo.compare"(%a0, %a1) <{{comparison_direction = #stablehlo<comparison_direction GT>}}> : ({scalar}, {scalar}) -> tensor<i1>'
    body = region([scalar] * (2 * n), [cmp], ["%p"]).replace(
        f"({scalar}) -> ()", "(tensor<i1>) -> ()"
    )
    c = FuncCase()
    inputs = [c.arg(tensor(shape)) for _ in range(n)]
    c.op(
        "stablehlo.sort",
        inputs,
        [tensor(shape)] * n,
        f"dimension = {dim} : i64, is_stable = true",
        body,
    )
    return c


@st.composite
def fft_case(draw: st.DrawFn) -> FuncCase:
    batch = list(draw(shapes(max_rank=2)))
    lengths = [draw(st.sampled_from((2, 4, 8))) for _ in range(draw(st.integers(1, 3)))]
    kind = draw(st.sampled_from(("FFT", "IFFT", "RFFT", "IRFFT")))
    complex_shape = batch + lengths[:-1] + [lengths[-1] // 2 + 1]
    if kind in ("FFT", "IFFT"):
        ins = outs = tensor(batch + lengths, "complex<f32>")
    elif kind == "RFFT":
        ins, outs = tensor(batch + lengths), tensor(complex_shape, "complex<f32>")
    else:
        ins, outs = tensor(complex_shape, "complex<f32>"), tensor(batch + lengths)
    c = FuncCase()
    props = f"fft_length = {i64_array(lengths)}, fft_type = #stablehlo<fft_type {kind}>"
    c.op("stablehlo.fft", [c.arg(ins)], [outs], props)
    return c


@st.composite
def rng_bit_generator_case(draw: st.DrawFn) -> FuncCase:
    state = tensor([draw(st.sampled_from((2, 3)))], "ui64")
    out = tensor(draw(shapes()), "ui32")
    c = FuncCase()
    c.op(
        "stablehlo.rng_bit_generator",
        [c.arg(state)],
        [state, out],
        "rng_algorithm = #stablehlo<rng_algorithm DEFAULT>",
    )
    return c


def _custom_call(c: FuncCase, target: str, operands: list[str], results: list[str]) -> list[str]:
    return c.op("stablehlo.custom_call", operands, results, f'call_target_name = "{target}"')


@st.composite
def custom_call_case(draw: st.DrawFn) -> FuncCase:
    batch = list(draw(shapes(max_rank=2)))
    m, n = draw(st.sampled_from((1, 2, 4))), draw(st.sampled_from((1, 3, 4)))
    c = FuncCase()
    kind = draw(st.integers(0, 6))
    if kind == 0:
        a = tensor(batch + [n, n])
        _custom_call(c, "Eigh", [c.arg(a)], [a, tensor(batch + [n])])
    elif kind == 1:
        target = draw(st.sampled_from(("Qr", "QrDecompositionBlock")))
        _custom_call(
            c,
            target,
            [c.arg(tensor(batch + [m, n]))],
            [tensor(batch + [m, n]), tensor(batch + [min(m, n)])],
        )
    elif kind == 2:
        a = tensor(batch + [m, n])
        _custom_call(
            c,
            "ProductOfElementaryHouseholderReflectors",
            [c.arg(a), c.arg(tensor(batch + [min(m, n)]))],
            [a],
        )
    elif kind == 3:
        k = draw(st.integers(1, n))
        _custom_call(
            c,
            "mhlo.topk",
            [c.arg(tensor(batch + [n]))],
            [tensor(batch + [k]), tensor(batch + [k], "i32")],
        )
    elif kind == 4:
        target = draw(st.sampled_from(("ApproxTopK", "PartialReduce")))
        k = draw(st.integers(1, n))
        ins = [
            c.arg(tensor(batch + [n])),
            c.arg(tensor(batch + [n], "i32")),
            c.arg(tensor(())),
            c.arg(tensor((), "i32")),
        ]
        _custom_call(c, target, ins, [tensor(batch + [k]), tensor(batch + [k], "i32")])
    elif kind == 5:
        shape = batch + [m]
        target = draw(st.sampled_from(sorted(POINTWISE_CUSTOM_CALLS)))
        _custom_call(c, target, [c.arg(tensor(shape))], [tensor(shape)])
    else:
        word = tensor([2], "ui32")
        state = _custom_call(c, "X64Combine", [c.arg(word), c.arg(word)], [tensor([2], "ui64")])[0]
        if draw(st.booleans()):
            c.op("stablehlo.rng_bit_generator", [state], [tensor([2], "ui64"), tensor([4], "ui32")],
                 "rng_algorithm = #stablehlo<rng_algorithm DEFAULT>")  # fmt: skip
    return c


POINTWISE_CUSTOM_CALLS = frozenset(
    {
        "Cholesky", "CompactWyHelper", "InspectSharding", "LayoutConstraint", "MoveToDevice",
        "MoveToHost", "X64SplitHigh", "X64SplitLow", "_SPMDInternalOp_RotateRight",
        "annotate_device_placement", "mhlo.erf", "xla.megascale.provide_metadata",
    }
)  # fmt: skip

FAMILIES: dict[str, Callable[[], st.SearchStrategy[FuncCase]]] = {
    "elementwise": base.elementwise_case,
    "transpose": base.transpose_case,
    "broadcast_in_dim": base.broadcast_in_dim_case,
    "reshape": base.reshape_case,
    "bitcast_convert": base.bitcast_convert_case,
    "dot_general": base.dot_general_case,
    "dot": base.dot_case,
    "convolution": base.convolution_case,
    "reduce": base.reduce_case,
    "reduce_window": base.reduce_window_case,
    "select_and_scatter": base.select_and_scatter_case,
    "slice": base.slice_case,
    "pad": base.pad_case,
    "dynamic_slice": base.dynamic_slice_case,
    "dynamic_update_slice": base.dynamic_update_slice_case,
    "concatenate": base.concatenate_case,
    "reverse": base.reverse_case,
    "gather": gather_case,
    "scatter": scatter_case,
    "collectives": collective_case,
    "linalg": linalg_case,
    "sort": sort_case,
    "fft": fft_case,
    "rng_bit_generator": rng_bit_generator_case,
    "custom_call": custom_call_case,
}
