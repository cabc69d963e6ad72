"""Hypothesis strategies for random modules that exercise the import passes.

Programs over ``tensor<8x8xf32>``: constants, iotas, broadcasts of scalars, elementwise and
dot ops, sharding constraints (open/closed, priorities, inline meshes), sharding groups,
calls to private funcs (some made of constants only), while loops, random arg/result
shardings. Built as MLIR text.
"""

from __future__ import annotations

from hypothesis import strategies as st

T = "tensor<8x8xf32>"
MESHES = 'sdy.mesh @mesh = <["a"=2, "b"=4, "c"=1]>\nsdy.mesh @copy = <["a"=2, "b"=4, "c"=1]>\n'
MESH_REFS = ["@mesh", "@mesh", "@copy", 'mesh<["a"=2, "b"=4, "c"=1]>']


@st.composite
def shardings(draw) -> str:
    """A sharding body ``<@mesh, [{"a"}, {"b", ?}]>`` for an 8x8 tensor."""
    axes = draw(st.permutations(["a", "b", "c"]))
    cut = draw(st.integers(0, 3))
    cut2 = draw(st.integers(cut, 3))
    dims = []
    for chosen in (axes[:cut], axes[cut:cut2]):
        text = ", ".join(f'"{a}"' for a in chosen)
        if draw(st.booleans()):
            text = f"{text}, ?" if text else "?"
        dim = "{" + text + "}"
        if chosen and draw(st.integers(0, 4)) == 0:
            dim += f"p{draw(st.integers(0, 2))}"
        dims.append(dim)
    mesh = draw(st.sampled_from(MESH_REFS))
    extra = ""
    rest = axes[cut2:]
    if rest and draw(st.booleans()):
        extra = ", replicated={" + ", ".join(f'"{a}"' for a in sorted(rest)) + "}"
    return f"<{mesh}, [{dims[0]}, {dims[1]}]{extra}>"


_FUNCS = f"""
func.func private @ew(%arg0: {T}) -> {T} {{
  %0 = stablehlo.negate %arg0 : {T}
  return %0 : {T}
}}
func.func private @konst() -> {T} {{
  %0 = stablehlo.constant dense<3.0> : {T}
  %1 = stablehlo.abs %0 : {T}
  return %1 : {T}
}}
func.func private @twice(%arg0: {T}) -> ({T} {{sdy.sharding = #sdy.sharding<@mesh, [{{"a"}}, {{}}]>}}) {{
  %0 = call @ew(%arg0) : ({T}) -> {T}
  %1 = call @ew(%0) : ({T}) -> {T}
  return %1 : {T}
}}
func.func private @unused(%arg0: {T}) -> {T} {{
  return %arg0 : {T}
}}
"""

_KINDS = [
    "const",
    "scalar_bcast",
    "iota",
    "binary",
    "binary",
    "unary",
    "transpose",
    "dot",
    "constraint",
    "constraint",
    "call",
    "group",
    "while",
    "manual",
]


@st.composite
def _statement(draw, i: int, values: list[str]) -> str:
    kind = draw(st.sampled_from(_KINDS))
    v = f"%v{i}"

    def pick() -> str:
        return draw(st.sampled_from(values))

    if kind == "const":
        return f"{v} = stablehlo.constant dense<{i}.0> : {T}"
    if kind == "scalar_bcast":
        return (
            f"%s{i} = stablehlo.constant dense<{i}.5> : tensor<f32>\n  "
            f"{v} = stablehlo.broadcast_in_dim %s{i}, dims = [] : (tensor<f32>) -> {T}"
        )
    if kind == "iota":
        return f"{v} = stablehlo.iota dim = {i % 2} : {T}"
    if kind == "binary":
        op = draw(st.sampled_from(["add", "multiply", "subtract"]))
        return f"{v} = stablehlo.{op} {pick()}, {pick()} : {T}"
    if kind == "unary":
        return f"{v} = stablehlo.{draw(st.sampled_from(['negate', 'abs']))} {pick()} : {T}"
    if kind == "transpose":
        return f"{v} = stablehlo.transpose {pick()}, dims = [1, 0] : ({T}) -> {T}"
    if kind == "dot":
        return (
            f"{v} = stablehlo.dot_general {pick()}, {pick()}, contracting_dims = [1] x [0] "
            f": ({T}, {T}) -> {T}"
        )
    if kind == "constraint":
        return f"{v} = sdy.sharding_constraint {pick()} {draw(shardings())} : {T}"
    if kind == "call":
        callee = draw(st.sampled_from(["ew", "konst", "twice"]))
        if callee == "konst":
            return f"{v} = call @konst() : () -> {T}"
        attr = ""
        if draw(st.booleans()):
            attr = " {sdy.sharding = #sdy.sharding_per_value<[" + draw(shardings()) + "]>}"
        return f"{v} = call @{callee}({pick()}){attr} : ({T}) -> {T}"
    if kind == "group":
        return f"sdy.sharding_group {pick()} group_id={draw(st.integers(0, 3))} : {T}\n  {v} = stablehlo.negate {pick()} : {T}"
    if kind == "manual":
        return draw(_manual_computation(v, pick()))
    init = pick()
    outer = pick()  # may be the init operand too: its uses in and on the while interleave
    return (
        f"{v}:2 = stablehlo.while(%it{i} = {init}, %n{i} = %i0) : {T}, tensor<i32>\n"
        f"    cond {{\n"
        f"    %cmp{i} = stablehlo.compare LT, %n{i}, %n{i} : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
        f"    stablehlo.return %cmp{i} : tensor<i1>\n"
        f"  }} do {{\n"
        f"    %b{i} = stablehlo.add %it{i}, {outer} : {T}\n"
        f"    stablehlo.return %b{i}, %n{i} : {T}, tensor<i32>\n"
        f"  }}"
    )


