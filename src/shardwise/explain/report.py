"""What a sharding costs: the collectives it implies, per-device memory, totals.

`build_report` propagates a module (with provenance), then on a second copy runs
``sdy-insert-explicit-reshards{enable-full-version=true}`` and ``sdy-reshard-to-collectives``
and lists the collectives they insert. Each gets bytes per device and an alpha-beta time
(ring algorithms over the mesh axes it uses; bandwidth and latency per axis):

| kind               | bytes per device (B) | time                              |
| all_reduce         | local operand        | 2 (n-1)/n B / bw + 2 (n-1) lat     |
| all_gather         | local result         | (n-1)/n B / bw + (n-1) lat         |
| reduce_scatter     | local operand        | (n-1)/n B / bw + (n-1) lat         |
| all_to_all         | local operand        | (n-1)/n B / bw + (n-1) lat         |
| collective_permute | local operand        | B / bw + lat                      |
| all_slice          | local result         | 0 (a local slice, no traffic)     |
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from shardwise.explain.graph import is_collective, program_graph
from shardwise.explain.places import stopped_json, where
from shardwise.explain.progress import ProgressSink
from shardwise.explain.provenance import func_result_of_key
from shardwise.explain.run import all_keys, explain_module, key_name, key_type, mlir_name
from shardwise.explain.text import format_explanation
from shardwise.ir import Module, Op, TensorType, Value
from shardwise.mesh import Mesh
from shardwise.names import op_source
from shardwise.sdy.shardings import get_sharding
from shardwise.sharding import TensorSharding, resolve_mesh

__all__ = [
    "COLLECTIVES",
    "LinkModel",
    "Collective",
    "build_report",
    "collective_axes",
    "enumerate_collectives",
    "local_bytes",
]

COLLECTIVES = (
    "all_reduce",
    "all_gather",
    "all_slice",
    "all_to_all",
    "collective_permute",
    "reduce_scatter",
)
_AXIS = re.compile(r'"([^"]+)"((?::\(\d+\)\d+)?)')
_ELEMENT_BITS = {"i1": 8, "f64": 64, "i64": 64, "ui64": 64, "bf16": 16, "f16": 16}


@dataclass(frozen=True, slots=True)
class LinkModel:
    """Bandwidth (bytes/s) and latency (s) per mesh axis, with defaults for the others."""

    bandwidth: float = 100e9
    latency: float = 5e-6
    per_axis: tuple[tuple[str, float, float], ...] = ()

    def of(self, axis: str) -> tuple[float, float]:
        for name, bw, lat in self.per_axis:
            if name == axis:
                return bw, lat
        return self.bandwidth, self.latency

    @staticmethod
    def from_json(text: str) -> LinkModel:
        """``{"bandwidth": 1e11, "latency": 5e-6, "axes": {"x": {"bandwidth": .., ..}}}``."""
        data = json.loads(text)
        bw, lat = float(data.get("bandwidth", 100e9)), float(data.get("latency", 5e-6))
        axes = tuple(
            (name, float(v.get("bandwidth", bw)), float(v.get("latency", lat)))
            for name, v in data.get("axes", {}).items()
        )
        return LinkModel(bw, lat, axes)


@dataclass
class Collective:
    kind: str
    axes: list[str]
    group_size: int
    bytes_per_device: int
    time_s: float
    op: str
    loc: str
    source: str = ""
    cause: str = ""  # the op the collective serves: the reduced producer or the consumer
    # How many times it runs in one call of the entry function (`runs.op_runs`: a loop body
    # per trip, a callee per call); `bytes_per_device` and `time_s` are for all of them.
    runs: int = 1


@dataclass
class Report:
    collectives: list[Collective] = field(default_factory=list)
    values: list[dict] = field(default_factory=list)
    totals: dict[str, dict[str, float]] = field(default_factory=dict)
    per_line: dict[str, dict[str, float]] = field(default_factory=dict)
    summary: dict[str, float | int] = field(default_factory=dict)
    # Ops without a sharding rule (they replicate what flows through them), sorted.
    ops_without_rule: list[str] = field(default_factory=list)
    # The program graph the HTML page draws (`graph.program_graph`); not in `to_json`.
    graph: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {
            "summary": self.summary,
            "collectives": [asdict(c) for c in self.collectives],
            "values": self.values,
            "totals": self.totals,
            "per_line": self.per_line,
            "ops_without_rule": self.ops_without_rule,
        }


def _element_bytes(element_type: str) -> int:
    if element_type in _ELEMENT_BITS:
        return _ELEMENT_BITS[element_type] // 8
    if element_type.startswith("complex<"):
        return 2 * _element_bytes(element_type[8:-1])
    digits = "".join(c for c in element_type if c.isdigit())
    return max(1, int(digits) // 8) if digits else 4


def local_bytes(type_: object, sharding: TensorSharding | None, mesh: Mesh | None) -> int:
    """Bytes of one device's shard of a tensor (dims rounded up: padding included)."""
    if not isinstance(type_, TensorType) or not type_.is_static:
        return 0
    total = _element_bytes(type_.element_type)
    for d, n in enumerate(type_.shape):
        parts = 1
        if sharding is not None and d < sharding.rank and mesh is not None:
            parts = sharding.dim_shardings[d].sharded_size(mesh)
        total *= math.ceil(n / parts)
    return total


