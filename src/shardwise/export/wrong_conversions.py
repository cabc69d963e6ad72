"""Reject what jaxlib 0.10.2's chain partitions into a wrong program (found by `fuzz --check`).

`check_wrong_conversions` raises a `ShardwiseError` at the first op below, so that `partition`
never writes a program that computes other values than the global one. For each, the
reference's own chain prints the same wrong program, and `shardwise check` shows its values
differ.

1. A ``stablehlo.reverse`` along a sharded dim. Its rule makes that dim a permutation factor,
   which explicit reshards leave sharded; global-to-local then reverses each device's shard
   in place, where the shards must also trade places.

2. A ``stablehlo.dynamic_update_slice`` whose update is smaller than the operand along a dim
   the operand or the update shards: global-to-local updates each device's shard (or writes
   each device's piece of the update) at the global start indices.

3. An ``sdy.all_reduce`` of the result of another over the same axes: explicit reshards add
   one for an unreduced argument twice, and the sum is taken twice (N times the value) (the
   default mode erases the second first: `fallback._drop_repeated_sum`).

4. A ``stablehlo.reshape`` whose result is sharded along a dim holding a factor its operand
   does not have (a reshape that does not factor, such as 3x32 -> 4x24: its rule gives
   each side factors of its own). Explicit reshards leave the result sharded, and each
   device reshapes its own operand piece, which is not its piece of the result.

5. A strided ``stablehlo.slice`` along a sharded dim whose shard size the stride does not
   divide (0:4:3 over 2 shards of 2): each device slices its shard from its own start, so
   every shard after the first picks the wrong elements.

6. An op reading a value sharded on another mesh than its result's (other axes or another
   device order): explicit reshards find no common mesh and move no data, so each device
   computes on a piece of the other layout (a missing all-reduce, or another's piece).

7. Device offsets along a skewed sub-axis.

8. A ``stablehlo.reduce`` over a sharded dim (an ``sdy.all_reduce`` of its result follows)
   whose init value is not the identity of its op: each device's partial reduce starts from
   the init, and the all-reduce combines them, so a sum gets the init N times.

9. A sharding with two sub-axes of one axis that cannot coexist (``"z":(1)2`` and
   ``"z":(3)2`` of ``z=6``: the major 2 of ``2x3`` and the minor 2 of ``3x2``). The
   verifiers accept it, but no device layout realizes it: the device's two digits
   ``(d // 3, d % 2)`` repeat (devices 0 and 2 get one tile, no device gets another), and the
   collectives from or to it mix tiles (fuzz --check 2050-265-9).

The reference's `getShardIndex` reads a sub-axis ``"x":(p)s`` of an axis of size X as the
digit ``(coord_x // p) % s``. By Shardy's definition (the axis reshaped as ``[p, s, X/(p*s)]``,
which XLA's tile assignments follow too) the digit is ``(coord_x // (X / (p*s))) % s``. The two
agree only when ``p == X / (p*s)``: a sub-axis with as much of the axis on its major side as
on its minor side (``"x":(2)2`` of ``x=8``). For any other sub-axis, every offset table the
conversion builds from `getShardIndex` gives devices the wrong piece: the ``dynamic_slice`` of
an ``sdy.all_slice``, a sharded ``iota``, a ``pad`` or ``gather``/``scatter`` offset. Found by
``shardwise fuzz --check`` (docs/fuzzing.md); `shardwise check` shows the wrong values, and
the reference's own chain prints the same program.

(The pairs of a ``collective_permute`` over sub-axes come from the same formula; `partition`
rejects those itself.)
"""

from __future__ import annotations

from shardwise.axis import AxisRef
from shardwise.errors import ShardwiseError
from shardwise.ir import Module, Op, TensorType
from shardwise.mesh import Mesh
from shardwise.sharding import TensorSharding

__all__ = ["OFFSET_OPS", "check_sub_axes_coexist", "check_wrong_conversions", "skewed"]

# Ops whose per-device program reads this device's offset along a sharded dim from a table
# built by `getShardIndex`.
OFFSET_OPS = frozenset(
    {"sdy.all_slice", "stablehlo.iota", "stablehlo.pad", "stablehlo.gather", "stablehlo.scatter"}
)


