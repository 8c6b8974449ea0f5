"""A small Chrome DevTools Protocol client for the browser tests (stdlib only).

It starts a headless Chromium with ``--remote-debugging-pipe`` (the protocol
on file descriptors 3 and 4, NUL-separated JSON: no port, no websocket
library), opens a page, and records what the page did: console messages,
uncaught exceptions, log entries (CSP violations, failed loads) and every
network request. Every wait is bounded.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import struct
import subprocess
import tempfile
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")


def find_chromium() -> str | None:
    """$BUDGETLINT_CHROMIUM, else the first Chromium on PATH."""
    env = os.environ.get("BUDGETLINT_CHROMIUM")
    if env:
        return env if Path(env).exists() or shutil.which(env) else None
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


class CDPError(RuntimeError):
    pass


@dataclass
class PageRun:
    """What a page did while it loaded."""

    url: str
    console: list[dict] = field(default_factory=list)  # Runtime.consoleAPICalled params
    exceptions: list[dict] = field(default_factory=list)  # Runtime.exceptionThrown params
    log: list[dict] = field(default_factory=list)  # Log.entryAdded entries
    requests: list[str] = field(default_factory=list)  # every Network.requestWillBeSent URL

    def errors(self) -> list[str]:
        out = [f"console.{c.get('type')}: " + " ".join(str(a.get("value", a.get("description", "")))
                                                        for a in c.get("args", []))
               for c in self.console if c.get("type") in ("error", "assert")]
        out += [f"exception: {e.get('exceptionDetails', {}).get('text')} "
                f"{e.get('exceptionDetails', {}).get('exception', {}).get('description', '')}" for e in self.exceptions]
        out += [f"log {e.get('level')} ({e.get('source')}): {e.get('text')} {e.get('url', '')}"
                for e in self.log if e.get("level") == "error"]
        return out

    def foreign_requests(self) -> list[str]:
        """Requests other than the page itself (and inline data: URLs)."""
        return [u for u in self.requests if u != self.url and not u.startswith("data:")]


def _above_nine(fd: int) -> int:
    import fcntl

    high = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
    os.close(fd)
    return high


class Browser:
    """``with Browser(path) as b: run = b.open(url)``."""

    def __init__(self, executable: str, *, timeout: float = 60.0) -> None:
        self.executable = executable
        self.timeout = timeout
        self._id = 0
        self._buf = b""
        self._events: list[dict] = []

    def __enter__(self) -> Browser:
        self._profile = tempfile.mkdtemp(prefix="budgetlint-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        # the child's ends above 9, so that moving them onto 3 and 4 never closes one of them
        to_child_r, from_child_w = (_above_nine(fd) for fd in (to_child_r, from_child_w))
        args = [self.executable, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--metrics-recording-only",
                "--disable-default-apps", "--mute-audio", "--hide-scrollbars",
                f"--user-data-dir={self._profile}", "--remote-debugging-pipe", "about:blank"]
        # the protocol lives on fds 3 (commands in) and 4 (replies out) of the browser
        script = f'exec "$0" "$@" 3<&{to_child_r} 4>&{from_child_w} {to_child_r}<&- {from_child_w}>&-'
        self._proc = subprocess.Popen(["bash", "-c", script, *args], pass_fds=(to_child_r, from_child_w),
                                      stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.PIPE, start_new_session=True)
        os.close(to_child_r)
        os.close(from_child_w)
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.send("Browser.close", timeout=5)
        except Exception:  # noqa: BLE001 - closing anyway
            pass
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait(timeout=10)
        for fd in (self._to_child, self._from_child):
            try:
                os.close(fd)
            except OSError:
                pass
        if self._proc.stderr:
            self._proc.stderr.close()
        shutil.rmtree(self._profile, ignore_errors=True)

    # -- protocol -------------------------------------------------------------
    def _read_message(self, deadline: float) -> dict:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise CDPError("no answer from the browser in time")
            ready, _, _ = select.select([self._from_child], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._from_child, 1 << 20)
            if not chunk:
                raise CDPError("the browser closed the protocol pipe (did it start? try it with --headless by hand)")
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    def send(self, method: str, params: dict | None = None, session: str | None = None,
             timeout: float | None = None) -> dict:
        self._id += 1
        msg: dict[str, Any] = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise CDPError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self._events.append(reply)

    def _wait_for(self, method: str, session: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        seen = 0
        while True:
            for ev in self._events[seen:]:
                if ev.get("method") == method and ev.get("sessionId") == session:
                    return
            seen = len(self._events)
            self._events.append(self._read_message(deadline))

    # -- pages ----------------------------------------------------------------
    def open(self, url: str, *, width: int = 1200, height: int = 900, javascript: bool = True,
             settle: float = 0.3) -> tuple[PageRun, str]:
        """Load ``url`` in a new tab; (what it did, the session id to ask it more)."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(f"{domain}.enable", session=session)
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}, session=session)
        if not javascript:
            self.send("Emulation.setScriptExecutionDisabled", {"value": True}, session=session)
        start = len(self._events)
        self.send("Page.navigate", {"url": url}, session=session)
        self._wait_for("Page.loadEventFired", session, self.timeout)
        end = time.monotonic() + settle  # late console messages, late requests
        while time.monotonic() < end:
            try:
                self._events.append(self._read_message(end))
            except CDPError:
                break
        run = PageRun(url)
        for ev in self._events[start:]:
            if ev.get("sessionId") != session:
                continue
            p = ev.get("params", {})
            method = ev.get("method")
            if method == "Runtime.consoleAPICalled":
                run.console.append(p)
            elif method == "Runtime.exceptionThrown":
                run.exceptions.append(p)
            elif method == "Log.entryAdded":
                run.log.append(p.get("entry", {}))
            elif method == "Network.requestWillBeSent":
                run.requests.append(p.get("request", {}).get("url", ""))
        return run, session

    def evaluate(self, session: str, expression: str, *, await_promise: bool = False) -> Any:
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": await_promise}, session=session)
        if "exceptionDetails" in result:
            raise CDPError(f"evaluate: {result['exceptionDetails']}")
        return result.get("result", {}).get("value")

    def screenshot(self, session: str, *, full_page: bool = False) -> bytes:
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            metrics = self.send("Page.getLayoutMetrics", session=session)
            size = metrics.get("cssContentSize") or metrics["contentSize"]
            params["clip"] = {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}
            params["captureBeyondViewport"] = True
        return base64.b64decode(self.send("Page.captureScreenshot", params, session=session)["data"])


