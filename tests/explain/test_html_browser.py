"""The HTML report's program graph in a real headless browser (Debian's chromium), driven over
the DevTools protocol on a pipe (``--remote-debugging-pipe``: JSON messages, NUL-terminated,
on fds 3 and 4; no network, no extra package): no JavaScript error, one node per op of the
module, a click on an op shows its explanation, a group expands and collapses, a screenshot
has content.

CI installs chromium (.ci/run); the tests skip only where no chromium binary exists.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import zlib
from pathlib import Path
from urllib.parse import quote

import pytest

from shardwise.explain.html import render_html
from shardwise.explain.report import build_report
from shardwise.io.mlir import load_text
from shardwise.passes import run_pass

DATA = Path(__file__).parents[1] / "models" / "data"
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
    "--remote-debugging-pipe",
]


class Browser:
    """One headless chromium and one page, spoken to over the DevTools pipe."""

    def __init__(self, profile: Path, width: int = 1200, height: int = 900) -> None:
        to_child, self._out = os.pipe()  # we write commands to fd 3 of the child
        self._in, from_child = os.pipe()  # it writes answers and events to fd 4

        def fds() -> None:  # copies first: dup2 onto itself would keep the fd close-on-exec
            read, write = os.dup(to_child), os.dup(from_child)
            os.dup2(read, 3)
            os.dup2(write, 4)

        self.proc = subprocess.Popen(
            [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}"],
            close_fds=False,  # the child closes other fds after `fds`; Python's are CLOEXEC
            preexec_fn=fds,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_child)
        os.close(from_child)
        self._buffer = b""
        self._id = 0
        self.events: list[dict] = []
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)[
            "sessionId"
        ]
        for domain in ("Page", "Runtime"):
            self.call(f"{domain}.enable", session=True)
        self.call(
            "Emulation.setDeviceMetricsOverride",
            session=True,
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )

    def _read(self) -> dict:
        while b"\0" not in self._buffer:
            chunk = os.read(self._in, 1 << 20)
            assert chunk, "chromium closed the DevTools pipe"
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method: str, session: bool = False, **params) -> dict:
        self._id += 1
        message = {"id": self._id, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        os.write(self._out, json.dumps(message).encode() + b"\0")
        while True:
            answer = self._read()
            if answer.get("id") == self._id:
                assert "error" not in answer, answer
                return answer["result"]
            self.events.append(answer)

    def eval(self, expression: str):
        result = self.call(
            "Runtime.evaluate", session=True, expression=expression, returnByValue=True
        )
        assert "exceptionDetails" not in result, result
        return result["result"].get("value")

    def open(self, url: str) -> None:
        self.events.clear()
        self.call("Page.navigate", session=True, url=url)
        for _ in range(600):
            if self.eval("document.readyState==='complete'&&!!document.body") and self.eval(
                "document.body.dataset.ready==='1'||!!document.documentElement.dataset.jsErrors"
            ):
                return
            self.call("Runtime.evaluate", session=True, expression="0", awaitPromise=False)
        raise AssertionError("the page never finished")

    def click(self, selector: str) -> None:
        """A real mouse click (pressed and released) at the center of the element."""
        box = self.eval(
            f"(function(){{const el=document.querySelector({json.dumps(selector)});"
            "el.scrollIntoView({block:'center',inline:'center'});"
            "const r=el.getBoundingClientRect();return [r.x+r.width/2,r.y+r.height/2];})()"
        )
        for kind in ("mousePressed", "mouseReleased"):
            self.call(
                "Input.dispatchMouseEvent",
                session=True,
                type=kind,
                x=box[0],
                y=box[1],
                button="left",
                clickCount=1,
            )

    def screenshot(self) -> bytes:
        return base64.b64decode(self.call("Page.captureScreenshot", session=True)["data"])

    def errors(self) -> list[str]:
        """Uncaught exceptions and console.error messages so far."""
        out = []
        for e in self.events:
            if e.get("method") == "Runtime.exceptionThrown":
                out.append(e["params"]["exceptionDetails"].get("text", "exception"))
            if e.get("method") == "Runtime.consoleAPICalled" and e["params"]["type"] == "error":
                out.append(str(e["params"]["args"]))
        js = self.eval("document.documentElement.dataset.jsErrors||''")
        return out + ([js] if js else [])

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()
        os.close(self._in)
        os.close(self._out)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    b = Browser(tmp_path_factory.mktemp("profile"))
    yield b
    b.close()


def _page(tmp_path: Path, model: str) -> tuple[Path, dict, str]:
    text = (DATA / model).read_text()
    report = build_report(text, model)
    page = tmp_path / (model + ".html")
    page.write_text(render_html(report, model))
    return page, report.to_json(), text


def _module_ops(text: str, model: str) -> tuple[int, int]:
    """The ops of the propagated entry func outside regions (drawn before any group opens),
    and all ops the graph can show: none of the terminators, of each func once."""
    module = load_text(text, model)
    run_pass(module, "sdy-propagation-pipeline")
    main = next(f for f in module.funcs if module.symbol_name(f) == "main")
    # Each sdy.reshard becomes the collectives marked on an edge (or nothing, if a no-op).
    top = [op for op in main.regions[0].entry.ops if op.name not in ("func.return", "sdy.reshard")]
    every = [
        op
        for func in module.funcs
        for op in func.walk()
        if op is not func
        and op.name not in ("func.return", "stablehlo.return", "sdy.reshard")
        and _shown_region(op)
    ]
    return len(top), len(every)


def _shown_region(op) -> bool:
    """Ops in a reduce's (or sort's...) scalar body are details of their op, not drawn."""
    parent = op.parent.parent_op if op.parent is not None else None
    while parent is not None and parent.name != "func.func":
        if parent.name not in ("stablehlo.while", "stablehlo.case"):
            return False
        parent = parent.parent.parent_op if parent.parent is not None else None
    return True


def test_the_graph_has_the_module_ops_and_a_click_explains_one(browser, tmp_path: Path) -> None:
    page, data, text = _page(tmp_path, "gpt_block.mlir")
    browser.open(page.as_uri())
    assert browser.errors() == []
    top, _ = _module_ops(text, "gpt_block.mlir")
    ops = browser.eval("document.querySelectorAll('#graph g.node.op').length")
    assert ops == top  # propagation's output, before the collectives: each op is one node
    args = browser.eval("document.querySelectorAll('#graph g.node.arg').length")
    assert args == 9
    # A click on a dot_general shows its explanation, under the user's names.
    value = next(v for v in data["values"] if v["op"].startswith("stablehlo.dot_general"))
    node = browser.eval(
        "(function(){const i=D.values.findIndex(function(v){return v[0]==="
        + json.dumps(value["name"])
        + "});return N.findIndex(function(n){return n[3].indexOf(i)>=0;});})()"
    )
    browser.click(f'#graph g.node[data-n="{node}"]')
    detail = browser.eval("document.getElementById('detail').textContent")
    assert detail == value["explanation"]
    assert browser.eval("document.querySelectorAll('#graph g.node.sel').length") == 1
    assert browser.eval("location.hash") == "#value=" + quote(value["name"], safe="")
    assert browser.errors() == []


def test_a_group_expands_and_collapses(browser, tmp_path: Path) -> None:
    page, data, text = _page(tmp_path, "while_loop.mlir")
    browser.open(page.as_uri())
    count = "document.querySelectorAll('#graph g.node').length"
    closed = browser.eval(count)
    browser.click("#graph g.toggle")
    opened = browser.eval(count)
    assert opened > closed
    assert browser.eval("document.querySelector('#graph rect.sub')!==null")
    browser.click("#graph g.toggle")  # the open group's toggle is the first one drawn
    assert browser.eval(count) == closed
    # Everything open: every op of every graph is drawn (each callee once here).
    browser.click("#expand")
    _, every = _module_ops(text, "while_loop.mlir")
    assert browser.eval("document.querySelectorAll('#graph g.node.op').length") == every
    # A red edge label names the collective; a click on it shows it.
    labels = browser.eval("document.querySelectorAll('#graph text.c').length")
    assert labels >= 1
    browser.click("#graph text.c")
    detail = browser.eval("document.getElementById('detail').textContent")
    assert any(detail.startswith(c["kind"]) for c in data["collectives"]), detail
    assert browser.errors() == []


def test_the_fragment_opens_a_value_inside_a_group(browser, tmp_path: Path) -> None:
    page, data, _ = _page(tmp_path, "nested_calls.mlir")
    inner = next(v for v in data["values"] if v["op"].startswith("stablehlo.maximum"))
    browser.open(page.as_uri() + "#value=" + quote(inner["name"], safe=""))
    assert browser.eval("document.getElementById('detail').textContent") == inner["explanation"]
    assert browser.eval("document.querySelectorAll('#graph g.node.sel').length") == 1
    assert browser.eval("document.querySelectorAll('#graph rect.sub').length") >= 1
    assert browser.errors() == []


def _png_pixels(png: bytes) -> tuple[int, int, set[tuple[int, ...]]]:
    """Width, height and the distinct colors of an 8-bit RGB(A) PNG (zlib, no library)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", b""
    while pos < len(png):
        length = int.from_bytes(png[pos : pos + 4], "big")
        kind, body = png[pos + 4 : pos + 8], png[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height = int.from_bytes(header[:4], "big"), int.from_bytes(header[4:8], "big")
    depth, color_type = header[8], header[9]
    assert depth == 8 and color_type in (2, 6), (depth, color_type)
    channels = 3 if color_type == 2 else 4
    raw, stride = zlib.decompress(idat), width * channels
    colors: set[tuple[int, ...]] = set()
    previous = bytearray(stride)
    for y in range(height):
        f, line = (
            raw[y * (stride + 1)],
            bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)]),
        )
        for i in range(stride):  # undo the PNG filters (None, Sub, Up, Average, Paeth)
            a = line[i - channels] if i >= channels else 0
            b, c = previous[i], previous[i - channels] if i >= channels else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        if y % 4 == 0:
            colors.update(tuple(line[i : i + 3]) for i in range(0, stride, channels * 2))
        previous = line
    return width, height, colors


def test_screenshot_shows_the_colored_graph(browser, tmp_path: Path) -> None:
    page, data, _ = _page(tmp_path, "gpt_block.mlir")
    browser.open(page.as_uri())
    width, height, colors = _png_pixels(browser.screenshot())
    assert (width, height) == (1200, 900)
    # The sharding colors of the legend are painted (nodes), and the collective red.
    legend = {
        tuple(int(c[i : i + 2], 16) for i in (1, 3, 5))
        for _, c, _ in build_report((DATA / "gpt_block.mlir").read_text(), "x").graph["colors"]
        if c.startswith("#")
    }
    assert len(legend & colors) >= 3, (legend, len(colors))
    assert len(colors) > 50  # text, edges, boxes: not a blank page


def test_the_check_sees_a_script_error(browser, tmp_path: Path) -> None:
    """The checks above can fail: a page whose script throws is caught."""
    page, _, _ = _page(tmp_path, "cond.mlir")
    broken = page.read_text().replace("document.body.dataset.ready='1';", "undefinedFunction();")
    page.write_text(broken)
    browser.open(page.as_uri())
    assert any("undefinedFunction" in e or "Uncaught" in e for e in browser.errors())