def collective_axes(op: Op) -> list[str]:
    """The mesh axes a collective communicates over (from its attributes)."""
    if op.name == "sdy.collective_permute":
        texts = [str(op.get_attr("out_sharding"))]
    else:
        texts = [str(v) for k, v in op.properties.items() if k != "out_sharding"]
    seen: list[str] = []
    for text in texts:
        body = text.split("<", 1)[-1] if text.startswith("#sdy.sharding") else text
        for name, sub in _AXIS.findall(body):
            if name + sub not in seen:
                seen.append(name + sub)
    return seen


def _mesh_for(module: Module, sharding: TensorSharding | None) -> Mesh | None:
    if sharding is None:
        return None
    return resolve_mesh(sharding, module.meshes())


def _time(kind: str, axes: list[str], n: int, nbytes: int, link: LinkModel) -> float:
    if kind == "all_slice" or n <= 1:
        return 0.0
    bw = min((link.of(a)[0] for a in axes), default=link.bandwidth)
    lat = max((link.of(a)[1] for a in axes), default=link.latency)
    if kind == "all_reduce":
        return 2 * (n - 1) / n * nbytes / bw + 2 * (n - 1) * lat
    if kind == "collective_permute":
        return nbytes / bw + lat
    return (n - 1) / n * nbytes / bw + (n - 1) * lat


def _collectives(
    module: Module,
    ops: list[Op],
    link: LinkModel,
    runs: dict[int, int] | None = None,
    located: bool = True,
) -> list[Collective]:
    """The report entries of the collective `ops`, each counted as often as it runs (`runs`:
    `runs.op_runs` of `module`, computed here if not given). Not `located`: without the op's
    location, source line and cause (empty), which the planner's costs do not read: a
    location's line and column can cost a second parse of the whole text by MLIR."""
    if runs is None:
        runs = op_runs_of(module)
    return [
        _collective(module, op, link, runs.get(id(op), 0) if runs else 1, located) for op in ops
    ]


def _collective(
    module: Module, op: Op, link: LinkModel, runs: int = 1, located: bool = True
) -> Collective:
    kind = op.name.removeprefix("sdy.")
    axes = collective_axes(op)
    out = get_sharding(op.results[0])
    mesh = _mesh_for(module, out)
    sizes = {a.name: a.size for a in mesh.axes} if mesh is not None else {}
    base = [a.split(":")[0] for a in axes]
    n = 1
    for a in axes:
        m = re.search(r":\((\d+)\)(\d+)", a)
        n *= int(m.group(2)) if m else sizes.get(a, 1)
    if kind in ("all_gather", "all_slice"):
        nbytes = local_bytes(op.results[0].type, out, mesh)
    else:
        operand = op.operands[0]
        nbytes = local_bytes(operand.type, get_sharding(operand), mesh)
    time_s = _time(kind, base, n, nbytes, link) * runs
    if not located:
        return Collective(kind, axes, n, nbytes * runs, time_s, op.name, "", runs=runs)
    producer = op.operands[0].defining_op
    users = op.results[0].users
    cause = producer if kind == "all_reduce" else (users[0] if users else producer)
    return Collective(
        kind,
        axes,
        n,
        nbytes * runs,
        time_s,
        op.name,
        str(op.location),
        str(op_source(op)),
        where(cause),
        runs,
    )


def enumerate_collectives(
    text: str, name: str, link: LinkModel, allow_unregistered_dialect: bool = False
) -> list[Collective]:
    from shardwise.io.mlir import load_text
    from shardwise.passes import run_pass

    copy = load_text(text, name, allow_unregistered_dialect)
    run_pass(copy, "sdy-propagation-pipeline")
    return _collectives_of_propagated(copy, link)


def _collectives_of_propagated(module: Module, link: LinkModel) -> list[Collective]:
    """Insert the reshards and collectives into a propagated module (in place); list them."""
    return _collectives(module, _insert_collectives(module), link)


def op_runs_of(module: Module) -> dict[int, int]:
    """`runs.op_runs` from the module's entry function."""
    from shardwise.explain.runs import op_runs
    from shardwise.explain.summary import entry_func

    return op_runs(module, entry_func(module))


def _insert_collectives(module: Module) -> list[Op]:
    """The collectives the export passes insert into a propagated module (in place)."""
    from shardwise.passes import run_pass

    run_pass(module, "sdy-insert-explicit-reshards{enable-full-version=true}")
    run_pass(module, "sdy-reshard-to-collectives")
    return [op for op in module.walk() if is_collective(op)]


