"""XLA's own SPMD partitioning of the annotated global program, as a second opinion.

`spmd_program` is the global program with its shardings kept: XLA (with its Shardy
partitioner, as `jax.jit` compiles) propagates them, partitions the program for N devices and
runs it; the worker places each argument by the sharding XLA chose for it and puts each result
back together (`worker._run_spmd`), so inputs and outputs are global arrays.

It serves twice:

- ``shardwise check --against xla``: its results are compared with the unsharded reference,
  next to shardwise's partitioned program (`CheckResult.against_xla`);
- as the reference itself for a program that holds an ``sdy.manual_computation`` or
  ``sdy.named_computation``: a manual computation's body is per-device code (its collectives
  name devices), which has no unsharded meaning, so only a partitioned run gives the values.

Only the sharding constraints and reshards at the top level of main, and reshards anywhere
(XLA as jaxlib 0.10.2 builds it rejects one in a manual computation's body: "unknown mesh"),
are removed (they are identities on values): then, as for the unsharded reference, the top-level ops are the
global ops that `localize` pairs with the local program's.
"""

from __future__ import annotations

from shardwise import ir
from shardwise.check.programs import (
    IDENTITY_SDY_OPS,
    Program,
    add_intermediates,
    dead_computations,
    find_main,
    funcs_holding_computations,
    is_computation,
    main_ops,
    set_results,
)
from shardwise.io.mlir import load_text, write_text
from shardwise.ir import Module
from shardwise.sharding import TensorShardingPerValue

__all__ = ["NEEDS_XLA_REFERENCE", "needs_xla_reference", "result_shapes", "spmd_program"]

# Ops without an unsharded meaning: their programs take XLA's partitioned run as reference.
NEEDS_XLA_REFERENCE = frozenset({"sdy.manual_computation", "sdy.named_computation"})


def needs_xla_reference(module: Module) -> bool:
    """Whether main holds a live manual or named computation, or a live call of a function
    that holds one (dead ones are erased before the programs run:
    `programs.dead_computations`)."""
    dead = {id(inner) for op in dead_computations(module) for inner in (op, *op.walk())}
    holding = funcs_holding_computations(module)
    return any(
        is_computation(op, holding) and id(op) not in dead for op in find_main(module).walk()
    )


def spmd_program(
    text: str, filename: str, intermediates: bool = False, computations_only: bool = False
) -> Program:
    """The global program for XLA's partitioner (see the module docstring).

    `computations_only`: main returns the results of its top-level manual and named
    computations (and calls of functions holding one) instead of its own, in program order,
    so that XLA partitions only them and what they read (`checker._around_computations`)."""
    module = load_text(text, filename)
    main = find_main(module)
    for op in main_ops(main):
        if op.name in IDENTITY_SDY_OPS:
            op.results[0].replace_all_uses_with(op.operands[0])
            op.erase()
        elif op.name == "sdy.sharding_group":
            op.erase()
    for op in list(module.walk()):  # nested too: jaxlib's XLA rejects a reshard in a body
        if op.name == "sdy.reshard":
            op.results[0].replace_all_uses_with(op.operands[0])
            op.erase()
    if computations_only:
        holding = funcs_holding_computations(module)
        main.properties.pop("res_attrs", None)
        set_results(
            main, [r for op in main_ops(main) if is_computation(op, holding) for r in op.results]
        )
    ops = tuple(main_ops(main))
    shardings = tuple(_per_value(op.attributes.get(ir.SHARDING_ATTR)) for op in ops)
    num_results = len(ir.func_result_types(main))
    if intermediates:
        add_intermediates(main)
    return Program(write_text(module), num_results, ops, shardings, intermediates)


def result_shapes(program: Program, filename: str = "xla.mlir") -> list[tuple[int, ...]]:
    """The global shape of each output of `program` (what the worker assembles)."""
    main = find_main(load_text(program.text, filename))
    shapes = []
    for t in ir.func_result_types(main):
        assert isinstance(t, ir.TensorType) and t.is_static, t
        shapes.append(tuple(t.shape))
    return shapes


def _per_value(attr: object) -> TensorShardingPerValue | None:
    return attr if isinstance(attr, TensorShardingPerValue) else None
