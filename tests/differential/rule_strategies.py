"""Hypothesis strategies that write valid StableHLO functions, one op kind per strategy.

This module has the function builder and the dense ops (elementwise, dims, contractions,
reductions, slicing); `rule_strategies_special` has indexing, collectives, linalg, custom calls
and the `FAMILIES` table.

Each strategy draws one `FuncCase`: a function whose body is a few ops in MLIR generic form,
with every result type computed the way StableHLO's verifier expects, so the reference accepts
the module. `module_text` joins many cases into one module (one reference call).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from hypothesis import strategies as st

DIM_SIZES = (1, 2, 3, 4, 6, 8, 12, 16)


def tensor(shape: tuple[int, ...] | list[int], element: str = "f32") -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + element + ">"


def i64_array(values: tuple[int, ...] | list[int]) -> str:
    return "array<i64" + (": " + ", ".join(map(str, values)) if values else "") + ">"


def int_list(values: tuple[int, ...] | list[int]) -> str:
    return "[" + ", ".join(map(str, values)) + "]"


@dataclass
class FuncCase:
    """A function under construction: its arguments and generic-form body lines."""

    args: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    types: dict[str, str] = field(default_factory=dict)
    _next: int = 0

    def arg(self, type_: str) -> str:
        name = f"%arg{len(self.args)}"
        self.args.append(type_)
        self.types[name] = type_
        return name

    def op(
        self,
        name: str,
        operands: list[str],
        results: list[str],
        props: str = "",
        region: str = "",
        attrs: str = "",
    ) -> list[str]:
        """Append ``%r = "name"(operands) <{props}> (region) {attrs} : (types) -> (types)``."""
        base = f"%v{self._next}"
        self._next += 1
        lhs = ""
        names = [base]
        if len(results) > 1:
            lhs = f"{base}:{len(results)} = "
            names = [f"{base}#{i}" for i in range(len(results))]
        elif results:
            lhs = f"{base} = "
        for n, t in zip(names, results, strict=False):
            self.types[n] = t
        text = f'{lhs}"{name}"(' + ", ".join(operands) + ")"
        if props:
            text += f" <{{{props}}}>"
        if region:
            text += f" ({region})"
        if attrs:
            text += f" {{{attrs}}}"
        ins = ", ".join(self.types[o] for o in operands)
        outs = ", ".join(results)
        text += f" : ({ins}) -> " + (f"({outs})" if len(results) != 1 else outs)
        self.lines.append(text)
        return names

    def text(self, name: str) -> str:
        args = ", ".join(f"%arg{i}: {t}" for i, t in enumerate(self.args))
        body = "".join(f"    {line}\n" for line in self.lines)
        return f"  func.func @{name}({args}) {{\n{body}    return\n  }}\n"


def module_text(cases: list[FuncCase], prefix: str = "") -> str:
    return "module {\n" + prefix + "".join(c.text(f"c{i}") for i, c in enumerate(cases)) + "}\n"


def region(arg_types: list[str], body: list[str], results: list[str]) -> str:
    """A one-block region in generic form; `body` lines may use %a0, %a1, ..."""
    args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(arg_types))
    lines = "".join(f"      {b}\n" for b in body)
    rets = ", ".join(results)
    types = ", ".join(arg_types[: len(results)])
    return (
        f'{{\n    ^bb0({args}):\n{lines}      "stablehlo.return"({rets}) : ({types}) -> ()\n    }}'
    )


def binary_region(op: str, element: str, n: int = 1) -> str:
    """A reduction body combining input k with init/update k by `op` (2n scalar args)."""
    scalar = tensor((), element)
    body = [
        f'%r{k} = "{op}"(%a{k}, %a{k + n}) : ({scalar}, {scalar}) -> {scalar}' for k in range(n)
    ]
    return region([scalar] * (2 * n), body, [f"%r{k}" for k in range(n)])


# -- shapes -------------------------------------------------------------------------------------


@st.composite
def shapes(draw: st.DrawFn, min_rank: int = 0, max_rank: int = 4) -> tuple[int, ...]:
    rank = draw(st.integers(min_rank, max_rank))
    return tuple(draw(st.sampled_from(DIM_SIZES)) for _ in range(rank))


def _subset(draw: st.DrawFn, items: range | list[int], max_size: int | None = None) -> list[int]:
    if not items:
        return []
    return sorted(draw(st.lists(st.sampled_from(list(items)), unique=True, max_size=max_size)))


# -- elementwise --------------------------------------------------------------------------------

UNARY_FLOAT = (
    "abs", "cbrt", "ceil", "cosine", "exponential", "exponential_minus_one", "floor", "log",
    "log_plus_one", "logistic", "negate", "round_nearest_afz", "round_nearest_even", "rsqrt",
    "sign", "sine", "sqrt", "tan", "tanh",
)  # fmt: skip
BINARY_FLOAT = (
    "add",
    "atan2",
    "divide",
    "maximum",
    "minimum",
    "multiply",
    "power",
    "remainder",
    "subtract",
)
UNARY_INT = ("not", "popcnt", "count_leading_zeros")
BINARY_INT = ("and", "or", "xor", "shift_left", "shift_right_arithmetic", "shift_right_logical")


@st.composite
def elementwise_case(draw: st.DrawFn) -> FuncCase:
    shape = draw(shapes())
    f, i = tensor(shape), tensor(shape, "i32")
    c = FuncCase()
    kind = draw(st.integers(0, 9))
    if kind == 0:
        c.op(f"stablehlo.{draw(st.sampled_from(UNARY_FLOAT))}", [c.arg(f)], [f])
    elif kind == 1:
        c.op(f"stablehlo.{draw(st.sampled_from(BINARY_FLOAT))}", [c.arg(f), c.arg(f)], [f])
    elif kind == 2:
        c.op(f"stablehlo.{draw(st.sampled_from(UNARY_INT))}", [c.arg(i)], [i])
    elif kind == 3:
        c.op(f"stablehlo.{draw(st.sampled_from(BINARY_INT))}", [c.arg(i), c.arg(i)], [i])
    elif kind == 4:
        direction = draw(st.sampled_from(("EQ", "NE", "LT", "GE")))
        props = f"comparison_direction = #stablehlo<comparison_direction {direction}>"
        c.op("stablehlo.compare", [c.arg(f), c.arg(f)], [tensor(shape, "i1")], props)
    elif kind == 5:
        c.op("stablehlo.convert", [c.arg(f)], [i])
        c.op("stablehlo.is_finite", [c.arg(f)], [tensor(shape, "i1")])
    elif kind == 6:
        cf = tensor(shape, "complex<f32>")
        z = c.op("stablehlo.complex", [c.arg(f), c.arg(f)], [cf])[0]
        c.op("stablehlo.real", [z], [f])
        c.op("stablehlo.imag", [z], [f])
    elif kind == 7:
        props = "exponent_bits = 5 : i32, mantissa_bits = 10 : i32"
        c.op("stablehlo.reduce_precision", [c.arg(f)], [f], props)
    elif kind == 8:
        bound = f if draw(st.booleans()) else tensor(())
        c.op("stablehlo.clamp", [c.arg(bound), c.arg(f), c.arg(bound)], [f])
    else:
        pred = tensor(shape, "i1") if draw(st.booleans()) else tensor((), "i1")
        c.op("stablehlo.select", [c.arg(pred), c.arg(f), c.arg(f)], [f])
    return c


# -- moving dims --------------------------------------------------------------------------------


@st.composite
def transpose_case(draw: st.DrawFn) -> FuncCase:
    shape = draw(shapes())
    perm = draw(st.permutations(range(len(shape))))
    c = FuncCase()
    out = tensor([shape[p] for p in perm])
    c.op("stablehlo.transpose", [c.arg(tensor(shape))], [out], f"permutation = {i64_array(perm)}")
    return c


@st.composite
def broadcast_in_dim_case(draw: st.DrawFn) -> FuncCase:
    out_shape = draw(shapes())
    dims = _subset(draw, range(len(out_shape)))
    in_shape = [1 if draw(st.integers(0, 3)) == 0 else out_shape[d] for d in dims]
    c = FuncCase()
    props = f"broadcast_dimensions = {i64_array(dims)}"
    c.op("stablehlo.broadcast_in_dim", [c.arg(tensor(in_shape))], [tensor(out_shape)], props)
    return c


def _prime_factors(n: int) -> list[int]:
    factors, p = [], 2
    while n > 1:
        while n % p == 0:
            factors.append(p)
            n //= p
        p += 1
    return factors


@st.composite
def regrouped_shape(draw: st.DrawFn, num_elements: int) -> tuple[int, ...]:
    """A random shape with `num_elements` elements (prime factors regrouped, size-1 dims added)."""
    primes = draw(st.permutations(_prime_factors(num_elements)))
    dims: list[int] = []
    for p in primes:
        if dims and draw(st.booleans()):
            dims[-1] *= p
        else:
            dims.append(p)
    for _ in range(draw(st.integers(0, 2))):
        dims.insert(draw(st.integers(0, len(dims))), 1)
    return tuple(dims)


@st.composite
def reshape_case(draw: st.DrawFn) -> FuncCase:
    in_shape = draw(shapes(max_rank=5))
    out_shape = draw(regrouped_shape(math.prod(in_shape)))
    c = FuncCase()
    c.op("stablehlo.reshape", [c.arg(tensor(in_shape))], [tensor(out_shape)])
    return c


@st.composite
def bitcast_convert_case(draw: st.DrawFn) -> FuncCase:
    shape = draw(shapes(max_rank=3))
    c = FuncCase()
    kind = draw(st.integers(0, 2))
    if kind == 0:
        c.op("stablehlo.bitcast_convert", [c.arg(tensor(shape, "f64"))], [tensor((*shape, 2))])
    elif kind == 1:
        c.op("stablehlo.bitcast_convert", [c.arg(tensor((*shape, 4), "i8"))], [tensor(shape)])
    else:
        c.op("stablehlo.bitcast_convert", [c.arg(tensor(shape))], [tensor(shape, "i32")])
    return c


# -- contractions -------------------------------------------------------------------------------


@st.composite
def dot_general_case(draw: st.DrawFn) -> FuncCase:
    sizes = st.sampled_from(DIM_SIZES)
    batch = draw(st.lists(sizes, max_size=2))
    contracting = draw(st.lists(sizes, max_size=2))
    lhs_free = draw(st.lists(sizes, max_size=2))
    rhs_free = draw(st.lists(sizes, max_size=2))
    # Each operand's dims in a random order: entries are ("b", k), ("c", k) or ("f", k).
    lhs = draw(
        st.permutations(
            [("b", k) for k in range(len(batch))]
            + [("c", k) for k in range(len(contracting))]
            + [("f", k) for k in range(len(lhs_free))]
        )
    )
    rhs = draw(
        st.permutations(
            [("b", k) for k in range(len(batch))]
            + [("c", k) for k in range(len(contracting))]
            + [("f", k) for k in range(len(rhs_free))]
        )
    )
    size_of = {"b": batch, "c": contracting}

    def shape(dims: list[tuple[str, int]], free: list[int]) -> list[int]:
        return [free[k] if kind == "f" else size_of[kind][k] for kind, k in dims]

    def positions(dims: list[tuple[str, int]], kind: str, count: int) -> list[int]:
        return [dims.index((kind, k)) for k in range(count)]

    fields = []
    for name, kind, count in (
        ("batching", "b", len(batch)),
        ("contracting", "c", len(contracting)),
    ):
        if count:
            fields.append(f"lhs_{name}_dimensions = {int_list(positions(lhs, kind, count))}")
            fields.append(f"rhs_{name}_dimensions = {int_list(positions(rhs, kind, count))}")
    fields.sort(key=lambda s: ("contracting" in s, s))  # MLIR order: batching, then contracting
    lhs_free_in_order = [lhs_free[k] for kind, k in lhs if kind == "f"]
    rhs_free_in_order = [rhs_free[k] for kind, k in rhs if kind == "f"]
    out = batch + lhs_free_in_order + rhs_free_in_order
    c = FuncCase()
    props = f"dot_dimension_numbers = #stablehlo.dot<{', '.join(fields)}>"
    operands = [c.arg(tensor(shape(lhs, lhs_free))), c.arg(tensor(shape(rhs, rhs_free)))]
    c.op("stablehlo.dot_general", operands, [tensor(out)], props)
    return c


@st.composite
def dot_case(draw: st.DrawFn) -> FuncCase:
    m, k, n = (draw(st.sampled_from(DIM_SIZES)) for _ in range(3))
    lhs_matrix, rhs_matrix = draw(st.booleans()), draw(st.booleans())
    lhs = [m, k] if lhs_matrix else [k]
    rhs = [k, n] if rhs_matrix else [k]
    out = ([m] if lhs_matrix else []) + ([n] if rhs_matrix else [])
    c = FuncCase()
    c.op("stablehlo.dot", [c.arg(tensor(lhs)), c.arg(tensor(rhs))], [tensor(out)])
    return c


def _conv_layout(draw: st.DrawFn, labels: list[str]) -> tuple[list[str], str]:
    order = draw(st.permutations(labels))
    return order, "[" + ", ".join(order) + "]"


@st.composite
def _conv_window(
    draw: st.DrawFn, num_spatial: int
) -> tuple[list[int], list[int], list[int], list[str]]:
    """Spatial input sizes, window sizes, output sizes and the window attributes (strides,
    padding, lhs/rhs dilation) of a valid convolution."""
    spatial_in = [draw(st.sampled_from((1, 2, 3, 4, 5, 8))) for _ in range(num_spatial)]
    window = [draw(st.integers(1, s)) for s in spatial_in]
    strides = [draw(st.integers(1, 2)) for _ in range(num_spatial)]
    padding = [[draw(st.integers(0, 2)), draw(st.integers(0, 2))] for _ in range(num_spatial)]
    lhs_dilation = [draw(st.sampled_from((1, 1, 2))) for _ in range(num_spatial)]
    rhs_dilation = [draw(st.sampled_from((1, 1, 2))) for _ in range(num_spatial)]
    spatial_out = []
    for k in range(num_spatial):
        dilated_in = (spatial_in[k] - 1) * lhs_dilation[k] + 1 + sum(padding[k])
        dilated_window = (window[k] - 1) * rhs_dilation[k] + 1
        if dilated_window > dilated_in:
            rhs_dilation[k], dilated_window = 1, window[k]
        spatial_out.append((dilated_in - dilated_window) // strides[k] + 1)
    if not num_spatial:
        return spatial_in, window, spatial_out, []
    pad = ", ".join(int_list(p) for p in padding)
    props = [
        f"lhs_dilation = {i64_array(lhs_dilation)}",
        f"padding = dense<[{pad}]> : tensor<{num_spatial}x2xi64>",
        f"rhs_dilation = {i64_array(rhs_dilation)}",
        f"window_strides = {i64_array(strides)}",
    ]
    return spatial_in, window, spatial_out, props


@st.composite
def convolution_case(draw: st.DrawFn) -> FuncCase:
    num_spatial = draw(st.integers(0, 2))
    groups = draw(st.sampled_from((1, 1, 2, 3)))
    batch_grouped = groups > 1 and draw(st.booleans())
    batch = draw(st.sampled_from((1, 2, 4))) * (groups if batch_grouped else 1)
    kernel_in = draw(st.sampled_from((1, 2, 3, 4)))
    in_features = kernel_in * (1 if batch_grouped else groups)
    kernel_out = draw(st.sampled_from((1, 2, 4))) * groups
    spatial_in, window, spatial_out, window_props = draw(_conv_window(num_spatial))
    sp = [str(k) for k in range(num_spatial)]
    lhs_order, lhs_text = _conv_layout(draw, ["b", "f", *sp])
    rhs_order, rhs_text = _conv_layout(draw, ["i", "o", *sp])
    out_order, out_text = _conv_layout(draw, ["b", "f", *sp])

    def shape(order: list[str], values: dict[str, int], spatial: list[int]) -> list[int]:
        return [values[x] if x in values else spatial[int(x)] for x in order]

    lhs = shape(lhs_order, {"b": batch, "f": in_features}, spatial_in)
    rhs = shape(rhs_order, {"i": kernel_in, "o": kernel_out}, window)
    out_batch = batch // groups if batch_grouped else batch
    out = shape(out_order, {"b": out_batch, "f": kernel_out}, spatial_out)
    props = [
        f"batch_group_count = {groups if batch_grouped else 1} : i64",
        f"dimension_numbers = #stablehlo.conv<{lhs_text}x{rhs_text}->{out_text}>",
        f"feature_group_count = {1 if batch_grouped else groups} : i64",
    ]
    props += window_props
    c = FuncCase()
    c.op(
        "stablehlo.convolution",
        [c.arg(tensor(lhs)), c.arg(tensor(rhs))],
        [tensor(out)],
        ", ".join(props),
    )
    return c


# -- reductions ---------------------------------------------------------------------------------


@st.composite
def reduce_case(draw: st.DrawFn) -> FuncCase:
    shape = draw(shapes())
    dims = _subset(draw, range(len(shape)))
    n = draw(st.integers(1, 2))
    out = tensor([s for d, s in enumerate(shape) if d not in dims])
    c = FuncCase()
    inputs = [c.arg(tensor(shape)) for _ in range(n)]
    inits = [c.arg(tensor(())) for _ in range(n)]
    c.op("stablehlo.reduce", inputs + inits, [out] * n, f"dimensions = {i64_array(dims)}",
         binary_region("stablehlo.add", "f32", n))  # fmt: skip
    return c


@st.composite
def _window(
    draw: st.DrawFn, shape: tuple[int, ...]
) -> tuple[list[int], list[int], list[list[int]], list[int]]:
    window = [draw(st.sampled_from((1, 1, 2, 3))) if s >= 3 else 1 for s in shape]
    strides = [draw(st.sampled_from((1, 1, 2))) for _ in shape]
    padding = [[draw(st.sampled_from((0, 0, 1))), draw(st.sampled_from((0, 0, 1)))] for _ in shape]
    out = [
        (s + lo + hi - w) // st_ + 1
        for s, w, st_, (lo, hi) in zip(shape, window, strides, padding, strict=True)
    ]
    return window, strides, padding, out


def _window_props(
    window: list[int], strides: list[int], padding: list[list[int]], with_padding: bool
) -> list[str]:
    props = [f"window_dimensions = {i64_array(window)}", f"window_strides = {i64_array(strides)}"]
    if with_padding and window:
        pad = ", ".join(int_list(p) for p in padding)
        props.append(f"padding = dense<[{pad}]> : tensor<{len(window)}x2xi64>")
    return props


@st.composite
def reduce_window_case(draw: st.DrawFn) -> FuncCase:
    shape = draw(shapes(min_rank=1))
    window, strides, padding, out = draw(_window(shape))
    with_padding = draw(st.booleans())
    if not with_padding:
        padding = [[0, 0] for _ in shape]
        out = [(s - w) // st_ + 1 for s, w, st_ in zip(shape, window, strides, strict=True)]
    c = FuncCase()
    props = ", ".join(_window_props(window, strides, padding, with_padding))
    c.op("stablehlo.reduce_window", [c.arg(tensor(shape)), c.arg(tensor(()))], [tensor(out)], props,
         binary_region("stablehlo.maximum", "f32"))  # fmt: skip
    return c


@st.composite
def select_and_scatter_case(draw: st.DrawFn) -> FuncCase:
    shape = draw(shapes(min_rank=1))
    window, strides, padding, source = draw(_window(shape))
    scalar = tensor(())
    select = region(
        [scalar, scalar],
        [
            f'%p = "stablehlo.compare"(%a0, %a1) <{{comparison_direction = #stablehlo<comparison_direction GE>}}> : ({scalar}, {scalar}) -> tensor<i1>'
        ],
        ["%p"],
    ).replace(f"({scalar}) -> ()", "(tensor<i1>) -> ()")
    scatter = binary_region("stablehlo.add", "f32")
    c = FuncCase()
    operands = [c.arg(tensor(shape)), c.arg(tensor(source)), c.arg(scalar)]
    props = ", ".join(_window_props(window, strides, padding, True))
    c.op("stablehlo.select_and_scatter", operands, [tensor(shape)], props, f"{select}, {scatter}")
    return c


# -- slicing ------------------------------------------------------------------------------------


@st.composite
def slice_case(draw: st.DrawFn) -> FuncCase:
    shape = draw(shapes())
    starts, limits, strides = [], [], []
    for s in shape:
        start = draw(st.integers(0, s - 1))
        limits.append(draw(st.integers(start + 1, s)))
        starts.append(start)
        strides.append(draw(st.sampled_from((1, 1, 2))))
    out = [(lim - s + st_ - 1) // st_ for s, lim, st_ in zip(starts, limits, strides, strict=True)]
    c = FuncCase()
    props = f"limit_indices = {i64_array(limits)}, start_indices = {i64_array(starts)}, strides = {i64_array(strides)}"
    c.op("stablehlo.slice", [c.arg(tensor(shape))], [tensor(out)], props)
    return c


@st.composite
def pad_case(draw: st.DrawFn) -> FuncCase:
    shape = draw(shapes())
    low = [draw(st.integers(-1 if s > 1 else 0, 2)) for s in shape]
    high = [draw(st.integers(-1 if s > 2 else 0, 2)) for s in shape]
    interior = [draw(st.sampled_from((0, 0, 1))) for _ in shape]
    out = [
        s + lo + hi + (s - 1) * it for s, lo, hi, it in zip(shape, low, high, interior, strict=True)
    ]
    c = FuncCase()
    props = f"edge_padding_high = {i64_array(high)}, edge_padding_low = {i64_array(low)}, interior_padding = {i64_array(interior)}"
    c.op("stablehlo.pad", [c.arg(tensor(shape)), c.arg(tensor(()))], [tensor(out)], props)
    return c


@st.composite
def dynamic_slice_case(draw: st.DrawFn) -> FuncCase:
    shape = draw(shapes())
    sizes = [draw(st.integers(1, s)) for s in shape]
    c = FuncCase()
    operand = c.arg(tensor(shape))
    index = tensor((), "i32")
    starts = [c.arg(index) for _ in shape]
    c.op(
        "stablehlo.dynamic_slice",
        [operand, *starts],
        [tensor(sizes)],
        f"slice_sizes = {i64_array(sizes)}",
    )
    return c


@st.composite
def dynamic_update_slice_case(draw: st.DrawFn) -> FuncCase:
    shape = draw(shapes())
    update = [draw(st.integers(1, s)) for s in shape]
    c = FuncCase()
    operand, upd = c.arg(tensor(shape)), c.arg(tensor(update))
    index = tensor((), "i32")
    constant = draw(st.booleans())
    starts = []
    for _ in shape:
        if constant:
            starts += c.op("stablehlo.constant", [], [index], "value = dense<0> : tensor<i32>")
        else:
            starts.append(c.arg(index))
    c.op("stablehlo.dynamic_update_slice", [operand, upd, *starts], [tensor(shape)])
    return c


@st.composite
def concatenate_case(draw: st.DrawFn) -> FuncCase:
    shape = list(draw(shapes(min_rank=1)))
    dim = draw(st.integers(0, len(shape) - 1))
    c = FuncCase()
    source = c.arg(tensor(shape))
    operands, total = [], 0
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.integers(0, 2))
        if kind == 0:  # the common source itself
            operands.append(source)
            total += shape[dim]
            continue
        if kind == 1:  # a fresh argument
            size = draw(st.sampled_from(DIM_SIZES))
            operands.append(c.arg(tensor(shape[:dim] + [size] + shape[dim + 1 :])))
            total += size
            continue
        limit = draw(st.integers(1, shape[dim]))  # a slice of the source
        limits = shape[:dim] + [limit] + shape[dim + 1 :]
        props = f"limit_indices = {i64_array(limits)}, start_indices = {i64_array([0] * len(shape))}, strides = {i64_array([1] * len(shape))}"
        operands += c.op("stablehlo.slice", [source], [tensor(limits)], props)
        total += limit
    out = shape[:dim] + [total] + shape[dim + 1 :]
    c.op("stablehlo.concatenate", operands, [tensor(out)], f"dimension = {dim} : i64")
    return c


@st.composite
def reverse_case(draw: st.DrawFn) -> FuncCase:
    shape = draw(shapes())
    dims = _subset(draw, range(len(shape)))
    c = FuncCase()
    c.op(
        "stablehlo.reverse",
        [c.arg(tensor(shape))],
        [tensor(shape)],
        f"dimensions = {i64_array(dims)}",
    )
    return c
