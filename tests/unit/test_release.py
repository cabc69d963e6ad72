"""`Module.release`: a module dropped after it is freed by reference counting, no GC pass.

A 20k-op module left to the cyclic GC costs a full collection 0.3-0.5 s (at the latest at
interpreter exit); `shardwise propagate` releases each module once written.
"""

from __future__ import annotations

import gc
import weakref

from shardwise.cli import _gc_paused  # the CLI's own pause, around each input
from shardwise.io.mlir import load_text, write_text
from shardwise.ir import Block, Op, Region, parse_type, releasing_erased
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


# Two calls of one func with the same shardings: imported as named computations, exported
# as one func called twice (the second's body is dropped); constants are split and merged
# again (erased ops).
NAMED = """
sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<8xf32> {
  %0 = call @f(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
  %1 = call @f(%0) : (tensor<8xf32>) -> tensor<8xf32>
  return %1 : tensor<8xf32>
}
func.func private @f(%a: tensor<8xf32>) -> tensor<8xf32> {
  %c = stablehlo.constant dense<1.0> : tensor<8xf32>
  %m = stablehlo.maximum %a, %c : tensor<8xf32>
  return %m : tensor<8xf32>
}
"""


def _garbage_ops(text: str) -> list[Op]:
    """The ops the cyclic GC finds once the CLI's pause around one input has ended."""
    gc.collect()
    gc.disable()  # no collection may free the garbage before it is counted
    try:
        with _gc_paused():
            module = load_text(text, "release.mlir")
            propagation_pipeline(module)
            printed = write_text(module)
            module.release()
            del module
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        return [o for o in gc.garbage if isinstance(o, Op)] if printed else []
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


def test_erased_ops_are_freed_with_the_module() -> None:
    """Erased ops and a merged named computation's body leave no cycles for the GC (it
    found 10 ops of both here, and 16k objects after a 128-layer conv stack, before
    `releasing_erased`)."""
    assert _garbage_ops(NAMED) == []
    assert _garbage_ops(TEXT) == []


def _op_with_body() -> tuple[Op, Op]:
    inner = Op("test.inner", result_types=[parse_type("tensor<2xf32>")])
    outer = Op("test.outer", result_types=[parse_type("tensor<2xf32>")])
    region = outer.add_region(Region())
    block = region.add_block(Block())
    block.append(inner)
    return outer, inner


def test_erased_op_lives_until_the_block_ends() -> None:
    """Inside the block an erased op is kept (its id is not reused by a new op: tables keyed
    by ids stay sound); at its end it is freed by reference counting alone."""
    gc.disable()
    try:
        with releasing_erased():
            outer, inner = _op_with_body()
            refs = [weakref.ref(outer), weakref.ref(inner), weakref.ref(outer.results[0])]
            outer.erase()
            del outer, inner
            assert all(r() is not None for r in refs)
        assert [r() for r in refs] == [None, None, None]
    finally:
        gc.enable()


def test_a_region_moved_before_the_erase_is_left_alone() -> None:
    """An op erased after its region went to another op: the region's ops stay whole."""
    with releasing_erased():
        outer, inner = _op_with_body()
        new = Op("test.new")
        new.add_region(outer.regions[0])
        outer.erase()
        result = outer.results[0]
    assert result.owner is None  # the erased op itself is released
    assert new.regions[0].parent is new
    assert inner.parent is new.regions[0].blocks[0]
    assert inner.results[0].owner is inner
