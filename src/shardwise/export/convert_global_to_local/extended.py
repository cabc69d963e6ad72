"""Going further than Shardy in the conversion itself (``ConversionOptions.beyond_reference``).

`shardwise partition` turns these patterns on; the pass ``sdy-convert-global-to-local``
keeps the reference's behaviour (an error where the reference rejects). Each is
communication-free; `fallback.replicate_where_the_reference_stops` has already made the
ops' shardings ones these patterns can take.

| op                              | reference                  | per-device program          |
| ------------------------------- | -------------------------- | --------------------------- |
| `chlo` elementwise ops          | failed to legalize         | the op on local types       |
| `chlo.top_k`                    | failed to legalize         | the op on local types (its  |
|                                 |                            | last dim is replicated)     |
| sharded `stablehlo.constant`    | verifier: inferred type    | the global constant and a   |
|                                 | incompatible               | `dynamic_slice` of this     |
|                                 |                            | device's piece              |
| `sdy.all_reduce` after a       | an `add` body: a wrong     | the reduce's op (max, min,  |
| reduce that is not a sum        | program                    | product, and, or)           |
| `dynamic_slice` taking a        | verifier: slice size       | slice size of that dim the  |
| sharded dim whole               | greater than dim size      | local size (the start index |
|                                 |                            | is clamped to 0 either way) |
"""

from __future__ import annotations

import re

from shardwise.errors import ShardwiseError
from shardwise.export.collective_attrs import parse_axis_ref_list
from shardwise.export.convert_global_to_local.builder import I64, OpBuilder, i64_array, shard_index
from shardwise.export.convert_global_to_local.collectives import COLLECTIVE_PATTERNS
from shardwise.export.convert_global_to_local.fallback import is_elementwise, reducer
from shardwise.export.convert_global_to_local.ops import generic, sdy_constant
from shardwise.export.convert_global_to_local.state import ConversionState
from shardwise.ir import Op, TensorType
from shardwise.rules.stablehlo_attrs import parse_i64_array

__all__ = ["extended_pattern"]

_ALIAS_RE = re.compile(
    r"output_operand_alias<output_tuple_indices = \[([^\]]*)\], operand_index = (\d+), "
    r"operand_tuple_indices = \[([^\]]*)\]>"
)


def extended_pattern(op: Op):
    """The pattern for `op` in the extended mode, or None for the reference's."""
    if op.name == "chlo.top_k":
        return top_k
    if op.name.startswith("chlo."):
        return chlo_elementwise
    return _PATTERNS.get(op.name)


def chlo_elementwise(state: ConversionState, op: Op) -> None:
    if not is_elementwise(op):
        raise ShardwiseError(
            f"'{op.name}' has operands and results of different shapes: shardwise partition "
            "converts the chlo ops that are elementwise and chlo.top_k only; lower it to "
            "StableHLO first (MLIR's chlo-legalize-to-stablehlo)",
            op.location,
        )
    generic(state, op)
    _same_local_shapes(state, op)


def _same_local_shapes(state: ConversionState, op: Op) -> None:
    types = [v.type for v in (*state.operands(op), *op.results)]
    shapes = {t.shape for t in types if isinstance(t, TensorType)}
    if len(shapes) > 1:
        raise ShardwiseError(
            f"'{op.name}': its operands and results are sharded differently ({sorted(shapes)} "
            "on each device); the reshards before it are missing",
            op.location,
        )


def top_k(state: ConversionState, op: Op) -> None:
    operand = op.operands[0]
    sharding = state.sharding(operand)
    if sharding is not None and sharding.dim_shardings and sharding.dim_shardings[-1].axes:
        raise ShardwiseError(
            f"'chlo.top_k': the sorted (last) dim of its operand is sharded ({sharding}); "
            "it must be replicated before the op",
            op.location,
        )
    generic(state, op)
    (value,) = state.operands(op)
    for result in op.results:
        assert isinstance(result.type, TensorType) and isinstance(value.type, TensorType)
        if result.type.shape[:-1] != value.type.shape[:-1]:
            raise ShardwiseError(
                f"'chlo.top_k': its operand is {value.type} on each device but its result "
                f"{result.type}: their leading dims are sharded differently",
                op.location,
            )


def constant(state: ConversionState, op: Op) -> None:
    """A sharded constant: as an ``sdy.constant`` (this device's piece of the value)."""
    sdy_constant(state, op)


