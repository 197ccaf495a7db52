"""Headless Chromium for end-to-end tests, driven over the Chrome DevTools Protocol with the standard library.

:func:`open_page` starts ``chromium --headless`` on a fresh profile with a random debugging port, attaches to a
new tab through a minimal WebSocket client (RFC 6455: masked client frames, unmasked server frames,
fragmentation, ping), loads a URL and returns a :class:`Page` with every console message, uncaught exception
and browser log entry (failed resource loads, CSP violations, ...) seen so far. ``evaluate`` runs JavaScript;
``screenshot`` writes a PNG; ``set_viewport`` emulates a phone.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-quic",
         "--no-first-run", "--disable-component-update", "--disable-sync", "--remote-debugging-port=0",
         "--remote-allow-origins=*"]


def chromium_binary() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


class WebSocket:
    """Just enough of a WebSocket client for the DevTools protocol (text frames, no extensions)."""

    def __init__(self, url: str, timeout: float = 30.0) -> None:
        parsed = urlparse(url)
        self.sock = socket.create_connection((parsed.hostname, parsed.port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        request = (f"GET {parsed.path} HTTP/1.1\r\nHost: {parsed.hostname}:{parsed.port}\r\nUpgrade: websocket\r\n"
                   f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n")
        self.sock.sendall(request.encode())
        response = b""
        while b"\r\n\r\n" not in response:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise ConnectionError("DevTools closed the connection during the handshake")
            response += chunk
        head, self.buffer = response.split(b"\r\n\r\n", 1)
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise ConnectionError(f"WebSocket handshake refused: {head[:200]!r}")

    def _exact(self, n: int) -> bytes:
        while len(self.buffer) < n:
            chunk = self.sock.recv(max(65536, n - len(self.buffer)))
            if not chunk:
                raise ConnectionError("DevTools closed the connection")
            self.buffer += chunk
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        return out

    def _send_frame(self, opcode: int, payload: bytes) -> None:
        header = bytes([0x80 | opcode])
        n = len(payload)
        if n < 126:
            header += bytes([0x80 | n])
        elif n < 1 << 16:
            header += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            header += bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(header + mask + masked)

    def send(self, text: str) -> None:
        self._send_frame(0x1, text.encode())

    def recv(self) -> str:
        message = b""
        while True:
            first, second = self._exact(2)
            opcode, n = first & 0x0F, second & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._exact(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._exact(8))[0]
            mask = self._exact(4) if second & 0x80 else None
            payload = self._exact(n)
            if mask:
                payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            if opcode == 0x9:
                self._send_frame(0xA, payload)
                continue
            if opcode == 0x8:
                raise ConnectionError("DevTools closed the WebSocket")
            message += payload
            if first & 0x80:
                return message.decode()

    def close(self) -> None:
        self.sock.close()


@dataclass
class Page:
    """One tab attached over a flat DevTools session."""

    ws: WebSocket
    session: str
    events: list[dict[str, Any]] = field(default_factory=list)
    next_id: int = 100

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params, "sessionId": self.session}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            if "method" in message:
                self.events.append(message)

    def wait_for(self, event: str, timeout: float = 30.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        seen = len(self.events)
        while time.monotonic() < deadline:
            for message in self.events[seen:]:
                if message.get("method") == event:
                    return message
            seen = len(self.events)
            self.events.append(json.loads(self.ws.recv()))
        raise TimeoutError(f"no {event} within {timeout} s")

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def settle(self) -> None:
        """Process pending events (a round trip that flushes what the page logged so far)."""
        self.evaluate("1")

    def problems(self) -> list[str]:
        """Console errors and warnings, uncaught exceptions and browser log entries of level warning/error."""
        out = []
        for e in self.events:
            params = e.get("params", {})
            if e.get("method") == "Runtime.consoleAPICalled" and params.get("type") in ("error", "warning", "assert"):
                out.append(f"console.{params['type']}: {[a.get('value') for a in params.get('args', [])]}")
            elif e.get("method") == "Runtime.exceptionThrown":
                out.append(f"exception: {params['exceptionDetails'].get('text')}")
            elif e.get("method") == "Log.entryAdded" and params["entry"]["level"] in ("warning", "error"):
                entry = params["entry"]
                out.append(f"{entry['source']} {entry['level']}: {entry['text']} {entry.get('url', '')}")
        return out

    def set_viewport(self, width: int, height: int, *, mobile: bool = False) -> None:
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height,
                  deviceScaleFactor=2 if mobile else 1, mobile=mobile)

    def screenshot(self, path: Path, *, full_page: bool = True) -> None:
        params: dict[str, Any] = {"format": "png", "captureBeyondViewport": full_page}
        if full_page:
            size = self.call("Page.getLayoutMetrics")["cssContentSize"]
            params["clip"] = {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}
        data = self.call("Page.captureScreenshot", **params)["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))


@contextmanager
def open_page(url: str, *, binary: str, timeout: float = 60.0) -> Iterator[Page]:
    """Start Chromium, open ``url`` in a new tab with console, runtime and log events on, wait for its load
    event, and yield the page; the browser and its temporary profile are removed afterwards."""
    profile = tempfile.mkdtemp(prefix="benchbox-chromium-")
    proc = subprocess.Popen([binary, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    ws = None
    try:
        endpoint = _devtools_endpoint(proc, timeout)
        ws = WebSocket(endpoint, timeout=timeout)
        ws.send(json.dumps({"id": 1, "method": "Target.createTarget", "params": {"url": "about:blank"}}))
        target = _reply(ws, 1)["targetId"]
        ws.send(json.dumps({"id": 2, "method": "Target.attachToTarget", "params": {"targetId": target, "flatten": True}}))
        page = Page(ws, _reply(ws, 2)["sessionId"])
        for domain in ("Page", "Runtime", "Log"):
            page.call(f"{domain}.enable")
        page.call("Page.navigate", url=url)
        page.wait_for("Page.loadEventFired", timeout)
        page.settle()
        yield page
    finally:
        if ws:
            ws.close()
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(profile, ignore_errors=True)


def _devtools_endpoint(proc: subprocess.Popen, timeout: float) -> str:
    """Read ``DevTools listening on ws://...`` from Chromium's stderr."""
    deadline = time.monotonic() + timeout
    lines = []
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        lines.append(line)
        found = re.search(r"DevTools listening on (ws://\S+)", line)
        if found:
            # keep draining stderr so that Chromium never blocks on a full pipe
            threading.Thread(target=proc.stderr.read, daemon=True).start()
            return found.group(1)
    raise RuntimeError("Chromium did not start its DevTools endpoint:\n" + "".join(lines[-20:]))


def _reply(ws: WebSocket, request_id: int) -> dict[str, Any]:
    while True:
        message = json.loads(ws.recv())
        if message.get("id") == request_id:
            if "error" in message:
                raise RuntimeError(str(message["error"]))
            return message["result"]
