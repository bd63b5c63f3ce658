"""serve.host (issue 10, proof 5): an IPv4 or IPv6 address or a host name resolved at start, or
startup stops naming the setting; never a silent listen on every interface (an address that
inet_pton(AF_INET) refused, `::1` say, left the listener bound to 0.0.0.0)."""

from __future__ import annotations

import signal
import socket
import subprocess

import pytest

from tests.e2e.test_serve import PASSWORD, duckdb_lake, start_serve
from tests.e2e.weir_run import free_port


def query_over(host: str, port: int) -> list:
    import psycopg

    with psycopg.connect(f"host={host} port={port} user=weir dbname=lake sslmode=require "
                         f"password='{PASSWORD}' connect_timeout=10") as connection:
        return connection.execute("SELECT x FROM t").fetchall()


def refuses_tcp(host: str, family: int, port: int) -> bool:
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.settimeout(5)
        try:
            sock.connect((host, port))
        except ConnectionRefusedError:
            return True
    return False


def stop(process) -> None:
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == 0


def test_an_ipv6_address_is_listened_on_and_nothing_else(build_dir, tmp_path):
    lake = duckdb_lake(tmp_path, "CREATE TABLE t AS SELECT 7 AS x")
    port, process = start_serve(build_dir, lake, tmp_path, "--host", "::1")
    try:
        assert query_over("::1", port) == [(7,)]
        assert refuses_tcp("127.0.0.1", socket.AF_INET, port)  # not 0.0.0.0
        log = (tmp_path / "serve.log").read_text()
        assert f"listening on ::1:{port} (::1; TLS required, SCRAM-SHA-256)" in log, log
    finally:
        stop(process)


def test_a_host_name_is_resolved_at_start(build_dir, tmp_path):
    lake = duckdb_lake(tmp_path, "CREATE TABLE t AS SELECT 7 AS x")
    resolved = sorted({info[4][0] for info in socket.getaddrinfo("localhost", None,
                                                               type=socket.SOCK_STREAM)})
    port, process = start_serve(build_dir, lake, tmp_path, "--host", "localhost")
    try:
        assert query_over("localhost", port) == [(7,)]
        assert query_over("127.0.0.1", port) == [(7,)]
        log = (tmp_path / "serve.log").read_text()
        line = next(line for line in log.splitlines() if "listening on" in line)
        assert line.startswith(f"weir serve: listening on localhost:{port} ("), line
        assert sorted(line.split("(")[1].split(";")[0].split(", ")) == resolved, line
        if "::1" not in resolved:  # then IPv6 loopback is not listened on either
            assert refuses_tcp("::1", socket.AF_INET6, port)
    finally:
        stop(process)


@pytest.mark.parametrize("host, why", [
    ("no-such-host.invalid", "not an IPv4 or IPv6 address, and it does not resolve as a host name"),
    ("10.0.0.300", "not an IPv4 or IPv6 address, and it does not resolve as a host name"),
    ("192.0.2.1", "cannot listen on 192.0.2.1: Cannot assign requested address"),
])
def test_a_host_that_cannot_be_listened_on_stops_startup_naming_the_setting(build_dir, tmp_path,
                                                                            host, why):
    lake = duckdb_lake(tmp_path, "CREATE TABLE t AS SELECT 7 AS x")
    port = free_port()
    run = subprocess.run(
        [str(build_dir / "weir"), "serve", "--catalog-sqlite", str(lake.sqlite_path),
         "--port", str(port), "--tls-dir", str(tmp_path / "tls"), "--host", host],
        env={"WEIR_SERVE_PASSWORD": PASSWORD, "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, timeout=60)
    assert run.returncode == 1, run.stderr
    assert f'serve.host "{host}" (port {port}): {why}' in run.stderr, run.stderr
    assert "listening on" not in run.stdout
