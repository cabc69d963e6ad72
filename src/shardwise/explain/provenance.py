"""Why a tensor is (not) sharded: provenance of every axis, recorded while propagation runs.

`ProvenanceObserver` is a propagation observer (see `PropagationDriver`): it only reads. For
every value and every axis on it, it records the step that put the axis there (op, factor,
the tensor it came from, strategy and priority rounds); axes present before propagation are
user annotations or constraints. `explain_value` then follows those steps back to the
annotation, and for every axis a connected value (operand/result of the same op) has but this
one lacks, derives why from the op's rule (factor types), the projection and the directions:

| reason              | when                                                          |
| reduction factor    | the axis shards a reduction factor, absent from this tensor    |
| need-replication    | the factor must stay replicated                                |
| permutation factor  | the factor is a permutation factor (not propagated)            |
| blocked factor      | the rule blocks propagation of the factor                      |
| not in this tensor  | the factor has no dimension in this tensor                     |
| closed dimension    | this tensor's dimension is closed                              |
| conflict            | another factor of this tensor already uses the axis, or it is replicated |
| non-divisible       | the factor size is not divisible by the axis size              |
| conservative mode   | splitting into sub-axes is off (conservative propagation)      |
| priority            | the direction of the last step excluded this side              |
| no rule             | the op has no sharding rule                                    |
| different meshes    | the two tensors use different meshes                          |
"""

from __future__ import annotations

from dataclasses import dataclass, field

from shardwise.ir import Module, Op, Value
from shardwise.propagation.factor_propagation import PropagationDirection
from shardwise.propagation.projection import ShardingProjection
from shardwise.propagation.sharding_access import get_func_result_sharding, get_sharding
from shardwise.rules.rule import FactorType, OpShardingRule, factor_symbol
from shardwise.sharding import TensorSharding

__all__ = ["Origin", "Blocked", "ProvenanceObserver", "Explanation", "explain_value", "Key"]

Key = Value | str  # a value, or "func:resultN" for a func result attribute


@dataclass(frozen=True, slots=True)
class Origin:
    """How one axis got onto one tensor."""

    axis: str
    op: Op | None  # None: present before propagation (annotation or constraint)
    factor: str = ""
    source: Key | None = None
    round: str = ""


@dataclass(frozen=True, slots=True)
class Blocked:
    """An axis a connected tensor has and this one lacks, and why."""

    axis: str
    op: Op | None
    other: Key
    factor: str
    reason: str


@dataclass
class _Step:
    """The last step of one op: its tensors, rule, directions and mesh."""

    op: Op
    keys: list[Key]
    num_operands: int
    rule: OpShardingRule
    directions: tuple[PropagationDirection, ...]
    mesh: object
    round: str


@dataclass
class Explanation:
    key: Key
    name: str
    sharding: TensorSharding | None
    chains: dict[str, list[Origin]] = field(default_factory=dict)
    blocked: list[Blocked] = field(default_factory=list)
    propagated: TensorSharding | None = None  # before the export steps, if it differs


def _axis_strs(sharding: TensorSharding | None) -> list[str]:
    return [] if sharding is None else [str(a) for a in sharding.dim_axes()]


