"""shardwise: sharding propagation for StableHLO, bit-compatible with OpenXLA Shardy."""

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
from shardwise.sharding import (
    DimensionSharding,
    ManualAxes,
    TensorSharding,
    TensorShardingPerValue,
)

__version__ = "0.1.0"

__all__ = [
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
