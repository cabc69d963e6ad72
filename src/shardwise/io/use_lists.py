"""Use-list order, from the reference and from our IR, for differential tests of rewrites.

Printing a module does not show in which order a value's uses are linked, yet the order
decides how propagation re-queues users. Both sides are described the same way: values in
pre-order (each op's results, then the arguments of the blocks of its regions), and for each
value its uses as ``(user's pre-order index, operand number)`` in MLIR's use-list order
(newest first).
"""

from __future__ import annotations

from typing import Any

from shardwise import ir
from shardwise.io.reference import pipeline_text

__all__ = ["UseLists", "our_use_lists", "run_pass_with_use_lists"]

UseLists = list[list[tuple[int, int]]]


def our_use_lists(module: ir.Module) -> UseLists:
    ops = list(module.walk())
    index = {id(op): i for i, op in enumerate(ops)}
    result: UseLists = []
    for op in ops:
        values = list(op.results)
        for region in op.regions:
            for block in region.blocks:
                values.extend(block.args)
        for value in values:
            result.append([(index[id(user)], i) for user, i in reversed(value.uses)])
    return result


def _reference_use_lists(module: Any) -> UseLists:
    ops: list[Any] = []

    def visit(op: Any) -> None:
        ops.append(op)
        for region in op.regions:
            for block in region.blocks:
                for child in block.operations:
                    visit(child.operation)

    visit(module.operation)
    index = {op: i for i, op in enumerate(ops)}
    result: UseLists = []
    for op in ops:
        values = list(op.results)
        for region in op.regions:
            for block in region.blocks:
                values.extend(block.arguments)
        for value in values:
            result.append([(index[u.owner.operation], u.operand_number) for u in value.uses])
    return result


_context: Any = None


def run_pass_with_use_lists(text: str, passes: str | list[str]) -> tuple[str, UseLists]:
    """Run Shardy's `passes` on `text`; the printed module and its use lists."""
    global _context
    from jax._src.lib.mlir import ir as mlir_ir
    from jax._src.lib.mlir import passmanager

    if _context is None:  # one context for all calls: creating one costs ~30 ms
        from jax._src.interpreters import mlir as jax_mlir

        _context = jax_mlir.make_ir_context()
    with _context:
        module = mlir_ir.Module.parse(text)
        passmanager.PassManager.parse(pipeline_text(passes)).run(module.operation)
        return str(module.operation.get_asm()), _reference_use_lists(module)
