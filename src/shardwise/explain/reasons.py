"""Why an axis a connected tensor has did not reach this one: read off the op's rule, the
shardings propagation left, and the rounds the observer recorded.

Adjacent tensors (operands/results of an op next to this tensor) are compared at that op.
For an axis that only a tensor further away has, `blocked_axes` walks the ops between them,
breadth first (the nearest tensor with the axis wins), and reports the op where the axis
disappears along that path with the reason found there.

Factor types matter to propagation only through op priorities: the op-priority rounds 0-2
propagate pass-through factors only, so a need-replication or permutation factor crosses its
op from round 3 on, and an axis another path brought earlier wins (Shardy's
`onlyPassThroughFactorsBroadcastBackward`). Likewise a dim with user priority p > 0 waits
for the round of p, and a lower priority wins.
"""

from __future__ import annotations

import functools
import weakref
from collections import deque

from shardwise.axis import AxisRef
from shardwise.explain.provenance import (
    Blocked,
    Explanation,
    Key,
    Origin,
    ProvenanceObserver,
    _Step,
    axis_texts,
    chain,
    sharding_of_key,
)
from shardwise.ir import Module
from shardwise.propagation.factor_propagation import PropagationDirection
from shardwise.propagation.projection import ShardingProjection
from shardwise.rules.rule import FactorType, factor_symbol
from shardwise.sdy.shardings import get_sharding
from shardwise.sharding import TensorSharding

__all__ = ["blocked_axes", "explain_value"]

# The first op-priority round that propagates factors that are not pass-through.
_NON_PASS_THROUGH_ROUND = 3


def blocked_axes(
    obs: ProvenanceObserver, module: Module, key: Key, sharding: TensorSharding | None
) -> list[Blocked]:
    """Every axis a connected tensor has that `key` lacks, with the op and reason that stopped
    it; adjacent tensors first, then (with a path) the tensors further away."""
    have = set(axis_texts(sharding))  # explicitly replicated axes are reported as stopped
    out: list[Blocked] = []
    for op_id in obs.steps_of.get(key, []):
        for b in _blocked_at(obs, module, obs.steps[op_id], key, have):
            if all(b.axis != o.axis for o in out):
                out.append(b)
    out.extend(_blocked_no_rule(obs, module, key, have))
    out.extend(_blocked_further(obs, module, key, have | {b.axis for b in out}))
    return out


def _final(obs: ProvenanceObserver, module: Module, key: Key) -> TensorSharding | None:
    return obs.final[key] if key in obs.final else sharding_of_key(module, key)


def _blocked_at(obs, module, step: _Step, key: Key, have: set[str]) -> list[Blocked]:
    """The axes the other tensors of `step` have on a factor and `key` lacks, with reasons
    (once per step, tensor and axes: the searches of other tensors ask again)."""
    memo = _final_axes(obs, module).blocked_at
    memo_key = (id(step), key, frozenset(have))
    found = memo.get(memo_key)
    if found is None:
        found = memo[memo_key] = tuple(_blocked_at_uncached(obs, module, step, key, have))
    return list(found)


def _blocked_at_uncached(obs, module, step: _Step, key: Key, have: set[str]) -> list[Blocked]:
    if key not in step.keys:
        return []
    shardings, proj = _final_axes(obs, module).projection(step)
    me = step.keys.index(key)
    out: list[Blocked] = []
    if proj is None:  # the op changed after propagation (export); skip it
        return out
    tensors = proj.operands + proj.results
    for j, other in enumerate(step.keys):
        if other is key:
            continue
        theirs, own = shardings[j], shardings[me]
        if theirs is not None and own is not None and theirs.mesh_or_ref != own.mesh_or_ref:
            for axis in set(axis_texts(theirs)) - have:
                out.append(
                    Blocked(axis, step.op, other, "", "different meshes", "different-meshes")
                )
            continue
        for f, fs in tensors[j].factor_index_to_sharding.items():
            mine = tensors[me].get(f)
            for ref in fs.axis_refs:
                axis = _axis_text(ref)
                if mine is not None and axis in {_axis_text(a) for a in mine.axis_refs}:
                    continue  # it crossed on this factor
                if axis in have and not tensors[me].has_factor(f):
                    continue  # here on another factor; nothing is missing
                if any(b.axis == axis for b in out):
                    continue
                kind, reason = _reason(obs, step, tensors, me, j, f, ref, shardings[me])
                out.append(Blocked(axis, step.op, other, factor_symbol(f), reason, kind))
    return out


