"""Proofs 2, 3 and 7 of the ingest issue: kills, rebalances, zombie writers and SIGTERM never
lose or duplicate a record."""

from __future__ import annotations

import random
import signal
import time

import pytest

from tests.e2e.weir_run import (
    Lake,
    WeirIngest,
    create_topic,
    event_records,
    produce,
    produce_slowly,
    unique,
    wait_for,
)

# A killed member's partitions move after its session times out; keep that short. Under the
# classic protocol the client sets it; under KIP-848 (group.protocol=consumer) the broker does
# (the harness's broker sets 6 s and 1 s for such groups).
# Flushes stream in parts (flush.part_bytes) well below their size, so kills, revocations and
# fences land mid-flush with parts already in open files.
FAST_GROUP = {"WEIR_FLUSH_MAX_BYTES": "2MiB", "WEIR_FLUSH_PART_BYTES": "256KiB"}
FAST_GROUP_ARGS = ("--set", "kafka.properties.session.timeout.ms=6000",
                   "--set", "kafka.properties.heartbeat.interval.ms=1000")
GROUP_PROTOCOL_ARGS = {
    "classic": FAST_GROUP_ARGS,
    "consumer": ("--set", "kafka.group_protocol=consumer"),
    # The classic protocol with 3 decode workers per process (partition modulo 3).
    "classic-decode3": (*FAST_GROUP_ARGS, "--set", "decode_threads=3"),
}


def assert_exactly(lake: Lake, table: str, n: int) -> None:
    assert lake.scalar(f"SELECT count(*) FROM lake.{table}") == n
    assert lake.scalar(f"SELECT count(DISTINCT id) FROM lake.{table}") == n
    assert lake.scalar(f"SELECT sum(id) FROM lake.{table}") == n * (n - 1) // 2


@pytest.mark.parametrize("protocol", ["classic", "consumer", "classic-decode3"])
def test_kill_loop_with_rebalances_loses_and_duplicates_nothing(kafka, build_dir, tmp_path,
                                                                protocol):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("kills")
    total = 200_000
    create_topic(bootstrap, topic, 8)
    lake = Lake(tmp_path / "lake")
    group = unique("group")
    workers = [WeirIngest(build_dir, lake, bootstrap, topic, "events", group, FAST_GROUP,
                          name=f"w{i}") for i in range(2)]
    for w in workers:
        w.start(*GROUP_PROTOCOL_ARGS[protocol])
    producer = produce_slowly(bootstrap, topic, total, 40)
    rng = random.Random(20261129)
    kills = 0
    try:
        while kills < 20:
            time.sleep(rng.uniform(0.5, 3.0))
            victim = workers[rng.randrange(2)]
            victim.kill()  # SIGKILL: no flush, no goodbye to the group
            kills += 1
            victim.start(*GROUP_PROTOCOL_ARGS[protocol])  # rejoining forces another rebalance
        producer.join(timeout=120)
        assert not producer.is_alive()
        wait_for(lambda: lake.count("events") >= total, 240, "every event committed")
    finally:
        codes = [w.stop() for w in workers]
    assert codes == [0, 0], "\n".join(w.log() for w in workers)
    assert_exactly(lake, "events", total)


def test_zombie_writer_is_fenced_and_nothing_is_duplicated(kafka, build_dir, tmp_path):
    """Two writers that both believe they own every partition (static assignment, the same
    ordinal): whichever commits a range second is refused by the ledger, deletes its files,
    counts the orphans and re-reads from the ledger."""
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("fence")
    total = 20_000
    create_topic(bootstrap, topic, 2)
    lake = Lake(tmp_path / "lake")
    static = {"WEIR_KAFKA_ASSIGNMENT": "static", "WEIR_KAFKA_REPLICA_COUNT": "1",
              "WEIR_KAFKA_ORDINAL": "0"}
    a = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group"), static, "a")
    b = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group"), static, "b")
    a.start()
    b.start()
    try:
        producer = produce_slowly(bootstrap, topic, total, 10)
        producer.join(timeout=120)
        wait_for(lambda: lake.count("events") >= total, 120, "every event committed")
        time.sleep(3)  # both writers see the end of the topic and go idle
        fenced = a.metric("weir_fenced_commits_total") + b.metric("weir_fenced_commits_total")
        orphans = a.metric("weir_orphaned_objects_total") + b.metric("weir_orphaned_objects_total")
        assert fenced >= 1, a.log() + b.log()
        assert orphans >= fenced
    finally:
        assert a.stop() == 0, a.log()
        assert b.stop() == 0, b.log()
    assert_exactly(lake, "events", total)
    # Fenced files were deleted: every Parquet file under the table is referenced.
    on_disk = {p.name for p in (lake.root / "data" / "main" / "events").rglob("*.parquet")}
    listed = {r[0].rsplit("/", 1)[-1] for r in lake.connect().execute(
        "SELECT data_file FROM ducklake_list_files('lake', 'events')").fetchall()}
    assert on_disk == listed


