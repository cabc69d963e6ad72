"""The code is lint-clean and formatted (ruff, configured in pyproject.toml): the style guide's
rules, checked where CI runs, not only on the author's machine."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "args", [["check", "src", "tests"], ["format", "--check", "src", "tests"]], ids=str
)
def test_ruff(args: list[str]) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "ruff", *args], cwd=ROOT, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-1000:]
