"""The loader's MLIR contexts: one serves several parses in a thread (making one costs ~5 ms),
a thread or a forked child makes its own, and a text with resources always gets a fresh one
(a context renames a ``dense_resource`` blob it has seen)."""

from __future__ import annotations

import os
import threading

from shardwise.io import mlir
from shardwise.io.reference import run_pass

_TEXT = """module {
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.add %arg0, %arg0 : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
"""
_RESOURCE = """module {
  func.func @main() -> tensor<2xf32> {
    %0 = stablehlo.constant dense_resource<blob> : tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}
{-#
  dialect_resources: {
    builtin: {
      blob: "0x040000000000803F00000040"
    }
  }
#-}
"""


def test_a_context_serves_a_fixed_number_of_parses_in_a_thread() -> None:
    mlir._shared.__dict__.clear()
    contexts = [mlir._context_for(_TEXT) for _ in range(mlir._CONTEXT_USES + 1)]
    assert all(c is contexts[0] for c in contexts[:-1])
    assert contexts[-1] is not contexts[0]


def test_another_thread_and_a_forked_child_make_their_own() -> None:
    mine = mlir._context_for(_TEXT)
    theirs: list[object] = []
    thread = threading.Thread(target=lambda: theirs.append(mlir._context_for(_TEXT)))
    thread.start()
    thread.join()
    assert theirs[0] is not mine
    pid = os.fork()
    if pid == 0:  # the child's status says whether its context was new
        os._exit(0 if mlir._context_for(_TEXT) is not mine else 1)
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0


def test_a_text_with_resources_gets_a_fresh_context_each_time() -> None:
    assert mlir._context_for(_RESOURCE) is not mlir._context_for(_RESOURCE)


def test_loads_in_one_context_print_as_the_reference() -> None:
    mlir._shared.__dict__.clear()
    for text in (_TEXT, _RESOURCE, _TEXT, _RESOURCE):
        assert mlir.write_text(mlir.load_text(text)) == run_pass(text, None)