def skewed(axis: AxisRef, mesh: Mesh) -> bool:
    """Whether the reference's reading of sub-axis `axis` differs from Shardy's definition."""
    info = axis.sub_axis_info
    if info is None:
        return False
    minor = mesh.axis_size(axis.name) // (info.pre_size * info.size)
    return minor != info.pre_size


def check_wrong_conversions(module: Module, sub_axes: bool = True) -> None:
    """Raise at the first op the chain would convert into a wrong program (module docstring).

    `sub_axes` False leaves out 7 (`shardwise partition`'s default mode reads sub-axes by
    Shardy's definition, `convert_global_to_local.builder.SUB_AXES`)."""
    from shardwise.sdy.shardings import get_sharding

    meshes = module.meshes()
    for op in module.walk():
        _check_device_orders(op, meshes)
        if op.name == "stablehlo.reduce":
            _check_reduce_init(op)
        if op.name == "stablehlo.reverse":
            _check_reverse(op, get_sharding(op.results[0]))
        if op.name == "stablehlo.dynamic_update_slice":
            _check_update(op, get_sharding(op.results[0]), "operand")
            _check_update(op, get_sharding(op.operands[1]), "update")
        if op.name == "sdy.all_reduce":
            _check_all_reduce(op)
        if op.name == "stablehlo.reshape":
            _check_reshape(op, get_sharding(op.results[0]))
        if op.name == "stablehlo.slice":
            _check_strided_slice(op, get_sharding(op.operands[0]), meshes)
        _check_sub_axes_coexist(op)
        if not sub_axes or op.name not in OFFSET_OPS:
            continue
        for value in (*op.operands, *op.results):
            sharding = get_sharding(value)
            if sharding is not None:
                _check(op, sharding, meshes)


def _check(op: Op, sharding: TensorSharding, meshes: dict[str, object]) -> None:
    ref = sharding.mesh_or_ref
    mesh = ref if isinstance(ref, Mesh) else meshes.get(str(ref).lstrip("@"))
    if not isinstance(mesh, Mesh):
        return
    for dim in sharding.dim_shardings:
        for axis in dim.axes:
            if skewed(axis, mesh):
                raise ShardwiseError(
                    f"'{op.name}' with sharding {sharding} takes device offsets along the "
                    f"sub-axis {axis}: jaxlib 0.10.2's sdy-convert-global-to-local reads that "
                    "sub-axis as the wrong digit of the axis and gives devices the wrong "
                    "pieces (a wrong program); shard on whole axes there (an "
                    "sdy.sharding_constraint), or give the per-device program yourself",
                    op.location,
                )


def check_sub_axes_coexist(module: Module) -> None:
    """Raise at the first sharding with two sub-axes that cannot coexist (9 of the module
    docstring); `partition` runs it on the user's shardings before propagating, so the
    error points at the annotation."""
    for op in module.walk():
        _check_sub_axes_coexist(op)


def _check_sub_axes_coexist(op: Op) -> None:
    from shardwise.ir.funcs import func_result_types
    from shardwise.sdy.shardings import get_func_result_sharding, get_sharding

    shardings = [get_sharding(v) for v in (*op.operands, *op.results)]
    if op.name == "func.func":
        shardings += [get_func_result_sharding(op, i) for i in range(len(func_result_types(op)))]
    for sharding in shardings:
        if sharding is None:
            continue
        axes = [*sharding.dim_axes(), *sharding.unreduced_axes]
        for i, a in enumerate(axes):
            other = next((b for b in axes[i + 1 :] if not a.can_coexist(b)), None)
            if other is not None:
                raise ShardwiseError(
                    f"'{op.name}' has the sharding {sharding}, with the sub-axes {a} and "
                    f"{other} that cannot coexist (no one decomposition of axis '{a.name}' has both): no device "
                    "layout gives each device one tile of it, and its collectives would mix "
                    "tiles (a wrong program); use sub-axes of one decomposition "
                    f"of '{a.name}' (of two, the later's pre-size a multiple of the earlier's "
                    "pre-size times size)",
                    op.location,
                )


