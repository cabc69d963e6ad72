"""The fuzzer's building blocks: random meshes and shardings, and `Builder`, which grows one
function body (a pool of named values, fresh func args on demand).

The generator (`generator.py`) and the region constructs (`constructs.py`) both grow bodies with
a `Builder`; a body nested in a region or a callee gets its own builder with a name prefix so
that its values never clash with the enclosing function's.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field, replace

from shardwise.fuzz.program import (
    AxisSpec,
    DimSpec,
    FArg,
    FOp,
    FResult,
    MeshSpec,
    ShardingSpec,
    TType,
    op_uses,
)

__all__ = ["Builder", "DIM_SIZES", "ModuleState", "random_mesh", "random_sharding"]

DIM_SIZES = (1, 2, 2, 3, 4, 4, 6, 8, 8, 12, 16, 16, 32)
_AXIS_NAMES = ("x", "y", "z", "w")
# Ops whose sharding is an operand-like attribute, or that have no result to shard.
_NO_OP_SHARDING = frozenset({"constant", "sharding_constraint", "reshard", "sharding_group"})
# Ops with a reduction factor: Shardy 0.10.2's explicit-reshard code aborts when such a
# result is unreduced while an operand is sharded along the reduced dimension, so their own
# shardings never name unreduced axes.
_REDUCING = frozenset({"dot_general", "reduce", "scatter"})


# -- meshes and shardings ----------------------------------------------------------------------


def random_mesh(rng: random.Random, name: str) -> MeshSpec:
    n = rng.choice((1, 2, 2, 2, 3, 3))
    names = rng.sample(_AXIS_NAMES, n)
    axes = tuple((a, rng.choice((1, 2, 2, 3, 4, 4, 4, 6, 8, 8))) for a in names)
    ids = None
    total = math.prod(s for _, s in axes)
    if total > 1 and rng.random() < 0.15:
        perm = list(range(total))
        while perm == sorted(perm):
            rng.shuffle(perm)
        ids = tuple(perm)
    return MeshSpec(name, axes, ids)


def _sub_axes(name: str, size: int) -> list[AxisSpec]:
    """Every valid proper sub-axis ``"name":(pre)sub`` of an axis of `size`."""
    out = []
    for pre in range(1, size):
        for sub in range(2, size):
            # pre * sub must divide the axis; the whole axis (1)size is not a sub-axis.
            if size % (pre * sub) == 0 and not (pre == 1 and sub == size):
                out.append(AxisSpec(name, pre, sub))
    return out


def _sub_axis_span(sub: AxisSpec) -> tuple[int, int]:
    """``(pre, pre * size)`` of a sub-axis: the multiplicative interval it covers."""
    assert sub.pre is not None and sub.size is not None, f"{sub} is not a sub-axis"
    return sub.pre, sub.pre * sub.size


def _axis_units(
    mesh: MeshSpec, rng: random.Random, exclude: frozenset[str] = frozenset()
) -> list[AxisSpec]:
    """A random set of non-overlapping axis refs: per axis, the full axis or some sub-axes."""
    units: list[AxisSpec] = []
    for name, size in mesh.axes:
        if name in exclude:
            continue
        subs = _sub_axes(name, size)
        if subs and rng.random() < 0.3:
            first = rng.choice(subs)
            units.append(first)
            # A second, disjoint sub-axis of the same axis (e.g. (1)2 and (4)2 of 8).
            first_pre, first_end = _sub_axis_span(first)
            others = [
                s
                for s in subs
                if _sub_axis_span(s)[1] <= first_pre or first_end <= _sub_axis_span(s)[0]
            ]
            if others and rng.random() < 0.4:
                units.append(rng.choice(others))
        else:
            units.append(AxisSpec(name))
    rng.shuffle(units)
    return units


def random_sharding(
    rng: random.Random,
    meshes: list[MeshSpec],
    rank: int,
    allow_priority: bool = True,
    exclude: frozenset[str] = frozenset(),
    unreduced: bool = True,
) -> ShardingSpec:
    """A valid sharding of a rank-`rank` tensor on one of `meshes`, using no axis in `exclude`
    (and no unreduced axis unless `unreduced`)."""
    mesh = rng.choice(meshes)
    units = _axis_units(mesh, rng, exclude)
    dims: list[DimSpec] = []
    for _ in range(rank):
        axes: list[AxisSpec] = []
        while units and rng.random() < 0.45:
            unit = units.pop()
            # Two sub-axes of one axis in one dimension must not be mergeable; keep it simple.
            if any(a.name == unit.name for a in axes):
                units.insert(0, unit)
                break
            axes.append(unit)
        closed = rng.random() < 0.55
        prio = rng.choice((0, 1, 2, 3)) if allow_priority and rng.random() < 0.25 else None
        if closed and not axes:
            prio = None  # the verifier rejects a priority on an empty closed dimension
        dims.append(DimSpec(tuple(axes), closed, prio))
    replicated: list[AxisSpec] = []
    unreduced_axes: list[AxisSpec] = []
    for unit in units:
        r = rng.random()
        if r < 0.2:
            replicated.append(unit)
        elif r < 0.27 and unreduced:
            unreduced_axes.append(unit)
    order = [n for n, _ in mesh.axes]

    def key(a: AxisSpec) -> tuple[int, int]:
        return order.index(a.name), a.pre or 0

    return ShardingSpec(
        mesh.name,
        tuple(dims),
        _sorted_unmergeable(replicated, key),
        _sorted_unmergeable(unreduced_axes, key),
    )


def _sorted_unmergeable(axes: list[AxisSpec], key) -> tuple[AxisSpec, ...]:
    """Sorted, dropping a sub-axis that would merge with the one before ("x":(1)2, "x":(2)2)."""
    out: list[AxisSpec] = []
    for a in sorted(axes, key=key):
        prev = out[-1] if out else None
        if (
            prev
            and prev.name == a.name
            and prev.pre is not None
            and prev.size is not None
            and prev.pre * prev.size == a.pre
        ):
            continue
        out.append(a)
    return tuple(out)


@dataclass(slots=True)
class ModuleState:
    """What every body of one module shares: its callees (with the manual axes of the body
    that made each), the next sharding-group id, whether shardings may name unreduced
    axes (the generator allows them in half of the one-mesh modules: with two meshes, or
    with a sharding group, Shardy 0.10.2's explicit-reshard code aborts on many of them), and
    whether manual results must be well-defined (`well_defined_manual`)."""

    funcs: list = field(default_factory=list)
    callee_manual: dict[str, frozenset[str]] = field(default_factory=dict)
    groups: int = 0
    unreduced: bool = True
    # For `fuzz --check`: every manual computation's result sharded over all its manual axes,
    # so that no result claims to be replicated over an axis its body splits (check_campaign).
    well_defined_manual: bool = False


class Builder:
    """Grows one body: a pool of values by name, fresh args on demand.

    `prefix` starts every name (bodies nested in regions must not reuse the enclosing names);
    `manual` are the manual axes of an enclosing `sdy.manual_computation`, which no sharding
    inside may use. What the whole module shares (its callees, the next sharding-group id,
    whether shardings may have unreduced axes) lives in `module`; `child` makes the builder
    of a nested body. A body with `fixed_args` (a manual computation's, whose block args are
    its operands) gets splat constants where others would get a fresh arg.
    """

    def __init__(
        self,
        rng: random.Random,
        meshes: list[MeshSpec],
        prefix: str = "",
        manual: frozenset[str] = frozenset(),
        module: ModuleState | None = None,
        fixed_args: bool = False,
    ) -> None:
        self.rng = rng
        self.meshes = meshes
        self.prefix = prefix
        self.manual = manual
        self.module = module if module is not None else ModuleState()
        self.fixed_args = fixed_args
        self.args: list[FArg] = []
        self.ops: list[FOp] = []
        self.types: dict[str, TType] = {}
        self.uses: dict[str, int] = {}
        self.zero_f32: str | None = None

    @property
    def funcs(self) -> list:
        """The module's private callees (`FFunc`), shared by every body."""
        return self.module.funcs

    def child(
        self,
        meshes: list[MeshSpec],
        prefix: str = "",
        manual: frozenset[str] = frozenset(),
        fixed_args: bool = False,
    ) -> Builder:
        return Builder(self.rng, meshes, prefix, manual, self.module, fixed_args)

    def next_group(self) -> int:
        """A sharding-group id unused in the whole module (groups never span bodies)."""
        self.module.groups += 1
        return self.module.groups - 1

    def sharding(self, rank: int, unreduced: bool = True) -> ShardingSpec:
        """A random sharding avoiding the manual axes; unreduced axes only if the module and
        the caller allow them."""
        allow = unreduced and self.module.unreduced
        return random_sharding(self.rng, self.meshes, rank, exclude=self.manual, unreduced=allow)

    def new_arg(self, ttype: TType) -> str:
        name = f"{self.prefix}a{len(self.args)}"
        sharding = None
        if ttype.dtype != "i1" and self.rng.random() < 0.6:
            sharding = self.sharding(len(ttype.shape))
        self.args.append(FArg(name, ttype, sharding))
        self.types[name] = ttype
        return name

    def emit(self, kind: str, operands: list[str], ttype: TType, **attrs) -> str:
        name = f"{self.prefix}v{len(self.ops)}"
        sharding = None
        if kind not in _NO_OP_SHARDING and self.rng.random() < 0.15:
            sharding = self.sharding(len(ttype.shape), unreduced=kind not in _REDUCING)
        self.ops.append(FOp(kind, name, list(operands), ttype, dict(attrs), sharding))
        self.types[name] = ttype
        for o in operands:
            self.uses[o] = self.uses.get(o, 0) + 1
        return name

    def emit_multi(self, kind: str, operands: list[str], types: list[TType], **attrs) -> list[str]:
        """An op with one or more results: ``%vN`` or ``%vN#0``, ``%vN#1``, ... by index."""
        if len(types) == 1:
            return [self.emit(kind, operands, types[0], **attrs)]
        base = self.emit(kind, operands, types[0], **attrs)
        op = self.ops[-1]
        op.name = f"{base}#0"
        names = [f"{base}#{i}" for i in range(len(types))]
        op.attrs["extra"] = list(zip(names[1:], types[1:], strict=True))
        if op.sharding is not None:
            op.attrs["extra_shardings"] = [self.sharding(len(t.shape)) for t in types[1:]]
        del self.types[base]
        self.types.update(zip(names, types, strict=True))
        return names

    def emit_no_result(self, kind: str, operands: list[str], **attrs) -> None:
        """An op without results (``sdy.sharding_group``): its name is never a value."""
        name = f"{self.prefix}g{len(self.ops)}"
        self.ops.append(FOp(kind, name, list(operands), TType(()), dict(attrs)))
        for o in operands:
            self.uses[o] = self.uses.get(o, 0) + 1

    def constant(self, dtype: str, value: str) -> str:
        name = f"{self.prefix}v{len(self.ops)}"
        self.ops.append(FOp("constant", name, [], TType((), dtype), {"value": value}))
        self.types[name] = TType((), dtype)
        return name

    def f32_values(self, min_rank: int = 0) -> list[str]:
        return [n for n, t in self.types.items() if t.dtype == "f32" and len(t.shape) >= min_rank]

    def pick(self, min_rank: int = 1) -> str:
        """A float value: usually a recent one (deep chains), sometimes any (multi-use)."""
        pool = self.f32_values(min_rank)
        if not pool:
            shape = tuple(self.rng.choice(DIM_SIZES) for _ in range(max(min_rank, 2)))
            return self.splat(TType(shape)) if self.fixed_args else self.new_arg(TType(shape))
        if self.rng.random() < 0.6:
            return pool[-1 - self.rng.randrange(min(3, len(pool)))]
        return self.rng.choice(pool)

    def find_or_arg(self, ttype: TType) -> str:
        same = [n for n, t in self.types.items() if t == ttype]
        if same and (self.fixed_args or self.rng.random() < 0.6):
            return self.rng.choice(same)
        if self.fixed_args:
            return self.splat(ttype)
        return self.new_arg(ttype)

    def splat(self, ttype: TType) -> str:
        """``stablehlo.constant dense<...> : ttype``: a fresh value in a body without new args."""
        value = {"i1": "false", "i32": "0"}.get(ttype.dtype, "1.000000e+00")
        name = f"{self.prefix}v{len(self.ops)}"
        self.ops.append(FOp("constant", name, [], ttype, {"value": value}))
        self.types[name] = ttype
        return name

    def zero(self) -> str:
        if self.zero_f32 is None or self.rng.random() < 0.3:
            self.zero_f32 = self.constant("f32", "0.000000e+00")
        return self.zero_f32

    def choose_results(self) -> list[FResult]:
        """The body's results: its last value, all but at most two dead values, sometimes an
        arg; each with a random sharding or none."""
        rng = self.rng
        values = [op.name for op in self.ops if op.kind not in ("constant", "sharding_group")]
        names = [values[-1]] if values else [self.args[0].name]
        unused = [v for v in values if self.uses.get(v, 0) == 0]
        rng.shuffle(unused)
        keep_dead = rng.randint(0, 2)
        for name in unused[keep_dead:]:
            if name not in names:
                names.append(name)
        if rng.random() < 0.1 and self.args:
            names.append(self.args[0].name)  # a func arg returned directly
        results = []
        for name in names:
            sharding = None
            if self.types[name].dtype != "i1" and rng.random() < 0.4:
                sharding = self.sharding(len(self.types[name].shape))
            results.append(FResult(name, sharding))
        self._strip_dead_priorities(names)
        return results

    def _strip_dead_priorities(self, results: list[str]) -> None:
        """Shardy 0.10.2's user-priority propagation aborts on an op that reaches no result
        and has a prioritized sharding (a crash hides the module from the comparison), so
        such ops get none."""
        live = set(results)
        for op in reversed(self.ops):
            names = [op.name] + [n for n, _ in op.attrs.get("extra", ())]
            if op.kind == "sharding_group" or any(n in live for n in names):
                live.update(op_uses(op))
                continue
            _strip_priorities(op)


def _strip_priorities(op: FOp) -> None:
    """No priority on `op`'s shardings, nor on those of the ops in its region bodies (a dead
    case or manual computation makes every op inside it dead too)."""
    if op.sharding is not None:
        op.sharding = _without_priorities(op.sharding)
    if "sharding" in op.attrs:  # a constraint's or reshard's
        op.attrs["sharding"] = _without_priorities(op.attrs["sharding"])
    if "extra_shardings" in op.attrs:
        op.attrs["extra_shardings"] = [_without_priorities(x) for x in op.attrs["extra_shardings"]]
    if op.kind == "while":  # its body is (kind, extra) steps; a constraint's extra is a sharding
        steps = op.attrs["body"]
        op.attrs["body"] = [
            (k, _without_priorities(x) if k == "constraint" else x) for k, x in steps
        ]
        return
    bodies = op.attrs.get("branches", []) + (
        [op.attrs["body"]] if op.kind == "manual_computation" else []
    )
    for body in bodies:
        for inner in body.ops:
            _strip_priorities(inner)


def _without_priorities(s: ShardingSpec) -> ShardingSpec:
    dims = tuple(replace(d, priority=None) for d in s.dims)
    return replace(s, dims=dims)
