"""Shardy's propagation pipeline as explicit pass lists, for running the reference part-way.

Steps of ``prop/propagation_pipeline.cc`` (jaxlib 0.10.2), so a differential test can stop the
reference where the code under test starts or ends.
"""

from __future__ import annotations

__all__ = ["IMPORT_HALF_PASSES", "USER_PRIORITY_PROPAGATE", "PROPAGATE_PASSES"]

# Steps 1-3: import (default mode, without dedup of functions).
IMPORT_HALF_PASSES = (
    "sdy-import-pipeline",
    "sdy-flatten-call-graph",
    "symbol-dce",
    "sdy-import-func-calls",
    "symbol-dce",
    "sdy-apply-sharding-constraints",
    "sdy-sharding-group-import",
    "sdy-pre-order-funcs",
)
# Step 4: propagation, keeping the sharding rules for the export steps.
USER_PRIORITY_PROPAGATE = "sdy-user-priority-propagate{keep-sharding-rules=true}"
# Steps 1-4: up to and including propagation (default mode).
PROPAGATE_PASSES = (*IMPORT_HALF_PASSES, USER_PRIORITY_PROPAGATE)
