"""The verifier of ops: manual computations and whole modules, as MLIR's verifier walks them
(Shardy's `ir/verifiers.cc`, op half), with the op context Shardy adds to messages."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from shardwise.axis import AxisRef, quote_string
from shardwise.errors import UNKNOWN_LOCATION, Location
from shardwise.ir import (
    SHARDING_ATTR,
    SHARDING_RULE_ATTR,
    Module,
    Op,
    TensorType,
    Type,
    func_arg_attrs,
    func_result_attrs,
    func_result_types,
)
from shardwise.mesh import Mesh
from shardwise.rules.rule import OpShardingRule
from shardwise.sharding import (
    ManualAxes,
    TensorSharding,
    TensorShardingPerValue,
)
from shardwise.verify.attrs import (
    COLLECTIVE_OPS,
    MANUAL_COMPUTATION,
    ManualAxisOwners,
    bound_axis_error,
    fail,
    prefixed,
    resolve_mesh,
    verify_mesh,
    verify_op_sharding_rule,
    verify_sharding_per_value,
    verify_tensor_sharding,
)

# -- manual computations ----------------------------------------------------------------------


def verify_manual_computation(
    in_shardings: TensorShardingPerValue,
    out_shardings: TensorShardingPerValue,
    manual_axes: ManualAxes,
    types: tuple[Sequence[Type], Sequence[Type], Sequence[Type], Sequence[Type]],
    meshes: Mapping[str, object],
    location: Location = UNKNOWN_LOCATION,
    enclosing_manual_axes: ManualAxisOwners | None = None,
) -> None:
    """`ManualComputationOp::verify` + `verifySymbolUses`.

    `types` = (operand types, body argument types, result types, body return types).
    """
    enclosing = enclosing_manual_axes or {}
    for name in manual_axes.axes:
        if name in enclosing:
            raise bound_axis_error(name, enclosing[name], location)
    operand_types, arg_types, result_types, return_types = types
    manual = set(manual_axes.axes)
    for kind, shardings, global_types, local_types in (
        ("operand", in_shardings, operand_types, arg_types),
        ("result", out_shardings, result_types, return_types),
    ):
        if not global_types and not local_types and not shardings.shardings:
            continue
        with prefixed(f"{kind} "):
            verify_sharding_per_value(shardings, global_types, meshes, location, enclosing)
        _verify_manual_values(kind, shardings, global_types, local_types, manual, meshes, location)
    if not in_shardings.shardings and not out_shardings.shardings:
        return
    mesh = _common_mesh(in_shardings.shardings + out_shardings.shardings, meshes)
    if mesh is None and manual_axes.axes:
        raise fail(
            "all in and out shardings must be bound to the same mesh or an empty mesh.", location
        )
    for name in manual_axes.axes:
        if mesh is not None and not mesh.has_axis(name):
            raise fail(f"unknown manual axis: {quote_string(name)}", location)


def _verify_manual_values(
    kind: str,
    shardings: TensorShardingPerValue,
    global_types: Sequence[Type],
    local_types: Sequence[Type],
    manual: set[str],
    meshes: Mapping[str, object],
    location: Location,
) -> None:
    if len(global_types) != len(local_types):
        raise fail(
            f"number of op {kind}s and region {kind}s must match. Op has {len(global_types)} op "
            f"{kind}s and {len(local_types)} region {kind}s",
            location,
        )
    entries = zip(global_types, local_types, shardings.shardings, strict=False)
    for index, (global_type, local_type, sharding) in enumerate(entries):
        for dim, dim_sharding in enumerate(sharding.dim_shardings):
            _verify_manual_axes_first(kind, index, dim, dim_sharding.axes, manual, location)
        if not isinstance(global_type, TensorType):
            continue
        mesh = resolve_mesh(sharding, meshes)
        assert mesh is not None  # verified above
        local_shape = []
        for size, dim_sharding in zip(global_type.shape, sharding.dim_shardings, strict=True):
            manual_size = 1
            for axis in dim_sharding.axes:
                if axis.name in manual:
                    manual_size *= axis.size(mesh)
            if size >= 0 and size % manual_size != 0:
                raise fail(
                    f"{kind} dimension size {size} is not divisible by the manual axes size "
                    f"{manual_size}",
                    location,
                )
            local_shape.append(size if size < 0 else size // manual_size)
        expected = TensorType(tuple(local_shape), global_type.element_type)
        if expected != local_type:
            raise fail(
                f"{kind} shape, corresponding sharding, and region {kind} shape at index {index} "
                f"must match. Expected local shape '{expected}', actual local shape '{local_type}'",
                location,
            )


def _verify_manual_axes_first(
    kind: str, index: int, dim: int, axes: Sequence[AxisRef], manual: set[str], location: Location
) -> None:
    for position in range(1, len(axes)):
        if axes[position].name in manual and axes[position - 1].name not in manual:
            raise fail(
                f"{kind} sharding at index {index} must have all manual axes come before free "
                f"axes in its dimension sharding at index {dim}. Saw manual axis "
                f"{axes[position]} after free axis {axes[position - 1]}",
                location,
            )


def _common_mesh(shardings: Sequence[TensorSharding], meshes: Mapping[str, object]) -> Mesh | None:
    """`getCommonMesh`: the one non-empty mesh all shardings use (empty meshes are skipped)."""
    common: Mesh | None = None
    for sharding in shardings:
        mesh = resolve_mesh(sharding, meshes)
        if mesh is None:
            continue
        if common is None or common.is_empty:
            common = mesh
        elif not mesh.is_empty and mesh != common:
            return None
    return common


# -- modules ----------------------------------------------------------------------------------


def verify_module(module: Module) -> None:
    """Verify every ``#sdy`` attribute of `module` in context; raises the first `VerifyError`.

    Three passes in MLIR's order: attribute-level checks (meshes, including inline ones;
    Shardy fails these while building the attribute, so no op prefix), then each op's own
    verifier in pre-order (func argument/result shardings, ``sdy.sharding``,
    ``sdy.sharding_rule``, nested manual axes), then the symbol-use verifiers of the ``sdy``
    ops (constraints, reshards, manual computations). Op-level messages are prefixed like
    Shardy's: ``'<op>' op <context> - <message>``.
    """
    meshes = module.meshes()
    for op in module.walk():
        for value in sdy_values(op):
            _verify_attribute_level(value, op.location)
    for op in module.walk():
        with prefixed(f"'{op.name}' op "):
            _verify_op(op, meshes)
    for op in module.walk():
        with prefixed(f"'{op.name}' op "):
            _verify_symbol_uses(op, meshes)


def sdy_values(op: Op) -> Iterator[object]:
    """Every typed ``#sdy`` value attached to `op`, including func argument/result dicts."""
    for value in (*op.properties.values(), *op.attributes.values()):
        elements = getattr(value, "elements", None)
        if elements is None:
            yield value
            continue
        for element in elements:
            yield from getattr(element, "entries", {}).values()


