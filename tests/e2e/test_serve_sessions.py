"""weir serve sessions with real clients: COPY in and out (text, CSV, binary), cursors, typed
parameters and binary results, cancel, statement and idle timeouts, read-only roles, the
metrics and the query log."""

from __future__ import annotations

import datetime
import decimal
import os
import re
import signal
import subprocess
import threading
import time
import urllib.request
import uuid

import pytest

from tests.e2e.test_serve import PASSWORD, duckdb_lake, psql, start_serve
from tests.e2e.weir_run import free_port, wait_for


def dsn(port: int, user: str = "weir", password: str = PASSWORD) -> str:
    return (f"host=127.0.0.1 port={port} user={user} dbname=lake sslmode=require "
            f"password='{password}'")


@pytest.fixture
def served(build_dir, tmp_path):
    lake = duckdb_lake(tmp_path, """
        CREATE TABLE events AS SELECT range AS id, 'name ' || range AS name,
            range % 2 = 0 AS even FROM range(1000);
        CREATE TABLE notes (id BIGINT, body VARCHAR, score DOUBLE, at_ TIMESTAMPTZ, tag UUID,
                            raw BLOB, amount DECIMAL(12, 3), day DATE);
    """)
    http_port = free_port()
    port, process = start_serve(build_dir, lake, tmp_path, "--http-port", str(http_port))
    yield port, process, tmp_path, http_port
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)


def awkward_text(i: int) -> str:
    """Values with the characters COPY formats must quote or escape."""
    kinds = [f"plain {i}", f"comma, {i}", f'quote " {i}', f"new\nline {i}", f"tab\t{i}",
             f"back\\slash {i}", "", f"\\N {i}", f"crlf\r\n{i}", f"ünïcödé {i} ✓"]
    return kinds[i % len(kinds)]


def test_copy_csv_round_trips_100000_awkward_rows(served):
    import psycopg

    port, _, _, _ = served
    rows = [(str(i), awkward_text(i) if i % 13 else None, float_text(i / 7) if i % 11 else None)
            for i in range(100_000)]
    with psycopg.connect(dsn(port), autocommit=True) as conn:
        with conn.cursor() as cur:
            with cur.copy("COPY notes (id, body, score) FROM STDIN WITH (FORMAT csv)") as copy:
                encoded = csv_text(rows).encode()
                for start in range(0, len(encoded), 65_536):  # CopyData splits mid-row
                    copy.write(encoded[start:start + 65_536])
            assert cur.rowcount == 100_000
        count = conn.execute("SELECT count(*), count(DISTINCT id), count(body), count(score) "
                             "FROM notes").fetchone()
        assert count == (100_000, 100_000, sum(1 for r in rows if r[1] is not None),
                         sum(1 for r in rows if r[2] is not None))
        # Out again in CSV: the same bytes PostgreSQL would send, parsed back exactly.
        with conn.cursor() as cur:
            with cur.copy("COPY (SELECT id, body, score FROM notes ORDER BY id) TO STDOUT "
                          "WITH (FORMAT csv)") as copy:
                raw = b"".join(bytes(block) for block in copy).decode()
        assert raw == csv_text(rows)
        # The raw CSV quotes exactly what must be quoted.
        with conn.cursor() as cur:
            with cur.copy("COPY (SELECT id, body FROM notes WHERE id IN (1, 2, 3, 6, 7) "
                          "ORDER BY id) TO STDOUT (FORMAT csv, HEADER)") as copy:
                raw = b"".join(bytes(block) for block in copy).decode()
        assert raw == ('id,body\n1,"comma, 1"\n2,"quote "" 2"\n3,"new\nline 3"\n'
                       '6,""\n7,\\N 7\n')


def float_text(value: float) -> str:
    """PostgreSQL's shortest round-trip float text (no trailing .0)."""
    text = repr(value)
    return text[:-2] if text.endswith(".0") else text


def csv_text(rows) -> str:
    """PostgreSQL's CSV: NULL unquoted empty, quotes only where needed, "" inside quotes."""
    def field(value):
        if value is None:
            return ""
        if value == "" or any(c in value for c in ',"\r\n') or value == "\\.":
            return '"' + value.replace('"', '""') + '"'
        return value
    return "".join(",".join(field(v) for v in row) + "\n" for row in rows)


