"""The canonicalization patterns Shardy labels ``sdy-collective`` and ``sdy-reshard``.

From ``ir/canonicalization.td`` / ``.cc``; per op in MLIR's order (benefit first: a pattern
matching two ops beats one matching one op; equal benefits keep registration order):

| op                        | patterns                                                        |
| ------------------------- | --------------------------------------------------------------- |
| sdy.reshard               | reshard(reshard(x)) -> reshard(x) when the inner has one use     |
| sdy.all_gather            | no gathering axes -> operand                                    |
| sdy.all_reduce            | all_reduce(replicated_to_unreduced(x)) with the same axes -> x;  |
|                           | no reduction axes -> operand;                                   |
|                           | all_reduce(sharded_to_unreduced(x)) -> all_gather(x)            |
| sdy.all_slice             | all_slice(all_gather(x)) with the same axes -> x;               |
|                           | no slicing axes -> operand; all_reduce + all_slice fusion into  |
|                           | reduce_scatter (+ residual all_slice)                           |
| sdy.all_to_all            | all_to_all(all_to_all(x)) on disjoint dims -> one all_to_all;   |
|                           | unused -> erased                                                |
| sdy.collective_permute    | operand already has the out sharding -> operand                 |
| sdy.reduce_scatter        | no axes -> operand                                              |
"""

from __future__ import annotations

from shardwise.axis import AxisRef, add_axis_or_merge, sort_and_merge_axes
from shardwise.export.canonicalize import (
    COLLECTIVE_LABEL,
    RESHARD_LABEL,
    Pattern,
    Rewriter,
    canonicalize,
    fused_loc_text,
)
from shardwise.export.collective_attrs import (
    AllToAllParam,
    all_to_all_params_attr,
    list_of_axis_ref_lists_attr,
    parse_all_to_all_params,
    parse_axis_ref_list,
    parse_list_of_axis_ref_lists,
)
from shardwise.ir import Module, Op
from shardwise.mesh import Mesh
from shardwise.sdy.shardings import get_sharding
from shardwise.sharding import DimensionSharding, TensorSharding

__all__ = ["patterns_for_labels", "canonicalize_with_labels"]


def _out_sharding(op: Op) -> TensorSharding:
    sharding = op.get_attr("out_sharding")
    assert isinstance(sharding, TensorSharding), f"{op.name} without out_sharding"
    return sharding


def _defining(op: Op, name: str) -> Op | None:
    d = op.operands[0].defining_op
    return d if d is not None and d.name == name else None


def _new_op(like: Op, name: str, operand, properties: dict, location_of: Op) -> Op:
    return Op(
        name,
        [operand],
        [like.results[0].type],
        properties=properties,
        location=location_of.location,
        loc_text=location_of.loc_text,
    )


def _reshard_of_reshard(op: Op, rw: Rewriter) -> bool:
    inner = _defining(op, "sdy.reshard")
    if inner is None or len(inner.results[0].uses) != 1:
        return False
    new = _new_op(op, "sdy.reshard", inner.operands[0], {"sharding": op.get_attr("sharding")}, op)
    new.loc_text = fused_loc_text(op, inner)
    rw.insert_before(op, new)
    rw.replace_op(op, new.results)
    return True


def _noop_if_empty(axes_key: str, per_dim: bool) -> Pattern:
    def pattern(op: Op, rw: Rewriter) -> bool:
        attr = op.get_attr(axes_key)
        if per_dim:
            empty = all(not axes for axes in parse_list_of_axis_ref_lists(attr))
        else:
            empty = not parse_axis_ref_list(attr)
        if not empty:
            return False
        rw.replace_op(op, [op.operands[0]])
        return True

    return pattern


def _all_slice_of_all_gather(op: Op, rw: Rewriter) -> bool:
    gather = _defining(op, "sdy.all_gather")
    if gather is None:
        return False
    gathering = parse_list_of_axis_ref_lists(gather.get_attr("gathering_axes"))
    if gathering != parse_list_of_axis_ref_lists(op.get_attr("slicing_axes")):
        return False
    rw.replace_op(op, [gather.operands[0]])
    return True


