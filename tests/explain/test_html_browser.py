"""The HTML report in a real headless browser (Debian's chromium): no JavaScript error, the
page's script runs (summary filled, a value opened from the URL fragment), a screenshot.

CI installs chromium (.ci/run); the tests skip only where no chromium binary exists.
"""

from __future__ import annotations

import html
import re
import shutil
import struct
import subprocess
from pathlib import Path
from urllib.parse import quote

import pytest

from shardwise.explain.html import render_html
from shardwise.explain.report import build_report

MODEL = Path(__file__).parents[1] / "models" / "data" / "gpt_block.mlir"
CHROMIUM = next(
    (p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None
)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium binary (apt-get install chromium; CI installs it)"
)
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",  # containers often have a small /dev/shm
    "--enable-logging=stderr",
    "--v=0",
]
# Every console message (console.error, an uncaught exception) is logged as
# `...:INFO:CONSOLE:<line>] "<message>", source: <url> (<line>)`.
_CONSOLE = re.compile(r":CONSOLE[:(\d)]*\] (.*)")


def _chromium(tmp_path: Path, url: str, *extra: str) -> tuple[str, list[str]]:
    """Run headless chromium on `url`: (stdout, the console messages on stderr)."""
    profile = tmp_path / "profile"
    done = subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *extra, url],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, _CONSOLE.findall(done.stderr)


@pytest.fixture(scope="module")
def report_page(tmp_path_factory) -> tuple[Path, dict]:
    report = build_report(MODEL.read_text(), str(MODEL))
    page = tmp_path_factory.mktemp("report") / "gpt_block.html"
    page.write_text(render_html(report, MODEL.name))
    return page, report.to_json()


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])  # the IHDR chunk: width, height


def test_the_page_runs_without_errors_and_opens_the_value_in_the_fragment(
    report_page, tmp_path: Path
) -> None:
    page, data = report_page
    value = next(v for v in data["values"] if v["op"].startswith("stablehlo.dot_general"))
    url = page.as_uri() + "#value=" + quote(value["name"], safe="")
    dom, console = _chromium(tmp_path, url, "--dump-dom")
    assert console == []
    assert "data-js-errors" not in dom
    assert re.search(r'<body[^>]*data-ready="1"', dom), "the page's script did not finish"
    summary = f"{len(data['values'])} values, {len(data['collectives'])} collectives"
    assert f'<p id="summary">{summary}</p>' in dom
    detail = dom.split('id="detail">', 1)[1].split("</div>", 1)[0]
    assert html.unescape(detail) == value["explanation"]
    index = data["values"].index(value)
    # The table row and the graph box of the value are marked.
    assert len(re.findall(rf'class="value selected" data-index="{index}"', dom)) == 2


def test_screenshot(report_page, tmp_path: Path) -> None:
    page, data = report_page
    shot = tmp_path / "report.png"
    url = page.as_uri() + "#value=" + quote(data["values"][0]["name"], safe="")
    _, console = _chromium(tmp_path, url, "--window-size=1200,1400", f"--screenshot={shot}")
    assert console == []
    png = shot.read_bytes()
    assert _png_size(png) == (1200, 1400)
    # A blank page compresses to a few kB; the report (text, colored rows, arcs) does not.
    assert len(png) > 100_000, len(png)


def test_the_check_sees_a_script_error(report_page, tmp_path: Path) -> None:
    """The checks above can fail: a page whose script throws is caught both ways."""
    broken = (
        report_page[0]
        .read_text()
        .replace("document.body.dataset.ready='1';", "undefinedFunction();")
    )
    page = tmp_path / "broken.html"
    page.write_text(broken)
    dom, console = _chromium(tmp_path, page.as_uri(), "--dump-dom")
    assert any("undefinedFunction is not defined" in line for line in console), console
    assert "data-js-errors=" in dom and 'data-ready="1"' not in dom
