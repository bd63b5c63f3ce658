"""Proof 1 and 6 of the ingest issue: every event lands exactly once with its values, for each
catalog (SQLite, PostgreSQL) and storage (local, S3); DuckDB's own maintenance and writers work
on a table weir wrote."""

from __future__ import annotations

import json

import pytest

from tests.e2e.weir_run import (
    Lake,
    WeirIngest,
    create_topic,
    event,
    event_records,
    fresh_bucket,
    fresh_postgres_database,
    produce,
    unique,
    wait_for,
)

EVENTS = 100_000
PARTITIONS = 8


@pytest.fixture(scope="module")
def events_topic(kafka):
    """One topic with 100,000 events over 8 partitions, read by every variant."""
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("events")
    create_topic(bootstrap, topic, PARTITIONS)
    assert produce(bootstrap, topic, event_records(0, EVENTS)) == EVENTS
    return topic


def expected_aggregates(n: int) -> dict:
    events = [event(i) for i in range(n)]
    return {
        "count": n,
        "ids": n,
        "sum_id": sum(e["id"] for e in events),
        "sum_score": sum(e["score"] for e in events),
        "oks": sum(1 for e in events if e["ok"]),
        "maybe_nulls": sum(1 for e in events if e["maybe"] is None),
        "sum_maybe": sum(e["maybe"] for e in events if e["maybe"] is not None),
    }


@pytest.mark.parametrize(
    "catalog,storage",
    [("sqlite", "local"), ("postgres", "local"), ("sqlite", "s3"), ("postgres", "s3")],
)
def test_every_event_lands_once_with_its_values(
    catalog, storage, events_topic, kafka, postgres, s3, build_dir, tmp_path
):
    lake = Lake(tmp_path / "lake", catalog=catalog, storage=storage)
    if catalog == "postgres":
        lake.postgres_dsn = fresh_postgres_database(postgres)
    if storage == "s3":
        lake.s3 = fresh_bucket(s3)
    weir = WeirIngest(build_dir, lake, kafka["WEIR_TEST_KAFKA_BOOTSTRAP"], events_topic,
                      "events", unique("group")).start()
    try:
        wait_for(lambda: lake.count("events") >= EVENTS or not weir.alive(), 240,
                 "all events in the table")
        assert weir.alive(), weir.log()
        assert weir.metric("weir_records_consumed_total") == EVENTS
        assert weir.metric("weir_records_written_total") == EVENTS
        assert weir.metric("weir_commits_total") >= 1
        assert weir.http("/healthz") == (200, "ok\n")
        assert weir.http("/readyz") == (200, "ok\n")
    finally:
        code = weir.stop()
    assert code == 0, weir.log()

    con = lake.connect()
    row = con.execute(
        "SELECT count(*), count(DISTINCT id), sum(id), sum(score), count(*) FILTER (ok), "
        "count(*) FILTER (maybe IS NULL), sum(maybe) FROM lake.events"
    ).fetchone()
    want = expected_aggregates(EVENTS)
    assert row == (
        want["count"], want["ids"], want["sum_id"], pytest.approx(want["sum_score"]),
        want["oks"], want["maybe_nulls"], want["sum_maybe"],
    )
    # Inferred types, plus the per-flush commit timestamp.
    types = dict(con.execute(
        "SELECT column_name, data_type FROM information_schema.columns "
        "WHERE table_catalog = 'lake' AND table_name = 'events'").fetchall())
    assert types == {
        "id": "BIGINT", "name": "VARCHAR", "score": "DOUBLE", "ok": "BOOLEAN",
        "props": "VARCHAR", "tags": "VARCHAR", "maybe": "BIGINT",
        "_inserted_at": "TIMESTAMP WITH TIME ZONE",
    }
    # Every value of a sample of rows round-trips exactly (nested values as their JSON text).
    for i in (0, 1, 7, 4242, 99_999):
        got = con.execute(
            "SELECT id, name, score, ok, props, tags, maybe FROM lake.events WHERE id = ?", [i]
        ).fetchall()
        e = event(i)
        assert got == [(e["id"], e["name"], e["score"], e["ok"], json.dumps(e["props"]),
                        json.dumps(e["tags"]), e["maybe"])]
    assert con.execute("SELECT count(*) FROM lake.events WHERE _inserted_at IS NULL").fetchone() == (0,)
    # The ledger ends where the topic ends: the sum of next offsets is the number of events.
    ledger = (
        "SELECT sum(next_offset), count(*) FROM "
        + ("sqlite_scan('{}', 'weir_offset_ledger')".format(lake.sqlite_path)
           if catalog == "sqlite" else
           "postgres_scan('{}', 'public', 'weir_offset_ledger')".format(lake.postgres_dsn))
    )
    assert con.execute(ledger).fetchone() == (EVENTS, PARTITIONS)
    con.close()


