"""A real headless Chromium, driven over the DevTools protocol through a pipe (no extra package).

``chromium --remote-debugging-pipe`` reads protocol messages from its file descriptor 3 and writes
them to 4, each a JSON object ended by a NUL byte.  :class:`Browser` opens a page in a new target,
records console messages, exceptions, log entries and every URL the page requests, and evaluates
expressions in it.  Waits are bounded by a generous guard time-out (against a hang, not a timing
assertion).
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import time
from typing import Any

GUARD_S = 60


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def _as_3_and_4(commands: int, replies: int) -> None:
    """In the child: ``commands`` becomes descriptor 3 and ``replies`` 4 (via copies above both)."""
    a = fcntl.fcntl(commands, fcntl.F_DUPFD, 10)
    b = fcntl.fcntl(replies, fcntl.F_DUPFD, 10)
    os.dup2(a, 3)
    os.dup2(b, 4)


class Browser:
    def __init__(self, exe: str, profile: str) -> None:
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        # the child sees our pipe ends as its descriptors 3 (commands in) and 4 (replies out)
        self.proc = subprocess.Popen(
            [
                exe,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                "--no-first-run",
                "--remote-debugging-pipe",
                f"--user-data-dir={profile}",
                "about:blank",
            ],
            pass_fds=(3, 4),
            preexec_fn=lambda: _as_3_and_4(to_child_r, from_child_w),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self._buf = b""
        self._id = 0
        self.events: list[dict[str, Any]] = []
        self.session: str | None = None

    # -- the protocol -------------------------------------------------------------------------
    def _send(self, method: str, params: dict | None = None, session: str | None = None) -> int:
        self._id += 1
        msg: dict[str, Any] = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        return self._id

    def _next(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_child], [], [], left)[0]:
                raise TimeoutError("no answer from chromium")
            chunk = os.read(self._from_child, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed its pipe")
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    def call(self, method: str, params: dict | None = None, *, page: bool = True) -> dict[str, Any]:
        msg_id = self._send(method, params, self.session if page else None)
        deadline = time.monotonic() + GUARD_S
        while True:
            msg = self._next(deadline)
            if msg.get("id") == msg_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self.events.append(msg)

    def wait_event(self, method: str) -> dict[str, Any]:
        deadline = time.monotonic() + GUARD_S
        for i, ev in enumerate(self.events):
            if ev.get("method") == method:
                return self.events.pop(i)
        while True:
            msg = self._next(deadline)
            if msg.get("method") == method:
                return msg
            self.events.append(msg)

    # -- a page -------------------------------------------------------------------------------
    def open(self, url: str, *, width: int, height: int, mobile: bool = False) -> None:
        target = self.call("Target.createTarget", {"url": "about:blank"}, page=False)["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True}, page=False)[
            "sessionId"
        ]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable")
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 2 if mobile else 1, "mobile": mobile},
        )
        self.events.clear()
        self.call("Page.navigate", {"url": url})
        self.wait_event("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        res = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in res:
            raise RuntimeError(f"{expression}: {res['exceptionDetails']}")
        return res["result"].get("value")

    def problems(self) -> list[str]:
        """Console errors and warnings, uncaught exceptions, error log entries, seen so far."""
        out = []
        for ev in self.events:
            m, p = ev.get("method"), ev.get("params", {})
            if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "warning", "assert"):
                out.append(f"console {p['type']}: {[a.get('value') for a in p.get('args', [])]}")
            elif m == "Runtime.exceptionThrown":
                out.append(f"exception: {p.get('exceptionDetails')}")
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") in ("error", "warning"):
                out.append(f"log {p['entry']['level']}: {p['entry'].get('text')}")
        return out

    def requested(self) -> list[str]:
        return [ev["params"]["request"]["url"] for ev in self.events if ev.get("method") == "Network.requestWillBeSent"]

    def screenshot(self, path: str, *, clip_height: float | None = None) -> None:
        """The page (its top ``clip_height`` CSS pixels when given) as a PNG."""
        params: dict[str, Any] = {"format": "png", "captureBeyondViewport": True}
        if clip_height is not None:
            width = self.evaluate("document.documentElement.clientWidth")
            params["clip"] = {"x": 0, "y": 0, "width": width, "height": clip_height, "scale": 1}
        data = self.call("Page.captureScreenshot", params)["data"]
        with open(path, "wb") as fh:
            fh.write(base64.b64decode(data))

    def close(self) -> None:
        with contextlib.suppress(RuntimeError, TimeoutError, OSError):  # it may be gone already
            self.call("Browser.close", page=False)
        try:
            self.proc.wait(timeout=GUARD_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_child)
        os.close(self._from_child)
