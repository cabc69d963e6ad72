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

from shardwise.fuzz import conformance, constructs
from shardwise.fuzz.builder import DIM_SIZES as _DIM_SIZES
from shardwise.fuzz.builder import Builder as _Builder
from shardwise.fuzz.builder import ModuleState, random_mesh, random_sharding
from shardwise.fuzz.program import Program, ShardingSpec, TType, print_program

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
    *constructs.CONSTRUCT_KINDS,
)
_KIND_WEIGHTS: tuple[int, ...] = (8, 10, 8, 8, 5, 5, 4, 3, 3, 2, 2, 1, 2, 2, 2, 5, 2, 2, 2, 1, 1, 2)
# case, optimization_barrier, call, sharding_group, manual_computation, reshard
_KIND_WEIGHTS += (3, 2, 3, 2, 3, 3)
# What a private callee's body is grown from: plain ops and the constructs a jitted function
# holds (a nested jit, cond, shard_alike, shard_map).
_CALLEE_KINDS = (
    "unary",
    "binary",
    "dot_general",
    "reshape",
    "transpose",
    "reduce",
    "sharding_constraint",
    "reshard",
    "optimization_barrier",
    "case",
    "call",
    "sharding_group",
    "manual_computation",
)
_CALLEE_WEIGHTS = (3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 1, 2, 2)
# What a manual computation's body gets before its result chains (shard_map bodies with a
# jit, cond or shard_alike inside); elementwise ops keep them on the local shapes.
_MANUAL_BODY_KINDS = ("unary", "binary", "sharding_constraint", "case", "call", "sharding_group")


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
    sharding = b.sharding(len(b.types[x].shape))
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
    body: list[tuple[str, ShardingSpec | str]] = []
    for _ in range(rng.randint(1, 3)):
        r = rng.random()
        if r < 0.3:
            body.append(("constraint", b.sharding(len(b.types[x].shape))))
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
    "case": constructs.case,
    "optimization_barrier": constructs.optimization_barrier,
    "call": lambda b: constructs.call(b, _grow_callee),
    "sharding_group": constructs.sharding_group,
    "manual_computation": lambda b: constructs.manual_computation(b, _grow_manual_body),
    "reshard": constructs.reshard,
}


def _grow_callee(b: _Builder, count: int) -> None:
    """`count` random ops of the kinds a callee may hold."""
    for _ in range(count):
        _BUILDERS[b.rng.choices(_CALLEE_KINDS, _CALLEE_WEIGHTS)[0]](b)


def _grow_manual_body(b: _Builder, count: int) -> None:
    """`count` random ops of the kinds a manual computation's body starts with."""
    for _ in range(count):
        _BUILDERS[b.rng.choice(_MANUAL_BODY_KINDS)](b)


# -- whole programs ----------------------------------------------------------------------------


def generate_program(
    seed: int | str, conformance_extras: bool = True, well_defined_manual: bool = False
) -> Program:
    """A random valid program; deterministic in `seed`. `conformance_extras`: decorated with
    the constructs of `fuzz.conformance` (quoted names, unregistered ops, reshard chains, ...),
    drawn from their own random stream (the program without them is the same).
    `well_defined_manual` (for `fuzz --check`): each manual computation's results sharded
    over all its manual axes (the ops after them may differ then: their operand types do);
    without it, every seed gives the program it always gave."""
    rng = random.Random(seed)
    meshes = [random_mesh(rng, "mesh")]
    if rng.random() < 0.2:
        meshes.append(random_mesh(rng, "mesh2"))
    unreduced = len(meshes) == 1 and rng.random() < 0.5
    state = ModuleState(unreduced=unreduced, well_defined_manual=well_defined_manual)
    b = _Builder(rng, meshes, module=state)
    for _ in range(rng.randint(1, 3)):
        rank = rng.choice((1, 2, 2, 3, 3, 4))
        b.new_arg(TType(tuple(rng.choice(_DIM_SIZES) for _ in range(rank))))
    target = rng.randint(3, 25)
    while sum(1 for op in b.ops if op.kind != "constant") < target:
        kind = rng.choices(OP_KINDS, _KIND_WEIGHTS)[0]
        _BUILDERS[kind](b)
    program = Program(meshes, b.args, b.ops, b.choose_results(), b.funcs)
    return conformance.decorate(program, seed) if conformance_extras else program


def generate_module(seed: int | str, conformance_extras: bool = True) -> str:
    return print_program(generate_program(seed, conformance_extras))