def _check_reverse(op: Op, sharding: TensorSharding | None) -> None:
    from shardwise.rules.stablehlo_attrs import parse_i64_array

    if sharding is None:
        return
    for dim in parse_i64_array(op.properties["dimensions"]):
        axes = sharding.dim_shardings[dim].axes
        if axes:
            raise ShardwiseError(
                f"'stablehlo.reverse' reverses dimension {dim}, which is sharded on "
                f"{', '.join(str(a) for a in axes)}: jaxlib 0.10.2's chain leaves it sharded "
                "and reverses each device's shard in place, but the shards must trade places "
                "too (a wrong program); replicate that dimension before the reverse (an "
                "sdy.sharding_constraint)",
                op.location,
            )


def _check_update(op: Op, sharding: TensorSharding | None, which: str) -> None:
    operand, update = op.operands[0].type, op.operands[1].type
    if sharding is None or not isinstance(operand, TensorType):
        return
    if not isinstance(update, TensorType):
        return
    for dim, (whole, part) in enumerate(zip(operand.shape, update.shape, strict=True)):
        axes = sharding.dim_shardings[dim].axes
        if axes and whole != part:
            raise ShardwiseError(
                f"'stablehlo.dynamic_update_slice' updates {part} of the {whole} elements of "
                f"dimension {dim}, which its {which} shards on {', '.join(str(a) for a in axes)}: "
                "jaxlib 0.10.2's sdy-convert-global-to-local updates every device's shard at "
                "the global start indices (a wrong program); replicate that dimension of the "
                f"{which} before the update (an sdy.sharding_constraint)",
                op.location,
            )


def _check_all_reduce(op: Op) -> None:
    from shardwise.export.collective_attrs import parse_axis_ref_list

    source = op.operands[0].defining_op
    if source is None or source.name != "sdy.all_reduce":
        return
    axes = {a.name for a in parse_axis_ref_list(op.properties["reduction_axes"])}
    before = {a.name for a in parse_axis_ref_list(source.properties["reduction_axes"])}
    if axes & before:
        raise ShardwiseError(
            f"'sdy.all_reduce' over {sorted(axes & before)} sums a value the all-reduce before "
            "it has already summed over those axes (jaxlib 0.10.2's explicit reshards insert "
            "both, for an unreduced value): every element would be counted again (a wrong "
            "program); drop the unreduced axes of the value, or reduce it yourself",
            op.location,
        )


def _check_reshape(op: Op, sharding: TensorSharding | None) -> None:
    from shardwise.rules.registry import create_op_sharding_rule

    if sharding is None or sharding.is_fully_replicated:
        return
    rule = create_op_sharding_rule(op)
    if rule is None or not rule.operand_mappings or not rule.result_mappings:
        return
    operand_factors = {f for dim in rule.operand_mappings[0] for f in dim}
    for dim, factors in enumerate(rule.result_mappings[0]):
        axes = sharding.dim_shardings[dim].axes
        own = [f for f in factors if f not in operand_factors and rule.factor_sizes[f] > 1]
        if axes and own:
            raise ShardwiseError(
                f"'stablehlo.reshape' result dimension {dim} is sharded on "
                f"{', '.join(str(a) for a in axes)}, but its factors are not the operand's "
                f"(rule {rule}): jaxlib 0.10.2's chain reshapes each device's operand piece, "
                "which is not its piece of the result (a wrong program); replicate that "
                "dimension of the result (an sdy.sharding_constraint after the reshape)",
                op.location,
            )


