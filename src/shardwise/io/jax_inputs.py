"""What `jax.jit` takes, checked and lowered without devices: the engine of `from_jax`.

Example args are pytrees of arrays or `jax.ShapeDtypeStruct`s (with or without `.sharding`);
`in_shardings` / `out_shardings` are pytrees (prefixes, as jax allows) of `NamedSharding`,
`PartitionSpec` or None; the mesh is a `jax.sharding.Mesh`, an `AbstractMesh`, a dict of axis
sizes or left out when the `NamedSharding`s carry it. Everything is moved onto an abstract
mesh, so lowering needs no devices.

Every spec is checked against its array before JAX sees it, so a mistake is reported as an
`InputError` naming the array by its pytree path (``params['layers'][0]['wq']``, as JAX names
it in the module), the dim, its size, the axes and the fix, instead of JAX's traceback.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from shardwise.errors import InputError, Location

__all__ = ["LoweringInputs", "lower_to_text"]


@dataclass(frozen=True, slots=True)
class LoweringInputs:
    """`from_jax`'s arguments, as the user gave them."""

    fn: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: Mapping[str, Any]
    mesh: Any = None
    in_shardings: Any = None
    out_shardings: Any = None
    static_argnums: int | Sequence[int] = ()
    static_argnames: str | Sequence[str] = ()
    platform: str = "cpu"


def lower_to_text(inputs: LoweringInputs) -> str:
    """The StableHLO + sdy text `jax.jit(fn).lower(...)` gives, with the debug locations
    (argument names, result names, Python lines) kept."""
    import jax

    _exclude_own_frames()
    checker = _Checker(inputs)
    args, kwargs = checker.abstract_args()
    out_shardings = checker.out_shardings()
    failure = None
    try:
        jitted = jax.jit(
            inputs.fn,
            static_argnums=inputs.static_argnums,
            static_argnames=inputs.static_argnames,
            **({} if out_shardings is None else {"out_shardings": out_shardings}),
        )
        lowered = jitted.trace(*args, **kwargs).lower(lowering_platforms=(inputs.platform,))
    except (ValueError, TypeError) as e:
        failure = _first_line(e)
    if failure is not None:  # outside the except: JAX's traceback is not chained to ours
        checker.diagnose_outputs(args, kwargs)
        raise checker.error(f"jax.jit could not trace and lower the function: {failure}")
    return lowered.as_text(debug_info=True)


def _exclude_own_frames() -> None:
    """Keep this module's and `api.py`'s frames out of the ops' Python call stacks."""
    from jax._src import source_info_util

    here = os.path.dirname(os.path.abspath(__file__))
    for path in (os.path.abspath(__file__), os.path.join(os.path.dirname(here), "api.py")):
        if path not in _EXCLUDED:
            source_info_util.register_exclusion(path)
            _EXCLUDED.add(path)


_EXCLUDED: set[str] = set()


def _first_line(e: Exception) -> str:
    return str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__


# -- meshes -------------------------------------------------------------------------------------


def abstract_mesh(mesh: Any) -> Any:
    """An `AbstractMesh` for a dict of axis sizes, a `Mesh`, an `AbstractMesh` or our `Mesh`."""
    from jax.sharding import AbstractMesh, AxisType

    from shardwise.mesh import Mesh as OurMesh

    if isinstance(mesh, AbstractMesh):
        return mesh
    if isinstance(mesh, OurMesh):
        mesh = {a.name: a.size for a in mesh.axes}
    if isinstance(mesh, Mapping):
        bad = [f"{k!r}: {v!r}" for k, v in mesh.items() if not isinstance(k, str) or not _size(v)]
        if bad:
            raise InputError(
                f"mesh: {', '.join(bad)} is not an axis name with a positive size; "
                "write the mesh as {'data': 2, 'model': 4}"
            )
        sizes, names = tuple(int(v) for v in mesh.values()), tuple(mesh)
        return AbstractMesh(sizes, names, axis_types=(AxisType.Auto,) * len(names))
    found = getattr(mesh, "abstract_mesh", None)
    if found is None:
        raise InputError(
            f"mesh: a {type(mesh).__name__} is not a mesh; pass a jax.sharding.Mesh, an "
            "AbstractMesh or a dict of axis sizes such as {'data': 2, 'model': 4}"
        )
    return found


