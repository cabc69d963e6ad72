"""Collecting ops by name without a generator per op (pre-order and MLIR's post-order)."""

from __future__ import annotations

from shardwise.ir.core import Op


def ops_in_pre_order(root: Op, names: frozenset[str]) -> list[Op]:
    """The ops named one of `names` in `root` (included), in the order of `Op.walk`.

    Cheaper than filtering `Op.walk`: a loop per block, no generator per op.
    """
    found = [root] if root.name in names else []
    _collect_pre_order(root, names, found)
    return found


def ops_in_post_order(root: Op, names: frozenset[str]) -> list[Op]:
    """The ops named one of `names` in `root` (included), in the order of MLIR's walk
    (`Op.walk_post_order`: nested ops before their parent)."""
    found: list[Op] = []
    _collect_post_order(root, names, found)
    if root.name in names:
        found.append(root)
    return found


def _collect_pre_order(op: Op, names: frozenset[str], found: list[Op]) -> None:
    for region in op.regions:
        for block in region.blocks:
            for nested in block.ops:
                if nested.name in names:
                    found.append(nested)
                if nested.regions:
                    _collect_pre_order(nested, names, found)


def _collect_post_order(op: Op, names: frozenset[str], found: list[Op]) -> None:
    for region in op.regions:
        for block in region.blocks:
            for nested in block.ops:
                if nested.regions:
                    _collect_post_order(nested, names, found)
                if nested.name in names:
                    found.append(nested)
