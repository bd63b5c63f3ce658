"""Parquet-native bloom filters of `bloom_filter_columns` (issue 13), in the files landed by
direct mode and by WAL mode (the segment is written with them and uploaded as is), read back by
DuckDB: `parquet_metadata` shows a filter on exactly the listed columns (none on a boolean, none
at all without the setting) and `parquet_bloom_probe` never excludes a value a row group holds
and excludes values no row group holds (a bloom filter's 5 % false positives aside)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from tests.e2e.test_ingest_wal import wal_settings
from tests.e2e.weir_run import Lake, WeirIngest, create_topic, event_records, produce, unique, \
    wait_for

TOTAL = 6_000
ABSENT = 40  # values no file holds, probed per file


def landed_files(lake: Lake) -> list[str]:
    with lake.connect() as con:
        return [r[0] for r in con.execute(
            "SELECT data_file FROM ducklake_list_files('lake', 'events')").fetchall()]


def filtered_columns(con: duckdb.DuckDBPyConnection, path: str) -> dict[str, bool]:
    """Per column of the file: does every row group carry a bloom filter for it."""
    rows = con.execute(
        "SELECT path_in_schema, bool_and(bloom_filter_offset IS NOT NULL), "
        "bool_or(bloom_filter_offset IS NOT NULL) FROM parquet_metadata(?) GROUP BY 1",
        [path]).fetchall()
    for column, every, some in rows:
        assert every == some, f"{path}: {column} has a filter in some row groups only"
    return {column: every for column, every, _ in rows}


def excluded(con: duckdb.DuckDBPyConnection, path: str, column: str, value) -> bool:
    """True when the file's bloom filters say no row group holds `value`."""
    return con.execute(
        "SELECT bool_and(bloom_filter_excludes) FROM parquet_bloom_probe(?, ?, ?)",
        [path, column, value]).fetchone()[0]


def run(build_dir: Path, kafka: dict, lake: Lake, mode: str, bloom: bool) -> None:
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique(f"bloom_{mode}")
    create_topic(bootstrap, topic, 2)
    produce(bootstrap, topic, event_records(0, TOTAL))
    settings = wal_settings(lake.root) if mode == "wal" else {"WEIR_FLUSH_INTERVAL": "1s"}
    if bloom:
        settings["WEIR_BLOOM_FILTER_COLUMNS"] = "id,name,ok"  # ok: a boolean, gets none
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group"),
                      settings).start()
    try:
        wait_for(lambda: lake.count("events") >= TOTAL or not weir.alive(), 180,
                 "every event committed")
    finally:
        assert weir.stop() == 0, weir.log()
    assert lake.scalar("SELECT count(*) FROM lake.events") == TOTAL
    assert lake.scalar("SELECT count(DISTINCT id) FROM lake.events") == TOTAL


@pytest.mark.parametrize("mode", ["direct", "wal"])
def test_listed_columns_carry_bloom_filters_that_answer_probes(kafka, build_dir, tmp_path, mode):
    lake = Lake(tmp_path / "lake")
    run(build_dir, kafka, lake, mode, bloom=True)
    files = landed_files(lake)
    assert files
    if mode == "wal":
        assert all(Path(f).name.startswith("wal-") for f in files), files
    con = duckdb.connect()
    seen = 0
    for path in files:
        columns = filtered_columns(con, path)
        assert {c for c, has in columns.items() if has} == {"id", "name"}, (path, columns)
        ids = [r[0] for r in con.execute("SELECT id FROM read_parquet(?)", [path]).fetchall()]
        seen += len(ids)
        # No false negatives: every value the file holds may be there, for both columns.
        for i in ids[:: max(1, len(ids) // 100)]:
            assert not excluded(con, path, "id", i), (path, i)
            assert not excluded(con, path, "name", f"user-{i} \"quoted\" é"), (path, i)
        # Absent values are excluded, but for the filter's false positives (5 % each).
        absent_ids = sum(excluded(con, path, "id", 10**12 + k) for k in range(ABSENT))
        absent_names = sum(excluded(con, path, "name", f"nobody-{k}") for k in range(ABSENT))
        assert absent_ids >= ABSENT * 3 // 4 and absent_names >= ABSENT * 3 // 4, \
            (path, absent_ids, absent_names)
    assert seen == TOTAL


@pytest.mark.parametrize("mode", ["direct", "wal"])
def test_files_without_the_setting_carry_no_bloom_filter(kafka, build_dir, tmp_path, mode):
    lake = Lake(tmp_path / "lake")
    run(build_dir, kafka, lake, mode, bloom=False)
    files = landed_files(lake)
    assert files
    con = duckdb.connect()
    for path in files:
        columns = filtered_columns(con, path)
        assert "id" in columns and not any(columns.values()), (path, columns)
