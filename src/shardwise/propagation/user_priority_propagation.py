"""`sdy-user-priority-propagate`: dims with priority p>0 are held back (closed, their axes
replicated) until round p, each round a whole op-priority level (Shardy's
`prop/user_priority_propagation.cc`).
"""

from __future__ import annotations

from collections.abc import Iterator

from shardwise.axis import AxisRef
from shardwise.ir import SHARDING_ATTR, Module, Op, Value, func_result_types
from shardwise.mesh import Mesh
from shardwise.passes import sdy_pass
from shardwise.propagation.basic_propagation import (
    DirectionFn,
    PropagationContext,
    propagation_pass,
)
from shardwise.propagation.op_priority_propagation import op_priority_level
from shardwise.propagation.options import PropagationOptions
from shardwise.sdy import data_flow
from shardwise.sdy.shardings import (
    SPECIAL_OWNERS,
    data_flow_edge_for_target,
    get_func_result_sharding,
    get_op_shardings,
    get_sharding,
    set_func_result_sharding,
    set_sharding,
    stores_no_result_sharding,
)
from shardwise.sharding import DimensionSharding, TensorSharding, TensorShardingPerValue

__all__ = [
    "user_priority_propagate",
    "walk_sharding_refs",
]


def _user_priority_level(ctx: PropagationContext, direction_fn: DirectionFn) -> None:
    per_priority = _initialize_user_priorities(ctx.module, ctx.ops)
    op_priority_level(ctx, direction_fn)
    for priority, references in per_priority:
        for ref, original in references:
            current = ref.get()
            if current is not None:
                ref.set(_updated_sharding_for_priority(current, original, priority))
        op_priority_level(ctx, direction_fn)


user_priority_propagate = sdy_pass("sdy-user-priority-propagate", options=PropagationOptions)(
    propagation_pass(_user_priority_level)
)


class _ShardingRef:
    """A place holding a sharding (`ValueOrFuncResult`): `get()` and `set(sharding)`.

    One small object per stored sharding (the walk makes one for every value of the module),
    hence slots and methods rather than a pair of closures."""

    __slots__ = ()

    def get(self) -> TensorSharding | None:
        raise NotImplementedError

    def set(self, sharding: TensorSharding) -> None:
        raise NotImplementedError


class _ValueRef(_ShardingRef):
    __slots__ = ("value",)

    def __init__(self, value: Value) -> None:
        self.value = value

    def get(self) -> TensorSharding | None:
        return get_sharding(self.value)

    def set(self, sharding: TensorSharding) -> None:
        set_sharding(self.value, sharding)


class _FuncResultRef(_ShardingRef):
    __slots__ = ("func", "index")

    def __init__(self, func: Op, index: int) -> None:
        self.func, self.index = func, index

    def get(self) -> TensorSharding | None:
        return get_func_result_sharding(self.func, self.index)

    def set(self, sharding: TensorSharding) -> None:
        set_func_result_sharding(self.func, self.index, sharding)


class _PerValueRef(_ShardingRef):
    """Entry `index` of the per-value list stored under `key` (a property or an attribute)."""

    __slots__ = ("op", "key", "index")

    def __init__(self, op: Op, key: str, index: int) -> None:
        self.op, self.key, self.index = op, key, index

    # Made only for a `key` holding a `TensorShardingPerValue` (`_per_value_refs`).
    def get(self) -> TensorSharding | None:
        per_value = self.op.get_attr(self.key)
        assert isinstance(per_value, TensorShardingPerValue)
        return per_value.shardings[self.index]

    def set(self, sharding: TensorSharding) -> None:
        op, key = self.op, self.key
        per_value = op.get_attr(key)
        assert isinstance(per_value, TensorShardingPerValue)
        shardings = list(per_value.shardings)
        shardings[self.index] = sharding
        new = TensorShardingPerValue(tuple(shardings))
        if key in op.properties:
            op.properties[key] = new
        else:
            op.attributes[key] = new


def _per_value_refs(op: Op, key: str, values: list[Value]) -> Iterator[tuple[_ShardingRef, Value]]:
    if not isinstance(op.get_attr(key), TensorShardingPerValue):
        return
    for i, value in enumerate(values):
        yield _PerValueRef(op, key, i), value


