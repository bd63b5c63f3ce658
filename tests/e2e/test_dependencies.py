"""The pinned dependencies, checked from Python against the real components."""

from __future__ import annotations

import os
import subprocess
from datetime import datetime, timedelta, timezone

import duckdb
import pytest

ROWS = 10000


def expected_row(i: int):
    """Row i of the table written by tests/it/parquet_roundtrip_test.cc (keep in step)."""
    return (
        i,
        i % 1000 - 500,
        i * 0.25 - 100.0,
        None if i % 7 == 0 else f"région-{i}",
        i % 3 == 0,
        datetime(1970, 1, 1, tzinfo=timezone.utc)
        + timedelta(microseconds=1700000000000000 + i * 1000003),
    )


def test_duckdb_reads_the_parquet_file_written_by_arrow_cpp(build_dir, duck, tmp_path):
    run = subprocess.run(
        [str(build_dir / "tests" / "it" / "parquet_roundtrip_test")],
        env=dict(os.environ, WEIR_TEST_OUTPUT_DIR=str(tmp_path)),
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    path = tmp_path / "parquet" / "arrow_roundtrip.parquet"

    con = duck
    rows = con.execute(
        "SELECT id, small, score, name, flag, ts FROM read_parquet(?) ORDER BY id", [str(path)]
    ).fetchall()
    assert len(rows) == ROWS
    mismatches = [(i, row) for i, row in enumerate(rows) if row != expected_row(i)]
    assert mismatches == []

    types = dict(
        con.execute("SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet(?))",
                    [str(path)]).fetchall()
    )
    assert types == {
        "id": "BIGINT",
        "small": "INTEGER",
        "score": "DOUBLE",
        "name": "VARCHAR",
        "flag": "BOOLEAN",
        "ts": "TIMESTAMP WITH TIME ZONE",
    }
    codecs = con.execute(
        "SELECT DISTINCT compression, stats_min IS NOT NULL FROM parquet_metadata(?) "
        "WHERE path_in_schema = 'id'", [str(path)]
    ).fetchall()
    assert codecs == [("ZSTD", True)]


def test_duckdb_loads_every_pinned_extension_from_local_files(duck):
    con = duck
    names = ["ducklake", "sqlite_scanner", "postgres_scanner", "httpfs", "aws", "azure",
             "iceberg", "avro", "icu"]
    for name in names:
        con.execute(f"LOAD {name}")
    loaded = con.execute(
        "SELECT extension_name, extension_version FROM duckdb_extensions() "
        "WHERE loaded AND extension_name IN (SELECT unnest(?)) ORDER BY 1", [names]
    ).fetchall()
    assert [n for n, _ in loaded] == sorted(names)
    assert duckdb.__version__ == "1.5.5"


def test_duckdb_ducklake_with_a_postgres_catalog(postgres, duck, tmp_path):
    """The PostgreSQL catalog flavour of DuckLake works against the harness PostgreSQL."""
    con = duck
    con.execute("LOAD ducklake")
    con.execute("LOAD postgres_scanner")
    con.execute(
        f"ATTACH 'ducklake:postgres:{postgres['WEIR_TEST_PG_DSN']}' AS lake "
        f"(DATA_PATH '{tmp_path}/data/', METADATA_SCHEMA 'lake_{os.getpid()}')"
    )
    con.execute("CREATE TABLE lake.t AS SELECT i AS id, i * 2 AS twice FROM range(5000) r(i)")
    assert con.execute("SELECT count(*), count(DISTINCT id), sum(twice) FROM lake.t").fetchone() \
        == (5000, 5000, 2 * sum(range(5000)))


@pytest.mark.parametrize("args,code", [(["--version"], 0), (["--help"], 0), (["wal"], 1), (["ingest"], 1),
                                       (["nonsense"], 2)])
def test_weir_binary_runs_without_environment_variables(build_dir, args, code):
    """The rpath finds libduckdb, libarrow and librdkafka: no LD_LIBRARY_PATH needed, and the
    librdkafka loaded is the one scripts/setup built (versions.env), not the system's."""
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    run = subprocess.run([str(build_dir / "weir"), *args], env=env, capture_output=True,
                         text=True)
    assert run.returncode == code, run.stderr
    if args == ["--version"]:
        assert run.stdout.splitlines()[1].strip() == (
            "DuckDB v1.5.5, Arrow 26.0.1, librdkafka 2.12.1"
        )
