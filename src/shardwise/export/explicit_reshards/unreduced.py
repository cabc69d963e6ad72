"""Unreduced axes in `sdy-insert-explicit-reshards` (part of Shardy ``explicit_reshards_util``).

A value whose sharding has unreduced axes holds partial sums. Where its user does not keep an
axis unreduced, an ``sdy.all_reduce`` over that axis goes in between; where the user adds
unreduced axes, ``sdy.replicated_to_unreduced`` (axes that were replicated) and
``sdy.sharded_to_unreduced`` (axes that sharded a dimension) do.

Also home of `Builder`, the insertion point these rewrites share (MLIR's `OpBuilder`).
"""

from __future__ import annotations

from dataclasses import replace

from shardwise.axis import (
    AxisRef,
    PrefixStatus,
    axis_set_diff,
    is_axis_list_prefix_of,
    sort_and_merge_axes,
)
from shardwise.errors import InternalError
from shardwise.export.collective_attrs import (
    axis_ref_list_attr,
    list_of_axis_ref_lists_attr,
)
from shardwise.ir import Block, Op, Value
from shardwise.ir.walk import index_near
from shardwise.mesh import Mesh
from shardwise.sdy.shardings import get_sharding
from shardwise.sharding import DimensionSharding, TensorSharding

__all__ = [
    "Builder",
    "MeshTable",
    "new_op",
    "insert_all_reduce_if_unreduced_to_replicated",
    "insert_unreduced_collectives",
    "convert_reshard_to_unreduced_collectives",
]

Use = tuple[Op, int]


class MeshTable:
    """Mesh lookup by symbol name (or an inline mesh as is)."""

    def __init__(self, meshes: dict[str, object], replicated_on_any_mesh: bool = False) -> None:
        self.meshes = meshes
        # `shardwise partition`'s mode: a fully replicated sharding (no unreduced axes) holds
        # the same value on every device whatever its mesh, so it does not stop an op from
        # having the common mesh of its other shardings (the reference's does).
        self.replicated_on_any_mesh = replicated_on_any_mesh

    def of(self, sharding: TensorSharding) -> Mesh:
        ref = sharding.mesh_or_ref
        return ref if isinstance(ref, Mesh) else self.of_name(ref)

    def of_name(self, name: str) -> Mesh:
        mesh = self.meshes.get(name)
        if not isinstance(mesh, Mesh):
            raise InternalError(f"unknown mesh @{name}")
        return mesh

    def common_mesh_name(
        self, ins: list[TensorSharding | None], outs: list[TensorSharding | None]
    ) -> str | None:
        """`getCommonMeshName(..., ignoreDeviceIds=true)` of `sdy-insert-explicit-reshards`: the
        mesh all shardings share (ignoring device order), None if none/different/maximal;
        among meshes that differ in device order, the most common one of sharded tensors.
        With `replicated_on_any_mesh`, where the shardings share no mesh, fully replicated
        ones on meshes of the same device count are left out and the rest decide."""
        name = self._common_mesh_name(ins, outs)
        if name is not None or not self.replicated_on_any_mesh:
            return name
        shardings = [s for s in ins + outs if s is not None]
        sizes = {self.of(s).total_size for s in shardings}
        sharded: list[TensorSharding | None] = [s for s in shardings if not _replicated_anywhere(s)]
        if len(sizes) != 1 or not sharded or len(sharded) == len(shardings):
            return None
        return self._common_mesh_name(sharded, [])

    def _common_mesh_name(
        self, ins: list[TensorSharding | None], outs: list[TensorSharding | None]
    ) -> str | None:
        refs = {s.mesh_or_ref for s in ins + outs if s is not None}
        if len(refs) == 1 and isinstance(single := next(iter(refs)), str):
            # The usual case, every sharding naming one mesh: the walk below would pick it.
            return None if self.of_name(single).is_maximal else single
        ref = None
        mesh: Mesh | None = None
        for s in ins + outs:
            if s is None:
                continue
            other = self.of(s)
            if mesh is None or mesh.is_empty:
                mesh, ref = other, s.mesh_or_ref
                continue
            if other.is_empty:
                continue
            if not other.equals(mesh, ignore_device_ids=True):
                return None
            if not other.device_ids:
                mesh, ref = other, s.mesh_or_ref
        if ref is None or not isinstance(ref, str) or self.of_name(ref).is_maximal:
            return None
        counts: dict[str, int] = {}
        best, best_count = ref, 0
        for s in ins + outs:
            if s is None or s.is_fully_replicated:
                continue
            name = s.mesh_or_ref
            assert isinstance(name, str)
            counts[name] = counts.get(name, 0) + 1
            if counts[name] > best_count:
                best, best_count = name, counts[name]
        return best


