"""`sdy-manual-axes-cleanup`: canonical manual axes on every ``sdy.manual_computation``.

Shardy's import/manual_axes_cleanup.cc: manual axes are sorted in mesh order, and every
in/out sharding lists the manual axes it does not use as replicated axes.
"""

from __future__ import annotations

from dataclasses import replace

from shardwise.axis import AxisRef, axis_set_diff, sort_and_merge_axes
from shardwise.errors import VerifyError
from shardwise.ir import Module, Op, OpaqueType, Type
from shardwise.mesh import Mesh
from shardwise.passes import sdy_pass
from shardwise.sdy.call_graph import mesh_of, ops_in_post_order
from shardwise.sharding import (
    ManualAxes,
    MeshRef,
    TensorSharding,
    TensorShardingPerValue,
    common_mesh_or_ref,
)

__all__ = ["manual_axes_cleanup"]

_MANUAL = frozenset({"sdy.manual_computation"})


def _shardings(op: Op, key: str) -> list[TensorSharding]:
    attr = op.get_attr(key)
    return list(attr.shardings) if isinstance(attr, TensorShardingPerValue) else []


def _is_shaped(type_: Type) -> bool:
    return not isinstance(type_, OpaqueType) or type_.text.startswith(("tensor<", "vector<"))


def _with_unused_manual_axes(
    shardings: list[TensorSharding],
    types: list[Type],
    manual: list[AxisRef],
    mesh_or_ref: MeshRef,
    mesh: Mesh,
) -> TensorShardingPerValue | None:
    result = []
    modified = False
    for sharding, type_ in zip(shardings, types, strict=True):
        unused = axis_set_diff(manual, list(sharding.all_axes()), mesh) if _is_shaped(type_) else []
        if not unused:
            result.append(sharding)
            continue
        replicated = sort_and_merge_axes(
            list(sharding.replicated_axes) + unused, mesh, mesh.axis_key
        )
        result.append(replace(sharding, mesh_or_ref=mesh_or_ref, replicated_axes=tuple(replicated)))
        modified = True
    return TensorShardingPerValue(tuple(result)) if modified else None


def _clean_up(module: Module, op: Op) -> None:
    ins, outs = _shardings(op, "in_shardings"), _shardings(op, "out_shardings")
    manual_attr = op.get_attr("manual_axes")
    names = list(manual_attr.axes) if isinstance(manual_attr, ManualAxes) else []
    if not ins and not outs:
        body = op.regions[0].entry.ops
        if names and body and body[0].name != "sdy.return":
            raise VerifyError(
                "op has manual_axes when there are no in/out shardings and the body is not "
                "empty. This isn't allowed at this stage, please contact the Shardy team or "
                "file a bug.",
                op.location,
            )
        return
    mesh_or_ref = common_mesh_or_ref([*ins, *outs], module.meshes())
    assert mesh_or_ref is not None, "expected inputs and outputs to have a common mesh"
    mesh = mesh_of(module, TensorSharding(mesh_or_ref))
    assert mesh is not None, f"unknown mesh {mesh_or_ref}"
    ordered = sorted(names, key=mesh.axis_index)
    if ordered != names:
        op.properties["manual_axes"] = ManualAxes(tuple(ordered))
    manual = [AxisRef(n) for n in ordered]
    new_ins = _with_unused_manual_axes(
        ins, [v.type for v in op.operands], manual, mesh_or_ref, mesh
    )
    if new_ins is not None:
        op.properties["in_shardings"] = new_ins
    new_outs = _with_unused_manual_axes(
        outs, [v.type for v in op.results], manual, mesh_or_ref, mesh
    )
    if new_outs is not None:
        op.properties["out_shardings"] = new_outs


@sdy_pass("sdy-manual-axes-cleanup")
def manual_axes_cleanup(module: Module) -> None:
    """Sort manual axes by mesh order; add each sharding's unused manual axes as replicated."""
    clean_up_manual_computations(module, ops_in_post_order(module.op, _MANUAL))


def clean_up_manual_computations(module: Module, ops: list[Op]) -> None:
    """`manual_axes_cleanup` on the manual computations among `ops` (in MLIR's walk order);
    changes no other op, and adds or removes none."""
    for op in ops:
        if op.name in _MANUAL:
            _clean_up(module, op)
