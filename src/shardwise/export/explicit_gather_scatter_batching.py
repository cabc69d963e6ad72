"""`sdy-explicit-gather-scatter-batching` (``transforms/import/explicit_gather_scatter_batching.cc``).

A gather or scatter whose dim 0 is an *implicit* batch - operand dim 0 indexed by an index
component that is an iota along dim 0 of the indices, the same size as indices dim 0 - gets it
as an explicit batching dim instead: ``operand_batching_dims = [0]``,
``start_indices_batching_dims = [0]`` (``input_batching_dims``/``scatter_indices_batching_dims``
for scatter), the component leaves ``start_index_map`` and ``collapsed_slice_dims``
(``scatter_dims_to_operand_dims`` and ``inserted_window_dims``), and the indices lose that
component (the concatenate's other inputs, or slices of the indices).

| indices component 0 of index vector, op | rewritten? |
| --- | --- |
| ``iota dim = 0`` (through reshape, broadcast_in_dim, clamp, select) | yes |
| ``iota dim = 1`` | no |
| op already has batching dims, index vector dim absent or of size 1 | no |
| operand dim 0 size != indices dim 0 size, dim 0 not in ``start_index_map`` | no |
| dim 0 not collapsed (``collapsed_slice_dims``) | no |

Shardy runs the two patterns with MLIR's greedy driver, which also uniques and hoists
constants and erases dead ops; `canonicalize.canonicalize` is that driver here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from shardwise.errors import VerifyError
from shardwise.export.canonicalize import Pattern, Rewriter, canonicalize
from shardwise.ir import Module, Op, RawAttr, TensorType, Value
from shardwise.passes import sdy_pass
from shardwise.rules.stablehlo_attrs import (
    parse_gather_dimension_numbers,
    parse_int,
    parse_scatter_dimension_numbers,
)

__all__ = ["explicit_gather_scatter_batching", "explicit_gather_scatter_batching_func"]


@dataclass(frozen=True, slots=True)
class _FuncScope:
    """What the greedy driver reads of its root: applied to one func, as Shardy's func pass."""

    op: Op


@sdy_pass("sdy-explicit-gather-scatter-batching", nests_in_func=True)
def explicit_gather_scatter_batching(module: Module) -> None:
    """The pass on every ``func.func`` of `module`, in order (the pass manager's nesting)."""
    for func in module.funcs:
        explicit_gather_scatter_batching_func(func)


def explicit_gather_scatter_batching_func(func: Op) -> None:
    """Make implicit dim-0 batching of every gather/scatter in `func` explicit."""
    patterns: dict[str, list[Pattern]] = {
        "stablehlo.gather": [_gather_pattern],
        "stablehlo.scatter": [_scatter_pattern],
    }
    canonicalize(cast(Module, _FuncScope(func)), patterns)


# -- matching -----------------------------------------------------------------------------


def _unwrap(value: Value) -> Value:
    """Look through reshape, broadcast_in_dim, clamp (its operand) and select (the iota side,
    else the true side) to the value they pass on."""
    while (op := value.defining_op) is not None:
        if op.name in ("stablehlo.reshape", "stablehlo.broadcast_in_dim"):
            value = op.operands[0]
        elif op.name == "stablehlo.clamp":
            value = op.operands[1]
        elif op.name == "stablehlo.select":
            on_false = op.operands[2]
            is_iota = on_false.defining_op is not None and on_false.defining_op.name == (
                "stablehlo.iota"
            )
            value = on_false if is_iota else op.operands[1]
        else:
            break
    return value


def _concat_along(value: Value, dim: int) -> Op | None:
    op = value.defining_op
    if op is None or op.name != "stablehlo.concatenate":
        return None
    return op if parse_int(op.properties["dimension"]) == dim else None


def _is_iota_component(indices: Value, index_vector_dim: int, component: int) -> bool:
    """`verifyIotaOrigin`: the component (a concatenate input if the indices are one, by
    input position) comes from an iota along dim 0."""
    candidate = indices
    concat = indices.defining_op
    if concat is not None and concat.name == "stablehlo.concatenate":
        if parse_int(concat.properties["dimension"]) != index_vector_dim:
            return False
        if component >= len(concat.operands):
            return False
        candidate = concat.operands[component]
    source = _unwrap(candidate).defining_op
    return (
        source is not None
        and source.name == "stablehlo.iota"
        and parse_int(source.properties["iota_dimension"]) == 0
    )