def _rule_reason(step: _Step, tensors, me: int, f: int) -> tuple[str, str] | None:
    """A reason read off the rule alone: a blocked factor, or its absence from the tensor."""
    rule = step.rule
    sym = factor_symbol(f)
    if rule.is_blocked(f):
        return "blocked", (
            f"blocked factor: the rule of {step.op.name} blocks propagation of factor {sym}"
        )
    if tensors[me].has_factor(f):
        return None
    if rule.factor_type(f) == FactorType.REDUCTION:
        return "reduction", (
            f"reduction factor {sym}: summed over by {step.op.name}, this tensor has no such dim"
        )
    return "not-in-tensor", (
        f"factor {sym} is not in this tensor (no dimension of it maps to {sym})"
    )


def _reason(obs, step: _Step, tensors, me: int, j: int, f: int, ref, mine) -> tuple[str, str]:
    axis, sym = str(ref), factor_symbol(f)
    from_rule = _rule_reason(step, tensors, me, f)
    if from_rule is not None:
        return from_rule
    mine_fs = tensors[me].get(f)
    if mine is not None and axis in {str(a) for a in mine.replicated_axes}:
        return "replicated", f"conflict: {axis} is explicitly replicated on this tensor"
    here = obs.origins.get(step.keys[me], {})
    for g, gs in tensors[me].factor_index_to_sharding.items():
        if g != f and axis in {str(a) for a in gs.axis_refs}:
            text = (
                f"conflict: lost to factor {factor_symbol(g)}, which already uses {axis} here"
                f"{_since(here.get(axis))}"
            )
            return _why_lost(obs, step, f, (step.keys[j], axis), here.get(axis), text)
    if mine_fs is not None and mine_fs.is_closed:
        return "closed", (
            f"closed dimension: factor {sym} of this tensor is closed (its sharding is fixed)"
        )
    direction = _direction_reason(step, me, f)
    if direction is not None:
        return "priority", direction
    size, used = step.rule.factor_sizes[f], 1
    for a in mine_fs.axis_refs if mine_fs is not None else ():
        used *= a.size(step.mesh)
    if size % (used * ref.size(step.mesh)) != 0:
        have_text = f" after {used}" if used > 1 else ""
        return "non-divisible", (
            f"non-divisible: factor {sym} has size {size}, which {axis} (size "
            f"{ref.size(step.mesh)}){have_text} does not divide"
        )
    manual = _manual_around(step.keys[me])
    if axis.split(":")[0].strip('"') in manual:
        return "manual", (
            f"manual axis: {axis} is manual in the sdy.manual_computation around this tensor "
            "(shard_map); propagation never puts it on the body's tensors"
        )
    if obs.conservative:
        return "conservative", (
            "conservative mode: conservative propagation does not split or extend here"
        )
    return _lost_on_factor(obs, step, tensors, me, j, f, axis)


