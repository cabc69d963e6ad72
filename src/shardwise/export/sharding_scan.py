"""Facts about every sharding stored in a module, gathered in one walk for the export pipeline.

Reads what `verify.sdy_values` yields (op properties and attributes, func argument and result
dicts), each attribute object and each sharding object once: ops share them (a 64-layer GPT
holds 645 sharding objects among 5.7k uses).

| fact                          | who asks                                                 |
| ----------------------------- | -------------------------------------------------------- |
| `empty_closed_with_priority`  | the pipeline: closing ``{?}p1`` leaves ``{}p1``, which   |
|                               | Shardy's verifier rejects right after the pass           |
| `unreduced_axes`              | explicit reshards: with none, every unreduced-axes step  |
|                               | is a no-op (the pass only ever copies unreduced axes     |
|                               | from shardings already in the module)                    |
"""

from __future__ import annotations

from dataclasses import dataclass

from shardwise.ir import ArrayAttr, DictAttr, Module, Op
from shardwise.sharding import TensorSharding, TensorShardingPerValue

__all__ = ["ShardingScan", "scan_shardings"]


@dataclass(frozen=True, slots=True)
class ShardingScan:
    empty_closed_with_priority: bool  # a closed dim with no axes and a priority: ``{}p<n>``
    unreduced_axes: bool  # a sharding with unreduced axes


class _Scanner:
    def __init__(self) -> None:
        self.seen: set[int] = set()  # ids of the shardings read
        self.empty_closed_with_priority = False
        self.unreduced_axes = False

    def value(self, value: object) -> None:
        """One sdy value: a sharding or a per-value list (anything else is not a sharding)."""
        if isinstance(value, TensorShardingPerValue):
            for sharding in value.shardings:
                self.sharding(sharding)
        elif isinstance(value, TensorSharding):
            self.sharding(value)

    def sharding(self, sharding: TensorSharding) -> None:
        if id(sharding) in self.seen:
            return
        self.seen.add(id(sharding))
        if sharding.unreduced_axes:
            self.unreduced_axes = True
        for d in sharding.dim_shardings:
            if d.priority is not None and d.is_closed and not d.axes:
                self.empty_closed_with_priority = True


def scan_shardings(module: Module, ops: list[Op] | None = None) -> ShardingScan:
    """The facts over every sharding attached to an op of `module` (nested ones included).

    Values are told apart by their exact type (attribute classes are final), so the many
    that cannot hold a sharding (raw attributes, rules) cost one test each. `ops`: every op of
    the module (`module.op.walk_list()`), if the caller has them.
    """
    scanner = _Scanner()
    read = scanner.seen  # tested here first: most shardings are shared, read already
    seen: set[int] = set()  # ids of the array attributes read (func arg/result dicts)
    grow = ops is None
    if ops is None:
        ops = [module.op]
    for op in ops:  # every op, in no particular order (ours: a list that grows as it goes)
        if grow and op.regions:
            for region in op.regions:
                for block in region.blocks:
                    ops += block.ops
        for value in (*op.properties.values(), *op.attributes.values()):
            cls = type(value)
            if cls is TensorShardingPerValue:
                for sharding in value.shardings:
                    if id(sharding) not in read:
                        scanner.sharding(sharding)
            elif cls is TensorSharding:
                scanner.sharding(value)
            elif cls is ArrayAttr and id(value) not in seen:
                seen.add(id(value))
                for element in value.elements:
                    if type(element) is DictAttr:
                        for entry in element.entries.values():
                            scanner.value(entry)
    return ShardingScan(scanner.empty_closed_with_priority, scanner.unreduced_axes)
