"""Why a tensor is (not) sharded: provenance of every axis, recorded while propagation runs.

`ProvenanceObserver` is a propagation observer (see `PropagationDriver`): it only reads. For
every value and every axis on it, it records the step that put the axis there (op, factor,
the tensor it came from, strategy and priority rounds); axes present before propagation are
user annotations or constraints. `reasons.explain_value` then follows those steps back to the
annotation, and `reasons.blocked_axes` says, for every axis a connected value has and this
one lacks, which op stopped it and why (`Blocked.kind`):

| kind             | when                                                                   |
| reduction        | the axis shards a reduction factor, absent from this tensor            |
| need-replication | the factor waits for op-priority round 3 and another axis came first   |
| permutation      | the same, for a permutation factor                                     |
| blocked          | the rule blocks propagation of the factor                              |
| not-in-tensor    | the factor has no dimension in this tensor                             |
| replicated       | the axis is in this tensor's replicated={...}                          |
| conflict         | another factor of this tensor already uses the axis (or one before it) |
| conflict-tensor  | a third tensor shards the factor with incompatible axes                |
| closed           | this tensor's dimension is closed                                      |
| priority         | a lower user priority won, or the last step's direction excluded it    |
| non-divisible    | the factor size is not divisible by the axis size                      |
| conservative     | splitting into sub-axes is off (conservative propagation)              |
| manual           | the axis is manual in an enclosing sdy.manual_computation              |
| no-rule          | the op has no sharding rule                                            |
| different-meshes | the two tensors use different meshes                                   |
"""

from __future__ import annotations

from dataclasses import dataclass, field

from shardwise.ir import Module, Op, Value
from shardwise.mesh import Mesh
from shardwise.propagation.factor_propagation import PropagationDirection
from shardwise.propagation.projection import ShardingProjection
from shardwise.rules.rule import OpShardingRule, factor_symbol
from shardwise.sdy.shardings import get_func_result_sharding, get_sharding
from shardwise.sharding import TensorSharding

__all__ = [
    "Origin",
    "Blocked",
    "ProvenanceObserver",
    "Explanation",
    "func_result_of_key",
    "Key",
]

Key = Value | str  # a value, or "func:resultN" for a func result attribute


@dataclass(frozen=True, slots=True)
class Origin:
    """How one axis got onto one tensor."""

    axis: str
    op: Op | None  # None: present before propagation (annotation or constraint)
    factor: str = ""
    source: Key | None = None
    round: str = ""
    user_round: int = -1  # -1: before propagation
    op_round: int = -1


@dataclass(frozen=True, slots=True)
class Blocked:
    """An axis a connected tensor has and this one lacks, and why.

    `kind` names the reason (the table above: "reduction", "need-replication", ...); `path`
    is empty when `other` is an operand/result of the same op, else the tensors from `other`
    to this one, the axis stopping at `op` between two of them.
    """

    axis: str
    op: Op | None
    other: Key
    factor: str
    reason: str
    kind: str = ""
    path: tuple[Key, ...] = ()


@dataclass
class _Step:
    """The last step of one op: its tensors, rule, directions and mesh."""

    op: Op
    keys: list[Key]
    num_operands: int
    rule: OpShardingRule
    directions: tuple[PropagationDirection, ...]
    mesh: Mesh
    round: str
    user_round: int = 0
    op_round: int = 0


@dataclass
class Explanation:
    key: Key
    name: str
    sharding: TensorSharding | None
    chains: dict[str, list[Origin]] = field(default_factory=dict)
    blocked: list[Blocked] = field(default_factory=list)
    propagated: TensorSharding | None = None  # before the export steps, if it differs


