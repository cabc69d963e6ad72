"""The walks over ops besides `Op.walk`/`Op.walk_post_order`: collecting ops (by name) without a
generator per op, and MLIR's post-order walk for visits that insert ops."""

from __future__ import annotations

from collections.abc import Callable

from shardwise.ir.core import Op

__all__ = [
    "ops_in_pre_order",
    "ops_named",
    "ops_in_post_order",
    "collect_post_order",
    "walk_post_order_visiting",
    "index_near",
]


def ops_in_pre_order(root: Op, names: frozenset[str]) -> list[Op]:
    """The ops named one of `names` in `root` (included), in the order of `Op.walk`.

    Cheaper than filtering `Op.walk`: a loop per block, no generator per op.
    """
    found = [root] if root.name in names else []
    _collect_pre_order(root, names, found)
    return found


def ops_named(ops: list[Op], names: frozenset[str]) -> list[Op]:
    """The ops of `ops` named one of `names`, in their order: `ops_in_pre_order` over a walk a
    caller has already taken (`Op.walk_list`), for the steps that share one."""
    return [op for op in ops if op.name in names]


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


def collect_post_order(op: Op, found: list[Op]) -> None:
    """Append the ops nested in `op` to `found` in `Op.walk_post_order`'s order (a loop per
    block, no generator per op)."""
    for region in op.regions:
        for block in region.blocks:
            for nested in block.ops:
                if nested.regions:
                    collect_post_order(nested, found)
                found.append(nested)


def walk_post_order_visiting(
    op: Op, visit: Callable[[Op], None], names: frozenset[str] | None = None
) -> None:
    """MLIR's post-order walk calling `visit` on each op, for a visit that inserts ops: the next
    op is fixed before an op is visited, so ops inserted right after it (or anywhere before it)
    are not visited (`Op.walk_post_order` instead copies each block's list on entering it).

    `names`: if given, region-free ops of other names are not visited (for a `visit` that
    would do nothing with them): the walk steps over them without looking for its place in
    the block again, as nothing can have changed the block since the last visit."""
    for region in op.regions:
        for block in region.blocks:
            ops = block.ops
            current = ops[0] if ops else None
            i = 0
            while current is not None:  # here `ops` is `block.ops` and `ops[i]` is `current`
                if names is not None and not current.regions and current.name not in names:
                    i += 1
                    current = ops[i] if i < len(ops) else None
                    continue
                following = ops[i + 1] if i + 1 < len(ops) else None
                if current.regions:
                    walk_post_order_visiting(current, visit, names)
                else:
                    visit(current)  # most ops: no call just to find no regions
                current = following
                i += 1
                ops = block.ops  # the visit may have inserted or erased ops, or replaced the list
                if current is not None and not (i < len(ops) and ops[i] is current):
                    i = index_near(ops, current, i)
    visit(op)


_NEAR = 64  # how far past the hint `index_near` looks before it searches the whole list


def index_near(ops: list[Op], op: Op, hint: int) -> int:
    """`ops.index(op)`, searching the few places from `hint` on first: a visit inserts a few
    ops around the op it visits, so the next op has moved by a few places at most (a full
    search from the start made the walk quadratic in the block size)."""
    if hint < len(ops) and ops[hint] is op:
        return hint
    # A slice, not `itertools.islice(ops, hint, None)`, which steps over the first `hint` ops
    # one by one (quadratic again: 0.1 s at 96 GPT layers). `in` before `index`: `index`'s
    # ValueError formats `repr(op)`, which resolves the op's deferred location (with debug
    # info, a second parse of the input).
    near = ops[hint : hint + _NEAR]
    if op in near:
        return hint + near.index(op)
    return ops.index(op)  # far after it, or ops before it were erased: the whole block