def _lost_on_factor(obs, step: _Step, tensors, me: int, j: int, f: int, axis: str):
    """The factor already has other axes, here or on a third tensor: a conflict."""
    sym, mine_fs = factor_symbol(f), tensors[me].get(f)
    if mine_fs is not None and mine_fs.axis_refs:
        first = str(mine_fs.axis_refs[0])
        won = obs.origins.get(step.keys[me], {}).get(first)
        here = ", ".join(str(a) for a in mine_fs.axis_refs)
        text = (
            f"conflict: factor {sym} here already has [{here}]{_since(won)}, which {axis} "
            "does not extend (the earlier priority or round won)"
        )
        return _why_lost(obs, step, f, (step.keys[j], axis), won, text, (step.keys[me], first))
    theirs = [str(a) for a in tensors[j].get(f).axis_refs]
    here = obs.origins.get(step.keys[me], {})
    for major in theirs[: theirs.index(axis)] if axis in theirs else []:
        for g, gs in tensors[me].factor_index_to_sharding.items():
            if g != f and major in {str(a) for a in gs.axis_refs}:
                text = (
                    f"conflict: {axis} follows {major} on factor {sym} there, and factor "
                    f"{factor_symbol(g)} already uses {major} here{_since(here.get(major))}; "
                    "only the axes before the first conflict cross"
                )
                return _why_lost(obs, step, f, (step.keys[j], major), here.get(major), text)
    for k, t in enumerate(tensors):
        fs = t.get(f)
        if k in (me, j) or fs is None or not fs.axis_refs:
            continue
        axes = [str(a) for a in fs.axis_refs]
        n = min(len(axes), len(theirs))
        if axes[:n] == theirs[:n]:
            continue  # one extends the other: no conflict between these two
        other = ", ".join(str(a) for a in fs.axis_refs)
        won = obs.origins.get(step.keys[k], {}).get(str(fs.axis_refs[0]))
        text = (
            f"conflict: another tensor shards factor {sym} with [{other}], incompatible with "
            f"[{', '.join(theirs)}]"
        )
        winner = (step.keys[k], str(fs.axis_refs[0]))
        return _why_lost(obs, step, f, (step.keys[j], axis), won, text, winner, "conflict-tensor")
    return "strategy", (
        f"not propagated: the strategy kept factor {sym} as it is (incompatible prefixes)"
    )


def _manual_around(key: Key) -> set[str]:
    """The manual axes of every sdy.manual_computation enclosing a tensor."""
    from shardwise.sdy.manual_computation import manual_axes_of

    if isinstance(key, str):
        return set()
    op = key.defining_op if key.defining_op is not None else key.owner.parent_op
    out: set[str] = set()
    while op is not None:
        if op.name == "sdy.manual_computation":
            out.update(manual_axes_of(op))
        op = op.parent_op
    return out


def _since(origin: Origin | None) -> str:
    if origin is None:
        return ""
    if origin.op is None:
        return " (annotated)"
    return f" since {origin.op.name} in {origin.round}"


def _direction_reason(step: _Step, me: int, f: int) -> str | None:
    side_forward = me >= step.num_operands
    d = step.directions[f] if f < len(step.directions) else PropagationDirection.BOTH
    wanted = PropagationDirection.FORWARD if side_forward else PropagationDirection.BACKWARD
    if d & wanted:
        return None
    return (
        f"priority not yet reached: the last step of {step.op.name} ({step.round}) "
        f"propagated factor {factor_symbol(f)} {d.name.lower()} only"
    )


def _root_priority(obs: ProvenanceObserver, key: Key, axis: str) -> int:
    """The user priority of the annotated dim an axis came from (0 when none was given)."""
    steps = chain(obs, key, axis)
    root = steps[-1] if steps else None
    if root is None or root.source is None:
        return 0
    return obs.priorities.get((root.source, root.axis), 0)


def _why_lost(
    obs, step: _Step, f: int, lost, won: Origin | None, text: str, winner=None, kind="conflict"
) -> tuple[str, str]:
    """A conflict, and why the other axis was there first: a lower user priority, or this
    factor waited for op-priority round 3 (need-replication / permutation)."""
    lost_p = _root_priority(obs, *lost)
    won_p = _root_priority(obs, *winner) if winner is not None else 0
    if lost_p > won_p:
        return "priority", (
            f"priority not yet reached: {lost[1]} comes from a dim with priority p{lost_p}, "
            f"which propagates after p{won_p}; {text}"
        )
    ftype = step.rule.factor_type(f)
    waited = ftype in (FactorType.NEED_REPLICATION, FactorType.PERMUTATION)
    early = won is not None and won.op is not None and won.op_round < _NON_PASS_THROUGH_ROUND
    if waited and early and obs.op_priority_rounds > _NON_PASS_THROUGH_ROUND:
        name = "need-replication" if ftype == FactorType.NEED_REPLICATION else "permutation"
        return name, (
            f"{name} factor {factor_symbol(f)}: {step.op.name} propagates it only from "
            f"op-priority round {_NON_PASS_THROUGH_ROUND} (not a pass-through factor); "
            f"by then, {text}"
        )
    return kind, text