def _verify_attribute_level(value: object, location: Location) -> None:
    if isinstance(value, Mesh):
        verify_mesh(value, location)
    elif isinstance(value, TensorSharding) and isinstance(value.mesh_or_ref, Mesh):
        verify_mesh(value.mesh_or_ref, location)
    elif isinstance(value, TensorShardingPerValue):
        for sharding in value.shardings:
            _verify_attribute_level(sharding, location)


def _enclosing_manual_axes(op: Op) -> dict[str, Location]:
    owners: dict[str, Location] = {}
    for ancestor in op.ancestors():
        axes = ancestor.get_attr("manual_axes")
        if ancestor.name == MANUAL_COMPUTATION and isinstance(axes, ManualAxes):
            for name in axes.axes:
                owners[name] = ancestor.location
    return owners


def _verify_op(op: Op, meshes: Mapping[str, object]) -> None:
    """The op's own verification: its discardable ``sdy`` attributes (`verifyOperationAttribute`)."""
    location = op.location
    manual = _enclosing_manual_axes(op)
    result_types = [r.type for r in op.results]
    if op.name == "func.func":
        _verify_func(op, meshes)
    sharding = op.attributes.get(SHARDING_ATTR)
    if sharding is not None:
        if not isinstance(sharding, TensorShardingPerValue):
            raise fail(
                "should have a sharding attribute of type TensorShardingPerValueAttr", location
            )
        with prefixed("result "):
            verify_sharding_per_value(sharding, result_types, meshes, location, manual)
    rule = op.attributes.get(SHARDING_RULE_ATTR)
    if rule is not None:
        if not isinstance(rule, OpShardingRule):
            raise fail(
                "should have a sharding rule attribute of type OpShardingRuleAttr for attr "
                f"named '{SHARDING_RULE_ATTR}'",
                location,
            )
        verify_op_sharding_rule(rule, [v.type for v in op.operands], result_types, location)
    if op.name == MANUAL_COMPUTATION:
        for name in _manual_axes(op.get_attr("manual_axes")).axes:
            if name in manual:
                raise bound_axis_error(name, manual[name], location)
    out_sharding = op.get_attr("out_sharding")
    if op.name in COLLECTIVE_OPS and isinstance(out_sharding, TensorSharding):
        # Step 2 of `verifyCollectiveOp`; the operand/result relation is not checked here.
        verify_tensor_sharding(out_sharding, result_types[0], meshes, location, manual)


