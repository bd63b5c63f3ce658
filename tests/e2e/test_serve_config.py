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
    assert f"\nduckdb.extension_dir = {extensions.resolve()}  (from WEIR_DUCKDB_EXTENSION_DIR)\n" \
        in log, log
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


def test_a_serve_password_set_after_the_first_start_is_applied_and_said(build_dir, tmp_path):
    """The first start made the users file with a generated password; a later start with
    WEIR_SERVE_PASSWORD makes that the admin's password (saying so in the log), instead of
    ignoring it while logins fail. A start with the same password again changes nothing."""
    from tests.e2e.test_serve import psql

    lake = duckdb_lake(tmp_path, "CREATE TABLE t AS SELECT 42 AS x")
    users = tmp_path / "tls" / "users"
    first = subprocess.run(
        [str(build_dir / "weir"), "serve", "--catalog-sqlite", str(lake.sqlite_path),
         "--tls-dir", str(tmp_path / "tls"), "--add-user", "reader", "--role", "read"],
        env={k: v for k, v in os.environ.items() if k != "WEIR_SERVE_PASSWORD"},
        capture_output=True, text=True, timeout=60)
    assert first.returncode == 0, first.stderr
    assert 'created user "weir" with password' in first.stdout, first.stdout
    generated = users.read_text()
    port, process = start_serve(build_dir, lake, tmp_path)  # with WEIR_SERVE_PASSWORD=PASSWORD
    try:
        log = (tmp_path / "serve.log").read_text()
        assert f'WEIR_SERVE_PASSWORD is set: user "weir" now has that password in {users}' \
            in log, log
        result = psql(port, "SELECT x FROM t")
        assert (result.returncode, result.stdout.strip()) == (0, "42"), result.stderr
        assert psql(port, "SELECT 1", password="wrong").returncode != 0
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    applied = users.read_text()
    assert applied != generated
    assert "reader " in applied and applied.count("\n") == generated.count("\n")
    port, process = start_serve(build_dir, lake, tmp_path)
    try:
        assert "WEIR_SERVE_PASSWORD is set" not in (tmp_path / "serve.log").read_text()
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    assert users.read_text() == applied


def test_a_user_added_to_a_running_server_can_log_in_without_a_restart(build_dir, tmp_path):
    """`weir serve --add-user` from another shell writes the users file; the running server
    reloads it within a second (and on SIGHUP), so the new user logs in at once, with its role."""
    from tests.e2e.test_serve import psql
    from tests.e2e.weir_run import wait_for

    lake = duckdb_lake(tmp_path, "CREATE TABLE t AS SELECT 7 AS x")
    port, process = start_serve(build_dir, lake, tmp_path)
    try:
        assert psql(port, "SELECT x FROM t", password="reader pw").returncode != 0
        added = subprocess.run(
            [str(build_dir / "weir"), "serve", "--catalog-sqlite", str(lake.sqlite_path),
             "--tls-dir", str(tmp_path / "tls"), "--add-user", "analyst", "--role", "read"],
            env=dict(os.environ, WEIR_SERVE_NEW_PASSWORD="reader pw"),
            capture_output=True, text=True, timeout=60)
        assert added.returncode == 0, added.stderr
        assert "reloads the file within a second" in added.stdout
        wait_for(lambda: "reloaded (it changed): 2 user(s)" in
                 (tmp_path / "serve.log").read_text(), 10, "the users file reloaded")

        def as_analyst(sql: str):
            env = dict(os.environ, PGPASSWORD="reader pw", PGCONNECT_TIMEOUT="10")
            return subprocess.run(
                ["psql", f"host=127.0.0.1 port={port} user=analyst dbname=lake sslmode=require",
                 "-X", "-A", "-t", "-c", sql], env=env, capture_output=True, text=True, timeout=60)

        read = as_analyst("SELECT x FROM t")
        assert (read.returncode, read.stdout.strip()) == (0, "7"), read.stderr
        write = as_analyst("INSERT INTO t VALUES (8)")
        assert write.returncode != 0 and "read-only" in write.stderr, write.stderr
        # A failed login is logged with the user and the address, never the password.
        assert psql(port, "SELECT 1", password="nope").returncode != 0
        wait_for(lambda: 'login failed for user "weir" from 127.0.0.1: wrong password' in
                 (tmp_path / "serve.log").read_text(), 10, "the failed login logged")
        assert "nope" not in (tmp_path / "serve.log").read_text()
        process.send_signal(signal.SIGHUP)
        wait_for(lambda: "reloaded (SIGHUP): 2 user(s)" in (tmp_path / "serve.log").read_text(),
                 10, "the SIGHUP reload")
        assert process.poll() is None
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
