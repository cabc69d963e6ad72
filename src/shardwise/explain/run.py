"""Run the propagation pipeline with a provenance observer and look values up by name."""

from __future__ import annotations

import re
import weakref
from dataclasses import dataclass

from shardwise.errors import ShardwiseError
from shardwise.explain.provenance import (
    Explanation,
    Key,
    ProvenanceObserver,
    func_name,
    func_result_of_key,
    sharding_of_key,
)
from shardwise.explain.reasons import explain_value
from shardwise.ir import Module, Type, Value, func_result_types
from shardwise.propagation.op_priority_propagation import OP_PRIORITY_ROUNDS
from shardwise.propagation.options import PropagationOptions
from shardwise.propagation.propagation_pipeline import (
    export_after_propagation,
    import_and_propagate,
)
from shardwise.sdy.shardings import get_sharding

__all__ = ["Explained", "explain_module", "find_keys", "key_name", "mlir_name", "all_keys"]


@dataclass
class Explained:
    module: Module
    observer: ProvenanceObserver

    def explain(self, key: Key, chains: bool = True) -> Explanation:
        """Why `key` is sharded as it is; without `chains` (the report's JSON, which has no
        prose) the steps that carried each axis are not traced."""
        name = key_name(self.module, key)
        return explain_value(self.observer, self.module, key, name, chains)


def explain_module(module: Module, options: PropagationOptions | None = None) -> Explained:
    """Propagate `module` in place (the whole pipeline) and keep the provenance."""
    options = options or PropagationOptions()
    strategies = 2 if options.propagation_strategy == "basic-then-aggressive" else 1
    # One driver per op-priority round (the op schedule's heuristics) and strategy.
    rounds = OP_PRIORITY_ROUNDS if options.run_op_priority_propagation else 1
    observer = ProvenanceObserver(options.conservative_propagation, rounds, strategies)
    observer.record_annotations(module)
    import_and_propagate(module, options, observer)
    # Reasons are read from the shardings propagation left (export closes every dim).
    observer.final = {k: sharding_of_key(module, k) for k in all_keys(module)}
    for edge in (op for op in module.walk() if op.name == "sdy.data_flow_edge"):
        observer.final[edge.operands[0]] = get_sharding(edge.results[0])
    export_after_propagation(module, options)
    _remember_output_names(module)
    return Explained(module, observer)


# Value -> its SSA name in the printed output (MLIR renumbers: ``%3`` in the input may be
# ``%5`` in the output). Weak: it never keeps a module alive.
_OUTPUT_NAMES: weakref.WeakKeyDictionary[Value, str] = weakref.WeakKeyDictionary()


def _remember_output_names(module: Module) -> None:
    """Pair our results with the names the printed output gives them, op by op.

    The printed form lists the ops with results in walk order, one definition per line
    (``%5 = stablehlo.add``, ``%0:2 = "stablehlo.while"`` for ``%0#0, %0#1``).
    """
    from shardwise.io.mlir import write_text

    ops = iter([op for op in module.walk() if op.results and op is not module.op])
    for m in _DEFINITION.finditer(write_text(module)):
        name, op_name = m.group(1), m.group(2)
        # Ops inside regions the pretty form elides (a reduce's body) are not printed.
        op = next((o for o in ops if o.name in (op_name, f"func.{op_name}")), None)
        if op is None:
            return
        base, _, count = name.partition(":")
        if count and int(count) == len(op.results):
            for i, v in enumerate(op.results):
                _OUTPUT_NAMES[v] = f"{base}#{i}"
        elif len(op.results) == 1:
            _OUTPUT_NAMES[op.results[0]] = base


_DEFINITION = re.compile(r'^\s*(%[\w.$-]+(?::\d+)?)\s*=\s*"?([\w.]+)', re.MULTILINE)


def key_name(module: Module, key: Key) -> str:
    """The user's name of a value (``params['w1']``, ``result['out']``) where the module has
    one (JAX's debug locations), else its MLIR name (``main:arg0``, ``%3``)."""
    from shardwise.names import user_name

    return user_name(module, key) or mlir_name(module, key)


def mlir_name(module: Module, key: Key) -> str:
    if isinstance(key, str):
        return key
    if key.is_block_arg:
        parent = key.owner.parent_op  # type: ignore[union-attr]
        if parent is not None and parent.name == "func.func":
            return f"{func_name(parent)}:arg{key.index}"
    return _OUTPUT_NAMES.get(key) or key.name or "?"


def key_type(module: Module, key: Key) -> Type | None:
    """The tensor type of a value, or of a func result (``main:result0``) from its func's type."""
    if isinstance(key, Value):
        return key.type
    found = func_result_of_key(module, key)
    if found is None:
        return None
    types = func_result_types(found[0])
    return types[found[1]] if found[1] < len(types) else None


def all_keys(module: Module) -> list[Key]:
    """Every tensor a user can ask about: func args, op results, func results."""
    keys: list[Key] = []
    for op in module.walk():
        if op.name == "func.func" and op.regions and op.regions[0].blocks:
            keys.extend(op.regions[0].entry.args)
            term = op.regions[0].entry.terminator
            n = len(term.operands) if term is not None else 0
            keys.extend(f"{func_name(op)}:result{i}" for i in range(n))
        keys.extend(v for v in op.results if op.name != "func.func")
    return keys


def find_keys(module: Module, name: str | None, line: int | None) -> list[Key]:
    """The values named `name` (``%3`` as printed in the output, else in the input;
    ``main:arg0``, ``main:result0``) or the results of the op at `line` of the input."""
    keys = all_keys(module)
    if line is not None:
        found: list[Key] = [
            k
            for k in keys
            if isinstance(k, Value)
            and k.defining_op is not None
            and k.defining_op.location.line == line
        ]
        if not found:
            raise ShardwiseError(f"--op {line}: no op with a result starts at line {line}")
        return found
    from shardwise.names import find_by_user_name

    found = find_by_user_name(module, name, keys) if name else []
    if not found:
        found = [k for k in keys if mlir_name(module, k) == name]
    if not found:  # the name in the input, if it is not one of the output's
        found = [k for k in keys if isinstance(k, Value) and k.name == name]
    if not found:
        raise ShardwiseError(
            f"--value {name}: no such value; use an argument or result name as in the "
            "program (params['w1'], result['out']), a Python line (model.py:12), an SSA "
            "name as printed in the output (%3), main:arg0 or main:result0"
        )
    return found
