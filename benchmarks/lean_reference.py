"""The lean reference process: jaxlib's MLIR bindings and Shardy only, as a user of `sdy_opt`.

    python benchmarks/lean_reference.py IN.mlir OUT.mlir

Parses IN.mlir, runs `sdy-propagation-pipeline`, prints the module to OUT.mlir (with its
locations when the input has `loc(...)`, as `shardwise propagate` does). No jax import: the
dialects are registered on a bare context; `benchmarks/run.py --command` times this process
against `python -m shardwise propagate IN.mlir -o OUT.mlir`.
"""

import sys

from jaxlib.mlir import ir, passmanager
from jaxlib.mlir._mlir_libs import _jax_mlir_ext
from jaxlib.mlir.dialects import chlo, mhlo, sdy, stablehlo


def main(source: str, target: str) -> None:
    context = ir.Context()
    registry = ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(registry)
    context.append_dialect_registry(registry)
    context.load_all_available_dialects()
    sdy.register_dialect(context)
    mhlo.register_mhlo_dialect(context)
    chlo.register_dialect(context)
    stablehlo.register_dialect(context)
    with context:
        with open(source, encoding="utf-8") as f:
            text = f.read()
        module = ir.Module.parse(text)
        pipeline = "builtin.module(sdy-propagation-pipeline)"
        passmanager.PassManager.parse(pipeline).run(module.operation)
        with open(target, "w", encoding="utf-8") as f:
            f.write(module.operation.get_asm(enable_debug_info="loc(" in text))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
