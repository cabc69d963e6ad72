"""shardwise: sharding propagation for StableHLO, bit-compatible with OpenXLA Shardy."""

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
from shardwise.plan import plan
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