def dynamic_slice(state: ConversionState, op: Op) -> None:
    """Dims taken whole get their local size; a sharded dim sliced partially is an error."""
    operand = op.operands[0]
    global_type = state.global_type(operand)
    generic(state, op)
    local = state.lookup(operand).type
    assert isinstance(global_type, TensorType) and isinstance(local, TensorType)
    sizes = parse_i64_array(op.properties["slice_sizes"])
    new_sizes = list(sizes)
    for dim, (size, whole, piece) in enumerate(
        zip(sizes, global_type.shape, local.shape, strict=True)
    ):
        if piece == whole:
            continue
        if size != whole:
            raise ShardwiseError(
                f"'stablehlo.dynamic_slice' slices dimension {dim} to {size} of {whole}, and "
                f"the dimension is sharded ({piece} on each device): replicate it before the "
                "slice",
                op.location,
            )
        new_sizes[dim] = piece
    result = op.results[0].type
    assert isinstance(result, TensorType)
    if tuple(new_sizes) != result.shape:
        raise ShardwiseError(
            f"'stablehlo.dynamic_slice': the slice is {new_sizes} on each device but its "
            f"result {result}: the operand and the result are sharded differently (or the "
            "operand is a loop-carried value, which the conversion leaves global)",
            op.location,
        )
    op.properties["slice_sizes"] = i64_array(new_sizes)


_SUMMABLE = frozenset({"stablehlo.add"})
_REDUCERS = frozenset(
    {
        "stablehlo.maximum",
        "stablehlo.minimum",
        "stablehlo.multiply",
        "stablehlo.and",
        "stablehlo.or",
    }
)


def all_reduce(state: ConversionState, op: Op) -> None:
    """An ``sdy.all_reduce`` after a ``stablehlo.reduce`` combines with that reduce's op.

    ``sdy.all_reduce`` sums, and the 0.10.2 global-to-local always gives the StableHLO
    all-reduce an ``add`` body, also after a reduce that takes the max of a sharded dim: a
    wrong program. Here the body is the reduce's op (max, min, product, and, or); a reduce
    whose body is anything else has had its reduced dims gathered instead
    (`fallback._gather_reduced_dims`), so one left here is an error.
    """
    source = op.operands[0].defining_op
    kind = reducer(source)
    reduced = source is not None and source.name == "stablehlo.reduce"
    if reduced and kind not in _SUMMABLE and kind not in _REDUCERS:
        raise ShardwiseError(
            f"'sdy.all_reduce' after a stablehlo.reduce over a sharded dim that is not a "
            f"sum, max, min, product, and or or ({kind or 'a body of several ops'}): "
            "the devices' partial results cannot be combined; replicate the reduced dim "
            "before the reduce",
            op.location,
        )
    COLLECTIVE_PATTERNS["sdy.all_reduce"](state, op)
    if kind in _REDUCERS:
        created = state.lookup(op.results[0]).defining_op
        assert created is not None and created.name == "stablehlo.all_reduce"
        created.regions[0].entry.ops[0].name = kind


def replicated_to_unreduced(state: ConversionState, op: Op) -> None:
    """A replicated value made partial over `axes`: one device of each group along them
    keeps it, the others hold zeros, so that the sum over those axes is the value."""
    (value,) = state.operands(op)
    sharding = state.sharding(op.results[0])
    assert sharding is not None
    mesh = state.require_mesh(sharding, op)
    axes = parse_axis_ref_list(op.properties["axes"])
    t = value.type
    assert isinstance(t, TensorType)
    b = OpBuilder(op)
    leaders = [
        "true" if shard_index(d, mesh, axes) == 0 else "false" for d in range(mesh.total_size)
    ]
    table_type = TensorType((mesh.total_size,), "i1")
    table = b.constant(f"dense<[{', '.join(leaders)}]> : {table_type}", table_type)
    partition = b.value("stablehlo.partition_id", [], TensorType((), "ui32"))
    partition = b.value("stablehlo.convert", [partition], TensorType((), I64))
    leader = b.reshape(b.dynamic_slice(table, [partition], [1]), ())
    keep = b.value(
        "stablehlo.broadcast_in_dim",
        [leader],
        TensorType(t.shape, "i1"),
        broadcast_dimensions=i64_array([]),
    )
    zeros = b.constant(f"dense<{_zero(t.element_type)}> : {t}", t)
    state.replace(op, [b.value("stablehlo.select", [keep, value, zeros], t)])


def _zero(element_type: str) -> str:
    if element_type == "i1":
        return "false"
    if element_type.startswith(("f", "bf")):
        return "0.000000e+00"
    return "0"


_PATTERNS = {
    "sdy.replicated_to_unreduced": replicated_to_unreduced,
    "sdy.all_reduce": all_reduce,
    "stablehlo.constant": constant,
    "stablehlo.dynamic_slice": dynamic_slice,
}
