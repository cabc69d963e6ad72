"""Random valid StableHLO + sdy modules from a seed, for differential fuzzing.

`generate_program(seed)` is deterministic: the same seed gives the same `Program`
(`random.Random(seed)` drives every choice). The programs are DAGs of 3-25 ops over 1-2 meshes
with random open/closed, sub-axis, priority and replicated shardings on func args, results and
some op results. `generate_module(seed)` prints one as MLIR text. Validity is checked by the
runner with the reference's parser/verifier; a rejected program is regenerated from the next
attempt seed.
"""

from __future__ import annotations

import math
import random

from shardwise.fuzz.program import (
    AxisSpec,
    DimSpec,
    FArg,
    FOp,
    FResult,
    MeshSpec,
    Program,
    ShardingSpec,
    TType,
    print_program,
)

__all__ = ["generate_program", "generate_module", "random_sharding", "OP_KINDS"]

OP_KINDS = (
    "unary",
    "binary",
    "dot_general",
    "reshape",
    "transpose",
    "broadcast_in_dim",
    "reduce",
    "concatenate",
    "slice",
    "pad",
    "select",
    "compare",
    "gather",
    "scatter",
    "dynamic_slice",
    "sharding_constraint",
    "propagation_barrier",
    "reverse",
    "dynamic_update_slice",
    "iota",
    "clamp",
    "while",
)
_KIND_WEIGHTS = (8, 10, 8, 8, 5, 5, 4, 3, 3, 2, 2, 1, 2, 2, 2, 5, 2, 2, 2, 1, 1, 2)
_DIM_SIZES = (1, 2, 2, 3, 4, 4, 6, 8, 8, 12, 16, 16, 32)
_AXIS_NAMES = ("x", "y", "z", "w")


# -- meshes and shardings ----------------------------------------------------------------------


def _random_mesh(rng: random.Random, name: str) -> MeshSpec:
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


def _axis_units(mesh: MeshSpec, rng: random.Random) -> list[AxisSpec]:
    """A random set of non-overlapping axis refs: per axis, the full axis or some sub-axes."""
    units: list[AxisSpec] = []
    for name, size in mesh.axes:
        subs = _sub_axes(name, size)
        if subs and rng.random() < 0.3:
            first = rng.choice(subs)
            units.append(first)
            # A second, disjoint sub-axis of the same axis (e.g. (1)2 and (4)2 of 8).
            others = [
                s for s in subs if s.pre * s.size <= first.pre or first.pre * first.size <= s.pre
            ]
            if others and rng.random() < 0.4:
                units.append(rng.choice(others))
        else:
            units.append(AxisSpec(name))
    rng.shuffle(units)
    return units


def random_sharding(
    rng: random.Random, meshes: list[MeshSpec], rank: int, allow_priority: bool = True
) -> ShardingSpec:
    mesh = rng.choice(meshes)
    units = _axis_units(mesh, rng)
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
    unreduced: list[AxisSpec] = []
    for unit in units:
        r = rng.random()
        if r < 0.2:
            replicated.append(unit)
        elif r < 0.27:
            unreduced.append(unit)
    order = [n for n, _ in mesh.axes]

    def key(a: AxisSpec) -> tuple[int, int]:
        return order.index(a.name), a.pre or 0

    return ShardingSpec(
        mesh.name,
        tuple(dims),
        _sorted_unmergeable(replicated, key),
        _sorted_unmergeable(unreduced, key),
    )


def _sorted_unmergeable(axes: list[AxisSpec], key) -> tuple[AxisSpec, ...]:
    """Sorted, dropping a sub-axis that would merge with the one before ("x":(1)2, "x":(2)2)."""
    out: list[AxisSpec] = []
    for a in sorted(axes, key=key):
        prev = out[-1] if out else None
        if prev and prev.name == a.name and prev.pre is not None and prev.pre * prev.size == a.pre:
            continue
        out.append(a)
    return tuple(out)


# -- shapes ------------------------------------------------------------------------------------


