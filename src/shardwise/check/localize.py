"""Find the first op of the local program whose per-device values disagree with the global one.

Both programs return every intermediate value of their main function (one extra run each),
so no bisection is needed. How ops are matched:

1. An op of the local program *corresponds to* a global op when it carries an ``sdy.sharding``
   (partitioners keep the global op's sharding on the op they make from it; the ops a
   collective is lowered to — ``partition_id``, offset tables, ``dynamic_slice`` — carry none)
   and is not a collective. Such ops are paired in program order with the global program's
   ops (its main's top-level ops once shardings are stripped): each takes the next global op
   of the same name and result count (or, when no global op of that name is left, the next
   global op: the local op replaced it). An op without a sharding (a replicated op keeps none)
   pairs only with the very next unpaired global op, and only when its result types equal
   that op's global types; it is compared as replicated. Global ops whose values do not
   reach main's results are left out (partitioners drop dead code).
2. The local op's value is compared after the ``all_reduce`` ops that directly follow it: a
   dot or reduce over a sharded dimension yields partial sums on each device, and its sharding
   describes the value once they are summed. A value consumed by a ``reduce_scatter`` is partial
   until then and is not compared; nor is one whose sharding has unreduced axes.
3. Device id p is expected to hold the slice of the global value that the op's sharding gives
   its position in the mesh (`shardwise.check.slicing`). The first pair in the local program's
   order with a device outside the tolerance is the divergence. It is reported with the
   collectives and helper ops between it and the compared values it reads (where a wrong
   collective or slice shows up) and the collectives it was compared after.
4. When every compared op agrees but a result differs, the divergence is the chain of
   collectives after the last compared op that produces that result.

Limits: an op the local program duplicates or drops makes the pairing skip ahead (so a wrong
pairing can only name a later op, never turn a difference into "equal": equality is decided on
the results alone).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from shardwise.check.programs import Program
from shardwise.check.slicing import local_shape, split, split_padded
from shardwise.check.values import Difference, compare
from shardwise.errors import Location, UnsupportedError
from shardwise.ir import Op, TensorType, Value
from shardwise.mesh import Mesh
from shardwise.sharding import DimensionSharding, TensorSharding, TensorShardingPerValue

__all__ = ["COLLECTIVES", "Divergence", "NearbyOp", "localize"]

COLLECTIVES = frozenset(
    {
        "stablehlo.all_reduce",
        "stablehlo.all_gather",
        "stablehlo.all_to_all",
        "stablehlo.reduce_scatter",
        "stablehlo.collective_permute",
        "stablehlo.collective_broadcast",
    }
)
_MAX_WALK = 12  # ops listed between a divergence and the compared values it reads


@dataclass(frozen=True, slots=True)
class NearbyOp:
    """An op next to the divergence: name, where, and its replica groups or pairs."""

    name: str
    location: Location
    detail: str = ""

    def __str__(self) -> str:
        detail = f" {self.detail}" if self.detail else ""
        return f"{self.location}: {self.name}{detail}"


@dataclass(frozen=True, slots=True)
class Divergence:
    """The first local op (or result) whose per-device values disagree with the global value."""

    op_name: str
    location: Location  # in the local program
    global_location: Location | None  # the matched global op
    result_index: int
    sharding: str
    difference: Difference
    devices: tuple[int, ...]  # device ids whose piece differs
    compared_after: tuple[NearbyOp, ...]  # all_reduce ops the value was compared after
    inputs_via: tuple[NearbyOp, ...]  # collectives / helper ops between it and checked values

    def __str__(self) -> str:
        lines = [f"{self.location}: first divergence: {self.op_name} (result {self.result_index})"]
        if self.global_location is not None:
            lines.append(f"  global op: {self.global_location}")
        lines.append(f"  sharding: {self.sharding}")
        lines.append(f"  devices that differ: {', '.join(map(str, self.devices)) or '-'}")
        lines.append(f"  {self.difference}")
        lines.extend(f"  compared after: {n}" for n in self.compared_after)
        lines.extend(f"  reads through: {n}" for n in self.inputs_via)
        return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class _Site:
    """One local value checked against a global one."""

    local_op: Op
    global_op: Op | None
    result_index: int
    value: Value  # the value compared (after the following all_reduce ops)
    global_value: Value | None
    sharding: TensorSharding
    after: tuple[Op, ...]
    label: str  # the sharding as reported


MeshOf = Callable[[TensorSharding], Mesh]


def pair_ops(glob: Program, local: Program) -> list[tuple[Op, Op, TensorShardingPerValue | None]]:
    """(global op, local op, its sharding) triples, rule 1 of the module docstring."""
    pairs: list[tuple[Op, Op, TensorShardingPerValue | None]] = []
    gops = _live_ops(glob)
    start = 0
    for lop, sharding in zip(local.ops, local.op_shardings, strict=True):
        if lop.name in COLLECTIVES:
            continue
        if sharding is None:
            # An unsharded op pairs only with the very next global op, and only if it has
            # that op's (global) types: replicated ops keep none, helper ops rarely match.
            if start < len(gops) and _same_types(gops[start], lop):
                pairs.append((gops[start], lop, None))
                start += 1
            continue
        k = _next_same_name(gops, start, lop)
        if k is None and lop.name == "stablehlo.pad":
            continue  # padding for divisibility: read through, like a collective's helpers
        if k is None and start < len(gops):
            # No global op of this name is left: the local op replaced the next one.
            k = start if len(gops[start].results) == len(lop.results) else None
        if k is not None:
            pairs.append((gops[k], lop, sharding))
            start = k + 1
    return pairs


def _live_ops(program: Program) -> list[Op]:
    """The ops whose values reach main's own results (partitioners drop the others)."""
    if not program.ops:
        return []
    block = program.ops[0].parent
    ret = block.terminator if block is not None else None
    if ret is None:
        return list(program.ops)
    live: set[int] = set()
    stack = [v.defining_op for v in ret.operands[: program.num_results]]
    while stack:
        op = stack.pop()
        if op is None or id(op) in live:
            continue
        live.add(id(op))
        for nested in op.walk():
            stack.extend(v.defining_op for v in nested.operands)
    return [op for op in program.ops if id(op) in live]