def _all_reduce_of_replicated_to_unreduced(op: Op, rw: Rewriter) -> bool:
    r2u = _defining(op, "sdy.replicated_to_unreduced")
    if r2u is None or parse_axis_ref_list(r2u.get_attr("axes")) != parse_axis_ref_list(
        op.get_attr("reduction_axes")
    ):
        return False
    rw.replace_op(op, [r2u.operands[0]])
    return True


class _MeshLookup:
    def __init__(self, module: Module) -> None:
        self.meshes = module.meshes()

    def __call__(self, sharding: TensorSharding) -> Mesh:
        if isinstance(sharding.mesh_or_ref, Mesh):
            return sharding.mesh_or_ref
        mesh = self.meshes[sharding.mesh_or_ref]
        assert isinstance(mesh, Mesh)
        return mesh


def _all_reduce_of_sharded_to_unreduced(mesh_of: _MeshLookup) -> Pattern:
    def pattern(op: Op, rw: Rewriter) -> bool:
        s2u = _defining(op, "sdy.sharded_to_unreduced")
        if s2u is None:
            return False
        axes = [a for dim in parse_list_of_axis_ref_lists(s2u.get_attr("axes")) for a in dim]
        mesh = mesh_of(_out_sharding(s2u))
        merged = sort_and_merge_axes(axes, mesh, mesh.axis_key)
        if tuple(merged) != parse_axis_ref_list(op.get_attr("reduction_axes")):
            return False
        props = {
            "gathering_axes": s2u.get_attr("axes"),
            "out_sharding": op.get_attr("out_sharding"),
        }
        new = _new_op(op, "sdy.all_gather", s2u.operands[0], props, op)
        rw.insert_before(op, new)
        rw.replace_op(op, new.results)
        return True

    return pattern


def _all_to_all_fusion(op: Op, rw: Rewriter) -> bool:
    inner = _defining(op, "sdy.all_to_all")
    if inner is None or len(inner.results[0].uses) != 1:
        return False
    inner_params = parse_all_to_all_params(inner.get_attr("params"))
    outer_params = parse_all_to_all_params(op.get_attr("params"))
    dims = [d for p in inner_params + outer_params for d in (p.src_dim, p.tgt_dim)]
    if len(set(dims)) != len(dims):
        return False
    combined: tuple[AllToAllParam, ...] = tuple(
        sorted(inner_params + outer_params, key=lambda p: p.src_dim)
    )
    props = {
        "params": all_to_all_params_attr(combined),
        "out_sharding": op.get_attr("out_sharding"),
    }
    new = _new_op(op, "sdy.all_to_all", inner.operands[0], props, op)
    new.loc_text = fused_loc_text(op, inner)
    rw.insert_before(op, new)
    rw.replace_op(op, new.results)
    return True


def _all_to_all_no_use(op: Op, rw: Rewriter) -> bool:
    if op.results[0].uses:
        return False
    rw.replace_op(op, [op.operands[0]])
    return True


def _collective_permute_noop(op: Op, rw: Rewriter) -> bool:
    operand_sharding = get_sharding(op.operands[0])
    if operand_sharding is None or not operand_sharding.is_equivalent(op.get_attr("out_sharding")):
        return False
    rw.replace_op(op, [op.operands[0]])
    return True


def _split_slicing_axes(
    slicing: tuple[tuple[AxisRef, ...], ...], reduction: tuple[AxisRef, ...]
) -> tuple[list[tuple[AxisRef, ...]], list[tuple[AxisRef, ...]]] | None:
    """Per dim: the longest slicing-axes prefix made of reduction axes, and the rest.

    None unless every reduction axis is used up.
    """
    remaining = set(reduction)
    scatter, residual = [], []
    for axes in slicing:
        i = 0
        while i < len(axes) and axes[i] in remaining:
            remaining.discard(axes[i])
            i += 1
        scatter.append(axes[:i])
        residual.append(axes[i:])
    if remaining:
        return None
    return scatter, residual


