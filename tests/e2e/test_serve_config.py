"""weir serve's settings come from the settings table like ingest's: YAML, WEIR_SERVE_*
variables, --set and the flag shortcuts; a bad one stops the start naming it."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from tests.e2e.test_serve import PASSWORD, duckdb_lake, start_serve


def test_bad_settings_stop_the_start_with_exit_1_naming_each(build_dir, tmp_path):
    config = tmp_path / "weir.yaml"
    config.write_text("serve:\n  max_connections: 0\n")
    run = subprocess.run(
        [str(build_dir / "weir"), "serve", "--config", str(config), "--tls-dir",
         str(tmp_path / "tls"), "--set", "serve.statement_timeout=soon", "--http-port", "70000"],
        env=dict(os.environ, WEIR_SERVE_PORT="abc"), capture_output=True, text=True, timeout=60)
    assert run.returncode == 1, run
    for line in [
        'serve.port: value "abc" is not an integer (from WEIR_SERVE_PORT)',
        'serve.statement_timeout: value "soon" is not a duration (e.g. 500ms, 60s, 2m, 1h) '
        '(from --set serve.statement_timeout)',
        'serve.http_port: value "70000" is out of range [-1, 65535] (from --set serve.http_port)',
        f'serve.max_connections: value "0" is out of range [1, 100000] (from {config} line 2)',
    ]:
        assert line in run.stderr, run.stderr
    assert run.stderr.startswith("weir serve: invalid configuration:\n"), run.stderr
    assert not (tmp_path / "tls").exists()  # checked before anything started


def test_statement_timeout_from_the_environment_cancels_with_57014(build_dir, tmp_path,
                                                                   monkeypatch):
    import psycopg

    monkeypatch.setenv("WEIR_SERVE_STATEMENT_TIMEOUT", "300ms")
    lake = duckdb_lake(tmp_path, "CREATE TABLE t AS SELECT 1 AS x")
    port, process = start_serve(build_dir, lake, tmp_path)
    try:
        assert "serve.statement_timeout = 300ms" in (tmp_path / "serve.log").read_text()
        dsn = (f"host=127.0.0.1 port={port} user=weir dbname=lake sslmode=require "
               f"password='{PASSWORD}'")
        with psycopg.connect(dsn, autocommit=True) as conn:
            assert conn.execute("SHOW statement_timeout").fetchone() == ("300ms",)
            started = time.monotonic()
            with pytest.raises(psycopg.errors.QueryCanceled) as timed_out:
                conn.execute("SELECT count(*) FROM range(3000000000) t(i) WHERE i % 7 = 3")
            assert timed_out.value.sqlstate == "57014"
            assert "statement timeout" in str(timed_out.value)
            assert time.monotonic() - started < 20
            assert conn.execute("SELECT 41 + 1").fetchone() == (42,)
            # RESET goes back to the configured value, not to "none".
            conn.execute("SET statement_timeout = 0")
            assert conn.execute("SHOW statement_timeout").fetchone() == ("0",)
            conn.execute("RESET statement_timeout")
            assert conn.execute("SHOW statement_timeout").fetchone() == ("300ms",)
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0


def test_the_extension_directory_variable_is_a_setting_the_engine_uses(build_dir, tmp_path,
                                                                      monkeypatch):
    """WEIR_DUCKDB_EXTENSION_DIR was read by the engine and, at the same start, reported as
    "not a weir setting (ignored)"."""
    lake = duckdb_lake(tmp_path, "CREATE TABLE t AS SELECT 1 AS x")
    extensions = build_dir.parent.parent / ".deps" / "duckdb" / "extensions"
    monkeypatch.setenv("WEIR_DUCKDB_EXTENSION_DIR", str(extensions.resolve()))
    port, process = start_serve(build_dir, lake, tmp_path)
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == 0
    log = (tmp_path / "serve.log").read_text()
    assert "WEIR_DUCKDB_EXTENSION_DIR is not a weir setting" not in log, log
    assert f"\nduckdb.extension_dir = {extensions.resolve()}\n" in log, log
    empty = tmp_path / "no-extensions"
    empty.mkdir()
    run = subprocess.run(
        [str(build_dir / "weir"), "serve", "--catalog-sqlite", str(lake.sqlite_path),
         "--port", "0", "--tls-dir", str(tmp_path / "tls")],
        env=dict(os.environ, WEIR_SERVE_PASSWORD=PASSWORD, WEIR_DUCKDB_EXTENSION_DIR=str(empty)),
        capture_output=True, text=True, timeout=60)
    assert run.returncode == 1, run
    assert "WEIR_DUCKDB_EXTENSION_DIR is not a weir setting" not in run.stderr, run.stderr
    assert str(empty) in run.stderr, run.stderr  # the engine looked there, nowhere else


def test_the_users_file_is_private_from_its_first_byte_and_a_bad_line_stops_the_start(
        build_dir, tmp_path):
    lake = duckdb_lake(tmp_path, "CREATE TABLE t AS SELECT 1 AS x")
    tls = tmp_path / "tls"
    command = [str(build_dir / "weir"), "serve", "--catalog-sqlite", str(lake.sqlite_path),
               "--port", "0", "--tls-dir", str(tls)]
    added = subprocess.run([*command, "--add-user", "reader", "--role", "read"],
                           env=dict(os.environ, WEIR_SERVE_PASSWORD=PASSWORD,
                                    WEIR_SERVE_NEW_PASSWORD="r-secret"),
                           capture_output=True, text=True, timeout=60)
    assert added.returncode == 0, added.stderr
    users = tls / "users"
    assert oct(users.stat().st_mode & 0o777) == "0o600"
    lines = users.read_text().splitlines()
    assert [line.split()[0::2] for line in lines] == [["reader", "read"], ["weir", "write"]]
    assert sorted(p.name for p in tls.iterdir()) == ["server.crt", "server.key", "users"]
    users.write_text(lines[1] + "\n" + "reader\n")  # a user without a verifier
    run = subprocess.run(command, env=dict(os.environ, WEIR_SERVE_PASSWORD=PASSWORD),
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 1, run
    assert (f"weir serve: users file {users}, line 2: user reader has no verifier (expected "
            '"NAME SCRAM-SHA-256$... [read|write]")') in run.stderr, run.stderr
