"""The verifier's ``output_operand_aliases`` check of a converted ``stablehlo.custom_call``.

A custom call that writes its result into an operand's buffer (LAPACK's in-place solvers)
needs both to have one type. A sharding rule may shard the operand's factor and not the
result's (``([i, j, k], [i, l, m])->([i, n, o])`` with ``m`` sharded): on each device the
two then differ, and the reference's verifier rejects the converted module. Ours raises the
same message naming the call, where the reference would, instead of writing the module.
"""

from __future__ import annotations

import re

from shardwise.errors import VerifyError
from shardwise.ir import Op

__all__ = ["check_output_operand_aliases"]

_ALIAS_RE = re.compile(
    r"output_tuple_indices = \[([\d, ]*)\], operand_index = (\d+), "
    r"operand_tuple_indices = \[([\d, ]*)\]"
)


def check_output_operand_aliases(op: Op) -> None:
    """Each alias's operand and output part have one type (tuple parts are not checked)."""
    attr = op.properties.get("output_operand_aliases") or op.attributes.get(
        "output_operand_aliases"
    )
    if attr is None:
        return
    for m in _ALIAS_RE.finditer(str(attr)):
        outputs = [int(i) for i in m.group(1).replace(" ", "").split(",") if i]
        operand_index = int(m.group(2))
        if m.group(3).strip() or len(outputs) > 1 or operand_index >= len(op.operands):
            continue
        if not outputs and len(op.results) != 1:
            continue
        index = outputs[0] if outputs else 0
        if index >= len(op.results):
            continue
        operand, output = op.operands[operand_index].type, op.results[index].type
        if operand != output:
            raise VerifyError(
                "'stablehlo.custom_call' op shapes mismatch in the output_operand_alias "
                f"attribute: operand part has type '{operand}' and output part has type "
                f"'{output}' (the operand and the result it is written into are sharded "
                "differently; give them one sharding)",
                op.location,
            )
