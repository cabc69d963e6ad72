"""The fuzzer's own small program form: meshes, func args, ops, returns — printed as MLIR text.

The generator builds a `Program`, the shrinker edits one, and `print_program` turns it into
pretty StableHLO + sdy text that the reference parses. Values have stable names (``a3`` for
func args, ``v7`` for op results) so that deleting an op never renumbers the rest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = [
    "AxisSpec",
    "DimSpec",
    "FBody",
    "FFunc",
    "FOp",
    "FArg",
    "FResult",
    "MeshSpec",
    "Program",
    "ShardingSpec",
    "TType",
    "op_bodies",
    "op_uses",
    "print_program",
    "rename_uses",
    "symbol",
]

_BARE_SYMBOL_RE = re.compile(r"^[A-Za-z_][\w$.]*$")


def symbol(name: str) -> str:
    """``@name``, quoted when MLIR needs it (``@"my-fn"``)."""
    return "@" + (name if _BARE_SYMBOL_RE.match(name) else f'"{name}"')


@dataclass(frozen=True, slots=True)
class TType:
    """A ranked tensor type: ``tensor<8x4xf32>``."""

    shape: tuple[int, ...]
    dtype: str = "f32"

    def __str__(self) -> str:
        dims = "".join(f"{d}x" for d in self.shape)
        return f"tensor<{dims}{self.dtype}>"


@dataclass(frozen=True, slots=True)
class MeshSpec:
    name: str
    axes: tuple[tuple[str, int], ...]
    device_ids: tuple[int, ...] | None = None

    def __str__(self) -> str:
        axes = ", ".join(f'"{n}"={s}' for n, s in self.axes)
        ids = (
            ""
            if self.device_ids is None
            else f", device_ids=[{', '.join(map(str, self.device_ids))}]"
        )
        return f"sdy.mesh {symbol(self.name)} = <[{axes}]{ids}>"

    def size_of(self, axis: str) -> int:
        return dict(self.axes)[axis]


@dataclass(frozen=True, slots=True)
class AxisSpec:
    """A full axis (``pre`` is None) or a sub-axis ``"x":(pre)size``."""

    name: str
    pre: int | None = None
    size: int | None = None

    def __str__(self) -> str:
        if self.pre is None:
            return f'"{self.name}"'
        return f'"{self.name}":({self.pre}){self.size}'


@dataclass(frozen=True, slots=True)
class DimSpec:
    axes: tuple[AxisSpec, ...] = ()
    closed: bool = True
    priority: int | None = None

    def __str__(self) -> str:
        items = [str(a) for a in self.axes]
        if not self.closed:
            items.append("?")
        prio = "" if self.priority is None else f"p{self.priority}"
        return "{" + ", ".join(items) + "}" + prio


@dataclass(frozen=True, slots=True)
class ShardingSpec:
    mesh: str
    dims: tuple[DimSpec, ...]
    replicated: tuple[AxisSpec, ...] = ()
    unreduced: tuple[AxisSpec, ...] = ()

    def body(self) -> str:
        dims = ", ".join(str(d) for d in self.dims)
        rep = ""
        if self.replicated:
            rep = ", replicated={" + ", ".join(str(a) for a in self.replicated) + "}"
        if self.unreduced:
            rep += ", unreduced={" + ", ".join(str(a) for a in self.unreduced) + "}"
        return f"<{symbol(self.mesh)}, [{dims}]{rep}>"

    def __str__(self) -> str:
        return "#sdy.sharding" + self.body()


@dataclass(slots=True)
class FArg:
    name: str
    type: TType
    sharding: ShardingSpec | None = None
    loc: str | None = None  # an explicit location, e.g. ``loc("p")``


@dataclass(slots=True)
class FOp:
    """One op: `kind` selects the printer; `attrs` holds what the printer needs."""

    kind: str
    name: str  # result value name
    operands: list[str]
    type: TType
    attrs: dict = field(default_factory=dict)
    sharding: ShardingSpec | None = None


@dataclass(slots=True)
class FResult:
    value: str
    sharding: ShardingSpec | None = None


@dataclass(slots=True)
class FBody:
    """The block of a region: args (none for `stablehlo.case` branches, which capture values
    from above), ops, and the returned values."""

    args: list[FArg]
    ops: list[FOp]
    results: list[str]

    def defined(self) -> set[str]:
        names = {a.name for a in self.args}
        for op in self.ops:
            names.update(_result_names(op))
        return names


@dataclass(slots=True)
class FFunc:
    """A private callee: ``func.func private @name(args) -> (results)``."""

    name: str
    args: list[FArg]
    ops: list[FOp]
    results: list[FResult]

    def result_types(self) -> list[TType]:
        types = _value_types(self.args, self.ops)
        return [types[r.value] for r in self.results]


@dataclass(slots=True)
class Program:
    meshes: list[MeshSpec]
    args: list[FArg]
    ops: list[FOp]
    results: list[FResult]
    funcs: list[FFunc] = field(default_factory=list)

    def value_types(self) -> dict[str, TType]:
        return _value_types(self.args, self.ops)


def _result_names(op: FOp) -> list[str]:
    if op.kind == "sharding_group":
        return []
    return [op.name] + [n for n, _ in op.attrs.get("extra", ())]


def _value_types(args: list[FArg], ops: list[FOp]) -> dict[str, TType]:
    types = {a.name: a.type for a in args}
    for op in ops:
        types[op.name] = op.type
        types.update(dict(op.attrs.get("extra", ())))
        for body in op_bodies(op):
            types.update(_value_types(body.args, body.ops))
    return types


def op_bodies(op: FOp) -> list[FBody]:
    """The region bodies of `op`: a case's branches, a manual computation's body."""
    if op.kind == "case":
        return op.attrs["branches"]
    if op.kind == "manual_computation":
        return [op.attrs["body"]]
    return []


def op_uses(op: FOp) -> list[str]:
    """The values `op` reads from the enclosing body: operands, and what its regions capture."""
    uses = list(op.operands)
    for body in op_bodies(op):
        inner = body.defined()
        for o in [u for inner_op in body.ops for u in op_uses(inner_op)] + body.results:
            if o not in inner:
                uses.append(o)
    return uses


def rename_uses(op: FOp, old: str, new: str) -> None:
    """Replace every read of `old` by `new` in `op` and the region bodies it holds."""
    op.operands = [new if o == old else o for o in op.operands]
    for body in op_bodies(op):
        for inner in body.ops:
            rename_uses(inner, old, new)
        body.results = [new if r == old else r for r in body.results]


# -- printing ----------------------------------------------------------------------------------


def _ints(values) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


def _attr_dict(op: FOp) -> str:
    if op.sharding is None:
        return ""
    shardings = [op.sharding] + list(op.attrs.get("extra_shardings", ()))
    body = ", ".join(s.body() for s in shardings)
    return f" {{sdy.sharding = #sdy.sharding_per_value<[{body}]>}}"


def _result_types(op: FOp) -> list[TType]:
    return [op.type] + [t for _, t in op.attrs.get("extra", ())]


def _results_type(op: FOp) -> str:
    types = _result_types(op)
    if len(types) == 1:
        return str(types[0])
    return "(" + ", ".join(map(str, types)) + ")"


def _fn_type(op: FOp, types: dict[str, TType]) -> str:
    ins = ", ".join(str(types[o]) for o in op.operands)
    return f"({ins}) -> {_results_type(op)}"


def _head(op: FOp) -> str:
    """``    %v3 = `` or, for an op with n > 1 results, ``    %v3:n = ``."""
    extra = op.attrs.get("extra")
    if not extra:
        return f"    %{op.name} = "
    return f"    %{op.name.split('#')[0]}:{len(extra) + 1} = "


def _indent(lines: list[str]) -> list[str]:
    return ["  " + line for line in lines]


def _print_body(body: FBody, types: dict[str, TType], terminator: str) -> list[str]:
    """The ops of a region body (one level deeper than its op) and its return."""
    lines: list[str] = []
    for inner in body.ops:
        lines += _indent(_print_op(inner, types))
    vals = ", ".join(f"%{r}" for r in body.results)
    rtypes = ", ".join(str(types[r]) for r in body.results)
    lines.append(f"      {terminator} {vals} : {rtypes}")
    return lines


def _add_body(indent: str) -> list[str]:
    return [
        f"{indent}^bb0(%lhs: tensor<f32>, %rhs: tensor<f32>):",
        f"{indent}  %sum = stablehlo.add %lhs, %rhs : tensor<f32>",
        f"{indent}  stablehlo.return %sum : tensor<f32>",
    ]


class _Parts:
    """What most printers need of one op: its head, operands, attr dict and function type."""

    def __init__(self, op: FOp, types: dict[str, TType]) -> None:
        self.a = op.attrs
        self.head = _head(op)
        self.ops = ", ".join(f"%{o}" for o in op.operands)
        self.first = f"%{op.operands[0]}" if op.operands else ""
        self.attrs = _attr_dict(op)
        self.fn = _fn_type(op, types)
        self.type = op.type


def _print_elementwise(op: FOp, p: _Parts) -> list[str]:
    """unary/binary ops (``%v = stablehlo.add %a, %b : type``), compare, select, clamp."""
    if op.kind in ("unary", "binary"):
        return [f"{p.head}stablehlo.{p.a['op']} {p.ops}{p.attrs} : {p.type}"]
    if op.kind == "compare":
        return [f"{p.head}stablehlo.compare {p.a['dir']}, {p.ops}{p.attrs} : {p.fn}"]
    return [f"{p.head}stablehlo.{op.kind} {p.ops}{p.attrs} : {p.fn}"]


def _print_dot_general(p: _Parts) -> list[str]:
    a = p.a
    batch = ""
    if a["lhs_batch"]:
        batch = f"batching_dims = {_ints(a['lhs_batch'])} x {_ints(a['rhs_batch'])}, "
    contract = f"contracting_dims = {_ints(a['lhs_contract'])} x {_ints(a['rhs_contract'])}"
    return [f"{p.head}stablehlo.dot_general {p.ops}, {batch}{contract}{p.attrs} : {p.fn}"]


def _print_shape_op(op: FOp, p: _Parts) -> list[str]:
    """Ops that move or pick elements: reshape, transpose, broadcast, reduce, concatenate,
    slice, pad, reverse, dynamic (update) slice, iota."""
    k, a = op.kind, p.a
    if k == "reshape":
        return [f"{p.head}stablehlo.reshape {p.first}{p.attrs} : {p.fn}"]
    if k in ("transpose", "broadcast_in_dim"):
        dims = _ints(a["perm"] if k == "transpose" else a["dims"])
        return [f"{p.head}stablehlo.{k} {p.first}, dims = {dims}{p.attrs} : {p.fn}"]
    if k == "reduce":
        init = f"%{op.operands[1]}"
        return [
            f"{p.head}stablehlo.reduce({p.first} init: {init}) applies stablehlo.add across "
            f"dimensions = {_ints(a['dims'])}{p.attrs} : {p.fn}"
        ]
    if k == "concatenate":
        return [f"{p.head}stablehlo.concatenate {p.ops}, dim = {a['dim']}{p.attrs} : {p.fn}"]
    if k == "slice":
        triples = zip(a["start"], a["limit"], a["stride"], strict=True)
        spans = ", ".join(f"{s}:{e}:{t}" for s, e, t in triples)
        return [f"{p.head}stablehlo.slice {p.first} [{spans}]{p.attrs} : {p.fn}"]
    if k == "pad":
        return [
            f"{p.head}stablehlo.pad {p.ops}, low = {_ints(a['low'])}, high = {_ints(a['high'])}, "
            f"interior = {_ints(a['interior'])}{p.attrs} : {p.fn}"
        ]
    if k == "reverse":
        return [
            f"{p.head}stablehlo.reverse {p.first}, dims = {_ints(a['dims'])}{p.attrs} : {p.type}"
        ]
    if k == "dynamic_slice":
        sizes = _ints(a["sizes"])
        return [f"{p.head}stablehlo.dynamic_slice {p.ops}, sizes = {sizes}{p.attrs} : {p.fn}"]
    if k == "dynamic_update_slice":
        return [f"{p.head}stablehlo.dynamic_update_slice {p.ops}{p.attrs} : {p.fn}"]
    return [f"{p.head}stablehlo.iota dim = {a['dim']}{p.attrs} : {p.type}"]


def _print_gather_scatter(op: FOp, p: _Parts) -> list[str]:
    a = p.a
    if op.kind == "gather":
        dn = (
            f"#stablehlo.gather<offset_dims = {_ints(a['offset_dims'])}, collapsed_slice_dims = "
            f"{_ints(a['collapsed'])}, start_index_map = {_ints(a['start_index_map'])}, "
            f"index_vector_dim = {a['index_vector_dim']}>"
        )
        sizes = ", ".join(map(str, a["slice_sizes"]))
        props = f"<{{dimension_numbers = {dn}, slice_sizes = array<i64: {sizes}>}}>"
        return [f'{p.head}"stablehlo.gather"({p.ops}) {props}{p.attrs} : {p.fn}']
    dn = (
        f"#stablehlo.scatter<update_window_dims = {_ints(a['update_window_dims'])}, "
        f"inserted_window_dims = {_ints(a['inserted'])}, scatter_dims_to_operand_dims = "
        f"{_ints(a['to_operand'])}, index_vector_dim = {a['index_vector_dim']}>"
    )
    lines = [f'{p.head}"stablehlo.scatter"({p.ops}) <{{scatter_dimension_numbers = {dn}}}> ({{']
    lines += _add_body("    ")
    lines.append(f"    }}){p.attrs} : {p.fn}")
    return lines


_SHAPE_KINDS = frozenset(
    {
        "reshape",
        "transpose",
        "broadcast_in_dim",
        "reduce",
        "concatenate",
        "slice",
        "pad",
        "reverse",
        "dynamic_slice",
        "dynamic_update_slice",
        "iota",
    }
)


def _print_op(op: FOp, types: dict[str, TType]) -> list[str]:
    """The lines of one op at func-body indentation (region bodies indent them further)."""
    k = op.kind
    if k == "constant":
        value = op.attrs["value"]
        return [f"{_head(op)}stablehlo.constant{_attr_dict(op)} dense<{value}> : {op.type}"]
    if k == "while":
        return _print_while(op, types)
    if k in ("case", "manual_computation", "call", "optimization_barrier", "sharding_group"):
        return _print_construct(op, types)
    p = _Parts(op, types)
    if k in ("unary", "binary", "compare", "select", "clamp"):
        return _print_elementwise(op, p)
    if k == "dot_general":
        return _print_dot_general(p)
    if k in _SHAPE_KINDS:
        return _print_shape_op(op, p)
    if k in ("gather", "scatter"):
        return _print_gather_scatter(op, p)
    if k in ("sharding_constraint", "reshard"):
        name = "sdy.sharding_constraint" if k == "sharding_constraint" else "sdy.reshard"
        return [f"{p.head}{name} {p.first} {p.a['sharding'].body()} : {op.type}"]
    if k == "unregistered":  # an op of a dialect MLIR does not know, in generic form
        return [f'{p.head}"{p.a["op"]}"({p.ops}){p.attrs} : {p.fn}']
    if k == "mesh_all_reduce":  # replica groups named by mesh axes (a symbol or inline mesh)
        axes = ", ".join(f'#stablehlo.axis_ref<name = "{n}">' for n in p.a["axes"])
        groups = f"#stablehlo.replica_group_mesh_axes<mesh = {p.a['mesh']}, axes = [{axes}]>"
        return [
            f'{p.head}"stablehlo.all_reduce"({p.ops}) ({{',
            *_add_body("    "),
            f"    }}) {{replica_groups = {groups}}} : {p.fn}",
        ]
    if k == "propagation_barrier":
        direction = p.a["dir"]
        return [
            f"{p.head}sdy.propagation_barrier {p.first} allowed_direction={direction} : {op.type}"
        ]
    raise ValueError(f"unknown fuzz op kind '{k}'")


def _print_construct(op: FOp, types: dict[str, TType]) -> list[str]:
    """Calls, groups, barriers and the region ops (case, manual computation)."""
    k, a = op.kind, op.attrs
    ops = ", ".join(f"%{o}" for o in op.operands)
    head = _head(op)
    attrs = _attr_dict(op)
    if k == "sharding_group":
        return [f"    sdy.sharding_group {ops} group_id={a['group']} : {types[op.operands[0]]}"]
    if k == "optimization_barrier":
        rtypes = ", ".join(str(t) for t in _result_types(op))
        return [f"{head}stablehlo.optimization_barrier{attrs} {ops} : {rtypes}"]
    if k == "call":
        return [f"{head}func.call {symbol(a['callee'])}({ops}){attrs} : {_fn_type(op, types)}"]
    if k == "case":
        lines = [f'{head}"stablehlo.case"({ops}) ({{']
        for j, branch in enumerate(a["branches"]):
            if j:
                lines.append("    }, {")
            lines += _print_body(branch, types, "stablehlo.return")
        lines.append(f"    }}){attrs} : {_fn_type(op, types)}")
        return lines
    return _print_manual_computation(op, types)


def _print_manual_computation(op: FOp, types: dict[str, TType]) -> list[str]:
    a = op.attrs
    body: FBody = a["body"]
    ins = ", ".join(s.body() for s in a["in_shardings"])
    outs = ", ".join(s.body() for s in a["out_shardings"])
    manual = ", ".join(f'"{m}"' for m in a["manual_axes"])
    block = ", ".join(f"%{arg.name}: {arg.type}" for arg in body.args)
    operands = ", ".join(f"%{o}" for o in op.operands)
    lines = [
        f"{_head(op)}sdy.manual_computation({operands}) in_shardings=[{ins}] "
        f"out_shardings=[{outs}] manual_axes={{{manual}}} ({block}) {{"
    ]
    lines += _print_body(body, types, "sdy.return")
    lines.append(f"    }} : {_fn_type(op, types)}")
    return lines


def _print_while(op: FOp, types: dict[str, TType]) -> list[str]:
    """A counted loop over one tensor: ``%name`` is the tensor result (a ``:2`` while)."""
    a = op.attrs
    x, counter, limit = op.operands
    t = op.type
    base = op.name.split("#")[0]  # the op's name is "vN#0", its tensor result
    sharding = ""
    if op.sharding is not None:
        sharding = (
            f" attributes {{sdy.sharding = #sdy.sharding_per_value<[{op.sharding.body()}, "
            f"<{symbol(op.sharding.mesh)}, []>]>}}"
        )
    lines = [
        f"    %{base}:2 = stablehlo.while(%{base}_x = %{x}, %{base}_c = %{counter})"
        f" : {t}, tensor<i32>{sharding}",
        "    cond {",
        f"      %{base}_p = stablehlo.compare LT, %{base}_c, %{limit} : (tensor<i32>, tensor<i32>) -> tensor<i1>",
        f"      stablehlo.return %{base}_p : tensor<i1>",
        "    } do {",
    ]
    cur = f"{base}_x"
    for j, (kind, extra) in enumerate(a["body"]):
        nxt = f"{base}_b{j}"
        if kind == "constraint":
            lines.append(f"      %{nxt} = sdy.sharding_constraint %{cur} {extra.body()} : {t}")
        elif kind == "binary":
            lines.append(f"      %{nxt} = stablehlo.{extra} %{cur}, %{base}_x : {t}")
        else:
            lines.append(f"      %{nxt} = stablehlo.{extra} %{cur} : {t}")
        cur = nxt
    lines += [
        f"      %{base}_n = stablehlo.add %{base}_c, %{limit} : tensor<i32>",
        f"      stablehlo.return %{cur}, %{base}_n : {t}, tensor<i32>",
        "    }",
    ]
    return lines


def _arg_text(arg: FArg) -> str:
    attr = "" if arg.sharding is None else f" {{sdy.sharding = {arg.sharding}}}"
    loc = "" if arg.loc is None else f" {arg.loc}"
    return f"%{arg.name}: {arg.type}{attr}{loc}"


def _print_func(
    name: str, args: list[FArg], ops: list[FOp], results: list[FResult], private: bool
) -> list[str]:
    types = _value_types(args, ops)
    res = []
    for r in results:
        attr = "" if r.sharding is None else f" {{sdy.sharding = {r.sharding}}}"
        res.append(f"{types[r.value]}{attr}")
    visibility = "private " if private else ""
    arg_text = ", ".join(_arg_text(a) for a in args)
    lines = [f"  func.func {visibility}{symbol(name)}({arg_text}) -> ({', '.join(res)}) {{"]
    for op in ops:
        lines += _print_op(op, types)
    vals = ", ".join(f"%{r.value}" for r in results)
    rtypes = ", ".join(str(types[r.value]) for r in results)
    lines += [f"    return {vals} : {rtypes}", "  }"]
    return lines


def print_program(prog: Program) -> str:
    """Pretty MLIR text of `prog`: meshes, the public func @main, then the private callees."""
    lines = ["module {"]
    lines += [f"  {m}" for m in prog.meshes]
    lines += _print_func("main", prog.args, prog.ops, prog.results, private=False)
    for f in prog.funcs:
        lines += _print_func(f.name, f.args, f.ops, f.results, private=True)
    lines += ["}", ""]
    return "\n".join(lines)