def test_duckdb_maintenance_time_travel_and_writes_work_on_weir_tables(
    kafka, build_dir, tmp_path
):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("compat")
    create_topic(bootstrap, topic, 2)
    lake = Lake(tmp_path / "lake")
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group")).start()
    try:
        # Three separate commits.
        for batch in range(3):
            produce(bootstrap, topic, event_records(batch * 1000, 1000))
            wait_for(lambda: lake.count("events") == (batch + 1) * 1000, 60,
                     f"batch {batch} committed")
    finally:
        assert weir.stop() == 0, weir.log()

    con = lake.connect(read_only=False)
    snapshot = con.execute("SELECT max(snapshot_id) FROM lake.snapshots()").fetchone()[0]
    before = con.execute("SELECT count(*), count(DISTINCT id), sum(id), sum(score) "
                         "FROM lake.events").fetchone()
    assert before[:3] == (3000, 3000, sum(range(3000)))
    files_before = con.execute("SELECT count(*) FROM ducklake_list_files('lake', 'events')").fetchone()[0]
    assert files_before >= 3

    con.execute("CALL ducklake_merge_adjacent_files('lake')")
    files_after = con.execute("SELECT count(*) FROM ducklake_list_files('lake', 'events')").fetchone()[0]
    assert files_after < files_before
    assert con.execute("SELECT count(*), count(DISTINCT id), sum(id), sum(score) "
                       "FROM lake.events").fetchone() == before
    # Time travel to the snapshot before the merge.
    assert con.execute(f"SELECT count(*) FROM lake.events AT (VERSION => {snapshot})").fetchone() == (3000,)
    con.execute("CALL ducklake_expire_snapshots('lake', older_than => now())")
    assert con.execute("SELECT count(*), sum(id) FROM lake.events").fetchone() == (3000, sum(range(3000)))
    # A DuckDB writer appends to the same table.
    con.execute("INSERT INTO lake.events (id, name) VALUES (-1, 'from duckdb')")
    assert con.execute("SELECT count(*) FROM lake.events").fetchone() == (3001,)
    con.close()

    # weir keeps committing after DuckDB's maintenance and writes.
    produce(bootstrap, topic, event_records(3000, 500))
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", weir.env["WEIR_KAFKA_GROUP_ID"]).start()
    try:
        wait_for(lambda: lake.count("events") == 3501, 60, "the appended batch")
    finally:
        assert weir.stop() == 0, weir.log()
    assert lake.scalar("SELECT count(DISTINCT id) FROM lake.events") == 3501


def test_partitioned_table_gets_one_file_per_partition_tuple(kafka, build_dir, tmp_path):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("parts")
    create_topic(bootstrap, topic, 2)
    teams = [1, 2, 7, None]
    records = ((None, json.dumps({"id": i, "team_id": teams[i % 4]}).encode())
               for i in range(4000))
    produce(bootstrap, topic, records)
    lake = Lake(tmp_path / "lake")
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group"),
                      {"WEIR_PARTITION_BY": "team_id,year(_inserted_at)",
                       "WEIR_FLUSH_INTERVAL": "3s"}).start()
    try:
        wait_for(lambda: lake.count("events") == 4000, 60, "all rows")
    finally:
        assert weir.stop() == 0, weir.log()
    con = lake.connect()
    assert con.execute("SELECT team_id, count(*) FROM lake.events GROUP BY ALL ORDER BY 1").fetchall() == [
        (1, 1000), (2, 1000), (7, 1000), (None, 1000)]
    year = con.execute("SELECT year(max(_inserted_at)) FROM lake.events").fetchone()[0]
    files = con.execute("SELECT data_file FROM ducklake_list_files('lake', 'events')").fetchall()
    dirs = sorted({f[0].rsplit("/", 1)[0].split("/events/", 1)[1] for f in files})
    assert dirs == [f"team_id={t}/year={year}" for t in ("1", "2", "7", "__HIVE_DEFAULT_PARTITION__")]
    # DuckDB prunes by the partition values weir recorded.
    assert con.execute("SELECT count(*) FROM lake.events WHERE team_id = 7").fetchone() == (1000,)
    plan = "".join(r[1] for r in con.execute(
        "EXPLAIN ANALYZE SELECT count(*) FROM lake.events WHERE team_id = 7").fetchall())
    assert "Total Files Read: 1" in plan or "Scanning Files: 1/" in plan, plan
    con.close()
