"""weir serve (first slice of issue 4): TLS required, SCRAM-SHA-256, the simple query protocol
over a DuckLake lake, with psql as the client."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from tests.e2e.weir_run import Lake, free_port, wait_for

PASSWORD = "correct horse battery staple"


@pytest.fixture
def served_lake(build_dir, tmp_path):
    lake = Lake(tmp_path / "lake")
    lake.root.mkdir(parents=True)
    import duckdb

    from tests.e2e.weir_run import EXTENSIONS

    con = duckdb.connect(config={"extension_directory": str(EXTENSIONS),
                                 "autoinstall_known_extensions": False,
                                 "autoload_known_extensions": False})
    con.execute("LOAD ducklake; LOAD sqlite_scanner")
    con.execute(f"ATTACH 'ducklake:sqlite:{lake.sqlite_path}' AS l (DATA_PATH '{lake.data_path}')")
    con.execute("CREATE TABLE l.events AS SELECT range AS id, 'name ' || range AS name, "
                "range % 2 = 0 AS even FROM range(1000)")
    con.close()
    port = free_port()
    env = dict(os.environ, WEIR_SERVE_PASSWORD=PASSWORD)
    log = open(tmp_path / "serve.log", "wb")
    process = subprocess.Popen(
        [str(build_dir / "weir"), "serve", "--catalog-sqlite", str(lake.sqlite_path),
         "--port", str(port), "--tls-dir", str(tmp_path / "tls")],
        env=env, stdout=log, stderr=subprocess.STDOUT)
    wait_for(lambda: b"listening on" in (tmp_path / "serve.log").read_bytes()
             or process.poll() is not None, 60, "weir serve to listen")
    assert process.poll() is None, (tmp_path / "serve.log").read_text()
    yield port, process, tmp_path
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)


def psql(port: int, sql: str, sslmode: str = "require", password: str = PASSWORD):
    env = dict(os.environ, PGPASSWORD=password, PGCONNECT_TIMEOUT="10")
    return subprocess.run(
        ["psql", f"host=127.0.0.1 port={port} user=weir dbname=lake sslmode={sslmode}",
         "-X", "-A", "-t", "-v", "VERBOSITY=verbose", "-c", sql],
        env=env, capture_output=True, text=True, timeout=60)


def test_psql_queries_the_lake_over_tls_with_scram(served_lake):
    port, process, tmp_path = served_lake
    run = psql(port, "SELECT count(*), sum(id), count(*) FILTER (even) FROM events")
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "1000|499500|500"
    run = psql(port, "SELECT name, even FROM events WHERE id = 7")
    assert run.stdout.strip() == "name 7|f"
    # Several statements in one Query message: both results come back.
    run = psql(port, "SELECT 1 AS a; SELECT 'two' AS b")
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["1", "two"]
    # Errors carry the SQLSTATE of the engine's error type; the session goes on.
    run = psql(port, "SELECT * FROM no_such_table")
    assert run.returncode != 0
    assert "42P01" in run.stderr, run.stderr
    run = psql(port, "SELEC 1")
    assert "42601" in run.stderr, run.stderr
    # The password is stored only as a SCRAM verifier.
    users = (tmp_path / "tls" / "users").read_text()
    assert users.startswith("weir SCRAM-SHA-256$4096:") and PASSWORD not in users


def startup_without_tls(port: int) -> bytes:
    """A raw protocol-3.0 startup message without SSLRequest; returns the server's answer."""
    import socket
    import struct

    body = struct.pack("!i", 196608) + b"user\0weir\0database\0lake\0\0"
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(struct.pack("!i", len(body) + 4) + body)
        answer = b""
        while chunk := s.recv(4096):
            answer += chunk
    return answer


def test_plaintext_and_wrong_passwords_are_refused(served_lake):
    port, process, _ = served_lake
    plain = psql(port, "SELECT 1", sslmode="disable")
    assert plain.returncode != 0
    assert "requires TLS" in plain.stderr, plain.stderr
    answer = startup_without_tls(port)  # the FATAL ErrorResponse, byte for byte fields
    assert answer[:1] == b"E" and b"SFATAL\0" in answer and b"C28000\0" in answer, answer
    wrong = psql(port, "SELECT 1", password="not it")
    assert wrong.returncode != 0
    assert 'password authentication failed for user "weir"' in wrong.stderr, wrong.stderr
    assert psql(port, "SELECT 1").returncode == 0  # the server is still fine


def test_sigterm_stops_the_server_with_exit_0(served_lake):
    port, process, _ = served_lake
    assert psql(port, "SELECT 1").returncode == 0
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == 0
