"""Random per-device programs for `test_convert_global_to_local_random.py`.

Unlike `reshard_strategies` (which looks for every corner of resharding, most of them shapes a
sharding does not divide), every dim here is a multiple of the mesh size, so each sharding
divides it and the reference converts the module: a function takes a sharded %arg0 through
1-3 reshards (on the mesh or its device-permuted twin), elementwise ops between them, and an
optional unreduced value reduced by an explicit `sdy.all_reduce`; the function returns the last
value with its sharding. The reference's reshard-to-collectives then makes the collectives.
"""

from __future__ import annotations

from hypothesis import strategies as st

from shardwise.sharding import TensorSharding
from tests.differential.reshard_strategies import (
    DEFAULT,
    HypothesisChooser,
    _factors,
    _permuted_ids,
    _random_mesh,
    _random_sharding,
)

__all__ = ["divisible_case", "divisible_modules"]


def _closed(sharding: TensorSharding, mesh_name: str = "mesh") -> TensorSharding:
    dims = tuple(d.__class__(d.axes) for d in sharding.dim_shardings)
    return TensorSharding(mesh_name, dims, (), sharding.unreduced_axes)


def _func(c, name: str, mesh, factors) -> str:
    rank = c.integer(1, 3)
    shape = [mesh.total_size * c.choice((1, 1, 2, 3)) for _ in range(rank)]
    t = "tensor<" + "".join(f"{d}x" for d in shape) + "f32>"

    def sharding(unreduced=()) -> TensorSharding:
        cuts = {a.name: _factors(c, a.size) for a in mesh.axes} if c.chance(4) else factors
        return _closed(_random_sharding(c, mesh, cuts, rank, list(unreduced), on_arg=False))

    current = sharding()
    body = []
    last = "%arg0"
    arg = current
    for i in range(c.integer(1, 3)):
        target = sharding()
        if c.chance(5):
            target = _closed(target, "mesh_p")
        body.append(f"    %r{i} = sdy.reshard {last} {target.body_str()} : {t}")
        last, current = f"%r{i}", target
        if c.chance(2):
            per_value = f"#sdy.sharding_per_value<[{current.body_str()}]>"
            body.append(
                f"    %e{i} = stablehlo.add {last}, {last} {{sdy.sharding = {per_value}}} : {t}"
            )
            last = f"%e{i}"
    free = [n for n in mesh.axis_names if all(a.name != n for a in _axes(current))]
    if free and current.mesh_or_ref == "mesh" and c.chance(2):
        reduced = [n for n in free if c.chance(2)] or free[:1]
        unreduced = TensorSharding("mesh", current.dim_shardings, (), tuple(_refs(reduced)))
        per_value = f"#sdy.sharding_per_value<[{unreduced.body_str()}]>"
        body.append(f"    %u = stablehlo.negate {last} {{sdy.sharding = {per_value}}} : {t}")
        axes = "{" + ", ".join(f'"{n}"' for n in reduced) + "}"
        body.append(f"    %ar = sdy.all_reduce {axes} %u out_sharding={current.body_str()} : {t}")
        last = "%ar"
    return (
        f"  func.func @{name}(%arg0: {t} {{sdy.sharding = {arg}}}) -> "
        f"({t} {{sdy.sharding = {current}}}) {{\n"
        + "\n".join(body)
        + f"\n    return {last} : {t}\n  }}\n"
    )


def _axes(sharding: TensorSharding):
    return [a for d in sharding.dim_shardings for a in d.axes]


def _refs(names):
    from shardwise.axis import AxisRef

    return [AxisRef(n) for n in names]


def divisible_case(c, funcs: int = 3) -> str:
    """A module: the mesh, its device-permuted twin, `funcs` functions."""
    mesh, factors = _random_mesh(c, DEFAULT)
    ids = ", ".join(str(i) for i in _permuted_ids(c, mesh.total_size))
    axes = ", ".join(str(a) for a in mesh.axes)
    header = (
        f"  sdy.mesh @mesh = {mesh.body_str()}\n"
        f"  sdy.mesh @mesh_p = <[{axes}], device_ids=[{ids}]>\n"
    )
    body = "".join(_func(c, f"case{i}", mesh, factors) for i in range(funcs))
    return "module {\n" + header + body + "}\n"


def divisible_modules() -> st.SearchStrategy:
    @st.composite
    def draw(draw_fn) -> str:
        return divisible_case(HypothesisChooser(draw_fn))

    return draw()


# -- global programs: the reference's own export decides shardings and collectives -------------


