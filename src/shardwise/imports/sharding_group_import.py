"""`sdy-sharding-group-import`: unify, renumber and dedup ``sdy.sharding_group`` ops.

Shardy's import/sharding_group_import.cc: groups sharing a value are merged (union-find),
group ids are renumbered 0..N-1 in the order the class leaders were first seen (the leader
of a union is the leader of its first argument, as in `llvm::EquivalenceClasses`; Shardy's
comment about the minimum id does not hold), and a group keeps one op per value. Members must have one shape and the same enclosing manual computation.
"""

from __future__ import annotations

from shardwise.errors import VerifyError
from shardwise.ir import Module, Op, RawAttr, Value
from shardwise.passes import sdy_pass
from shardwise.sdy.call_graph import ops_in_post_order
from shardwise.sdy.sharding_groups import SHARDING_GROUP, group_id_of

__all__ = ["sharding_group_import"]


def _manual_parent(op: Op) -> Op | None:
    return next((a for a in op.ancestors() if a.name == "sdy.manual_computation"), None)


def _collect_and_validate(groups: list[Op]) -> dict[Value, list[Op]]:
    by_value: dict[Value, list[Op]] = {}
    manual_of: dict[int, Op | None] = {}
    shape_of: dict[int, tuple] = {}
    for op in groups:
        value = op.operands[0]
        by_value.setdefault(value, []).append(op)
        group = group_id_of(op)
        parent = manual_of.setdefault(group, _manual_parent(op))
        if parent is not _manual_parent(op):
            raise VerifyError(
                "ShardingGroupOps values cannot cross ManualComputationOp boundaries for "
                f"groupId: {group}",
                op.location,
            )
        shape = getattr(value.type, "shape", ())
        if shape_of.setdefault(group, shape) != shape:
            raise VerifyError(
                f"ShardingGroupOps values must have the same shape for groupId: {group}",
                op.location,
            )
    return by_value


def _find(parent: dict[int, int], x: int) -> int:
    parent.setdefault(x, x)
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


def _union(parent: dict[int, int], a: int, b: int) -> None:
    ra, rb = _find(parent, a), _find(parent, b)
    if ra != rb:
        parent[rb] = ra  # llvm::EquivalenceClasses keeps the first argument's leader


@sdy_pass("sdy-sharding-group-import")
def sharding_group_import(module: Module, groups: list[Op] | None = None) -> None:
    """Merge groups that share a value, renumber them densely, drop duplicate members.

    `groups`: the module's ``sdy.sharding_group`` ops in post-order, if the caller has them.
    """
    if groups is None:
        groups = ops_in_post_order(module.op, SHARDING_GROUP)
    by_value = _collect_and_validate(groups)
    if not by_value:
        return
    parent: dict[int, int] = {}
    for ops in by_value.values():
        canonical = group_id_of(ops[0])
        for op in ops:
            _union(parent, canonical, group_id_of(op))
    # Leaders are numbered in the order their ids were first inserted (not by value).
    leaders = [g for g in parent if _find(parent, g) == g]
    reindex = {leader: i for i, leader in enumerate(leaders)}
    members_by_id: list[list[Op]] = [[] for _ in leaders]
    for ops in by_value.values():
        for op in ops:
            new_id = reindex[_find(parent, group_id_of(op))]
            op.properties["group_id"] = RawAttr(f"{new_id} : i64")
            members_by_id[new_id].append(op)
    for members in members_by_id:
        seen: set[Value] = set()
        for op in members:
            if op.operands[0] in seen:
                op.erase()
            else:
                seen.add(op.operands[0])
