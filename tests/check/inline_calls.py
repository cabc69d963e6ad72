"""A test helper: the corpus model with every ``func.call`` inlined (and the callees dropped).

Calls whose callee's types change are another part of issue #19 (`func.call` conversion);
inlining them lets the op-level constructs of a model be partitioned and checked on their
own. The inlined program computes what the model computes (a call is its callee's body).
"""

from __future__ import annotations

from shardwise.io.mlir import load_text, write_text
from shardwise.ir import Module, Op
from shardwise.ir.edit import clone_op
from shardwise.ir.symbols import symbol_ref_name

__all__ = ["inline_calls"]


def inline_calls(text: str, name: str = "inlined.mlir") -> str:
    module = load_text(text, name)
    funcs = {module.symbol_name(f): f for f in module.funcs}
    while _inline_one(module, funcs):
        pass
    for func in list(module.funcs):
        if module.symbol_name(func) != "main":
            func.erase()
    return write_text(module)


def _inline_one(module: Module, funcs: dict[str | None, Op]) -> bool:
    for op in module.op.walk():
        if op.name != "func.call":
            continue
        callee = funcs[symbol_ref_name(op.get_attr("callee"))]
        body = callee.regions[0].entry
        mapping = dict(zip(body.args, op.operands, strict=True))
        block = op.parent
        assert block is not None
        for nested in body.ops[:-1]:
            block.insert_before(op, clone_op(nested, mapping))
        returned = [mapping.get(v, v) for v in body.ops[-1].operands]
        for result, value in zip(op.results, returned, strict=True):
            result.replace_all_uses_with(value)
        op.erase()
        return True
    return False
