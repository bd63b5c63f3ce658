"""Headless Chromium (Debian's) driven over the DevTools protocol, for tests of weir's pages.

A Browser is one `chromium --headless` process with its own profile directory; `load(url)`
navigates its page, waits for the load event and records every request the page made, so a
test can read the DOM (`evaluate`), take a screenshot and check that nothing was fetched from
anywhere else.
"""

from __future__ import annotations

import base64
import itertools
import json
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

import websocket

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


class Browser:
    def __init__(self, profile_dir: Path):
        self.profile_dir = profile_dir
        self.profile_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = profile_dir / "chromium.log"
        self.process = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--no-default-browser-check", "--disable-extensions", "--disable-sync",
             "--disable-background-networking", "--disable-component-update",
             "--metrics-recording-only", "--window-size=1280,2000",
             "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
             f"--user-data-dir={profile_dir}", "about:blank"],
            stdout=open(self.log_path, "wb"), stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL)
        self.port = self._devtools_port()
        self.ws = websocket.create_connection(self._page_socket(), timeout=60,
                                              suppress_origin=True)
        self.ids = itertools.count(1)
        self.events: list[dict] = []
        self.call("Page.enable")
        self.call("Network.enable")
        self.call("Runtime.enable")

    def _devtools_port(self) -> int:
        # Chromium writes the port it bound (and the browser socket's path) to this file.
        active = self.profile_dir / "DevToolsActivePort"
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"chromium exited: {self.log_path.read_text()}")
            if active.exists():
                lines = active.read_text().split()
                if lines:
                    return int(lines[0])
            time.sleep(0.2)
        raise AssertionError(f"chromium did not open DevTools in 90 s: {self.log_path.read_text()}")

    def _page_socket(self) -> str:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/json/list",
                                        timeout=10) as r:
                pages = [t for t in json.load(r) if t.get("type") == "page"]
            if pages:
                return pages[0]["webSocketDebuggerUrl"]
            time.sleep(0.2)
        raise AssertionError("chromium has no page target")

    def call(self, method: str, **params) -> dict:
        """Sends one command and returns its result; events met on the way are kept."""
        ident = next(self.ids)
        self.ws.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == ident:
                if "error" in message:
                    raise AssertionError(f"{method}: {message['error']}")
                return message.get("result", {})
            if "method" in message:
                self.events.append(message)

    def wait_event(self, method: str, timeout_s: float = 60) -> dict:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for i, event in enumerate(self.events):
                if event["method"] == method:
                    return self.events.pop(i)
            self.ws.settimeout(max(0.1, deadline - time.monotonic()))
            message = json.loads(self.ws.recv())
            if "method" in message:
                self.events.append(message)
        raise AssertionError(f"no {method} within {timeout_s} s")

    def load(self, url: str) -> tuple[list[dict], list[dict]]:
        """Navigates to `url` and waits for its load event; returns the page's requests
        (Network.requestWillBeSent params) and responses (Network.responseReceived params)."""
        self.events.clear()
        result = self.call("Page.navigate", url=url)
        assert not result.get("errorText"), result
        self.wait_event("Page.loadEventFired")
        # Let anything the page might still start (an image, a font, a prefetch) show up.
        time.sleep(1.0)
        self.ws.settimeout(0.5)
        try:
            while True:
                message = json.loads(self.ws.recv())
                if "method" in message:
                    self.events.append(message)
        except websocket.WebSocketTimeoutException:
            pass
        self.ws.settimeout(60)
        requests = [e["params"] for e in self.events if e["method"] == "Network.requestWillBeSent"]
        responses = [e["params"] for e in self.events if e["method"] == "Network.responseReceived"]
        return requests, responses

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page (JSON-serialisable values)."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise AssertionError(f"page script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, path: Path) -> bytes:
        data = base64.b64decode(
            self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)["data"])
        path.write_bytes(data)
        return data

    def close(self) -> None:
        try:
            self.ws.close()
        finally:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