def walk_sharding_refs(
    module: Module, ops: list[Op] | None = None
) -> Iterator[tuple[_ShardingRef, Value | None]]:
    """Every stored sharding in Shardy's `walkShardings` order, with its value (if any); the
    result of an ordinary op that stores none is left out (its `get()` would be None).

    `ops`: the module's ops in pre-order if the caller has them (`module.op.walk_list()`)."""
    for op in module.op.walk_list() if ops is None else ops:
        if op.name not in SPECIAL_OWNERS and SHARDING_ATTR not in op.attributes:
            # Funcs, data-flow ops, collectives and the ops with a sharding property are told
            # by name; any other op keeps its shardings in its ``sdy.sharding``, which most
            # ops lack before propagation.
            continue
        if op.name == "func.func":
            for arg in op.regions[0].entry.args if op.regions and op.regions[0].blocks else []:
                yield _ValueRef(arg), arg
            n_results = _num_func_results(op)
            for i in range(n_results):
                yield _FuncResultRef(op, i), None
        elif op.name == "sdy.manual_computation":
            yield from _per_value_refs(op, "in_shardings", list(op.regions[0].entry.args))
            yield from _per_value_refs(op, "out_shardings", list(op.results))
        elif data_flow.is_data_flow_op(op):
            for owner in data_flow.edge_owners(op):
                yield _ValueRef(owner), owner
        elif len(op.results) == 1:
            if stores_no_result_sharding(op):
                continue  # most ops before propagation: nothing stored to walk
            yield _ValueRef(op.results[0]), op.results[0]
        elif get_op_shardings(op) is not None:
            yield from _per_value_refs(op, "sdy.sharding", list(op.results))


def _num_func_results(func: Op) -> int:
    return len(func_result_types(func))


def _initialize_user_priorities(
    module: Module, ops: list[Op] | None
) -> list[tuple[int, list[tuple[_ShardingRef, TensorSharding]]]]:
    meshes = module.meshes()
    per_priority: dict[int, list[tuple[_ShardingRef, TensorSharding]]] = {}
    for ref, value in walk_sharding_refs(module, ops):
        sharding = ref.get()
        if sharding is None:
            continue
        if len(sharding.replicated_axes) <= 1 and all(
            d.priority is None for d in sharding.dim_shardings
        ):
            continue  # no priority to record, and initializing would leave it as it is
        if value is not None and data_flow_edge_for_target(value) is not None:
            continue
        priorities = sorted({d.priority_or_default for d in sharding.dim_shardings} - {0})
        for p in priorities:
            per_priority.setdefault(p, []).append((ref, sharding))
        initialized = _initialized_sharding(sharding, meshes)
        if initialized != sharding:
            ref.set(initialized)
    return sorted(per_priority.items())


def _initialized_sharding(sharding: TensorSharding, meshes: dict) -> TensorSharding:
    dims: list[DimensionSharding] = []
    replicated = list(sharding.replicated_axes)
    for d in sharding.dim_shardings:
        if d.priority_or_default == 0:
            dims.append(d.drop_priority())
        else:
            replicated.extend(d.axes)
            dims.append(DimensionSharding((), True))
    mesh = sharding.mesh_or_ref if isinstance(sharding.mesh_or_ref, Mesh) else None
    mesh = mesh or meshes.get(sharding.mesh_or_ref)
    if isinstance(mesh, Mesh):
        replicated.sort(key=mesh.axis_key)
    return TensorSharding(
        sharding.mesh_or_ref,
        tuple(dims),
        tuple(replicated),
        sharding.unreduced_axes,
        sharding.reduction_op,
    )


def _updated_sharding_for_priority(
    current: TensorSharding, original: TensorSharding, priority: int
) -> TensorSharding:
    dims = list(current.dim_shardings)
    seen: set[AxisRef] = set()
    for i, orig in enumerate(original.dim_shardings):
        if orig.priority_or_default == priority:
            dims[i] = orig.drop_priority()
            seen.update(orig.axes)
    return TensorSharding(
        current.mesh_or_ref,
        tuple(dims),
        tuple(a for a in current.replicated_axes if a not in seen),
        current.unreduced_axes,
        current.reduction_op,
    )