def _global_program(c, mesh, factors) -> str:
    """A rank-2 program over dims that are multiples of the mesh size; args and result get
    random closed shardings, the ops none (propagation and explicit reshards add them)."""
    n = mesh.total_size
    dims = (n, 2 * n)
    shapes: dict[str, tuple[int, int]] = {}
    lines: list[str] = []
    args = []
    for i in range(2):
        shape = (c.choice(dims), c.choice(dims))
        sharding = _closed(_random_sharding(c, mesh, factors, 2, [], on_arg=False))
        args.append(f"%arg{i}: {_t2(shape)} {{sdy.sharding = {sharding}}}")
        shapes[f"%arg{i}"] = shape
    for step in range(c.integer(2, 7)):
        name = f"%v{step}"
        values = list(shapes)
        v = c.choice(values)
        shape = shapes[v]
        kind = c.integer(0, 12)
        if kind == 0:
            op = c.choice(("tanh", "negate", "exponential"))
            lines.append(f"    {name} = stablehlo.{op} {v} : {_t2(shape)}")
        elif kind == 1:
            same = [w for w in values if shapes[w] == shape]
            w = c.choice(same)
            op = c.choice(("add", "multiply", "maximum"))
            lines.append(f"    {name} = stablehlo.{op} {v}, {w} : {_t2(shape)}")
        elif kind == 2:
            partners = [w for w in values if shapes[w][0] == shape[1]]
            if not partners:
                continue
            w = c.choice(partners)
            out = (shape[0], shapes[w][1])
            lines.append(
                f"    {name} = stablehlo.dot_general {v}, {w}, contracting_dims = [1] x [0] : "
                f"({_t2(shape)}, {_t2(shapes[w])}) -> {_t2(out)}"
            )
            shape = out
        elif kind == 3:
            out = (shape[1], shape[0])
            lines.append(
                f"    {name} = stablehlo.transpose {v}, dims = [1, 0] : ({_t2(shape)}) -> {_t2(out)}"
            )
            shape = out
        elif kind == 4:
            lines.append(f"    %z{step} = stablehlo.constant dense<0.0> : tensor<f32>")
            lines.append(
                f"    %r{step} = stablehlo.reduce({v} init: %z{step}) applies stablehlo.add across "
                f"dimensions = [1] : ({_t2(shape)}, tensor<f32>) -> tensor<{shape[0]}xf32>"
            )
            lines.append(
                f"    {name} = stablehlo.broadcast_in_dim %r{step}, dims = [0] : "
                f"(tensor<{shape[0]}xf32>) -> {_t2(shape)}"
            )
        elif kind == 5:
            out = (shape[0] * 2, shape[1])
            lines.append(
                f"    {name} = stablehlo.concatenate {v}, {v}, dim = 0 : ({_t2(shape)}, "
                f"{_t2(shape)}) -> {_t2(out)}"
            )
            shape = out
        elif kind == 6:
            lines.append(f"    %i{step} = stablehlo.iota dim = {c.integer(0, 1)} : {_t2(shape)}")
            lines.append(f"    {name} = stablehlo.add {v}, %i{step} : {_t2(shape)}")
        elif kind == 7:
            lines.append(f"    %c{step} = stablehlo.constant dense<2.0> : {_t2(shape)}")
            lines.append(f"    {name} = stablehlo.multiply {v}, %c{step} : {_t2(shape)}")
        elif kind == 9:
            low = c.integer(0, n)
            out = (shape[0] + n, shape[1])
            lines.append(f"    %z{step} = stablehlo.constant dense<0.0> : tensor<f32>")
            lines.append(
                f"    {name} = stablehlo.pad {v}, %z{step}, low = [{low}, 0], high = [{n - low}, 0], "
                f"interior = [0, 0] : ({_t2(shape)}, tensor<f32>) -> {_t2(out)}"
            )
            shape = out
        elif kind == 10:
            rows = c.choice(dims)
            out = (rows, shape[1])
            lines.append(f"    %x{step} = stablehlo.iota dim = 0 : tensor<{rows}x1xi64>")
            lines.append(
                f'    {name} = "stablehlo.gather"({v}, %x{step}) <{{dimension_numbers = '
                "#stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], "
                f"start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, "
                f"{shape[1]}>}}> : ({_t2(shape)}, tensor<{rows}x1xi64>) -> {_t2(out)}"
            )
            shape = out
        elif kind == 11:
            rows = c.choice(dims)
            updates = [w for w in values if shapes[w][1] == shape[1]]
            u = c.choice(updates)
            rows = shapes[u][0]
            lines.append(f"    %x{step} = stablehlo.iota dim = 0 : tensor<{rows}x1xi64>")
            lines.append(
                f'    {name} = "stablehlo.scatter"({v}, %x{step}, {u}) <{{scatter_dimension_numbers = '
                "#stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], "
                "scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({\n"
                "    ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
                "      %s = stablehlo.add %a, %b : tensor<f32>\n"
                "      stablehlo.return %s : tensor<f32>\n"
                f"    }}) : ({_t2(shape)}, tensor<{rows}x1xi64>, {_t2(shapes[u])}) -> {_t2(shape)}"
            )
        else:
            out = (shape[0], shape[1] // 2)
            lines.append(
                f"    {name} = stablehlo.slice {v} [0:{shape[0]}, 0:{out[1]}] : "
                f"({_t2(shape)}) -> {_t2(out)}"
            )
            shape = out
        shapes[name] = shape
    last = list(shapes)[-1]
    result = _closed(_random_sharding(c, mesh, factors, 2, [], on_arg=False))
    return (
        f"  func.func @main({', '.join(args)}) -> ({_t2(shapes[last])} {{sdy.sharding = "
        f"{result}}}) {{\n"
        + "\n".join(lines)
        + f"\n    return {last} : {_t2(shapes[last])}\n  }}\n"
    )


def _t2(shape: tuple[int, int]) -> str:
    return f"tensor<{shape[0]}x{shape[1]}xf32>"


def global_case(c) -> str:
    mesh, factors = _random_mesh(c, DEFAULT)
    return (
        "module {\n"
        + f"  sdy.mesh @mesh = {mesh.body_str()}\n"
        + _global_program(c, mesh, factors)
        + "}\n"
    )


def global_programs() -> st.SearchStrategy:
    @st.composite
    def draw(draw_fn) -> str:
        return global_case(HypothesisChooser(draw_fn))

    return draw()