def _batch_component(
    operand_type: TensorType,
    indices_type: TensorType,
    index_vector_dim: int,
    index_map: tuple[int, ...],
) -> int | None:
    """The index-vector position that indexes operand dim 0, if dim 0 can be a batch."""
    if operand_type.rank == 0 or indices_type.rank == 0:
        return None
    if index_vector_dim >= indices_type.rank or indices_type.shape[index_vector_dim] <= 1:
        return None
    if indices_type.shape[0] != operand_type.shape[0] or 0 not in index_map:
        return None
    return index_map.index(0)


# -- rewriting ----------------------------------------------------------------------------


def _new_op(
    rw: Rewriter, like: Op, name: str, operands: list[Value], type: TensorType, **props: str
) -> Op:
    """A new op `name` before `like`, at its location; `props` are the properties' texts."""
    op = Op(
        name,
        operands,
        [type],
        properties={k: RawAttr(v) for k, v in props.items()},
        location=like.location,
        loc_text=like.loc_text,
    )
    return rw.insert_before(like, op)


def _i64_array(values: list[int]) -> str:
    return "array<i64" + "".join(f"{', ' if i else ': '}{v}" for i, v in enumerate(values)) + ">"


def _without_component(
    rw: Rewriter, op: Op, indices: Value, index_vector_dim: int, removed: int
) -> Value:
    """`sliceAndConcatenateIndices`: the indices minus one index-vector component."""
    type = cast(TensorType, indices.type)
    shape = list(type.shape)
    total = shape[index_vector_dim]
    reduced = TensorType(
        tuple(s - 1 if d == index_vector_dim else s for d, s in enumerate(shape)),
        type.element_type,
    )
    dim_text = f"{index_vector_dim} : i64"
    concat = _concat_along(indices, index_vector_dim)
    if concat is not None and len(concat.operands) == total:
        inputs = [v for i, v in enumerate(concat.operands) if i != removed]
        if len(inputs) == 1:
            return inputs[0]
        return _new_op(
            rw, op, "stablehlo.concatenate", inputs, reduced, dimension=dim_text
        ).results[0]
    parts = []
    for start, stop in ((0, removed), (removed + 1, total)):
        if start >= stop:
            continue
        begin = [start if d == index_vector_dim else 0 for d in range(len(shape))]
        limit = [stop if d == index_vector_dim else s for d, s in enumerate(shape)]
        part_shape = tuple(
            stop - start if d == index_vector_dim else s for d, s in enumerate(shape)
        )
        part = _new_op(
            rw,
            op,
            "stablehlo.slice",
            [indices],
            TensorType(part_shape, type.element_type),
            start_indices=_i64_array(begin),
            limit_indices=_i64_array(limit),
            strides=_i64_array([1] * len(shape)),
        )
        parts.append(part.results[0])
    if len(parts) == 1:
        return parts[0]
    return _new_op(rw, op, "stablehlo.concatenate", parts, reduced, dimension=dim_text).results[0]


def _struct(mnemonic: str, fields: list[tuple[str, tuple[int, ...] | int]]) -> RawAttr:
    """``#stablehlo.<mnemonic><a = [..], ..., index_vector_dim = n>``: empty lists left out."""
    parts = []
    for name, value in fields:
        if isinstance(value, int):
            parts.append(f"{name} = {value}")
        elif value:
            parts.append(f"{name} = [{', '.join(str(v) for v in value)}]")
    return RawAttr(f"#stablehlo.{mnemonic}<{', '.join(parts)}>")