def _reduce_scatter_sharding(
    all_reduce: Op, all_slice: Op, scatter: list[tuple[AxisRef, ...]], mesh: Mesh
) -> TensorSharding:
    out = _out_sharding(all_reduce)
    operand = get_sharding(all_reduce.operands[0])
    if operand is None:
        operand = TensorSharding.fully_closed(mesh, all_reduce.operands[0].type.rank)
    dims = []
    for dim, extra in zip(operand.dim_shardings, scatter, strict=True):
        axes = list(dim.axes)
        for axis in extra:
            add_axis_or_merge(axes, axis, mesh)
        dims.append(DimensionSharding(tuple(axes), is_closed=True))
    slice_out = _out_sharding(all_slice)
    return TensorSharding(
        out.mesh_or_ref, tuple(dims), slice_out.replicated_axes, slice_out.unreduced_axes
    )


def _reduce_scatter_fusion(mesh_of: _MeshLookup) -> Pattern:
    """all_reduce + all_slice users (all identical) -> reduce_scatter (+ residual all_slice)."""

    def pattern(op: Op, rw: Rewriter) -> bool:
        all_reduce = _defining(op, "sdy.all_reduce")
        if all_reduce is None:
            return False
        slicing = parse_list_of_axis_ref_lists(op.get_attr("slicing_axes"))
        users = all_reduce.results[0].users
        for user in users:
            if user.name != "sdy.all_slice":
                return False
            if parse_list_of_axis_ref_lists(user.get_attr("slicing_axes")) != slicing:
                return False
            block = op.parent
            if (
                user.parent is block
                and block is not None
                and block.ops.index(user) < block.ops.index(op)
            ):
                return False
        split = _split_slicing_axes(
            slicing, parse_axis_ref_list(all_reduce.get_attr("reduction_axes"))
        )
        if split is None:
            return False
        scatter, residual = split
        mesh = mesh_of(_out_sharding(all_reduce))
        props = {
            "reduce_scatter_axes": list_of_axis_ref_lists_attr(tuple(scatter)),
            "out_sharding": _reduce_scatter_sharding(all_reduce, op, scatter, mesh),
        }
        new = rw.insert_before(
            op, _new_op(op, "sdy.reduce_scatter", all_reduce.operands[0], props, all_reduce)
        )
        final = new
        if any(residual):
            props = {
                "slicing_axes": list_of_axis_ref_lists_attr(tuple(residual)),
                "out_sharding": op.get_attr("out_sharding"),
            }
            final = rw.insert_before(op, _new_op(op, "sdy.all_slice", new.results[0], props, op))
        for user in users:
            rw.replace_op(user, final.results)
        rw.erase_op(all_reduce)
        return True

    return pattern


def patterns_for_labels(module: Module, labels: frozenset[str]) -> dict[str, list[Pattern]]:
    """The enabled patterns per root op name, in the order MLIR tries them."""
    mesh_of = _MeshLookup(module)
    table: dict[str, list[Pattern]] = {}
    if RESHARD_LABEL in labels:
        table["sdy.reshard"] = [_reshard_of_reshard]
    if COLLECTIVE_LABEL in labels:
        table.update(
            {
                "sdy.all_gather": [_noop_if_empty("gathering_axes", per_dim=True)],
                "sdy.all_reduce": [
                    _all_reduce_of_replicated_to_unreduced,
                    _noop_if_empty("reduction_axes", per_dim=False),
                    _all_reduce_of_sharded_to_unreduced(mesh_of),
                ],
                "sdy.all_slice": [
                    _all_slice_of_all_gather,
                    _noop_if_empty("slicing_axes", per_dim=True),
                    _reduce_scatter_fusion(mesh_of),
                ],
                "sdy.all_to_all": [_all_to_all_fusion, _all_to_all_no_use],
                "sdy.collective_permute": [_collective_permute_noop],
                "sdy.reduce_scatter": [_noop_if_empty("reduce_scatter_axes", per_dim=True)],
            }
        )
    return table


def canonicalize_with_labels(module: Module, labels: frozenset[str]) -> None:
    """`canonicalize{enable-patterns=<labels>}` as far as our modules are concerned."""
    canonicalize(module, patterns_for_labels(module, labels))
