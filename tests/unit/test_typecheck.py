"""The package type-checks: ``mypy src/shardwise`` with mypy's default settings reports nothing.

mypy runs in a subprocess from the repository root, with no config file and no flags but a
cache directory under pytest's cache (``.pytest_cache``, ignored by git), so a second run only
re-checks the files that changed.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest

from shardwise.propagation.options import PropagationOptions, _Overrides

ROOT = Path(__file__).resolve().parents[2]


def _cache_dir(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    cache = getattr(request.config, "cache", None)  # None under ``-p no:cacheprovider``
    return cache.mkdir("mypy") if cache is not None else tmp_path / "mypy"


def test_mypy_reports_no_errors(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    command = [sys.executable, "-m", "mypy", "--cache-dir", str(_cache_dir(request, tmp_path))]
    done = subprocess.run(
        [*command, "src/shardwise"], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, f"mypy src/shardwise failed:\n{done.stdout}{done.stderr}"
    assert done.stdout.startswith("Success: no issues found"), done.stdout


def test_with_options_overrides_name_every_option() -> None:
    """`PropagationOptions.with_options` is typed by `_Overrides`: the same names, optional."""
    assert set(_Overrides.__optional_keys__) == {f.name for f in fields(PropagationOptions)}
    assert not _Overrides.__required_keys__