@st.composite
def _manual_computation(draw, v: str, operand: str) -> str:
    """A manual computation over some of "a"/"b" (any order), each on a dim or unused."""
    manual = draw(st.lists(st.sampled_from(["a", "b"]), unique=True, max_size=2))
    dims: list[list[str]] = [[], []]
    sizes = {"a": 2, "b": 4}
    for axis in manual:
        slot = draw(st.integers(0, 2))
        if slot < 2:
            dims[slot].append(axis)
    local = [8 // (sizes[dims[d][0]] if len(dims[d]) == 1 else 8 if dims[d] else 1) for d in (0, 1)]
    body_t = f"tensor<{local[0]}x{local[1]}xf32>"

    def sharding(closed: bool) -> str:
        parts = []
        for d in dims:
            text = ", ".join(f'"{a}"' for a in d)
            if not closed:
                text = f"{text}, ?" if text else "?"
            parts.append("{" + text + "}")
        return f"<@mesh, [{parts[0]}, {parts[1]}]>"

    in_sharding = sharding(draw(st.booleans()))
    names = ", ".join(f'"{a}"' for a in manual)
    return (
        f"{v} = sdy.manual_computation({operand}) in_shardings=[{in_sharding}] "
        f"out_shardings=[{sharding(True)}] manual_axes={{{names}}} (%m{v[1:]}: {body_t}) {{\n"
        f"    %mc{v[1:]} = stablehlo.constant dense<1.0> : {body_t}\n"
        f"    %mn{v[1:]} = stablehlo.add %m{v[1:]}, %mc{v[1:]} : {body_t}\n"
        f"    %mm{v[1:]} = stablehlo.multiply %mn{v[1:]}, %mc{v[1:]} : {body_t}\n"
        f"    sdy.return %mm{v[1:]} : {body_t}\n"
        f"  }} : ({T}) -> {T}"
    )


def _defined(stmt: str, i: int) -> str:
    return f"%v{i}#0" if f"%v{i}:2 =" in stmt else f"%v{i}"


@st.composite
def import_modules(draw) -> str:
    """A random module: main over 1-2 args plus the private funcs above."""
    num_args = draw(st.integers(1, 2))
    args = []
    for k in range(num_args):
        attr = ""
        if draw(st.booleans()):
            attr = f" {{sdy.sharding = #sdy.sharding{draw(shardings())}}}"
        args.append(f"%a{k}: {T}{attr}")
    values = [f"%a{k}" for k in range(num_args)]
    body = ["%i0 = stablehlo.constant dense<0> : tensor<i32>"]
    for i in range(1, draw(st.integers(2, 9)) + 1):
        stmt = draw(_statement(i, values))
        body.append(stmt)
        values.append(_defined(stmt, i))
    results = draw(st.lists(st.sampled_from(values), min_size=1, max_size=3))
    result_types = []
    for _ in results:
        attr = ""
        if draw(st.integers(0, 3)) == 0:
            attr = f" {{sdy.sharding = #sdy.sharding{draw(shardings())}}}"
        result_types.append(f"{T}{attr}")
    lines = "\n  ".join(body)
    return (
        MESHES
        + f"func.func @main({', '.join(args)}) -> ({', '.join(result_types)}) {{\n  {lines}\n"
        + f"  return {', '.join(results)} : {', '.join(T for _ in results)}\n}}\n"
        + _FUNCS
    )
