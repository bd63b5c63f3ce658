"""weir serve's session settings and monitoring (issue 10, client compatibility): SET / SHOW /
RESET / SET LOCAL / RESET ALL / DISCARD ALL of the settings clients and ORMs send, also as
startup parameters, with their effect (timestamptz text in the session's time zone, compared
with PostgreSQL 15 itself), ParameterStatus on change, and pg_stat_activity with
pg_cancel_backend / pg_terminate_backend as monitoring tools use them."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
import time

import psycopg
import pytest

from tests.e2e.test_serve import PASSWORD, duckdb_lake, start_serve
from tests.e2e.weir_run import fresh_postgres_database
from tests.harness.components import DEPS, ROOT

READER, READER_PASSWORD = "analyst", "reader pass"

ZONES = ["America/New_York", "Asia/Kolkata", "UTC"]
# DST edges of New York (2024-03-10 07:00 UTC, 2024-11-03 06:00 UTC), a fraction, an instant
# before standard time (local mean time offsets with seconds), one past the zone files'
# transitions (the POSIX rule), and infinity.
INSTANTS = ["2024-03-10 06:59:59+00", "2024-03-10 07:00:00+00", "2024-11-03 05:59:59.5+00",
            "2024-11-03 06:00:00+00", "2024-07-01 12:00:00.123456+00", "1850-06-01 00:00:00+00",
            "2099-07-01 00:00:00+00", "infinity"]
# Text without an offset is read in the session's zone.
LOCAL_INPUTS = ["2024-01-15 10:00:00", "2024-07-15 10:00:00"]


@pytest.fixture
def served(build_dir, tmp_path):
    lake = duckdb_lake(tmp_path, "CREATE TABLE t AS SELECT range AS id FROM range(10)")
    (tmp_path / "tls").mkdir(exist_ok=True)
    for user, password, role in [("weir", PASSWORD, "write"), (READER, READER_PASSWORD, "read")]:
        added = subprocess.run(
            [str(build_dir / "weir"), "serve", "--tls-dir", str(tmp_path / "tls"), "--add-user",
             user, "--role", role], env=dict(os.environ, WEIR_SERVE_NEW_PASSWORD=password),
            capture_output=True, text=True, timeout=60)
        assert added.returncode == 0, added.stderr
    port, process = start_serve(build_dir, lake, tmp_path)
    yield port
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)


def weir_dsn(port: int, user: str = "weir", password: str = PASSWORD) -> str:
    return (f"host=127.0.0.1 port={port} user={user} dbname=lake sslmode=require "
            f"password='{password}'")


def psql_lines(conninfo: str, sql: str, env: dict | None = None) -> list[str]:
    run = subprocess.run(["psql", conninfo, "-X", "-A", "-t", "-c", sql],
                         env=dict(os.environ, PGCONNECT_TIMEOUT="10", **(env or {})),
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    return run.stdout.splitlines()


def zone_script(zone: str) -> str:
    values = ", ".join(f"TIMESTAMPTZ '{v}'" for v in INSTANTS)
    local = ", ".join(f"'{v}'::timestamptz" for v in LOCAL_INPUTS)
    return (f"SET TimeZone TO '{zone}'; SHOW TimeZone; SELECT {values}; SELECT {local}; "
            f"SELECT ARRAY[TIMESTAMPTZ '{INSTANTS[0]}', TIMESTAMPTZ '{INSTANTS[4]}']")


def test_timestamptz_text_in_each_session_zone_equals_postgresql_15(served, postgres):
    pg = fresh_postgres_database(postgres)
    for zone in ZONES:
        ours = psql_lines(weir_dsn(served), zone_script(zone))
        theirs = psql_lines(pg, zone_script(zone))
        assert ours == theirs, zone
        assert ours[0] == "SET" and ours[1] == zone and len(ours) == 5
    ny = psql_lines(weir_dsn(served), zone_script("america/new_york"))
    assert ny[1] == "America/New_York"  # found whatever the case, shown as the zone is named
    assert ny[2].split("|")[:4] == ["2024-03-10 01:59:59-05", "2024-03-10 03:00:00-04",
                                    "2024-11-03 01:59:59.5-04", "2024-11-03 01:00:00-05"]


def outcome(conn, sql: str):
    """The rows of `sql`, or its SQLSTATE."""
    try:
        cur = conn.execute(sql)
        return cur.fetchall() if cur.description else cur.statusmessage
    except psycopg.Error as error:
        conn.rollback() if not conn.autocommit else None
        return error.sqlstate


SCRIPT = [
    "SET timezone TO 'asia/kolkata'", "SHOW TimeZone", "SET TIME ZONE 'UTC'", "SHOW timezone",
    "SET timezone = 'Nowhere/Bogus'", "SET TIME ZONE LOCAL", "SHOW TimeZone",
    "SET DateStyle = 'ISO, DMY'", "SHOW DateStyle", "SET datestyle = ymd", "SHOW DateStyle",
    "SET DateStyle = 'bogus'", "RESET DateStyle", "SHOW DateStyle",
    "SET IntervalStyle = 'bogus'", "SHOW IntervalStyle",
    "SET extra_float_digits = 3", "SHOW extra_float_digits", "SET extra_float_digits = 4",
    "SET extra_float_digits = 0", "SELECT 0.1::float8 + 0.2::float8, 1e20::float8",
    "RESET extra_float_digits", "SELECT 0.1::float8 + 0.2::float8",
    "SET client_encoding = 'utf-8'", "SHOW client_encoding", "SET client_encoding = 'bogus'",
    "SET application_name = 'reporting job'", "SHOW application_name",
    "SELECT current_setting('application_name')",
    "SET search_path = public, \"My Schema\"", "SHOW search_path", "RESET search_path",
    "SHOW search_path", "SET statement_timeout = '5s'", "SHOW statement_timeout",
    "SET statement_timeout = 90000", "SHOW statement_timeout", "RESET statement_timeout",
    "SET jit = yes", "SHOW jit", "SET jit = maybe", "SET server_version = '1'",
    "SHOW integer_datetimes", "SHOW standard_conforming_strings",
]


def test_set_show_reset_answer_as_postgresql_15_does(served, postgres):
    options = "-c TimeZone=UTC -c statement_timeout=0"
    with psycopg.connect(weir_dsn(served), autocommit=True, options=options) as ours, \
            psycopg.connect(fresh_postgres_database(postgres), autocommit=True,
                            options=options) as theirs:
        got = [outcome(ours, sql) for sql in SCRIPT]
        want = [outcome(theirs, sql) for sql in SCRIPT]
    assert got == want
    assert got[SCRIPT.index("SHOW TimeZone")] == [("Asia/Kolkata",)]
    assert got[SCRIPT.index("SET timezone = 'Nowhere/Bogus'")] == "22023"
    assert got[SCRIPT.index("SET extra_float_digits = 4")] == "22023"
    assert got[SCRIPT.index("SET server_version = '1'")] == "55P02"


def test_what_weir_cannot_honour_is_refused_and_sandbox_settings_stay_locked(served):
    with psycopg.connect(weir_dsn(served), autocommit=True) as conn:
        for sql, sqlstate in [("SET DateStyle = 'SQL, DMY'", "0A000"),
                              ("SET IntervalStyle = 'iso_8601'", "0A000"),
                              ("SET client_encoding = 'LATIN1'", "0A000"),
                              ("SET bytea_output = 'escape'", "0A000"),
                              ("SET standard_conforming_strings = off", "0A000"),
                              ("SET enable_external_access = true", "42501"),
                              ("SET GLOBAL TimeZone = 'Asia/Tokyo'", "42501"),
                              ("RESET allowed_directories", "42501"),
                              ("SET allowed_configs = ['enable_external_access']", "42501"),
                              ("SET lock_configuration = false", "42501")]:
            assert outcome(conn, sql) == sqlstate, sql
        assert outcome(conn, "SHOW DateStyle") == [("ISO, MDY",)]
        assert outcome(conn, "SELECT current_setting('enable_external_access')") == [(False,)]


def test_set_local_rollback_reset_all_and_discard_all_with_parameter_status(served, postgres):
    def run(dsn: str):
        seen = []
        with psycopg.connect(dsn, autocommit=True, options="-c TimeZone=UTC") as conn:
            def note(sql):
                seen.append((sql, outcome(conn, sql), conn.info.parameter_status("TimeZone"),
                             conn.info.parameter_status("application_name")))
            for sql in ["BEGIN", "SET LOCAL TimeZone = 'Asia/Kolkata'", "SHOW TimeZone",
                        "COMMIT", "SHOW TimeZone", "BEGIN", "SET TimeZone = 'America/New_York'",
                        "ROLLBACK", "SHOW TimeZone", "BEGIN",
                        "SET TimeZone = 'America/New_York'", "SET LOCAL TimeZone = 'Asia/Kolkata'",
                        "COMMIT", "SHOW TimeZone", "SET LOCAL TimeZone = 'Asia/Kolkata'",
                        "SHOW TimeZone", "SET application_name = 'app'", "RESET ALL",
                        "SHOW TimeZone", "SET TimeZone = 'Asia/Kolkata'",
                        "CREATE TEMP TABLE scratch (i INT)", "BEGIN", "DISCARD ALL", "ROLLBACK",
                        "DECLARE c CURSOR WITH HOLD FOR SELECT 1", "PREPARE p AS SELECT 1",
                        "DISCARD ALL", "SHOW TimeZone", "FETCH c", "SELECT count(*) FROM scratch"]:
                note(sql)
        return seen

    ours = run(weir_dsn(served))
    theirs = run(fresh_postgres_database(postgres))
    assert ours == theirs
    by_sql = {}
    for sql, result, zone, app in ours:
        by_sql.setdefault(sql, []).append((result, zone, app))
    assert by_sql["SHOW TimeZone"][0] == ([("Asia/Kolkata",)], "Asia/Kolkata", "")
    assert by_sql["SHOW TimeZone"][1] == ([("UTC",)], "UTC", "")  # SET LOCAL ended at COMMIT
    assert by_sql["SHOW TimeZone"][2] == ([("UTC",)], "UTC", "")  # the rollback undid the SET
    assert by_sql["SHOW TimeZone"][3] == ([("America/New_York",)], "America/New_York", "")
    assert by_sql["DISCARD ALL"][0][0] == "25001"
    assert by_sql["FETCH c"] == [("34000", "UTC", "")]
    assert by_sql["SELECT count(*) FROM scratch"] == [("42P01", "UTC", "")]


def test_startup_parameters_and_pgtz_and_two_sessions_in_two_zones(served, postgres):
    options = ("-c TimeZone=Asia/Kolkata -c DateStyle=ISO,DMY -c extra_float_digits=0 "
               "-c application_name=started")
    with psycopg.connect(weir_dsn(served), options=options, autocommit=True) as kolkata, \
            psycopg.connect(weir_dsn(served), autocommit=True,
                            options="-c timezone=America/New_York") as new_york:
        assert kolkata.info.parameter_status("TimeZone") == "Asia/Kolkata"
        assert kolkata.info.parameter_status("DateStyle") == "ISO, DMY"
        assert kolkata.info.parameter_status("application_name") == "started"
        assert new_york.info.parameter_status("TimeZone") == "America/New_York"
        query = "SELECT (TIMESTAMPTZ '2024-07-01 12:00:00+00')::text, 0.1::float8 + 0.2::float8"
        # Both at once, each in its own zone (text results read as the server wrote them).
        assert kolkata.execute("SELECT TIMESTAMPTZ '2024-07-01 12:00:00+00'").fetchone()[0] \
            .isoformat() == "2024-07-01T17:30:00+05:30"
        assert new_york.execute("SELECT TIMESTAMPTZ '2024-07-01 12:00:00+00'").fetchone()[0] \
            .isoformat() == "2024-07-01T08:00:00-04:00"
        assert kolkata.execute(query).fetchone()[1] == 0.3
        assert outcome(kolkata, "RESET ALL") == "RESET"
        assert outcome(kolkata, "SHOW TimeZone") == [("Asia/Kolkata",)]  # the startup value
    pgtz = psql_lines(weir_dsn(served), "SHOW TimeZone; SELECT TIMESTAMPTZ '2024-01-01 00:00:00+00'",
                      env={"PGTZ": "America/New_York", "PGDATESTYLE": "ISO, YMD"})
    assert pgtz == ["America/New_York", "2023-12-31 19:00:00-05"]
    bad = subprocess.run(["psql", weir_dsn(served), "-X", "-c", "SELECT 1"],
                         env=dict(os.environ, PGTZ="Nowhere/Bogus"), capture_output=True,
                         text=True, timeout=60)
    assert bad.returncode != 0
    assert 'invalid value for parameter "TimeZone": "Nowhere/Bogus"' in bad.stderr


def test_pgjdbc_session_settings_and_its_own_activity_row(served):
    jars = sorted((DEPS / "clients" / "jdbc").glob("postgresql-*.jar"))
    if shutil.which("java") is None or not jars:
        pytest.fail("java or the pgjdbc jar missing: run scripts/setup")
    # TimeZone comes in pgjdbc's startup packet (the JVM's zone), application_name as a SET.
    url = f"jdbc:postgresql://127.0.0.1:{served}/lake?sslmode=require&ApplicationName=jdbc-app"
    run = subprocess.run(["java", "-Duser.timezone=Asia/Kolkata", "-cp", str(jars[-1]),
                          str(ROOT / "tests" / "clients" / "jdbc" / "SettingsClient.java"), url,
                          "weir", PASSWORD], capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr
    assert [line.split("\t") for line in run.stdout.splitlines()] == [
        # pgjdbc 42.7 leaves extra_float_digits alone on PostgreSQL 12 and later (whose default,
        # 1, already gives the shortest exact digits); ApplicationName it sets.
        ["show", "extra_float_digits", "1"], ["show", "application_name", "jdbc-app"],
        ["show", "TimeZone", "Asia/Kolkata"], ["show", "DateStyle", "ISO, MDY"],
        ["show", "client_encoding", "UTF8"],
        ["values", "2024-07-01 17:30:00+05:30", "0.30000000000000004"],
        ["activity", "jdbc-app", "active", "client backend"]]


def test_pg_stat_activity_and_signals_as_monitoring_tools_use_them(served):
    victim = psycopg.connect(weir_dsn(served), autocommit=True, application_name="victim")
    monitor = psycopg.connect(weir_dsn(served), autocommit=True, application_name="grafana")
    reader = psycopg.connect(weir_dsn(served, READER, READER_PASSWORD), autocommit=True,
                             application_name="reader")
    pid = victim.info.backend_pid
    try:
        victim.execute("BEGIN")
        victim.execute("SELECT count(*) FROM t")
        # Grafana's and pgAdmin's dashboards: sessions by state, then the sessions themselves.
        assert monitor.execute(
            "SELECT state, count(*) FROM pg_stat_activity WHERE datname = 'lake' "
            "GROUP BY state ORDER BY state").fetchall() == [("active", 1), ("idle", 1),
                                                            ("idle in transaction", 1)]
        rows = monitor.execute(
            "SELECT pid, usename, application_name, client_addr, client_port > 0, "
            "backend_start <= now(), xact_start IS NOT NULL, query_start >= backend_start, "
            "state_change >= query_start, wait_event_type, wait_event, state, query, "
            "backend_type FROM pg_catalog.pg_stat_activity ORDER BY pid").fetchall()
        assert rows == [
            (pid, "weir", "victim", "127.0.0.1", True, True, True, True, True, None, None,
             "idle in transaction", "SELECT count(*) FROM t", "client backend"),
            (monitor.info.backend_pid, "weir", "grafana", "127.0.0.1", True, True, True, True,
             True, None, None, "active", rows[1][12], "client backend"),
            # No statement yet: no query_start, as in PostgreSQL.
            (reader.info.backend_pid, READER, "reader", "127.0.0.1", True, True, False, None,
             None, None, None, "idle", "", "client backend")]
        # A read user sees the others' sessions without their details, and cannot signal.
        assert reader.execute(
            "SELECT pid, usename, application_name, state, query, client_addr FROM "
            "pg_stat_activity WHERE pid = %s", [pid]).fetchall() == [
            (pid, "weir", "victim", None, "<insufficient privilege>", None)]
        for call in ["pg_cancel_backend(%s)", "pg_terminate_backend(%s)"]:
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                reader.execute(f"SELECT {call}", [pid])
        victim.execute("ROLLBACK")

        # pg_cancel_backend: the running statement ends with 57014, the session goes on.
        errors = []

        def busy():
            try:
                victim.execute("SELECT count(*) FROM range(100000000000) a")
            except psycopg.Error as error:
                errors.append((error.sqlstate, error.diag.message_primary))

        thread = threading.Thread(target=busy)
        thread.start()
        deadline = time.monotonic() + 30
        while monitor.execute("SELECT state FROM pg_stat_activity WHERE pid = %s",
                              [pid]).fetchone() != ("active",):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert monitor.execute("SELECT pg_cancel_backend(%s)", [pid]).fetchone() == (True,)
        thread.join(timeout=30)
        assert errors == [("57014", "canceling statement due to user request")]
        assert victim.execute("SELECT count(*) FROM t").fetchone() == (10,)
        # An unknown pid: false and a WARNING, as PostgreSQL.
        notices = []
        monitor.add_notice_handler(lambda d: notices.append((d.severity, d.message_primary)))
        assert monitor.execute("SELECT pg_cancel_backend(424242)").fetchone() == (False,)
        assert notices == [("WARNING", "PID 424242 is not a PostgreSQL backend process")]
        # pg_terminate_backend of an idle session: FATAL 57P01 at once, and its row is gone.
        assert monitor.execute("SELECT pg_terminate_backend(%s, 10000)",
                               [pid]).fetchone() == (True,)
        with pytest.raises(psycopg.errors.AdminShutdown) as ended:
            victim.execute("SELECT 1")
        assert "terminating connection due to administrator command" in str(ended.value)
        assert monitor.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s",
                               [pid]).fetchone() == (0,)
        assert monitor.execute("SELECT count(*) FROM pg_stat_activity").fetchone() == (2,)
    finally:
        for conn in (victim, monitor, reader):
            conn.close()