def _size(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v > 0


def _mesh_text(mesh: Any) -> str:
    return ", ".join(f"{n}={s}" for n, s in zip(mesh.axis_names, mesh.axis_sizes, strict=True))


# -- the checker --------------------------------------------------------------------------------


class _Checker:
    """Turns the user's pytrees into abstract `ShapeDtypeStruct`s and `NamedSharding`s."""

    def __init__(self, inputs: LoweringInputs) -> None:
        self.inputs = inputs
        self.location = _fn_location(inputs.fn)
        try:
            self.mesh = None if inputs.mesh is None else abstract_mesh(inputs.mesh)
        except InputError as e:
            raise e.at(self.location) if self.location else e from None
        self.mesh_source = "mesh="
        if self.mesh is None:
            self.mesh, self.mesh_source = _first_named_mesh(inputs)
        self.names = _arg_names(inputs.fn, len(inputs.args))
        self.static = _static_positions(inputs)

    def error(self, message: str) -> InputError:
        return InputError(message, self.location)

    # -- arguments ------------------------------------------------------------------------------

    def abstract_args(self) -> tuple[list[Any], dict[str, Any]]:
        dynamic = [i for i in range(len(self.inputs.args)) if i not in self.static]
        per_arg = self._split_in_shardings(len(dynamic))
        args = list(self.inputs.args)
        for i, prefix in zip(dynamic, per_arg, strict=True):
            args[i] = self._abstract_tree(args[i], prefix, self.names[i], "in_shardings")
        static_names = self._static_names()
        kwargs = {
            k: v if k in static_names else self._abstract_tree(v, None, k, "in_shardings")
            for k, v in self.inputs.kwargs.items()
        }
        return args, kwargs

    def _split_in_shardings(self, count: int) -> list[Any]:
        """One prefix per dynamic positional argument (jax: a leaf applies to all of them)."""
        specs = self.inputs.in_shardings
        if _is_spec_leaf(specs):
            return [specs] * count
        if not isinstance(specs, (tuple, list)):
            raise self.error(
                f"in_shardings is a {type(specs).__name__}; give a NamedSharding, a "
                f"PartitionSpec, None, or a tuple with one entry per argument ({count})"
            )
        if len(specs) != count:
            names = ", ".join(self.names[i] for i in range(len(self.names)) if i not in self.static)
            raise self.error(
                f"in_shardings has {len(specs)} entries but the function takes {count} "
                f"non-static positional arguments ({names}); give one entry per argument "
                "(None leaves one unconstrained)"
            )
        return list(specs)

    def _static_names(self) -> set[str]:
        names = self.inputs.static_argnames
        out = {names} if isinstance(names, str) else set(names)
        params = _positional_params(self.inputs.fn)
        out.update(params[i] for i in self.static if i < len(params))
        return out

    def _abstract_tree(self, tree: Any, prefix: Any, name: str, what: str) -> Any:
        """`tree` with each array leaf an abstract `ShapeDtypeStruct` carrying its sharding."""
        import jax

        leaves, treedef = jax.tree_util.tree_flatten_with_path(tree)
        specs = self._broadcast(prefix, tree, name, what)
        out = []
        for (path, leaf), spec in zip(leaves, specs, strict=True):
            where = name + jax.tree_util.keystr(path)
            out.append(self._abstract_leaf(leaf, spec, where, what))
        return jax.tree_util.tree_unflatten(treedef, out)

    def _abstract_leaf(self, leaf: Any, spec: Any, where: str, what: str) -> Any:
        import jax

        shape, dtype, weak, own = _aval_of(leaf)
        if shape is None:
            raise self.error(
                f"argument {where} is a {type(leaf).__name__}, not an array; pass an array or "
                "a jax.ShapeDtypeStruct, or mark the argument static (static_argnums)"
            )
        given = self.named(spec, where, what)
        own_named = self.named(own, where, f"the .sharding of {where}")
        if given is not None and own_named is not None and given.spec != own_named.spec:
            raise self.error(
                f"{where} has .sharding {own_named.spec} but {what} gives {given.spec}; "
                "keep one of them"
            )
        sharding = given if given is not None else own_named
        if sharding is not None:
            self.check_shape(sharding.spec, shape, where)
        return jax.ShapeDtypeStruct(shape, dtype, sharding=sharding, weak_type=weak)

    # -- shardings ------------------------------------------------------------------------------

    def named(self, spec: Any, where: str, what: str) -> Any:
        """`spec` (NamedSharding, PartitionSpec or None) as a NamedSharding on the abstract mesh."""
        from jax.sharding import NamedSharding, PartitionSpec

        if spec is None:
            return None
        if isinstance(spec, PartitionSpec):
            if self.mesh is None:
                raise self.error(
                    f"{what} gives {where} the PartitionSpec {spec} but there is no mesh; pass "
                    "mesh= (a Mesh, an AbstractMesh or {'data': 2, ...}) or a NamedSharding"
                )
            self.check_axes(spec, where)
            return NamedSharding(self.mesh, spec)
        if isinstance(spec, NamedSharding):
            mesh = abstract_mesh(spec.mesh)
            if self.mesh is None:
                self.mesh, self.mesh_source = mesh, f"the NamedSharding of {where}"
            elif _mesh_key(mesh) != _mesh_key(self.mesh):
                raise self.error(
                    f"{what} gives {where} a NamedSharding on the mesh ({_mesh_text(mesh)}) "
                    f"but {self.mesh_source} is ({_mesh_text(self.mesh)}); all shardings of "
                    "one function must use one mesh"
                )
            return NamedSharding(self.mesh, spec.spec)
        if what.startswith("the .sharding"):
            return None  # a single-device array: placed, not sharded
        raise self.error(
            f"{what} gives {where} a {type(spec).__name__}; use a NamedSharding, a "
            "PartitionSpec or None"
        )

    def check_axes(self, spec: Any, where: str) -> None:
        """JAX's checks of a spec against the mesh: known axes, each axis used once."""
        sizes = self.axis_sizes()
        seen: dict[str, int] = {}
        for dim, entry in enumerate(spec.partitions):
            for axis in self._entry_axes(entry, spec, where, dim, sizes):
                if axis in seen:
                    raise self.error(
                        f"{where}: axis '{axis}' shards both dim {seen[axis]} and dim {dim} in "
                        f"{spec}; a mesh axis may shard one dim only"
                    )
                seen[axis] = dim
        for axis in sorted(spec.unreduced | spec.reduced):
            self._known_axis(axis, spec, where, sizes)

    def check_shape(self, spec: Any, shape: tuple[int, ...], where: str) -> None:
        """JAX's checks of a spec against an array: rank, each dim divided by its axes."""
        sizes = self.axis_sizes()
        parts = spec.partitions
        if len(parts) > len(shape):
            raise self.error(
                f"{where} has rank {len(shape)} (shape {tuple(shape)}) but its sharding {spec} "
                f"has {len(parts)} entries; give at most {len(shape)} (P() for a scalar)"
            )
        for dim, entry in enumerate(parts):
            axes = self._entry_axes(entry, spec, where, dim, sizes)
            count = 1
            for axis in axes:
                count *= sizes[axis]
            if shape[dim] % count:
                named = ", ".join(f"'{a}'={sizes[a]}" for a in axes)
                raise self.error(
                    f"{where}: dim {dim} has size {shape[dim]} (shape {tuple(shape)}), which "
                    f"the axes {named} ({count} shards) do not divide; make the dim a multiple "
                    f"of {count}, or shard it over fewer axes (None replicates it)"
                )

    def axis_sizes(self) -> dict[str, int]:
        assert self.mesh is not None  # a spec became a NamedSharding only with a mesh
        return dict(zip(self.mesh.axis_names, self.mesh.axis_sizes, strict=True))

    def _entry_axes(
        self, entry: Any, spec: Any, where: str, dim: int, sizes: dict[str, int]
    ) -> tuple[str, ...]:
        from jax.sharding import PartitionSpec

        if entry is None or entry is PartitionSpec.UNCONSTRAINED:
            return ()
        axes = (entry,) if isinstance(entry, str) else entry
        if not isinstance(axes, tuple) or not all(isinstance(a, str) for a in axes):
            raise self.error(
                f"{where}: entry {dim} of {spec} is {entry!r}; an entry is None, an axis name "
                "or a tuple of axis names"
            )
        for axis in axes:
            self._known_axis(axis, spec, where, sizes)
        return axes

    def _known_axis(self, axis: str, spec: Any, where: str, sizes: dict[str, int]) -> None:
        if axis not in sizes:
            raise self.error(
                f"{where}: axis '{axis}' of {spec} is not in the mesh ({_mesh_text(self.mesh)}); "
                "use one of its axes"
            )

    def _broadcast(self, prefix: Any, tree: Any, name: str, what: str) -> list[Any]:
        """The spec of each leaf of `tree` (in flatten order), from a jax-style prefix tree."""
        import jax

        if _is_spec_leaf(prefix):
            return [prefix] * len(jax.tree_util.tree_leaves(tree))
        tree_children, prefix_children = _children(tree), _children(prefix)
        thing = "the result" if what == "out_shardings" else "the argument"
        if tree_children is None:
            raise self.error(
                f"{what} has a {type(prefix).__name__} at {name} where {thing} is an "
                "array; give a NamedSharding, a PartitionSpec or None there"
            )
        if prefix_children is None or type(prefix) is not type(tree):
            raise self.error(
                f"{what} at {name} is a {type(prefix).__name__} but {thing} there is a "
                f"{type(tree).__name__}; {what} must be a prefix of {thing}'s pytree"
            )
        keys = [jax.tree_util.keystr((k,)) for k, _ in tree_children]
        prefix_keys = [jax.tree_util.keystr((k,)) for k, _ in prefix_children]
        if keys != prefix_keys:
            raise self.error(
                f"{what} at {name} has the entries {prefix_keys} but {thing} has {keys}; "
                f"{what} must be a prefix of {thing}'s pytree"
            )
        out: list[Any] = []
        for (key, child), (_, child_prefix) in zip(tree_children, prefix_children, strict=True):
            out += self._broadcast(child_prefix, child, name + jax.tree_util.keystr((key,)), what)
        return out

    # -- results --------------------------------------------------------------------------------

    def out_shardings(self) -> Any:
        """`out_shardings` with every leaf a NamedSharding on the abstract mesh (or None)."""
        import jax

        specs = self.inputs.out_shardings
        if specs is None:
            return None
        leaves, treedef = jax.tree_util.tree_flatten_with_path(specs, is_leaf=_is_spec_leaf)
        out = [
            self.named(s, "result" + jax.tree_util.keystr(p), "out_shardings") for p, s in leaves
        ]
        return jax.tree_util.tree_unflatten(treedef, out)

    def diagnose_outputs(self, args: list[Any], kwargs: dict[str, Any]) -> None:
        """Raise the named error for a bad `out_shardings`, if that is why JAX failed."""
        import jax

        if self.inputs.out_shardings is None:
            return
        try:
            shapes = jax.jit(
                self.inputs.fn,
                static_argnums=self.inputs.static_argnums,
                static_argnames=self.inputs.static_argnames,
            ).eval_shape(*args, **kwargs)
        except (ValueError, TypeError):
            return  # the function itself fails: the caller reports JAX's message
        specs = self.inputs.out_shardings
        leaves = jax.tree_util.tree_flatten_with_path(shapes)[0]
        for (path, leaf), spec in zip(
            leaves, self._broadcast(specs, shapes, "result", "out_shardings"), strict=True
        ):
            named = self.named(spec, "result" + jax.tree_util.keystr(path), "out_shardings")
            if named is not None:
                self.check_shape(named.spec, leaf.shape, "result" + jax.tree_util.keystr(path))


# -- pytree and signature helpers ---------------------------------------------------------------


def _is_spec_leaf(x: Any) -> bool:
    from jax.sharding import PartitionSpec, Sharding

    return x is None or isinstance(x, (PartitionSpec, Sharding))


def _first_named_mesh(inputs: LoweringInputs) -> tuple[Any, str]:
    """The mesh of the first NamedSharding among the shardings and example args, if any."""
    import jax
    from jax.sharding import NamedSharding

    trees = (inputs.in_shardings, inputs.out_shardings, inputs.args, inputs.kwargs)
    for tree in trees:
        for leaf in jax.tree_util.tree_leaves(tree, is_leaf=_is_spec_leaf):
            sharding = getattr(leaf, "sharding", leaf)
            if isinstance(sharding, NamedSharding):
                return abstract_mesh(sharding.mesh), "the mesh of the first NamedSharding"
    return None, "mesh="


def _children(node: Any) -> list[tuple[Any, Any]] | None:
    """The (key, child) pairs one level down a pytree node; None for a leaf."""
    import jax

    flat, _ = jax.tree_util.tree_flatten_with_path(node, is_leaf=lambda x: x is not node)
    if len(flat) == 1 and flat[0][0] == () and flat[0][1] is node:  # a leaf flattens to itself
        return None
    return [(path[0], child) for path, child in flat]


def _aval_of(leaf: Any) -> tuple[tuple[int, ...] | None, Any, bool, Any]:
    """(shape, dtype, weak_type, own sharding) of an example leaf; shape None if not an array."""
    import jax

    if isinstance(leaf, jax.ShapeDtypeStruct):
        return tuple(leaf.shape), leaf.dtype, leaf.weak_type, leaf.sharding
    try:
        aval = jax.typeof(leaf)
    except TypeError:
        return None, None, False, None
    own = getattr(leaf, "sharding", None) if isinstance(leaf, jax.Array) else None
    return tuple(aval.shape), aval.dtype, bool(getattr(aval, "weak_type", False)), own


def _mesh_key(mesh: Any) -> tuple[tuple[str, ...], tuple[int, ...]]:
    return tuple(mesh.axis_names), tuple(mesh.axis_sizes)


def _positional_params(fn: Callable[..., Any]) -> list[str]:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return []
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [p.name for p in params if p.kind in kinds]


def _arg_names(fn: Callable[..., Any], count: int) -> list[str]:
    """The names JAX gives positional arguments: the parameter's, else ``args[i]``."""
    params = _positional_params(fn)
    return [params[i] if i < len(params) else f"args[{i}]" for i in range(count)]


def _static_positions(inputs: LoweringInputs) -> set[int]:
    """The static positional arguments (jax counts negative numbers from the last one given)."""
    nums = inputs.static_argnums
    count = len(inputs.args)
    params = _positional_params(inputs.fn)
    out = {i + count if i < 0 else i for i in ((nums,) if isinstance(nums, int) else nums)}
    raw = inputs.static_argnames
    names = {raw} if isinstance(raw, str) else set(raw)
    out.update(i for i, p in enumerate(params) if p in names and i < count)
    return out


def _fn_location(fn: Callable[..., Any]) -> Location | None:
    """Where `fn` is defined, for the errors about its arguments."""
    code = getattr(inspect.unwrap(fn), "__code__", None)
    if code is None:
        return None
    return Location(code.co_filename, code.co_firstlineno, 1)
