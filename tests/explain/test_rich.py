"""Terminal output with rich: only on a terminal, never with --plain or NO_COLOR, and never
imported by the core."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from shardwise.cli import main
from shardwise.explain import explain_text
from shardwise.explain.text import wants_rich

MODEL = Path(__file__).parents[1] / "models" / "data" / "mlp_fwd_tp.mlir"
ESC = "\x1b["


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class _Pipe(io.StringIO):
    def isatty(self) -> bool:
        return False


@pytest.mark.parametrize(
    ("stream", "plain", "no_color", "expected"),
    [
        (_Terminal(), False, "", True),
        (_Pipe(), False, "", False),
        (_Terminal(), True, "", False),
        (_Terminal(), False, "1", False),
        (object(), False, "", False),  # a stream without isatty
    ],
    ids=["terminal", "pipe", "plain", "no-color", "no-isatty"],
)
def test_wants_rich(monkeypatch, stream, plain: bool, no_color: str, expected: bool) -> None:
    monkeypatch.setenv("NO_COLOR", no_color)
    assert wants_rich(plain, stream) is expected


def _on_terminal(monkeypatch) -> _Terminal:
    """stdout becomes a terminal (set inside the test: pytest's capture resets sys.stdout
    between a fixture's setup and the test)."""
    out = _Terminal()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.setenv("COLUMNS", "200")
    return out


def test_explain_on_a_terminal_draws_tables(monkeypatch) -> None:
    terminal = _on_terminal(monkeypatch)
    assert main(["explain", str(MODEL), "--value", "main:arg0"]) == 0
    out = terminal.getvalue()
    assert ESC in out  # colours
    assert "┏" in out and "stopped at" in out  # the table of stopped axes
    assert "└── " in out and "user annotation/constraint on main:arg0" in out  # the chain tree
    assert "not-in-tensor" in out  # the reason kind, coloured


@pytest.mark.parametrize("how", ["--plain", "NO_COLOR"])
def test_plain_text_on_request(monkeypatch, how: str) -> None:
    terminal = _on_terminal(monkeypatch)
    args = ["explain", str(MODEL), "--value", "main:arg0"]
    if how == "--plain":
        args.append("--plain")
    else:
        monkeypatch.setenv("NO_COLOR", "1")
    assert main(args) == 0
    expected = explain_text(MODEL.read_text(), "main:arg0", str(MODEL))
    assert terminal.getvalue() == expected + "\n"


def test_report_on_a_terminal_draws_tables(monkeypatch) -> None:
    terminal = _on_terminal(monkeypatch)
    assert main(["report", str(MODEL)]) == 0
    out = terminal.getvalue()
    assert ESC in out and "┏" in out
    assert "1 collectives" in out and "all_reduce" in out and "totals per mesh axis" in out


def test_the_commands_do_not_import_rich() -> None:
    code = (
        "import sys, shardwise, shardwise.cli, shardwise.explain.cli, "
        "shardwise.explain.report_cli; assert 'rich' not in sys.modules, 'rich imported'"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
