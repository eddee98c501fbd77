"""A headless chromium driven over the DevTools protocol on a pipe (standard library only),
for the HTML report's browser test: load a page, read the DOM, record console errors,
exceptions, dialogs and network requests, take a screenshot."""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time
from types import TracebackType
from typing import Any

CHROMIUM = shutil.which("chromium")


class Browser:
    """One chromium process with one page attached; events are kept in :attr:`events`."""

    def __init__(self, timeout: float = 90.0) -> None:
        assert CHROMIUM is not None
        self.timeout = timeout
        self.events: list[dict[str, Any]] = []
        self._profile = tempfile.TemporaryDirectory(prefix="gi-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def pipes() -> None:  # chromium reads commands on fd 3 and writes replies on fd 4
            # via fds above 4 first, so neither end is overwritten by the other's dup2
            high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_child_r, from_child_w)]
            os.dup2(high[0], 3)
            os.dup2(high[1], 4)
            for fd in high:
                os.close(fd)

        self._proc = subprocess.Popen(
            [CHROMIUM, "--headless=new", "--disable-gpu", "--no-sandbox",
             "--remote-debugging-pipe", f"--user-data-dir={self._profile.name}",
             "--no-first-run", "--no-default-browser-check", "--disable-extensions",
             "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--hide-scrollbars", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=pipes, close_fds=False)  # the pipes' ends are not inheritable
        os.close(to_child_r)
        os.close(from_child_w)
        self._replies: queue.Queue[dict[str, Any]] = queue.Queue()
        self._next = 0
        threading.Thread(target=self._read, daemon=True).start()
        page = next(t for t in self.call("Target.getTargets")["targetInfos"]
                    if t["type"] == "page")
        self.session = self.call("Target.attachToTarget", targetId=page["targetId"],
                                 flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", session=True)

    def _read(self) -> None:
        buf = b""
        with os.fdopen(self._from_child, "rb", buffering=0) as f:
            while chunk := f.read(65536):
                buf += chunk
                while b"\0" in buf:
                    raw, buf = buf.split(b"\0", 1)
                    self._replies.put(json.loads(raw))

    def call(self, method: str, *, session: bool = False, **params: Any) -> dict[str, Any]:
        """Send one command; its result (events that arrive meanwhile are recorded)."""
        self._next += 1
        msg: dict[str, Any] = {"id": self._next, "method": method, "params": params}
        if session:
            msg["sessionId"] = self.session
        os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._replies.get(timeout=max(0.1, deadline - time.monotonic()))
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return dict(reply.get("result", {}))
            self.events.append(reply)

    def wait_for(self, method: str) -> dict[str, Any]:
        """The next event ``method`` (recording the others)."""
        deadline = time.monotonic() + self.timeout
        while True:
            event = self._replies.get(timeout=max(0.1, deadline - time.monotonic()))
            self.events.append(event)
            if event.get("method") == method:
                return event

    def open(self, url: str) -> None:
        """Load ``url`` afresh (through about:blank: a change of fragment alone would not
        load the page again)."""
        for target in ("about:blank", url):
            self.call("Page.navigate", session=True, url=target)
            self.wait_for("Page.loadEventFired")

    def js(self, expression: str) -> Any:
        """The value of ``expression`` evaluated in the page."""
        out = self.call("Runtime.evaluate", session=True, expression=expression,
                        returnByValue=True)
        if "exceptionDetails" in out:
            raise RuntimeError(f"{expression}: {out['exceptionDetails']}")
        return out["result"].get("value")

    def screenshot(self, width: int, height: int) -> bytes:
        self.call("Emulation.setDeviceMetricsOverride", session=True, width=width,
                  height=height, deviceScaleFactor=1, mobile=False)
        data = self.call("Page.captureScreenshot", session=True, format="png")["data"]
        return base64.b64decode(data)

    def problems(self) -> list[str]:
        """Console errors, uncaught exceptions, log errors and dialogs seen so far."""
        out = []
        for e in self.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.exceptionThrown":
                out.append(f"exception: {p['exceptionDetails']}")
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append(f"console.{p['type']}: {p.get('args')}")
            elif m == "Log.entryAdded" and p["entry"]["level"] == "error":
                out.append(f"log: {p['entry'].get('text')}")
            elif m == "Page.javascriptDialogOpening":
                out.append(f"dialog: {p.get('message')}")
        return out

    def requests(self) -> list[str]:
        """The URL of every request the page made."""
        return [e["params"]["request"]["url"] for e in self.events
                if e.get("method") == "Network.requestWillBeSent"]

    def close(self) -> None:
        with contextlib.suppress(RuntimeError, queue.Empty, OSError):
            self.call("Browser.close")
        try:
            self._proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        os.close(self._to_child)
        self._profile.cleanup()

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.close()
