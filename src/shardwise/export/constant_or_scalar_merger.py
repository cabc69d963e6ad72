"""`sdy-constant-or-scalar-merger` (``export/constant_or_scalar_merger.cc``).

Undoes `sdy-constant-or-scalar-splitter`: within one region, a constant is replaced by an
earlier constant with the same attribute dictionary (value and shardings), and a broadcast
of a scalar by an earlier broadcast of the same scalar with the same attributes and type.
"""

from __future__ import annotations

from typing import Any

from shardwise.ir import BatchErase, Op, RawAttr, Region, TensorType, ops_in_post_order
from shardwise.passes import FUNC, sdy_pass

__all__ = ["constant_or_scalar_merger", "CONSTANT_LIKE_OPS"]

# Ops with MLIR's ConstantLike trait that can appear in our modules, plus `sdy.constant`.
CONSTANT_LIKE_OPS = frozenset({"sdy.constant", "stablehlo.constant", "arith.constant"})
_CANDIDATE_OPS = CONSTANT_LIKE_OPS | {"stablehlo.broadcast_in_dim"}  # what `_cache_key` keys


def _attr_dict_key(op: Op, texts: dict[Any, Any]) -> tuple[tuple[str, str], ...]:
    """`getAttrDictionary()`: inherent and discardable attributes, sorted by name.

    Values compare by their text; `texts` memoizes the text of hashable (frozen) values,
    which print the same when equal: one sharding on many constants is printed once. It also
    memoizes the key of each op's (attributes, properties) items when all are hashable: the
    constants and broadcasts of a model share a few such dictionaries.
    """
    items = (*op.attributes.items(), *op.properties.items())
    try:
        key = texts.get(items)
    except TypeError:  # a dict or array attribute
        return _text_key(op, texts)
    if key is None:
        key = texts[items] = _text_key(op, texts)
    return key


def _text_key(op: Op, texts: dict[Any, Any]) -> tuple[tuple[str, str], ...]:
    merged = {**op.attributes, **op.properties}
    return tuple(sorted((k, _text(v, texts)) for k, v in merged.items()))


def _text(value: Any, texts: dict[Any, Any]) -> str:
    if type(value) is RawAttr:
        return value.text
    try:
        text = texts.get(value)
    except TypeError:  # a dict or array attribute: mutable, not hashable
        return str(value)
    if text is None:
        text = texts[value] = str(value)
    return text


def _parent_region(op: Op) -> Region | None:
    return op.parent.parent if op.parent is not None else None


def _is_scalar_broadcast(op: Op) -> bool:
    if op.name != "stablehlo.broadcast_in_dim":
        return False
    operand_type = op.operands[0].type
    return isinstance(operand_type, TensorType) and operand_type.rank == 0


def _cache_key(op: Op, texts: dict[Any, Any]) -> tuple | None:
    if op.name in CONSTANT_LIKE_OPS:
        return ("constant", _attr_dict_key(op, texts), id(_parent_region(op)))
    if _is_scalar_broadcast(op):
        return (
            "broadcast",
            _attr_dict_key(op, texts),
            id(_parent_region(op)),
            op.results[0].type,  # frozen, equal exactly when their texts are
            id(op.operands[0]),
        )
    return None


@sdy_pass("sdy-constant-or-scalar-merger", anchor=FUNC)
def constant_or_scalar_merger(func: Op) -> None:
    """Deduplicate constants and scalar broadcasts, walking in MLIR's post-order."""
    cache: dict[tuple, Op] = {}
    texts: dict[Any, Any] = {}
    with BatchErase() as batch:  # thousands of duplicates in one block: erasing is batched
        # Erasures wait for the batch's end: the candidates collected first are what the walk
        # would meet.
        for op in ops_in_post_order(func, _CANDIDATE_OPS):
            key = _cache_key(op, texts)
            if key is None:
                continue
            cached = cache.setdefault(key, op)
            if cached is op:
                continue
            for old, new in zip(op.results, cached.results, strict=True):
                old.replace_all_uses_with(new)
            batch.erase(op)
