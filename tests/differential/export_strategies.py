"""Hypothesis strategy for `test_export_passes.py`: random func signatures with shardings.

One example is one module: a mesh of 1-3 axes and a ``@main`` (plus a private callee, so
both "main" and "non-main" rules are exercised) whose arguments and results carry random
shardings - full axes and sub-axes, open/closed dims, priorities, replicated axes - on
tensors whose dims may or may not be divisible by them.
"""

from __future__ import annotations

from hypothesis import strategies as st

__all__ = ["sharded_module"]

_AXIS_SIZES = (2, 3, 4, 6, 8)
_DIM_SIZES = (1, 2, 3, 4, 5, 6, 8, 9, 12, 16)


def _sub_axes(size: int) -> list[tuple[int, int]]:
    """Every valid ``(pre_size)size`` sub-axis of an axis of `size` (never the full axis)."""
    return [
        (pre, sub)
        for pre in range(1, size)
        for sub in range(2, size + 1)
        if size % (pre * sub) == 0 and (pre, sub) != (1, size)
    ]


@st.composite
def _mesh(draw) -> list[tuple[str, int]]:
    n = draw(st.integers(1, 3))
    return [(name, draw(st.sampled_from(_AXIS_SIZES))) for name in "xyz"[:n]]


@st.composite
def _sharding(draw, mesh: list[tuple[str, int]], rank: int) -> str:
    unused = [name for name, _ in mesh]
    sizes = dict(mesh)
    dims = []
    for _ in range(rank):
        axes = []
        for _ in range(draw(st.integers(0, 2))):
            if not unused:
                break
            name = draw(st.sampled_from(unused))
            unused.remove(name)
            subs = _sub_axes(sizes[name])
            if subs and draw(st.booleans()):
                pre, size = draw(st.sampled_from(subs))
                axes.append(f'"{name}":({pre}){size}')
            else:
                axes.append(f'"{name}"')
        if not draw(st.booleans()):
            axes.append("?")
        text = "{" + ", ".join(axes) + "}"
        if text != "{}" and draw(st.integers(0, 3)) == 0:  # `{}p0` does not verify
            text += f"p{draw(st.integers(0, 3))}"
        dims.append(text)
    replicated = [n for n, _ in mesh if n in unused and draw(st.integers(0, 3)) == 0]
    rep = (", replicated={" + ", ".join(f'"{n}"' for n in replicated) + "}") if replicated else ""
    return f"#sdy.sharding<@mesh, [{', '.join(dims)}]{rep}>"


@st.composite
def _tensor(draw, mesh) -> tuple[str, str | None]:
    rank = draw(st.integers(0, 3))
    shape = [draw(st.sampled_from(_DIM_SIZES)) for _ in range(rank)]
    type_ = "tensor<" + "".join(f"{d}x" for d in shape) + "f32>"
    sharding = draw(_sharding(mesh, rank)) if draw(st.integers(0, 4)) else None
    return type_, sharding


def _attrs(sharding: str | None) -> str:
    return f" {{sdy.sharding = {sharding}}}" if sharding else ""


def _func(name: str, private: bool, args, results) -> str:
    arg_text = ", ".join(f"%arg{i}: {t}{_attrs(s)}" for i, (t, s) in enumerate(args))
    res_text = ", ".join(f"{t}{_attrs(s)}" for t, s in results)
    body = []
    returned = []
    for i, (t, _) in enumerate(results):
        body.append(f"  %c{i} = stablehlo.constant dense<1.0> : {t}")
        returned.append(f"%c{i}")
    ret = (
        f"  return {', '.join(returned)} : {', '.join(t for t, _ in results)}"
        if results
        else "  return"
    )
    vis = "private " if private else ""
    return (
        f"func.func {vis}@{name}({arg_text}) -> ({res_text}) {{\n"
        + "\n".join(body + [ret])
        + "\n}\n"
    )


@st.composite
def sharded_module(draw) -> str:
    mesh = draw(_mesh())
    mesh_text = ", ".join(f'"{n}"={s}' for n, s in mesh)
    funcs = []
    for name, private in (("main", False), ("callee", True)):
        args = draw(st.lists(_tensor(mesh), min_size=0, max_size=4))
        results = draw(st.lists(_tensor(mesh), min_size=0, max_size=3))
        funcs.append(_func(name, private, args, results))
    return f"sdy.mesh @mesh = <[{mesh_text}]>\n" + "".join(funcs)
