"""Shardy's canonicalization patterns that carry no label (``ir/canonicalization.cc``).

A plain ``canonicalize`` (no ``enable-patterns``) runs them beside the labelled ones of
`collective_patterns`; ``canonicalize{enable-patterns=...}`` does not.

| op                     | pattern (as in the jaxlib 0.10.2 reference)                         |
| ---------------------- | ------------------------------------------------------------------- |
| sdy.reshard            | reshard common-subexpression elimination: an earlier reshard of the |
|                        | same data (reached through reshapes) with an equivalent layout is    |
|                        | reused, the reshape/transpose path in between cloned onto it         |
| sdy.manual_computation | unused block arguments and their operands are removed                |

Shardy also registers "inline a manual computation whose manual axes have size 1" and "erase
an empty one"; in the reference the inlining never succeeds and an empty one is already a
trivially dead op, so neither shows.
"""

from __future__ import annotations

from shardwise.axis import AxisRef
from shardwise.export.canonicalization_patterns import canonicalize_with_labels, patterns_for_labels
from shardwise.export.canonicalize import (
    COLLECTIVE_LABEL,
    RESHARD_LABEL,
    Pattern,
    Rewriter,
    canonicalize,
)
from shardwise.ir import (
    Module,
    Op,
    TensorType,
    Value,
    clone_op,
    insert_after_value,
    is_before_in_block,
)
from shardwise.mesh import Mesh
from shardwise.passes import sdy_pass
from shardwise.rules.ops.common import i64_array_attr
from shardwise.sharding import TensorSharding, TensorShardingPerValue

__all__ = [
    "canonicalize_all",
    "all_patterns",
    "reshard_cse",
    "manual_computation_unused_inputs",
    "axis_strides",
]

_RESHAPE = "stablehlo.reshape"
_TRANSPOSE = "stablehlo.transpose"
_METADATA_OPS = frozenset({_RESHAPE, _TRANSPOSE})


def _users_in_use_list_order(value: Value) -> list[Op]:
    """`Value::getUsers()`: MLIR's use list, newest use first (duplicates kept)."""
    return [op for op, _ in reversed(value.uses)]


def _root_through_metadata(value: Value) -> Value:
    """Follow reshapes and transposes up to the value they started from."""
    op = value.defining_op
    while op is not None and op.name in _METADATA_OPS:
        value = op.operands[0]
        op = value.defining_op
    return value


def _sharding_at_root(sharding: TensorSharding, value: Value) -> TensorSharding:
    """The sharding in the dim order of the root: transposes undone, rank-keeping reshapes
    crossed, a rank-changing reshape ends the walk."""
    op = value.defining_op
    while op is not None:
        if op.name == _TRANSPOSE:
            perm = i64_array_attr(op, "permutation")
            dims = list(sharding.dim_shardings)
            for result_dim, operand_dim in enumerate(perm):
                dims[operand_dim] = sharding.dim_shardings[result_dim]
            sharding = TensorSharding(
                sharding.mesh_or_ref, tuple(dims), sharding.replicated_axes, sharding.unreduced_axes
            )
        elif op.name == _RESHAPE:
            if op.operands[0].type.rank != op.results[0].type.rank:
                break
        else:
            break
        value = op.operands[0]
        op = value.defining_op
    return sharding


