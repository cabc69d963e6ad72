"""The progress bar (rich): drawn on a terminal or when forced, never into a pipe; the report
reports its phases to it."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from shardwise.explain.progress import Progress
from shardwise.explain.report import build_report

MODEL = Path(__file__).parents[1] / "models" / "data" / "mlp_fwd_tp.mlir"


class _Terminal(io.StringIO):
    """A stream that says it is a terminal (as stderr on a console does)."""

    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("stream", "force", "drawn"),
    [
        (_Terminal(), False, True),
        (io.StringIO(), True, True),
        (io.StringIO(), False, False),  # a pipe or a file: nothing
    ],
    ids=["terminal", "forced", "piped"],
)
def test_drawn_only_on_a_terminal_or_when_forced(stream, force: bool, drawn: bool) -> None:
    with Progress("work", force=force, stream=stream, width=10) as bar:
        for i in range(1, 4):
            bar.update(i, 3)
        bar.update(3, 3, label="work done")
    out = stream.getvalue()
    assert ("3/3" in out and "work done" in out and "━" in out) == drawn
    assert (out == "") == (not drawn)
    if drawn:
        assert out.endswith("\n\x1b[?25h")  # the line is left, the cursor shown again


class _Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[int, int, str | None]] = []

    def update(self, done: int, total: int, label: str | None = None) -> None:
        self.calls.append((done, total, label))


def test_the_report_reports_each_phase_and_each_value() -> None:
    sink = _Recorder()
    report = build_report(MODEL.read_text(), str(MODEL), progress=sink, explanations=False)
    labels = [label for _, _, label in sink.calls]
    phases = [label for i, label in enumerate(labels) if i == 0 or labels[i - 1] != label]
    assert phases == ["propagating", "explaining values", "inserting collectives"]
    values = [(d, t) for d, t, label in sink.calls if label == "explaining values"]
    n = len(report.values)
    assert values == [(i, n) for i in range(n)]
    assert sink.calls[-1] == (n, n, "inserting collectives")


@pytest.mark.parametrize("flag", [[], ["--progress"]], ids=["piped", "forced"])
def test_the_cli_draws_no_bar_into_a_pipe_unless_asked(flag: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "shardwise", "report", str(MODEL), "--json", "-", *flag],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert done.stdout.lstrip().startswith("{")  # the JSON alone on stdout, either way
    assert ("inserting collectives" in done.stderr) == bool(flag), done.stderr
    if not flag:
        assert done.stderr == ""
