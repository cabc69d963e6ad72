"""Whether two shardings put the same piece of a value on every device.

The extended conversion (``ConversionOptions.beyond_reference``) gives values that meet at a
call or a loop boundary one local type. That is only right when both sides also hold the same
piece on each device: two shardings of equal local shapes (``[{"x"}, {}]`` and
``[{"y"}, {}]`` on a 2x2 mesh) hold different pieces. `same_layout` is that test, and
`require_same_layout` raises where a boundary would mix two layouts.
"""

from __future__ import annotations

from shardwise.errors import ShardwiseError
from shardwise.export.convert_global_to_local.state import ConversionState
from shardwise.ir import Op
from shardwise.mesh import Mesh
from shardwise.sharding import TensorSharding

__all__ = ["same_layout", "require_same_layout"]


def _is_replicated(sharding: TensorSharding | None) -> bool:
    return sharding is None or (sharding.is_fully_replicated and not sharding.unreduced_axes)


def same_layout(state: ConversionState, a: TensorSharding | None, b: TensorSharding | None) -> bool:
    """Same mesh (resolved), same axes on every dim, same unreduced axes; none = replicated.

    | a                        | b                        | same |
    | ------------------------ | ------------------------ | ---- |
    | none                     | ``<@mesh, [{}, {}]>``    | yes  |
    | ``<@mesh, [{"x"}, {}]>`` | ``<@mesh, [{"x", ?}, {}]>`` | yes |
    | ``<@mesh, [{"x"}, {}]>`` | ``<@mesh, [{"y"}, {}]>`` | no   |
    | ``<@mesh, [{}]>``        | ``<@mesh, [{}], unreduced={"x"}>`` | no |
    | none                     | ``<@mesh, [{"x"}, {}]>`` | no   |
    """
    if _is_replicated(a) or _is_replicated(b):
        return _is_replicated(a) and _is_replicated(b)
    assert a is not None and b is not None
    mesh_a, mesh_b = state.mesh(a), state.mesh(b)
    if not isinstance(mesh_a, Mesh) or mesh_a != mesh_b:
        return False
    if a.rank != b.rank or set(a.unreduced_axes) != set(b.unreduced_axes):
        return False
    return all(x.axes == y.axes for x, y in zip(a.dim_shardings, b.dim_shardings, strict=True))


def require_same_layout(
    state: ConversionState,
    op: Op,
    what: str,
    source: TensorSharding | None,
    target: TensorSharding | None,
) -> None:
    """Raise, naming `op` and `what` meets what, unless the two shardings lay out alike."""
    if same_layout(state, source, target):
        return
    raise ShardwiseError(
        f"'{op.name}': {what}: {_text(source)} meets {_text(target)}, which put different "
        "pieces on each device; the per-device program would mix them (insert an "
        "sdy.reshard, or run sdy-insert-explicit-reshards first)",
        op.location,
    )


def _text(sharding: TensorSharding | None) -> str:
    return "no sharding" if sharding is None else str(sharding)
