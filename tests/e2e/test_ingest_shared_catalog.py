"""Proofs 4 and 8 of the ingest issue: several writers on one PostgreSQL catalog, and the
catalog going away for 30 seconds in the middle of a run."""

from __future__ import annotations

import threading
import time

from tests.e2e.weir_run import (
    Lake,
    WeirIngest,
    create_topic,
    event_records,
    fresh_postgres_database,
    produce,
    unique,
    wait_for,
)
from tests.harness.components import Postgres

SMALL_FLUSHES = {"WEIR_FLUSH_MAX_BYTES": "256KiB", "WEIR_FLUSH_INTERVAL": "500ms"}


def test_four_weir_processes_and_a_duckdb_writer_share_one_catalog(
    kafka, postgres, build_dir, tmp_path
):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    lake = Lake(tmp_path / "lake", catalog="postgres")
    lake.postgres_dsn = fresh_postgres_database(postgres)
    per_topic = 20_000
    topics = [unique(f"shared{i}") for i in range(4)]
    for topic in topics:
        create_topic(bootstrap, topic, 2)
    writers = [
        WeirIngest(build_dir, lake, bootstrap, topic, f"events{i}", unique("group"),
                   SMALL_FLUSHES, name=f"w{i}").start()
        for i, topic in enumerate(topics)
    ]
    producers = [
        threading.Thread(target=produce, args=(bootstrap, topic, event_records(0, per_topic)))
        for topic in topics
    ]
    for p in producers:
        p.start()
    # Meanwhile DuckDB inserts into the first weir table through the ducklake extension.
    duck_rows = 0
    duck_errors = []
    wait_for(lambda: lake.count("events0") > 0, 60, "weir's first table")
    con = lake.connect(read_only=False)
    con.execute("SET ducklake_max_retry_count = 100")
    for batch in range(10):
        try:
            con.execute(f"INSERT INTO lake.events0 (id, name) SELECT -1 - range - {batch * 100}, "
                        "'duckdb' FROM range(100)")
            duck_rows += 100
        except Exception as error:  # noqa: BLE001 - reported below
            duck_errors.append(str(error))
        time.sleep(0.2)
    con.close()
    for p in producers:
        p.join(timeout=120)
    try:
        for i in range(4):
            expected = per_topic + (duck_rows if i == 0 else 0)
            wait_for(lambda i=i, e=expected: lake.count(f"events{i}") >= e, 180,
                     f"events{i} complete")
    finally:
        codes = [w.stop() for w in writers]
    assert codes == [0, 0, 0, 0], "\n".join(w.log() for w in writers)
    assert duck_errors == []
    assert duck_rows == 1000
    for i in range(4):
        assert lake.scalar(f"SELECT count(*) FROM lake.events{i} WHERE id >= 0") == per_topic
        assert lake.scalar(f"SELECT count(DISTINCT id) FROM lake.events{i} WHERE id >= 0") == per_topic
    assert lake.scalar("SELECT count(*) FROM lake.events0 WHERE id < 0") == 1000
    # Snapshot ids are dense: no gaps, no duplicates, whoever committed.
    assert lake.scalar("SELECT count(*) = max(snapshot_id) + 1 AND count(DISTINCT snapshot_id) "
                       "= count(*) FROM lake.snapshots()") is True
    for w in writers:
        assert " error " not in w.log_path.read_text(), w.log()


def test_catalog_outage_of_30_seconds_loses_and_duplicates_nothing(kafka, build_dir, tmp_path):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    catalog = Postgres(tmp_path / "pg")
    catalog.start()
    try:
        lake = Lake(tmp_path / "lake", catalog="postgres")
        lake.postgres_dsn = catalog.settings()["WEIR_TEST_PG_DSN"]
        topic = unique("outage")
        total = 60_000
        create_topic(bootstrap, topic, 4)
        weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group"),
                          {"WEIR_FLUSH_INTERVAL": "1s"}).start()
        try:
            produce(bootstrap, topic, event_records(0, 20_000))
            wait_for(lambda: lake.count("events") == 20_000, 60, "the first part")
            catalog.stop()
            produce(bootstrap, topic, event_records(20_000, 20_000))
            time.sleep(30)
            assert weir.alive(), weir.log()  # waiting, not dead
            catalog.restart()
            produce(bootstrap, topic, event_records(40_000, 20_000))
            wait_for(lambda: lake.count("events") >= total, 180, "every event after the outage")
            assert weir.metric("weir_commit_retries_total") >= 1
        finally:
            code = weir.stop()
        assert code == 0, weir.log()
        assert lake.scalar("SELECT count(*) FROM lake.events") == total
        assert lake.scalar("SELECT count(DISTINCT id) FROM lake.events") == total
    finally:
        catalog.stop()