def _blocked_no_rule(
    obs: ProvenanceObserver, module: Module, key: Key, have: set[str]
) -> list[Blocked]:
    """Ops next to `key` that never took a step: no rule, or tensors on different meshes."""
    if isinstance(key, str):
        return []
    out: list[Blocked] = []
    ops = [key.defining_op] if key.defining_op is not None else []
    stepped = set(obs.steps_of.get(key, []))
    memo = _final_axes(obs, module).unstepped
    for op in ops + key.users:
        if op.name.startswith(("func.", "sdy.", "stablehlo.return")) or op.regions:
            continue
        if id(op) in stepped:
            continue
        if id(op) not in memo:  # the same for each tensor of the op: once per op
            memo[id(op)] = _why_no_step(obs, op)
        found = memo[id(op)]
        if found is None:
            continue
        kind, reason, tensors = found
        for v, axes in tensors:
            for axis in axes - have:
                if all(b.axis != axis for b in out):
                    out.append(Blocked(axis, op, v, "", reason, kind))
    return out


def _why_no_step(obs: ProvenanceObserver, op) -> tuple[str, str, list] | None:
    """Why `op` took no step (no rule, different meshes: kind and reason) and the axes of
    each of its tensors; None if neither applies."""
    from shardwise.rules.registry import get_or_create_sharding_rule

    try:
        rule = get_or_create_sharding_rule(op, set_on_op=False)
    except Exception:  # noqa: BLE001 - the rule builder rejects the op: no rule either
        rule = None
    values = list(op.operands) + list(op.results)
    shardings = [obs.final.get(v, get_sharding(v)) for v in values]
    meshes = {str(s.mesh_or_ref) for s in shardings if s is not None}
    if rule is None:
        kind, reason = "no-rule", f"no rule: {op.name} has no sharding rule"
    elif len(meshes) > 1:
        kind = "different-meshes"
        reason = f"different meshes: {op.name} has tensors on {', '.join(sorted(meshes))}"
    else:
        return None
    tensors = [(v, set(axis_texts(s))) for v, s in zip(values, shardings, strict=True)]
    return kind, reason, tensors


class _FinalAxes:
    """What explanations read off the shardings after propagation, computed once per
    observer: each tensor's axes (as text), all axes, each step's projection.

    A report explains every value and each explanation searches the graph; reading these
    once per visit (printing axes, projecting ops) dominated the report's time.
    """

    def __init__(self, obs: ProvenanceObserver, module: Module) -> None:
        self.obs, self.module = obs, module
        self._of: dict[Key, tuple[str, ...]] = {}
        self._universe: frozenset[str] | None = None
        self._projections: dict[int, tuple[list, ShardingProjection | None]] = {}
        self._by_arguments: dict[tuple, ShardingProjection | None] = {}  # see `_project`
        self.blocked_at: dict[tuple, tuple[Blocked, ...]] = {}  # see `_blocked_at`
        self.neighbours: dict[Key, tuple[Key, ...]] = {}  # see `_neighbours`
        self.unstepped: dict[int, tuple | None] = {}  # id(op) -> `_why_no_step(op)`

    def of(self, key: Key) -> tuple[str, ...]:
        if key in self._of:
            return self._of[key]
        found = self._of[key] = tuple(axis_texts(_final(self.obs, self.module, key)))
        return found

    def projection(self, step: _Step) -> tuple[list, ShardingProjection | None]:
        """The final shardings of a step's tensors and their projection (None: no longer
        projectable, the op changed after propagation)."""
        found = self._projections.get(id(step))
        if found is None:
            shardings = [_final(self.obs, self.module, k) for k in step.keys]
            found = self._projections[id(step)] = (shardings, self._project(step, shardings))
        return found

    def _project(self, step: _Step, shardings: list) -> ShardingProjection | None:
        """The projection of `shardings` by the step's rule; one per distinct arguments (the
        ops of repeated layers share it; it is only read)."""
        key = (tuple(shardings), step.num_operands, step.rule, step.mesh)
        if key in self._by_arguments:
            return self._by_arguments[key]
        try:
            proj = ShardingProjection.build(
                shardings[: step.num_operands], shardings[step.num_operands :], step.rule, step.mesh
            )
        except Exception:  # noqa: BLE001 - e.g. export rewrote the op
            proj = None
        self._by_arguments[key] = proj
        return proj

    def universe(self) -> frozenset[str]:
        """Every axis a tensor the search can reach has: once all are known, it may stop."""
        if self._universe is None:
            keys = set(self.obs.steps_of) | set(self.obs.final)
            self._universe = frozenset(a for k in keys for a in self.of(k))
        return self._universe


