"""The Python API: load a module, propagate, ask for shardings, write it back; JAX bridges.

    import shardwise
    module = shardwise.load("model.mlir")          # a path or MLIR text
    module.propagate()                              # sdy-propagation-pipeline by default
    print(module.sharding_of("main:arg0"))
    module.write("model.sharded.mlir")
    local = module.partition()                      # the per-device program
    assert module.check().equal                     # run both with XLA, compare

`from_jax` lowers a JAX function without running it (an abstract mesh, no devices needed);
`to_partition_spec` / `from_partition_spec` convert between our `TensorSharding` and JAX's
`PartitionSpec`, `to_named_sharding` builds a `jax.sharding.NamedSharding`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from shardwise.axis import AxisRef
from shardwise.errors import ShardwiseError
from shardwise.ir import Module as IRModule
from shardwise.ir import Op, Value
from shardwise.mesh import Mesh, MeshAxis
from shardwise.sharding import DimensionSharding, TensorSharding

__all__ = [
    "ShardedModule",
    "load",
    "from_jax",
    "to_partition_spec",
    "from_partition_spec",
    "to_named_sharding",
    "mesh_from_jax",
    "to_placements",
    "from_placements",
]


@dataclass
class ShardedModule:
    """A loaded StableHLO + sdy module and the operations users want on it."""

    ir: IRModule
    source: str | None = field(default=None, repr=False, compare=False)  # as loaded
    propagated: bool = field(default=False, repr=False, compare=False)
    # (the text explained, its propagation with provenance): explain() replays it once
    _explained_cache: tuple[str, Any] | None = field(default=None, repr=False, compare=False)

    # -- propagation ------------------------------------------------------------------------

    def propagate(
        self, pass_: str = "sdy-propagation-pipeline", **options: object
    ) -> ShardedModule:
        """Run a Shardy pass by name (options in snake_case or Shardy spelling); in place."""
        from shardwise.passes import run_pass
        from shardwise.rules.custom import apply_user_rules

        apply_user_rules(self.ir)
        spec = pass_
        if options:
            rendered = " ".join(
                f"{k.replace('_', '-')}={str(v).lower() if isinstance(v, bool) else v}"
                for k, v in options.items()
            )
            spec = f"{pass_}{{{rendered}}}"
        run_pass(self.ir, spec)
        self.propagated = True
        return self

    # -- partitioning -----------------------------------------------------------------------

    def partition(self, fuse_collectives: bool = False, like_shardy: bool = False) -> ShardedModule:
        """The per-device program (`shardwise.partition`), as a new module; this one stays.

        Raises a `ShardwiseError` naming the op where a pass of the chain cannot partition
        (with `like_shardy`, wherever jaxlib 0.10.2's Shardy stops).
        """
        from shardwise.io.mlir import load_text
        from shardwise.partition import partition

        text = self.text
        module = load_text(text, self.ir.op.location.file)
        partition(module, fuse_collectives=fuse_collectives, like_shardy=like_shardy)
        return ShardedModule(module, source=None, propagated=True)

    def collectives(self) -> list[Any]:
        """The StableHLO collectives of a per-device program (`partition_collectives`)."""
        from shardwise.partition_collectives import collectives

        return collectives(self.ir)

    def check(
        self,
        partitioned: ShardedModule | str | None = None,
        seed: int = 0,
        devices: int | None = None,
        executor: Any = None,
        against_xla: bool = False,
    ) -> Any:
        """Run the per-device program on simulated devices and this one on one; compare.

        `partitioned` defaults to `self.partition()`. Returns a `shardwise.check.CheckResult`
        (``.equal``, per-result errors, the first diverging op); `against_xla` also compares
        XLA's own partitioning (``.xla_equal``); see docs/check.md.
        """
        from shardwise.check import check

        local = self.partition() if partitioned is None else partitioned
        local_text = local.text if isinstance(local, ShardedModule) else local
        name = self.ir.op.location.file
        return check(
            self.text,
            local_text,
            seed=seed,
            devices=devices,
            executor=executor,
            global_name=name,
            local_name=f"{name} (partitioned)",
            against_xla=against_xla,
        )

    # -- explanations -----------------------------------------------------------------------

    def explain(self, name: str) -> Any:
        """Why the value `name` is sharded as it is, after the whole propagation pipeline.

        `name` is what the user knows (``params['w1']``, ``x``, ``result['out']``, a Python
        line ``model.py:12``) or an MLIR name (``main:arg0``, ``main:result0``, ``%3``).
        Returns an `ExplanationView` (``str()``, ``_repr_html_()``, ``to_json()``).
        """
        from shardwise.explain.run import find_keys
        from shardwise.explain.views import ExplanationView

        explained = self._explained()
        keys = find_keys(explained.module, name, None)
        return ExplanationView(explained, [explained.explain(k) for k in keys])

    def report(self, link: Any = None) -> Any:
        """What the sharding costs: collectives, bytes and time per mesh axis, per value.

        Returns a `ReportView` (``str()``, ``_repr_html_()``, ``to_json()``, ``html()``).
        """
        from shardwise.explain.report import build_report
        from shardwise.explain.views import ReportView

        name = self.ir.op.location.file
        return ReportView(build_report(self._unpropagated_text(), name, link), name)

    def _explained(self) -> Any:
        from shardwise.explain.run import explain_module
        from shardwise.io.mlir import load_text

        text = self._unpropagated_text()
        if self._explained_cache is None or self._explained_cache[0] != text:
            module = load_text(text, self.ir.op.location.file)
            self._explained_cache = (text, explain_module(module))
        return self._explained_cache[1]

    def _unpropagated_text(self) -> str:
        """The module before propagation: explanations replay the pipeline from there."""
        if not self.propagated:
            return self.text
        if self.source is None:
            raise ShardwiseError(
                "this module was propagated and shardwise does not have its text from before; "
                "load it with shardwise.load / from_jax, or call explain() before propagate()"
            )
        return self.source

    # -- queries ----------------------------------------------------------------------------

    def meshes(self) -> dict[str, Mesh]:
        return {k: v for k, v in self.ir.meshes().items() if isinstance(v, Mesh)}

    def value(self, name: str) -> Value:
        """A value by name: ``main:arg0``, ``main:result0`` is not a value (see
        `sharding_of`), ``%3`` / ``%arg0`` (names as in MLIR's generic form)."""
        func_name, sep, rest = name.partition(":")
        if sep and rest.startswith("arg"):
            func = self._func(func_name)
            return func.regions[0].entry.args[int(rest[3:])]
        for op in self.ir.walk():
            for v in op.results:
                if v.name == name:
                    return v
            for region in op.regions:
                for block in region.blocks:
                    for v in block.args:
                        if v.name == name:
                            return v
        raise ShardwiseError(
            f"no value named '{name}'; use 'FUNC:argN', 'FUNC:resultN' or an SSA name like '%3'"
        )

    def _func(self, name: str) -> Op:
        func = self.ir.lookup_symbol(name)
        if func is None or func.name != "func.func":
            names = ", ".join(self.ir.symbol_name(f) or "?" for f in self.ir.funcs)
            raise ShardwiseError(f"no function '{name}'; functions: {names}")
        return func

    def sharding_of(self, value: Value | str) -> TensorSharding | None:
        """The sharding of a value (None = no sharding, i.e. fully open/replicated); by name:
        the user's (``params['w1']``, ``result['out']``) or MLIR's (``main:arg0``, ``%3``)."""
        from shardwise.sdy.shardings import get_func_result_sharding, get_sharding

        if isinstance(value, str):
            value = self._user_key(value) or value
        if isinstance(value, str):
            func_name, sep, rest = value.partition(":")
            if sep and rest.startswith("result"):
                return get_func_result_sharding(self._func(func_name), int(rest[6:]))
            value = self.value(value)
        return get_sharding(value)

    def _user_key(self, name: str) -> Value | str | None:
        """The one value (or ``main:resultN``) the user's name ``params['w1']`` names."""
        from shardwise.explain.run import all_keys
        from shardwise.names import find_by_user_name

        found = find_by_user_name(self.ir, name, all_keys(self.ir))
        return found[0] if len(found) == 1 else None

    def ops(self) -> Iterator[Op]:
        return self.ir.walk()

    # -- output -----------------------------------------------------------------------------

    @property
    def text(self) -> str:
        from shardwise.io.mlir import write_text

        return write_text(self.ir)

    def write(self, path: str | os.PathLike[str] | None = None, generic: bool = False) -> str:
        """The module's MLIR text (Shardy's printing); also written to `path` if given."""
        from shardwise.io.mlir import write_file, write_text

        if path is not None:
            write_file(self.ir, path, generic=generic)
        return write_text(self.ir, generic=generic)

    def __str__(self) -> str:
        return self.text


def parse_sharding(text: str) -> TensorSharding:
    """``#sdy.sharding<@mesh, [{"x"}, {}]>`` (the ``#sdy.sharding`` prefix optional) -> value."""
    from shardwise.syntax import parse_tensor_sharding

    text = text.strip()
    return parse_tensor_sharding(text if text.startswith("#") else "#sdy.sharding" + text)


def load(
    path_or_text: str | os.PathLike[str], allow_unregistered_dialect: bool = False
) -> ShardedModule:
    """Load MLIR from a file path or from text (anything containing a newline or '{').

    `allow_unregistered_dialect`: accept ops of dialects MLIR does not know (``"foo.bar"``) as
    ops without a sharding rule, as ``sdy_opt -allow-unregistered-dialect`` does.
    """
    from shardwise.io.mlir import load_text, read_text_file

    unregistered = allow_unregistered_dialect
    if isinstance(path_or_text, str) and ("\n" in path_or_text or "{" in path_or_text):
        module = load_text(path_or_text, allow_unregistered_dialect=unregistered)
        return ShardedModule(module, source=path_or_text)
    text = read_text_file(path_or_text)
    return ShardedModule(load_text(text, str(path_or_text), unregistered), source=text)


# -- JAX bridges --------------------------------------------------------------------------------


def mesh_from_jax(mesh: Any) -> Mesh:
    """Our `Mesh` for a `jax.sharding.Mesh` / `AbstractMesh` (device ids kept unless iota)."""
    axes = tuple(
        MeshAxis(str(n), int(s)) for n, s in zip(mesh.axis_names, mesh.axis_sizes, strict=True)
    )
    devices = getattr(mesh, "devices", None)
    ids: tuple[int, ...] = ()
    if devices is not None:
        flat = tuple(int(d.id) for d in devices.flat)
        if flat != tuple(range(len(flat))):
            ids = flat
    return Mesh(axes, ids)


def from_partition_spec(spec: Sequence[Any], rank: int, mesh_name: str = "mesh") -> TensorSharding:
    """``P("data", None, ("x", "y"))`` -> ``<@mesh, [{"data"}, {}, {"x", "y"}]>`` (closed)."""
    entries = list(spec) + [None] * (rank - len(spec))
    if len(entries) > rank:
        raise ShardwiseError(f"PartitionSpec {tuple(spec)} has more entries than rank {rank}")
    dims = []
    for entry in entries:
        names = () if entry is None else (entry,) if isinstance(entry, str) else tuple(entry)
        dims.append(DimensionSharding(tuple(AxisRef(n) for n in names), is_closed=True))
    return TensorSharding(mesh_name, tuple(dims))


def to_partition_spec(sharding: TensorSharding) -> Any:
    """A JAX `PartitionSpec` for a sharding of full axes (sub-axes have no JAX spelling)."""
    from jax.sharding import PartitionSpec

    entries: list[Any] = []
    for dim in sharding.dim_shardings:
        if any(a.is_sub_axis for a in dim.axes):
            raise ShardwiseError(
                f"{sharding} uses sub-axes, which a PartitionSpec cannot express; "
                "use shardwise.xla.hlo_sharding.to_hlo_sharding instead"
            )
        names = tuple(a.name for a in dim.axes)
        entries.append(None if not names else names[0] if len(names) == 1 else names)
    while entries and entries[-1] is None:
        entries.pop()
    return PartitionSpec(*entries)


def to_named_sharding(sharding: TensorSharding, jax_mesh: Any) -> Any:
    """A `jax.sharding.NamedSharding` on `jax_mesh` for `sharding`."""
    from jax.sharding import NamedSharding

    return NamedSharding(jax_mesh, to_partition_spec(sharding))


def from_jax(
    fn: Any,
    *example_args: Any,
    mesh: Any = None,
    in_shardings: Any = None,
    out_shardings: Any = None,
    static_argnums: int | Sequence[int] = (),
    static_argnames: str | Sequence[str] = (),
    example_kwargs: dict[str, Any] | None = None,
    platform: str = "cpu",
) -> ShardedModule:
    """Lower `fn` as `jax.jit` would (no execution, no devices) and load the result.

    Takes what `jax.jit` takes: example args are pytrees of arrays or `jax.ShapeDtypeStruct`s
    (with or without `.sharding`); `in_shardings` / `out_shardings` are pytrees (or prefixes)
    of `NamedSharding`, `PartitionSpec` or None; `mesh` is a `jax.sharding.Mesh`, an
    `AbstractMesh`, a dict ``{"data": 2, "model": 4}``, or None when NamedShardings carry it.
    A spec that does not fit its array raises `InputError` naming the array by its pytree path.
    """
    from shardwise.io.jax_inputs import LoweringInputs, lower_to_text
    from shardwise.io.mlir import load_text

    inputs = LoweringInputs(
        fn,
        tuple(example_args),
        dict(example_kwargs or {}),
        mesh,
        in_shardings,
        out_shardings,
        static_argnums,
        static_argnames,
        platform,
    )
    text = lower_to_text(inputs)
    return ShardedModule(load_text(text, getattr(fn, "__name__", "jax") + ".mlir"), source=text)


# -- DTensor-style placements -------------------------------------------------------------------


def to_placements(sharding: TensorSharding, mesh: Mesh) -> list[str]:
    """PyTorch DTensor placements, one per mesh axis: ``Shard(d)``, ``Partial()``, ``Replicate()``.

    DTensor shards a tensor dim over several mesh dims in mesh order, so a dim whose axes are
    not in mesh order, or a sub-axis, has no placement; that raises `ShardwiseError`.
    """
    placement = {a.name: "Replicate()" for a in mesh.axes}
    for d, dim in enumerate(sharding.dim_shardings):
        if any(a.is_sub_axis for a in dim.axes):
            raise ShardwiseError(f"{sharding}: sub-axes have no DTensor placement")
        order = [mesh.axis_index(a.name) for a in dim.axes]
        if order != sorted(order):
            raise ShardwiseError(
                f"{sharding}: dim {d} is sharded over axes out of mesh order, which DTensor "
                "cannot express"
            )
        for a in dim.axes:
            placement[a.name] = f"Shard({d})"
    for a in sharding.unreduced_axes:
        placement[a.name] = "Partial()"
    return [placement[a.name] for a in mesh.axes]


def from_placements(
    placements: Sequence[str], mesh: Mesh, rank: int, mesh_name: str = "mesh"
) -> TensorSharding:
    """The closed sdy sharding of DTensor `placements` (``"Shard(0)"``, ``"Replicate()"``, ...)."""
    if len(placements) != len(mesh.axes):
        raise ShardwiseError(f"{len(placements)} placements for a mesh of {len(mesh.axes)} axes")
    dims: list[list[AxisRef]] = [[] for _ in range(rank)]
    unreduced: list[AxisRef] = []
    for axis, text in zip(mesh.axes, placements, strict=True):
        text = text.replace(" ", "")
        if text.startswith("Shard(") and text.endswith(")"):
            d = int(text[6:-1])
            if not 0 <= d < rank:
                raise ShardwiseError(
                    f"{text} on axis '{axis.name}': dim {d} out of range for rank {rank}"
                )
            dims[d].append(AxisRef(axis.name))
        elif text.startswith("Partial("):
            unreduced.append(AxisRef(axis.name))
        elif text != "Replicate()":
            raise ShardwiseError(
                f"unknown placement '{text}'; expected Shard(d), Replicate() or Partial()"
            )
    return TensorSharding(
        mesh_name,
        tuple(DimensionSharding(tuple(axes), is_closed=True) for axes in dims),
        unreduced_axes=tuple(unreduced),
    )
