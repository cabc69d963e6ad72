"""Going further than Shardy with non-divisible dims: a gather's indices keep its bounds.

A ``stablehlo.gather`` clamps each start index to ``[0, size - slice size]`` of the operand
dim it indexes. ``sdy-pad-for-divisibility`` makes that size larger: an index past the end
then reads padding (zeros) where the unpadded gather reads the last element (fuzz --check
2030-436-2). jaxlib 0.10.2's chain writes that program as it is (``--like-shardy`` too: it is
right for indices within bounds). `shardwise partition` records each gather's operand type
before padding (`record_gathers`) and afterwards clamps the indices to the unpadded bounds
itself (`clamp_padded_gathers`), before the gather, on the global program:

    %i = stablehlo.clamp 0, %indices, <size - slice size>

Where the index vector has several components, the bound of each is chosen by an iota along
the index vector dim. Every new value is sharded like the indices. (A scatter skips a window
out of bounds: one into the padding writes padding, which no op reads as data.)
"""

from __future__ import annotations

from shardwise.export.convert_global_to_local.padding_masks import ops_after_padding
from shardwise.ir import Module, Op, RawAttr, TensorType, Type, Value
from shardwise.rules.stablehlo_attrs import parse_gather_dimension_numbers, parse_i64_array
from shardwise.sdy.shardings import get_sharding, set_sharding
from shardwise.sharding import TensorSharding

__all__ = ["record_gathers", "clamp_padded_gathers"]

Recorded = list[Type]
_GATHER = "stablehlo.gather"


def record_gathers(module: Module) -> Recorded:
    """The operand type of each gather, in program order, before padding."""
    return [op.operands[0].type for op in module.walk() if op.name == _GATHER]


def clamp_padded_gathers(module: Module, recorded: Recorded) -> None:
    """After padding (which keeps ops in order): clamp the indices of each gather indexing a
    padded dim to the bounds of its unpadded operand (see the module docstring)."""
    for op, original in ops_after_padding(module, _GATHER, recorded):
        padded = op.operands[0].type
        if isinstance(padded, TensorType) and isinstance(original, TensorType):
            _clamp(op, original, padded)


def _clamp(op: Op, original: TensorType, padded: TensorType) -> None:
    dims = parse_gather_dimension_numbers(op.properties["dimension_numbers"])
    sizes = parse_i64_array(op.properties["slice_sizes"])
    index_map = dims.start_index_map
    if all(padded.shape[d] == original.shape[d] for d in index_map):
        return
    indices = op.operands[1]
    highs = [original.shape[d] - sizes[d] for d in index_map]
    b = _Builder(op, indices)
    low = b.splat(0)
    high = b.per_component(highs, dims.index_vector_dim)
    op.set_operand(1, b.op("stablehlo.clamp", [low, indices, high]))


class _Builder:
    """New ops before `anchor`, shaped and sharded like `indices` unless told otherwise."""

    def __init__(self, anchor: Op, indices: Value) -> None:
        assert isinstance(indices.type, TensorType)
        self.anchor, self.type = anchor, indices.type
        self.sharding: TensorSharding | None = get_sharding(indices)

    def op(
        self, name: str, operands: list[Value], result: Type | None = None, direction: str = ""
    ) -> Value:
        properties: dict[str, object] = {}
        if direction:
            properties["comparison_direction"] = RawAttr(
                f"#stablehlo<comparison_direction {direction}>"
            )
        return self._create(name, operands, result or self.type, properties)

    def splat(self, value: int) -> Value:
        scalar = TensorType((), self.type.element_type)
        text = f"dense<{value}> : {scalar}"
        constant = self._create("stablehlo.constant", [], scalar, {"value": RawAttr(text)}, False)
        return self._create(
            "stablehlo.broadcast_in_dim",
            [constant],
            self.type,
            {"broadcast_dimensions": RawAttr("array<i64>")},
        )

    def per_component(self, values: list[int], index_vector_dim: int) -> Value:
        """A tensor like the indices holding ``values[k]`` at component k of the index vector."""
        result = self.splat(values[0])
        if len(set(values)) == 1 or index_vector_dim >= self.type.rank:
            return result
        iota = self._create(
            "stablehlo.iota",
            [],
            self.type,
            {"iota_dimension": RawAttr(f"{index_vector_dim} : i64")},
        )
        pred = TensorType(self.type.shape, "i1")
        for k, value in enumerate(values[1:], start=1):
            here = self.op("stablehlo.compare", [iota, self.splat(k)], pred, "EQ")
            result = self.op("stablehlo.select", [here, self.splat(value), result])
        return result

    def _create(
        self,
        name: str,
        operands: list[Value],
        result: Type,
        properties: dict[str, object],
        sharded: bool = True,
    ) -> Value:
        anchor = self.anchor
        new = Op(
            name,
            operands,
            [result],
            properties,
            location=anchor.location,
            loc_text=anchor.loc_text,
        )
        block = anchor.parent
        assert block is not None
        block.insert_before(anchor, new)
        if sharded and self.sharding is not None:
            set_sharding(new.results[0], self.sharding)
        return new.results[0]
