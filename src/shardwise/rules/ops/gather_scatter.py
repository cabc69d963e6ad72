"""gather and scatter: factors for the slices' offset and batch dims, collapsed dims and the
index vector dim (one procedure for both, as in Shardy's `addGatherScatterFactors`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from shardwise.ir import Op, TensorType
from shardwise.rules import stablehlo_attrs as attrs
from shardwise.rules.builder import NULL_DIM, OpShardingRuleBuilder
from shardwise.rules.ops.common import operand_shape, result_shape
from shardwise.rules.registry import register
from shardwise.rules.rule import FactorType, OpShardingRule

PT = FactorType.PASS_THROUGH
R = FactorType.REDUCTION
NR = FactorType.NEED_REPLICATION

# (input dim, indices dim, slices dim, size, type, blocked) -> adds one factor.
AddFactorFn = Callable[[int, int, int, int, FactorType, bool], None]


@dataclass(frozen=True, slots=True)
class _Layout:
    """What gather and scatter have in common (slices = gather result / scatter updates)."""

    input_shape: tuple[int, ...]
    slices_shape: tuple[int, ...]
    indices_shape: tuple[int, ...]
    index_vector_dim: int
    offset_dims: tuple[int, ...]
    collapsed_dims: tuple[int, ...]
    input_batching_dims: tuple[int, ...]
    indices_batching_dims: tuple[int, ...]
    is_scatter: bool
    implicit_batch_type: FactorType = PT


def _offset_dim_factors(layout: _Layout, input_dim: int, slices_dim: int, add: AddFactorFn) -> None:
    in_size = layout.input_shape[input_dim]
    slices_size = layout.slices_shape[slices_dim]
    if in_size == slices_size:
        add(input_dim, NULL_DIM, slices_dim, in_size, PT, False)
    elif layout.is_scatter:
        add(input_dim, NULL_DIM, NULL_DIM, in_size, NR, False)
        add(NULL_DIM, NULL_DIM, slices_dim, slices_size, NR, False)
    elif slices_size == 1:
        # A sharded input dim read at one offset per slice: the result needs an all-reduce.
        add(input_dim, NULL_DIM, NULL_DIM, in_size, R, False)
        add(NULL_DIM, NULL_DIM, slices_dim, slices_size, NR, False)
    else:
        add(input_dim, NULL_DIM, slices_dim, in_size, NR, True)


def _batch_dim_factor(layout: _Layout, batch_pos: int, slices_dim: int, add: AddFactorFn) -> None:
    indices_dim = batch_pos if batch_pos < layout.index_vector_dim else batch_pos + 1
    input_dim = NULL_DIM
    factor_type = PT
    if indices_dim in layout.indices_batching_dims:
        input_dim = layout.input_batching_dims[layout.indices_batching_dims.index(indices_dim)]
    elif layout.is_scatter:
        factor_type = layout.implicit_batch_type
    add(input_dim, indices_dim, slices_dim, layout.slices_shape[slices_dim], factor_type, False)


def _add_gather_scatter_factors(layout: _Layout, add: AddFactorFn) -> None:
    input_dim = 0
    batch_pos = 0
    skipped = set(layout.collapsed_dims) | set(layout.input_batching_dims)
    for slices_dim in range(len(layout.slices_shape)):
        if slices_dim not in layout.offset_dims:
            _batch_dim_factor(layout, batch_pos, slices_dim, add)
            batch_pos += 1
            continue
        while input_dim in skipped:
            input_dim += 1
        _offset_dim_factors(layout, input_dim, slices_dim, add)
        input_dim += 1
    for dim in layout.collapsed_dims:
        size = layout.input_shape[dim]
        # Scatter writes whole inserted dims; a gather reading a sharded one must all-reduce.
        factor_type = PT if layout.is_scatter else (NR if size == 1 else R)
        add(dim, NULL_DIM, NULL_DIM, size, factor_type, False)
    if layout.index_vector_dim < len(layout.indices_shape):
        size = layout.indices_shape[layout.index_vector_dim]
        add(NULL_DIM, layout.index_vector_dim, NULL_DIM, size, NR, False)


@register("stablehlo.gather")
def gather_rule(op: Op, conservative: bool) -> OpShardingRule:
    """``([k, j], [i, l])->([i, j]) {i=5, j=4, k=8, l=1} reduction={k} need_replication={l}``
    for rows of an 8x4 table at 5 indices: batch dims pass from indices to result, full-size
    offset dims from operand to result; a sharded collapsed dim needs an all-reduce.
    """
    nums = attrs.parse_gather_dimension_numbers(attrs.required_attr(op, "dimension_numbers"))
    indices = operand_shape(op, 1)
    layout = _Layout(
        operand_shape(op, 0),
        result_shape(op),
        indices,
        nums.index_vector_dim,
        nums.offset_dims,
        nums.collapsed_slice_dims,
        nums.operand_batching_dims,
        nums.start_indices_batching_dims,
        is_scatter=False,
    )
    builder = OpShardingRuleBuilder.for_op(op)

    def add(in_dim: int, idx_dim: int, sl_dim: int, size: int, t: FactorType, b: bool) -> None:
        builder.add_factor((in_dim, idx_dim), (sl_dim,), size, t, b)

    _add_gather_scatter_factors(layout, add)
    return builder.build()


_REDUCTION_OPS = frozenset(
    {"stablehlo.add", "stablehlo.multiply", "stablehlo.maximum", "stablehlo.minimum"}
)
_LOGICAL_OPS = frozenset({"stablehlo.and", "stablehlo.or"})


def _is_commutative_reduction(op: Op, num_inputs: int) -> bool:
    """The update computation combines each input with its update by one common op among add,
    multiply, max, min (and/or on i1): then partial scatters can be all-reduced."""
    if not op.regions or not op.regions[0].blocks:
        return False
    block = op.regions[0].entry
    terminator = block.terminator
    if len(block.args) != 2 * num_inputs or terminator is None:
        return False
    if terminator.name != "stablehlo.return" or len(terminator.operands) != num_inputs:
        return False
    kinds = set()
    for index, value in enumerate(terminator.operands):
        combiner = value.defining_op
        if (
            combiner is None
            or len(combiner.operands) != 2
            or not isinstance(value.type, TensorType)
        ):
            return False
        logical = value.type.element_type == "i1" and combiner.name in _LOGICAL_OPS
        if not logical and combiner.name not in _REDUCTION_OPS:
            return False
        kinds.add(combiner.name)
        expected = {block.args[index], block.args[index + num_inputs]}
        lhs, rhs = combiner.operands
        if {lhs, rhs} != expected:
            return False
    return len(kinds) == 1


def _combines_commutatively(op: Op) -> bool:
    """What `scatter_rule` reads of the scatter's update computation."""
    return _is_commutative_reduction(op, len(op.results))