@functools.lru_cache(maxsize=4096)
def _axis_text(ref: AxisRef) -> str:
    return str(ref)


_FINAL_AXES: weakref.WeakKeyDictionary[ProvenanceObserver, _FinalAxes] = weakref.WeakKeyDictionary()


def _final_axes(obs: ProvenanceObserver, module: Module) -> _FinalAxes:
    found = _FINAL_AXES.get(obs)
    if found is None or found.module is not module:
        found = _FINAL_AXES[obs] = _FinalAxes(obs, module)
    return found


def _neighbours(obs: ProvenanceObserver, axes: _FinalAxes, key: Key) -> tuple[Key, ...]:
    """The other tensors of the steps `key` took part in (once computed, kept in `axes`)."""
    found = axes.neighbours.get(key)
    if found is None:
        found = axes.neighbours[key] = tuple(
            k for sid in obs.steps_of.get(key, []) for k in obs.steps[sid].keys if k is not key
        )
    return found


def _blocked_further(obs, module: Module, key: Key, known: set[str]) -> list[Blocked]:
    """Axes only tensors two or more ops away have: breadth first over the ops that took a
    step, then back along the path to the op where the axis disappears."""
    axes = _final_axes(obs, module)
    universe = axes.universe()
    out: list[Blocked] = []
    if universe <= known:  # all known: nothing more can be missing
        return out
    parent: dict[Key, Key | None] = {key: None}
    queue = deque([key])
    # The loop visits ~20 tensors per explained value: its lookups are bound once.
    popleft, append, neighbours = queue.popleft, queue.append, axes.neighbours
    while queue:
        k = popleft()
        for axis in axes.of(k) if k is not key else ():
            if axis in known:
                continue
            found = _stop_on_path(obs, module, _path(parent, k), axis)
            if found is None:
                continue
            out.append(found)
            known.add(axis)
            if universe <= known:
                return out
        near = neighbours.get(k)
        for n in near if near is not None else _neighbours(obs, axes, k):
            if n not in parent:
                parent[n] = k
                append(n)
    return out


def _path(parent: dict[Key, Key | None], k: Key) -> list[Key]:
    """From `k` back to the start of the search (the explained tensor)."""
    out = [k]
    while (prev := parent[out[-1]]) is not None:
        out.append(prev)
    return out


def _stop_on_path(obs, module: Module, path: list[Key], axis: str) -> Blocked | None:
    """The first op along `path` (far tensor first) after which `axis` is gone, and why."""
    for i in range(len(path) - 1):
        src, dst = path[i], path[i + 1]
        have = set(_final_axes(obs, module).of(dst))
        if axis in have:
            continue
        for sid in obs.steps_of.get(dst, []):
            step = obs.steps[sid]
            if not any(k is src for k in step.keys):
                continue
            for b in _blocked_at(obs, module, step, dst, have):
                if b.axis == axis:
                    return Blocked(
                        axis, b.op, src, b.factor, b.reason, b.kind, tuple(path[i + 1 :])
                    )
        return None
    return None


def explain_value(
    obs: ProvenanceObserver, module: Module, key: Key, name: str, chains: bool = True
) -> Explanation:
    exported = sharding_of_key(module, key)
    sharding = obs.final.get(key, exported)  # reasons hold for what propagation left
    exp = Explanation(key, name, exported)
    if sharding != exported:
        exp.propagated = sharding
    for axis in axis_texts(sharding) if chains else ():
        exp.chains[axis] = chain(obs, key, axis)
    exp.blocked = blocked_axes(obs, module, key, sharding)
    return exp
