"""HTTP peers that misbehave on purpose, run in the test's own process (threads, loopback).

- FaultProxy forwards requests to a real server and, for the requests a rule matches, fails in
  a chosen way: drop the connection after forwarding (the server applied the request, the
  client hears nothing), answer a status after forwarding (e.g. 502 from a gateway), or answer
  a status without forwarding (the server never saw it).
  It also records the headers of what it forwards, can add properties to the /v1/config
  answer (e.g. advertise idempotency), and can act as an OAuth2 token endpoint that issues
  short-lived tokens.
- HostileServer never behaves: it stalls (accepts, reads, never answers), sends an endless
  body, or promises a Content-Length and closes early.

Both are context managers that stop their threads and close their sockets on exit.
"""

from __future__ import annotations

import base64
import http.client
import json
import socket
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Rule:
    method: str
    path_suffix: str
    # "drop_after_forward" | "status_after_forward" | "status_without_forward" | "stall" (answer
    # nothing, forward nothing, until the proxy stops; then close the connection)
    action: str
    status: int = 502
    times: int = 1  # how many matching requests it applies to
    hits: list[str] = field(default_factory=list)
    # Called (in the proxy's thread) when the rule matches, before its action: e.g. a test that
    # kills the client at exactly this request.
    before_action: Callable[[], None] | None = None

    def matches(self, method: str, path: str) -> bool:
        return (
            len(self.hits) < self.times
            and method == self.method
            and urllib.parse.urlsplit(path).path.endswith(self.path_suffix)
        )


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class _Peer:
    def __init__(self, handler: type[BaseHTTPRequestHandler]):
        self.server = _Server(("127.0.0.1", 0), handler)
        self.server.peer = self  # type: ignore[attr-defined]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.stopping = threading.Event()

    @property
    def port(self) -> int:
        return self.server.server_address[1]

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stopping.set()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)


class FaultProxy(_Peer):
    """Forwards to `upstream` (http://host:port[/base]); `rules` decide which requests fail."""

    def __init__(self, upstream: str):
        super().__init__(_ProxyHandler)
        parts = urllib.parse.urlsplit(upstream)
        self.upstream_host = parts.hostname
        self.upstream_port = parts.port
        self.upstream_base = parts.path.rstrip("/")
        self.rules: list[Rule] = []
        self.forwarded: list[tuple[str, str, dict[str, str]]] = []  # method, path, headers
        self.config_overrides: dict[str, str] = {}  # added to /v1/config's "overrides"
        self.token_lifetime_s: float | None = None  # set: answer /v1/oauth/tokens here
        self.tokens_issued: list[str] = []
        self.token_requests: list[dict] = []  # each token request's form and Authorization
        self.lock = threading.Lock()
        # Set: the catalog is down. Every request is read and its connection closed unanswered
        # and unforwarded (the client sees a transport failure), until cleared.
        self.outage = threading.Event()

    def uri_for(self, upstream_path: str = "") -> str:
        return self.uri + upstream_path

    def add(self, rule: Rule) -> Rule:
        with self.lock:
            self.rules.append(rule)
        return rule


class _ProxyHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def _handle(self) -> None:
        proxy: FaultProxy = self.server.peer  # type: ignore[attr-defined]
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if proxy.outage.is_set():
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        with proxy.lock:
            rule = next((r for r in proxy.rules if r.matches(self.command, self.path)), None)
            if rule is not None:
                rule.hits.append(self.path)
        if rule is not None and rule.before_action is not None:
            rule.before_action()
        if rule is not None and rule.action == "stall":
            while not proxy.stopping.wait(0.1):
                pass
            self.close_connection = True
            return
        if rule is not None and rule.action == "status_without_forward":
            self._answer(rule.status, {"Content-Type": "application/json"}, b'{"error": {}}')
            return
        if proxy.token_lifetime_s is not None and self.path.endswith("/v1/oauth/tokens"):
            form = urllib.parse.parse_qs(body.decode())
            # The client id in the form, or in HTTP Basic authentication (RFC 6749 2.3.1, as
            # DuckDB's iceberg extension sends it).
            client = form.get("client_id", [""])[0]
            authorization = self.headers.get("Authorization", "")
            if not client and authorization.startswith("Basic "):
                client = base64.b64decode(authorization[6:]).decode().split(":", 1)[0]
            proxy.token_requests.append({"form": form, "authorization": authorization})
            with proxy.lock:
                token = f"token-{len(proxy.tokens_issued)}-{client}"
                proxy.tokens_issued.append(token)
            answer = {"access_token": token, "token_type": "bearer",
                      "issued_token_type": "urn:ietf:params:oauth:token-type:access_token",
                      "expires_in": proxy.token_lifetime_s}
            self._answer(200, {"Content-Type": "application/json"}, json.dumps(answer).encode())
            return
        upstream = http.client.HTTPConnection(proxy.upstream_host, proxy.upstream_port, timeout=60)
        # Identity bodies upstream, so that the proxy can read and rewrite them.
        headers = {
            k: v for k, v in self.headers.items() if k.lower() not in ("host", "accept-encoding")
        }
        upstream.request(self.command, proxy.upstream_base + self.path, body=body, headers=headers)
        response = upstream.getresponse()
        payload = response.read()
        upstream.close()
        with proxy.lock:
            proxy.forwarded.append((self.command, self.path, dict(self.headers.items())))
        if proxy.config_overrides and urllib.parse.urlsplit(self.path).path.endswith("/v1/config"):
            config = json.loads(payload)
            config.setdefault("overrides", {}).update(proxy.config_overrides)
            payload = json.dumps(config).encode()
        if rule is not None and rule.action == "drop_after_forward":
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if rule is not None and rule.action == "status_after_forward":
            self._answer(rule.status, {"Content-Type": "text/html"}, b"<html>Bad Gateway</html>")
            return
        passed = {
            k: v
            for k, v in response.getheaders()
            if k.lower() not in ("content-length", "transfer-encoding", "connection")
        }
        self._answer(response.status, passed, payload)

    def _answer(self, status: int, headers: dict[str, str], payload: bytes) -> None:
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = do_HEAD = do_DELETE = _handle


class HostileServer(_Peer):
    """mode: "stall" | "endless_body" | "short_body"."""

    def __init__(self, mode: str):
        super().__init__(_HostileHandler)
        self.mode = mode
        self.requests = 0


class _HostileHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def _handle(self) -> None:
        peer: HostileServer = self.server.peer  # type: ignore[attr-defined]
        peer.requests += 1
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        if peer.mode == "stall":
            while not peer.stopping.wait(0.1):
                pass
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if peer.mode == "short_body":
            self.send_header("Content-Length", "100000")
            self.end_headers()
            self.wfile.write(b'{"defaults": {')
            self.close_connection = True
            return
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        chunk = b'{"x": "' + b"a" * 65536 + b'"},'
        try:
            self.wfile.write(b"1\r\n[\r\n")
            while not peer.stopping.is_set():
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                time.sleep(0.001)
        except OSError:  # the client gave up: what it should do
            pass
        self.close_connection = True

    do_GET = do_POST = do_HEAD = do_DELETE = _handle
