"""Shared pytest setup: hypothesis profiles (a derandomized `ci` default, a large `fuzz`)."""

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=60,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "fuzz",
    max_examples=5000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# Check mode for the whole session: every `write_text` printed by the pure-Python pretty
# printer is also printed through MLIR, and any difference fails the test that wrote it.
from shardwise.io import mlir as _mlir  # noqa: E402

_mlir.CHECK_PRETTY = True