def test_copy_text_and_binary_formats_round_trip_typed_values(served):
    import psycopg

    port, _, _, _ = served
    utc = datetime.timezone.utc
    rows = [(i, awkward_text(i), i * 0.5, datetime.datetime(2024, 1, 1, tzinfo=utc) +
             datetime.timedelta(seconds=i * 3601), uuid.UUID(int=i * 7919),
             bytes([i % 256, 0, 255, 10]), decimal.Decimal(i) / 8, datetime.date(1999, 12, 31) +
             datetime.timedelta(days=i)) for i in range(2000)]
    types = ["int8", "text", "float8", "timestamptz", "uuid", "bytea", "numeric", "date"]
    with psycopg.connect(dsn(port), autocommit=True) as conn:
        for format_ in ("text", "binary"):
            conn.execute("DELETE FROM notes")
            with conn.cursor() as cur:
                with cur.copy(f"COPY notes FROM STDIN (FORMAT {format_})") as copy:
                    if format_ == "binary":
                        copy.set_types(types)
                    for row in rows:
                        copy.write_row(row)
            assert conn.execute("SELECT count(*) FROM notes").fetchone() == (2000,)
            with conn.cursor() as cur:
                with cur.copy(f"COPY (SELECT * FROM notes ORDER BY id) TO STDOUT "
                              f"(FORMAT {format_})") as copy:
                    copy.set_types(types)
                    back = list(copy.rows())
            assert back == rows, format_


def test_a_failed_copy_lands_nothing_and_names_the_line(served):
    import psycopg

    port, _, _, _ = served
    with psycopg.connect(dsn(port), autocommit=True) as conn:
        with pytest.raises(psycopg.errors.DataError) as failed:
            with conn.cursor() as cur:
                with cur.copy("COPY notes (id, body) FROM STDIN") as copy:
                    copy.write(b"1\tfine\n2\talso fine\nnot a number\tbad\n4\tnever\n")
        assert "line 3" in str(failed.value), failed.value
        assert conn.execute("SELECT count(*) FROM notes").fetchone() == (0,)
        with pytest.raises(psycopg.errors.BadCopyFileFormat):
            with conn.cursor() as cur:
                with cur.copy("COPY notes (id, body) FROM STDIN") as copy:
                    copy.write(b"1\tfine\textra\n")
        assert conn.execute("SELECT count(*) FROM notes").fetchone() == (0,)


