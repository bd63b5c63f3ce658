"""What a stall looks like from the outside, in direct and WAL mode alike (issue 29): lag counts
from the offset committed to the lake (not the consumer's position), a flush in flight shows on
/status.json, /status and weir_commit_in_flight_seconds with a warning in the log while the
catalog is locked, and unreachable brokers show on the page, in a gauge and on /readyz."""

from __future__ import annotations

import json
import sqlite3

import pytest

from tests.e2e.test_ingest_wal import wal_settings
from tests.e2e.weir_run import Lake, WeirIngest, create_topic, event_records, produce, unique, \
    wait_for
from tests.harness.components import Kafka

PARTITIONS = 2


def mode_settings(mode: str, lake: Lake) -> dict[str, str]:
    if mode == "wal":
        return wal_settings(lake.root, WEIR_WAL_COMMIT_INTERVAL="1s", WEIR_WAL_MAX_FILE_AGE="1s")
    return {}


def status(weir: WeirIngest) -> dict:
    return json.loads(weir.http("/status.json")[1])


def series_sum(weir: WeirIngest, name: str, topic: str) -> float | None:
    values = [v for k, v in weir.metrics().items()
              if k.startswith(name + "{") and f'topic="{topic}"' in k]
    return sum(values) if len(values) == PARTITIONS else None


@pytest.mark.parametrize("mode", ["direct", "wal"])
def test_a_locked_catalog_shows_as_lake_lag_and_a_flush_in_flight(mode, kafka, build_dir,
                                                                   tmp_path):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("stall")
    create_topic(bootstrap, topic, PARTITIONS)
    assert produce(bootstrap, topic, event_records(0, 1000)) == 1000
    lake = Lake(tmp_path / "lake")
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("g"),
                      mode_settings(mode, lake)).start()
    lock = None
    try:
        wait_for(lambda: lake.count("events") == 1000 or not weir.alive(), 120,
                 "the first events in the lake")
        wait_for(lambda: status(weir)["datasets"][0]["lag_total"] == 0, 30, "no lag", poll_s=1)
        # Another process holds the catalog's write lock (a long transaction, a backup).
        lock = sqlite3.connect(lake.sqlite_path, timeout=30,
                               isolation_level=None, check_same_thread=False)
        lock.execute("BEGIN EXCLUSIVE")
        assert produce(bootstrap, topic, event_records(1000, 400)) == 400

        def stalled() -> bool:
            d = status(weir)["datasets"][0]
            flush = d["flush"]
            return (d["lag_total"] == 400
                    and sum(p["fetch_lag"] for p in d["lag"]) == 0
                    and (flush["in_flight_since_unix_ms"] is not None
                         or flush["failing_since_unix_ms"] is not None))
        wait_for(stalled, 60, "the stall on /status.json", poll_s=1)
        assert series_sum(weir, "weir_consumer_lag", topic) == 400
        assert series_sum(weir, "weir_consumer_fetch_lag", topic) == 0
        wait_for(lambda: "a flush has been in flight for" in weir.log_path.read_text()
                 or "WAL commit failed" in weir.log_path.read_text(), 40,
                 "a warning about the stalled flush")
        page = weir.http("/status")[1]
        assert "a flush in flight for" in page or "failing since" in page, page
        assert status(weir)["datasets"][0]["rows_total"] == 1000  # nothing landed meanwhile
        lock.execute("ROLLBACK")
        lock.close()
        lock = None
        wait_for(lambda: lake.count("events") == 1400 or not weir.alive(), 120,
                 "the held events landed once the lock went")
        wait_for(lambda: status(weir)["datasets"][0]["lag_total"] == 0, 30, "no lag again",
                 poll_s=1)
        d = status(weir)["datasets"][0]
        assert d["flush"]["in_flight_since_unix_ms"] is None
        assert d["flush"]["failing_since_unix_ms"] is None
        assert d["last_commit_unix_ms"] is not None
        assert weir.metric("weir_commit_in_flight_seconds", dataset="events") == 0
        assert weir.alive(), weir.log()
    finally:
        if lock is not None:
            lock.close()
        code = weir.stop()
    assert code == 0, weir.log()
    assert lake.scalar("SELECT count(DISTINCT id) FROM lake.events") == 1400


@pytest.mark.parametrize("mode", ["direct", "wal"])
def test_unreachable_brokers_show_on_the_page_and_readyz(mode, build_dir, tmp_path):
    broker = Kafka(tmp_path / "broker", heap="512m")  # its own broker: this test stops it
    broker.start()
    weir = None
    try:
        bootstrap = broker.settings()["WEIR_TEST_KAFKA_BOOTSTRAP"]
        topic = unique("brokers")
        create_topic(bootstrap, topic, PARTITIONS)
        assert produce(bootstrap, topic, event_records(0, 500)) == 500
        lake = Lake(tmp_path / "lake")
        weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("g"),
                          mode_settings(mode, lake)).start()
        wait_for(lambda: lake.count("events") == 500 or not weir.alive(), 120, "the events")
        wait_for(lambda: weir.http("/readyz")[0] == 200, 30, "ready")
        assert status(weir)["kafka"]["brokers_unreachable_since_unix_ms"] is None
        broker.stop()
        wait_for(lambda: weir.http("/readyz")[0] == 503, 60, "not ready without brokers",
                 poll_s=1)
        code, body = weir.http("/readyz")
        assert "Kafka brokers unreachable for" in body, body
        kafka_state = status(weir)["kafka"]
        assert kafka_state["brokers_unreachable_since_unix_ms"] is not None
        assert kafka_state["error"], kafka_state
        assert 'data-value="unreachable"' in weir.http("/status")[1]
        assert weir.metric("weir_kafka_brokers_unreachable_seconds") > 0
        assert weir.alive(), weir.log()
        broker.restart()
        wait_for(lambda: weir.http("/readyz")[0] == 200, 120, "ready again", poll_s=1)
        assert status(weir)["kafka"]["brokers_unreachable_since_unix_ms"] is None
        assert weir.metric("weir_kafka_brokers_unreachable_seconds") == 0
        assert produce(bootstrap, topic, event_records(500, 500)) == 500
        wait_for(lambda: lake.count("events") == 1000 or not weir.alive(), 120,
                 "the events after the outage")
        assert weir.stop() == 0, weir.log()
        weir = None
        assert lake.scalar("SELECT count(DISTINCT id) FROM lake.events") == 1000
    finally:
        if weir is not None:
            weir.stop()
        broker.stop()