def axis_texts(sharding: TensorSharding | None) -> list[str]:
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
        # The driver of the current run and its place (op-priority round, strategy); a new
        # driver at or before the last place starts the next user-priority round. (The driver is
        # kept, not its id: a finished driver's id may be reused by the next one.)
        self._driver: object = None
        self._place = (-1, -1)
        self._user_round = 0
        self._current: _Step | None = None
        self._before_proj: list[dict[int, list[str]]] = []  # factor axes before the step
        self._started = False
        self.final: dict[Key, TensorSharding | None] = {}  # shardings right after propagation
        self.priorities: dict[tuple[Key, str], int] = {}  # (tensor, axis) -> its dim's priority
        self._labels: dict[tuple[str, int, int], str] = {}  # a step's round, as text
        self._tables: dict[int, tuple[ShardingProjection, list]] = {}  # see `_axis_table`

    # -- driver hooks ---------------------------------------------------------------------------

    def step_info(self, driver, op, operand_values, result_values, rule, directions, mesh_name):
        if not self._started:
            self.record_annotations(driver.module)
            self._started = True
        strategy = type(driver.strategy).__name__.replace("FactorPropagation", "").lower()
        if driver is not self._driver:
            place = (
                driver.direction_fn.round,
                int(self.strategies == 2 and strategy == "aggressive"),
            )
            if self._driver is not None and place <= self._place:
                self._user_round += 1
            self._driver, self._place = driver, place
        user_round, op_round = self._user_round, self._place[0]
        label = self._labels.get((strategy, user_round, op_round))
        if label is None:
            label = self._labels[strategy, user_round, op_round] = (
                f"{strategy} strategy, user-priority round {user_round}, "
                f"op-priority round {op_round}"
            )
        keys = [self.key(v) for v in operand_values]
        keys += self._result_keys(op, list(result_values))
        step = _Step(
            op,
            keys,
            len(operand_values),
            rule,
            directions,
            driver.meshes[mesh_name],
            label,
            user_round,
            op_round,
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
        self._before_proj = self._axis_table(projection)

    def _axis_table(self, projection: ShardingProjection) -> list[dict[int, list[str]]]:
        """Each tensor's factor axes as text; once per projection (the driver memoizes the
        steps it shows us, so the same projections come back; each is kept, its id unique)."""
        found = self._tables.get(id(projection))
        if found is None:
            table = [
                {f: [str(a) for a in fs.axis_refs] for f, fs in t.factor_index_to_sharding.items()}
                for t in projection.operands + projection.results
            ]
            found = self._tables[id(projection)] = (projection, table)
        return found[1]

    def after_step(self, op: Op, projection: ShardingProjection) -> None:
        step = self._current
        if step is None:
            return
        tensors = self._axis_table(projection)
        for i, key in enumerate(step.keys):
            known = self.origins.setdefault(key, {})
            for f, axes in tensors[i].items():
                for axis in axes:
                    if axis in known or axis in self._before_proj[i].get(f, []):
                        continue
                    source = self._source(step, i, f, axis)
                    known[axis] = Origin(
                        axis,
                        op,
                        factor_symbol(f),
                        source,
                        step.round,
                        step.user_round,
                        step.op_round,
                    )

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
            assert terminator is not None, "a func with results has a return"
            name = func_name(op)
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
                self._annotated(v, get_sharding(v))
            if op.name == "func.func" and op.regions and op.regions[0].blocks:
                for v in op.regions[0].entry.args:
                    self._annotated(v, get_sharding(v))
                terminator = op.regions[0].entry.terminator
                assert terminator is not None, "a func body ends in its return"
                for i in range(len(terminator.operands)):
                    key = f"{func_name(op)}:result{i}"
                    self._annotated(key, get_func_result_sharding(op, i))

    def _annotated(self, key: Key, sharding: TensorSharding | None) -> None:
        for dim in sharding.dim_shardings if sharding is not None else ():
            for axis in (str(a) for a in dim.axes):
                self.origins.setdefault(key, {}).setdefault(axis, Origin(axis, None))
                if dim.priority is not None:
                    self.priorities.setdefault((key, axis), dim.priority)


def func_name(func: Op) -> str:
    """A func's symbol name, without quotes or ``@``."""
    return str(func.get_attr("sym_name")).strip('"').lstrip("@")


# -- explanations -------------------------------------------------------------------------------


def func_result_of_key(module: Module, key: str) -> tuple[Op, int] | None:
    """The func and result index that a func-result key (``main:result0``) names."""
    name, _, index = key.partition(":result")
    func = module.lookup_symbol(name)
    return (func, int(index)) if func is not None and func.name == "func.func" else None


def sharding_of_key(module: Module, key: Key) -> TensorSharding | None:
    if isinstance(key, str):
        found = func_result_of_key(module, key)
        return get_func_result_sharding(*found) if found is not None else None
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
        if origin.source is None:
            break
        key = origin.source
    return out