def build_report(
    text: str,
    name: str,
    link: LinkModel | None = None,
    progress: ProgressSink | None = None,
    explanations: bool = True,
    allow_unregistered_dialect: bool = False,
) -> Report:
    """Propagate `text`, explain each value (with its prose if `explanations`), then list
    the collectives, per-device memory, the ops without a rule and the summary."""
    from shardwise.explain.compute import compute_totals
    from shardwise.explain.summary import summary
    from shardwise.io.mlir import load_text
    from shardwise.rules.registry import ops_without_rule

    link = link or LinkModel()
    report = Report()
    module = load_text(text, name, allow_unregistered_dialect)
    report.ops_without_rule = sorted(ops_without_rule(module))
    if progress is not None:
        progress.update(0, 1, "propagating")
    ex = explain_module(module)
    keys = all_keys(module)
    names: dict[Any, str] = {}
    for i, key in enumerate(keys):
        if progress is not None:
            progress.update(i, len(keys), "explaining values")
        report.values.append(_value_entry(ex, key, explanations, names))
    if progress is not None:
        progress.update(len(keys), len(keys), "inserting collectives")
    # The explained module is the pipeline's output (explain_module keeps it unchanged): the
    # collectives are read from it instead of propagating a second copy.
    inserted = _insert_collectives(module)
    runs = op_runs_of(module)
    report.collectives = _collectives(module, inserted, link, runs)
    index = {key: i for i, key in enumerate(keys)}
    shardings = [v["sharding"] for v in report.values]
    report.graph = program_graph(module, index, shardings, inserted)
    bytes_of = value_bytes(module)
    compute_s = compute_totals(module, bytes_of, runs=runs).seconds
    report.summary = summary(report.collectives, module, bytes_of, compute_s)
    _totals(report)
    return report


def _value_bytes(module: Module, value: Value) -> int:
    sharding = get_sharding(value)
    return local_bytes(value.type, sharding, _mesh_for(module, sharding))


def value_bytes(module: Module) -> Callable[[Value], int]:
    """`_value_bytes` of `module` as a function of the value, the module's meshes read once
    and each (type, sharding) pair's bytes computed once (a report asks for every value's
    bytes several times: memory, compute, the values' table)."""
    meshes = module.meshes()
    cache: dict[tuple[object, TensorSharding | None], int] = {}

    def bytes_of(value: Value) -> int:
        sharding = get_sharding(value)
        key = (value.type, sharding)
        n = cache.get(key)
        if n is None:
            mesh = resolve_mesh(sharding, meshes) if sharding is not None else None
            n = cache[key] = local_bytes(value.type, sharding, mesh)
        return n

    return bytes_of


def _value_entry(ex, key, explanations: bool, names: dict[Any, str]) -> dict:
    """One value of the report; `names` keeps the user's name of each value named so far
    (a value is the operand of several)."""
    module = ex.module
    exp = ex.explain(key, chains=explanations)
    names[key] = exp.name
    type_ = key_type(module, key)
    mesh = _mesh_for(module, exp.sharding)
    entry = {
        "name": exp.name,
        "mlir_name": mlir_name(module, key),
        "type": _text(type_) if type_ is not None else "",
        "sharding": _text(exp.sharding) if exp.sharding is not None else None,
        "bytes_per_device": _local_bytes(type_, exp.sharding, mesh),
        "op": where(key.defining_op) if isinstance(key, Value) else "",
        "operands": _operand_names(module, key, names),
        "stopped": stopped_json(module, exp.blocked),
    }
    if explanations:
        entry["explanation"] = format_explanation(ex, exp)
    return entry


# Types, shardings and meshes are frozen and hash by value; most values of a model share them
# with others (a layer's tensors with the next layer's).
@functools.lru_cache(maxsize=1 << 14)
def _text(x: object) -> str:
    return str(x)


@functools.lru_cache(maxsize=1 << 14)
def _local_bytes(type_: object, sharding: TensorSharding | None, mesh: Mesh | None) -> int:
    return local_bytes(type_, sharding, mesh)


def _returned_value(module: Module, key: str) -> Value | None:
    """The value a func result (``main:result0``) returns."""
    found = func_result_of_key(module, key)
    if found is None:
        return None
    func, index = found
    terminator = func.regions[0].entry.terminator
    assert terminator is not None, "a func with results has a return"
    return terminator.operands[index]


def _operand_names(module: Module, key, names: dict[Any, str]) -> list[str]:
    """The tensors the value is computed from (for the op graph); a func result: its value."""
    if isinstance(key, str):
        value = _returned_value(module, key)
        operands = [] if value is None else [value]
    else:
        op = key.defining_op
        operands = [] if op is None else list(op.operands)
    out = []
    for v in operands:
        name = names.get(v)
        if name is None:
            name = names[v] = key_name(module, v)
        out.append(name)
    return out


def _totals(report: Report) -> None:
    for c in report.collectives:
        for axis in c.axes or ["(none)"]:
            t = report.totals.setdefault(axis, {"count": 0, "bytes_per_device": 0, "time_s": 0.0})
            t["count"] += 1
            t["bytes_per_device"] += c.bytes_per_device
            t["time_s"] += c.time_s
        line = c.source or c.loc
        t = report.per_line.setdefault(line, {"count": 0, "bytes_per_device": 0, "time_s": 0.0})
        t["count"] += 1
        t["bytes_per_device"] += c.bytes_per_device
        t["time_s"] += c.time_s
