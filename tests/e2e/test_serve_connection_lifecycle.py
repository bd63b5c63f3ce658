"""weir serve's connection lifecycle (issue 10): finished connections leave no thread, stack or
descriptor behind (proof 4), and the startup packet is capped at 10,000 bytes as in
PostgreSQL."""

from __future__ import annotations

import os
import signal
import socket
import struct
import time

from tests.e2e.test_serve import PASSWORD, duckdb_lake, start_serve
from tests.e2e.weir_run import wait_for


def startup_packet(parameters: dict[str, str]) -> bytes:
    body = struct.pack("!i", 196608)
    for name, value in parameters.items():
        body += name.encode() + b"\0" + value.encode() + b"\0"
    body += b"\0"
    return struct.pack("!i", len(body) + 4) + body


def answer_to(port: int, packet: bytes) -> bytes:
    """Everything the server sends to a plaintext `packet` before it closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(packet)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


def error_fields(message: bytes) -> dict[str, str]:
    """The fields of one ErrorResponse ('E', length, then code-byte/text pairs)."""
    assert message[:1] == b"E", message
    fields = {}
    for part in message[5:].split(b"\0"):
        if part:
            fields[part[:1].decode()] = part[1:].decode()
    return fields


class Footprint:
    """What a process holds: threads, descriptors and memory mappings (each thread stack that is
    never joined stays mapped after the thread ends)."""

    def __init__(self, pid: int):
        self.threads = len(os.listdir(f"/proc/{pid}/task"))
        self.fds = len(os.listdir(f"/proc/{pid}/fd"))
        with open(f"/proc/{pid}/maps") as maps:
            self.mappings = sum(1 for _ in maps)

    def __repr__(self) -> str:
        return f"threads={self.threads} fds={self.fds} mappings={self.mappings}"


def test_10000_sequential_connections_leave_no_thread_stack_or_descriptor_behind(build_dir,
                                                                                 tmp_path):
    """10,000 plaintext startups (each refused with 28000: the fast path, a thread per
    connection all the same) and 200 full TLS + SCRAM psycopg sessions, one after another."""
    import psycopg

    lake = duckdb_lake(tmp_path, "CREATE TABLE t AS SELECT range AS x FROM range(10)")
    port, process = start_serve(build_dir, lake, tmp_path)
    dsn = f"host=127.0.0.1 port={port} user=weir dbname=lake sslmode=require password='{PASSWORD}'"
    try:
        for _ in range(3):  # warm up: DuckDB's, OpenSSL's and glibc's one-time allocations
            with psycopg.connect(dsn, autocommit=True) as conn:
                assert conn.execute("SELECT sum(x) FROM t").fetchone() == (45,)
            answer_to(port, startup_packet({"user": "weir"}))
        def steady() -> bool:
            first = Footprint(process.pid)
            time.sleep(0.3)
            second = Footprint(process.pid)
            return (first.threads, first.fds) == (second.threads, second.fds)

        wait_for(steady, 10, "a steady thread and descriptor count", poll_s=0)
        before = Footprint(process.pid)
        refusal = startup_packet({"user": "weir", "database": "lake"})
        for i in range(10_000):
            answer = answer_to(port, refusal)
            assert error_fields(answer)["C"] == "28000", (i, answer)
        for i in range(200):
            with psycopg.connect(dsn, autocommit=True) as conn:
                assert conn.execute("SELECT count(*) FROM t").fetchone() == (10,), i

        def settled() -> bool:
            now = Footprint(process.pid)
            # glibc keeps up to 40 MiB of joined stacks for reuse: a few mappings, never 10,000.
            return (now.threads == before.threads and now.fds == before.fds
                    and now.mappings <= before.mappings + 64)

        try:
            wait_for(settled, 10, "every connection's thread and socket to be gone", poll_s=0.1)
        except AssertionError as error:
            raise AssertionError(f"{error}: {before} before, {Footprint(process.pid)} after")
        assert process.poll() is None
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_the_startup_packet_is_capped_at_10000_bytes(build_dir, tmp_path):
    from tests.e2e.test_serve_hostile_peers import authenticate, tls_connect

    lake = duckdb_lake(tmp_path, "CREATE TABLE t AS SELECT 1 AS x")
    port, process = start_serve(build_dir, lake, tmp_path)
    try:
        # A declared body of 10,001 bytes is refused from its length word, without the body.
        refused = error_fields(answer_to(port, struct.pack("!ii", 4 + 10_001, 196608)))
        assert (refused["S"], refused["C"], refused["M"]) == (
            "FATAL", "08P01", "invalid length of startup packet: 10001 bytes (at most 10000)")
        # 10,000 bytes exactly is a startup packet like any other (refused here for want of TLS).
        name = "a" * (10_000 - len(startup_packet({"user": "weir", "application_name": ""})) + 4)
        exact = startup_packet({"user": "weir", "application_name": name})
        assert len(exact) == 4 + 10_000
        assert error_fields(answer_to(port, exact))["C"] == "28000"
        # And over TLS it logs in, the long application_name reported back.
        sock = tls_connect(port)
        reader = authenticate(sock, exact)
        reported = {}
        while (message := reader.next())[0] != b"Z":
            if message[0] == b"S":
                key, value = message[1].rstrip(b"\0").split(b"\0")
                reported[key.decode()] = value.decode()
        assert reported["application_name"] == name
        sock.close()
        assert process.poll() is None
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0


def test_accept_errors_back_off_logged_once_per_burst_and_counted(build_dir, tmp_path):
    """With its descriptors exhausted (RLIMIT_NOFILE 64, then idle connections) accept() fails
    with EMFILE for as long as they are held: the server backs off (10 ms doubling to 1 s)
    instead of spinning, warns once, counts each failure, and serves again once they close."""
    import resource
    import subprocess
    import urllib.request

    import psycopg

    from tests.e2e.weir_run import free_port

    lake = duckdb_lake(tmp_path, "CREATE TABLE t AS SELECT range AS x FROM range(10)")
    port, http_port = free_port(), free_port()
    log_path = tmp_path / "serve.log"
    process = subprocess.Popen(
        [str(build_dir / "weir"), "serve", "--catalog-sqlite", str(lake.sqlite_path),
         "--port", str(port), "--http-port", str(http_port), "--tls-dir", str(tmp_path / "tls")],
        env=dict(os.environ, WEIR_SERVE_PASSWORD=PASSWORD), stdout=open(log_path, "wb"),
        stderr=subprocess.STDOUT,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64)))
    dsn = f"host=127.0.0.1 port={port} user=weir dbname=lake sslmode=require password='{PASSWORD}'"
    warning = "serve: cannot accept connections: Too many open files (errno 24)"
    try:
        wait_for(lambda: b"listening on" in log_path.read_bytes() or process.poll() is not None,
                 60, "weir serve to listen")
        assert process.poll() is None, log_path.read_text()
        idle = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(80)]
        wait_for(lambda: warning in log_path.read_text(), 10, "accept() to fail", poll_s=0.05)
        started = time.monotonic()
        cpu_before = cpu_seconds(process.pid)
        time.sleep(2)
        cpu_spent = cpu_seconds(process.pid) - cpu_before
        for sock in idle:
            sock.close()
        wait_for(lambda: "serve: accepting connections again after" in log_path.read_text(), 20,
                 "accept() to recover", poll_s=0.05)
        seconds = time.monotonic() - started
        with psycopg.connect(dsn, autocommit=True) as conn:
            assert conn.execute("SELECT sum(x) FROM t").fetchone() == (45,)
        log = log_path.read_text()
        assert log.count(warning) == 1, log
        failures = metric(http_port, "weir_serve_accept_errors_total")
        recovered = [line for line in log.splitlines() if "accepting connections again" in line]
        assert len(recovered) == 1 and f"after {int(failures)} failed" in recovered[0], log
        # A spinning loop fails accept() hundreds of thousands of times a second; the backoff
        # reaches 1 s after 7 attempts, so a few a second at most (the first burst from the
        # warning's wait included).
        assert 1 <= failures <= 10 + 2 * (seconds + 10), (failures, seconds)
        assert cpu_spent < 1.0, f"{cpu_spent:.2f} s of CPU in 2 s while accept() failed"
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def metric(http_port: int, name: str) -> float:
    import urllib.request

    text = urllib.request.urlopen(f"http://127.0.0.1:{http_port}/metrics", timeout=10).read()
    for line in text.decode().splitlines():
        if line.startswith(name + " "):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"no {name} in /metrics")