class ProvenanceObserver:
    """Records, per tensor and axis, the step that added the axis (never changes anything)."""

    def __init__(
        self, conservative: bool = False, op_priority_rounds: int = 4, strategies: int = 1
    ) -> None:
        self.conservative = conservative
        self.op_priority_rounds = op_priority_rounds
        self.strategies = strategies
        self.origins: dict[Key, dict[str, Origin]] = {}
        self.steps: dict[object, _Step] = {}  # id(op) -> its last step
        self.steps_of: dict[Key, list[object]] = {}
        self.aliases: dict[Value, Value] = {}
        self._drivers: dict[int, int] = {}
        self._current: _Step | None = None
        self._before_proj: list[dict[int, list[str]]] = []  # factor axes before the step
        self._started = False
        self.final: dict[Key, TensorSharding | None] = {}  # shardings right after propagation

    # -- driver hooks ---------------------------------------------------------------------------

    def step_info(self, driver, op, operand_values, result_values, rule, directions, mesh_name):
        if not self._started:
            self.record_annotations(driver.module)
            self._started = True
        run = self._drivers.setdefault(id(driver), len(self._drivers))
        strategy = type(driver.strategy).__name__.replace("FactorPropagation", "").lower()
        # The pipeline's nesting: user-priority rounds > op-priority rounds > strategies.
        user_round, rest = divmod(run, self.op_priority_rounds * self.strategies)
        op_round = rest // self.strategies
        label = (
            f"{strategy} strategy, user-priority round {user_round}, op-priority round {op_round}"
        )
        keys = [self.key(v) for v in operand_values]
        keys += self._result_keys(op, list(result_values))
        step = _Step(
            op, keys, len(operand_values), rule, directions, driver.meshes[mesh_name], label
        )
        self._current = step
        # A func takes one step per result: each is its own step.
        sid = (id(op), keys[-1]) if op.name == "func.func" else id(op)
        self.steps[sid] = step
        for k in keys:
            ids = self.steps_of.setdefault(k, [])
            if sid not in ids:
                ids.append(sid)

    def before_step(self, op: Op, projection: ShardingProjection) -> None:
        if self._current is None:
            return
        self._before_proj = [
            {f: [str(a) for a in fs.axis_refs] for f, fs in t.factor_index_to_sharding.items()}
            for t in projection.operands + projection.results
        ]

    def after_step(self, op: Op, projection: ShardingProjection) -> None:
        step = self._current
        if step is None:
            return
        tensors = projection.operands + projection.results
        for i, key in enumerate(step.keys):
            known = self.origins.setdefault(key, {})
            for f, fs in tensors[i].factor_index_to_sharding.items():
                for axis in (str(a) for a in fs.axis_refs):
                    if axis in known or axis in self._before_proj[i].get(f, []):
                        continue
                    source = self._source(step, i, f, axis)
                    known[axis] = Origin(axis, op, factor_symbol(f), source, step.round)

    # -- helpers ------------------------------------------------------------------------------

    def _source(self, step: _Step, i: int, f: int, axis: str) -> Key | None:
        """The tensor whose factor `f` had `axis` (or the full axis it is a part of) before."""
        base = axis.split(":")[0]
        for exact in (True, False):
            for j, before in enumerate(self._before_proj):
                axes = before.get(f, [])
                if j != i and (
                    axis in axes if exact else any(a.split(":")[0] == base for a in axes)
                ):
                    return step.keys[j]
        return None

    def key(self, value: Value) -> Value:
        return self.aliases.get(value, value)

    def _result_keys(self, op: Op, values: list[Value]) -> list[Key]:
        if op.name == "func.func":
            terminator = op.regions[0].entry.terminator
            name = _func_name(op)
            return [f"{name}:result{list(terminator.operands).index(v)}" for v in values]
        if op.name == "sdy.data_flow_edge":
            for v in values:
                self.aliases[v] = op.operands[0]
            return [op.operands[0] for _ in values]
        return list(values)

    def record_annotations(self, module: Module) -> None:
        """Every axis already on a tensor is a user annotation or constraint."""
        for op in module.walk():
            for v in op.results:
                for axis in _axis_strs(get_sharding(v)):
                    self.origins.setdefault(v, {}).setdefault(axis, Origin(axis, None))
            if op.name == "func.func" and op.regions and op.regions[0].blocks:
                for v in op.regions[0].entry.args:
                    for axis in _axis_strs(get_sharding(v)):
                        self.origins.setdefault(v, {}).setdefault(axis, Origin(axis, None))
                for i in range(len(op.regions[0].entry.terminator.operands)):
                    key = f"{_func_name(op)}:result{i}"
                    for axis in _axis_strs(get_func_result_sharding(op, i)):
                        self.origins.setdefault(key, {}).setdefault(axis, Origin(axis, None))


def _func_name(func: Op) -> str:
    return str(func.get_attr("sym_name")).strip('"').lstrip("@")


# -- explanations -------------------------------------------------------------------------------


def sharding_of_key(module: Module, key: Key) -> TensorSharding | None:
    if isinstance(key, str):
        name, _, rest = key.partition(":result")
        for func in module.funcs:
            if _func_name(func) == name:
                return get_func_result_sharding(func, int(rest))
        return None
    return get_sharding(key)


