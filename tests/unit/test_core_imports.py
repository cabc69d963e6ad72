"""The core never imports jax: only `shardwise.io` may (house rule, checked in a fresh process)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest

CORE = [
    "shardwise",
    "shardwise.axis",
    "shardwise.mesh",
    "shardwise.sharding",
    "shardwise.syntax",
    "shardwise.verify",
    "shardwise.ir",
    "shardwise.errors",
    "shardwise.rules",
    "shardwise.rules.registry",
    "shardwise.rules.populate",
    "shardwise.propagation",
    "shardwise.propagation.user_priority_propagation",
    "shardwise.passes",
    "shardwise.io.generic",
]
PRESENT = [m for m in CORE if importlib.util.find_spec(m) is not None]

_CHILD = """
import importlib, json, sys
for name in sys.argv[1:]:
    importlib.import_module(name)
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in ("jax", "jaxlib"))))
"""


@pytest.mark.parametrize("module", PRESENT)
def test_core_module_does_not_import_jax(module: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, module], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout) == [], f"{module} pulls in jax"


def test_all_core_modules_together_do_not_import_jax() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, *PRESENT], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout) == []
    assert "shardwise.ir" in PRESENT and "shardwise.io.generic" in PRESENT
