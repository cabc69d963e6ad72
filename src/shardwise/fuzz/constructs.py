"""The fuzzer's builders for the constructs JAX emits around the plain ops.

* ``stablehlo.case`` with 2-3 branches capturing values from above (``lax.switch``/``cond``);
* ``stablehlo.optimization_barrier`` over 1-3 values (``lax.optimization_barrier``);
* ``func.call`` of private callees, with and without shardings on their args and results,
  a callee sometimes called twice (nested ``jit``);
* ``sdy.sharding_group`` tying values of one type together (``shard_alike``);
* ``sdy.manual_computation`` with manual axes first in each in/out dimension, free axes after,
  and a body on local shapes (``shard_map``);
* ``sdy.reshard`` (``jax.sharding.reshard``).

Each builder takes the enclosing `Builder` and returns nothing useful: the new values join its
pool. Bodies get builders with their own name prefix, so names never clash. Constructs nest
as JAX emits them: a manual computation's body may start with calls, case and sharding
groups (``jit``, ``cond``, ``shard_alike`` inside ``shard_map``), and a callee may hold
calls, sharding groups and manual computations (``shard_map`` inside a nested ``jit``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

from shardwise.fuzz.builder import Builder
from shardwise.fuzz.program import (
    AxisSpec,
    DimSpec,
    FArg,
    FBody,
    FFunc,
    FOp,
    MeshSpec,
    ShardingSpec,
    TType,
)

__all__ = [
    "CONSTRUCT_KINDS",
    "call",
    "case",
    "manual_computation",
    "optimization_barrier",
    "reshard",
    "sharding_group",
]

CONSTRUCT_KINDS = (
    "case",
    "optimization_barrier",
    "call",
    "sharding_group",
    "manual_computation",
    "reshard",
)

# Grows a callee's body: `grow(builder, op_count)`; the generator passes its own op builders.
Grow = Callable[[Builder, int], None]


def _elementwise_chain(
    b: Builder, start: str, t: TType, name: str, others: list[str], steps: int
) -> list[FOp]:
    """Elementwise ops, constraints and reshards on type `t` from `start`, named ``name_j``."""
    ops: list[FOp] = []
    cur = start
    for j in range(steps):
        nxt = f"{name}_{j}"
        r = b.rng.random()
        if r < 0.2:
            op = FOp("sharding_constraint", nxt, [cur], t, {"sharding": b.sharding(len(t.shape))})
        elif r < 0.3:
            op = FOp("reshard", nxt, [cur], t, {"sharding": b.sharding(len(t.shape))})
        elif r < 0.65 and others:
            other = b.rng.choice(others + [cur])
            op = FOp("binary", nxt, [cur, other], t, {"op": b.rng.choice(("add", "multiply"))})
        else:
            op = FOp("unary", nxt, [cur], t, {"op": b.rng.choice(("negate", "tanh", "abs"))})
        if op.kind in ("unary", "binary") and b.rng.random() < 0.15:
            op.sharding = b.sharding(len(t.shape))
        ops.append(op)
        cur = nxt
    return ops


def case(b: Builder) -> None:
    """``"stablehlo.case"(%index)`` with 2-3 branches returning 1-2 values each."""
    rng = b.rng
    index = b.constant("i32", str(rng.randrange(3))) if rng.random() < 0.4 else None
    if index is None:
        index = b.find_or_arg(TType((), "i32"))
    firsts = [b.pick(0)]
    if rng.random() < 0.3:
        firsts.append(b.pick(0))
    types = [b.types[x] for x in firsts]
    base = f"{b.prefix}v{len(b.ops)}"
    branches = []
    for k in range(rng.randint(2, 3)):
        ops, results = [], []
        for i, (x, t) in enumerate(zip(firsts, types, strict=True)):
            others = [b.find_or_arg(t) for _ in range(rng.randint(0, 2))]
            start = rng.choice([x] + others)
            steps = rng.randint(0, 3)
            chain = _elementwise_chain(b, start, t, f"{base}_k{k}r{i}", others, steps)
            ops += chain
            results.append(chain[-1].name if chain else start)
        branches.append(FBody([], ops, results))
    b.emit_multi("case", [index], types, branches=branches)
    for x in {u for br in branches for u in _captured(br)}:
        b.uses[x] = b.uses.get(x, 0) + 1


def _captured(body: FBody) -> list[str]:
    inner = body.defined()
    used = [o for op in body.ops for o in op.operands] + body.results
    return [o for o in used if o not in inner]


def optimization_barrier(b: Builder) -> None:
    """``stablehlo.optimization_barrier`` over 1-3 values (any dtype but i1 predicates)."""
    values = [b.pick(0) for _ in range(b.rng.choice((1, 1, 2, 3)))]
    b.emit_multi("optimization_barrier", values, [b.types[v] for v in values])


def sharding_group(b: Builder) -> None:
    """``sdy.sharding_group`` on 2-3 values of one type (what ``shard_alike`` lowers to);
    none in a module with unreduced axes (Shardy 0.10.2 aborts on a group member with
    unreduced axes: "Some operands have unreduced axes but the operation has no results")."""
    if b.module.unreduced:
        return
    x = b.pick(0)
    t = b.types[x]
    members = [x] + [b.find_or_arg(t) for _ in range(b.rng.randint(1, 2))]
    group = b.next_group()
    for v in dict.fromkeys(members):
        b.emit_no_result("sharding_group", [v], group=group)


def reshard(b: Builder) -> None:
    """``sdy.reshard %x <sharding>``."""
    x = b.pick(0)
    t = b.types[x]
    b.emit("reshard", [x], t, sharding=b.sharding(len(t.shape)))


# -- calls -------------------------------------------------------------------------------------


def call(b: Builder, grow: Grow) -> None:
    """``call @callee(...)``: a new private callee, or again one made before."""
    rng = b.rng
    # A callee made inside a manual computation has no sharding on its manual axes: it is
    # called again only from a body with the same manual axes.
    same = [f for f in b.funcs if b.module.callee_manual[f.name] == b.manual]
    reuse = same and rng.random() < 0.3
    callee = rng.choice(same) if reuse else _new_callee(b, grow)
    operands = [b.find_or_arg(a.type) for a in callee.args]
    b.emit_multi("call", operands, callee.result_types(), callee=callee.name)


def _new_callee(b: Builder, grow: Grow) -> FFunc:
    rng = b.rng
    inner = b.child(b.meshes, manual=b.manual)
    inner.new_arg(TType(tuple(rng.choice((2, 4, 8, 16)) for _ in range(rng.randint(1, 3)))))
    grow(inner, rng.randint(1, 4))
    if rng.random() < 0.4:  # callees without any sharding (a jit without in/out shardings)
        for arg in inner.args:
            arg.sharding = None
    results = inner.choose_results()
    callee = FFunc(f"callee{len(b.funcs)}", inner.args, inner.ops, results)
    b.funcs.append(callee)
    b.module.callee_manual[callee.name] = b.manual
    return callee


# -- manual computations -----------------------------------------------------------------------


def _manual_sharding(
    b: Builder, mesh: MeshSpec, manual: list[str], shape: tuple[int, ...], to_global: bool
) -> tuple[ShardingSpec, tuple[int, ...]]:
    """An in/out sharding (closed dims: manual axes first, then free axes) and the shape on
    the other side of the op: the local shape of a global `shape`, or with `to_global` the
    global shape of a local one (any manual axes fit then: the global size is their multiple).

    No free axis is one of `b.manual`: inside an enclosing manual computation (a callee
    called from a manual body gets inlined there) both Shardy and we reject an axis "already
    bound by a parent sdy.manual_computation op".
    """
    rng = b.rng
    used: set[str] = set()
    dims, other = [], []
    for size in shape:
        axes, product = [], 1
        for name in rng.sample(manual, len(manual)):
            n = mesh.size_of(name)
            fits = to_global or size % (product * n) == 0
            if name not in used and fits and rng.random() < 0.5:
                axes.append(AxisSpec(name))
                product *= n
        free = [n for n, _ in mesh.axes if n not in manual and n not in used]
        picked = [n for n in rng.sample(free, len(free)) if rng.random() < 0.25]
        # The enclosing manual axes are still drawn, then dropped: the same random draws
        # keep every module that was valid before the same for its seed.
        axes += [AxisSpec(n) for n in picked if n not in b.manual]
        used.update(a.name for a in axes)
        dims.append(DimSpec(tuple(axes), True))
        other.append(size * product if to_global else size // product)
    return ShardingSpec(mesh.name, tuple(dims)), tuple(other)


def _over_every_manual_axis(
    sharding: ShardingSpec, shape: tuple[int, ...], mesh: MeshSpec, manual: list[str]
) -> tuple[ShardingSpec, tuple[int, ...]]:
    """An out sharding with the manual axes it leaves out added to its first dim (after that
    dim's manual axes, before its free ones), and the global shape that grows with them: each
    device's result is then its own piece, whatever its body computes. No random draw, so the
    rest of the module is what it would be without."""
    if not sharding.dims:
        return sharding, shape
    present = {a.name for d in sharding.dims for a in d.axes}
    missing = [n for n in manual if n not in present]
    if not missing:
        return sharding, shape
    first = sharding.dims[0]
    own = [a for a in first.axes if a.name in manual]
    free = [a for a in first.axes if a.name not in manual]
    axes = (*own, *(AxisSpec(n) for n in missing), *free)
    dims = (replace(first, axes=axes), *sharding.dims[1:])
    grown = shape[0] * math.prod(mesh.size_of(n) for n in missing)
    return replace(sharding, dims=dims), (grown, *shape[1:])


def manual_computation(b: Builder, grow: Grow | None = None) -> None:
    """``sdy.manual_computation`` over 1-2 operands with 1-2 results on local shapes; with
    `grow`, the body first gets a few nested constructs (calls, case, sharding groups: a
    ``jit``, ``cond`` or ``shard_alike`` inside a ``shard_map``)."""
    rng = b.rng
    mesh = rng.choice(b.meshes)
    names = [n for n, _ in mesh.axes if n not in b.manual]
    if not names:
        return
    manual = [n for n in names if rng.random() < 0.6] or [rng.choice(names)]
    operands = [b.pick(1) for _ in range(rng.randint(1, 2))]
    in_shardings, locals_ = [], []
    for x in operands:
        sharding, local = _manual_sharding(b, mesh, manual, b.types[x].shape, to_global=False)
        in_shardings.append(sharding)
        locals_.append(TType(local))
    prefix = f"{b.prefix}m{len(b.ops)}_"
    inner = b.child([mesh], prefix, b.manual | frozenset(manual), fixed_args=True)
    inner.args = [FArg(f"{prefix}a{i}", t) for i, t in enumerate(locals_)]
    inner.types.update((a.name, a.type) for a in inner.args)
    if grow is not None and rng.random() < 0.5:
        grow(inner, rng.randint(1, 3))
    results = _manual_results(inner, prefix)
    out_shardings, out_types = [], []
    for _, t in results:
        sharding, shape = _manual_sharding(b, mesh, manual, t.shape, to_global=True)
        if b.module.well_defined_manual:
            sharding, shape = _over_every_manual_axis(sharding, shape, mesh, manual)
        out_shardings.append(sharding)
        out_types.append(TType(shape))
    inner._strip_dead_priorities([r for r, _ in results])
    body = FBody(inner.args, inner.ops, [r for r, _ in results])
    b.emit_multi(
        "manual_computation",
        operands,
        out_types,
        body=body,
        in_shardings=in_shardings,
        out_shardings=out_shardings,
        manual_axes=[n for n, _ in mesh.axes if n in manual],
    )


def _manual_results(inner: Builder, prefix: str) -> list[tuple[str, TType]]:
    """1-2 body results: elementwise chains from block args or values the body made."""
    rng = inner.rng
    results = []
    for i in range(rng.randint(1, 2)):
        pool = [a.name for a in inner.args] + inner.f32_values(0)
        start = rng.choice(pool)
        t = inner.types[start]
        others = [n for n in pool if inner.types[n] == t]
        steps = rng.randint(0, 3)
        chain = _elementwise_chain(inner, start, t, f"{prefix}r{i}", others, steps)
        inner.ops += chain
        results.append((chain[-1].name if chain else start, t))
    return results
