"""How many times each op runs: loop bodies per trip, callees per call (explain/runs.py)."""

from __future__ import annotations

import gc
import weakref

import pytest

from shardwise.explain.compute import compute_totals
from shardwise.explain.runs import op_runs, while_trip_count
from shardwise.explain.summary import entry_func
from shardwise.io.mlir import load_text

T = "tensor<8x8xf32>"


def _loop(start: int, limit: int, step: int, direction: str = "LT") -> str:
    return f"""func.func @main(%x: {T}) -> {T} {{
  %c = stablehlo.constant dense<{start}> : tensor<i32>
  %0:2 = stablehlo.while(%i = %c, %v = %x) : tensor<i32>, {T}
    cond {{
      %n = stablehlo.constant dense<{limit}> : tensor<i32>
      %p = stablehlo.compare {direction}, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    }} do {{
      %s = stablehlo.constant dense<{step}> : tensor<i32>
      %j = stablehlo.add %i, %s : tensor<i32>
      %d = stablehlo.dot_general %v, %v, contracting_dims = [1] x [0] : ({T}, {T}) -> {T}
      stablehlo.return %j, %d : tensor<i32>, {T}
    }}
  return %0#1 : {T}
}}
"""


def _runs(text: str) -> tuple[dict[int, int], object]:
    module = load_text(text)
    return op_runs(module, entry_func(module)), module


@pytest.mark.parametrize(
    ("start", "limit", "step", "trips"),
    [(0, 64, 1, 64), (0, 10, 3, 4), (5, 5, 1, 0), (2, 12, 2, 5)],
)
def test_counted_loop_trip_count(start: int, limit: int, step: int, trips: int) -> None:
    runs, module = _runs(_loop(start, limit, step))
    loop = next(op for op in module.walk() if op.name == "stablehlo.while")
    assert while_trip_count(loop) == trips
    dot = next(op for op in module.walk() if op.name == "stablehlo.dot_general")
    compare = next(op for op in module.walk() if op.name == "stablehlo.compare")
    assert runs[id(dot)] == trips
    assert runs[id(compare)] == trips + 1  # the condition runs once more
    assert runs[id(loop)] == 1


def test_loop_that_is_not_counted_runs_once() -> None:
    runs, module = _runs(_loop(0, 64, 1, direction="NE"))
    loop = next(op for op in module.walk() if op.name == "stablehlo.while")
    assert while_trip_count(loop) is None
    dot = next(op for op in module.walk() if op.name == "stablehlo.dot_general")
    assert runs[id(dot)] == 1


def test_callee_runs_per_call_and_unreached_funcs_not_at_all() -> None:
    text = f"""func.func @main(%x: {T}) -> {T} {{
  %0 = call @act(%x) : ({T}) -> {T}
  %1 = call @act(%0) : ({T}) -> {T}
  %2 = call @twice(%1) : ({T}) -> {T}
  return %2 : {T}
}}
func.func private @twice(%x: {T}) -> {T} {{
  %0 = call @act(%x) : ({T}) -> {T}
  %1 = call @act(%0) : ({T}) -> {T}
  return %1 : {T}
}}
func.func private @act(%x: {T}) -> {T} {{
  %0 = stablehlo.tanh %x : {T}
  return %0 : {T}
}}
func.func private @unused(%x: {T}) -> {T} {{
  %0 = stablehlo.negate %x : {T}
  return %0 : {T}
}}
"""
    runs, module = _runs(text)
    tanh = next(op for op in module.walk() if op.name == "stablehlo.tanh")
    negate = next(op for op in module.walk() if op.name == "stablehlo.negate")
    assert runs[id(tanh)] == 4
    assert id(negate) not in runs


def test_compute_counts_a_loop_body_per_trip() -> None:
    def flops(trips: int) -> float:
        module = load_text(_loop(0, trips, 1))
        return compute_totals(module, lambda v: 256).flops

    dot = 2 * 8 * 8 * 8
    assert flops(16) - flops(8) == pytest.approx(8 * (dot + 2 * 64) + 8 * 1 + 8 * 1, rel=0.2)
    assert flops(16) > 1.8 * flops(8)


def test_counting_leaves_no_cycle_holding_the_module() -> None:
    """A released module is freed by reference counting once counted: the recursions hold
    nothing in a cycle (a closure calling itself kept every costed module until a GC pass:
    150k objects after a 12-layer plan)."""
    module = load_text(_loop(0, 64, 1))
    op = module.op
    gc.disable()
    try:
        assert op_runs(module, entry_func(module))
        refs = [weakref.ref(module), weakref.ref(op)]
        module.release()
        del module, op
        assert [r() for r in refs] == [None, None]
    finally:
        gc.enable()
