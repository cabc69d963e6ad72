"""MLIR's greedy-driver worklist, as the propagation driver uses it (`basic_propagation`)."""

from __future__ import annotations

from shardwise.ir import Op

__all__ = ["Worklist"]


class Worklist:
    """MLIR's greedy-driver worklist: a LIFO stack with set semantics and O(1) removal.

    The driver loop pops inline: the last entry of `_stack` (None: removed), dropping its
    `_index` entry."""

    def __init__(self) -> None:
        self._stack: list[Op | None] = []
        self._index: dict[int, int] = {}
        # While the driver skips settled seeded ops (`SettledOpSkip`): the stack
        # entries below `skippable` are seeded ops it may pop without a visit, but for those
        # flagged in `required` (by stack index), which a push asked for (an op already on
        # the worklist keeps its place) or which were known to need a visit from the start.
        self.skippable = 0
        self.required = bytearray()

    def push(self, op: Op) -> None:
        i = self._index.get(id(op))
        if i is not None:
            if i < self.skippable:
                self.required[i] = 1
            return
        self._index[id(op)] = len(self._stack)
        self._stack.append(op)

    def require(self, op_ids: list[int]) -> None:
        """The ops with these ids need a visit even if they are skippable."""
        for op_id in op_ids:
            i = self._index.get(op_id)
            if i is not None and i < self.skippable:
                self.required[i] = 1

    def remove(self, op: Op) -> None:
        index = self._index.pop(id(op), None)
        if index is not None:
            self._stack[index] = None

    def seed(self, ops: list[Op], index: dict[int, int] | None = None) -> dict[int, int]:
        """Push `ops` last to first (the first is popped first) onto an empty worklist.

        `index`: what a seed with the same `ops` returned (copied: cheaper than rebuilt)."""
        assert not self._index, "seeding a worklist that is not empty"
        # A fresh copy, so widening it to `list[Op | None]` is sound (mypy cannot see that).
        self._stack = ops[::-1]  # type: ignore[assignment]
        if index is None:
            index = dict(zip(map(id, self._stack), range(len(self._stack)), strict=True))
        self._index = index.copy()
        return index