def test_psycopg_typed_parameters_and_binary_results_equal_text(served):
    import psycopg

    port, _, _, _ = served
    utc = datetime.timezone.utc
    at = datetime.datetime(2024, 2, 29, 13, 14, 15, 123456, tzinfo=utc)
    tag = uuid.UUID("12345678-1234-5678-9abc-def012345678")
    with psycopg.connect(dsn(port), autocommit=True) as conn:
        conn.execute("INSERT INTO notes VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                     [7, "seven", 7.5, at, tag, b"\x00\x01\xff", decimal.Decimal("12.345"),
                      datetime.date(2024, 2, 29)])
        conn.execute("INSERT INTO notes VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                     [8, None, None, None, None, None, None, None])
        query = ("SELECT id, body, score, at_, tag, raw, amount, day, [id, id + 1] AS pair, "
                 "INTERVAL 1 DAY + INTERVAL 90 MINUTE AS span, '{\"a\": 1}'::JSON AS doc, "
                 "TIME '12:34:56.5' AS t, TIMESTAMP '2001-02-03 04:05:06' AS ts "
                 "FROM notes WHERE id >= %s ORDER BY id")
        text = conn.execute(query, [7]).fetchall()
        assert text[0] == (7, "seven", 7.5, at, tag, b"\x00\x01\xff", decimal.Decimal("12.345"),
                           datetime.date(2024, 2, 29), [7, 8],
                           datetime.timedelta(days=1, minutes=90), {"a": 1},
                           datetime.time(12, 34, 56, 500000),
                           datetime.datetime(2001, 2, 3, 4, 5, 6))
        assert text[1][:8] == (8, None, None, None, None, None, None, None)
        with conn.cursor(binary=True) as cur:
            cur.execute(query, [7])
            assert cur.fetchall() == text
        # Parameters of every type select the row they were stored with.
        found = conn.execute("SELECT id FROM notes WHERE at_ = %s AND tag = %s AND raw = %s",
                             [at, tag, b"\x00\x01\xff"]).fetchall()
        assert found == [(7,)]
        # A parameter DuckDB cannot type before it has a value still gives the right columns.
        assert conn.execute("SELECT id, body FROM notes WHERE id = %s * 2", [5]).fetchall() == []
        assert conn.execute("SELECT id, %s * 2 AS twice FROM notes WHERE id = 7",
                            [21]).fetchall() == [(7, 42)]
        assert conn.execute("SELECT current_user, pg_backend_pid() > 0").fetchone() == (
            "weir", True)


def result_lines(stdout: str) -> list[str]:
    """psql's output without the command tags it prints for non-SELECT statements."""
    tags = re.compile(r"^(BEGIN|COMMIT|ROLLBACK|DECLARE CURSOR|CLOSE CURSOR|MOVE \d+)$")
    return [line for line in stdout.splitlines() if line and not tags.match(line)]


def test_cursors_declare_fetch_move_close(served):
    import psycopg

    port, _, _, _ = served
    with psycopg.connect(dsn(port)) as conn:  # not autocommit: psycopg opens a transaction
        with conn.cursor(name="big") as cur:  # DECLARE ... CURSOR; FETCH FORWARD n
            cur.itersize = 100
            cur.execute("SELECT id FROM events WHERE id %% %s = 0 ORDER BY id", [3])
            ids = [row[0] for row in cur]
        assert ids == list(range(0, 1000, 3))
        conn.rollback()
    # By hand: DECLARE / FETCH / MOVE / CLOSE in one transaction through psql.
    script = ("BEGIN; DECLARE c CURSOR FOR SELECT id FROM events ORDER BY id; "
              "FETCH 3 FROM c; MOVE 10 IN c; FETCH NEXT FROM c; FETCH ALL FROM c; CLOSE c; "
              "COMMIT")
    run = psql(port, script)
    assert run.returncode == 0, run.stderr
    assert "MOVE 10" in run.stdout.splitlines()
    lines = result_lines(run.stdout)
    assert lines[:4] == ["0", "1", "2", "13"] and lines[4:] == [str(i) for i in range(14, 1000)]
    outside = psql(port, "DECLARE c CURSOR FOR SELECT 1")
    assert outside.returncode != 0 and "25P01" in outside.stderr, outside.stderr
    missing = psql(port, "BEGIN; FETCH 1 FROM nope")
    assert "34000" in missing.stderr, missing.stderr
    held = psql(port, "BEGIN; DECLARE h CURSOR WITH HOLD FOR SELECT id FROM events ORDER BY id; "
                      "COMMIT; FETCH 2 FROM h; SELECT 'other statement'; FETCH 2 FROM h; CLOSE h")
    assert held.returncode == 0, held.stderr
    assert result_lines(held.stdout) == ["0", "1", "other statement", "2", "3"]


def test_cancel_from_another_socket_ends_with_57014_and_the_session_goes_on(served):
    import psycopg

    port, _, _, _ = served
    with psycopg.connect(dsn(port), autocommit=True) as conn:
        timer = threading.Timer(1.0, conn.cancel)
        timer.start()
        with pytest.raises(psycopg.errors.QueryCanceled) as cancelled:
            conn.execute("SELECT count(*) FROM range(3000000000) t(i) WHERE i % 7 = 3")
        timer.join()
        assert cancelled.value.sqlstate == "57014"
        assert "user request" in str(cancelled.value)
        assert conn.execute("SELECT 1").fetchone() == (1,)


def test_statement_timeout_and_idle_session_timeout(build_dir, tmp_path):
    import psycopg

    lake = duckdb_lake(tmp_path, "CREATE TABLE t AS SELECT 1 AS x")
    port, process = start_serve(build_dir, lake, tmp_path, "--idle-session-timeout", "2")
    try:
        with psycopg.connect(dsn(port), autocommit=True) as conn:
            conn.execute("SET statement_timeout = '300ms'")
            assert conn.execute("SHOW statement_timeout").fetchone() == ("300ms",)
            started = time.monotonic()
            with pytest.raises(psycopg.errors.QueryCanceled) as timed_out:
                conn.execute("SELECT count(*) FROM range(3000000000) t(i) WHERE i % 7 = 3")
            assert "statement timeout" in str(timed_out.value)
            assert time.monotonic() - started < 20
            assert conn.execute("SELECT 41 + 1").fetchone() == (42,)
            conn.execute("RESET statement_timeout")
            assert conn.execute("SHOW statement_timeout").fetchone() == ("0",)
            with pytest.raises(psycopg.errors.InvalidParameterValue):
                conn.execute("SET statement_timeout = 'soon'")
        idle = psycopg.connect(dsn(port), autocommit=True)
        time.sleep(3.5)
        with pytest.raises(psycopg.OperationalError) as ended:
            idle.execute("SELECT 1")
        assert "idle-session timeout" in str(ended.value), ended.value
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0


def test_read_role_reads_but_cannot_write(build_dir, tmp_path):
    import psycopg

    lake = duckdb_lake(tmp_path, "CREATE TABLE t AS SELECT range AS x FROM range(10)")
    tls = tmp_path / "tls"
    port, process = start_serve(build_dir, lake, tmp_path)
    try:
        added = subprocess.run(
            [str(build_dir / "weir"), "serve", "--tls-dir", str(tls), "--add-user", "analyst",
             "--role", "read"], env=dict(os.environ, WEIR_SERVE_NEW_PASSWORD="reader pass"),
            capture_output=True, text=True, timeout=60)
        assert added.returncode == 0, added.stderr
        assert "reader pass" not in (tls / "users").read_text()
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    port, process = start_serve(build_dir, lake, tmp_path)  # users are read at start
    try:
        with psycopg.connect(dsn(port, "analyst", "reader pass"), autocommit=True) as conn:
            assert conn.execute("SELECT count(*), sum(x) FROM t").fetchone() == (10, 45)
            for sql in ["INSERT INTO t VALUES (99)", "DELETE FROM t", "CREATE TABLE u (i INT)",
                        "DROP TABLE t"]:
                with pytest.raises(psycopg.Error) as refused:
                    conn.execute(sql)
                assert "read-only" in str(refused.value), (sql, refused.value)
            conn.execute("BEGIN")
            with pytest.raises(psycopg.Error):
                conn.execute("UPDATE t SET x = 0")
            conn.execute("ROLLBACK")
            assert conn.execute("SELECT count(*), sum(x) FROM t").fetchone() == (10, 45)
        with psycopg.connect(dsn(port), autocommit=True) as writer:
            writer.execute("INSERT INTO t VALUES (10)")
            assert writer.execute("SELECT count(*) FROM t").fetchone() == (11,)
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0


def test_metrics_and_query_log(served):
    import psycopg

    port, process, tmp_path, http_port = served
    with psycopg.connect(dsn(port), autocommit=True, application_name="metrics-test") as conn:
        for _ in range(5):
            conn.execute("SELECT id FROM events WHERE id < 10").fetchall()
        with pytest.raises(psycopg.Error):
            conn.execute("SELECT * FROM missing_table")
    assert psql(port, "SELECT 1", password="wrong").returncode != 0
    text = urllib.request.urlopen(f"http://127.0.0.1:{http_port}/metrics", timeout=10).read()
    metrics = {}
    for line in text.decode().splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            metrics[name] = float(value)
    assert metrics['weir_serve_queries_total{status="error"}'] == 1
    assert metrics['weir_serve_queries_total{status="ok"}'] >= 5
    assert metrics["weir_serve_auth_failures_total"] == 1
    assert metrics["weir_serve_rows_sent_total"] >= 50
    assert metrics["weir_serve_bytes_sent_total"] > 0
    assert metrics["weir_serve_query_duration_seconds_count"] >= 6
    log = (tmp_path / "serve.log").read_text()
    lines = [line for line in log.splitlines()
             if "application=metrics-test" in line and "statement=SELECT id FROM events" in line]
    assert len(lines) == 5, log
    assert "user=weir" in lines[0] and "rows=10" in lines[0] and "sqlstate=00000" in lines[0]
    assert any("sqlstate=42P01" in line and "missing_table" in line for line in log.splitlines())


def test_transaction_no_ops_are_warnings_as_in_postgresql(served):
    port, _, _, _ = served
    run = psql(port, "COMMIT")
    assert run.returncode == 0, run.stderr
    assert "WARNING:  25P01: there is no transaction in progress" in run.stderr, run.stderr
    run = psql(port, "BEGIN; BEGIN; INSERT INTO notes (id) VALUES (1); COMMIT; ROLLBACK")
    assert run.returncode == 0, run.stderr
    assert "25001: there is already a transaction in progress" in run.stderr, run.stderr
    assert "25P01" in run.stderr, run.stderr
    assert psql(port, "SELECT count(*) FROM notes").stdout.strip() == "1"


def test_sigterm_interrupts_statements_running_past_the_grace_period(build_dir, tmp_path):
    import psycopg

    lake = duckdb_lake(tmp_path, "CREATE TABLE t AS SELECT 1 AS x")
    port, process = start_serve(build_dir, lake, tmp_path, "--shutdown-timeout", "1")
    busy = psycopg.connect(dsn(port), autocommit=True)
    outcome = {}

    def run_busy():
        try:
            busy.execute("SELECT count(*) FROM range(30000000000) t(i) WHERE i % 7 = 3")
        except psycopg.Error as error:
            outcome["error"] = error

    thread = threading.Thread(target=run_busy)
    thread.start()
    time.sleep(1.0)
    started = time.monotonic()
    process.send_signal(signal.SIGTERM)
    thread.join(timeout=60)
    assert process.wait(timeout=60) == 0
    assert time.monotonic() - started < 15  # the grace period, not the statement, decides
    error = outcome.get("error")
    assert error is not None and (error.sqlstate == "57P01"
                                  or "terminating connection" in str(error)), outcome


def test_a_lake_on_s3_with_a_postgres_catalog_reads_and_writes(postgres, s3, build_dir, tmp_path):
    """The same lake settings as ingest (WEIR_CATALOG_*, WEIR_STORAGE_S3_*): data on S3."""
    import duckdb
    import psycopg

    from tests.e2e.weir_run import EXTENSIONS, Lake, fresh_bucket, fresh_postgres_database

    lake = Lake(tmp_path / "lake", catalog="postgres", storage="s3")
    lake.postgres_dsn = fresh_postgres_database(postgres)
    lake.s3 = fresh_bucket(s3)
    con = duckdb.connect(config={"extension_directory": str(EXTENSIONS),
                                 "autoinstall_known_extensions": False,
                                 "autoload_known_extensions": False})
    con.execute("LOAD ducklake; LOAD postgres_scanner; LOAD httpfs")
    con.execute(f"CREATE SECRET (TYPE s3, KEY_ID '{lake.s3['access_key']}', "
                f"SECRET '{lake.s3['secret_key']}', REGION '{lake.s3['region']}', "
                f"ENDPOINT '{lake.s3['endpoint']}', USE_SSL false, URL_STYLE 'path')")
    con.execute(f"ATTACH 'ducklake:postgres:{lake.postgres_dsn}' AS l "
                f"(DATA_PATH '{lake.data_path}')")
    con.execute("CREATE TABLE l.events AS SELECT range AS id FROM range(5000)")
    con.close()
    port = free_port()
    log = open(tmp_path / "serve.log", "wb")
    process = subprocess.Popen(
        [str(build_dir / "weir"), "serve", "--port", str(port), "--tls-dir", str(tmp_path / "tls")],
        env=dict(os.environ, WEIR_SERVE_PASSWORD=PASSWORD, **lake.env()), stdout=log,
        stderr=subprocess.STDOUT)
    try:
        wait_for(lambda: b"listening on" in (tmp_path / "serve.log").read_bytes()
                 or process.poll() is not None, 60, "weir serve to listen")
        assert process.poll() is None, (tmp_path / "serve.log").read_text()
        with psycopg.connect(dsn(port), autocommit=True) as conn:
            assert conn.execute("SELECT count(*), sum(id) FROM events").fetchone() == (
                5000, sum(range(5000)))
            with conn.cursor() as cur:
                with cur.copy("COPY events FROM STDIN") as copy:
                    for i in range(5000, 6000):
                        copy.write_row((i,))
            assert conn.execute("SELECT count(*), count(DISTINCT id) FROM events").fetchone() == (
                6000, 6000)
            # The files went to the bucket: the sandbox allows the lake's own S3 prefix only.
            files = conn.execute("SELECT count(*) FROM ducklake_list_files('lake', 'events') "
                                 "WHERE data_file LIKE 's3://%'").fetchone()[0]
            assert files >= 2
        assert lake.count("events") == 6000  # DuckDB's own reader agrees
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0


def test_the_session_memory_limit_bounds_buffered_cursors(build_dir, tmp_path):
    """A cursor left open while other statements run is kept in memory, within the limit."""
    lake = duckdb_lake(tmp_path, "CREATE TABLE t AS SELECT 1 AS x")
    port, process = start_serve(build_dir, lake, tmp_path, "--session-memory-mb", "1")
    try:
        small = psql(port, "BEGIN; DECLARE c CURSOR FOR SELECT range AS i FROM range(1000); "
                           "FETCH 1 FROM c; SELECT 'between'; FETCH 2 FROM c; COMMIT")
        assert small.returncode == 0, small.stderr
        assert [line for line in small.stdout.splitlines() if line in ("0", "between", "1", "2")
                ] == ["0", "between", "1", "2"]
        big = psql(port, "BEGIN; DECLARE c CURSOR FOR SELECT range AS i, repeat('x', 100) AS pad "
                         "FROM range(1000000); FETCH 1 FROM c; SELECT 'between'")
        assert big.returncode != 0
        assert "53200" in big.stderr and "memory limit of 1048576 bytes" in big.stderr, big.stderr
        assert psql(port, "SELECT 42").stdout.strip() == "42"  # the server and others go on
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0


def test_dml_with_returning_describes_and_returns_its_rows(served):
    import psycopg

    port, _, _, _ = served
    # DuckLake tables refuse RETURNING; a session's temporary table takes it.
    with psycopg.connect(dsn(port), autocommit=True) as conn:
        conn.execute("CREATE TEMP TABLE scratch (id BIGINT, body VARCHAR)")
        with conn.cursor() as cur:  # extended protocol: Describe must announce the rows
            cur.execute("INSERT INTO scratch VALUES (%s, %s), (%s, %s) RETURNING id, body",
                        [1, "one", 2, "two"])
            assert [d.name for d in cur.description] == ["id", "body"]
            assert cur.fetchall() == [(1, "one"), (2, "two")]
            assert cur.rowcount == 2
            cur.execute("UPDATE scratch SET body = upper(body) WHERE id = %s RETURNING body", [2])
            assert cur.fetchall() == [("TWO",)]
            cur.execute("DELETE FROM scratch WHERE id = %s", [1])
            assert cur.description is None and cur.rowcount == 1
            cur.execute("DELETE FROM scratch RETURNING id")
            assert cur.fetchall() == [(2,)] and cur.rowcount == 1


def test_a_parsed_query_is_prepared_once_and_renewed_when_its_table_changes(served):
    """Clients parse the same text again for every execution (psycopg's unnamed statements):
    weir prepares it once per session and binds each execution's parameters; when the table
    changes under it (another session's DDL, ingest adding a column), the next execution
    describes and returns the new shape."""
    import psycopg

    port = served[0]
    with psycopg.connect(dsn(port), autocommit=True) as a, \
            psycopg.connect(dsn(port), autocommit=True) as b:
        for i in (5, 17, 999, 0, 5):
            rows = a.execute("SELECT id, name FROM events WHERE id = %s", (i,)).fetchall()
            assert rows == [(i, f"name {i}")]
        assert a.execute("SELECT count(*) FROM events WHERE even = %s", (True,)).fetchone() == (500,)
        assert a.execute("SELECT count(*) FROM events WHERE even = %s", (False,)).fetchone() == (500,)

        a.execute("CREATE TABLE shape (id BIGINT)")
        a.execute("INSERT INTO shape VALUES (1)")
        query = "SELECT * FROM shape WHERE id >= %s"
        cursor = a.execute(query, (0,))
        assert [d.name for d in cursor.description] == ["id"] and cursor.fetchall() == [(1,)]
        b.execute("ALTER TABLE shape ADD COLUMN extra INTEGER")
        cursor = a.execute(query, (0,))
        assert [d.name for d in cursor.description] == ["id", "extra"]
        assert cursor.fetchall() == [(1, None)]
        # The session's own change forgets its prepared queries.
        a.execute("ALTER TABLE shape ADD COLUMN note VARCHAR")
        cursor = a.execute(query, (0,))
        assert [d.name for d in cursor.description] == ["id", "extra", "note"]
        assert cursor.fetchall() == [(1, None, None)]
