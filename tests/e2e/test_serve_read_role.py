"""The read role holds by construction (issue 10, proof 1): a user added with `--role read`
tries every write route we know of — DML, DDL, MERGE, TRUNCATE, COPY FROM STDIN, CREATE MACRO,
ALTER, DuckLake's maintenance functions, SET/RESET of the sandbox's settings, transaction control
varied by comments and case, multi-statement queries, SQL-level and protocol-level prepared
statements, inside and outside explicit transactions — through psycopg (simple, unnamed and
named extended), pgjdbc (simple, unnamed and named) and node-postgres (simple, unnamed and
named). Every refused step gets 25006 or 42501, every other step succeeds, and afterwards the
lake's newest snapshot, its data files and every table's rows are exactly as before. The same
user still runs the compatibility tests' read queries."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess

import pytest

from tests.e2e.test_serve import PASSWORD, duckdb_lake, start_serve
from tests.e2e.test_serve_catalog import LAKE_SQL, SQL_FILES, run_slt
from tests.harness.components import DEPS, ROOT

READER, READER_PASSWORD = "analyst", "reader pass"
REFUSED = {"25006", "42501"}

# A lake on which every DuckLake maintenance function has work to do: snapshots to expire,
# files scheduled for deletion, adjacent files to merge (m), files with deletions to rewrite
# (t), inlined rows to flush (small).
ROUTES_LAKE_SQL = """
CREATE TABLE u (i BIGINT);
INSERT INTO u SELECT range FROM range(0, 500);
INSERT INTO u SELECT range FROM range(500, 1000);
CALL ducklake_merge_adjacent_files('l');
CALL ducklake_expire_snapshots('l', older_than => now());
CREATE TABLE t (x BIGINT, s VARCHAR);
INSERT INTO t SELECT range, 'row ' || range FROM range(0, 1000);
INSERT INTO t SELECT range, 'row ' || range FROM range(1000, 2000);
DELETE FROM t WHERE x % 2 = 0;
CREATE TABLE m (i BIGINT);
INSERT INTO m SELECT range FROM range(100);
INSERT INTO m SELECT range FROM range(100, 200);
INSERT INTO m SELECT range FROM range(200, 300);
CREATE TABLE small (i INTEGER);
INSERT INTO small VALUES (1), (2);
CREATE VIEW tv AS SELECT x FROM t;
"""

# The write statements, each refused on its own (autocommit) and inside a transaction block.
WRITES = [
    "INSERT INTO t VALUES (99, 'x')",
    "insert into T values (99, 'lower case')",
    "/* first a comment */ INSERT INTO t VALUES (99, 'comment')",
    "WITH w AS (SELECT 99 AS x) INSERT INTO t SELECT x, 'cte' FROM w",
    "UPDATE t SET x = 0",
    "DELETE FROM t",
    "DELETE FROM t WHERE x = $$1$$::BIGINT",
    "TRUNCATE t",
    "MERGE INTO t USING (SELECT 1 AS x) s ON t.x = s.x WHEN MATCHED THEN DELETE",
    "DROP TABLE t",
    "DROP VIEW tv",
    "DROP TABLE IF EXISTS small",
    "CREATE TABLE n (i INTEGER)",
    "CREATE TABLE n AS SELECT 1 AS i",
    "CREATE OR REPLACE VIEW tv AS SELECT 1 AS x",
    "CREATE SCHEMA s",
    "CREATE SEQUENCE q",
    "CREATE MACRO double_it(a) AS a * 2",
    "CREATE TEMP TABLE scratch (i INTEGER)",
    "CREATE TEMP MACRO one() AS 1",
    "ALTER TABLE t ADD COLUMN j INTEGER",
    "ALTER TABLE t RENAME TO t2",
    "ALTER TABLE t RENAME COLUMN x TO y",
    "ALTER VIEW tv RENAME TO tv2",
    "COMMENT ON TABLE t IS 'changed'",
    "EXPLAIN ANALYZE INSERT INTO t VALUES (99, 'explained')",
    "CALL ducklake_expire_snapshots('lake', older_than => now())",
    "SELECT * FROM ducklake_expire_snapshots('lake', older_than => now())",
    "CALL ducklake_merge_adjacent_files('lake')",
    "CALL ducklake_cleanup_old_files('lake', cleanup_all => true)",
    "CALL ducklake_delete_orphaned_files('lake', cleanup_all => true)",
    "CALL ducklake_rewrite_data_files('lake', 't', delete_threshold => 0.0)",
    "CALL ducklake_flush_inlined_data('lake')",
    "CALL ducklake_set_option('lake', 'parquet_compression', 'zstd')",
    # The maintenance functions in every call position and spelling, and what runs SQL text.
    "FROM ducklake_merge_adjacent_files('lake')",
    "CALL system.main.DuckLake_Merge_Adjacent_Files('lake')",
    "CALL \"ducklake_rewrite_data_files\" /* quoted */ ('lake', 't', delete_threshold => 0.0)",
    "SELECT count(*) FROM (SELECT * FROM ducklake_rewrite_data_files('lake', 't', "
    "delete_threshold => 0.0))",
    "SELECT * FROM ducklake_flush_inlined_data('lake')",
    "SELECT * FROM query('CALL ducklake_merge_adjacent_files(''lake'')')",
    "SELECT * FROM json_execute_serialized_sql(json_serialize_sql("
    "'SELECT * FROM ducklake_cleanup_old_files(''lake'', cleanup_all => true)'))",
    "PREPARE merge AS CALL ducklake_merge_adjacent_files('lake')",
    "CALL checkpoint('lake')",
    "CHECKPOINT",
    "CHECKPOINT lake",
    "COPY t FROM '/etc/hostname'",
    "COPY t TO '/tmp/weir-read-role-copy.csv'",
    "ATTACH '/tmp/weir-read-role.duckdb' AS elsewhere",
    "DETACH lake",
    "LOAD httpfs",
]

# Settings that guard the sandbox: refused outside and inside a block.
SETTINGS = [
    "SET enable_external_access = true",
    "SET allowed_directories = ['/']",
    "SET lock_configuration = false",
    "RESET lock_configuration",
    "RESET allowed_directories",
    "RESET enable_external_access",
    "SET access_mode = 'READ_WRITE'",
]


def step(sql: str, refused: bool = False) -> dict:
    return {"sql": sql, "refused": refused}


def routes() -> list[dict]:
    """Every route: steps run in order on a fresh connection (`multi`: simple protocol only)."""
    out = []

    def add(name, *steps, multi=False):
        out.append({"id": name, "steps": list(steps), "multi": multi})

    for i, sql in enumerate(WRITES + SETTINGS):
        add(f"autocommit {i}: {sql}", step(sql, True))
    for i, sql in enumerate(WRITES):
        add(f"in BEGIN {i}: {sql}", step("BEGIN"), step(sql, True), step("COMMIT"))
    for begin in ["START TRANSACTION", "begin transaction read write", "BEGIN READ WRITE",
                  "START TRANSACTION ISOLATION LEVEL SERIALIZABLE, READ WRITE",
                  "/* c */ begin", "-- x\nBEGIN WORK"]:
        add(f"{begin!r} then writes", step(begin), step("SELECT count(*) FROM t"),
            step("INSERT INTO t VALUES (99, 'after begin')", True), step("END"))
    # A transaction ended by text that a first-word check would not see as an end, then writes.
    for end in ["/**/COMMIT", "-- note\nCOMMIT", "/* a /* nested */ comment */ COMMIT",
                "/**/END", "-- x\nROLLBACK", "  aBoRt", "commit work", "/**/ROLLBACK"]:
        add(f"BEGIN, {end!r}, writes", step("BEGIN"), step(end),
            step("INSERT INTO t VALUES (99, 'after end')", True),
            step("CALL ducklake_expire_snapshots('lake', older_than => now())", True))
        add(f"{end!r} outside a block, then writes", step(end), step("DELETE FROM t", True))
    add("session characteristics READ WRITE",
        step("SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE"),
        step("INSERT INTO t VALUES (99, 'characteristics')", True))
    add("SQL PREPARE then EXECUTE", step("PREPARE w AS INSERT INTO t VALUES (99, 'prepared')"),
        step("EXECUTE w", True))
    add("SQL PREPARE then EXECUTE in a block", step("BEGIN"),
        step("PREPARE w2 AS DELETE FROM t"), step("EXECUTE w2", True), step("ROLLBACK"))
    add("settings in a block", step("BEGIN"), step("SET enable_external_access = true", True),
        step("ROLLBACK"))
    add("a refused write in a block, then COMMIT", step("BEGIN"), step("DROP TABLE t", True),
        step("COMMIT"))
    # Several statements in one simple query: the write fails the query.
    for sql in ["BEGIN; INSERT INTO t VALUES (99, 'multi'); COMMIT",
                "SELECT 1; COMMIT; INSERT INTO t VALUES (99, 'multi')",
                "/**/COMMIT; insert into t values (99, 'multi')",
                "BEGIN; /**/COMMIT; DELETE FROM t",
                "SELECT 1; DROP TABLE t",
                "SET enable_external_access = true; SELECT 1",
                "BEGIN READ WRITE; CALL ducklake_merge_adjacent_files('lake'); COMMIT"]:
        add(f"multi: {sql}", step(sql, True), multi=True)
    return out


ROUTES = routes()
MESSAGES: dict[str, str] = {}  # psycopg's error messages of unexpected SQLSTATEs (diagnosis)


def lake_state(lake, conn) -> dict:
    """What a write would change: the newest snapshot, the catalog's files, every file of the
    data path with its bytes, every table's rows."""
    with sqlite3.connect(f"file:{lake.sqlite_path}?mode=ro", uri=True) as catalog:
        snapshot = catalog.execute("SELECT max(snapshot_id) FROM ducklake_snapshot").fetchone()
        files = catalog.execute("SELECT data_file_id, path FROM ducklake_data_file "
                                "ORDER BY data_file_id").fetchall()
        scheduled = sorted(path for (path,) in catalog.execute(
            "SELECT path FROM ducklake_files_scheduled_for_deletion"))
        options = catalog.execute("SELECT key, value, scope, scope_id FROM ducklake_metadata ORDER BY 1, 3, 4"
                                  ).fetchall()
    on_disk = {str(p.relative_to(lake.root)): hashlib.sha256(p.read_bytes()).hexdigest()
               for p in sorted(lake.root.rglob("*")) if p.is_file() and ".sqlite" not in p.name}
    tables = [name for (name,) in conn.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' "
        "ORDER BY 1").fetchall()]
    rows = {name: conn.execute(f'SELECT * FROM "{name}" ORDER BY ALL').fetchall()
            for name in tables}
    return {"snapshot": snapshot, "files": files, "scheduled": scheduled, "options": options,
            "on_disk": on_disk, "tables": tables, "rows": rows}