def _verify_func(func: Op, meshes: Mapping[str, object]) -> None:
    """`verifyFuncAttribute` for every argument and result ``sdy.sharding``."""
    if not func.regions or not func.regions[0].blocks:
        return  # a declaration: no argument types to check against
    arg_types = [a.type for a in func.regions[0].entry.args]
    result_types = func_result_types(func)
    for kind, types, attrs_of in (
        ("arg", arg_types, func_arg_attrs),
        ("result", result_types, func_result_attrs),
    ):
        for index, type in enumerate(types):
            attrs = attrs_of(func, index)
            if not attrs or SHARDING_ATTR not in attrs:
                continue
            sharding = attrs[SHARDING_ATTR]
            with prefixed(f"{kind} {index} - "):
                if not isinstance(sharding, TensorSharding):
                    raise fail(
                        "should have a sharding attribute of type TensorShardingAttr", func.location
                    )
                verify_tensor_sharding(sharding, type, meshes, func.location)


def _verify_symbol_uses(op: Op, meshes: Mapping[str, object]) -> None:
    """`verifySymbolUses` of the ``sdy`` ops whose inherent attributes hold shardings."""
    location = op.location
    manual = _enclosing_manual_axes(op)
    if op.name in ("sdy.sharding_constraint", "sdy.reshard", "sdy.data_flow_edge"):
        sharding = op.get_attr("sharding")
        if isinstance(sharding, TensorSharding):
            verify_tensor_sharding(sharding, op.results[0].type, meshes, location, manual)
    elif op.name == MANUAL_COMPUTATION:
        _verify_manual_computation_op(op, meshes, manual)
    elif op.name == "sdy.named_computation":
        operand_types = [v.type for v in op.operands]
        result_types = [r.type for r in op.results]
        for key, types in (("in_shardings", operand_types), ("out_shardings", result_types)):
            shardings = op.get_attr(key)
            if isinstance(shardings, TensorShardingPerValue):
                with prefixed(f"{key} "):
                    verify_sharding_per_value(shardings, types, meshes, location, manual)


def _verify_manual_computation_op(
    op: Op, meshes: Mapping[str, object], manual: ManualAxisOwners
) -> None:
    body = op.regions[0].entry
    terminator = body.terminator
    types = (
        [v.type for v in op.operands],
        [a.type for a in body.args],
        [r.type for r in op.results],
        [v.type for v in terminator.operands] if terminator is not None else [],
    )
    verify_manual_computation(
        _per_value(op.get_attr("in_shardings")),
        _per_value(op.get_attr("out_shardings")),
        _manual_axes(op.get_attr("manual_axes")),
        types,
        meshes,
        op.location,
        manual,
    )


def _per_value(value: object) -> TensorShardingPerValue:
    return value if isinstance(value, TensorShardingPerValue) else TensorShardingPerValue()


def _manual_axes(value: object) -> ManualAxes:
    return value if isinstance(value, ManualAxes) else ManualAxes()
