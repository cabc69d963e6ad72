"""Extras the fuzzer adds to a generated program: forms that suites written by others use.

* quoted symbol names: callees renamed ``@"my-fn3"``;
* ops of an unregistered dialect (``"fuzz.opaque"(%v)``) in the data path of ``@main``: they
  have no sharding rule, so nothing crosses them (the runner allows unregistered dialects on
  both sides);
* reshard chains for ``canonicalize``: a reshard of a reshard, duplicate reshards of one value,
  a reshard of a reshape or transpose of a value another reshard reads;
* a ``stablehlo.all_reduce`` whose replica groups are mesh axes, of a mesh symbol or of an
  inline ``#stablehlo.mesh``;
* explicit locations on callee arguments (``loc("p")``, ``loc(unknown)``, ...): a callee called
  with different shardings is cloned (``@f_0``), and its arguments keep them. The runner then
  compares the printouts with locations.

`decorate` draws from its own random stream (``<seed>/conformance``), so the base program of a
seed is the one the generator always made.
"""

from __future__ import annotations

import math
import random

from shardwise.fuzz.builder import random_sharding
from shardwise.fuzz.program import (
    FOp,
    FResult,
    Program,
    TType,
    op_bodies,
    rename_uses,
    symbol,
)

__all__ = ["decorate"]

_QUOTED_NAMES = 0.5
_UNREGISTERED = 0.2
_RESHARD_CHAIN = 0.35
_MESH_ALL_REDUCE = 0.15
_CALLEE_ARG_LOCS = 0.25
_ARG_LOCS = ('loc("p")', "loc(unknown)", 'loc("x.py":3:7)', 'loc(fused["q", "y.py":1:2])')
_UNREGISTERED_NAMES = ("fuzz.opaque", "vendor.fused_kernel")


def decorate(prog: Program, seed: int | str) -> Program:
    """Add the extras to `prog` in place (each with some probability); returns it."""
    rng = random.Random(f"{seed}/conformance")
    if prog.funcs and rng.random() < _QUOTED_NAMES:
        _quote_callee_names(prog)
    if rng.random() < _UNREGISTERED:
        _insert_after_value(prog, rng, _unregistered)
    if rng.random() < _RESHARD_CHAIN:
        _insert_after_value(prog, rng, _reshard_chain)
    if rng.random() < _MESH_ALL_REDUCE:
        _insert_after_value(prog, rng, _mesh_all_reduce)
    if prog.funcs and rng.random() < _CALLEE_ARG_LOCS:
        for f in prog.funcs:
            for arg in f.args:
                if rng.random() < 0.7:
                    arg.loc = rng.choice(_ARG_LOCS)
    return prog


def _rename_callee(ops: list[FOp], renames: dict[str, str]) -> None:
    for op in ops:
        if op.kind == "call" and op.attrs["callee"] in renames:
            op.attrs["callee"] = renames[op.attrs["callee"]]
        for body in op_bodies(op):
            _rename_callee(body.ops, renames)


def _quote_callee_names(prog: Program) -> None:
    renames = {f.name: f"my-fn{i}" for i, f in enumerate(prog.funcs)}
    for f in prog.funcs:
        f.name = renames[f.name]
        _rename_callee(f.ops, renames)
    _rename_callee(prog.ops, renames)


def _plain_values(prog: Program) -> list[tuple[str, TType, int]]:
    """Values of ``@main`` that extras may read: (name, type, index of the first op after it).

    Single-result values of float tensors only (args and plain ops; no region results).
    """
    found = [(a.name, a.type, 0) for a in prog.args if a.type.dtype == "f32"]
    for i, op in enumerate(prog.ops):
        if op.type.dtype != "f32" or op.attrs.get("extra") or "#" in op.name:
            continue
        if op.kind in ("sharding_group", "while"):
            continue
        found.append((op.name, op.type, i + 1))
    return found