def _next_same_name(ops: list[Op], start: int, lop: Op) -> int | None:
    for k in range(start, len(ops)):
        if ops[k].name == lop.name and len(ops[k].results) == len(lop.results):
            return k
    return None


def _same_types(gop: Op, lop: Op) -> bool:
    return gop.name == lop.name and [r.type for r in gop.results] == [r.type for r in lop.results]


def _sites(glob: Program, local: Program, mesh: Mesh) -> list[_Site]:
    sites = []
    for gop, lop, per_value in pair_ops(glob, local):
        for j, result in enumerate(lop.results):
            if per_value is not None:
                sharding = per_value.shardings[j]
            else:
                sharding = _replicated(mesh, result.type.rank)
            if sharding.unreduced_axes:
                continue
            value, after = _after_all_reduces(result)
            if value is None:
                continue
            label = (
                str(sharding) if per_value is not None else "replicated (the op has no sharding)"
            )
            sites.append(_Site(lop, gop, j, value, gop.results[j], sharding, after, label))
    return sites


def _replicated(mesh: Mesh, rank: int) -> TensorSharding:
    return TensorSharding(mesh, tuple(DimensionSharding() for _ in range(rank)))


def _after_all_reduces(value: Value) -> tuple[Value | None, tuple[Op, ...]]:
    """Rule 2: follow single-use all_reduce ops; None for a partial value."""
    after: list[Op] = []
    while len(users := _users(value)) == 1:
        user = users[0]
        if user.name == "stablehlo.reduce_scatter":
            return None, ()
        if user.name != "stablehlo.all_reduce":
            break
        after.append(user)
        value = user.results[0]
    return value, tuple(after)


def _users(value: Value) -> list[Op]:
    """Users other than the return (which also returns every intermediate)."""
    return [op for op in value.users if not op.is_terminator]


def _ints(attr: object) -> str:
    text = str(attr)
    return "[" + text.split(":", 1)[1].strip(" >") + "]" if ":" in text else text


def _nearby(op: Op) -> NearbyOp:
    detail = ""
    for key in ("all_gather_dim", "split_dimension", "concat_dimension", "scatter_dimension"):
        if key in op.properties:
            detail += f" {key}={str(op.properties[key]).split(' :')[0]}"
    if op.name == "stablehlo.constant":
        detail = str(op.properties.get("value", "")).split(" :")[0]
    for key in ("edge_padding_low", "edge_padding_high"):
        if op.name == "stablehlo.pad" and key in op.properties:
            detail += f" {key.removeprefix('edge_padding_')}={_ints(op.properties[key])}"
    for key in ("replica_groups", "source_target_pairs"):
        if key in op.properties:
            detail += f" {key}={str(op.properties[key]).split(' :')[0]}"
    return NearbyOp(op.name, op.location, detail.strip())


def _inputs_via(op: Op, checked: set[int]) -> tuple[NearbyOp, ...]:
    """The ops between `op` and the checked values (or arguments) it reads, nearest first."""
    found: list[Op] = []
    seen: set[int] = set()
    stack = list(op.operands)
    while stack and len(found) < _MAX_WALK:
        value = stack.pop(0)
        producer = value.defining_op
        if producer is None or id(value) in checked or id(producer) in seen:
            continue
        if producer.parent is not op.parent:
            continue
        seen.add(id(producer))
        found.append(producer)
        stack.extend(producer.operands)
    return tuple(_nearby(p) for p in found if p.name in COLLECTIVES or _is_slicing(p))