def test_sigterm_under_load_commits_everything_consumed(kafka, build_dir, tmp_path):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("drain")
    total = 100_000
    create_topic(bootstrap, topic, 4)
    lake = Lake(tmp_path / "lake")
    group = unique("group")
    # Long flush interval and size: at SIGTERM the buffer holds everything consumed so far.
    # Parts of 256 KiB stream into the open files meanwhile; only the drain commits them.
    settings = {"WEIR_FLUSH_INTERVAL": "10m", "WEIR_FLUSH_MAX_BYTES": "1GiB",
                "WEIR_FLUSH_PART_BYTES": "256KiB"}
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", group, settings).start()
    producer = produce_slowly(bootstrap, topic, total, 15)
    wait_for(lambda: weir.metric("weir_records_consumed_total") >= 20_000, 60,
             "records consumed under load")
    assert lake.count("events") == 0  # nothing flushed yet
    started = time.monotonic()
    weir.signal(signal.SIGTERM)
    code = weir.process.wait(timeout=96)
    elapsed = time.monotonic() - started
    assert code == 0, weir.log()
    assert elapsed < 96
    assert "stopped cleanly" in weir.log()
    # Everything consumed was committed: the ledger and the table agree, and the rows are the
    # contiguous prefix of each partition the ledger names.
    committed = lake.count("events")
    assert committed >= 20_000
    ledger = lake.scalar(
        f"SELECT sum(next_offset) FROM sqlite_scan('{lake.sqlite_path}', 'weir_offset_ledger')")
    assert ledger == committed
    producer.join(timeout=120)
    # A restart picks up exactly where the drain ended.
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", group,
                      {"WEIR_FLUSH_INTERVAL": "1s"}).start()
    try:
        wait_for(lambda: lake.count("events") >= total, 120, "the rest of the topic")
    finally:
        assert weir.stop() == 0, weir.log()
    assert_exactly(lake, "events", total)


def test_memory_budget_pauses_consumption_and_loses_nothing(kafka, build_dir, tmp_path):
    """A budget far below one flush's size: consumption pauses at the budget (the buffer is
    flushed early), resumes below it, and every event lands once."""
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("budget")
    total = 150_000
    create_topic(bootstrap, topic, 4)
    produce(bootstrap, topic, event_records(0, total))
    lake = Lake(tmp_path / "lake")
    # Flushes written whole (flush.part_bytes 0), the way routed and sorted datasets write
    # theirs: a streamed flush never holds the budget (its parts go to the open files).
    settings = {"WEIR_MEMORY_BUDGET": "16MiB", "WEIR_FLUSH_MAX_BYTES": "1GiB",
                "WEIR_FLUSH_INTERVAL": "10m", "WEIR_FLUSH_PART_BYTES": "0"}
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group"),
                      settings).start()
    try:
        # The budget, not the (distant) flush triggers, forces the first flush; the rest is
        # committed by the drain at SIGTERM.
        wait_for(lambda: weir.metric("weir_records_consumed_total") >= total
                 or not weir.alive(), 180, "every event consumed under the budget")
        assert weir.alive(), weir.log()
        assert lake.count("events") > 0
    finally:
        assert weir.stop() == 0, weir.log()
    log = weir.log_path.read_text()
    # The buffers' share: 16 MiB less the Kafka prefetch's two sixteenths (at least 4 MiB each).
    assert "memory budget of the buffers (8388608 bytes) reached" in log
    assert "partitions resumed" in log
    assert_exactly(lake, "events", total)
