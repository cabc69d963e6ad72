"""Sharding projection: an op's tensor shardings seen per factor (Shardy `sharding_projection`).

An `OpShardingRule` describes every operand and result dimension as a list of factors. The
projection turns each tensor's `TensorSharding` into one `FactorSharding` per factor the tensor
has (`ShardingProjection.build`), propagation grows those factor shardings
(`shardwise.propagation.factor_propagation`), and the inverse projection turns them back into
dimension shardings (`TensorFactorShardings.create_tensor_sharding`).

Example (the one in Shardy's header), rule ``([ij])->([i, j]) {i=2, j=4}``, mesh
``["x"=4, "y"=2]``:

| tensor  | sharding        | factor shardings                        |
| operand | ``[{"x", "y"}]`` | i: ``["x":(1)2]``, j: ``["x":(2)2, "y"]`` |
| result  | ``[{?}, {?}]``  | i: ``[]`` open, j: ``[]`` open            |

If the result's factors become those of the operand, the inverse projection gives the result
``[{"x":(1)2}, {"x":(2)2, "y"}]``.

This is propagation's mutable working state: only the factor propagation strategies mutate
it, and nothing mutable leaves the `propagation` package (inputs and outputs are the frozen
values of `shardwise.sharding`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace

from shardwise.axis import (
    AxisRef,
    AxisSizes,
    PrefixStatus,
    SubAxisInfo,
    add_axis_or_merge,
    greatest_common_prefix_of_lists,
    is_axis_list_prefix_of,
)
from shardwise.errors import InternalError
from shardwise.rules.rule import DimMapping, OpShardingRule, TensorMapping
from shardwise.sharding import DimensionSharding, TensorSharding

__all__ = [
    "Axes",
    "AxesPerFactor",
    "FactorSharding",
    "TensorFactorShardings",
    "UpdateTensorShardings",
    "ShardingProjection",
    "is_strict_prefix",
]

Axes = tuple[AxisRef, ...]
AxesPerFactor = list[Axes]


def is_strict_prefix(first: Sequence[AxisRef], second: Sequence[AxisRef]) -> bool:
    """`first` is a strict prefix of `second` (Shardy `isStrictPrefix`)."""
    return is_axis_list_prefix_of(first, second) == PrefixStatus.STRICT_PREFIX


@dataclass(slots=True)
class FactorSharding:
    """The axes sharding one factor of one tensor (Shardy `FactorSharding`).

    `overflow_axes` are the axes of a dimension that a non-minor-most factor could not take
    (the factor's remaining size and the next axis are coprime); they are kept so that the
    inverse projection rebuilds the dimension losslessly.
    """

    axis_refs: Axes = ()
    is_closed: bool = False
    is_minor_most: bool = False
    overflow_axes: Axes = ()

    def __str__(self) -> str:
        items = [str(a) for a in self.axis_refs]
        if not self.is_closed:
            items.append("?")
        text = "[" + ", ".join(items) + "]"
        if self.overflow_axes:
            text += " overflow=[" + ", ".join(str(a) for a in self.overflow_axes) + "]"
        return text


@dataclass(slots=True)
class UpdateTensorShardings:
    """Which operands and which results changed (Shardy `UpdateTensorShardings`); OR-able."""

    operands: list[bool]
    results: list[bool]

    @staticmethod
    def none(num_operands: int, num_results: int) -> UpdateTensorShardings:
        return UpdateTensorShardings([False] * num_operands, [False] * num_results)

    def __ior__(self, other: UpdateTensorShardings) -> UpdateTensorShardings:
        self.operands = [a or b for a, b in zip(self.operands, other.operands, strict=True)]
        self.results = [a or b for a, b in zip(self.results, other.results, strict=True)]
        return self

    def __or__(self, other: UpdateTensorShardings) -> UpdateTensorShardings:
        result = UpdateTensorShardings(list(self.operands), list(self.results))
        result |= other
        return result

    def any(self) -> bool:
        return any(self.operands) or any(self.results)

    def operand_indices(self) -> list[int]:
        return [i for i, updated in enumerate(self.operands) if updated]

    def result_indices(self) -> list[int]:
        return [i for i, updated in enumerate(self.results) if updated]


@dataclass(slots=True)
class TensorFactorShardings:
    """One tensor's factor shardings (Shardy `TensorFactorShardings`).

    `factor_index_to_sharding` holds only the factors this tensor's mapping has, in the order
    the mapping visits them; after a dimension overflows, its later factors are absent.
    """

    factor_index_to_sharding: dict[int, FactorSharding] = field(default_factory=dict)
    replicated_axes: Axes = ()
    unreduced_axes: Axes = ()
    reduction_op: str = "sum"

    def copy(self) -> TensorFactorShardings:
        shardings = {f: replace(s) for f, s in self.factor_index_to_sharding.items()}
        return replace(self, factor_index_to_sharding=shardings)

    def get(self, factor: int) -> FactorSharding | None:
        return self.factor_index_to_sharding.get(factor)

    def has_factor(self, factor: int) -> bool:
        return factor in self.factor_index_to_sharding

    def expand_sharding_axes(self, factor: int, new_axes: Sequence[AxisRef]) -> bool:
        """Replace the factor's axes by `new_axes` if they are a strict prefix of them.

        Shardy `TensorFactorShardings::expandShardingAxes`. Closed-ness is not checked: the
        conflict rules of factor propagation never offer axes to a closed factor.

        | current          | new                 | result          |
        | ``[]``           | ``["a"]``           | ``["a"]``       |
        | ``["a":(1)2]``   | ``["a", "b"]``      | ``["a", "b"]``  |
        | ``["a"]``        | ``["a"]``           | unchanged       |
        | ``["b"]``        | ``["a", "b"]``      | unchanged       |
        """
        sharding = self.factor_index_to_sharding.get(factor)
        if sharding is None or not is_strict_prefix(sharding.axis_refs, new_axes):
            return False
        sharding.axis_refs = tuple(new_axes)
        return True

    def update_sharding_axes(
        self, factor: int, new_axes: Sequence[AxisRef], new_overflow_axes: Sequence[AxisRef] = ()
    ) -> bool:
        """Overwrite the factor's axes and overflow axes if they differ.

        Shardy `TensorFactorShardings::updateShardingAxes` (no prefix requirement).
        """
        sharding = self.factor_index_to_sharding.get(factor)
        if sharding is None:
            return False
        new_axes, new_overflow_axes = tuple(new_axes), tuple(new_overflow_axes)
        if sharding.axis_refs == new_axes and sharding.overflow_axes == new_overflow_axes:
            return False
        sharding.axis_refs = new_axes
        sharding.overflow_axes = new_overflow_axes
        return True

    def sharding_size(self, mesh: AxisSizes) -> int:
        """Product of every axis and overflow axis size (Shardy `getShardingSize`)."""
        size = 1
        for sharding in self.factor_index_to_sharding.values():
            for axis in (*sharding.axis_refs, *sharding.overflow_axes):
                size *= axis.size(mesh)
        return size

    def create_tensor_sharding(
        self,
        tensor_mapping: TensorMapping,
        factor_sizes: Sequence[int],
        mesh_name: str,
        mesh: AxisSizes,
    ) -> TensorSharding:
        """The inverse projection (Shardy `TensorFactorShardings::createTensorShardingAttr`).

        Per dimension, the axes of its factors major to minor, contiguous sub-axes at a factor
        boundary merged; stops after a factor with overflow axes (appending them) or a factor
        not fully sharded (anything further would need a strided view). A dimension is closed
        if any factor visited is closed. Priorities are dropped; the mesh is named by symbol.
        """
        dims = tuple(
            self._create_dim_sharding(dim_mapping, factor_sizes, mesh)
            for dim_mapping in tensor_mapping
        )
        return TensorSharding(
            mesh_name,
            dims,
            replicated_axes=self.replicated_axes,
            unreduced_axes=self.unreduced_axes,
            reduction_op=self.reduction_op,
        )

    def _create_dim_sharding(
        self, dim_mapping: DimMapping, factor_sizes: Sequence[int], mesh: AxisSizes
    ) -> DimensionSharding:
        axes: list[AxisRef] = []
        is_closed = False
        for factor in dim_mapping:
            sharding = self.factor_index_to_sharding.get(factor)
            if sharding is None:  # the projection stopped the dim here (an overflow before it)
                break
            is_closed |= sharding.is_closed
            sharded_size = _add_axes_to_dim(axes, sharding.axis_refs, mesh)
            if sharding.overflow_axes:
                _add_axes_to_dim(axes, sharding.overflow_axes, mesh)
                break
            if sharded_size < factor_sizes[factor]:
                break
        return DimensionSharding(tuple(axes), is_closed=is_closed)

    def __str__(self) -> str:
        parts = [f"{f}: {s}" for f, s in self.factor_index_to_sharding.items()]
        text = "{" + ", ".join(parts) + "}"
        if self.replicated_axes:
            text += " replicated={" + ", ".join(str(a) for a in self.replicated_axes) + "}"
        if self.unreduced_axes:
            text += " unreduced={" + ", ".join(str(a) for a in self.unreduced_axes) + "}"
        return text


def _add_axes_to_dim(dim_axes: list[AxisRef], axes: Sequence[AxisRef], mesh: AxisSizes) -> int:
    """Append `axes`, merging the first into the dim's last axis; return their total size."""
    total = 1
    for i, axis in enumerate(axes):
        total *= axis.size(mesh)
        if i == 0:
            add_axis_or_merge(dim_axes, axis, mesh)
        else:
            dim_axes.append(axis)
    return total


# -- forward projection -------------------------------------------------------------------------


class _AxisCursor:
    """A position in a dimension's axis list that can sit inside a partially consumed axis.

    `size` is what remains of the current axis and `pre_size` where that remainder starts
    (None while the axis is untouched, i.e. still the axis as written).
    """

    __slots__ = ("axes", "index", "size", "pre_size", "mesh")

    def __init__(self, axes: Sequence[AxisRef], mesh: AxisSizes) -> None:
        self.axes = axes
        self.mesh = mesh
        self.index = 0
        self.size = 0
        self.pre_size: int | None = None
        self._load()

    def _load(self) -> None:
        if self.index < len(self.axes):
            axis = self.axes[self.index]
            self.size = axis.size(self.mesh)
            self.pre_size = axis.sub_axis_info.pre_size if axis.sub_axis_info else None

    @property
    def exhausted(self) -> bool:
        return self.index >= len(self.axes)

    def current(self) -> AxisRef:
        """The remaining part of the current axis as an axis reference."""
        name = self.axes[self.index].name
        if self.pre_size is None:
            return AxisRef(name)
        return AxisRef(name, SubAxisInfo(self.pre_size, self.size))

    def take_all(self) -> AxisRef:
        """Consume the rest of the current axis and advance."""
        axis = self.current()
        self.index += 1
        self._load()
        return axis

    def split(self, size: int) -> AxisRef:
        """Consume a major sub-axis of `size` from the current axis (size divides it)."""
        pre_size = self.pre_size or 1
        axis = AxisRef(self.axes[self.index].name, SubAxisInfo(pre_size, size))
        self.pre_size = pre_size * size
        self.size //= size
        return axis

    def take_rest(self, into: list[AxisRef]) -> None:
        """Consume everything left, appending with `add_axis_or_merge`."""
        while not self.exhausted:
            add_axis_or_merge(into, self.take_all(), self.mesh)


def _take_divisible_axes(cursor: _AxisCursor, factor_size: int) -> tuple[list[AxisRef], int]:
    """Take axes (splitting by gcd) while they share a factor with the remaining size.

    Size-1 axes are always taken. Returns the axes and the factor size left unsharded.
    """
    axes: list[AxisRef] = []
    remaining = factor_size
    while not cursor.exhausted:
        if cursor.size == 1:
            axes.append(cursor.take_all())
            continue
        gcd = math.gcd(remaining, cursor.size)
        if gcd == 1:
            break
        if cursor.size > gcd:
            axes.append(cursor.split(gcd))
            remaining //= gcd
        else:
            remaining //= cursor.size
            axes.append(cursor.take_all())
    return axes, remaining


def _project_dim(
    shardings: dict[int, FactorSharding],
    dim_mapping: DimMapping,
    axes: Sequence[AxisRef],
    is_closed: bool,
    factor_sizes: Sequence[int],
    mesh: AxisSizes,
) -> None:
    """Distribute one dimension's axes over its factors, major to minor.

    The minor-most factor takes whatever remains (even non-dividing axes: padding is fine
    there). A non-minor-most factor takes axes while their sizes share a divisor with what is
    left of the factor; if it is left partially sharded with axes remaining, those become its
    overflow axes, the next factor is created closed and empty, and the dim stops there.
    """
    cursor = _AxisCursor(axes, mesh)
    overflowed = False
    for factor in dim_mapping:
        is_minor_most = factor == dim_mapping[-1]
        if overflowed:
            shardings[factor] = FactorSharding(is_closed=True, is_minor_most=is_minor_most)
            return
        sharding = FactorSharding(is_closed=is_closed, is_minor_most=is_minor_most)
        shardings[factor] = sharding
        if is_minor_most:
            rest: list[AxisRef] = []
            cursor.take_rest(rest)
            sharding.axis_refs = tuple(rest)
            return
        taken, remaining = _take_divisible_axes(cursor, factor_sizes[factor])
        sharding.axis_refs = tuple(taken)
        if remaining > 1 and not cursor.exhausted:
            overflow: list[AxisRef] = []
            cursor.take_rest(overflow)
            sharding.overflow_axes = tuple(overflow)
            overflowed = True


def build_tensor_factor_shardings(
    tensor_mapping: TensorMapping,
    sharding: TensorSharding | None,
    factor_sizes: Sequence[int],
    mesh: AxisSizes,
    closed_if_missing: bool = False,
) -> TensorFactorShardings:
    """Project one tensor's sharding onto its factors (Shardy `buildTensorFactorShardings`).

    A missing sharding is treated as empty, each dim open (or closed if `closed_if_missing`).
    """
    if sharding is not None and sharding.rank != len(tensor_mapping):
        raise InternalError(
            f"sharding {sharding} has rank {sharding.rank} but the tensor mapping has rank "
            f"{len(tensor_mapping)}"
        )
    shardings: dict[int, FactorSharding] = {}
    for dim, dim_mapping in enumerate(tensor_mapping):
        if sharding is None:
            axes: Axes = ()
            is_closed = closed_if_missing
        else:
            axes = sharding.dim_shardings[dim].axes
            is_closed = sharding.dim_shardings[dim].is_closed
        _project_dim(shardings, dim_mapping, axes, is_closed, factor_sizes, mesh)
    if sharding is None:
        return TensorFactorShardings(shardings)
    return TensorFactorShardings(
        shardings, sharding.replicated_axes, sharding.unreduced_axes, sharding.reduction_op
    )


# -- the projection ------------------------------------------------------------------------------


@dataclass(slots=True)
class ShardingProjection:
    """The factor shardings of every operand and result of one op (Shardy `ShardingProjection`).

    Tensor index order is operands then results (`tensor(i)`).
    """

    operands: list[TensorFactorShardings] = field(default_factory=list)
    results: list[TensorFactorShardings] = field(default_factory=list)

    # -- construction -------------------------------------------------------------------------

    @staticmethod
    def build(
        operand_shardings: Sequence[TensorSharding | None],
        result_shardings: Sequence[TensorSharding | None],
        rule: OpShardingRule,
        mesh: AxisSizes,
        closed_if_missing: bool = False,
    ) -> ShardingProjection:
        """Project every operand and result sharding (Shardy `ShardingProjection::build`).

        `None` stands for a value without a sharding: fully open (closed if
        `closed_if_missing`).
        """
        _check_counts("operand", operand_shardings, rule.operand_mappings)
        _check_counts("result", result_shardings, rule.result_mappings)

        def project(
            mappings: Sequence[TensorMapping], shardings: Sequence[TensorSharding | None]
        ) -> list[TensorFactorShardings]:
            return [
                build_tensor_factor_shardings(
                    mapping, sharding, rule.factor_sizes, mesh, closed_if_missing
                )
                for mapping, sharding in zip(mappings, shardings, strict=True)
            ]

        return ShardingProjection(
            project(rule.operand_mappings, operand_shardings),
            project(rule.result_mappings, result_shardings),
        )

    @staticmethod
    def build_from_axes_per_factor(
        axes_per_factor: Sequence[Sequence[AxisRef]], rule: OpShardingRule
    ) -> ShardingProjection:
        """Every tensor gets `axes_per_factor[f]` for each factor f it has, all closed.

        Shardy `ShardingProjection::build(AxesPerFactorRef, OpShardingRuleAttr)`.
        """

        def tensor(mapping: TensorMapping) -> TensorFactorShardings:
            shardings = {
                factor: FactorSharding(
                    tuple(axes_per_factor[factor]),
                    is_closed=True,
                    is_minor_most=factor == dim_mapping[-1],
                )
                for dim_mapping in mapping
                for factor in dim_mapping
            }
            return TensorFactorShardings(shardings)

        return ShardingProjection(
            [tensor(m) for m in rule.operand_mappings],
            [tensor(m) for m in rule.result_mappings],
        )

    def copy(self) -> ShardingProjection:
        return ShardingProjection(
            [t.copy() for t in self.operands], [t.copy() for t in self.results]
        )

    # -- access -------------------------------------------------------------------------------

    @property
    def num_operands(self) -> int:
        return len(self.operands)

    @property
    def num_results(self) -> int:
        return len(self.results)

    @property
    def num_tensors(self) -> int:
        return len(self.operands) + len(self.results)

    def tensor(self, index: int) -> TensorFactorShardings:
        """Operands first, then results (Shardy `getTensor`)."""
        if index < len(self.operands):
            return self.operands[index]
        return self.results[index - len(self.operands)]

    def tensors(self) -> Iterator[TensorFactorShardings]:
        yield from self.operands
        yield from self.results

    def no_updates(self) -> UpdateTensorShardings:
        return UpdateTensorShardings.none(len(self.operands), len(self.results))

    # -- updates ------------------------------------------------------------------------------

    def expand_sharding(self, factor: int, new_axes: Sequence[AxisRef]) -> UpdateTensorShardings:
        """Expand factor `factor` to `new_axes` in every tensor where the old axes are a strict
        prefix (Shardy `ShardingProjection::expandSharding`)."""
        return UpdateTensorShardings(
            [t.expand_sharding_axes(factor, new_axes) for t in self.operands],
            [t.expand_sharding_axes(factor, new_axes) for t in self.results],
        )

    def expand_operand_sharding(
        self, operand: int, factor: int, new_axes: Sequence[AxisRef]
    ) -> bool:
        return self.operands[operand].expand_sharding_axes(factor, new_axes)

    def expand_result_sharding(self, result: int, factor: int, new_axes: Sequence[AxisRef]) -> bool:
        return self.results[result].expand_sharding_axes(factor, new_axes)

    def update_sharding(
        self,
        factor: int,
        new_axes: Sequence[AxisRef],
        new_overflow_axes: Sequence[AxisRef] = (),
    ) -> UpdateTensorShardings:
        """Overwrite the factor's axes and overflow axes in every tensor that has it.

        Shardy `ShardingProjection::updateSharding`.
        """
        return UpdateTensorShardings(
            [t.update_sharding_axes(factor, new_axes, new_overflow_axes) for t in self.operands],
            [t.update_sharding_axes(factor, new_axes, new_overflow_axes) for t in self.results],
        )

    # -- queries ------------------------------------------------------------------------------

    def greatest_common_prefix_axes(self, num_factors: int) -> AxesPerFactor:
        """Per factor, the greatest common prefix of its axes over the tensors that have it.

        Shardy `ShardingProjection::getGreatestCommonPrefixAxes`; factors no tensor has get
        ``()``.
        """
        result: list[Axes | None] = [None] * num_factors
        for tensor in self.tensors():
            for factor, sharding in tensor.factor_index_to_sharding.items():
                seen = result[factor]
                if seen is None:
                    result[factor] = sharding.axis_refs
                else:
                    result[factor] = tuple(
                        greatest_common_prefix_of_lists(seen, sharding.axis_refs)
                    )
        return [axes or () for axes in result]

    def tensors_contain_overflow_axes(self) -> UpdateTensorShardings:
        """Bits of the tensors having a factor with overflow axes (Shardy
        `tensorsContainOverflowAxes`)."""

        def has_overflow(tensor: TensorFactorShardings) -> bool:
            return any(s.overflow_axes for s in tensor.factor_index_to_sharding.values())

        return UpdateTensorShardings(
            [has_overflow(t) for t in self.operands], [has_overflow(t) for t in self.results]
        )

    def create_tensor_shardings(
        self, rule: OpShardingRule, mesh_name: str, mesh: AxisSizes
    ) -> tuple[list[TensorSharding], list[TensorSharding]]:
        """The inverse projection of every operand and result."""
        operands = [
            t.create_tensor_sharding(m, rule.factor_sizes, mesh_name, mesh)
            for t, m in zip(self.operands, rule.operand_mappings, strict=True)
        ]
        results = [
            t.create_tensor_sharding(m, rule.factor_sizes, mesh_name, mesh)
            for t, m in zip(self.results, rule.result_mappings, strict=True)
        ]
        return operands, results

    def __str__(self) -> str:
        lines = [f"operand {i}: {t}" for i, t in enumerate(self.operands)]
        lines += [f"result {i}: {t}" for i, t in enumerate(self.results)]
        return "\n".join(lines)


def _check_counts(kind: str, shardings: Sequence[object], mappings: Sequence[object]) -> None:
    if len(shardings) != len(mappings):
        raise InternalError(
            f"got {len(shardings)} {kind} shardings but the sharding rule has "
            f"{len(mappings)} {kind} mappings"
        )
