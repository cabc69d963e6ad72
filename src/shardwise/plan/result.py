"""`Plan`: the shardings the planner chose, what they cost, and what they were compared with."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from shardwise.sharding import TensorSharding

__all__ = ["ArgPlan", "Plan", "partition_spec_text"]


def partition_spec_text(sharding: TensorSharding) -> str:
    """``P('data', None, ('x', 'y'))`` for a sharding of whole axes (sub-axes: sdy text only)."""
    entries: list[str] = []
    for dim in sharding.dim_shardings:
        if any(a.is_sub_axis for a in dim.axes):
            return "(sub-axes: no PartitionSpec)"
        names = [repr(a.name) for a in dim.axes]
        entries.append(
            "None" if not names else names[0] if len(names) == 1 else f"({', '.join(names)})"
        )
    while entries and entries[-1] == "None":
        entries.pop()
    return f"P({', '.join(entries)})"


@dataclass(frozen=True, slots=True)
class ArgPlan:
    """One argument of the entry function: its name, type and sharding (None: not planned,
    the user's own sharding or not a tensor the plan can shard)."""

    index: int
    name: str
    type: str
    sharding: TensorSharding | None
    user: bool  # the sharding is the user's, kept as it was

    def to_json(self) -> dict[str, Any]:
        s = self.sharding
        return {
            "index": self.index,
            "name": self.name,
            "type": self.type,
            "sharding": str(s) if s is not None else None,
            "partition_spec": partition_spec_text(s) if s is not None else None,
            "user": self.user,
        }


@dataclass
class Plan:
    """The planner's answer (`shardwise.plan`): `text` is the input with the chosen
    ``sdy.sharding`` on its arguments, ready for Shardy's propagation; `module` is it loaded
    (from `filename`), when first asked for."""

    text: str
    filename: str
    args: list[ArgPlan]
    summary: dict[str, Any]
    name: str  # "search" or the standard plan it fell back to
    runner_up: dict[str, Any] | None  # {"name", "summary", "args"} or None
    standard: dict[str, dict[str, Any] | None]  # name -> summary, None if over the budget
    lower_bound: float
    search_time_s: float
    memory_budget: int | None = None
    candidates_evaluated: int = 0
    in_shardings: Any = field(default=None, repr=False)  # for jax.jit, when planned from JAX
    _module: Any = field(default=None, repr=False, compare=False)

    @property
    def module(self) -> Any:
        """The annotated `ShardedModule` (`text` loaded once: `shardwise plan` never needs it)."""
        if self._module is None:
            from shardwise.api import ShardedModule
            from shardwise.io.mlir import load_text

            self._module = ShardedModule(load_text(self.text, self.filename), source=self.text)
        return self._module

    @property
    def gap(self) -> float:
        """How far the plan's time is above the lower bound (0.25 = 25%)."""
        if self.lower_bound <= 0:
            return 0.0
        return self.summary["time_s"] / self.lower_bound - 1.0

    def report(self) -> Any:
        """The report of the planned module (`ShardedModule.report`)."""
        return self.module.report()

    def explain(self, arg: str) -> Any:
        """Why a value of the planned module is sharded as it is (`ShardedModule.explain`)."""
        return self.module.explain(arg)

    def _repr_html_(self) -> str:
        """What a notebook shows: the terminal text."""
        import html

        return f"<pre>{html.escape(str(self))}</pre>"

    def to_json(self) -> dict[str, Any]:
        return {
            "plan": self.name,
            "summary": self.summary,
            "args": [a.to_json() for a in self.args],
            "runner_up": self.runner_up,
            "standard": self.standard,
            "lower_bound_s": self.lower_bound,
            "gap": self.gap,
            "memory_budget_bytes": self.memory_budget,
            "candidates_evaluated": self.candidates_evaluated,
            "search_time_s": self.search_time_s,
        }

    def json_text(self) -> str:
        return json.dumps(self.to_json(), indent=1)

    def __str__(self) -> str:
        lines = [f"plan ({self.name}): {_summary_text(self.summary)}"]
        width = max((len(a.name) for a in self.args), default=0)
        for a in self.args:
            if a.sharding is None:
                lines.append(f"  {a.name:<{width}}  {a.type}  (not planned)")
                continue
            kept = "  (user's)" if a.user else ""
            spec = partition_spec_text(a.sharding)
            lines.append(f"  {a.name:<{width}}  {a.type}  {a.sharding}  {spec}{kept}")
        if self.runner_up is not None:
            diff = self.runner_up["summary"]["time_s"] - self.summary["time_s"]
            lines.append(f"runner-up ({self.runner_up['name']}): +{diff:.3g} s")
        lines.append("standard plans:")
        for name, s in self.standard.items():
            lines.append(f"  {name:<16} {_summary_text(s) if s else 'does not fit the budget'}")
        lines.append(f"lower bound {self.lower_bound:.3g} s (gap {100 * self.gap:.1f}%)")
        lines.append(
            f"search: {self.candidates_evaluated} candidates evaluated in "
            f"{self.search_time_s:.2f} s"
        )
        return "\n".join(lines)


def _summary_text(s: dict[str, Any]) -> str:
    per_axis = ", ".join(f"{a}: {b} B" for a, b in s.get("comm_bytes_per_axis", {}).items())
    return (
        f"{s['time_s']:.4g} s ({s['comm_s']:.3g} s communication, {s['compute_s']:.3g} s "
        f"compute), {s['comm_bytes_per_device']} B/device sent"
        + (f" ({per_axis})" if per_axis else "")
        + f", peak memory {s['peak_memory_bytes_per_device']} B/device"
    )
