"""Shardy's verifier (`ir/verifiers.cc`) over our values and IR, with Shardy's wording.

Each `verify_*` function checks one value in its context and raises `VerifyError` with the
message Shardy emits for the same failure (without the op prefix). `verify_module` walks a
`Module` like MLIR's verifier does and adds the op context Shardy adds, e.g.
``'func.func' op arg 0 - unknown axis name: "c"`` or ``'stablehlo.add' op result - ...``.

Checked (Shardy notes 1.7, 2.3): meshes (axis sizes, names, device ids); tensor shardings
(mesh resolves, maximal and non-shaped rules, rank, priorities, axis names, duplicates,
mergeable neighbours, sub-axis sizes/divisibility/overlap, full axis next to its sub-axes,
replicated/unreduced order, axes already manual in an enclosing manual computation);
per-value lists (count); op sharding rules (mapping counts/ranks, factor indices, unused
factors, typed lists sorted/unique/disjoint, reduction factors not in results); manual
computations (manual axes first, divisibility, local shapes, common mesh, unknown and
nested manual axes); named computations, data-flow edges, constraints, reshards and the
``out_sharding`` of collectives. Divisibility of dims by sharded size is off by default, as in
Shardy's op verification.

Not checked (no shardings involved, or export-only): the operand/result relation of
collectives, unreduced-axes transitions (absent from the jaxlib 0.10.2 reference),
``sdy.propagation_edges``, data-flow-edge use counts, propagation-barrier directions.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

from shardwise.axis import AxisRef, quote_string
from shardwise.errors import UNKNOWN_LOCATION, Location, VerifyError
from shardwise.ir import (
    SHARDING_ATTR,
    SHARDING_RULE_ATTR,
    Module,
    Op,
    OpaqueType,
    TensorType,
    Type,
    func_arg_attrs,
    func_result_attrs,
    func_result_types,
    parse_type,
    split_top_level,
)
from shardwise.mesh import Mesh
from shardwise.rules.rule import OpShardingRule, factor_symbol
from shardwise.sharding import (
    DimensionSharding,
    ManualAxes,
    TensorSharding,
    TensorShardingPerValue,
    symbol_ref,
)

__all__ = [
    "COLLECTIVE_OPS",
    "verify_mesh",
    "verify_tensor_sharding",
    "verify_sharding_per_value",
    "verify_op_sharding_rule",
    "verify_manual_computation",
    "verify_module",
    "resolve_mesh",
    "sdy_values",
]

# Axis name -> location of the enclosing `sdy.manual_computation` that made it manual.
ManualAxisOwners = Mapping[str, Location]

_MANUAL_COMPUTATION = "sdy.manual_computation"
# Shardy's collective ops (`CollectiveOpInterface`); propagation's sharding access reuses the set.
COLLECTIVE_OPS = frozenset(
    {
        "sdy.all_gather",
        "sdy.all_slice",
        "sdy.all_to_all",
        "sdy.collective_permute",
        "sdy.all_reduce",
        "sdy.reduce_scatter",
        "sdy.sharded_to_unreduced",
        "sdy.replicated_to_unreduced",
    }
)


def _fail(message: str, location: Location, notes: Sequence[str] = ()) -> VerifyError:
    """A `VerifyError`. Messages quote types (``'tensor<8xf32>'``) as MLIR diagnostics do."""
    return VerifyError(message, location, tuple(notes))


@contextmanager
def _prefixed(prefix: str) -> Iterator[None]:
    """Prepend `prefix` to the message of a `VerifyError` raised inside (Shardy's emitError)."""
    try:
        yield
    except VerifyError as err:
        raise VerifyError(prefix + err.message, err.location, err.notes) from None


def _value_prefix(num_values: int, index: int) -> str:
    """Shardy's value-in-range prefix: ``- `` for a single value, ``<index> - `` otherwise."""
    return "- " if num_values == 1 else f"{index} - "


# -- meshes -----------------------------------------------------------------------------------


def verify_mesh(mesh: Mesh, location: Location = UNKNOWN_LOCATION) -> None:
    """`MeshAxisAttr::verify` + `MeshAttr::verify`: sizes >= 1, unique names, valid ids."""
    for axis in mesh.axes:
        if axis.size <= 0:
            raise _fail(f"axis size must be at least 1, got: {axis.size}", location)
    for device_id in mesh.device_ids:
        if device_id < 0:
            raise _fail(f"device id must be non-negative, got: {device_id}", location)
    if not mesh.axes:
        if len(mesh.device_ids) > 1:
            raise _fail("axes is empty and device_ids has more than one element", location)
        return
    seen: set[str] = set()
    for axis in mesh.axes:
        if axis.name in seen:
            raise _fail(f'duplicate axis name: "{axis.name}"', location)
        seen.add(axis.name)
    if mesh.device_ids:
        _verify_device_ids(mesh, location)


def _verify_device_ids(mesh: Mesh, location: Location) -> None:
    ids = mesh.device_ids
    if mesh.total_size != len(ids):
        raise _fail(
            "total product of axis sizes must match total number of device ids, got: "
            f"{mesh.total_size} != {len(ids)}",
            location,
        )
    ordered = sorted(ids)
    if ordered != list(range(len(ids))):
        shown = ", ".join(str(i) for i in ordered)
        raise _fail(f"sorted device ids must be iota(product(axes)), got: {shown}", location)
    if list(ids) == ordered:
        raise _fail(
            "if the ordered device ids are the same as iota(product(axes)), no need to specify "
            "them for simplicity",
            location,
        )


def resolve_mesh(sharding: TensorSharding, meshes: Mapping[str, object]) -> Mesh | None:
    """The sharding's inline mesh, or the `Mesh` its symbol names in `meshes` (else None)."""
    if isinstance(sharding.mesh_or_ref, Mesh):
        return sharding.mesh_or_ref
    mesh = meshes.get(sharding.mesh_or_ref)
    return mesh if isinstance(mesh, Mesh) else None


# -- tensor shardings -------------------------------------------------------------------------


def _shape_for_sharding(
    sharding: TensorSharding, type: Type | None, location: Location
) -> tuple[int, ...] | None:
    """The static/dynamic shape to check against, or None for a (valid) non-shaped type."""
    if isinstance(type, OpaqueType) and type.text.startswith("tuple<"):
        elements = split_top_level(type.text[len("tuple<") : -1])
        if len(elements) != 1:
            raise _fail(f"ops can only have a sharding for a tuple of size 1: '{type}'", location)
        type = parse_type(elements[0])
    if isinstance(type, OpaqueType) and type.text.startswith("vector<"):
        type = parse_type("tensor<" + type.text[len("vector<") :])
    if isinstance(type, OpaqueType) and type.text.startswith("tensor<*"):
        raise _fail(f"only ranked tensors can have a sharding. type: '{type}'", location)
    if isinstance(type, TensorType):
        return type.shape
    if sharding.rank != 0 or sharding.replicated_axes or sharding.unreduced_axes:
        shown = "<<NULL TYPE>>" if type is None else f"'{type}'"
        raise _fail(
            "non-shaped tensors can only have a sharding with rank 0 and no replicated or "
            f"unreduced axes. type: {shown}, sharding: {sharding}",
            location,
        )
    return None


def verify_tensor_sharding(
    sharding: TensorSharding,
    type: Type | None,
    meshes: Mapping[str, object],
    location: Location = UNKNOWN_LOCATION,
    manual_axes: ManualAxisOwners | None = None,
    check_divisibility: bool = False,
) -> None:
    """`verifyTensorShardingAttr`: `sharding` is valid for a value of `type` (None: no value).

    `meshes` maps symbol names to meshes; `manual_axes` are the axes already manual in an
    enclosing manual computation (with its location).
    """
    if isinstance(sharding.mesh_or_ref, Mesh):
        verify_mesh(sharding.mesh_or_ref, location)
    mesh = resolve_mesh(sharding, meshes)
    if mesh is None:
        raise _fail(f"unknown mesh: {symbol_ref(str(sharding.mesh_or_ref))}", location)
    if mesh.is_maximal or (type is None and sharding.is_fully_replicated):
        if sharding.rank != 0 or sharding.replicated_axes or sharding.unreduced_axes:
            raise _fail(
                "a maximal sharding can only have a sharding with rank 0 and no replicated or "
                "unreduced axes.",
                location,
            )
        return
    shape = _shape_for_sharding(sharding, type, location)
    if shape is None:
        return
    if sharding.rank != len(shape):
        raise _fail(
            f"sharding doesn't match tensor rank: {sharding.rank} != {len(shape)}", location
        )
    checker = _AxisChecker(mesh, location)
    for dim, (dim_sharding, dim_size) in enumerate(zip(sharding.dim_shardings, shape, strict=True)):
        _verify_priority(dim, dim_sharding, location)
        checker.add_list(dim_sharding.axes)
        if check_divisibility and dim_size >= 0:
            sharded = dim_sharding.sharded_size(mesh)
            if dim_size % sharded != 0:
                raise _fail(
                    f"dim {dim} with size {dim_size} is not divisible by its sharded size "
                    f"{sharded}",
                    location,
                )
    checker.add_sorted_list(sharding.replicated_axes, "replicated")
    checker.add_sorted_list(sharding.unreduced_axes, "unreduced")
    checker.verify_sub_axes()
    _verify_not_already_manual(sharding, manual_axes or {}, location)


def _verify_priority(dim: int, dim_sharding: DimensionSharding, location: Location) -> None:
    if dim_sharding.priority is None:
        return
    if dim_sharding.priority < 0:
        raise _fail(f"dim {dim} has a negative priority", location)
    if dim_sharding.is_closed and not dim_sharding.axes:
        raise _fail(f"dim {dim} is empty and closed but has a priority", location)


def _verify_not_already_manual(
    sharding: TensorSharding, manual_axes: ManualAxisOwners, location: Location
) -> None:
    for axis in sharding.all_axes():
        owner = manual_axes.get(axis.name)
        if owner is not None:
            raise _bound_axis_error(axis.name, owner, location)


def _bound_axis_error(axis_name: str, owner: Location, location: Location) -> VerifyError:
    return _fail(
        f'operates on axis "{axis_name}" which is already bound by a parent '
        "sdy.manual_computation op",
        location,
        [f"{owner}: parent bounding this axis as manual"],
    )


class _AxisChecker:
    """The axis-ref checks shared by all lists of one sharding (`verifyAxisRefList` & co)."""

    def __init__(self, mesh: Mesh, location: Location) -> None:
        self.mesh = mesh
        self.location = location
        self.seen: set[AxisRef] = set()
        self.sub_axes: dict[str, list[AxisRef]] = {}

    def add_list(self, axes: Sequence[AxisRef]) -> None:
        """Known names, no duplicates (across all lists), no mergeable neighbours."""
        previous: AxisRef | None = None
        for axis in axes:
            if not self.mesh.has_axis(axis.name):
                raise _fail(f'unknown axis name: "{axis.name}"', self.location)
            if axis in self.seen:
                raise _fail(f"duplicate axis ref: {axis}", self.location)
            self.seen.add(axis)
            if axis.is_sub_axis:
                self.sub_axes.setdefault(axis.name, []).append(axis)
                if previous is not None and previous.can_merge(axis):
                    raise _fail(
                        f"two consecutive sub-axes can be merged: {previous}, {axis}",
                        self.location,
                    )
            previous = axis

    def add_sorted_list(self, axes: Sequence[AxisRef], kind: str) -> None:
        keys = [self.mesh.axis_key(a) for a in axes]
        if any(later < earlier for earlier, later in zip(keys, keys[1:], strict=False)):
            raise _fail(f"{kind} axes are not ordered w.r.t. mesh", self.location)
        self.add_list(axes)

    def verify_sub_axes(self) -> None:
        """`verifySubAxes` for every axis name with sub-axes, in mesh order."""
        for name in self.mesh.axis_names:
            sub_axes = sorted(self.sub_axes.get(name, ()), key=AxisRef.sort_key)
            if sub_axes:
                self._verify_sub_axes_of(name, sub_axes)

    def _verify_sub_axes_of(self, name: str, sub_axes: list[AxisRef]) -> None:
        if AxisRef(name) in self.seen:
            raise _fail(
                f'both sub-axis and full-axis are used for axis name: "{name}"', self.location
            )
        full_size = self.mesh.axis_size(name)
        previous_next = 1
        previous: AxisRef | None = None
        for axis in sub_axes:
            info = axis.sub_axis_info
            assert info is not None
            if info.pre_size < 1:
                raise _fail(f"sub-axis pre-size must be at least 1: {axis}", self.location)
            if info.size <= 1:
                raise _fail(f"sub-axis sizes must be greater than 1: {axis}", self.location)
            if full_size % info.next_pre_size != 0:
                raise _fail(
                    f"sub-axis next pre-size {info.next_pre_size} doesn't divide the size of "
                    f"the full axis {full_size}: {axis}",
                    self.location,
                )
            if info.size == full_size:
                raise _fail(f"sub-axis size is equal to the full axis size: {axis}", self.location)
            if previous_next > info.pre_size:
                raise _fail(f"overlapping sub-axes: {previous}, {axis}", self.location)
            previous, previous_next = axis, info.next_pre_size


# -- per-value shardings ----------------------------------------------------------------------


def verify_sharding_per_value(
    per_value: TensorShardingPerValue,
    types: Sequence[Type],
    meshes: Mapping[str, object],
    location: Location = UNKNOWN_LOCATION,
    manual_axes: ManualAxisOwners | None = None,
) -> None:
    """One valid sharding per value; an op without values may carry one maximal/replicated."""
    shardings = per_value.shardings
    if not types and len(shardings) == 1:
        first = shardings[0]
        mesh = resolve_mesh(first, meshes)
        if (mesh is not None and mesh.is_maximal) or first.is_fully_replicated:
            with _prefixed(_value_prefix(0, 0)):
                verify_tensor_sharding(first, None, meshes, location, manual_axes)
            return
    if len(shardings) != len(types):
        raise _fail(
            f"shardings don't match number of values: {len(shardings)} shardings vs "
            f"{len(types)} values",
            location,
        )
    for index, (sharding, type) in enumerate(zip(shardings, types, strict=True)):
        with _prefixed(_value_prefix(len(types), index)):
            verify_tensor_sharding(sharding, type, meshes, location, manual_axes)


# -- op sharding rules ------------------------------------------------------------------------


def verify_op_sharding_rule(
    rule: OpShardingRule,
    operand_types: Sequence[Type],
    result_types: Sequence[Type],
    location: Location = UNKNOWN_LOCATION,
) -> None:
    """`verifyOpShardingRuleAttr`: `rule` describes an op with these operand/result types."""
    used_by_operands = _verify_mappings(
        rule, operand_types, rule.operand_mappings, "operand", location
    )
    used_by_results = _verify_mappings(rule, result_types, rule.result_mappings, "result", location)
    for factor, size in enumerate(rule.factor_sizes):
        if factor not in used_by_operands and factor not in used_by_results:
            raise _fail(
                f"has factor {factor_symbol(factor)}={size} that isn't used in operand and "
                "result mappings",
                location,
            )
    kinds = (rule.reduction_factors, rule.need_replication_factors, rule.permutation_factors)
    for indices in kinds:
        _verify_special_indices(indices, rule.num_factors, location)
    if len(set().union(*kinds)) != sum(len(k) for k in kinds):
        raise _fail(
            "a factor can only be in one of the reduction, need replication, or permutation "
            "factor sets",
            location,
        )
    _verify_special_indices(rule.blocked_propagation_factors, rule.num_factors, location)
    if any(f in used_by_results for f in rule.reduction_factors):
        raise _fail("reduction factor cannot be in result mappings", location)


def _verify_mappings(
    rule: OpShardingRule,
    types: Sequence[Type],
    mappings: Sequence[Sequence[Sequence[int]]],
    kind: str,
    location: Location,
) -> set[int]:
    """`verifyShardingRuleMapping`; returns the factors the mappings use."""
    if len(types) != len(mappings):
        raise _fail(
            f"number of {kind}s and mappings must match: {len(types)} != {len(mappings)}", location
        )
    if not mappings:
        raise _fail(
            f"number of {kind}s mappings cannot be 0. Op sharding rules can only be defined on "
            "operations with at least one operand and result.",
            location,
        )
    used: set[int] = set()
    for index, (type, mapping) in enumerate(zip(types, mappings, strict=True)):
        with _prefixed(f"{kind} {_value_prefix(len(types), index)}"):
            used |= _verify_tensor_mapping(rule, type, mapping, location)
    return used


def _verify_tensor_mapping(
    rule: OpShardingRule, type: Type, mapping: Sequence[Sequence[int]], location: Location
) -> set[int]:
    if not isinstance(type, TensorType) or not type.is_static:
        raise _fail(f"expected a ranked tensor with a static shape. type: '{type}'", location)
    if len(mapping) != type.rank:
        raise _fail(f"mapping rank must match: {len(mapping)} != {type.rank}", location)
    used: set[int] = set()
    for factors in mapping:
        if not factors:
            raise _fail("dim mapping must have at least one factor", location)
        for factor in factors:
            if not 0 <= factor < rule.num_factors:
                raise _fail(
                    "expecting factor indices to be within 0<=...<num_factors; received: "
                    f"{factor}, num_factors: {rule.num_factors}",
                    location,
                )
            if factor in used:
                raise _fail("cannot reuse factors for the same tensor value", location)
            if rule.factor_sizes[factor] == 1 and len(factors) > 1:
                raise _fail(
                    "dim mapping can't have a factor of size 1 if there are multiple factors",
                    location,
                )
            used.add(factor)
    return used


def _verify_special_indices(indices: Sequence[int], num_factors: int, location: Location) -> None:
    """`indicesSortedUniqueInBound`."""
    if not indices:
        return
    if list(indices) != sorted(indices):
        raise _fail("indices of special factors must be sorted", location)
    if len(set(indices)) != len(indices):
        raise _fail("indices of special factors must be unique", location)
    if indices[0] < 0:
        raise _fail("index must be non-negative", location)
    if indices[-1] >= num_factors:
        raise _fail(f"index must be less than {num_factors}, got: {indices[-1]}", location)


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
            raise _bound_axis_error(name, enclosing[name], location)
    operand_types, arg_types, result_types, return_types = types
    manual = set(manual_axes.axes)
    for kind, shardings, global_types, local_types in (
        ("operand", in_shardings, operand_types, arg_types),
        ("result", out_shardings, result_types, return_types),
    ):
        if not global_types and not local_types and not shardings.shardings:
            continue
        with _prefixed(f"{kind} "):
            verify_sharding_per_value(shardings, global_types, meshes, location, enclosing)
        _verify_manual_values(kind, shardings, global_types, local_types, manual, meshes, location)
    if not in_shardings.shardings and not out_shardings.shardings:
        return
    mesh = _common_mesh(in_shardings.shardings + out_shardings.shardings, meshes)
    if mesh is None and manual_axes.axes:
        raise _fail(
            "all in and out shardings must be bound to the same mesh or an empty mesh.", location
        )
    for name in manual_axes.axes:
        if mesh is not None and not mesh.has_axis(name):
            raise _fail(f"unknown manual axis: {quote_string(name)}", location)


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
        raise _fail(
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
                raise _fail(
                    f"{kind} dimension size {size} is not divisible by the manual axes size "
                    f"{manual_size}",
                    location,
                )
            local_shape.append(size if size < 0 else size // manual_size)
        expected = TensorType(tuple(local_shape), global_type.element_type)
        if expected != local_type:
            raise _fail(
                f"{kind} shape, corresponding sharding, and region {kind} shape at index {index} "
                f"must match. Expected local shape '{expected}', actual local shape '{local_type}'",
                location,
            )


def _verify_manual_axes_first(
    kind: str, index: int, dim: int, axes: Sequence[AxisRef], manual: set[str], location: Location
) -> None:
    for position in range(1, len(axes)):
        if axes[position].name in manual and axes[position - 1].name not in manual:
            raise _fail(
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
        with _prefixed(f"'{op.name}' op "):
            _verify_op(op, meshes)
    for op in module.walk():
        with _prefixed(f"'{op.name}' op "):
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
        if ancestor.name == _MANUAL_COMPUTATION and isinstance(axes, ManualAxes):
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
            raise _fail(
                "should have a sharding attribute of type TensorShardingPerValueAttr", location
            )
        with _prefixed("result "):
            verify_sharding_per_value(sharding, result_types, meshes, location, manual)
    rule = op.attributes.get(SHARDING_RULE_ATTR)
    if rule is not None:
        if not isinstance(rule, OpShardingRule):
            raise _fail(
                "should have a sharding rule attribute of type OpShardingRuleAttr for attr "
                f"named '{SHARDING_RULE_ATTR}'",
                location,
            )
        verify_op_sharding_rule(rule, [v.type for v in op.operands], result_types, location)
    if op.name == _MANUAL_COMPUTATION:
        for name in _manual_axes(op.get_attr("manual_axes")).axes:
            if name in manual:
                raise _bound_axis_error(name, manual[name], location)
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
            with _prefixed(f"{kind} {index} - "):
                if not isinstance(sharding, TensorSharding):
                    raise _fail(
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
    elif op.name == _MANUAL_COMPUTATION:
        _verify_manual_computation_op(op, meshes, manual)
    elif op.name == "sdy.named_computation":
        operand_types = [v.type for v in op.operands]
        result_types = [r.type for r in op.results]
        for key, types in (("in_shardings", operand_types), ("out_shardings", result_types)):
            shardings = op.get_attr(key)
            if isinstance(shardings, TensorShardingPerValue):
                with _prefixed(f"{key} "):
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
