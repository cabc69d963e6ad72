"""The verifier of sdy attributes: meshes, tensor shardings, per-value lists and op sharding rules
(Shardy's `ir/verifiers.cc`, attribute half); the op half is `verify.ops`."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

from shardwise.axis import AxisRef
from shardwise.errors import UNKNOWN_LOCATION, Location, VerifyError
from shardwise.ir import (
    OpaqueType,
    TensorType,
    Type,
    parse_type,
    split_top_level,
)
from shardwise.mesh import Mesh
from shardwise.rules.rule import OpShardingRule, factor_symbol
from shardwise.sharding import (
    DimensionSharding,
    TensorSharding,
    TensorShardingPerValue,
    resolve_mesh,
    symbol_ref,
)

# Axis name -> location of the enclosing `sdy.manual_computation` that made it manual.
ManualAxisOwners = Mapping[str, Location]

MANUAL_COMPUTATION = "sdy.manual_computation"
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


def fail(message: str, location: Location, notes: Sequence[str] = ()) -> VerifyError:
    """A `VerifyError`. Messages quote types (``'tensor<8xf32>'``) as MLIR diagnostics do."""
    return VerifyError(message, location, tuple(notes))


@contextmanager
def prefixed(prefix: str) -> Iterator[None]:
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
            raise fail(f"axis size must be at least 1, got: {axis.size}", location)
    for device_id in mesh.device_ids:
        if device_id < 0:
            raise fail(f"device id must be non-negative, got: {device_id}", location)
    if not mesh.axes:
        if len(mesh.device_ids) > 1:
            raise fail("axes is empty and device_ids has more than one element", location)
        return
    seen: set[str] = set()
    for axis in mesh.axes:
        if axis.name in seen:
            raise fail(f'duplicate axis name: "{axis.name}"', location)
        seen.add(axis.name)
    if mesh.device_ids:
        _verify_device_ids(mesh, location)


def _verify_device_ids(mesh: Mesh, location: Location) -> None:
    ids = mesh.device_ids
    if mesh.total_size != len(ids):
        raise fail(
            "total product of axis sizes must match total number of device ids, got: "
            f"{mesh.total_size} != {len(ids)}",
            location,
        )
    ordered = sorted(ids)
    if ordered != list(range(len(ids))):
        shown = ", ".join(str(i) for i in ordered)
        raise fail(f"sorted device ids must be iota(product(axes)), got: {shown}", location)
    if list(ids) == ordered:
        raise fail(
            "if the ordered device ids are the same as iota(product(axes)), no need to specify "
            "them for simplicity",
            location,
        )


# -- tensor shardings -------------------------------------------------------------------------


def _shape_for_sharding(
    sharding: TensorSharding, type: Type | None, location: Location
) -> tuple[int, ...] | None:
    """The static/dynamic shape to check against, or None for a (valid) non-shaped type."""
    if isinstance(type, OpaqueType) and type.text.startswith("tuple<"):
        elements = split_top_level(type.text[len("tuple<") : -1])
        if len(elements) != 1:
            raise fail(f"ops can only have a sharding for a tuple of size 1: '{type}'", location)
        type = parse_type(elements[0])
    if isinstance(type, OpaqueType) and type.text.startswith("vector<"):
        type = parse_type("tensor<" + type.text[len("vector<") :])
    if isinstance(type, OpaqueType) and type.text.startswith("tensor<*"):
        raise fail(f"only ranked tensors can have a sharding. type: '{type}'", location)
    if isinstance(type, TensorType):
        return type.shape
    if sharding.rank != 0 or sharding.replicated_axes or sharding.unreduced_axes:
        shown = "<<NULL TYPE>>" if type is None else f"'{type}'"
        raise fail(
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
        raise fail(f"unknown mesh: {symbol_ref(str(sharding.mesh_or_ref))}", location)
    if mesh.is_maximal or (type is None and sharding.is_fully_replicated):
        if sharding.rank != 0 or sharding.replicated_axes or sharding.unreduced_axes:
            raise fail(
                "a maximal sharding can only have a sharding with rank 0 and no replicated or "
                "unreduced axes.",
                location,
            )
        return
    shape = _shape_for_sharding(sharding, type, location)
    if shape is None:
        return
    if sharding.rank != len(shape):
        raise fail(f"sharding doesn't match tensor rank: {sharding.rank} != {len(shape)}", location)
    checker = _AxisChecker(mesh, location)
    for dim, (dim_sharding, dim_size) in enumerate(zip(sharding.dim_shardings, shape, strict=True)):
        _verify_priority(dim, dim_sharding, location)
        checker.add_list(dim_sharding.axes)
        if check_divisibility and dim_size >= 0:
            sharded = dim_sharding.sharded_size(mesh)
            if dim_size % sharded != 0:
                raise fail(
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
        raise fail(f"dim {dim} has a negative priority", location)
    if dim_sharding.is_closed and not dim_sharding.axes:
        raise fail(f"dim {dim} is empty and closed but has a priority", location)


def _verify_not_already_manual(
    sharding: TensorSharding, manual_axes: ManualAxisOwners, location: Location
) -> None:
    for axis in sharding.all_axes():
        owner = manual_axes.get(axis.name)
        if owner is not None:
            raise bound_axis_error(axis.name, owner, location)


def bound_axis_error(axis_name: str, owner: Location, location: Location) -> VerifyError:
    return fail(
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
                raise fail(f'unknown axis name: "{axis.name}"', self.location)
            if axis in self.seen:
                raise fail(f"duplicate axis ref: {axis}", self.location)
            self.seen.add(axis)
            if axis.is_sub_axis:
                self.sub_axes.setdefault(axis.name, []).append(axis)
                if previous is not None and previous.can_merge(axis):
                    raise fail(
                        f"two consecutive sub-axes can be merged: {previous}, {axis}",
                        self.location,
                    )
            previous = axis

    def add_sorted_list(self, axes: Sequence[AxisRef], kind: str) -> None:
        keys = [self.mesh.axis_key(a) for a in axes]
        if any(later < earlier for earlier, later in zip(keys, keys[1:], strict=False)):
            raise fail(f"{kind} axes are not ordered w.r.t. mesh", self.location)
        self.add_list(axes)

    def verify_sub_axes(self) -> None:
        """`verifySubAxes` for every axis name with sub-axes, in mesh order."""
        for name in self.mesh.axis_names:
            sub_axes = sorted(self.sub_axes.get(name, ()), key=AxisRef.sort_key)
            if sub_axes:
                self._verify_sub_axes_of(name, sub_axes)

    def _verify_sub_axes_of(self, name: str, sub_axes: list[AxisRef]) -> None:
        if AxisRef(name) in self.seen:
            raise fail(
                f'both sub-axis and full-axis are used for axis name: "{name}"', self.location
            )
        full_size = self.mesh.axis_size(name)
        previous_next = 1
        previous: AxisRef | None = None
        for axis in sub_axes:
            info = axis.sub_axis_info
            assert info is not None
            if info.pre_size < 1:
                raise fail(f"sub-axis pre-size must be at least 1: {axis}", self.location)
            if info.size <= 1:
                raise fail(f"sub-axis sizes must be greater than 1: {axis}", self.location)
            if full_size % info.next_pre_size != 0:
                raise fail(
                    f"sub-axis next pre-size {info.next_pre_size} doesn't divide the size of "
                    f"the full axis {full_size}: {axis}",
                    self.location,
                )
            if info.size == full_size:
                raise fail(f"sub-axis size is equal to the full axis size: {axis}", self.location)
            if previous_next > info.pre_size:
                raise fail(f"overlapping sub-axes: {previous}, {axis}", self.location)
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
            with prefixed(_value_prefix(0, 0)):
                verify_tensor_sharding(first, None, meshes, location, manual_axes)
            return
    if len(shardings) != len(types):
        raise fail(
            f"shardings don't match number of values: {len(shardings)} shardings vs "
            f"{len(types)} values",
            location,
        )
    for index, (sharding, type) in enumerate(zip(shardings, types, strict=True)):
        with prefixed(_value_prefix(len(types), index)):
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
            raise fail(
                f"has factor {factor_symbol(factor)}={size} that isn't used in operand and "
                "result mappings",
                location,
            )
    kinds = (rule.reduction_factors, rule.need_replication_factors, rule.permutation_factors)
    for indices in kinds:
        _verify_special_indices(indices, rule.num_factors, location)
    if len(set().union(*kinds)) != sum(len(k) for k in kinds):
        raise fail(
            "a factor can only be in one of the reduction, need replication, or permutation "
            "factor sets",
            location,
        )
    _verify_special_indices(rule.blocked_propagation_factors, rule.num_factors, location)
    if any(f in used_by_results for f in rule.reduction_factors):
        raise fail("reduction factor cannot be in result mappings", location)


def _verify_mappings(
    rule: OpShardingRule,
    types: Sequence[Type],
    mappings: Sequence[Sequence[Sequence[int]]],
    kind: str,
    location: Location,
) -> set[int]:
    """`verifyShardingRuleMapping`; returns the factors the mappings use."""
    if len(types) != len(mappings):
        raise fail(
            f"number of {kind}s and mappings must match: {len(types)} != {len(mappings)}", location
        )
    if not mappings:
        raise fail(
            f"number of {kind}s mappings cannot be 0. Op sharding rules can only be defined on "
            "operations with at least one operand and result.",
            location,
        )
    used: set[int] = set()
    for index, (type, mapping) in enumerate(zip(types, mappings, strict=True)):
        with prefixed(f"{kind} {_value_prefix(len(types), index)}"):
            used |= _verify_tensor_mapping(rule, type, mapping, location)
    return used


def _verify_tensor_mapping(
    rule: OpShardingRule, type: Type, mapping: Sequence[Sequence[int]], location: Location
) -> set[int]:
    if not isinstance(type, TensorType) or not type.is_static:
        raise fail(f"expected a ranked tensor with a static shape. type: '{type}'", location)
    if len(mapping) != type.rank:
        raise fail(f"mapping rank must match: {len(mapping)} != {type.rank}", location)
    used: set[int] = set()
    for factors in mapping:
        if not factors:
            raise fail("dim mapping must have at least one factor", location)
        for factor in factors:
            if not 0 <= factor < rule.num_factors:
                raise fail(
                    "expecting factor indices to be within 0<=...<num_factors; received: "
                    f"{factor}, num_factors: {rule.num_factors}",
                    location,
                )
            if factor in used:
                raise fail("cannot reuse factors for the same tensor value", location)
            if rule.factor_sizes[factor] == 1 and len(factors) > 1:
                raise fail(
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
        raise fail("indices of special factors must be sorted", location)
    if len(set(indices)) != len(indices):
        raise fail("indices of special factors must be unique", location)
    if indices[0] < 0:
        raise fail("index must be non-negative", location)
    if indices[-1] >= num_factors:
        raise fail(f"index must be less than {num_factors}, got: {indices[-1]}", location)
