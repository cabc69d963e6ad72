"""The planner: which shardings to write (``shardwise plan``, `shardwise.plan`).

`space` finds the classes of dims propagation makes share a sharding, `search` chooses the
entry function's argument shardings (enumeration or a MILP, then exact evaluation by `cost`,
Shardy's own passes), `standard` derives the hand-written plans it must never lose to, and
`result` holds the answer. This module stays light: `import shardwise` loads it.
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["plan"]


def plan(
    fn_or_module: Any,
    *example_args: Any,
    mesh: Any = None,
    memory: str | int | None = None,
    params: Any = None,
    executor: Any = None,
    **from_jax_kwargs: Any,
) -> Any:
    """The plan for a JAX function (lowered with `example_args`, as `shardwise.from_jax`) or a
    module (a `ShardedModule`, MLIR text or a path), on `mesh`, within `memory` per device.

    Returns a `shardwise.plan.result.Plan`; planned from JAX, its ``in_shardings`` (a pytree
    like `example_args`: `NamedSharding` on a concrete `jax.sharding.Mesh`, else
    `PartitionSpec`) go straight into ``jax.jit(fn, in_shardings=...)``.
    """
    from shardwise.api import ShardedModule, from_jax, load
    from shardwise.plan.cost import CostParams
    from shardwise.plan.search import plan_module

    params = params or CostParams()
    if isinstance(fn_or_module, str | os.PathLike | ShardedModule):
        module = fn_or_module if isinstance(fn_or_module, ShardedModule) else load(fn_or_module)
        return plan_module(module, mesh, memory, params, executor)
    module = from_jax(fn_or_module, *example_args, mesh=mesh, **from_jax_kwargs)
    result = plan_module(module, _mesh_spec(mesh), memory, params, executor)
    result.in_shardings = _jax_in_shardings(result, example_args, mesh)
    return result


def _mesh_spec(mesh: Any) -> Any:
    """What `plan_module` takes for a JAX mesh (ours), else the value as given."""
    if mesh is None or isinstance(mesh, str | dict):
        return mesh
    from shardwise.api import mesh_from_jax
    from shardwise.mesh import Mesh

    return mesh if isinstance(mesh, Mesh) else mesh_from_jax(mesh)


def _jax_in_shardings(result: Any, example_args: tuple[Any, ...], mesh: Any) -> Any:
    import jax
    from jax.sharding import NamedSharding, PartitionSpec

    from shardwise.api import to_partition_spec

    leaves, tree = jax.tree_util.tree_flatten(example_args)
    specs = [
        to_partition_spec(a.sharding) if a.sharding is not None else PartitionSpec()
        for a in result.args
    ]
    if len(specs) != len(leaves):  # jit dropped unused arguments: by position is wrong
        return {a.name: s for a, s in zip(result.args, specs, strict=True)}
    if isinstance(mesh, jax.sharding.Mesh):
        specs = [NamedSharding(mesh, s) for s in specs]
    return jax.tree_util.tree_unflatten(tree, specs)
