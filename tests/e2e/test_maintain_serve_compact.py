"""`weir maintain --serve` compacts on its schedule (issue 16), for DuckLake and Iceberg: the
small tier (`maintain.compact.interval`) merges only the files below `maintain.tiers.small`,
the medium tier (`maintain.compact.medium_interval`) the medium ones too; each pass is counted
exactly (runs, files and bytes replaced and written, by action), the lake gauges show the table
as the pass left it, and the rows are the same, read by DuckDB (DuckLake) or pyiceberg
(Iceberg): count, distinct ids and a hash of every column of every row."""

from __future__ import annotations

import types

import pytest

from tests.e2e.test_ingest_iceberg import IcebergLake
from tests.e2e.test_maintain_compact import env_of, fingerprint, ingest, plain_duckdb, \
    write_source
from tests.e2e.test_maintain_serve import MaintainServe, stop_cleanly
from tests.e2e.weir_run import Lake, wait_for

SMALL_ROWS = 4000  # in flushes of 40 rows: 100 flushes, 2 files each (partitioned by grp)
MEDIUM_ROWS = 4000  # in one flush: 2 files of 2,000 rows each
TIERS = {"WEIR_MAINTAIN_TARGET_FILE_SIZE": "1MiB", "WEIR_MAINTAIN_TIERS_SMALL": "8KiB",
         "WEIR_MAINTAIN_TIERS_LARGE": "512KiB", "WEIR_MAINTAIN_EXPIRE_INTERVAL": "0",
         "WEIR_MAINTAIN_ORPHANS_INTERVAL": "0", "WEIR_LOG_LEVEL": "info"}


def live_files(lake) -> list[tuple[str, int]]:
    """(path, bytes) of the table's current data files, as DuckDB or pyiceberg list them."""
    if isinstance(lake, Lake):
        con = lake.connect()
        try:
            return con.execute("SELECT data_file, data_file_size_bytes "
                               "FROM ducklake_list_files('lake', 'events')").fetchall()
        finally:
            con.close()
    return [(f["file_path"].removeprefix("file://"), f["file_size_in_bytes"])
            for f in lake.table("events").inspect.files().to_pylist()]


def rows(lake) -> tuple:
    if isinstance(lake, Lake):
        con = lake.connect()
        try:
            return fingerprint(con, "lake.events")
        finally:
            con.close()
    con = plain_duckdb()
    con.register("t", lake.table("events").scan().to_arrow())
    return fingerprint(con, "t")


def compaction(serve: MaintainServe, action: str) -> dict:
    return {what: serve.metric(f"weir_maintain_compaction_{what}_total", action=action)
            for what in ("runs", "runs_given_up", "conflicts", "files_replaced",
                         "bytes_replaced", "files_written", "bytes_written")}


@pytest.mark.parametrize("fmt", ["ducklake", "iceberg"])
def test_serve_compacts_small_files_on_their_interval_and_medium_ones_on_theirs(
        build_dir, tmp_path, fmt):
    lake = Lake(tmp_path / "lake") if fmt == "ducklake" else IcebergLake(tmp_path / "lake")
    lake.root.mkdir(parents=True)
    env = env_of(lake)
    ingest(build_dir, env, lake.root, write_source(tmp_path / "small.jsonl", 0, SMALL_ROWS))
    small = live_files(lake)
    assert len(small) == 2 * SMALL_ROWS // 40
    assert all(size < 8 * 1024 for _, size in small)
    one_flush = dict(env, WEIR_FLUSH_MAX_BYTES="16MiB", WEIR_KAFKA_CONSUME_BATCH_SIZE="100000")
    for k in range(2):
        ingest(build_dir, one_flush, lake.root,
               write_source(tmp_path / f"medium{k}.jsonl", SMALL_ROWS + k * MEDIUM_ROWS,
                            MEDIUM_ROWS))
    files = live_files(lake)
    medium = [f for f in files if f not in small]
    assert len(medium) == 4 and all(8 * 1024 <= size < 512 * 1024 for _, size in medium), medium
    total = SMALL_ROWS + 2 * MEDIUM_ROWS
    before = rows(lake)
    assert before[:3] == (total, total, total * (total - 1) // 2)
    ingest_like = types.SimpleNamespace(binary=build_dir / "weir", lake=lake, env=env)

    # The small tier only: each partition's 100 small files become one; the medium ones stay.
    serve = MaintainServe(ingest_like, dict(TIERS, WEIR_MAINTAIN_COMPACT_INTERVAL="1h",
                                            WEIR_MAINTAIN_COMPACT_MEDIUM_INTERVAL="0")).start()
    try:
        wait_for(lambda: serve.metric("weir_maintain_runs_total", action="compact",
                                      outcome="ok") == 1 or not serve.alive(), 120,
                 "the small tier's pass")
        serve.wait_gauge("weir_lake_data_files", 6, "the metrics after the pass")
        counted = compaction(serve, "compact")
        assert serve.metric("weir_maintain_runs_total", action="compact_medium") == 0
    finally:
        stop_cleanly(serve)
    after_small = live_files(lake)
    written = [f for f in after_small if f not in files]
    assert counted == {"runs": 2, "runs_given_up": 0, "conflicts": 0,
                       "files_replaced": len(small),
                       "bytes_replaced": sum(s for _, s in small),
                       "files_written": 2, "bytes_written": sum(s for _, s in written)}
    assert sorted(f for f in after_small if f in files) == sorted(medium)
    assert rows(lake) == before

    # The medium tier: the three files of each partition (two medium, one merged) become one.
    serve = MaintainServe(ingest_like, dict(TIERS, WEIR_MAINTAIN_COMPACT_INTERVAL="1h",
                                            WEIR_MAINTAIN_COMPACT_MEDIUM_INTERVAL="1h")).start()
    try:
        wait_for(lambda: serve.metric("weir_maintain_runs_total", action="compact_medium",
                                      outcome="ok") == 1 or not serve.alive(), 120,
                 "the medium tier's pass")
        serve.wait_gauge("weir_lake_data_files", 2, "the metrics after the pass")
        assert serve.gauge("weir_lake_rows") == total
        small_pass = compaction(serve, "compact")
        counted = compaction(serve, "compact_medium")
    finally:
        stop_cleanly(serve)
    final = live_files(lake)
    assert small_pass["runs"] == 0 and small_pass["files_replaced"] == 0
    assert counted == {"runs": 2, "runs_given_up": 0, "conflicts": 0, "files_replaced": 6,
                       "bytes_replaced": sum(s for _, s in after_small),
                       "files_written": 2, "bytes_written": sum(s for _, s in final)}
    assert rows(lake) == before
    con = plain_duckdb()
    for path, _ in final:
        got = con.execute(f"SELECT id, grp FROM read_parquet('{path}')").fetchall()
        assert [r[0] for r in got] == sorted(r[0] for r in got), path
        assert len({r[1] for r in got}) == 1, path
    con.close()
