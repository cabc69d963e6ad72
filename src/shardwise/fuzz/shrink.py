"""Greedy shrinking of a diverging program to a small one that still diverges.

Each step proposes a smaller variant; `still_fails(variant)` keeps it when the divergence
survives (it must also still be accepted by the reference — the predicate checks that). Steps,
repeated until none applies: drop func results, delete ops (uses rewired to an operand of the
same type, else to a new func arg; in callees and region bodies only to a same-type operand),
drop unused callees, drop unused args, drop shardings, drop a dimension's axes
or replicated axes, drop priorities, and simplify meshes (device ids, unused meshes and axes).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from dataclasses import replace

from shardwise.fuzz.program import (
    AxisSpec,
    DimSpec,
    FArg,
    FBody,
    FFunc,
    FOp,
    Program,
    ShardingSpec,
    op_bodies,
    op_uses,
    rename_uses,
)

__all__ = ["shrink_program"]

_MAX_CHECKS = 400


def shrink_program(prog: Program, still_fails: Callable[[Program], bool]) -> Program:
    """The smallest variant of `prog` found greedily for which `still_fails` holds."""
    best = prog
    checks = 0
    progress = True
    while progress and checks < _MAX_CHECKS:
        progress = False
        for candidate in _candidates(best):
            checks += 1
            if still_fails(candidate):
                best = candidate
                progress = True
                break
            if checks >= _MAX_CHECKS:
                break
    return best


def _candidates(prog: Program) -> Iterator[Program]:
    yield from _drop_results(prog)
    yield from _delete_ops(prog)
    yield from _drop_unused_funcs(prog)
    yield from _delete_callee_ops(prog)
    yield from _delete_body_ops(prog)
    yield from _drop_unused_args(prog)
    yield from _drop_shardings(prog)
    yield from _simplify_shardings(prog)
    yield from _simplify_meshes(prog)


def _used(prog: Program | FFunc) -> set[str]:
    used = {r.value for r in prog.results}
    for op in prog.ops:
        used.update(op_uses(op))
    return used


def _results(op: FOp) -> list[str]:
    if op.kind == "sharding_group":
        return []
    return [op.name] + [n for n, _ in op.attrs.get("extra", ())]


def _drop_results(prog: Program) -> Iterator[Program]:
    for i in range(len(prog.results)):
        if len(prog.results) > 1:
            p = copy.deepcopy(prog)
            del p.results[i]
            yield p


def _rename(prog: Program | FFunc, old: str, new: str) -> None:
    for op in prog.ops:
        rename_uses(op, old, new)
    for r in prog.results:
        if r.value == old:
            r.value = new


def _delete_ops(prog: Program) -> Iterator[Program]:
    used = _used(prog)
    # Later ops first: deleting near the results tends to remove whole chains.
    for i in reversed(range(len(prog.ops))):
        op = prog.ops[i]
        results = [r for r in _results(op) if r in used]
        if not results:
            p = copy.deepcopy(prog)
            del p.ops[i]
            yield p
            continue
        types = prog.value_types()
        same = [o for o in op.operands if types[o] == op.type]
        if same and results == [op.name]:
            p = copy.deepcopy(prog)
            del p.ops[i]
            _rename(p, op.name, same[0])
            yield p
        p = copy.deepcopy(prog)
        del p.ops[i]
        for r in results:  # every used result becomes a new func arg
            arg = _fresh_arg_name(p)
            p.args.append(FArg(arg, types[r]))
            _rename(p, r, arg)
        yield p


def _walk_ops(ops: list[FOp]) -> Iterator[FOp]:
    """`ops` and, depth first, the ops of every region body they hold."""
    for op in ops:
        yield op
        for body in op_bodies(op):
            yield from _walk_ops(body.ops)


def _drop_unused_funcs(prog: Program) -> Iterator[Program]:
    ops = [*prog.ops] + [op for f in prog.funcs for op in f.ops]
    called = {op.attrs["callee"] for op in _walk_ops(ops) if op.kind == "call"}
    if any(f.name not in called for f in prog.funcs):
        p = copy.deepcopy(prog)
        p.funcs = [f for f in p.funcs if f.name in called]
        yield p


def _delete_callee_ops(prog: Program) -> Iterator[Program]:
    """Delete a callee's op: dead, or its uses rewired to a same-type operand (the callee's
    signature never changes, so its call sites stay valid)."""
    for fi, func in enumerate(prog.funcs):
        used = _used(func)
        for i in reversed(range(len(func.ops))):
            op = func.ops[i]
            results = [r for r in _results(op) if r in used]
            if results and (results != [op.name] or op.kind == "constant"):
                continue
            same = [o for o in op.operands if _callee_types(func).get(o) == op.type]
            if results and not same:
                continue
            p = copy.deepcopy(prog)
            del p.funcs[fi].ops[i]
            if results:
                _rename(p.funcs[fi], op.name, same[0])
            yield p


def _bodies_of(prog: Program) -> list[FBody]:
    """Every region body of the module (case branches, manual computation bodies), in a
    fixed order, so that the k-th body of a deep copy is the same body."""
    ops = [*prog.ops] + [op for f in prog.funcs for op in f.ops]
    return [body for op in _walk_ops(ops) for body in op_bodies(op)]


def _delete_body_ops(prog: Program) -> Iterator[Program]:
    """Delete an op of a region body: dead in the body, or its uses rewired to a same-type
    operand (the body's args and results keep their types)."""
    for k, body in enumerate(_bodies_of(prog)):
        used = set(body.results)
        for op in body.ops:
            used.update(op_uses(op))
        for i in reversed(range(len(body.ops))):
            op = body.ops[i]
            results = [r for r in _results(op) if r in used]
            same = [o for o in op.operands if o != op.name and _type_in(body, o) == op.type]
            if results and (results != [op.name] or not same):
                continue
            p = copy.deepcopy(prog)
            target = _bodies_of(p)[k]
            del target.ops[i]
            if results:
                for inner in target.ops:
                    rename_uses(inner, op.name, same[0])
                target.results = [same[0] if r == op.name else r for r in target.results]
            yield p


def _type_in(body: FBody, name: str):
    types = {a.name: a.type for a in body.args}
    for op in body.ops:
        types[op.name] = op.type
    return types.get(name)


def _callee_types(func: FFunc) -> dict:
    return Program([], func.args, func.ops, func.results).value_types()


def _fresh_arg_name(prog: Program) -> str:
    names = {a.name for a in prog.args}
    n = len(prog.args)
    while f"a{n}" in names:
        n += 1
    return f"a{n}"


def _drop_unused_args(prog: Program) -> Iterator[Program]:
    used = _used(prog)
    unused = [i for i, a in enumerate(prog.args) if a.name not in used]
    if unused:
        p = copy.deepcopy(prog)
        p.args = [a for a in p.args if a.name in used]
        yield p


def _sharding_slots(prog: Program) -> Iterator[tuple[int, str, int]]:
    """(func, kind, index): func -1 is @main, else the index of a callee."""
    bodies: list[Program | FFunc] = [prog, *prog.funcs]
    for fi, body in enumerate(bodies, start=-1):
        for i, a in enumerate(body.args):
            if a.sharding is not None:
                yield fi, "arg", i
        for i, r in enumerate(body.results):
            if r.sharding is not None:
                yield fi, "result", i
        for i, op in enumerate(body.ops):
            if op.sharding is not None:
                yield fi, "op", i
            if op.kind in ("sharding_constraint", "reshard"):
                yield fi, "constraint", i


def _body(prog: Program, fi: int) -> Program | FFunc:
    return prog if fi < 0 else prog.funcs[fi]


def _get(prog: Program, slot: tuple[int, str, int]) -> ShardingSpec:
    fi, kind, i = slot
    body = _body(prog, fi)
    if kind == "arg":
        spec = body.args[i].sharding
    elif kind == "result":
        spec = body.results[i].sharding
    elif kind == "op":
        spec = body.ops[i].sharding
    else:
        spec = body.ops[i].attrs["sharding"]
    # `_sharding_slots` names only slots that hold a sharding.
    assert spec is not None, f"sharding slot {slot} is empty"
    return spec


def _set(prog: Program, slot: tuple[int, str, int], value: ShardingSpec | None) -> None:
    fi, kind, i = slot
    body = _body(prog, fi)
    if kind == "arg":
        body.args[i].sharding = value
    elif kind == "result":
        body.results[i].sharding = value
    elif kind == "op":
        body.ops[i].sharding = value
    else:
        body.ops[i].attrs["sharding"] = value


def _drop_shardings(prog: Program) -> Iterator[Program]:
    for slot in _sharding_slots(prog):
        if slot[1] == "constraint":
            continue
        p = copy.deepcopy(prog)
        _set(p, slot, None)
        yield p


def _simpler(s: ShardingSpec) -> Iterator[ShardingSpec]:
    if s.replicated:
        yield replace(s, replicated=())
    if s.unreduced:
        yield replace(s, unreduced=())
    for d, dim in enumerate(s.dims):
        variants = []
        if dim.priority is not None:
            variants.append(replace(dim, priority=None))
        for k in range(len(dim.axes)):
            axes = dim.axes[:k] + dim.axes[k + 1 :]
            variants.append(
                replace(dim, axes=axes, priority=dim.priority if axes or not dim.closed else None)
            )
        for v in variants:
            yield replace(s, dims=s.dims[:d] + (v,) + s.dims[d + 1 :])


def _simplify_shardings(prog: Program) -> Iterator[Program]:
    for slot in _sharding_slots(prog):
        for simpler in _simpler(_get(prog, slot)):
            p = copy.deepcopy(prog)
            _set(p, slot, simpler)
            yield p


def _mesh_uses(prog: Program) -> dict[str, set[str]]:
    """Per mesh, the axes any sharding names (``<used>`` when the mesh is named at all)."""
    uses: dict[str, set[str]] = {m.name: set() for m in prog.meshes}
    for s in _all_shardings(prog):
        names = {a.name for d in s.dims for a in d.axes}
        names |= {a.name for a in s.replicated + s.unreduced}
        uses.setdefault(s.mesh, set()).update(names | {"<used>"})
    return uses


def _all_shardings(prog: Program) -> Iterator[ShardingSpec]:
    """Every sharding of the module, including those in region bodies and op attributes."""
    for slot in _sharding_slots(prog):
        yield _get(prog, slot)
    bodies: list[Program | FFunc] = [prog, *prog.funcs]
    for body in bodies:
        for op in body.ops:
            yield from _nested_shardings(op)


def _nested_shardings(op: FOp) -> Iterator[ShardingSpec]:
    a = op.attrs
    yield from a.get("extra_shardings", ())
    yield from a.get("in_shardings", ())
    yield from a.get("out_shardings", ())
    if op.kind == "manual_computation":
        # Manual axes count as used: pretend a sharding names them all.
        mesh = a["in_shardings"][0].mesh if a["in_shardings"] else a["out_shardings"][0].mesh
        yield ShardingSpec(mesh, (DimSpec(tuple(AxisSpec(m) for m in a["manual_axes"])),))
    bodies = a.get("branches", []) + ([a["body"]] if "body" in a else [])
    if op.kind == "while":
        yield from (extra for kind, extra in a["body"] if kind == "constraint")
        bodies = []
    for body in bodies:
        for inner in body.ops:
            if inner.sharding is not None:
                yield inner.sharding
            if "sharding" in inner.attrs:
                yield inner.attrs["sharding"]
            yield from _nested_shardings(inner)


def _simplify_meshes(prog: Program) -> Iterator[Program]:
    uses = _mesh_uses(prog)
    for i, mesh in enumerate(prog.meshes):
        if mesh.device_ids is not None:
            p = copy.deepcopy(prog)
            p.meshes[i] = replace(mesh, device_ids=None)
            yield p
        if not uses.get(mesh.name) and len(prog.meshes) > 1:
            p = copy.deepcopy(prog)
            del p.meshes[i]
            yield p
        unused_axes = [a for a, _ in mesh.axes if a not in uses.get(mesh.name, set())]
        if unused_axes and mesh.device_ids is None:
            p = copy.deepcopy(prog)
            p.meshes[i] = replace(mesh, axes=tuple(x for x in mesh.axes if x[0] not in unused_axes))
            yield p
