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

from shardwise.ir import Module
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


def scan_shardings(module: Module) -> ShardingScan:
    """The facts over every sharding attached to an op of `module` (nested ones included)."""
    scanner = _Scanner()
    seen: set[int] = set()  # ids of the attribute objects read (not shared with the shardings')
    for op in module.walk():
        for attrs in (op.properties, op.attributes):
            for value in attrs.values():
                if id(value) in seen:
                    continue
                seen.add(id(value))
                elements = getattr(value, "elements", None)
                if elements is None:
                    scanner.value(value)
                    continue
                for element in elements:  # func arg/result dicts
                    for entry in getattr(element, "entries", {}).values():
                        scanner.value(entry)
    return ShardingScan(scanner.empty_closed_with_priority, scanner.unreduced_axes)
