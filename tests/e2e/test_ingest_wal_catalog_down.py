"""WAL mode with the catalog down for two minutes (issue 13's proof list), on a real
size-limited WAL volume: the lake's PostgreSQL catalog (a private server the test owns) is
stopped, uploads still succeed but no commit can land, so the uploaded ready files stay on the
volume until every consumer pauses at the watermark; once the catalog is back they are committed,
the consumers resume and every event lands exactly once (exact counts, the offset ledger)."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from tests.e2e.test_ingest_wal import WAL
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
