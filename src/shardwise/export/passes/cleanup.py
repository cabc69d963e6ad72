"""Export passes that only erase or rewrite attributes and sdy-internal ops.

`sdy-close-shardings`, `sdy-remove-sharding-groups`, `sdy-sharding-constraint-to-reshard`,
`sdy-drop-sharding-rules`, `sdy-remove-propagation-debug-info`, `sdy-inline-meshes`
(``transforms/export/*.cc`` and ``transforms/import/inline_meshes.cc``).
"""

from __future__ import annotations

from shardwise.imports.replica_group_meshes import missing_mesh_error
from shardwise.imports.sharding_groups import SHARDING_GROUP
from shardwise.ir import (
    SHARDING_RULE_ATTR,
    Module,
    Op,
    func_arg_attrs,
    func_result_attrs,
    func_result_types,
    ops_in_pre_order,
)
from shardwise.mesh import Mesh
from shardwise.propagation.sharding_walker import memoized_transform, transform_shardings
from shardwise.rules.rule import OpShardingRule
from shardwise.sharding import TensorSharding

__all__ = [
    "SHARDING_CONSTRAINT",
    "close_shardings",
    "constraints_to_reshards",
    "remove_sharding_groups",
    "sharding_constraint_to_reshard",
    "drop_sharding_rules",
    "remove_propagation_debug_info",
    "inline_meshes",
    "PROPAGATION_DEBUG_ATTRS",
]

SHARDING_CONSTRAINT = frozenset({"sdy.sharding_constraint"})

PROPAGATION_DEBUG_ATTRS = (
    "sdy.propagation_edges",
    "sdy.block_arg_propagation_edges",
    "sdy.result_propagation_edges",
    "sdy.sharding_origins",
    "sdy.block_arg_sharding_origins",
    "sdy.result_sharding_origins",
)


def close_shardings(module: Module) -> None:
    """`sdy-close-shardings`: every sharding closed, its replicated axes dropped."""
    transform_shardings(module.op, memoized_transform(TensorSharding.closed_like))


def remove_sharding_groups(module: Module) -> None:
    """`sdy-remove-sharding-groups`: erase every ``sdy.sharding_group``."""
    for op in ops_in_pre_order(module.op, SHARDING_GROUP):
        op.erase()


def _constraint_to_reshard(op: Op, index: int) -> None:
    """Replace `op`, which is ``block.ops[index]``, by a reshard (in place: no list scans)."""
    block = op.parent
    assert block is not None and block.ops[index] is op
    reshard = Op(
        "sdy.reshard",
        [op.operands[0]],
        [op.results[0].type],
        properties={"sharding": op.properties["sharding"]},
        attributes=dict(op.attributes),
        location=op.location,
        loc_text=op.loc_text,
        result_names=[op.results[0].name],
    )
    reshard.parent = block
    block.ops[index] = reshard
    op.results[0].replace_all_uses_with(reshard.results[0])
    op.drop_operands()  # what `erase` does, minus the list scan (a constraint has no region)
    op.parent = None


def sharding_constraint_to_reshard(func: Op) -> None:
    """`sdy-sharding-constraint-to-reshard`: each constraint becomes a reshard (same attrs).

    Constraints are replaced in walk order (use lists depend on it), each at its index in its
    block: replacing in place moves no other op, so indexes taken once stay valid (inserting
    and erasing with list scans was quadratic in the block size).
    """
    constraints_to_reshards(ops_in_pre_order(func, SHARDING_CONSTRAINT))


def constraints_to_reshards(constraints: list[Op]) -> None:
    """`sharding_constraint_to_reshard` on its constraints, collected in pre-order."""
    index: dict[int, int] = {}
    for op in constraints:
        block = op.parent
        assert block is not None
        if id(op) not in index:
            index.update({id(other): i for i, other in enumerate(block.ops)})
        _constraint_to_reshard(op, index[id(op)])


def drop_sharding_rules(func: Op) -> None:
    """`sdy-drop-sharding-rules`: remove every ``sdy.sharding_rule`` that is not custom."""
    ops = [func]
    for op in ops:  # every op once, in no particular order: a list that grows as it goes
        if op.regions:
            for region in op.regions:
                for block in region.blocks:
                    ops += block.ops
        rule = op.attributes.get(SHARDING_RULE_ATTR)
        if isinstance(rule, OpShardingRule) and not rule.is_custom_rule:
            del op.attributes[SHARDING_RULE_ATTR]


def _remove_func_debug_attrs(func: Op) -> None:
    num_args = len(func.regions[0].entry.args) if func.regions[0].blocks else 0
    dicts = [func_arg_attrs(func, i) for i in range(num_args)]
    dicts += [func_result_attrs(func, i) for i in range(len(func_result_types(func)))]
    for attrs in dicts:
        for name in PROPAGATION_DEBUG_ATTRS:
            if attrs is not None:
                attrs.pop(name, None)


def remove_propagation_debug_info(module: Module) -> None:
    """`sdy-remove-propagation-debug-info`: drop edge/origin debug attributes everywhere."""
    for op in module.walk():
        if op.name == "func.func":
            _remove_func_debug_attrs(op)
            continue
        for name in PROPAGATION_DEBUG_ATTRS:
            op.attributes.pop(name, None)


def inline_meshes(module: Module) -> None:
    """`sdy-inline-meshes`: shardings carry their mesh inline; ``sdy.mesh`` ops are erased."""
    meshes = module.meshes()

    def inline(sharding: TensorSharding) -> TensorSharding:
        name = sharding.mesh_name
        if name is None:
            return sharding
        mesh = meshes.get(name)
        assert isinstance(mesh, Mesh), f"unknown mesh @{name}"
        return TensorSharding(
            mesh, sharding.dim_shardings, sharding.replicated_axes, sharding.unreduced_axes
        )

    transform_shardings(module.op, inline)
    for op in list(module.top_level_ops("sdy.mesh")):
        op.erase()
    # The reference erases meshes that replica groups still name; its verifier then fails.
    error = missing_mesh_error(module)
    if error is not None:
        raise error