def _insert_after_value(prog: Program, rng: random.Random, make) -> None:
    """Insert `make(prog, rng, value, type)`'s ops right after `value`; later reads of
    `value` read the last new op instead (so the new ops sit in the data path)."""
    values = _plain_values(prog)
    if not values:
        return
    value, ttype, at = rng.choice(values)
    new_ops, out = make(prog, rng, value, ttype)
    for op in prog.ops[at:]:
        rename_uses(op, value, out)
    for result in prog.results:
        if result.value == value:
            result.value = out
    prog.ops[at:at] = new_ops
    if not any(r.value == out for r in prog.results) and rng.random() < 0.5:
        prog.results.append(FResult(out))


def _fresh(prog: Program, stem: str) -> str:
    taken = set(prog.value_types())
    k = 0
    while f"{stem}{k}" in taken:
        k += 1
    return f"{stem}{k}"


def _unregistered(prog: Program, rng: random.Random, value: str, ttype: TType):
    name = _fresh(prog, "u")
    op = FOp("unregistered", name, [value], ttype, {"op": rng.choice(_UNREGISTERED_NAMES)})
    if rng.random() < 0.3:
        op.sharding = random_sharding(rng, prog.meshes, len(ttype.shape), unreduced=False)
    return [op], name


def _mesh_all_reduce(prog: Program, rng: random.Random, value: str, ttype: TType):
    """An all-reduce whose replica groups are mesh axes: of a mesh symbol, or of an inline
    ``#stablehlo.mesh`` (which `sdy-lift-inlined-meshes` lifts)."""
    mesh = rng.choice(prog.meshes)
    names = [n for n, _ in mesh.axes]
    axes = [n for n in names if rng.random() < 0.6] or [rng.choice(names)]
    if rng.random() < 0.5:
        text = symbol(mesh.name)
    else:
        inline = ", ".join(f'#stablehlo.mesh_axis<name = "{n}", size = {s}>' for n, s in mesh.axes)
        text = f"#stablehlo.mesh<axes = [{inline}]>"
    name = _fresh(prog, "g")
    return [FOp("mesh_all_reduce", name, [value], ttype, {"mesh": text, "axes": axes})], name


def _reshard_chain(prog: Program, rng: random.Random, value: str, ttype: TType):
    """``r0 = reshard v``, then a reshard of r0 and/or a duplicate reshard of v (same or an
    equivalent sharding), or a reshard of a reshape of v, all read by a last add."""
    rank = len(ttype.shape)

    def sharding():
        return random_sharding(rng, prog.meshes, rank, allow_priority=False, unreduced=False)

    first = sharding()
    names = [_fresh(prog, "r")]
    ops = [FOp("reshard", names[0], [value], ttype, {"sharding": first})]
    prog_names = set(prog.value_types())

    def new_name() -> str:
        k = len(names)
        while f"{names[0]}_{k}" in prog_names:
            k += 1
        names.append(f"{names[0]}_{k}")
        return names[-1]

    kind = rng.choice(("chain", "duplicate", "both", "through_reshape"))
    last = names[0]
    if kind in ("chain", "both"):
        name = new_name()
        ops.append(FOp("reshard", name, [last], ttype, {"sharding": sharding()}))
        last = name
    if kind in ("duplicate", "both"):
        name = new_name()
        again = first if rng.random() < 0.7 else sharding()
        ops.append(FOp("reshard", name, [value], ttype, {"sharding": again}))
        add = new_name()
        ops.append(FOp("binary", add, [last, name], ttype, {"op": "add"}))
        last = add
    if kind == "through_reshape" and rank >= 2:
        flat = TType((math.prod(ttype.shape),), ttype.dtype)
        reshape, resharded, back = new_name(), new_name(), new_name()
        ops.append(FOp("reshape", reshape, [value], flat, {}))
        flat_sharding = random_sharding(rng, prog.meshes, 1, allow_priority=False, unreduced=False)
        ops.append(FOp("reshard", resharded, [reshape], flat, {"sharding": flat_sharding}))
        ops.append(FOp("reshape", back, [resharded], ttype, {}))
        add = new_name()
        ops.append(FOp("binary", add, [last, back], ttype, {"op": "add"}))
        last = add
    return ops, last
