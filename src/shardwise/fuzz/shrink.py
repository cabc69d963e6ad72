"""Greedy shrinking of a diverging program to a small one that still diverges.

Each step proposes a smaller variant; `still_fails(variant)` keeps it when the divergence
survives (it must also still be accepted by the reference — the predicate checks that). Steps,
repeated until none applies: drop func results, delete ops (uses rewired to an operand of the
same type, else to a new func arg), drop unused args, drop shardings, drop a dimension's axes
or replicated axes, drop priorities, and simplify meshes (device ids, unused meshes and axes).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from dataclasses import replace

from shardwise.fuzz.program import FArg, Program, ShardingSpec

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
    yield from _drop_unused_args(prog)
    yield from _drop_shardings(prog)
    yield from _simplify_shardings(prog)
    yield from _simplify_meshes(prog)


def _used(prog: Program) -> set[str]:
    used = {r.value for r in prog.results}
    for op in prog.ops:
        used.update(op.operands)
    return used


def _drop_results(prog: Program) -> Iterator[Program]:
    for i in range(len(prog.results)):
        if len(prog.results) > 1:
            p = copy.deepcopy(prog)
            del p.results[i]
            yield p


def _rename(prog: Program, old: str, new: str) -> None:
    for op in prog.ops:
        op.operands = [new if o == old else o for o in op.operands]
    for r in prog.results:
        if r.value == old:
            r.value = new


def _delete_ops(prog: Program) -> Iterator[Program]:
    used = _used(prog)
    # Later ops first: deleting near the results tends to remove whole chains.
    for i in reversed(range(len(prog.ops))):
        op = prog.ops[i]
        if op.name not in used:
            p = copy.deepcopy(prog)
            del p.ops[i]
            yield p
            continue
        types = prog.value_types()
        same = [o for o in op.operands if types[o] == op.type]
        replacements = same[:1] + ["<new-arg>"]
        for repl in replacements:
            p = copy.deepcopy(prog)
            del p.ops[i]
            if repl == "<new-arg>":
                repl = _fresh_arg_name(p)
                p.args.append(FArg(repl, op.type))
            _rename(p, op.name, repl)
            yield p


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


def _sharding_slots(prog: Program) -> Iterator[tuple[str, int]]:
    for i, a in enumerate(prog.args):
        if a.sharding is not None:
            yield "arg", i
    for i, r in enumerate(prog.results):
        if r.sharding is not None:
            yield "result", i
    for i, op in enumerate(prog.ops):
        if op.sharding is not None:
            yield "op", i
        if op.kind == "sharding_constraint":
            yield "constraint", i


def _get(prog: Program, slot: tuple[str, int]) -> ShardingSpec:
    kind, i = slot
    if kind == "arg":
        return prog.args[i].sharding
    if kind == "result":
        return prog.results[i].sharding
    if kind == "op":
        return prog.ops[i].sharding
    return prog.ops[i].attrs["sharding"]


def _set(prog: Program, slot: tuple[str, int], value: ShardingSpec | None) -> None:
    kind, i = slot
    if kind == "arg":
        prog.args[i].sharding = value
    elif kind == "result":
        prog.results[i].sharding = value
    elif kind == "op":
        prog.ops[i].sharding = value
    else:
        prog.ops[i].attrs["sharding"] = value


def _drop_shardings(prog: Program) -> Iterator[Program]:
    for slot in _sharding_slots(prog):
        if slot[0] == "constraint":
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
    uses: dict[str, set[str]] = {m.name: set() for m in prog.meshes}
    for slot in _sharding_slots(prog):
        s = _get(prog, slot)
        names = {a.name for d in s.dims for a in d.axes}
        names |= {a.name for a in s.replicated + s.unreduced}
        uses.setdefault(s.mesh, set()).update(names | {"<used>"})
    return uses


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
