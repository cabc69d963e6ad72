"""`PropagationOptions`: every knob of the propagation passes, as one frozen value.

Names follow the pass options of Shardy (``keep-sharding-rules`` -> `keep_sharding_rules`).
One option is ours alone: ``memoize-steps=false`` recomputes every propagation step instead of
looking it up by its frozen inputs (same output, slower; the differential tests run the corpus
both ways).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import TypedDict, Unpack

from shardwise.errors import ShardwiseError

__all__ = ["PropagationOptions", "STRATEGIES"]

STRATEGIES = ("basic", "aggressive", "basic-then-aggressive")


class _Overrides(TypedDict, total=False):
    """The fields of `PropagationOptions`, each optional: what `with_options` may replace."""

    keep_sharding_rules: bool
    conservative_propagation: bool
    debug_sharding_origins: bool
    debug_propagation_edge_sharding: bool
    module_dump_directory: str
    propagation_strategy: str
    run_op_priority_propagation: bool
    dedup_functions_fully: bool
    memoize_steps: bool


@dataclass(frozen=True, slots=True)
class PropagationOptions:
    keep_sharding_rules: bool = False
    conservative_propagation: bool = False
    debug_sharding_origins: bool = False
    debug_propagation_edge_sharding: bool = False
    module_dump_directory: str = ""
    propagation_strategy: str = "aggressive"
    run_op_priority_propagation: bool = True
    dedup_functions_fully: bool = False
    memoize_steps: bool = True

    def with_options(self, **overrides: Unpack[_Overrides]) -> PropagationOptions:
        return replace(self, **overrides)

    @staticmethod
    def from_pass_options(options: dict[str, str]) -> PropagationOptions:
        """Build from Shardy's ``name=value`` option spelling (``keep-sharding-rules=true``)."""
        known = {f.name: f for f in fields(PropagationOptions)}
        values: dict[str, object] = {}
        for key, raw in options.items():
            name = key.replace("-", "_")
            if name not in known:
                choices = ", ".join(n.replace("_", "-") for n in known)
                raise ShardwiseError(f"unknown pass option '{key}'; known options: {choices}")
            if known[name].type in ("bool", bool):
                if raw not in ("true", "false", "1", "0"):
                    raise ShardwiseError(f"option '{key}' expects true or false, got '{raw}'")
                values[name] = raw in ("true", "1")
            else:
                values[name] = raw
        if values.get("propagation_strategy", "aggressive") not in STRATEGIES:
            raise ShardwiseError(
                f"option 'propagation-strategy' must be one of {', '.join(STRATEGIES)}, "
                f"got '{values['propagation_strategy']}'"
            )
        return PropagationOptions(**values)  # type: ignore[arg-type]
