"""Sharding groups: values that must end up with the same sharding (`sdy.sharding_group`).

Shardy's `ShardingGroupMap` (prop/sharding_group_map.cc). Built from the module's
``sdy.sharding_group`` ops (group ids are dense after import); at the start of propagation the
members' shardings are synchronised, and every later update of a member is mirrored to the
others by the driver.
"""

from __future__ import annotations

import warnings

from shardwise.errors import PropagationError
from shardwise.ir import Block, Module, Op, Value, ops_in_pre_order, ops_named
from shardwise.sdy.sharding_groups import group_id_of
from shardwise.sdy.shardings import get_sharding, set_sharding
from shardwise.sharding import TensorSharding

__all__ = ["ShardingGroupMap", "group_id_of"]

_SHARDING_GROUP = frozenset({"sdy.sharding_group"})


def _is_fully_replicated_and_open(sharding: TensorSharding) -> bool:
    return all(not d.axes and not d.is_closed for d in sharding.dim_shardings)


class ShardingGroupMap:
    def __init__(self, module: Module, ops: list[Op] | None = None) -> None:
        """`ops`: the module's ops in pre-order if the caller has them (`walk_list`)."""
        self.module = module
        self.groups: list[list[Value]] = []
        self.value_to_group: dict[int, int] = {}
        if ops is None:
            group_ops = ops_in_pre_order(module.op, _SHARDING_GROUP)
        else:
            group_ops = ops_named(ops, _SHARDING_GROUP)
        for op in group_ops:
            group = group_id_of(op)
            while len(self.groups) <= group:
                self.groups.append([])
            value = op.operands[0]
            known = self.value_to_group.setdefault(id(value), group)
            if known != group:
                raise PropagationError(
                    "Value can only map to one sharding group id after import.", op.location
                )
            self.groups[group].append(value)

    def members(self, value: Value) -> list[Value]:
        group = self.value_to_group.get(id(value))
        return self.groups[group] if group is not None else []

    # -- start-of-propagation synchronisation --------------------------------------------------

    def _common_sharding(self, group: int) -> tuple[TensorSharding | None, bool]:
        members = self.groups[group]
        if len(members) == 1:
            return get_sharding(members[0]), False
        common: TensorSharding | None = None
        for member in members:
            candidate = get_sharding(member)
            if candidate is None or _is_fully_replicated_and_open(candidate):
                continue
            if common is None:
                common = candidate
            elif candidate != common:
                warnings.warn(
                    f"The initial operand shardings on the sharding groups of groupID: {group} "
                    "do not match. Inserting an open sharding constraint to all constrained "
                    "values. This can be caused when shardings from different values are "
                    "grouped (e.g. from jax.shard_alike) but have separate inconsistent "
                    "sharding constraints on them.",
                    stacklevel=2,
                )
                return common, True
        return common, False

    def sync_group_member_shardings(self) -> bool:
        """Give each group's members its common sharding; True if it inserted ops (open
        constraints on the members of a group whose shardings conflict)."""
        inserted = False
        for group, members in enumerate(self.groups):
            sharding, conflict = self._common_sharding(group)
            if sharding is None:
                continue
            if not conflict:
                for member in members:
                    set_sharding(member, sharding)
                continue
            open_like = TensorSharding.fully_open(sharding.mesh_or_ref, sharding.rank)
            for i, member in enumerate(members):
                constraint = _insert_open_constraint(member, open_like)
                del self.value_to_group[id(member)]
                members[i] = constraint
                self.value_to_group[id(constraint)] = group
                inserted = True
        return inserted


def _insert_open_constraint(value: Value, sharding: TensorSharding) -> Value:
    """An ``sdy.sharding_constraint`` right after `value`, taking over all its uses."""
    location, loc_text = value.loc
    op = Op(
        "sdy.sharding_constraint",
        result_types=[value.type],
        properties={"sharding": sharding},
        location=location,
        loc_text=loc_text,
    )
    uses = list(value.uses)
    defining = value.defining_op
    if defining is not None:
        assert defining.parent is not None
        defining.parent.insert_after(defining, op)
    else:
        assert isinstance(value.owner, Block)
        value.owner.insert(0, op)
    for user, index in reversed(uses):
        user.set_operand(index, op.results[0])
    op.add_operand(value)
    return op.results[0]