def dsn(port: int, user: str, password: str) -> str:
    return (f"host=127.0.0.1 port={port} user={user} dbname=lake sslmode=require "
            f"password='{password}'")


def add_reader(build_dir, tmp_path):
    """The users file: the writer `weir` (as start_serve's password) and the reader."""
    (tmp_path / "tls").mkdir(exist_ok=True)
    for user, password, role in [("weir", PASSWORD, "write"), (READER, READER_PASSWORD, "read")]:
        added = subprocess.run(
            [str(build_dir / "weir"), "serve", "--tls-dir", str(tmp_path / "tls"), "--add-user",
             user, "--role", role], env=dict(os.environ, WEIR_SERVE_NEW_PASSWORD=password),
            capture_output=True, text=True, timeout=60)
        assert added.returncode == 0, added.stderr


@pytest.fixture
def served_routes(build_dir, tmp_path):
    lake = duckdb_lake(tmp_path, ROUTES_LAKE_SQL)
    add_reader(build_dir, tmp_path)
    port, process = start_serve(build_dir, lake, tmp_path)
    yield port, lake, tmp_path
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == 0


def psycopg_results(port: int) -> dict:
    """Each route through psycopg: simple protocol, unnamed and named extended protocol."""
    import psycopg
    from psycopg import pq

    results = {}
    for mode in ["simple", "unnamed", "named"]:
        for route in ROUTES:
            if route["multi"] and mode != "simple":
                continue
            outcome = []
            with psycopg.connect(dsn(port, READER, READER_PASSWORD), autocommit=True) as conn:
                for s in route["steps"]:
                    if mode == "unnamed":  # Parse/Bind/Execute of the unnamed statement
                        res = conn.pgconn.exec_params(s["sql"].encode(), [])
                        failed = res.status == pq.ExecStatus.FATAL_ERROR
                        state = res.error_field(pq.DiagnosticField.SQLSTATE)
                        outcome.append(state.decode() if failed else "ok")
                        continue
                    try:
                        conn.execute(s["sql"], prepare=True if mode == "named" else None)
                        outcome.append("ok")
                    except psycopg.Error as error:
                        outcome.append(error.sqlstate)
                        if error.sqlstate not in REFUSED:
                            MESSAGES[f"{mode} {s['sql']}"] = str(error)
            results[f"psycopg {mode} | {route['id']}"] = (route, outcome)
    # COPY FROM STDIN, outside and inside a block.
    for in_block in [False, True]:
        with psycopg.connect(dsn(port, READER, READER_PASSWORD), autocommit=True) as conn:
            outcome = []
            if in_block:
                conn.execute("BEGIN")
            try:
                with conn.cursor().copy("COPY t FROM STDIN") as copy:
                    copy.write_row((99, "copied"))
                outcome.append("ok")
            except psycopg.Error as error:
                outcome.append(error.sqlstate)
            if in_block:
                conn.execute("ROLLBACK")
        route = {"steps": [step("COPY t FROM STDIN", True)]}
        results[f"psycopg COPY FROM STDIN (in a block: {in_block})"] = (route, outcome)
    return results


