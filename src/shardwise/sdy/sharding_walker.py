"""Visit every sharding under an op and optionally replace it (Shardy's `transformShardings`).

One walker for the import and the export passes (both sit above propagation).

Port of ``transforms/common/sharding_walker.cc``: a pre-order walk; per op kind:

| op                           | shardings visited                                   |
| ---------------------------- | --------------------------------------------------- |
| ``func.func``                | each argument's, then each result's ``sdy.sharding`` |
| ``sdy.manual_computation``   | ``in_shardings`` (with manual axes), ``out_shardings`` |
| other data-flow ops          | block-arg edge owners, then result edge owners      |
| op with exactly one result   | `get_sharding(result)` (covers sdy ops' properties) |
| any other op                 | its ``sdy.sharding`` list                           |
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from shardwise.ir import (
    SHARDING_ATTR,
    Module,
    Op,
    func_arg_attrs,
    func_result_attrs,
    func_result_types,
)
from shardwise.sdy import data_flow
from shardwise.sdy.shardings import COLLECTIVE_OPS, get_sharding, set_sharding
from shardwise.sharding import TensorSharding, TensorShardingPerValue

__all__ = [
    "transform_shardings",
    "memoized_transform",
    "MemoizedTransform",
    "walk_shardings",
    "get_per_value",
    "set_per_value",
]

TransformFn = Callable[[TensorSharding], TensorSharding]

_REGION_EDGE_OPS = frozenset({"sdy.manual_computation", "sdy.named_computation"})
# Single-result ops whose result's sharding `get_sharding` reads from a property of the op
# (``sharding`` or ``out_sharding``), not from its ``sdy.sharding`` list.
_OWN_PROPERTY_OPS = COLLECTIVE_OPS | {
    "sdy.data_flow_edge",
    "sdy.sharding_constraint",
    "sdy.reshard",
}


def get_per_value(op: Op, key: str) -> list[TensorSharding]:
    """The shardings of a per-value attribute (property or discardable), [] when absent."""
    attr = op.properties.get(key)
    if attr is None:
        attr = op.attributes.get(key)
    return list(attr.shardings) if isinstance(attr, TensorShardingPerValue) else []


def set_per_value(op: Op, key: str, shardings: list[TensorSharding]) -> None:
    """Store a per-value attribute where it lives: ``sdy.sharding`` is discardable."""
    holder = op.attributes if key == SHARDING_ATTR else op.properties
    holder[key] = TensorShardingPerValue(tuple(shardings))


def _transform_list(op: Op, key: str, fn: TransformFn) -> None:
    shardings = get_per_value(op, key)
    if not shardings:
        return
    # Loaded modules hold `in/out_shardings` as properties (MLIR prints them in `<{...}>`), so
    # writing an unchanged list back would be a no-op; skipping it keeps `walk_shardings` read-only.
    new = [fn(s) for s in shardings]
    if new != shardings:
        set_per_value(op, key, new)


def _transform_dict(attrs: dict | None, fn: TransformFn) -> None:
    sharding = attrs.get(SHARDING_ATTR) if attrs is not None else None
    if isinstance(sharding, TensorSharding):
        new = fn(sharding)
        if new is not sharding and new != sharding:
            attrs[SHARDING_ATTR] = new  # type: ignore[index]


def _transform_func(func: Op, fn: TransformFn) -> None:
    for i in range(len(func.regions[0].entry.args) if func.regions[0].blocks else 0):
        _transform_dict(func_arg_attrs(func, i), fn)
    for i in range(len(func_result_types(func))):
        _transform_dict(func_result_attrs(func, i), fn)


def _transform_op(op: Op, fn: TransformFn) -> None:
    name = op.name
    if name == "func.func":
        _transform_func(op, fn)
    elif name in _REGION_EDGE_OPS:
        _transform_list(op, "in_shardings", fn)
        _transform_list(op, "out_shardings", fn)
    elif name in data_flow.DATA_FLOW_OPS or len(op.results) != 1:
        _transform_list(op, SHARDING_ATTR, fn)
    elif name in _OWN_PROPERTY_OPS:
        sharding = get_sharding(op.results[0])
        if sharding is not None:
            new = fn(sharding)
            if new is not sharding and new != sharding:
                set_sharding(op.results[0], new)
    else:
        # What `get_sharding`/`set_sharding` do for an ordinary op's one result, inlined: the
        # first entry of its ``sdy.sharding`` list (most ops of a module take this path).
        attr = op.attributes.get(SHARDING_ATTR)
        if isinstance(attr, TensorShardingPerValue) and attr.shardings:
            sharding = attr.shardings[0]
            new = fn(sharding)
            if new is not sharding and new != sharding:
                op.attributes[SHARDING_ATTR] = TensorShardingPerValue((new, *attr.shardings[1:]))


class MemoizedTransform:
    """`fn` (a pure function) computed once per distinct sharding, for one walk.

    A module holds few distinct shardings (17 values in 645 objects among a 64-layer GPT's 5.7k
    shardings): a sharding seen before is looked up by identity, then by value (comparing by
    value walks every dim); a result equal to its input is the input object itself (also for
    another object equal to the first), so the walker's ``is`` test skips writing it back
    without comparing them, and a result that is not its input differs from it.
    """

    __slots__ = ("fn", "by_id", "by_value", "single")

    def __init__(self, fn: TransformFn) -> None:
        self.fn = fn
        # id -> (the sharding, its result): holding the sharding keeps its id unique.
        self.by_id: dict[int, tuple[TensorSharding, TensorSharding]] = {}
        self.by_value: dict[TensorSharding, TensorSharding | None] = {}  # None: unchanged
        # id of a result -> the one-entry list holding it (`transform_shardings`): ops of one
        # result share it, as they may share any frozen value.
        self.single: dict[int, TensorShardingPerValue] = {}

    def __call__(self, sharding: TensorSharding) -> TensorSharding:
        hit = self.by_id.get(id(sharding))
        if hit is not None:
            return hit[1]
        by_value = self.by_value
        if sharding in by_value:
            result = by_value[sharding]
        else:
            result = self.fn(sharding)
            if result == sharding:
                result = None
            by_value[sharding] = result
        if result is None:
            result = sharding
        self.by_id[id(sharding)] = (sharding, result)
        return result


def memoized_transform(fn: TransformFn) -> MemoizedTransform:
    """`fn` computed once per distinct sharding, for one walk (`MemoizedTransform`)."""
    return MemoizedTransform(fn)


def transform_shardings(root: Op, fn: TransformFn, ops: list[Op] | None = None) -> None:
    """Replace every sharding under `root` (inclusive) by `fn(sharding)`, in pre-order.

    `ops`: `root.walk_list()`, if the caller has it."""
    if ops is None:
        ops = root.walk_list()
    if type(fn) is MemoizedTransform:
        _transform_ops_memoized(ops, fn)
        return
    for op in ops:
        _transform_op(op, fn)


# The ops `_transform_op` reads otherwise than an ordinary op's one result.
_NOT_ORDINARY = (
    frozenset({"func.func"}) | _REGION_EDGE_OPS | data_flow.DATA_FLOW_OPS | _OWN_PROPERTY_OPS
)


def _transform_ops_memoized(ops: list[Op], fn: MemoizedTransform) -> None:
    """`_transform_op` on each of `ops`, with an ordinary op of one result (most ops of a
    module) done inline: the result looked up by the sharding's identity, a result that is not
    the sharding itself written without comparing them, and one list per distinct result."""
    by_id, single = fn.by_id, fn.single
    for op in ops:
        if op.name in _NOT_ORDINARY or len(op.results) != 1:
            _transform_op(op, fn)
            continue
        attr = op.attributes.get(SHARDING_ATTR)
        if not isinstance(attr, TensorShardingPerValue) or not attr.shardings:
            continue
        sharding = attr.shardings[0]
        hit = by_id.get(id(sharding))
        new = hit[1] if hit is not None else fn(sharding)
        if new is sharding:
            continue
        if len(attr.shardings) != 1:  # a list longer than the op's results, kept as it was
            op.attributes[SHARDING_ATTR] = TensorShardingPerValue((new, *attr.shardings[1:]))
            continue
        per_value = single.get(id(new))
        if per_value is None:
            per_value = single[id(new)] = TensorShardingPerValue((new,))
        op.attributes[SHARDING_ATTR] = per_value


def walk_shardings(module: Module) -> Iterator[TensorSharding]:
    """Every sharding in the module, in `transformShardings` order."""
    found: list[TensorSharding] = []

    def collect(sharding: TensorSharding) -> TensorSharding:
        found.append(sharding)
        return sharding

    for op in module.walk():
        _transform_op(op, collect)
        yield from found
        found.clear()