def _check_strided_slice(
    op: Op, sharding: TensorSharding | None, meshes: dict[str, object]
) -> None:
    from shardwise.rules.stablehlo_attrs import parse_i64_array

    operand = op.operands[0].type
    if sharding is None or not isinstance(operand, TensorType):
        return
    ref = sharding.mesh_or_ref
    mesh = ref if isinstance(ref, Mesh) else meshes.get(str(ref).lstrip("@"))
    if not isinstance(mesh, Mesh):
        return
    strides = parse_i64_array(op.properties["strides"])
    for dim, (stride, size) in enumerate(zip(strides, operand.shape, strict=True)):
        axes = sharding.dim_shardings[dim].axes
        if not axes or stride == 1:
            continue
        shards = 1
        for axis in axes:
            shards *= axis.size(mesh)
        if (size // shards) % stride:
            raise ShardwiseError(
                f"'stablehlo.slice' takes elements at stride {stride} along dimension {dim}, which is "
                f"sharded on {', '.join(str(a) for a in axes)} in shards of {size // shards}: "
                "jaxlib 0.10.2's sdy-convert-global-to-local slices each shard from its own "
                "start, so the shards after the first pick the wrong elements (a wrong "
                "program); replicate that dimension before the slice (an "
                "sdy.sharding_constraint)",
                op.location,
            )


def _mesh(sharding: TensorSharding | None, meshes: dict[str, object]) -> Mesh | None:
    if sharding is None:
        return None
    ref = sharding.mesh_or_ref
    mesh = ref if isinstance(ref, Mesh) else meshes.get(str(ref).lstrip("@"))
    return mesh if isinstance(mesh, Mesh) else None


def _check_device_orders(op: Op, meshes: dict[str, object]) -> None:
    """An op whose operand is sharded on another mesh than its result's (other axes, or
    another device order): explicit reshards find no common mesh and leave it as it is."""
    from shardwise.sdy.shardings import get_sharding

    if not op.results or op.name.startswith(("func.", "sdy.")):
        return
    out = _mesh(get_sharding(op.results[0]), meshes)
    if out is None or not out.axes:
        return
    for value in op.operands:
        sharding = get_sharding(value)
        mesh = _mesh(sharding, meshes)
        if sharding is None or sharding.is_fully_replicated or mesh is None or mesh == out:
            continue
        raise ShardwiseError(
            f"'{op.name}' reads a value sharded on the mesh {mesh} and writes one on the mesh "
            f"{out}: jaxlib 0.10.2's explicit reshards find no common mesh and leave the op "
            "as it is, so each device computes on a piece of the other mesh's layout (a "
            "wrong program); put both on one mesh",
            op.location,
        )


# The identity of each reduction op, as a constant's ``dense<...>`` text may spell it.
_IDENTITIES = {
    "stablehlo.add": {
        "0",
        "0.0",
        "-0.0",
        "0.000000e+00",
        "-0.000000e+00",
        "false",
        "(0.000000e+00,0.000000e+00)",
    },
    "stablehlo.or": {"false", "0"},
    "stablehlo.multiply": {"1", "1.0", "1.000000e+00", "true"},
    "stablehlo.and": {"true", "1", "-1"},
    "stablehlo.maximum": {"0xFF800000", "0xFFF0000000000000", "0xFC00", "0xFF80", "-inf", "false"},
    "stablehlo.minimum": {"0x7F800000", "0x7FF0000000000000", "0x7C00", "0x7F80", "inf", "true"},
}


def _check_reduce_init(op: Op) -> None:
    """8 of the module docstring."""
    if not any(u.name == "sdy.all_reduce" for r in op.results for u in r.users):
        return
    body = op.regions[0].blocks[0].ops if op.regions and op.regions[0].blocks else []
    kinds = {b.name for b in body if b.name != "stablehlo.return"}
    identity = _IDENTITIES.get(next(iter(kinds))) if len(kinds) == 1 else None
    half = len(op.operands) // 2
    for init in op.operands[half:]:
        const = init.defining_op
        text = ""
        if const is not None and const.name in ("stablehlo.constant", "sdy.constant"):
            value = const.properties.get("value")
            text = str(getattr(value, "text", value))
        splat = text.removeprefix("dense<").split(">", 1)[0] if text.startswith("dense<") else None
        if identity is None or splat not in identity:
            raise ShardwiseError(
                f"'{op.name}' reduces a sharded dimension starting from the init value "
                f"{splat or 'of a non-constant operand'}, which is not the identity of its "
                "reduction: each device's partial result starts from it, and the all-reduce "
                "after it combines them, counting the init once per device (a wrong program); "
                "reduce from the identity and combine the init after the reduce",
                op.location,
            )
