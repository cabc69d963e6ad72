"""Run the `shardwise` command in-process for tests: exit code, stdout, stderr."""

from __future__ import annotations

import pytest

from shardwise import cli


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = cli.main(argv)
    except SystemExit as e:  # argparse usage errors
        code = int(e.code or 0)
    out, err = capsys.readouterr()
    return code, out, err