def _is_slicing(op: Op) -> bool:
    """Ops a collective is lowered to that decide which piece a device takes."""
    if op.name == "stablehlo.constant":
        return _is_offset_table(op)
    return op.name in (
        "stablehlo.dynamic_slice",
        "stablehlo.slice",
        "stablehlo.reshape",
        "stablehlo.pad",
    )


def _is_offset_table(op: Op) -> bool:
    """An integer constant with one entry per device (an all-slice's offsets)."""
    t = op.results[0].type
    return isinstance(t, TensorType) and t.rank == 1 and t.element_type.startswith(("i", "ui"))


def _compare_site(
    site: _Site,
    glob: Program,
    local: Program,
    gout: list[np.ndarray],
    lout: list[np.ndarray],
    mesh_of: MeshOf,
) -> tuple[Difference, tuple[int, ...]] | None:
    gi = glob.output_index(site.global_value) if site.global_value is not None else None
    li = local.output_index(site.value)
    if gi is None or li is None:
        return None
    mesh = mesh_of(site.sharding)
    global_value = gout[gi]
    actual = lout[li]
    if len(site.sharding.dim_shardings) != global_value.ndim:
        return None  # paired with an op of another rank: nothing to compare
    try:
        shape = local_shape(global_value.shape, site.sharding, mesh)
    except UnsupportedError:
        return _compare_padded(actual, global_value, site.sharding, mesh)
    if _grown(actual.shape[1:], shape):
        # A scatter's spare window (convert_global_to_local/scatter.py): sliced off after it.
        actual = actual[(slice(None), *(slice(0, n) for n in shape))]
    if actual.shape[1:] != shape:
        devices = tuple(range(actual.shape[0]))
        return Difference(False, float("inf"), float("inf"), 0, 0), devices
    expected = split(global_value, site.sharding, mesh)
    devices = tuple(p for p in range(len(expected)) if not compare(actual[p], expected[p]).equal)
    return compare(actual, expected), devices


def _grown(actual: tuple[int, ...], expected: tuple[int, ...]) -> bool:
    """Whether a local value is larger than its piece along some dims, and nowhere smaller."""
    if len(actual) != len(expected) or actual == expected:
        return False
    return all(a >= e for a, e in zip(actual, expected, strict=True))


def _compare_padded(
    actual: np.ndarray, global_value: np.ndarray, sharding: TensorSharding, mesh: Mesh
) -> tuple[Difference, tuple[int, ...]] | None:
    """A value padded for divisibility: its real elements against the global value's."""
    expected, real = split_padded(global_value, sharding, mesh)
    if actual.shape != expected.shape:
        return None
    devices = tuple(
        p
        for p in range(len(expected))
        if not compare(actual[p][real[p]], expected[p][real[p]]).equal
    )
    return compare(actual[real], expected[real]), devices


def localize(
    glob: Program,
    local: Program,
    gout: list[np.ndarray],
    lout: list[np.ndarray],
    mesh_of: MeshOf,
    mesh: Mesh,
    differing_results: list[tuple[int, str, Difference, tuple[int, ...]]],
) -> Divergence | None:
    """The first divergence (module docstring), from both programs' intermediate outputs.

    `mesh` is the mesh the local program runs on (unsharded local ops are replicated on it).
    """
    checked: set[int] = set()
    for site in _sites(glob, local, mesh):
        outcome = _compare_site(site, glob, local, gout, lout, mesh_of)
        if outcome is None:
            continue
        difference, devices = outcome
        if difference.equal:
            checked.add(id(site.value))
            continue
        return Divergence(
            site.local_op.name,
            site.local_op.location,
            site.global_op.location if site.global_op is not None else None,
            site.result_index,
            site.label,
            difference,
            devices,
            tuple(_nearby(op) for op in site.after),
            _inputs_via(site.local_op, checked),
        )
    return _result_divergence(local, checked, differing_results)


def _result_divergence(
    local: Program,
    checked: set[int],
    differing_results: list[tuple[int, str, Difference, tuple[int, ...]]],
) -> Divergence | None:
    """Rule 4: no compared op differs; name the ops producing the first differing result."""
    block = local.ops[-1].parent if local.ops else None
    ret = block.terminator if block is not None else None
    if ret is None or not differing_results:
        return None
    index, sharding, difference, devices = differing_results[0]
    producer = ret.operands[index].defining_op
    if producer is None:
        return None
    return Divergence(
        producer.name,
        producer.location,
        None,
        index,
        sharding,
        difference,
        devices,
        (),
        (_nearby(producer), *_inputs_via(producer, checked)),
    )