def _replicated_anywhere(sharding: TensorSharding) -> bool:
    return sharding.is_fully_replicated and not sharding.unreduced_axes


class Builder:
    """An insertion point: new ops go before `anchor` in `block` (at the end if None).

    `after` is resolved at the first insertion (finding an op's index scans its block, and
    most insertion points set after a value are never used); nothing changes the block in
    between, so the anchor found then is the one found when `after` was called.

    An op's index is searched from where the last insertion into the block left the anchor
    (the passes walk a block forward, so the op is usually there or a little after): from the
    block's start, each insertion into a large block scanned it twice (0.3 s of the
    explicit reshards of a 96-layer GPT's 30k ops, quadratic in the block's size).
    """

    def __init__(self) -> None:
        self.block: Block | None = None
        self.anchor: Op | None = None
        self._after: Op | None = None
        self._hint: tuple[Block | None, int] = (None, 0)  # a block, an index to search from

    def before(self, op: Op) -> None:
        assert op.parent is not None
        self.block, self.anchor, self._after = op.parent, op, None

    def after(self, op: Op) -> None:
        """`setInsertionPointAfter`: before the op that follows `op` now."""
        assert op.parent is not None
        self.block, self.anchor, self._after = op.parent, None, op

    def after_value(self, value: Value) -> None:
        """`setInsertionPointAfterValue`: after the defining op, or first in the block."""
        if value.defining_op is not None:
            self.after(value.defining_op)
            return
        block = value.owner
        assert isinstance(block, Block)
        self.block, self._after = block, None
        self.anchor = block.ops[0] if block.ops else None

    def insert(self, op: Op) -> Op:
        block = self.block
        assert block is not None
        ops = block.ops
        if self._after is not None:
            i = self._index(block, self._after) + 1
            self.anchor = ops[i] if i < len(ops) else None
            self._after = None
        elif self.anchor is not None:
            i = self._index(block, self.anchor)
        if self.anchor is None:
            block.append(op)
            return op
        block.insert(i, op)
        self._hint = (block, i + 1)  # where the anchor is now
        return op

    def _index(self, block: Block, op: Op) -> int:
        """`block.ops.index(op)`, searched from the hint first."""
        hint_block, i = self._hint
        return index_near(block.ops, op, i if hint_block is block else 0)


def new_op(name: str, operand: Value, properties: dict) -> Op:
    """A one-operand one-result sdy op located where `operand` is (`Value::getLoc`)."""
    location, loc_text = operand.loc
    return Op(name, [operand], [operand.type], properties, location=location, loc_text=loc_text)


def _set_use(use: Use, value: Value) -> None:
    op, index = use
    op.set_operand(index, value)


def insert_all_reduce_if_unreduced_to_replicated(
    use: Use,
    source: TensorSharding | None,
    user: TensorSharding | None,
    meshes: MeshTable,
    builder: Builder,
) -> TensorSharding | None:
    """All-reduce the operand of `use` over its unreduced axes that `user` does not keep.

    Returns the sharding the operand has afterwards.
    """
    if source is None or not source.unreduced_axes:
        return source
    mesh = meshes.of(source)
    target: tuple[AxisRef, ...] = ()
    if user is not None:
        target = user.unreduced_axes
        if meshes.of(user) != mesh:
            raise InternalError(
                "source and user shardings have different meshes for unreduced axes."
            )
    axes = axis_set_diff(source.unreduced_axes, target, mesh)
    if not axes:
        return source
    sharding = replace(
        source, unreduced_axes=tuple(axis_set_diff(source.unreduced_axes, axes, mesh))
    )
    op = new_op(
        "sdy.all_reduce",
        use[0].operands[use[1]],
        {"reduction_axes": axis_ref_list_attr(tuple(axes)), "out_sharding": sharding},
    )
    builder.insert(op)
    _set_use(use, op.results[0])
    return sharding