@register("stablehlo.scatter", regions_read=_combines_commutatively)
def scatter_rule(op: Op, conservative: bool) -> OpShardingRule:
    """``([l, j], [i, m], [i, k])->([l, j]) reduction={i} need_replication={j, k, m}`` for
    adding 5x2 updates into an 8x4 operand: the update batch dim sums into the result when the
    combiner is a commutative reduction (else replication), inserted dims pass through.
    """
    nums = attrs.parse_scatter_dimension_numbers(
        attrs.required_attr(op, "scatter_dimension_numbers")
    )
    num_inputs = len(op.results)
    indices = operand_shape(op, num_inputs)
    implicit = R if _combines_commutatively(op) else NR
    layout = _Layout(
        operand_shape(op, 0),
        operand_shape(op, num_inputs + 1),
        indices,
        nums.index_vector_dim,
        nums.update_window_dims,
        nums.inserted_window_dims,
        nums.input_batching_dims,
        nums.scatter_indices_batching_dims,
        True,
        implicit,
    )
    builder = OpShardingRuleBuilder.for_op(op)

    def add(in_dim: int, idx_dim: int, sl_dim: int, size: int, t: FactorType, b: bool) -> None:
        operand_dims = (in_dim,) * num_inputs + (idx_dim,) + (sl_dim,) * num_inputs
        builder.add_factor(operand_dims, (in_dim,) * num_inputs, size, t, b)

    _add_gather_scatter_factors(layout, add)
    return builder.build()
