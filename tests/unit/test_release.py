"""`Module.release`: a module dropped after it is freed by reference counting, no GC pass.

A 20k-op module left to the cyclic GC costs a full collection 0.3-0.5 s (at the latest at
interpreter exit); `shardwise propagate` releases each module once written.
"""

from __future__ import annotations

import gc
import weakref

from shardwise.cli import _gc_paused  # the CLI's own pause, around each input
from shardwise.io.mlir import load_text, write_text
from shardwise.propagation.propagation_pipeline import propagation_pipeline

# A call (the pipeline orders funcs by call graph), a while loop (regions, block arguments,
# data-flow edges) and constants (split and merged again: erased ops).
TEXT = """
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x8xf32> {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %0 = call @inner(%arg0) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %1:2 = stablehlo.while(%iter = %c, %x = %0) : tensor<i32>, tensor<8x8xf32>
    cond {
      %lt = stablehlo.compare LT, %iter, %one : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %next = stablehlo.add %iter, %one : tensor<i32>
      %y = stablehlo.add %x, %x : tensor<8x8xf32>
      stablehlo.return %next, %y : tensor<i32>, tensor<8x8xf32>
    }
  return %1#1 : tensor<8x8xf32>
}
func.func private @inner(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = stablehlo.multiply %arg0, %arg0 : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
"""


def _propagated_ops(release: bool) -> list[weakref.ref]:
    """Weak references to every op of the module after the pipeline, write and drop."""
    module = load_text(TEXT, "release.mlir")
    propagation_pipeline(module)
    assert "sdy.sharding" in write_text(module)
    refs = [weakref.ref(op) for op in module.walk()]
    if release:
        module.release()
    del module
    return refs


def test_released_module_is_freed_without_gc() -> None:
    with _gc_paused():
        refs = _propagated_ops(release=True)
        alive = [r() for r in refs if r() is not None]
    assert len(refs) > 10
    assert alive == []


def test_unreleased_module_waits_for_gc() -> None:
    """The cycles `release` breaks are there: without it the ops outlive the module."""
    with _gc_paused():
        refs = _propagated_ops(release=False)
        alive = sum(r() is not None for r in refs)
    assert alive == len(refs)
    gc.collect()
    assert all(r() is None for r in refs)