# ---------------------------------------------------------------------------- PNG

def png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """(width, height, rows of RGB(A) bytes) of an 8-bit, non-interlaced RGB or
    RGBA PNG (what Chromium writes); ValueError otherwise."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    if header is None:
        raise ValueError("PNG without IHDR")
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace:
        raise ValueError(f"unsupported PNG (depth {depth}, colour type {colour}, interlace {interlace})")
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows: list[bytes] = []
    prev = bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 0xFF
            elif f == 2:
                line[i] = (line[i] + b) & 0xFF
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append(bytes(line))
        prev = line
    return width, height, rows


def colour_stats(data: bytes, step: int = 4) -> tuple[int, float]:
    """(distinct colours, share of pixels that are not the most common colour),
    sampling every ``step``-th pixel of every ``step``-th row."""
    width, height, rows = png_pixels(data)
    bpp = len(rows[0]) // width if rows else 3
    counts: dict[bytes, int] = {}
    for y in range(0, height, step):
        row = rows[y]
        for x in range(0, width, step):
            px = row[x * bpp:x * bpp + 3]
            counts[px] = counts.get(px, 0) + 1
    total = sum(counts.values())
    top = max(counts.values()) if counts else 0
    return len(counts), (1 - top / total) if total else 0.0


def main(argv: list[str] | None = None) -> int:
    """``python tests/browser/cdp.py PAGE.html OUT.png [--element ID] [--width W] [--height H]``:
    a screenshot of a page (or of one element, cut at H pixels) in headless Chromium."""
    import argparse

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("page")
    ap.add_argument("out")
    ap.add_argument("--element", help="the id of the element to capture (default: the viewport)")
    ap.add_argument("--width", type=int, default=1000)
    ap.add_argument("--height", type=int, default=900)
    args = ap.parse_args(argv)
    exe = find_chromium()
    if exe is None:
        ap.error("no Chromium found: bash tests/browser/setup_browser.sh")
    with Browser(exe) as b:
        run, session = b.open(Path(args.page).resolve().as_uri(), width=args.width, height=args.height)
        for problem in run.errors() + [f"request: {u}" for u in run.foreign_requests()]:
            print(problem)
        params: dict[str, Any] = {"format": "png"}
        if args.element:
            box = b.evaluate(session, f"(function () {{ var r = document.getElementById({json.dumps(args.element)})"
                                      ".getBoundingClientRect(); return [r.left + window.scrollX, "
                                      "r.top + window.scrollY, r.width, r.height]; })()")
            params["clip"] = {"x": box[0], "y": box[1], "width": box[2], "height": min(box[3], args.height),
                              "scale": 1}
            params["captureBeyondViewport"] = True
        png = base64.b64decode(b.send("Page.captureScreenshot", params, session=session)["data"])
    Path(args.out).write_bytes(png)
    colours, ink = colour_stats(png)
    print(f"{args.out}: {len(png)} bytes, {colours} colours, {ink:.0%} ink")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