def _factorizations(n: int) -> list[tuple[int, int]]:
    return [(a, n // a) for a in range(2, n) if n % a == 0]


def _reshape_target(rng: random.Random, shape: tuple[int, ...]) -> tuple[int, ...]:
    s = list(shape)
    choice = rng.random()
    splittable = [i for i, d in enumerate(s) if _factorizations(d)]
    if choice < 0.35 and splittable:
        i = rng.choice(splittable)
        a, b = rng.choice(_factorizations(s[i]))
        return tuple(s[:i] + [a, b] + s[i + 1 :])
    if choice < 0.7 and len(s) >= 2:
        i = rng.randrange(len(s) - 1)
        return tuple(s[:i] + [s[i] * s[i + 1]] + s[i + 2 :])
    if choice < 0.8:
        i = rng.randrange(len(s) + 1)
        return tuple(s[:i] + [1] + s[i:])
    # Regroup the prime factors at random: non-divisible and cross-dim cases.
    total = math.prod(s)
    primes = []
    n, p = total, 2
    while n > 1:
        while n % p == 0:
            primes.append(p)
            n //= p
        p += 1
    rng.shuffle(primes)
    rank = rng.randint(1, min(4, max(1, len(primes))))
    out = [1] * rank
    for q in primes:
        out[rng.randrange(rank)] *= q
    return tuple(out)


class _Builder:
    """Grows one program: a pool of values by name, fresh args on demand."""

    def __init__(self, rng: random.Random, meshes: list[MeshSpec]) -> None:
        self.rng = rng
        self.meshes = meshes
        self.args: list[FArg] = []
        self.ops: list[FOp] = []
        self.types: dict[str, TType] = {}
        self.uses: dict[str, int] = {}
        self.zero_f32: str | None = None

    def new_arg(self, ttype: TType) -> str:
        name = f"a{len(self.args)}"
        sharding = None
        if ttype.dtype != "i1" and self.rng.random() < 0.6:
            sharding = random_sharding(self.rng, self.meshes, len(ttype.shape))
        self.args.append(FArg(name, ttype, sharding))
        self.types[name] = ttype
        return name

    def emit(self, kind: str, operands: list[str], ttype: TType, **attrs) -> str:
        name = f"v{len(self.ops)}"
        sharding = None
        if kind not in ("constant", "sharding_constraint") and self.rng.random() < 0.15:
            sharding = random_sharding(self.rng, self.meshes, len(ttype.shape))
        self.ops.append(FOp(kind, name, list(operands), ttype, dict(attrs), sharding))
        self.types[name] = ttype
        for o in operands:
            self.uses[o] = self.uses.get(o, 0) + 1
        return name

    def constant(self, dtype: str, value: str) -> str:
        name = f"v{len(self.ops)}"
        self.ops.append(FOp("constant", name, [], TType((), dtype), {"value": value}))
        self.types[name] = TType((), dtype)
        return name

    def f32_values(self, min_rank: int = 0) -> list[str]:
        return [n for n, t in self.types.items() if t.dtype == "f32" and len(t.shape) >= min_rank]

    def pick(self, min_rank: int = 1) -> str:
        """A float value: usually a recent one (deep chains), sometimes any (multi-use)."""
        pool = self.f32_values(min_rank)
        if not pool:
            shape = tuple(self.rng.choice(_DIM_SIZES) for _ in range(max(min_rank, 2)))
            return self.new_arg(TType(shape))
        if self.rng.random() < 0.6:
            return pool[-1 - self.rng.randrange(min(3, len(pool)))]
        return self.rng.choice(pool)

    def find_or_arg(self, ttype: TType) -> str:
        same = [n for n, t in self.types.items() if t == ttype]
        if same and self.rng.random() < 0.6:
            return self.rng.choice(same)
        return self.new_arg(ttype)

    def zero(self) -> str:
        if self.zero_f32 is None or self.rng.random() < 0.3:
            self.zero_f32 = self.constant("f32", "0.000000e+00")
        return self.zero_f32


# -- one builder per op kind -------------------------------------------------------------------


def _unary(b: _Builder) -> str:
    x = b.pick(0)
    op = b.rng.choice(("negate", "exponential", "tanh", "abs", "sqrt"))
    return b.emit("unary", [x], b.types[x], op=op)


def _binary(b: _Builder) -> str:
    x = b.pick(0)
    y = x if b.rng.random() < 0.15 else b.find_or_arg(b.types[x])
    op = b.rng.choice(("add", "multiply", "subtract", "maximum"))
    return b.emit("binary", [x, y], b.types[x], op=op)


def _compare(b: _Builder) -> str:
    x = b.pick(0)
    y = b.find_or_arg(b.types[x])
    t = TType(b.types[x].shape, "i1")
    return b.emit("compare", [x, y], t, dir=b.rng.choice(("GT", "LT", "EQ")))


def _select(b: _Builder) -> str:
    x = b.pick(0)
    shape = b.types[x].shape
    preds = [n for n, t in b.types.items() if t == TType(shape, "i1")]
    pred = b.rng.choice(preds) if preds and b.rng.random() < 0.7 else None
    if pred is None:
        pred = _compare_of(b, x)
    y = b.find_or_arg(b.types[x])
    return b.emit("select", [pred, x, y], b.types[x])


def _compare_of(b: _Builder, x: str) -> str:
    y = b.find_or_arg(b.types[x])
    return b.emit("compare", [x, y], TType(b.types[x].shape, "i1"), dir="GT")


def _dot_general(b: _Builder) -> str:
    rng = b.rng
    lhs = b.pick(1)
    ls = b.types[lhs].shape
    dims = list(range(len(ls)))
    rng.shuffle(dims)
    n_batch = rng.randint(0, max(0, len(dims) - 1)) if rng.random() < 0.4 else 0
    lhs_batch = dims[:n_batch]
    n_contract = rng.randint(0, min(2, len(dims) - n_batch))
    lhs_contract = dims[n_batch : n_batch + n_contract]
    lhs_free = [d for d in range(len(ls)) if d not in lhs_batch and d not in lhs_contract]
    rhs_free_sizes = [rng.choice(_DIM_SIZES) for _ in range(rng.randint(0, 2))]
    # rhs layout: a random order of batch, contracting and free dims.
    slots = [("b", i) for i in range(n_batch)] + [("c", i) for i in range(n_contract)]
    slots += [("f", i) for i in range(len(rhs_free_sizes))]
    rng.shuffle(slots)
    rhs_shape, rhs_batch, rhs_contract = [], [0] * n_batch, [0] * n_contract
    for pos, (kind, i) in enumerate(slots):
        if kind == "b":
            rhs_batch[i] = pos
            rhs_shape.append(ls[lhs_batch[i]])
        elif kind == "c":
            rhs_contract[i] = pos
            rhs_shape.append(ls[lhs_contract[i]])
        else:
            rhs_shape.append(rhs_free_sizes[i])
    rhs = b.find_or_arg(TType(tuple(rhs_shape)))
    rhs_free = [rhs_free_sizes[i] for kind, i in slots if kind == "f"]
    out = [ls[d] for d in lhs_batch] + [ls[d] for d in lhs_free] + rhs_free
    return b.emit(
        "dot_general",
        [lhs, rhs],
        TType(tuple(out)),
        lhs_batch=lhs_batch,
        rhs_batch=rhs_batch,
        lhs_contract=lhs_contract,
        rhs_contract=rhs_contract,
    )


def _reshape(b: _Builder) -> str:
    x = b.pick(1)
    return b.emit("reshape", [x], TType(_reshape_target(b.rng, b.types[x].shape)))


def _transpose(b: _Builder) -> str:
    x = b.pick(2)
    shape = b.types[x].shape
    perm = list(range(len(shape)))
    b.rng.shuffle(perm)
    return b.emit("transpose", [x], TType(tuple(shape[p] for p in perm)), perm=perm)


def _broadcast_in_dim(b: _Builder) -> str:
    rng = b.rng
    x = b.pick(0)
    shape = b.types[x].shape
    out_rank = max(len(shape), min(5, len(shape) + rng.randint(0, 2)))
    dims = sorted(rng.sample(range(out_rank), len(shape)))
    if len(dims) > 1 and rng.random() < 0.2:
        rng.shuffle(dims)
    out = [rng.choice(_DIM_SIZES) for _ in range(out_rank)]
    for i, d in enumerate(dims):
        out[d] = shape[i] if shape[i] != 1 or rng.random() < 0.5 else rng.choice(_DIM_SIZES)
    return b.emit("broadcast_in_dim", [x], TType(tuple(out)), dims=dims)


def _reduce(b: _Builder) -> str:
    x = b.pick(1)
    shape = b.types[x].shape
    dims = sorted(b.rng.sample(range(len(shape)), b.rng.randint(1, len(shape))))
    out = tuple(s for i, s in enumerate(shape) if i not in dims)
    return b.emit("reduce", [x, b.zero()], TType(out), dims=dims)


def _concatenate(b: _Builder) -> str:
    x = b.pick(1)
    shape = b.types[x].shape
    dim = b.rng.randrange(len(shape))
    parts, total = [x], shape[dim]
    for _ in range(b.rng.randint(1, 2)):
        size = shape[dim] if b.rng.random() < 0.5 else b.rng.choice(_DIM_SIZES)
        other = tuple(size if i == dim else s for i, s in enumerate(shape))
        parts.append(b.find_or_arg(TType(other)))
        total += size
    b.rng.shuffle(parts)
    out = tuple(total if i == dim else s for i, s in enumerate(shape))
    return b.emit("concatenate", parts, TType(out), dim=dim)


def _slice(b: _Builder) -> str:
    rng = b.rng
    x = b.pick(1)
    start, limit, stride, out = [], [], [], []
    for s in b.types[x].shape:
        lo = rng.randrange(s) if rng.random() < 0.4 else 0
        hi = rng.randint(lo + 1, s) if rng.random() < 0.4 else s
        st = rng.choice((1, 1, 1, 2, 3))
        start.append(lo)
        limit.append(hi)
        stride.append(st)
        out.append((hi - lo + st - 1) // st)
    return b.emit("slice", [x], TType(tuple(out)), start=start, limit=limit, stride=stride)


def _pad(b: _Builder) -> str:
    rng = b.rng
    x = b.pick(1)
    low, high, interior, out = [], [], [], []
    for s in b.types[x].shape:
        lo = rng.choice((0, 0, 1, 2, -1 if s > 1 else 0))
        hi = rng.choice((0, 0, 1, 3))
        it = rng.choice((0, 0, 0, 1))
        low.append(lo)
        high.append(hi)
        interior.append(it)
        out.append(s + lo + hi + max(0, s - 1) * it)
    return b.emit("pad", [x, b.zero()], TType(tuple(out)), low=low, high=high, interior=interior)


def _dynamic_slice(b: _Builder) -> str:
    x = b.pick(1)
    shape = b.types[x].shape
    idx = b.constant("i32", str(b.rng.randrange(3)))
    sizes = [b.rng.randint(1, s) if b.rng.random() < 0.5 else s for s in shape]
    return b.emit("dynamic_slice", [x] + [idx] * len(shape), TType(tuple(sizes)), sizes=sizes)


def _gather(b: _Builder) -> str:
    """``operand[N, D...]`` indexed by ``indices[B, 1]`` along dim 0 -> ``[B, D...]``."""
    x = b.pick(1)
    shape = b.types[x].shape
    batch = b.rng.choice(_DIM_SIZES)
    indices = b.find_or_arg(TType((batch, 1), "i32"))
    offset = list(range(1, len(shape)))
    out = (batch,) + shape[1:]
    return b.emit(
        "gather",
        [x, indices],
        TType(out),
        offset_dims=offset,
        collapsed=[0],
        start_index_map=[0],
        index_vector_dim=1,
        slice_sizes=[1] + list(shape[1:]),
    )


def _scatter(b: _Builder) -> str:
    x = b.pick(1)
    shape = b.types[x].shape
    batch = b.rng.choice(_DIM_SIZES)
    indices = b.find_or_arg(TType((batch, 1), "i32"))
    updates = b.find_or_arg(TType((batch,) + shape[1:]))
    return b.emit(
        "scatter",
        [x, indices, updates],
        b.types[x],
        update_window_dims=list(range(1, len(shape))),
        inserted=[0],
        to_operand=[0],
        index_vector_dim=1,
    )


def _sharding_constraint(b: _Builder) -> str:
    x = b.pick(0)
    sharding = random_sharding(b.rng, b.meshes, len(b.types[x].shape))
    return b.emit("sharding_constraint", [x], b.types[x], sharding=sharding)


def _propagation_barrier(b: _Builder) -> str:
    x = b.pick(0)
    direction = b.rng.choice(("NONE", "FORWARD", "BACKWARD"))
    return b.emit("propagation_barrier", [x], b.types[x], dir=direction)


def _reverse(b: _Builder) -> str:
    x = b.pick(1)
    rank = len(b.types[x].shape)
    dims = sorted(b.rng.sample(range(rank), b.rng.randint(1, rank)))
    return b.emit("reverse", [x], b.types[x], dims=dims)


def _dynamic_update_slice(b: _Builder) -> str:
    x = b.pick(1)
    shape = b.types[x].shape
    upd = b.find_or_arg(TType(tuple(b.rng.randint(1, s) for s in shape)))
    idx = b.constant("i32", str(b.rng.randrange(2)))
    return b.emit("dynamic_update_slice", [x, upd] + [idx] * len(shape), b.types[x])


def _iota(b: _Builder) -> str:
    shape = tuple(b.rng.choice(_DIM_SIZES) for _ in range(b.rng.randint(1, 3)))
    return b.emit("iota", [], TType(shape), dim=b.rng.randrange(len(shape)))


def _clamp(b: _Builder) -> str:
    x = b.pick(0)
    lo = b.zero() if b.rng.random() < 0.5 else b.find_or_arg(b.types[x])
    hi = b.zero() if b.rng.random() < 0.5 else b.find_or_arg(b.types[x])
    return b.emit("clamp", [lo, x, hi], b.types[x])


def _while(b: _Builder) -> str:
    """A counted while loop carrying one tensor through a short elementwise body."""
    rng = b.rng
    x = b.pick(1)
    counter = b.constant("i32", "0")
    limit = b.constant("i32", str(rng.randint(1, 4)))
    body = []
    for _ in range(rng.randint(1, 3)):
        r = rng.random()
        if r < 0.3:
            body.append(("constraint", random_sharding(rng, b.meshes, len(b.types[x].shape))))
        elif r < 0.6:
            body.append(("binary", rng.choice(("add", "multiply"))))
        else:
            body.append(("unary", rng.choice(("negate", "tanh"))))
    name = b.emit("while", [x, counter, limit], b.types[x], body=body)
    # Uses refer to the loop's tensor result as "%vN#0".
    op = b.ops[-1]
    op.name = f"{name}#0"
    b.types[op.name] = b.types.pop(name)
    return op.name


_BUILDERS = {
    "unary": _unary,
    "binary": _binary,
    "dot_general": _dot_general,
    "reshape": _reshape,
    "transpose": _transpose,
    "broadcast_in_dim": _broadcast_in_dim,
    "reduce": _reduce,
    "concatenate": _concatenate,
    "slice": _slice,
    "pad": _pad,
    "select": _select,
    "compare": _compare,
    "gather": _gather,
    "scatter": _scatter,
    "dynamic_slice": _dynamic_slice,
    "sharding_constraint": _sharding_constraint,
    "propagation_barrier": _propagation_barrier,
    "reverse": _reverse,
    "dynamic_update_slice": _dynamic_update_slice,
    "iota": _iota,
    "clamp": _clamp,
    "while": _while,
}


# -- whole programs ----------------------------------------------------------------------------


def generate_program(seed: int | str) -> Program:
    """A random valid program; deterministic in `seed`."""
    rng = random.Random(seed)
    meshes = [_random_mesh(rng, "mesh")]
    if rng.random() < 0.2:
        meshes.append(_random_mesh(rng, "mesh2"))
    b = _Builder(rng, meshes)
    for _ in range(rng.randint(1, 3)):
        rank = rng.choice((1, 2, 2, 3, 3, 4))
        b.new_arg(TType(tuple(rng.choice(_DIM_SIZES) for _ in range(rank))))
    target = rng.randint(3, 25)
    while sum(1 for op in b.ops if op.kind != "constant") < target:
        kind = rng.choices(OP_KINDS, _KIND_WEIGHTS)[0]
        _BUILDERS[kind](b)
    return Program(meshes, b.args, b.ops, _choose_results(b))


def _choose_results(b: _Builder) -> list[FResult]:
    rng = b.rng
    last = [op.name for op in b.ops if op.kind != "constant"][-1]
    names = [last]
    unused = [op.name for op in b.ops if op.kind != "constant" and b.uses.get(op.name, 0) == 0]
    # Keep at most two dead ops: Shardy's user-priority pass crashes on many dead ops that
    # carry prioritized shardings, and a crash hides the module from the comparison.
    rng.shuffle(unused)
    for name in unused[rng.randint(0, 2) :]:
        if name not in names:
            names.append(name)
    if rng.random() < 0.1 and b.args:
        names.append(b.args[0].name)  # a func arg returned directly
    results = []
    for name in names:
        sharding = None
        if b.types[name].dtype != "i1" and rng.random() < 0.4:
            sharding = random_sharding(rng, b.meshes, len(b.types[name].shape))
        results.append(FResult(name, sharding))
    return results


def generate_module(seed: int | str) -> str:
    return print_program(generate_program(seed))
