"""PostgreSQL catalog compatibility of `weir serve` (issue 4): psql's backslash commands (proof 1),
pgjdbc's prepared statements, batches and DatabaseMetaData (proof 4), and the catalog and
session-setting behaviour clients rely on, as sqllogictest-style files run through psycopg."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from tests.e2e.test_serve import PASSWORD, duckdb_lake, psql, start_serve
from tests.harness.components import DEPS, ROOT

JDBC_CLIENT = ROOT / "tests" / "clients" / "jdbc" / "CatalogClient.java"
SQL_FILES = sorted((ROOT / "tests" / "e2e" / "sql").glob("*.slt"))

# A lake written by DuckDB with columns of many types, a second schema and a view.
LAKE_SQL = """
CREATE TABLE events (id BIGINT NOT NULL, name VARCHAR, even BOOLEAN, score DOUBLE,
  ts TIMESTAMPTZ, amount DECIMAL(18,3), tags INTEGER[], small SMALLINT, i INTEGER, r FLOAT,
  d DATE, t TIME, plain TIMESTAMP, iv INTERVAL, u UUID, b BLOB, j JSON, names VARCHAR[]);
INSERT INTO events (id, name, even) SELECT range, 'name ' || range, range % 2 = 0 FROM range(100);
CREATE SCHEMA other;
CREATE TABLE other.o2 (x INTEGER);
CREATE VIEW v1 AS SELECT 1 AS one;
"""

# (column, PostgreSQL type) of events as psql's \d lists them.
EVENTS_COLUMNS = [
    ("id", "bigint"), ("name", "text"), ("even", "boolean"), ("score", "double precision"),
    ("ts", "timestamp with time zone"), ("amount", "numeric(18,3)"), ("tags", "integer[]"),
    ("small", "smallint"), ("i", "integer"), ("r", "real"), ("d", "date"),
    ("t", "time without time zone"), ("plain", "timestamp without time zone"),
    ("iv", "interval"), ("u", "uuid"), ("b", "bytea"), ("j", "json"), ("names", "text[]"),
]


@pytest.fixture
def served_catalog(build_dir, tmp_path):
    lake = duckdb_lake(tmp_path, LAKE_SQL)
    port, process = start_serve(build_dir, lake, tmp_path)
    yield port
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == 0


def backslash(port: int, command: str) -> list[str]:
    """A psql backslash command over TLS (unaligned, tuples only): its output lines."""
    run = psql(port, command)
    assert run.returncode == 0 and run.stderr == "", (command, run.stderr)
    return run.stdout.splitlines()


def test_psql_backslash_commands_list_the_lake(served_catalog):
    port = served_catalog
    assert backslash(port, r"\dt") == ["public|events|table|weir"]
    assert backslash(port, r"\d") == ["public|events|table|weir", "public|v1|view|weir"]
    # Column, type, collation, nullable, default.
    assert backslash(port, r"\d events") == [
        f"{name}|{type_}||{'not null' if name == 'id' else ''}|" for name, type_ in EVENTS_COLUMNS]
    assert backslash(port, r"\d other.o2") == ["x|integer|||"]
    assert backslash(port, r"\dt other.*") == ["other|o2|table|weir"]
    assert backslash(port, r"\dn") == ["other|weir", "public|weir"]
    assert backslash(port, r"\l") == ["lake|weir|UTF8|C|C||libc|"]
    assert backslash(port, r"\df") == []
    assert backslash(port, r"\dv") == ["public|v1|view|weir"]


# PostgreSQL's storage strategy of each type, as \d+ shows it (numeric is main, variable-length
# types extended, fixed-length plain).
EXTENDED = {"text", "integer[]", "bytea", "json", "text[]"}


def psql_output(port: int, *commands: str, tuples_only: bool = True) -> list[str]:
    """psql over TLS running each of `commands` in turn (unaligned); its output lines."""
    env = dict(os.environ, PGPASSWORD=PASSWORD, PGCONNECT_TIMEOUT="10")
    args = ["psql", f"host=127.0.0.1 port={port} user=weir dbname=lake sslmode=require", "-X",
            "-A", *(["-t"] if tuples_only else [])]
    for command in commands:
        args += ["-c", command]
    run = subprocess.run(args, env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and run.stderr == "", (commands, run.stderr)
    return run.stdout.splitlines()


def pg_size_pretty(size: int) -> str:
    """PostgreSQL's pg_size_pretty of a non-negative size (src/backend/utils/adt/dbsize.c;
    weir's is compared with PostgreSQL's own in test_serve_pg_names.py)."""
    if size < 10240:
        return f"{size} bytes"
    size //= 512  # half kilobytes
    for unit in ("kB", "MB", "GB", "TB"):
        if size < 20479:
            return f"{(size + 1) // 2} {unit}"
        size //= 1024
    return f"{(size + 1) // 2} PB"


def test_psql_verbose_listings_roles_types_and_expanded_output(served_catalog, tmp_path):
    port = served_catalog
    events_bytes = sum(f.stat().st_size for f in (tmp_path / "lake" / "data").rglob("*.parquet")
                       if "events" in f.parts)
    assert events_bytes > 0
    # \d+: column, type, collation, nullable, default, storage, compression, stats target,
    # description; the footer names the table access method as PostgreSQL's does.
    storage = {name: "main" if type_.startswith("numeric") else
               "extended" if type_ in EXTENDED else "plain" for name, type_ in EVENTS_COLUMNS}
    assert backslash(port, r"\d+ events") == [
        f"{name}|{type_}||{'not null' if name == 'id' else ''}||{storage[name]}|||"
        for name, type_ in EVENTS_COLUMNS]
    described = psql_output(port, r"\d+ events", tuples_only=False)
    assert described[:2] == ['Table "public.events"',
                             "Column|Type|Collation|Nullable|Default|Storage|Compression|"
                             "Stats target|Description"]
    assert described[-1] == "Access method: heap"
    assert psql_output(port, r"\d+ v1", tuples_only=False)[-2:] == [
        "View definition:", "SELECT 1 AS one;"]
    assert backslash(port, r"\sv v1") == ["CREATE OR REPLACE VIEW public.v1 AS", "SELECT 1 AS one"]
    assert backslash(port, r"\df+") == []
    # The size is the table's data files', as PostgreSQL's pg_size_pretty prints it.
    assert backslash(port, r"\dt+") == [
        f"public|events|table|weir|permanent|heap|{pg_size_pretty(events_bytes)}|"]
    assert backslash(port, r"\dv+") == ["public|v1|view|weir|permanent||"]
    assert backslash(port, r"\l+") == ["lake|weir|UTF8|C|C||libc|||pg_default|"]
    # No user-defined types (as in a new PostgreSQL database); the built-in ones under pg_catalog.
    assert backslash(port, r"\dT") == []
    builtin = backslash(port, r"\dT pg_catalog.*")
    for line in ["pg_catalog|bigint|", "pg_catalog|text|", "pg_catalog|numeric|",
                 "pg_catalog|timestamp with time zone|", "pg_catalog|uuid|"]:
        assert line in builtin, (line, builtin)
    assert "pg_catalog|integer[]|" not in builtin  # psql leaves out array types
    # One role, the session's user.
    assert backslash(port, r"\du") == ["weir|Superuser, Create role, Create DB|{}"]
    assert backslash(port, r"\du+") == ["weir|Superuser, Create role, Create DB|{}|"]
    # \x: one "column|value" line per column, records separated by an empty line.
    assert psql_output(port, r"\x", "SELECT id, name, even, amount FROM events "
                                     "WHERE id IN (4, 7) ORDER BY id") == [
        "Expanded display is on.",
        "id|4", "name|name 4", "even|t", "amount|", "",
        "id|7", "name|name 7", "even|f", "amount|"]
    assert psql_output(port, r"\x", "SELECT count(*) AS n FROM events") == [
        "Expanded display is on.", "n|100"]


# Statements that would change weir's catalog for every session. The catalog database is
# attached READ_ONLY, so DuckDB refuses each with its read-only error (25006,
# read_only_sql_transaction).
CATALOG_WRITES = [
    "DROP VIEW weir_catalog.weir_pg_catalog.pg_class",
    'DROP VIEW IF EXISTS "weir_catalog"."weir_pg_catalog"."pg_namespace"',
    "DROP SCHEMA weir_catalog.weir_pg_catalog CASCADE",
    "DROP SCHEMA weir_catalog.weir_information_schema CASCADE",
    "CREATE OR REPLACE VIEW weir_catalog.weir_pg_catalog.pg_class AS SELECT 1 AS oid",
    "CREATE TABLE weir_catalog.weir_pg_catalog.extra (i INTEGER)",
    "CREATE SCHEMA weir_catalog.extra",
    "ALTER VIEW weir_catalog.weir_information_schema.tables RENAME TO gone",
    "COMMENT ON VIEW weir_catalog.weir_pg_catalog.pg_class IS 'gone'",
    "DROP MACRO weir_catalog.weir_pg_catalog.format_type",
    "CREATE OR REPLACE MACRO weir_catalog.weir_pg_catalog.version() AS 'gone'",
]


def test_sessions_cannot_change_the_catalog(served_catalog):
    port = served_catalog
    for sql in CATALOG_WRITES:
        run = psql(port, sql)
        assert run.returncode != 0, sql
        assert "25006" in run.stderr and "read-only mode" in run.stderr, (sql, run.stderr)
    # pg_catalog names as clients write them never reach weir's catalog (DuckDB's own refuses).
    for sql in ["DROP VIEW pg_catalog.pg_class", "DROP VIEW pg_class",
                "DROP VIEW information_schema.tables"]:
        assert psql(port, sql).returncode != 0, sql
    # Every session, new ones included, still lists the lake.
    assert backslash(port, r"\dt") == ["public|events|table|weir"]
    assert backslash(port, r"\dn") == ["other|weir", "public|weir"]
    assert backslash(port, r"\d other.o2") == ["x|integer|||"]


def test_sessions_cannot_detach_the_catalog(served_catalog):
    port = served_catalog
    for sql in ["DETACH weir_catalog", "DETACH lake", "DETACH DATABASE IF EXISTS memory"]:
        run = psql(port, sql)
        assert run.returncode != 0 and "42501" in run.stderr, (sql, run.stderr)
    assert backslash(port, r"\dt") == ["public|events|table|weir"]


def test_pgjdbc_prepared_statements_batches_and_metadata(served_catalog):
    jars = sorted((DEPS / "clients" / "jdbc").glob("postgresql-*.jar"))
    if shutil.which("java") is None or not jars:
        pytest.fail("java or the pgjdbc jar missing: run scripts/setup")
    port = served_catalog
    url = f"jdbc:postgresql://127.0.0.1:{port}/lake?sslmode=require&prepareThreshold=1"
    run = subprocess.run(["java", "-cp", str(jars[-1]), str(JDBC_CLIENT), url, "weir", PASSWORD,
                          "events"], capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr
    lines = [line.split("\t") for line in run.stdout.splitlines()]

    # One server-side prepared statement reused ten times with new values.
    assert [line for line in lines if line[0] == "prepared"] == [
        ["prepared", str(i), f"{i}=name {i}"] + ([f"{i * 10}=name {i * 10}"] if i < 10 else [])
        for i in range(1, 11)]
    # Ten inserts in one batch, each counted once; all ten rows are there afterwards.
    assert ["batch", "10", "10"] in lines
    assert ["count", "10"] in lines
    assert ["product", "PostgreSQL", "15"] in lines
    # DatabaseMetaData: schemas, tables and views of public, columns with JDBC types.
    assert [line[1] for line in lines if line[0] == "schema"] == [
        "information_schema", "other", "pg_catalog", "public"]
    assert [line[1:] for line in lines if line[0] == "table"] == [
        ["public", "events", "TABLE"], ["public", "v1", "VIEW"]]
    # name, java.sql.Types, TYPE_NAME, COLUMN_SIZE, DECIMAL_DIGITS, NULLABLE, ORDINAL_POSITION
    # (as pgjdbc reports them for PostgreSQL's own columns of these types).
    assert [line[2:] for line in lines if line[0] == "column"] == [
        ["id", "-5", "int8", "19", "0", "0", "1"],
        ["name", "12", "text", "2147483647", "0", "1", "2"],
        ["even", "-7", "bool", "1", "0", "1", "3"],
        ["score", "8", "float8", "17", "17", "1", "4"],
        ["ts", "93", "timestamptz", "35", "6", "1", "5"],
        ["amount", "2", "numeric", "18", "3", "1", "6"],
        ["tags", "2003", "_int4", "10", "0", "1", "7"],
        ["small", "5", "int2", "5", "0", "1", "8"],
        ["i", "4", "int4", "10", "0", "1", "9"],
        ["r", "7", "float4", "8", "8", "1", "10"],
        ["d", "91", "date", "13", "0", "1", "11"],
        ["t", "92", "time", "15", "6", "1", "12"],
        ["plain", "93", "timestamp", "29", "6", "1", "13"],
        ["iv", "1111", "interval", "49", "6", "1", "14"],
        ["u", "1111", "uuid", "2147483647", "0", "1", "15"],
        ["b", "-2", "bytea", "2147483647", "0", "1", "16"],
        ["j", "1111", "json", "2147483647", "0", "1", "17"],
        ["names", "2003", "_text", "2147483647", "0", "1", "18"],
    ]


def parse_slt(path: Path) -> list[dict]:
    """Blocks of a sqllogictest-style file: statement ok / statement error CODE / query."""
    blocks, lines, i = [], path.read_text().splitlines(), 0
    while i < len(lines):
        line = lines[i]
        if not line.strip() or line.startswith("#"):
            i += 1
            continue
        start, head = i + 1, line.split()
        body = []
        i += 1
        while i < len(lines) and lines[i].strip() and lines[i] != "----":
            body.append(lines[i])
            i += 1
        expected = None
        if i < len(lines) and lines[i] == "----":
            expected = []
            i += 1
            while i < len(lines) and lines[i].strip():
                expected.append(lines[i])
                i += 1
        assert head[0] in ("statement", "query"), f"{path.name}:{start}: {line}"
        blocks.append({"line": start, "kind": head, "sql": "\n".join(body),
                       "expected": expected})
    return blocks


def run_slt(conn, path: Path) -> list[str]:
    """Runs every block of `path` on `conn`; returns the mismatches."""
    import psycopg

    failures = []
    for block in parse_slt(path):
        where = f"{path.name}:{block['line']}"
        try:
            cur = conn.execute(block["sql"])
        except psycopg.Error as error:
            if block["kind"][:2] == ["statement", "error"] and error.sqlstate == block["kind"][2]:
                continue
            failures.append(f"{where}: {error.sqlstate} {error}")
            continue
        if block["kind"][0] == "statement":
            if block["kind"][1] != "ok":
                failures.append(f"{where}: succeeded, expected {block['kind'][1:]}")
            continue
        result = cur.pgresult
        rows = ["|".join("NULL" if (value := result.get_value(r, c)) is None
                         else value.decode() for c in range(result.nfields))
                for r in range(result.ntuples)]
        if rows != block["expected"]:
            failures.append(f"{where}: got {rows}, expected {block['expected']}")
    return failures


@pytest.mark.parametrize("path", SQL_FILES, ids=[p.name for p in SQL_FILES])
def test_sql_files_through_psycopg(served_catalog, path):
    import psycopg

    dsn = (f"host=127.0.0.1 port={served_catalog} user=weir dbname=lake sslmode=require "
           f"password='{PASSWORD}'")
    with psycopg.connect(dsn, autocommit=True) as conn:
        assert run_slt(conn, path) == []
