"""WAL mode with the catalog down for two minutes (issue 13's proof list), on a real
size-limited WAL volume: the lake's PostgreSQL catalog (a private server the test owns) is
stopped, uploads still succeed but no commit can land, so the uploaded ready files stay on the
volume until every consumer pauses at the watermark; once the catalog is back they are committed,
the consumers resume and every event lands exactly once (exact counts, the offset ledger). And a
SIGTERM drain the outage cuts short, finished by the next start's recovery."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

from tests.e2e.test_ingest_wal import WAL, committed, wal_files, wal_settings
from tests.e2e.weir_run import Lake, WeirIngest, create_topic, event_records, produce, unique, \
    wait_for
from tests.harness.components import Postgres


def ledger_total(lake: Lake) -> int:
    return lake.scalar("SELECT sum(next_offset) FROM postgres_scan('{}', 'public', "
                       "'weir_offset_ledger')".format(lake.postgres_dsn))


def test_catalog_down_two_minutes_pauses_at_the_watermark_and_loses_nothing(
        kafka, build_dir, tmp_path):
    """The volume is the object-store-down test's: an 8 MiB tmpfs (root needed) with 0.25 MiB
    of ballast and a 10 % watermark, so ~0.55 MiB of WAL pauses the consumers and the resume
    point (5 points below) is above the ballast once the WAL is committed."""
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("wal_catalog_down")
    # Enough that the consumers cannot read it all between two disk measurements (5 s apart).
    total = 400_000
    create_topic(bootstrap, topic, 4)
    catalog = Postgres(tmp_path / "pg")
    catalog.start()
    lake = Lake(tmp_path / "lake", catalog="postgres")
    lake.postgres_dsn = catalog.settings()["WEIR_TEST_PG_DSN"]
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
        assert ledger_total(lake) == 2_000
        catalog.stop()
        produce(bootstrap, topic, event_records(2_000, total - 2_000))
        wait_for(lambda: weir.metric("weir_paused_partitions") > 0 or not weir.alive(), 120,
                 "the consumers paused at the watermark")
        assert weir.alive(), weir.log()
        # Read from weir, not the catalog (down): no commit lands during the outage.
        commits_while_down = weir.metric("weir_commits_total")
        time.sleep(120 - 1)  # the rest of the two minutes, paused
        assert weir.alive(), weir.log()  # waiting for the catalog, not dead
        assert weir.metric("weir_paused_partitions") > 0
        assert weir.metric("weir_records_consumed_total") < total  # the rest waits in Kafka
        # The WAL holds what was consumed and not committed: ready files, on the volume.
        assert [p for p in Path(volume).rglob("ready_*.parquet")]
        assert weir.metric("weir_commits_total") == commits_while_down
        catalog.restart()
        wait_for(lambda: lake.count("events") >= total or not weir.alive(), 240,
                 "every event committed after the catalog came back")
        wait_for(lambda: weir.metric("weir_paused_partitions") == 0, 60, "the consumers resumed")
        assert "WAL commit failed (retried" in weir.log_path.read_text() or \
            "cannot open its table (retried)" in weir.log_path.read_text()
        assert weir.stop() == 0, weir.log()
        weir = None
        assert lake.scalar("SELECT count(*) FROM lake.events") == total
        assert lake.scalar("SELECT count(DISTINCT id) FROM lake.events") == total
        assert lake.scalar("SELECT sum(id) FROM lake.events") == total * (total - 1) // 2
        assert ledger_total(lake) == total
        assert not list(Path(volume).rglob("ready_*.parquet"))
    finally:
        if weir is not None:
            weir.stop()
        subprocess.run(["umount", str(volume)], check=False)
        catalog.stop()


def drain_cut_short(kafka, build_dir, tmp_path, name: str, events: int, partitions: int):
    """Events consumed into open WAL segments, then SIGTERM while the PostgreSQL catalog is
    down: the drain rotates the segments and commits their Kafka offsets but cannot commit them
    to the table before `shutdown.drain_timeout`, so it exits non-zero and leaves ready files.
    Returns (the stopped catalog, the lake, bootstrap, topic, group)."""
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique(name)
    create_topic(bootstrap, topic, partitions)
    catalog = Postgres(tmp_path / "pg")
    catalog.start()
    lake = Lake(tmp_path / "lake", catalog="postgres")
    lake.postgres_dsn = catalog.settings()["WEIR_TEST_PG_DSN"]
    group = unique("group")
    weir = None
    try:
        produce(bootstrap, topic, event_records(0, events))
        # Segments stay open (age 10 min) and the committer waits a minute: at SIGTERM every
        # event is in an active segment, and only the drain could land them.
        weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", group,
                          wal_settings(lake.root, WEIR_WAL_MAX_FILE_AGE="10m",
                                       WEIR_WAL_COMMIT_INTERVAL="60s",
                                       WEIR_SHUTDOWN_DRAIN_TIMEOUT="3s")).start()
        wait_for(lambda: weir.metric("weir_records_consumed_total") >= events
                 or not weir.alive(), 120, "every event consumed")
        # Records count as consumed when the poll hands them over; they reach their segment
        # right after, in the same loop turn.
        wait_for(lambda: any(f.startswith("active_") for f in wal_files(lake.root))
                 or not weir.alive(), 30, "the events in open WAL segments")
        assert weir.alive(), weir.log()
        assert any(f.startswith("active_") for f in wal_files(lake.root))
        catalog.stop()
        weir.signal(signal.SIGTERM)
        code = weir.process.wait(timeout=60)
        log = weir.log()
        weir = None
        assert code != 0, log
        assert "drain timeout of 3000 ms passed with WAL files not committed" in log
        ready = [f for f in wal_files(lake.root) if f.startswith("ready_")]
        assert ready and not [f for f in wal_files(lake.root) if f.startswith("active_")]
        # The rotation committed the Kafka offsets before the drain ran out.
        assert sum(committed(bootstrap, group, topic, partitions).values()) == events
    except BaseException:
        if weir is not None:
            weir.stop()
        catalog.stop()
        raise
    return catalog, lake, bootstrap, topic, group


def test_a_drain_cut_short_by_a_catalog_outage_is_finished_by_recovery(kafka, build_dir, tmp_path):
    """SIGTERM while the catalog is down: the drain rotates the open segments and commits their
    Kafka offsets, uploads them, but cannot commit them to the table before
    `shutdown.drain_timeout`; the process says so and exits non-zero, leaving the ready files on
    the volume. The next start's recovery keeps them (the committed offset is after their last
    offset and the table does not hold them) and lands them exactly once."""
    catalog, lake, bootstrap, topic, group = drain_cut_short(kafka, build_dir, tmp_path,
                                                             "wal_drain_cut", 3_000, 4)
    weir = None
    try:
        catalog.restart()
        assert lake.count("events") == 0
        produce(bootstrap, topic, event_records(3_000, 1_000))
        weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", group,
                          wal_settings(lake.root)).start()
        wait_for(lambda: lake.count("events") >= 4_000 or not weir.alive(), 120,
                 "the drained files and the rest of the topic landed")
        assert weir.stop() == 0, weir.log()
        weir = None
        assert lake.scalar("SELECT count(*) FROM lake.events") == 4_000
        assert lake.scalar("SELECT count(DISTINCT id) FROM lake.events") == 4_000
        assert lake.scalar("SELECT sum(id) FROM lake.events") == 4_000 * 3_999 // 2
        assert ledger_total(lake) == 4_000
        assert wal_files(lake.root) == []
    finally:
        if weir is not None:
            weir.stop()
        catalog.stop()


def test_recovery_rides_out_a_catalog_restart_within_the_startup_timeout(
        kafka, build_dir, tmp_path):
    """Ready files from a drain the outage cut short, then a start whose catalog goes away
    right after the startup probes (the debug build's pause before recovery): recovery retries
    the retriable connection error within startup.timeout as the probe would, instead of
    exiting, and lands every file exactly once."""
    catalog, lake, bootstrap, topic, group = drain_cut_short(kafka, build_dir, tmp_path,
                                                             "wal_recovery_retry", 1_000, 2)
    weir = None
    try:
        catalog.restart()
        weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", group,
                          wal_settings(lake.root, WEIR_TEST_WAL_FAULT="pause_before_recovery",
                                       WEIR_STARTUP_TIMEOUT="30s")).start()
        wait_for(lambda: "pause_before_recovery: pausing" in weir.log_path.read_text()
                 or not weir.alive(), 60, "the start reached its pause before recovery")
        catalog.stop()
        time.sleep(6)  # the pause ends: recovery meets a catalog that refuses connections
        assert weir.alive(), weir.log()
        catalog.restart()
        wait_for(lambda: lake.count("events") >= 1_000 or not weir.alive(), 120,
                 "recovery landed the ready files")
        assert weir.stop() == 0, weir.log()
        log = weir.log_path.read_text()
        weir = None
        assert "WAL recovery of dataset events" in log and "retrying in" in log, log[-3000:]
        assert lake.scalar("SELECT count(*) FROM lake.events") == 1_000
        assert lake.scalar("SELECT count(DISTINCT id) FROM lake.events") == 1_000
        assert ledger_total(lake) == 1_000
        assert wal_files(lake.root) == []
    finally:
        if weir is not None:
            weir.stop()
        catalog.stop()