def axis_strides(sharding: TensorSharding, shape: tuple[int, ...], mesh: Mesh) -> list:
    """Each axis of `sharding` with its linear stride in a row-major buffer of `shape`, sorted
    by stride (stable): two layouts with equal lists split the data identically.

    `[{"a"}, {}]` on 8x8 (a=2) -> [(a, 32)]; `[{"a"}]` on 64 -> [(a, 32)].
    """
    strides: list[tuple[AxisRef, int]] = []
    below = 1
    for i in range(len(shape) - 1, -1, -1):
        axes = sharding.dim_shardings[i].axes
        total = 1
        for axis in axes:
            total *= axis.size(mesh)
        stride = below * -(-shape[i] // total)
        for axis in reversed(axes):
            strides.append((axis, stride))
            stride *= axis.size(mesh)
        below *= shape[i]
    strides.sort(key=lambda pair: pair[1])
    return strides


def _mesh_name(sharding: TensorSharding) -> str | None:
    return None if isinstance(sharding.mesh_or_ref, Mesh) else str(sharding.mesh_or_ref)


class _Equivalence:
    """`isShardingEquivalentAcrossReshapes`: same layout of the data across a reshape."""

    def __init__(self, meshes: dict) -> None:
        self.meshes = meshes

    def __call__(self, s1: TensorSharding, t1, s2: TensorSharding, t2) -> bool:
        if s1 == s2 and str(t1) == str(t2):
            return True
        if _mesh_name(s1) != _mesh_name(s2) or s1.replicated_axes != s2.replicated_axes:
            return False
        if not isinstance(t1, TensorType) or not isinstance(t2, TensorType):
            return False
        if t1.encoding is not None or t2.encoding is not None:
            return False
        mesh = (
            s1.mesh_or_ref if isinstance(s1.mesh_or_ref, Mesh) else self.meshes.get(s1.mesh_or_ref)
        )
        if not isinstance(mesh, Mesh):
            return False
        return axis_strides(s1, t1.shape, mesh) == axis_strides(s2, t2.shape, mesh)


def _reshard_sharding(reshard: Op) -> TensorSharding:
    sharding = reshard.get_attr("sharding")
    assert isinstance(sharding, TensorSharding), "sdy.reshard without a parsed sharding"
    return sharding


def _compatible_reshard(
    root: Value, target: TensorSharding, target_type, current: Op, equivalent: _Equivalence
) -> Value | None:
    """An earlier reshard in `current`'s block, reached from `root` through reshapes only,
    whose layout equals `target` (`findCompatibleReshard`)."""
    stack = [root]
    visited: set[int] = set()
    while stack:
        value = stack.pop()
        if id(value) in visited:
            continue
        visited.add(id(value))
        for user in _users_in_use_list_order(value):
            if user is current:
                continue
            if user.name == "sdy.reshard":
                if (
                    equivalent(_reshard_sharding(user), user.results[0].type, target, target_type)
                    and user.parent is current.parent
                    and is_before_in_block(user, current)
                ):
                    return user.results[0]
            elif user.name == _RESHAPE:
                stack.append(user.results[0])
    return None


def _clone_path(root: Value, target: Value, cached: Value, rw: Rewriter) -> Value:
    """Clone the reshapes/transposes from `root` to `target` onto `cached`, each right after
    its new operand (`cloneTransformationPath`)."""
    if target is root:
        return cached
    op = target.defining_op
    assert op is not None and op.name in _METADATA_OPS
    operand = _clone_path(root, op.operands[0], cached, rw)
    clone = clone_op(op)
    clone.set_operand(0, operand)
    insert_after_value(clone, operand)
    rw.push(clone)
    return clone.results[0]


def reshard_cse(meshes: dict):
    """The pattern `ReshardCommonSubexpressionEliminationPattern` for a module's meshes."""
    equivalent = _Equivalence(meshes)

    def pattern(op: Op, rw: Rewriter) -> bool:
        operand = op.operands[0]
        root = _root_through_metadata(operand)
        target = _sharding_at_root(_reshard_sharding(op), operand)
        cached = _compatible_reshard(root, target, op.results[0].type, op, equivalent)
        if cached is None:
            return False
        if str(cached.type) != str(root.type):
            reshape = Op(
                _RESHAPE, [cached], [root.type], location=op.location, loc_text=op.loc_text
            )
            insert_after_value(reshape, cached)
            rw.push(reshape)
            cached = reshape.results[0]
        rw.replace_op(op, [_clone_path(root, operand, cached, rw)])
        return True

    return pattern


def _erase_operands(op: Op, keep: list[int]) -> None:
    """`Operation::eraseOperands`: the kept operands move down, each keeping its place in
    its value's use list."""
    kept = [op.operands[i] for i in keep]
    for i, value in enumerate(op.operands):
        if i not in keep:
            value.uses.remove((op, i))
    for new_index, old_index in enumerate(keep):
        value = op.operands[old_index]
        position = value.uses.index((op, old_index))
        value.uses[position] = (op, new_index)
    op.operands = kept


def manual_computation_unused_inputs(op: Op, rw: Rewriter) -> bool:
    """`ManualComputationUnusedInputsPattern`: drop block arguments without uses, their
    operands and their in-shardings (edited in place without telling the driver, as Shardy
    does: nothing is re-queued)."""
    block = op.regions[0].entry
    keep = [arg.index for arg in block.args if arg.uses]
    if len(keep) == len(block.args):
        return False
    _erase_operands(op, keep)
    block.args = [block.args[i] for i in keep]
    for i, arg in enumerate(block.args):
        arg.index = i
    key = "in_shardings"
    shardings = op.get_attr(key)
    if isinstance(shardings, TensorShardingPerValue):
        value = TensorShardingPerValue(tuple(shardings.shardings[i] for i in keep))
        target = op.properties if key in op.properties else op.attributes
        target[key] = value
    return True


def all_patterns(module: Module) -> dict[str, list[Pattern]]:
    """Every pattern, labelled or not, per root op in MLIR's order (what a plain
    ``canonicalize`` runs): two-op patterns first, then registration order."""
    table = patterns_for_labels(module, frozenset({RESHARD_LABEL, COLLECTIVE_LABEL}))
    table["sdy.reshard"] = [*table["sdy.reshard"], reshard_cse(module.meshes())]
    table["sdy.manual_computation"] = [manual_computation_unused_inputs]
    return table


def canonicalize_all(module: Module) -> None:
    """A plain ``canonicalize``: every pattern enabled."""
    canonicalize(module, all_patterns(module))


@sdy_pass("canonicalize")
def run_canonicalize(module: Module, enable_patterns: str = "") -> None:
    """MLIR's ``canonicalize{enable-patterns=...}`` for Shardy's labelled patterns."""
    labels = frozenset(p for p in enable_patterns.split(",") if p)
    if not labels:  # MLIR: no enable-patterns list enables every pattern
        canonicalize_all(module)
        return
    canonicalize_with_labels(module, labels)