def chain(obs: ProvenanceObserver, key: Key, axis: str, limit: int = 50) -> list[Origin]:
    """The steps that carried `axis` to `key`, newest first, back to the annotation."""
    out: list[Origin] = []
    seen: set[int] = set()
    while key is not None and len(out) < limit and id(key) not in seen:
        seen.add(id(key))
        known = obs.origins.get(key, {})
        origin = known.get(axis)
        if origin is None:  # a sub-axis of an axis the source has whole (or the reverse)
            base = axis.split(":")[0]
            origin = next((o for a, o in known.items() if a.split(":")[0] == base), None)
            axis = origin.axis if origin is not None else axis
        if origin is None:
            out.append(Origin(axis, None, source=key, round="set outside a step (sharding group)"))
            break
        out.append(origin if origin.op is not None else Origin(axis, None, source=key))
        key = origin.source
    return out


def explain_value(obs: ProvenanceObserver, module: Module, key: Key, name: str) -> Explanation:
    exported = sharding_of_key(module, key)
    sharding = obs.final.get(key, exported)  # reasons hold for what propagation left
    exp = Explanation(key, name, exported)
    if sharding != exported:
        exp.propagated = sharding
    for axis in _axis_strs(sharding):
        exp.chains[axis] = chain(obs, key, axis)
    have = set(_axis_strs(sharding))  # explicitly replicated axes are reported as stopped
    for op_id in obs.steps_of.get(key, []):
        step = obs.steps[op_id]
        exp.blocked.extend(_blocked_at(obs, module, step, key, have))
    exp.blocked.extend(_blocked_no_rule(obs, module, key, have))
    return exp


def _blocked_at(obs, module, step: _Step, key: Key, have: set[str]) -> list[Blocked]:
    shardings = [obs.final[k] if k in obs.final else sharding_of_key(module, k) for k in step.keys]
    if key not in step.keys:
        return []
    me = step.keys.index(key)
    out: list[Blocked] = []
    try:
        proj = ShardingProjection.build(
            shardings[: step.num_operands], shardings[step.num_operands :], step.rule, step.mesh
        )
    except Exception:  # noqa: BLE001 - the op changed after propagation (export); skip it
        return out
    tensors = proj.operands + proj.results
    for j, other in enumerate(step.keys):
        if other is key or (
            shardings[j] is not None
            and shardings[me] is not None
            and shardings[j].mesh_or_ref != shardings[me].mesh_or_ref
        ):
            if other is not key:
                for axis in set(_axis_strs(shardings[j])) - have:
                    out.append(Blocked(axis, step.op, other, "", "different meshes"))
            continue
        for f, fs in tensors[j].factor_index_to_sharding.items():
            for ref in fs.axis_refs:
                axis = str(ref)
                if axis in have or any(b.axis == axis for b in out):
                    continue
                reason = _reason(obs, step, tensors, me, j, f, ref, shardings[me])
                out.append(Blocked(axis, step.op, other, factor_symbol(f), reason))
    return out


def _rule_reason(step: _Step, tensors, me: int, f: int) -> str | None:
    """A reason read off the rule alone: the factor's type, or its absence from the tensor."""
    rule = step.rule
    kind = rule.factor_type(f)
    sym = factor_symbol(f)
    if rule.is_blocked(f):
        return f"blocked factor: the rule of {step.op.name} blocks propagation of factor {sym}"
    if kind == FactorType.REDUCTION and not tensors[me].has_factor(f):
        return f"reduction factor {sym}: summed over by {step.op.name}, this tensor has no such dim"
    if kind == FactorType.NEED_REPLICATION:
        return f"need-replication factor {sym}: {step.op.name} needs it replicated"
    if kind == FactorType.PERMUTATION:
        return f"permutation factor {sym}: {step.op.name} does not propagate it"
    if not tensors[me].has_factor(f):
        return f"factor {sym} is not in this tensor (no dimension of it maps to {sym})"
    return None