def insert_unreduced_collectives(
    use: Use, out: TensorSharding | None, meshes: MeshTable, builder: Builder
) -> TensorSharding | None:
    """Turn the operand's replicated/sharded axes that `out` makes unreduced into unreduced ones.

    Returns the sharding of the last op inserted, None if none was.
    """
    value = use[0].operands[use[1]]
    in_sharding = get_sharding(value)
    if in_sharding is None or out is None or not out.unreduced_axes:
        return None
    mesh = meshes.of(in_sharding)
    if meshes.of(out) != mesh:
        raise InternalError(
            "Input and output shardings have different meshes. The result has non-empty "
            "unreduced axes."
        )
    added = axis_set_diff(out.unreduced_axes, in_sharding.unreduced_axes, mesh)
    if not added:
        return None
    if axis_set_diff(in_sharding.unreduced_axes, out.unreduced_axes, mesh):
        raise InternalError(
            "Both input and output have unreduced axes that does not appear in the other."
        )
    tmp_dims, per_dim, s2u, need_reshard = _sharded_to_unreduced_axes(in_sharding, out, added, mesh)
    result = value
    if need_reshard:
        reshard = new_op(
            "sdy.reshard", value, {"sharding": in_sharding.replace_dims(tuple(tmp_dims))}
        )
        result = builder.insert(reshard).results[0]
    last = get_sharding(result)
    r2u = axis_set_diff(added, s2u, mesh)
    if r2u:
        unreduced = sort_and_merge_axes(
            list(in_sharding.unreduced_axes) + r2u, mesh, key=mesh.axis_key
        )
        last = TensorSharding(
            in_sharding.mesh_or_ref, tuple(tmp_dims), out.replicated_axes, tuple(unreduced)
        )
        op = new_op(
            "sdy.replicated_to_unreduced",
            result,
            {"axes": axis_ref_list_attr(tuple(r2u)), "out_sharding": last},
        )
        result = builder.insert(op).results[0]
    if s2u:
        op = new_op(
            "sdy.sharded_to_unreduced",
            result,
            {"axes": list_of_axis_ref_lists_attr(tuple(per_dim)), "out_sharding": out},
        )
        result = builder.insert(op).results[0]
        last = out
    if result is value:
        return None
    _set_use(use, result)
    return last


def _sharded_to_unreduced_axes(
    in_sharding: TensorSharding, out: TensorSharding, added: list[AxisRef], mesh: Mesh
) -> tuple[list[DimensionSharding], list[tuple[AxisRef, ...]], list[AxisRef], bool]:
    """Per dim, the axes that go from sharding the dim to unreduced (when the out dim is a
    prefix of the in dim and what it drops is all newly unreduced); else a reshard is needed.

    Returns the dims before the sharded-to-unreduced, its axes per dim, all its axes and
    whether a reshard must first align the dims.
    """
    tmp_dims = list(out.dim_shardings)
    per_dim: list[tuple[AxisRef, ...]] = [() for _ in in_sharding.dim_shardings]
    s2u: list[AxisRef] = []
    need_reshard = False
    for d, (in_dim, out_dim) in enumerate(
        zip(in_sharding.dim_shardings, out.dim_shardings, strict=True)
    ):
        in_axes, out_axes = in_dim.axes, out_dim.axes
        status = is_axis_list_prefix_of(out_axes, in_axes)
        if status == PrefixStatus.NOT_A_PREFIX:
            need_reshard = True
            continue
        if status != PrefixStatus.STRICT_PREFIX:
            continue
        diff: list[AxisRef] = []
        n = len(out_axes)
        if out_axes and out_axes[-1] != in_axes[n - 1]:
            suffix = in_axes[n - 1].suffix_without_overlap(out_axes[-1], mesh)
            assert suffix is not None
            diff.append(suffix)
        diff.extend(in_axes[n:])
        if axis_set_diff(diff, added, mesh):
            need_reshard = True
            continue
        per_dim[d] = tuple(diff)
        s2u.extend(diff)
        tmp_dims[d] = in_dim
    return tmp_dims, per_dim, s2u, need_reshard


def convert_reshard_to_unreduced_collectives(op: Op, meshes: MeshTable, builder: Builder) -> bool:
    """An ``sdy.reshard`` that makes axes unreduced becomes the unreduced collectives."""
    if op.name != "sdy.reshard":
        return False
    builder.before(op)
    if insert_unreduced_collectives((op, 0), op.get_attr("sharding"), meshes, builder) is None:
        return False
    op.results[0].replace_all_uses_with(op.operands[0])
    op.erase()
    return True
