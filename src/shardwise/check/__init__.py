"""Check a partitioned (per-device) program against its global program by running both.

The executor: XLA (jaxlib) runs in a child process with simulated CPU devices, so this
package imports jax only there. The names below load on first use, so the command line
(which imports `shardwise.check.cli`) pays for numpy only when ``shardwise check`` runs.
See docs/check.md.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["check", "CheckResult", "ResultCheck", "Divergence", "NearbyOp", "Difference"]

_HOME = {
    "check": "shardwise.check.checker",
    "CheckResult": "shardwise.check.result",
    "ResultCheck": "shardwise.check.result",
    "Divergence": "shardwise.check.localize",
    "NearbyOp": "shardwise.check.localize",
    "Difference": "shardwise.check.values",
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'shardwise.check' has no attribute '{name}'")
    return getattr(importlib.import_module(home), name)