COPY_ROUTES = {
    "COPY FROM STDIN": {"steps": [step("COPY t FROM STDIN", True)]},
    "COPY FROM STDIN in a block": {
        "steps": [step("BEGIN"), step("COPY t FROM STDIN", True), step("ROLLBACK")]},
}


def escape(sql: str) -> str:
    return sql.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t")


def jdbc_results(port: int, tmp_path) -> dict:
    """Each route through pgjdbc: simple, unnamed and named statements, and COPY FROM STDIN."""
    jars = sorted((DEPS / "clients" / "jdbc").glob("postgresql-*.jar"))
    if shutil.which("java") is None or not jars:
        pytest.fail("java or the pgjdbc jar missing: run scripts/setup")
    routes_file = tmp_path / "routes.tsv"
    routes_file.write_text("".join(
        "\t".join([str(int(route["multi"]))] + [("r" if s["refused"] else "o") + escape(s["sql"])
                                               for s in route["steps"]]) + "\n"
        for route in ROUTES))
    run = subprocess.run(
        ["java", "-cp", ":".join(str(jar) for jar in jars),
         str(ROOT / "tests" / "clients" / "jdbc" / "WriteRoutes.java"),
         f"jdbc:postgresql://127.0.0.1:{port}/lake?sslmode=require", READER, READER_PASSWORD,
         str(routes_file)], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    results = {}
    for line in run.stdout.splitlines():
        mode, route, outcome = line.split("\t")
        chosen = COPY_ROUTES[route] if mode == "copy" else ROUTES[int(route)]
        name = route if mode == "copy" else chosen["id"]
        results[f"pgjdbc {mode} | {name}"] = (chosen, outcome.split(","))
    return results


def node_results(port: int, tmp_path) -> dict:
    """Each route through node-postgres: simple, unnamed and named statements."""
    node_modules = DEPS / "clients" / "node" / "node_modules"
    if shutil.which("node") is None or not (node_modules / "pg").is_dir():
        pytest.fail("node or node-postgres missing: run scripts/setup")
    routes_file = tmp_path / "routes.json"
    routes_file.write_text(json.dumps(ROUTES))
    run = subprocess.run(
        ["node", str(ROOT / "tests" / "clients" / "node" / "write_routes.js"), str(routes_file)],
        capture_output=True, text=True, timeout=600,
        env=dict(os.environ, NODE_PATH=str(node_modules), WEIR_PORT=str(port), WEIR_USER=READER,
                 WEIR_PASSWORD=READER_PASSWORD))
    assert run.returncode == 0, run.stderr
    return {f"node-postgres {mode} | {ROUTES[int(index)]['id']}": (ROUTES[int(index)], outcome)
            for mode, outcomes in json.loads(run.stdout).items()
            for index, outcome in outcomes.items()}


def expected(route: dict) -> list[str]:
    return ["refused" if s["refused"] else "ok" for s in route["steps"]]


def verdicts(outcome: list[str]) -> list[str]:
    return ["refused" if state in REFUSED else state for state in outcome]


def test_a_read_user_cannot_write_through_any_route_or_client(served_routes):
    import psycopg

    port, lake, tmp_path = served_routes
    assert len(WRITES) + len(SETTINGS) >= 40
    with psycopg.connect(dsn(port, "weir", PASSWORD), autocommit=True) as writer:
        before = lake_state(lake, writer)
        assert before["tables"] == ["m", "small", "t", "tv", "u"]
        assert len(before["scheduled"]) == 2  # cleanup_old_files has work (u's merged files)

        results = psycopg_results(port)
        results |= jdbc_results(port, tmp_path)
        results |= node_results(port, tmp_path)

        wrong = {key: outcome for key, (route, outcome) in results.items()
                 if verdicts(outcome) != expected(route)}
        assert wrong == {}, MESSAGES
        clients = {key.split(" ")[0] for key in results}
        assert clients == {"psycopg", "pgjdbc", "node-postgres"}
        assert len(results) >= 3 * len(ROUTES)
        after = lake_state(lake, writer)
        # Nothing changed: the snapshot, the catalog, and the data path's files (their names
        # and their bytes; DuckLake's maintenance functions would write new Parquet files or
        # delete scheduled ones before their catalog write is refused, so a read session is
        # refused them before they run).
        assert len(before["on_disk"]) >= 10
        assert after == before
        # The writer still writes: the lake was refused to the reader, not broken.
        writer.execute("INSERT INTO t VALUES (-1, 'writer')")
        assert writer.execute("SELECT count(*) FROM t WHERE x = -1").fetchone() == (1,)


@pytest.fixture
def served_catalog_with_reader(build_dir, tmp_path):
    lake = duckdb_lake(tmp_path, LAKE_SQL)
    add_reader(build_dir, tmp_path)
    port, process = start_serve(build_dir, lake, tmp_path)
    yield port
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == 0


def psql_as(port: int, user: str, password: str, command: str) -> list[str]:
    env = dict(os.environ, PGPASSWORD=password, PGCONNECT_TIMEOUT="10")
    run = subprocess.run(
        ["psql", f"host=127.0.0.1 port={port} user={user} dbname=lake sslmode=require", "-X",
         "-A", "-t", "-c", command], env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and run.stderr == "", (command, run.stderr)
    return run.stdout.splitlines()


@pytest.mark.parametrize("path", SQL_FILES, ids=[p.name for p in SQL_FILES])
def test_a_read_user_runs_the_compatibility_queries(served_catalog_with_reader, path, tmp_path):
    import psycopg

    port = served_catalog_with_reader
    # The same file, but current_user is the reader.
    text = path.read_text()
    assert text.count("public|lake|weir|pg_catalog") == 1
    as_reader = tmp_path / path.name
    as_reader.write_text(text.replace("public|lake|weir|pg_catalog",
                                      f"public|lake|{READER}|pg_catalog"))
    with psycopg.connect(dsn(port, READER, READER_PASSWORD), autocommit=True) as conn:
        assert run_slt(conn, as_reader) == []
    # psql's describe commands list the same for the reader as for the writer, the session's
    # user shown as the owner.
    for command in [r"\dt", r"\d", r"\d events", r"\d+ events", r"\d other.o2", r"\dn",
                    r"\dv", r"\df", r"\l", r"\dT"]:
        as_writer = psql_as(port, "weir", PASSWORD, command)
        assert psql_as(port, READER, READER_PASSWORD, command) == \
            [line.replace("|weir", f"|{READER}") for line in as_writer], command
