"""Headless Chromium driven over the DevTools protocol on a pipe (``--remote-debugging-
pipe``: commands on fd 3, answers on fd 4, each a JSON text ending in NUL), with the
standard library only: open a page, run script in it, click its buttons, choose a file
for an ``<input type=file>``, take screenshots. What the tests read back is the page's
DOM, as the organiser sees it.

Skipped (saying why) only when Chromium is not installed."""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from .browser import CHROMIUM


class BrowserError(AssertionError):
    """Chromium answered a command with an error, or never did."""


class Page:
    """One tab of a headless Chromium of its own (``with Page(tmp) as page: ...``)."""

    def __init__(self, profile: Path, size: tuple[int, int] = (1366, 900)) -> None:
        if CHROMIUM is None:
            pytest.skip("chromium not installed (apt-get install chromium; .ci/run does)")
        self.size = size
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()
        # Chromium reads fd 3 and writes fd 4: the child's ends moved above 10 first, so
        # that putting one on 3 cannot close the other
        high_r = fcntl.fcntl(to_chrome_r, fcntl.F_DUPFD, 10)
        high_w = fcntl.fcntl(from_chrome_w, fcntl.F_DUPFD, 10)
        os.close(to_chrome_r)
        os.close(from_chrome_w)

        def on_3_and_4() -> None:
            os.dup2(high_r, 3)
            os.dup2(high_w, 4)

        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--hide-scrollbars", "--lang=es-AR", f"--user-data-dir={profile}",
             "--remote-debugging-pipe", f"--window-size={size[0]},{size[1]}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=(3, 4),
            preexec_fn=on_3_and_4,
        )  # fmt: skip
        os.close(high_r)
        os.close(high_w)
        self._buffer = b""
        self._next = 0
        self.session = ""
        targets = self.send("Target.getTargets")["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.send(
            "Target.attachToTarget", targetId=page["targetId"], flatten=True, browser=True
        )["sessionId"]
        self.send("Page.enable")
        self.send("Runtime.enable")
        self.send("Emulation.setDeviceMetricsOverride", width=size[0], height=size[1],
                  deviceScaleFactor=1, mobile=False)  # fmt: skip

    def __enter__(self) -> Page:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with contextlib.suppress(BrowserError, OSError):
            self.send("Browser.close", browser=True)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        for fd in (self._to_chrome, self._from_chrome):
            with contextlib.suppress(OSError):
                os.close(fd)

    # ------------------------------------------------------------------ the protocol

    def send(self, method: str, browser: bool = False, **params: Any) -> dict[str, Any]:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params}
        if self.session and not browser:
            message["sessionId"] = self.session
        os.write(self._to_chrome, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            answer = self._read()
            if answer.get("id") == self._next:
                if "error" in answer:
                    raise BrowserError(f"{method}: {answer['error']}")
                result: dict[str, Any] = answer.get("result", {})
                return result
        raise BrowserError(f"{method}: no answer")

    def _read(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            chunk = os.read(self._from_chrome, 1 << 20)
            if not chunk:
                raise BrowserError("chromium closed its pipe")
            self._buffer += chunk
        text, _, self._buffer = self._buffer.partition(b"\0")
        found: dict[str, Any] = json.loads(text)
        return found

    # ------------------------------------------------------------------ what a test does

    def goto(self, url: str) -> None:
        self.send("Page.navigate", url=url)
        self.wait("document.readyState === 'complete' && location.href !== 'about:blank'")

    def js(self, expression: str) -> Any:
        """The value of ``expression`` in the page (promises awaited)."""
        done = self.send("Runtime.evaluate", expression=expression, awaitPromise=True,
                         returnByValue=True)  # fmt: skip
        if "exceptionDetails" in done:
            raise BrowserError(f"{expression}: {done['exceptionDetails']}")
        return done["result"].get("value")

    def wait(self, condition: str, timeout: float = 120.0) -> None:
        """Poll ``condition`` (a script expression) until it is true."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                value = self.js(f"!!({condition})")
            except BrowserError:
                value = None
            if value:
                return
            if time.monotonic() > deadline:
                shown = self.js("document.body ? document.body.innerText.slice(0, 3000) : ''")
                raise BrowserError(f"never true: {condition}\nthe page shows:\n{shown}")
            time.sleep(0.1)

    def click(self, element_id: str) -> None:
        """Click the element as a person does (a mouse press and release at its middle)."""
        box = self.js(
            f"(() => {{ const e = document.getElementById({json.dumps(element_id)});"
            "e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();"
            "return [r.x + r.width / 2, r.y + r.height / 2, !e.disabled]; })()"
        )
        assert box[2], f"#{element_id} is disabled"
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", type=kind, x=box[0], y=box[1],
                      button="left", clickCount=1)  # fmt: skip

    def fill(self, element_id: str, text: str) -> None:
        """Type ``text`` into a field (its old text replaced), as typing does."""
        self.js(f"document.getElementById({json.dumps(element_id)}).value = ''")
        self.js(f"document.getElementById({json.dumps(element_id)}).focus()")
        self.send("Input.insertText", text=text)
        self.js(f"document.getElementById({json.dumps(element_id)})"
                ".dispatchEvent(new Event('change', {bubbles: true}))")  # fmt: skip

    def choose(self, select_id: str, text: str) -> None:
        """Choose the option of a ``<select>`` whose text is ``text``."""
        ok = self.js(
            f"(() => {{ const s = document.getElementById({json.dumps(select_id)});"
            f"const o = [...s.options].find(o => o.text === {json.dumps(text)});"
            "if (!o) return false; s.value = o.value;"
            "s.dispatchEvent(new Event('change', {bubbles: true})); return true; })()"
        )
        assert ok, f"#{select_id} has no option {text!r}"

    def choose_value(self, select_id: str, value: str) -> None:
        """Choose the option of a ``<select>`` whose value is ``value``."""
        ok = self.js(
            f"(() => {{ const s = document.getElementById({json.dumps(select_id)});"
            f"if (![...s.options].some(o => o.value === {json.dumps(value)})) return false;"
            f"s.value = {json.dumps(value)};"
            "s.dispatchEvent(new Event('change', {bubbles: true})); return true; })()"
        )
        assert ok, f"#{select_id} has no option of value {value!r}"

    def choose_file(self, input_id: str, path: Path) -> None:
        node = self.send("Runtime.evaluate",
                         expression=f"document.getElementById({json.dumps(input_id)})")  # fmt: skip
        self.send("DOM.enable")
        self.send("DOM.setFileInputFiles", files=[str(path)],
                  objectId=node["result"]["objectId"])  # fmt: skip
        self.js(f"document.getElementById({json.dumps(input_id)})"
                ".dispatchEvent(new Event('change', {bubbles: true}))")  # fmt: skip

    def text(self, element_id: str) -> str:
        return str(self.js(f"document.getElementById({json.dumps(element_id)}).innerText"))

    def screenshot(self, out: Path, full: bool = False) -> Path:
        out.parent.mkdir(parents=True, exist_ok=True)
        params: dict[str, Any] = {"format": "png"}
        if full:
            height = int(self.js("document.documentElement.scrollHeight"))
            params["clip"] = {"x": 0, "y": 0, "width": self.size[0], "height": height,
                              "scale": 1}  # fmt: skip
            params["captureBeyondViewport"] = True
        data = self.send("Page.captureScreenshot", **params)["data"]
        out.write_bytes(base64.b64decode(data))
        assert out.stat().st_size > 5_000, f"{out} is nearly empty"
        return out
