"""Repeated layers: the module cut to a few of its layers, and a cost scaled back up.

An unrolled stack of L identical layers (JAX tracing a Python loop over a list of per-layer
parameters) shows in the entry function as

- arguments in L consecutive blocks of the same types (block l: layer l's parameters), and
- runs of ops: L consecutive copies of one op sequence (the forward of each layer in order,
  the backward of each in reverse order, the updates in order); a run's last copy may be
  shorter (the first layer's backward computes no gradient for the stack's input).

`find_stack` finds them: a run is L copies (or L - 1 and a shorter tail) of a period of op
signatures (name, types, attributes, nested op names, the argument roles used), and every copy
that reads a layer's parameters reads one layer's, layer r or L - 1 - r for copy r; the runs
hold at least half of the entry function's ops.
`cut(module, stack, k)` keeps layers 0..k-1 and drops the others' ops: a kept op reading a
dropped copy of its own run reads what the last layer's copy reads there (the backward's
first copy reads the loss's gradient), any other kept op (the loss, the return) reads the
copy of layer k - 1 instead; the results the return reads from dropped layers and the dropped
layers' arguments go (a candidate writes its shardings of the kept arguments).

With c(k) the cost of the module cut to k layers, each layer past the first few adds the
same, so c(L) = c(2) + (L - 2) (c(3) - c(2)) (`extrapolate`): a candidate costs two small
modules, not L layers. From the cuts to one and two layers the step time is the same, but
the peak memory may not be (with one layer the peak can sit elsewhere): the planner uses
them when no budget asks for the memory (`evaluate.py`), and checks its winners on the whole
module (`search.py`).
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

import numpy as np

from shardwise.ir import ArrayAttr, Module, Op, RawAttr, TensorType, Value
from shardwise.ir.core import BatchErase
from shardwise.ir.edit import clone_op
from shardwise.sdy.funcs import main_func

__all__ = ["Run", "Stack", "cut", "cut_copy", "extrapolate", "find_stack"]

CUT = 2  # the cuts are to CUT and CUT + 1 layers
MIN_DEPTH = CUT + 2  # below this the larger cut is the module itself


@dataclass(frozen=True, slots=True)
class Run:
    """Op indices [start, end) of the entry block: copies of `period` ops; copy r is layer
    ``layers[r]`` (the last copy may be shorter than `period`)."""

    start: int
    end: int
    period: int
    layers: tuple[int, ...]

    def position(self, layer: int, offset: int) -> int | None:
        """The op index of `offset` in the copy of `layer`, if that copy has it."""
        if layer not in self.layers:
            return None
        i = self.start + self.layers.index(layer) * self.period + offset
        return i if i < self.end else None


@dataclass(frozen=True, slots=True)
class Stack:
    """L layers: the entry function's arguments of each layer, and the runs of its ops."""

    depth: int
    arg_layer: tuple[int, ...]  # per argument: its layer, or -1
    runs: tuple[Run, ...]


def _signature(op: Op, role: dict[int, int]) -> tuple:
    # Types as themselves: frozen values equal when their texts are, and hashed once (their
    # texts, built per use, were a third of `find_stack` on a 96-layer GPT). An operand is its
    # role if it has one (only the entry block's arguments do), else its type. No sort, walk
    # or generator for what an op lacks (most have no attributes and no regions): this runs
    # once per op of the whole module, on the helper's path before the probes.
    properties, attributes = op.properties, op.attributes
    return (
        op.name,
        tuple([role.get(id(v), v.type) for v in op.operands]),
        tuple([r.type for r in op.results]),
        tuple(sorted([(k, str(v)) for k, v in properties.items()])) if properties else (),
        tuple(sorted([(k, str(v)) for k, v in attributes.items()])) if attributes else (),
        tuple([o.name for o in op.walk()])[1:] if op.regions else (),
    )