def _replace(rw: Rewriter, op: Op, indices_index: int, indices: Value, props: dict) -> None:
    """Create the rewritten op before `op` (new indices, `props` over its properties, its
    discardable attributes and regions) and replace `op` with it."""
    operands = list(op.operands)
    operands[indices_index] = indices
    new = Op(
        op.name,
        operands,
        [r.type for r in op.results],
        properties={**op.properties, **props},
        attributes=dict(op.attributes),
        location=op.location,
        loc_text=op.loc_text,
        result_names=[r.name for r in op.results],
    )
    regions, op.regions = op.regions, []
    for region in regions:
        new.add_region(region)
    rw.insert_before(op, new)
    rw.replace_op(op, new.results)


def _gather_pattern(op: Op, rw: Rewriter) -> bool:
    nums = parse_gather_dimension_numbers(op.properties["dimension_numbers"])
    if nums.operand_batching_dims:
        return False
    operand, indices = op.operands[0], op.operands[1]
    component = _batch_component(
        cast(TensorType, operand.type),
        cast(TensorType, indices.type),
        nums.index_vector_dim,
        nums.start_index_map,
    )
    if component is None or not _is_iota_component(indices, nums.index_vector_dim, component):
        return False
    if 0 not in nums.collapsed_slice_dims:
        return False
    _check_index_vector_dim(op, nums.index_vector_dim, "start_indices_batching_dims", "")
    new_indices = _without_component(rw, op, indices, nums.index_vector_dim, component)
    dims = _struct(
        "gather",
        [
            ("offset_dims", nums.offset_dims),
            ("collapsed_slice_dims", tuple(d for d in nums.collapsed_slice_dims if d != 0)),
            ("operand_batching_dims", (0,)),
            ("start_indices_batching_dims", (0,)),
            ("start_index_map", _without(nums.start_index_map, component)),
            ("index_vector_dim", nums.index_vector_dim),
        ],
    )
    sorted_ = op.properties.get("indices_are_sorted", RawAttr("false"))
    _replace(rw, op, 1, new_indices, {"dimension_numbers": dims, "indices_are_sorted": sorted_})
    return True


def _scatter_pattern(op: Op, rw: Rewriter) -> bool:
    nums = parse_scatter_dimension_numbers(op.properties["scatter_dimension_numbers"])
    if nums.input_batching_dims:
        return False
    indices_index = (len(op.operands) - 1) // 2  # inputs..., scatter_indices, updates...
    indices = op.operands[indices_index]
    component = _batch_component(
        cast(TensorType, op.operands[0].type),
        cast(TensorType, indices.type),
        nums.index_vector_dim,
        nums.scatter_dims_to_operand_dims,
    )
    if component is None or not _is_iota_component(indices, nums.index_vector_dim, component):
        return False
    if 0 not in nums.inserted_window_dims:
        return False
    _check_index_vector_dim(op, nums.index_vector_dim, "scatter_indices_batching_dims", ".")
    new_indices = _without_component(rw, op, indices, nums.index_vector_dim, component)
    dims = _struct(
        "scatter",
        [
            ("update_window_dims", nums.update_window_dims),
            ("inserted_window_dims", tuple(d for d in nums.inserted_window_dims if d != 0)),
            ("input_batching_dims", (0,)),
            ("scatter_indices_batching_dims", (0,)),
            (
                "scatter_dims_to_operand_dims",
                _without(nums.scatter_dims_to_operand_dims, component),
            ),
            ("index_vector_dim", nums.index_vector_dim),
        ],
    )
    props = {
        "scatter_dimension_numbers": dims,
        "indices_are_sorted": op.properties.get("indices_are_sorted", RawAttr("false")),
        "unique_indices": op.properties.get("unique_indices", RawAttr("false")),
    }
    _replace(rw, op, indices_index, new_indices, props)
    return True


def _check_index_vector_dim(op: Op, index_vector_dim: int, field: str, end: str) -> None:
    """The new batching dim 0 must not be the index vector dim (StableHLO's verifier)."""
    if index_vector_dim == 0:
        raise VerifyError(
            f"expects {field} not to include index_vector_dim 0{end} (the implicit batch dim of "
            f"'{op.name}' is its index vector dim; move index_vector_dim off dim 0)",
            op.location,
        )


def _without(values: tuple[int, ...], position: int) -> tuple[int, ...]:
    return values[:position] + values[position + 1 :]
