"""The error MLIR's dialect conversion raises when a reshard cannot be converted.

``failed to legalize operation 'sdy.reshard' that was explicitly marked illegal: <op>``, the
op printed in generic form as the IR stands at that moment: the collectives that replace the
reshards converted before it are already in place and the old reshards not yet erased, so the
SSA numbering counts both. Numbering as MLIR's printer does it for a diagnostic (local scope):
from the nearest isolated-from-above ancestor (a func, a manual computation), its own results
first (one number), then each region's block arguments (``%argN``) and results (``%N``,
``%N#i`` for an op with several) in order, every nested region numbered after its parent
region, starting from the counters where the parent region ended.
"""

from __future__ import annotations

from shardwise.errors import VerifyError
from shardwise.ir import DictAttr, Op, Region, Value
from shardwise.sdy.op_properties import ISOLATED_FROM_ABOVE

__all__ = ["legalize_error"]


def _number(region: Region, next_value: int, next_arg: int, names: dict[int, str]) -> None:
    for block in region.blocks:
        for arg in block.args:
            names[id(arg)] = f"%arg{next_arg}"
            next_arg += 1
        for op in block.ops:
            if not op.results:
                continue
            if len(op.results) == 1:
                names[id(op.results[0])] = f"%{next_value}"
            else:
                for i, result in enumerate(op.results):
                    names[id(result)] = f"%{next_value}#{i}"
            next_value += 1
    for block in region.blocks:
        for op in block.ops:
            for nested in op.regions:
                _number(nested, next_value, next_arg, names)


def _isolated_parent(op: Op) -> Op:
    parent = op.parent_op
    while parent is not None and parent.name not in ISOLATED_FROM_ABOVE:
        parent = parent.parent_op
    assert parent is not None, "an op outside any function"
    return parent


def _generic_text(op: Op) -> str:
    names: dict[int, str] = {}
    root = _isolated_parent(op)
    for region in root.regions:
        _number(region, 1 if root.results else 0, 0, names)

    def name(value: Value) -> str:
        return names.get(id(value), "<<UNKNOWN SSA VALUE>>")

    text = ""
    if op.results:
        text = name(op.results[0]).split("#")[0]
        if len(op.results) > 1:
            text += f":{len(op.results)}"
        text += " = "
    text += f'"{op.name}"(' + ", ".join(name(v) for v in op.operands) + ")"
    if op.properties:
        text += " <" + str(DictAttr(dict(sorted(op.properties.items())))) + ">"
    if op.attributes:
        text += " " + str(DictAttr(dict(sorted(op.attributes.items()))))
    operand_types = ", ".join(str(v.type) for v in op.operands)
    result_types = [str(v.type) for v in op.results]
    results = result_types[0] if len(result_types) == 1 else "(" + ", ".join(result_types) + ")"
    return text + f" : ({operand_types}) -> {results}"


def legalize_error(reshard: Op) -> VerifyError:
    """The conversion's failure for `reshard`, worded and placed as the reference's."""
    return VerifyError(
        f"failed to legalize operation '{reshard.name}' that was explicitly marked illegal: "
        + _generic_text(reshard),
        reshard.location,
    )
