"""Check a partitioned (per-device) program against its global program by running both.

The executor: it runs XLA (jaxlib) in a child process with simulated CPU devices, so this
package imports jax only there; ``import shardwise.check`` stays light. See docs/check.md.
"""

from shardwise.check.checker import CheckResult, ResultCheck, check
from shardwise.check.localize import Divergence, NearbyOp
from shardwise.check.values import Difference

__all__ = ["check", "CheckResult", "ResultCheck", "Divergence", "NearbyOp", "Difference"]