def _periodic_segments(seq: list[int], min_copies: int) -> list[tuple[int, int, int]]:
    """Maximal segments [s, e) of `seq` with a period P (seq[i] == seq[i + P] throughout)
    holding at least `min_copies` whole periods: (s, e, P), the longest first, disjoint.

    Per period, numpy compares `seq` with itself shifted by P and finds the runs of equal
    places at once (a scan in Python took 0.9 s of a 96-layer GPT's 30k ops): a run of m
    equal places from i is the segment [i, i + m + P), kept if m + P >= min_copies * P."""
    n = len(seq)
    found: list[tuple[int, int, int]] = []
    values = np.asarray(seq, dtype=np.int64)
    for period in range(1, n // max(1, min_copies) + 1):
        same = np.empty(n - period + 2, dtype=np.int8)
        same[0] = same[-1] = 0
        np.equal(values[:-period], values[period:], out=same[1:-1], casting="unsafe")
        edges = np.diff(same)
        starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
        long = ends - starts + period >= min_copies * period
        pairs = zip(starts[long].tolist(), ends[long].tolist(), strict=True)
        found += [(i, j + period, period) for i, j in pairs]
    found.sort(key=lambda s: (-(s[1] - s[0]), s[2], s[0]))
    taken: list[tuple[int, int, int]] = []
    for s, e, p in found:
        if all(e <= s2 or s >= e2 for s2, e2, _ in taken):
            taken.append((s, e, p))
    return sorted(taken)


def _arg_blocks(args: list[Value]) -> tuple[int, ...] | None:
    """Per argument its layer: the longest run of argument blocks of equal types."""
    types = [hash(str(a.type)) for a in args]
    segments = _periodic_segments(types, MIN_DEPTH)
    if not segments:
        return None
    s, e, p = max(segments, key=lambda t: (t[1] - t[0], -t[2]))
    depth = (e - s) // p
    layer = [-1] * len(args)
    for i in range(s, s + depth * p):
        if isinstance(args[i].type, TensorType):
            layer[i] = (i - s) // p
    return tuple(layer)


def find_stack(module: Module) -> Stack | None:
    """The stack of repeated layers of the entry function, or None."""
    func = main_func(module)
    if func is None or not func.regions or not func.regions[0].blocks:
        return None
    block = func.regions[0].entry
    arg_layer = _arg_blocks(block.args)
    if arg_layer is None:
        return None
    depth = max(arg_layer) + 1
    start = arg_layer.index(0)
    period = arg_layer.index(1) - start
    # A layer's parameter by its place in the layer; any other argument as a value of its
    # type (the first layer reads the stack's input where the others read the previous one's).
    role = {id(a): (i - start) % period for i, a in enumerate(block.args) if arg_layer[i] >= 0}
    ops = block.ops
    ids: dict[tuple, int] = {}
    seq = [ids.setdefault(_signature(op, role), len(ids)) for op in ops]
    runs = []
    for s, e, p in _periodic_segments(seq, depth - 1):
        e = min(e, s + depth * p)  # what follows the stack may begin like a layer
        run = _run(ops[s:e], s, e, p, depth, arg_layer, block.args)
        if run is not None:
            runs.append(run)
    # The layers are most of the program (not, say, the updates of 4 arguments of one type).
    if 2 * sum(r.end - r.start for r in runs) < len(ops):
        return None
    return Stack(depth, arg_layer, tuple(runs))


def _run(
    ops: list[Op], s: int, e: int, p: int, depth: int, arg_layer: tuple[int, ...], args: list
) -> Run | None:
    """The segment as a run of `depth` layers, if its copies read one layer each in order."""
    copies = -(-(e - s) // p)
    if copies != depth:
        return None
    index = {id(a): i for i, a in enumerate(args)}
    read: list[set[int]] = [set() for _ in range(copies)]
    for i, op in enumerate(ops):
        for sub in op.walk():
            for v in sub.operands:
                a = index.get(id(v))
                if a is not None and arg_layer[a] >= 0:
                    read[i // p].add(arg_layer[a])
    if any(len(r) > 1 for r in read) or not any(read):
        return None
    for layers in (tuple(range(depth)), tuple(reversed(range(depth)))):
        if all(not r or r == {layers[c]} for c, r in enumerate(read)):
            return Run(s, e, p, layers)
    return None


class _CutFailed(Exception):
    pass


@dataclass(frozen=True, slots=True)
class _CutPlan:
    """What cutting the entry block to k layers does: the op indices dropped, the operands to
    replace (top-level op index, op, operand, value), the return's operands dropped, and the
    arguments kept."""

    dropped: frozenset[int]
    edits: tuple[tuple[int, Op, int, Value], ...]
    results: frozenset[int]
    has_return: bool
    kept_args: tuple[int, ...]


def cut(module: Module, stack: Stack, k: int) -> tuple[int, ...] | None:
    """Cut `module` (in place) to its layers 0..k-1 (module docstring): the indices of the
    arguments kept, or None (the module unchanged) if some kept op reads a dropped layer in a
    way the rules do not cover."""
    plan = _plan_cut(module, stack, k)
    if plan is None:
        return None
    func = main_func(module)
    assert func is not None
    ops = func.regions[0].entry.ops
    for _, sub, m, w in plan.edits:
        sub.set_operand(m, w)
    if plan.has_return:
        _drop_results(func, ops[-1], plan.results)
    with BatchErase() as eraser:
        for i in sorted(plan.dropped, reverse=True):
            eraser.erase(ops[i])
    _drop_args(func, plan.kept_args)
    return plan.kept_args


def cut_copy(module: Module, stack: Stack, k: int) -> tuple[Op, tuple[int, ...]] | None:
    """`cut` on a copy: the top op of a new module of `module`'s layers 0..k-1 and the
    arguments kept; `module` is unchanged. Only the kept ops are copied (copying a 96-layer
    GPT whole to cut it to 4 layers cost 0.15 s, and erasing the rest more)."""
    plan = _plan_cut(module, stack, k)
    if plan is None:
        return None
    func = main_func(module)
    assert func is not None
    block = func.regions[0].entry
    ops = block.ops
    mapping: dict[Value, Value] = {}
    # Copied without the dropped ops: a kept op's copy reads a dropped value of `module` until
    # the edits replace it (its use of that value goes with it).
    block.ops = [op for i, op in enumerate(ops) if i not in plan.dropped]
    try:
        top = clone_op(module.op, mapping)
    finally:
        block.ops = ops
    copy = top.regions[0].entry.ops[module.op.regions[0].entry.ops.index(func)]
    copy_ops = copy.regions[0].entry.ops
    place = {i: n for n, i in enumerate(i for i in range(len(ops)) if i not in plan.dropped)}
    twins: dict[int, Op] = {}
    for i, sub, m, w in plan.edits:
        if id(sub) not in twins:
            pairs = zip(ops[i].walk(), copy_ops[place[i]].walk(), strict=True)
            twins.update((id(a), b) for a, b in pairs)
        twins[id(sub)].set_operand(m, mapping[w])
    if plan.has_return:
        _drop_results(copy, copy_ops[-1], plan.results)
    _drop_args(copy, plan.kept_args)
    return top, plan.kept_args


def _plan_cut(module: Module, stack: Stack, k: int) -> _CutPlan | None:
    """What `cut` does to `module` (unchanged here), or None if it cannot."""
    func = main_func(module)
    assert func is not None
    block = func.regions[0].entry
    ops = block.ops
    ret = ops[-1] if ops and ops[-1].name == "func.return" else None
    where: dict[int, tuple[Run, int, int]] = {}  # op id -> (run, layer, offset)
    for run in stack.runs:
        for i in range(run.start, run.end):
            c, offset = divmod(i - run.start, run.period)
            where[id(ops[i])] = (run, run.layers[c], offset)
    position = {id(op): i for i, op in enumerate(ops)}
    dropped = {i for i, op in enumerate(ops) if where.get(id(op), (None, -1, 0))[1] >= k}
    args = {id(a): i for i, a in enumerate(block.args)}
    edits: list[tuple[int, Op, int, Value]] = []
    results = [  # the results the return reads from the dropped layers go with them
        m
        for m, v in enumerate(ret.operands if ret is not None else ())
        if (v.is_block_arg and stack.arg_layer[args[id(v)]] >= k)
        or position.get(id(v.owner)) in dropped
    ]
    try:
        for i, op in enumerate(ops):
            if i in dropped or op is ret:
                continue
            for sub in op.walk():
                for m, v in enumerate(sub.operands):
                    w = _kept_value(v, sub, m, op, where, position, dropped, args, stack, k, ops)
                    if w is not v:
                        if w.type != v.type or position.get(id(w.owner), -1) >= i:
                            raise _CutFailed
                        edits.append((i, sub, m, w))
        if ret is not None:
            dropped_results = set(results)
            for m, v in enumerate(ret.operands):
                if m not in dropped_results:
                    _kept_value(v, ret, m, ret, where, position, dropped, args, stack, k, ops)
    except _CutFailed:
        return None
    kept = tuple(i for i, layer in enumerate(stack.arg_layer) if layer < k)
    return _CutPlan(frozenset(dropped), tuple(edits), frozenset(results), ret is not None, kept)


def _drop_results(func: Op, ret: Op, drop: AbstractSet[int]) -> None:
    keep = [m for m in range(len(ret.operands)) if m not in drop]
    values = [ret.operands[m] for m in keep]
    ret.drop_operands()
    for v in values:
        ret.add_operand(v)
    if "res_attrs" in func.properties:
        old = func.properties["res_attrs"].elements
        func.properties["res_attrs"] = ArrayAttr([old[m] for m in keep])
    _retype(func)


def _drop_args(func: Op, keep: tuple[int, ...]) -> None:
    block = func.regions[0].entry
    assert all(not block.args[i].uses for i in range(len(block.args)) if i not in set(keep))
    block.args[:] = [block.args[i] for i in keep]
    for i, arg in enumerate(block.args):
        arg.index = i
    if "arg_attrs" in func.properties:
        old = func.properties["arg_attrs"].elements
        func.properties["arg_attrs"] = ArrayAttr([old[i] for i in keep])
    _retype(func)


def _retype(func: Op) -> None:
    block = func.regions[0].entry
    ret = block.terminator
    args = ", ".join(str(a.type) for a in block.args)
    results = ", ".join(str(v.type) for v in (ret.operands if ret is not None else ()))
    func.properties["function_type"] = RawAttr(f"({args}) -> ({results})")


def _kept_value(
    v: Value,
    user: Op,
    m: int,
    top: Op,
    where: dict[int, tuple[Run, int, int]],
    position: dict[int, int],
    dropped: set[int],
    args: dict[int, int],
    stack: Stack,
    k: int,
    ops: list[Op],
) -> Value:
    """What operand `m` of `user` (inside the kept top-level op `top`) reads in the cut."""
    if v.is_block_arg:
        a = args.get(id(v))
        if a is not None and stack.arg_layer[a] >= k:
            raise _CutFailed
        return v
    owner = v.owner
    i = position.get(id(owner))
    if i is None or i not in dropped:
        return v  # kept, or inside a region
    run, _, offset = where[id(owner)]
    mine = where.get(id(top))
    if mine is not None and mine[0] is run:  # the chain of one run: what its last layer reads
        if user is not top:
            raise _CutFailed
        j = run.position(stack.depth - 1, mine[2])
        if j is None or ops[j].name != top.name:
            raise _CutFailed
        w = ops[j].operands[m]
        if not w.is_block_arg and position.get(id(w.owner)) in dropped:
            raise _CutFailed
        return w
    j = run.position(k - 1, offset)  # the loss, the return, another run: layer k - 1's copy
    if j is None or len(ops[j].results) <= v.index:
        raise _CutFailed
    return ops[j].results[v.index]


_SUMMED = (
    "comm_s",
    "compute_s",
    "comm_bytes_per_device",
    "peak_memory_bytes_per_device",
    "flops_per_device",
)


def extrapolate(lo: dict[str, Any], hi: dict[str, Any], depth: int, k: int = CUT) -> dict[str, Any]:
    """The estimate of `depth` layers from those of the cuts to `k` and `k` + 1 layers:
    c(k) + (L - k)(c(k + 1) - c(k)) per number (integers stay integers); no collectives
    listed."""

    def scale(a: Any, b: Any) -> Any:
        return a + (depth - k) * (b - a)

    out: dict[str, Any] = {key: scale(lo[key], hi[key]) for key in _SUMMED}
    lo_axes, hi_axes = lo["comm_bytes_per_axis"], hi["comm_bytes_per_axis"]
    out["comm_bytes_per_axis"] = {
        a: scale(lo_axes.get(a, 0), hi_axes.get(a, 0)) for a in sorted({*lo_axes, *hi_axes})
    }
    out["time_s"] = out["comm_s"] + out["compute_s"]
    out["collectives"] = []
    return out
