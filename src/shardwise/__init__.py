"""shardwise: sharding propagation for StableHLO, bit-compatible with OpenXLA Shardy."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# `plan` stays an eager import: the subpackage of the same name, once imported (``shardwise
# plan``, `shardwise.plan.result`), would otherwise shadow the function; its ``__init__`` is
# light.
from shardwise.plan import plan

if TYPE_CHECKING:
    from shardwise.api import (
        ShardedModule,
        from_jax,
        from_partition_spec,
        from_placements,
        load,
        mesh_from_jax,
        parse_sharding,
        to_named_sharding,
        to_partition_spec,
        to_placements,
    )
    from shardwise.axis import AxisRef, SubAxisInfo
    from shardwise.errors import (
        Location,
        ParseError,
        PropagationError,
        RuleError,
        ShardwiseError,
        VerifyError,
    )
    from shardwise.mesh import Mesh, MeshAxis
    from shardwise.rules.custom import register_rule, sharding_rule
    from shardwise.sharding import (
        DimensionSharding,
        ManualAxes,
        TensorSharding,
        TensorShardingPerValue,
    )

__version__ = "0.1.0"

__all__ = [
    "load",
    "parse_sharding",
    "from_jax",
    "plan",
    "ShardedModule",
    "sharding_rule",
    "register_rule",
    "to_partition_spec",
    "from_partition_spec",
    "to_named_sharding",
    "mesh_from_jax",
    "to_placements",
    "from_placements",
    "AxisRef",
    "SubAxisInfo",
    "Mesh",
    "MeshAxis",
    "DimensionSharding",
    "TensorSharding",
    "TensorShardingPerValue",
    "ManualAxes",
    "Location",
    "ShardwiseError",
    "ParseError",
    "VerifyError",
    "RuleError",
    "PropagationError",
]

# The module of every other public name, imported on first access (PEP 562): the command line
# (``python -m shardwise propagate``) loads only what its command needs, not the Python API.
_HOMES = {
    "ShardedModule": "shardwise.api",
    "from_jax": "shardwise.api",
    "from_partition_spec": "shardwise.api",
    "from_placements": "shardwise.api",
    "load": "shardwise.api",
    "mesh_from_jax": "shardwise.api",
    "parse_sharding": "shardwise.api",
    "to_named_sharding": "shardwise.api",
    "to_partition_spec": "shardwise.api",
    "to_placements": "shardwise.api",
    "AxisRef": "shardwise.axis",
    "SubAxisInfo": "shardwise.axis",
    "Location": "shardwise.errors",
    "ParseError": "shardwise.errors",
    "PropagationError": "shardwise.errors",
    "RuleError": "shardwise.errors",
    "ShardwiseError": "shardwise.errors",
    "VerifyError": "shardwise.errors",
    "Mesh": "shardwise.mesh",
    "MeshAxis": "shardwise.mesh",
    "register_rule": "shardwise.rules.custom",
    "sharding_rule": "shardwise.rules.custom",
    "DimensionSharding": "shardwise.sharding",
    "ManualAxes": "shardwise.sharding",
    "TensorSharding": "shardwise.sharding",
    "TensorShardingPerValue": "shardwise.sharding",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is not None:
        value = getattr(importlib.import_module(home), name)
        globals()[name] = value  # found directly from now on
        return value
    # A submodule (``shardwise.ir`` after ``import shardwise``), as when the eager imports of
    # the public names loaded it as a side effect.
    if not name.startswith("__"):
        try:
            return importlib.import_module(f"shardwise.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"shardwise.{name}":
                raise  # the submodule exists but imports something missing
    raise AttributeError(f"module 'shardwise' has no attribute '{name}'")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
