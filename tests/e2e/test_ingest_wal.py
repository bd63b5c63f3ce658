"""WAL mode end to end (issue 13, `ingest.mode: wal`): records go to local Parquet segments,
rotate to ready_* files (their Kafka offsets committed at the rename), are uploaded and
committed in one commit per dataset per interval, fenced by the offset ledger. Exact counts
and no duplicates for a plain run on DuckLake and on Iceberg (SQL catalog), SIGKILLs at the
chosen points of the protocol (debug builds' WEIR_TEST_WAL_FAULT fault points, src/wal/fault.h)
and at random, a SIGTERM drain under load, and two processes in one group with rebalances."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, TopicPartition

from tests.e2e.test_ingest_iceberg import IcebergLake
from tests.e2e.weir_run import Lake, WeirIngest, create_topic, event_records, produce, \
    produce_slowly, unique, wait_for

# Short intervals for tests: segments rotate at 1 s of age, commits every second or two.
WAL = {
    "WEIR_INGEST_MODE": "wal",
    "WEIR_WAL_MAX_FILE_AGE": "1s",
    "WEIR_WAL_COMMIT_INTERVAL": "2s",
}
FAST_GROUP_ARGS = ("--set", "kafka.properties.session.timeout.ms=6000",
                   "--set", "kafka.properties.heartbeat.interval.ms=1000")


def wal_settings(lake_root: Path, **extra: str) -> dict[str, str]:
    return {**WAL, "WEIR_WAL_DIR": str(lake_root / "wal"), **extra}


def committed(bootstrap: str, group: str, topic: str, partitions: int) -> dict[int, int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        parts = consumer.committed([TopicPartition(topic, p) for p in range(partitions)],
                                   timeout=30)
        return {tp.partition: tp.offset for tp in parts if tp.offset >= 0}
    finally:
        consumer.close()


def wal_files(lake_root: Path) -> list[str]:
    directory = lake_root / "wal" / "events"
    return sorted(p.name for p in directory.iterdir()) if directory.exists() else []


def assert_exactly(lake: Lake, n: int) -> None:
    assert lake.scalar("SELECT count(*) FROM lake.events") == n
    assert lake.scalar("SELECT count(DISTINCT id) FROM lake.events") == n
    assert lake.scalar("SELECT sum(id) FROM lake.events") == n * (n - 1) // 2


def ledger_total(lake: Lake) -> int:
    return lake.scalar(
        f"SELECT sum(next_offset) FROM sqlite_scan('{lake.sqlite_path}', 'weir_offset_ledger')")


def test_a_plain_run_lands_every_event_once_and_empties_the_wal(kafka, build_dir, tmp_path):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("wal_plain")
    total = 20_000
    create_topic(bootstrap, topic, 4)
    produce(bootstrap, topic, event_records(0, total))
    lake = Lake(tmp_path / "lake")
    group = unique("group")
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", group,
                      wal_settings(lake.root)).start()
    try:
        wait_for(lambda: lake.count("events") >= total or not weir.alive(), 180,
                 "every event committed")
        # The local copies go after their commit.
        wait_for(lambda: not [f for f in wal_files(lake.root) if f.startswith("ready_")], 60,
                 "the ready files deleted")
        assert weir.metric("weir_records_written_total") == total
        assert weir.metric("weir_wal_rotations_total") >= 1
        assert weir.metric("weir_commits_total") >= 1
        # Lag, the page and the WAL alert's series, as in direct mode: lag counts from the
        # offsets the lake holds, on every partition.
        def lake_lag() -> list[float]:
            return [v for k, v in weir.metrics().items()
                    if k.startswith("weir_consumer_lag{") and f'topic="{topic}"' in k]
        wait_for(lambda: lake_lag() == [0.0] * 4, 30, "no lag on any partition", poll_s=1)
        wait_for(lambda: json.loads(weir.http("/status.json")[1])["wal"]["mode"] == "wal", 30,
                 "the WAL slot of the page", poll_s=1)
        status = json.loads(weir.http("/status.json")[1])
        [dataset] = status["datasets"]
        assert dataset["lag_total"] == 0 and len(dataset["lag"]) == 4
        assert dataset["rows_total"] == total
        assert dataset["events_total"] == total
        from tests.e2e.test_deploy import used_metric_names
        wal_alert_series = {n for n in used_metric_names()[0] if n.startswith("weir_wal_")}
        assert wal_alert_series, "the WAL alert is gone"
        exported = {k.partition("{")[0] for k in weir.metrics()}
        assert wal_alert_series <= exported, sorted(exported)
    finally:
        assert weir.stop() == 0, weir.log()
    assert_exactly(lake, total)
    assert ledger_total(lake) == total
    # Kafka's committed offsets are the rotations' ends: the whole topic.
    assert sum(committed(bootstrap, group, topic, 4).values()) == total
    assert wal_files(lake.root) == []
    # One catalog commit per interval: far fewer commits than rotations.
    assert "WAL commit:" in weir.log(10_000)


def test_a_plain_run_on_iceberg_lands_every_event_once(kafka, build_dir, tmp_path):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("wal_ice")
    total = 10_000
    create_topic(bootstrap, topic, 3)
    produce(bootstrap, topic, event_records(0, total))
    lake = IcebergLake(tmp_path / "lake")
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group"),
                      wal_settings(lake.root)).start()
    try:
        wait_for(lambda: lake.count("events") >= total or not weir.alive(), 180,
                 "every event committed")
    finally:
        assert weir.stop() == 0, weir.log()
    ids = lake.table("events").scan(selected_fields=("id",)).to_arrow().column("id").to_pylist()
    assert len(ids) == total
    assert len(set(ids)) == total
    assert sum(ids) == total * (total - 1) // 2
    assert wal_files(lake.root) == []
    # Every data file of the table is a WAL object named from its segment's UUID.
    files = [task.file.file_path for task in lake.table("events").scan().plan_files()]
    assert files and all(Path(f).name.startswith("wal-") for f in files), files


@pytest.mark.parametrize("point", ["exit_after_rename", "exit_after_upload", "exit_after_commit"])
def test_a_kill_at_a_chosen_point_is_finished_by_recovery(kafka, build_dir, tmp_path, point):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("wal_fault")
    total = 6_000
    create_topic(bootstrap, topic, 3)
    produce(bootstrap, topic, event_records(0, total))
    lake = Lake(tmp_path / "lake")
    group = unique("group")
    dying = WeirIngest(build_dir, lake, bootstrap, topic, "events", group,
                       wal_settings(lake.root, WEIR_TEST_WAL_FAULT=point)).start()
    code = dying.process.wait(timeout=120)
    assert code == 137, dying.log()
    assert f"WEIR_TEST_WAL_FAULT={point}" in dying.log()
    left = wal_files(lake.root)
    if point == "exit_after_rename":
        # The rotation is on disk, its offset not committed: recovery deletes the ready files
        # and Kafka delivers the records again.
        assert any(f.startswith("ready_") for f in left), left
        assert committed(bootstrap, group, topic, 3) == {}
    elif point == "exit_after_upload":
        assert any(f.startswith("ready_") for f in left), left
        assert lake.count("events") == 0
    else:
        # The commit landed; its local files were not deleted.
        assert any(f.startswith("ready_") for f in left), left
        assert lake.count("events") > 0
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", group,
                      wal_settings(lake.root)).start()
    try:
        wait_for(lambda: lake.count("events") >= total or not weir.alive(), 180,
                 "every event committed after the restart")
        wait_for(lambda: not [f for f in wal_files(lake.root) if f.startswith("ready_")], 60,
                 "the ready files deleted")
    finally:
        assert weir.stop() == 0, weir.log()
    assert "WAL recovery" in weir.log(10_000)
    assert_exactly(lake, total)
    assert ledger_total(lake) == total


def test_random_sigkills_under_load_lose_and_duplicate_nothing(kafka, build_dir, tmp_path):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("wal_kills")
    total = 60_000
    create_topic(bootstrap, topic, 4)
    lake = Lake(tmp_path / "lake")
    group = unique("group")
    settings = wal_settings(lake.root)
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", group, settings)
    weir.start(*FAST_GROUP_ARGS)
    producer = produce_slowly(bootstrap, topic, total, 30)
    rng = random.Random(20261202)
    try:
        for _ in range(10):
            time.sleep(rng.uniform(0.5, 4.0))
            weir.kill()  # SIGKILL: anywhere in the protocol
            weir.start(*FAST_GROUP_ARGS)
        producer.join(timeout=120)
        assert not producer.is_alive()
        wait_for(lambda: lake.count("events") >= total or not weir.alive(), 240,
                 "every event committed")
    finally:
        code = weir.stop()
    assert code == 0, weir.log()
    assert_exactly(lake, total)
    assert ledger_total(lake) == total


def test_sigterm_under_load_drains_the_wal_into_the_table(kafka, build_dir, tmp_path):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("wal_drain")
    total = 60_000
    create_topic(bootstrap, topic, 4)
    lake = Lake(tmp_path / "lake")
    group = unique("group")
    # Segments stay open (age 10 min) and the committer waits a minute: at SIGTERM everything
    # consumed is in active segments, and only the drain can land it.
    settings = wal_settings(lake.root, WEIR_WAL_MAX_FILE_AGE="10m", WEIR_WAL_COMMIT_INTERVAL="60s")
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", group, settings).start()
    producer = produce_slowly(bootstrap, topic, total, 15)
    wait_for(lambda: weir.metric("weir_records_consumed_total") >= 20_000, 60,
             "records consumed under load")
    assert lake.count("events") == 0
    assert any(f.startswith("active_") for f in wal_files(lake.root))
    started = time.monotonic()
    weir.signal(signal.SIGTERM)
    code = weir.process.wait(timeout=96)
    elapsed = time.monotonic() - started
    assert code == 0, weir.log()
    assert elapsed < 96
    assert "stopped cleanly" in weir.log()
    landed = lake.count("events")
    assert landed >= 20_000
    assert ledger_total(lake) == landed
    assert sum(committed(bootstrap, group, topic, 4).values()) == landed
    assert wal_files(lake.root) == []
    producer.join(timeout=120)
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", group,
                      wal_settings(lake.root)).start()
    try:
        wait_for(lambda: lake.count("events") >= total, 120, "the rest of the topic")
    finally:
        assert weir.stop() == 0, weir.log()
    assert_exactly(lake, total)


def test_two_processes_with_rebalances_land_every_event_once(kafka, build_dir, tmp_path):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("wal_rebalance")
    total = 60_000
    create_topic(bootstrap, topic, 6)
    lake = Lake(tmp_path / "lake")
    group = unique("group")
    # One WAL volume per process, as two pods have.
    workers = [WeirIngest(build_dir, lake, bootstrap, topic, "events", group,
                          {**WAL, "WEIR_WAL_DIR": str(lake.root / f"wal{i}")}, name=f"w{i}")
               for i in range(2)]
    for w in workers:
        w.start(*FAST_GROUP_ARGS)
    producer = produce_slowly(bootstrap, topic, total, 30)
    rng = random.Random(13)
    try:
        for _ in range(8):
            time.sleep(rng.uniform(2.0, 4.0))
            w = workers[rng.randrange(2)]
            assert w.stop() == 0, w.log()  # SIGTERM: its partitions move to the other one
            w.start(*FAST_GROUP_ARGS)
        producer.join(timeout=120)
        assert not producer.is_alive()
        wait_for(lambda: lake.count("events") >= total, 240, "every event committed")
    finally:
        codes = [w.stop() for w in workers]
    assert codes == [0, 0], "\n".join(w.log() for w in workers)
    assert_exactly(lake, total)
    assert ledger_total(lake) == total


def test_object_store_down_two_minutes_pauses_at_the_watermark_and_loses_nothing(
        kafka, build_dir, tmp_path):
    """The WAL on a real size-limited volume (an 8 MiB tmpfs the test mounts; root needed),
    0.25 MiB of it taken by ballast, so the 10 % watermark is ~0.55 MiB of WAL away and the
    resume point (5 points below) is above the ballast once the WAL is committed. The object store
    (the lake's local data directory) goes away for two minutes: uploads fail, ready files
    accumulate, every consumer pauses at the watermark, and once the store is back everything
    lands exactly once."""
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("wal_outage")
    # Enough that the consumers cannot read it all between two disk measurements (5 s apart):
    # with 120,000 they did once, and nothing was left in Kafka to pause for.
    total = 400_000
    create_topic(bootstrap, topic, 4)
    lake = Lake(tmp_path / "lake")
    volume = tmp_path / "walvol"
    volume.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(volume)],
                             capture_output=True, text=True)
    assert mounted.returncode == 0, f"mounting a tmpfs for the WAL needs root: {mounted.stderr}"
    weir = None
    try:
        (volume / "ballast").write_bytes(b"\0" * (1 << 18))  # 0.25 MiB
        settings = {**WAL, "WEIR_WAL_DIR": str(volume), "WEIR_WAL_DISK_HIGH_WATERMARK_PCT": "10"}
        produce(bootstrap, topic, event_records(0, 2_000))
        weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group"),
                          settings).start()
        wait_for(lambda: lake.count("events") >= 2_000 or not weir.alive(), 120,
                 "the first events committed")
        data = Path(lake.data_path.rstrip("/"))
        away = data.with_name(data.name + ".away")
        data.rename(away)
        data.write_text("the object store is down")  # every upload fails under it
        produce(bootstrap, topic, event_records(2_000, total - 2_000))
        wait_for(lambda: weir.metric("weir_paused_partitions") > 0 or not weir.alive(), 120,
                 "the consumers paused at the watermark")
        assert weir.alive(), weir.log()
        time.sleep(120 - 1)  # the rest of the two minutes, paused
        assert weir.alive(), weir.log()
        assert weir.metric("weir_paused_partitions") > 0
        assert weir.metric("weir_records_consumed_total") < total  # the rest waits in Kafka
        assert ledger_total(lake) == 2_000  # nothing committed while the store is down
        data.unlink()
        away.rename(data)
        wait_for(lambda: lake.count("events") >= total or not weir.alive(), 240,
                 "every event committed after the store came back")
        wait_for(lambda: weir.metric("weir_paused_partitions") == 0, 60, "the consumers resumed")
        assert weir.stop() == 0, weir.log()
        weir = None
        assert_exactly(lake, total)
        assert ledger_total(lake) == total
    finally:
        if weir is not None:
            weir.stop()
        subprocess.run(["umount", str(volume)], check=False)
