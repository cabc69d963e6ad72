"""How many times each op runs in one call of the entry function.

A cost model that counts every op once under-counts a loop body (a `lax.scan` over 64 layers
is one `stablehlo.while` whose body runs 64 times) and a function called from several places
(a private activation called once per layer). `op_runs` gives each op its count:

| where the op is | runs |
| --- | --- |
| the entry function | 1 |
| a function called by `func.call` ops | the sum of its calls' runs |
| the body and the condition of a `stablehlo.while` whose trip count is static | the loop's runs x trips (the condition once more) |
| a `while` whose trip count is not static | the loop's runs (counted as one trip) |
| a branch of `case` / `if` | the op's runs (each branch as if taken) |

A trip count is static when the loop is the counted form JAX lowers `fori_loop`/`scan` to: the
condition is ``compare LT, %counter, C`` with a constant ``C``, the counter starts at a
constant and the body adds a positive constant to it.
"""

from __future__ import annotations

import re

from shardwise.ir import Module, Op, Value
from shardwise.sdy.funcs import CALL, callee_name

__all__ = ["op_runs", "while_trip_count"]

_INT_RE = re.compile(r"^dense<(-?\d+)>")
_CONSTANTS = ("stablehlo.constant", "sdy.constant")


def op_runs(module: Module, entry: Op | None) -> dict[int, int]:
    """``id(op) -> runs`` for every op reached from `entry` (see the module docstring)."""
    if entry is None or not entry.regions:
        return {}
    bodies = [f for f in module.funcs if f.regions and f.regions[0].blocks]
    local = {id(f): _local_runs(f) for f in bodies}
    callers: dict[str | None, list[tuple[Op, int]]] = {}  # callee -> (caller func, call runs)
    for func in bodies:
        for op in func.walk():
            if op.name in CALL:
                callers.setdefault(callee_name(op), []).append((func, local[id(func)][id(op)]))
    memo: dict[int, int] = {id(entry): 1}
    runs: dict[int, int] = {}
    for func in bodies:
        times = _func_runs(module, func, callers, memo, frozenset())
        if times:
            for key, n in local[id(func)].items():
                runs[key] = n * times
    return runs


# The recursions below are module-level functions, not closures: a closure calling itself is
# a reference cycle, which kept what it saw (the module of a cut evaluation) alive until a GC
# pass (31 modules, 150k objects after a 12-layer plan).


def _func_runs(
    module: Module,
    func: Op,
    callers: dict[str | None, list[tuple[Op, int]]],
    memo: dict[int, int],
    active: frozenset[int],
) -> int:
    """How many times `func` runs per run of the entry (`memo` holds the entry's 1)."""
    if id(func) in memo:
        return memo[id(func)]
    if id(func) in active:
        return 0  # recursion: not in StableHLO programs
    inner = active | {id(func)}
    total = sum(
        _func_runs(module, caller, callers, memo, inner) * n
        for caller, n in callers.get(module.symbol_name(func), [])
    )
    memo[id(func)] = total
    return total


def _local_runs(func: Op) -> dict[int, int]:
    """``id(op) -> runs`` within one call of `func` (loops counted, calls not followed)."""
    runs: dict[int, int] = {}
    _visit(func.regions[0].entry.ops, 1, runs)
    return runs


def _visit(ops: list[Op], times: int, runs: dict[int, int]) -> None:
    for op in ops:
        runs[id(op)] = times
        inner = times
        if op.name == "stablehlo.while":
            trips = while_trip_count(op)
            inner = times * (1 if trips is None else trips)
        for index, region in enumerate(op.regions):
            extra = times if op.name == "stablehlo.while" and index == 0 else 0
            for block in region.blocks:
                _visit(block.ops, inner + extra, runs)


def while_trip_count(op: Op) -> int | None:
    """The static trip count of a counted `stablehlo.while`, or None."""
    cond, body = op.regions[0].blocks[0], op.regions[1].blocks[0]
    if not cond.ops or not body.ops:
        return None
    compare = cond.ops[-1].operands[0].defining_op if cond.ops[-1].operands else None
    if compare is None or compare.name != "stablehlo.compare":
        return None
    if "LT" not in str(compare.properties.get("comparison_direction", "")):
        return None
    counter, limit = compare.operands
    if counter.owner is not cond or not isinstance(counter.index, int):
        return None
    index = counter.index
    end = _constant_int(limit)
    start = _constant_int(op.operands[index])
    step = _increment(body, index)
    if end is None or start is None or step is None or step <= 0:
        return None
    return max(0, -(-(end - start) // step))


def _increment(body, index: int) -> int | None:
    """The constant the body adds to block argument `index` before returning it."""
    returned = body.ops[-1].operands[index]
    add = returned.defining_op
    if add is None or add.name != "stablehlo.add":
        return None
    arg = body.args[index]
    lhs, rhs = add.operands
    if lhs is arg:
        return _constant_int(rhs)
    if rhs is arg:
        return _constant_int(lhs)
    return None


def _constant_int(value: Value) -> int | None:
    op = value.defining_op
    if op is None or op.name not in _CONSTANTS:
        return None
    m = _INT_RE.match(str(getattr(op.properties.get("value"), "text", op.properties.get("value"))))
    return int(m.group(1)) if m else None