def _reason(obs, step: _Step, tensors, me: int, j: int, f: int, ref, mine) -> str:
    rule = step.rule
    axis = str(ref)
    sym = factor_symbol(f)
    from_rule = _rule_reason(step, tensors, me, f)
    if from_rule is not None:
        return from_rule
    mine_fs = tensors[me].get(f)
    if mine is not None and axis in {str(a) for a in mine.replicated_axes}:
        return f"conflict: {axis} is explicitly replicated on this tensor"
    for g, gs in tensors[me].factor_index_to_sharding.items():
        if g != f and axis in {str(a) for a in gs.axis_refs}:
            return f"conflict: lost to factor {factor_symbol(g)}, which already uses {axis} here"
    if mine_fs is not None and mine_fs.is_closed:
        return f"closed dimension: factor {sym} of this tensor is closed (its sharding is fixed)"
    side_forward = me >= step.num_operands
    d = step.directions[f] if f < len(step.directions) else PropagationDirection.BOTH
    wanted = PropagationDirection.FORWARD if side_forward else PropagationDirection.BACKWARD
    if not (d & wanted):
        return (
            f"priority not yet reached: the last step of {step.op.name} ({step.round}) "
            f"propagated factor {sym} {d.name.lower()} only"
        )
    size = rule.factor_sizes[f]
    used = 1
    for a in mine_fs.axis_refs if mine_fs is not None else ():
        used *= a.size(step.mesh)
    if size % (used * ref.size(step.mesh)) != 0:
        have_text = f" after {used}" if used > 1 else ""
        return (
            f"non-divisible: factor {sym} has size {size}, which {axis} (size "
            f"{ref.size(step.mesh)}){have_text} does not divide"
        )
    if obs.conservative:
        return "conservative mode: conservative propagation does not split or extend here"
    if mine_fs is not None and mine_fs.axis_refs:
        first = str(mine_fs.axis_refs[0])
        won = obs.origins.get(step.keys[me], {}).get(first)
        when = ""
        if won is not None:
            when = f" since {won.op.name} in {won.round}" if won.op is not None else " (annotated)"
        here = ", ".join(str(a) for a in mine_fs.axis_refs)
        return (
            f"conflict: factor {sym} here already has [{here}]{when}, which {axis} does not "
            "extend (the earlier priority or round won)"
        )
    for k, t in enumerate(tensors):
        fs = t.get(f)
        if (
            k not in (me, j)
            and fs is not None
            and fs.axis_refs
            and axis not in {str(a) for a in fs.axis_refs}
        ):
            other = ", ".join(str(a) for a in fs.axis_refs)
            return (
                f"conflict: another tensor shards factor {sym} with [{other}], incompatible "
                f"with {axis}"
            )
    return f"not propagated: the strategy kept factor {sym} as it is (incompatible prefixes)"


def _blocked_no_rule(
    obs: ProvenanceObserver, module: Module, key: Key, have: set[str]
) -> list[Blocked]:
    """Ops next to `key` that never took a step: no rule, or tensors on different meshes."""
    from shardwise.rules.registry import get_or_create_sharding_rule

    if isinstance(key, str):
        return []
    out: list[Blocked] = []
    ops = [key.defining_op] if key.defining_op is not None else []
    stepped = set(obs.steps_of.get(key, []))
    for op in ops + key.users:
        if op.name.startswith(("func.", "sdy.", "stablehlo.return")) or op.regions:
            continue
        if id(op) in stepped:
            continue
        try:
            rule = get_or_create_sharding_rule(op, set_on_op=False)
        except Exception:  # noqa: BLE001 - the rule builder rejects the op: no rule either
            rule = None
        values = list(op.operands) + list(op.results)
        shardings = [obs.final.get(v, get_sharding(v)) for v in values]
        meshes = {str(s.mesh_or_ref) for s in shardings if s is not None}
        if rule is None:
            reason = f"no rule: {op.name} has no sharding rule"
        elif len(meshes) > 1:
            reason = f"different meshes: {op.name} has tensors on {', '.join(sorted(meshes))}"
        else:
            continue
        for v, sharding in zip(values, shardings, strict=True):
            for axis in set(_axis_strs(sharding)) - have:
                out.append(Blocked(axis, op, v, "", reason))
    return out
