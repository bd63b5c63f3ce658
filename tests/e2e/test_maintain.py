"""`weir maintain` (issue 16): stats, fsck and the orphan sweep on tables weir ingested, for
DuckLake and Iceberg, checked against what DuckDB's ducklake extension and pyiceberg say of the
same tables, and against the files on disk."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import time
from pathlib import Path

from tests.e2e.test_ingest_iceberg import IcebergLake
from tests.e2e.weir_run import Lake, WeirIngest, create_topic, event_records, produce, unique, \
    wait_for

FLUSHES = 4
PER_FLUSH = 500
DAY_S = 86400


def ingest_flushes(bootstrap: str, topic: str, weir: WeirIngest, count) -> None:
    """FLUSHES separate commits of PER_FLUSH events each."""
    for k in range(FLUSHES):
        produce(bootstrap, topic, event_records(k * PER_FLUSH, PER_FLUSH))
        wait_for(lambda: count() >= (k + 1) * PER_FLUSH or not weir.alive(), 90, f"flush {k}")
        assert weir.alive(), weir.log()


def ingested(kafka, build_dir, lake, prefix: str):
    """A 2-partition topic ingested into `lake` in FLUSHES commits; weir stopped cleanly."""
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique(prefix)
    create_topic(bootstrap, topic, 2)
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group")).start()
    try:
        ingest_flushes(bootstrap, topic, weir, lambda: lake.count("events"))
    finally:
        assert weir.stop() == 0, weir.log()
    return bootstrap, topic, lake, weir


def ingest_more(build_dir, lake, bootstrap: str, topic: str, before: WeirIngest,
                total: int) -> None:
    """Restarts ingest in the same group, produces one more flush's events and waits until the
    table holds `total` rows: the offset ledger decides where it resumes."""
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events",
                      before.env["WEIR_KAFKA_GROUP_ID"]).start()
    try:
        produce(bootstrap, topic, event_records(FLUSHES * PER_FLUSH, PER_FLUSH))
        wait_for(lambda: lake.count("events") >= total or not weir.alive(), 90, "the new events")
    finally:
        assert weir.stop() == 0, weir.log()


def maintain(weir: WeirIngest, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(weir.binary), "maintain", *args], env=weir.env,
                          cwd=weir.lake.root, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=120)


def stats(weir: WeirIngest, action: str = "stats", *args: str) -> dict:
    run = maintain(weir, action, "--json", *args)
    assert run.returncode in (0, 1), run.stderr
    return {t["table"]: t for t in json.loads(run.stdout)["tables"]}


def plant(path: Path, age_s: float, size: int = 123) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"o" * size)
    then = time.time() - age_s
    os.utime(path, (then, then))
    return path


def check_sweep(weir: WeirIngest, table: str, table_dir: Path, live: list[str],
                rows_of) -> None:
    """An old planted orphan goes, a fresh one stays, a dry run deletes nothing, live data is
    untouched."""
    old = plant(table_dir / "crashed-flush.parquet", 2 * DAY_S)
    fresh = plant(table_dir / "in-flight.parquet", 60)
    report = stats(weir)[table]
    assert sorted(o["path"] for o in report["orphans"]) == sorted([str(old), str(fresh)])
    assert report["orphan_bytes"] == 246

    dry = maintain(weir, "orphans", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert f"{table}: would delete 1 orphan(s) (123 bytes) older than 24h; kept 1 younger" \
        in dry.stdout, dry.stdout
    assert f"  {old}\n" in dry.stdout
    assert old.exists() and fresh.exists()

    swept = maintain(weir, "orphans", "--yes", "--json")
    assert swept.returncode == 0, swept.stderr
    sweep = {t["table"]: t["sweep"] for t in json.loads(swept.stdout)["tables"]}[table]
    assert sweep == {"dry_run": False, "older_than_ms": DAY_S * 1000, "deleted": 1,
                     "deleted_bytes": 123, "kept_young": 1}
    assert not old.exists() and fresh.exists()
    assert all(Path(p).exists() for p in live)
    assert rows_of() == FLUSHES * PER_FLUSH
    fresh.unlink()
    assert stats(weir)[table]["orphan_files"] == 0


def check_fsck(weir: WeirIngest, table: str, live: list[str]) -> None:
    clean = maintain(weir, "fsck")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert clean.stdout.splitlines()[-1].startswith("fsck: OK, "), clean.stdout
    gone, short = Path(live[0]), Path(live[1])
    size = short.stat().st_size
    gone.unlink()
    with open(short, "r+b") as f:
        f.truncate(size - 10)
    run = maintain(weir, "fsck", "--json")
    assert run.returncode == 1, run.stdout + run.stderr
    findings = {t["table"]: t["fsck"] for t in json.loads(run.stdout)["tables"]}[table]
    by_path = {f["path"]: f for f in findings}
    assert set(by_path) == {str(gone), str(short)}
    assert by_path[str(gone)]["problem"] == "missing"
    assert by_path[str(short)] == {"path": str(short), "problem": "size_differs",
                                   "catalog_bytes": size, "actual_bytes": size - 10}
    text = maintain(weir, "fsck")
    assert f"{table}: MISSING {gone}" in text.stdout, text.stdout
    assert text.stdout.splitlines()[-1].startswith("fsck: FAILED, 2 finding(s) in "), text.stdout


def test_ducklake_stats_fsck_and_orphans(kafka, build_dir, tmp_path):
    bootstrap, topic, lake, weir = ingested(kafka, build_dir, Lake(tmp_path / "lake"),
                                            "maintain")

    con = lake.connect()
    files = [r[0] for r in con.execute(
        "SELECT data_file FROM ducklake_list_files('lake', 'events')").fetchall()]
    snapshots = con.execute("SELECT count(*) FROM ducklake_snapshots('lake')").fetchone()[0]
    con.close()
    ledger_snapshot = sqlite3.connect(lake.sqlite_path).execute(
        "SELECT max(snapshot_id) FROM weir_offset_ledger").fetchone()[0]

    report = stats(weir)
    events = report["main.events"]
    assert events["data_files"] == len(files) >= FLUSHES
    assert events["delete_files"] == 0
    assert events["rows"] == FLUSHES * PER_FLUSH
    assert events["bytes"] == sum(os.path.getsize(p) for p in files)
    assert sum(b["files"] for b in events["file_size_histogram"]) == len(files)
    assert events["file_size_histogram"][0]["files"] == len(files)  # all under 1 MiB
    assert events["snapshots"] == snapshots
    assert events["ledger_snapshot"] == ledger_snapshot
    assert events["orphan_files"] == 0, events["orphans"]
    # Nothing was rejected: the rejects table was never created, and is not reported.
    assert "main.events_rejects" not in report

    text = maintain(weir, "stats")
    assert text.returncode == 0, text.stderr
    assert text.stdout.splitlines()[0].split()[:3] == ["table", "files", "deletes"]
    assert text.stdout.splitlines()[1].split()[:4] == ["main.events", str(len(files)), "0",
                                                       str(FLUSHES * PER_FLUSH)]

    table_dir = Path(lake.data_path) / "main" / "events"
    check_sweep(weir, "main.events", table_dir, files, lambda: lake.count("events"))
    check_fsck(weir, "main.events", files)


def test_iceberg_stats_fsck_and_orphans(kafka, build_dir, tmp_path):
    bootstrap, topic, lake, weir = ingested(kafka, build_dir, IcebergLake(tmp_path / "lake"),
                                            "maintain_iceberg")

    table = lake.table("events")
    files = table.inspect.files().to_pylist()
    paths = [f["file_path"].removeprefix("file://") for f in files]
    weir_snapshots = [s for s in table.snapshots()
                      if "weir.commit-id" in s.summary.additional_properties]
    report = stats(weir)["main.events"]
    assert report["data_files"] == len(files) >= FLUSHES
    assert report["rows"] == sum(f["record_count"] for f in files) == FLUSHES * PER_FLUSH
    assert report["bytes"] == sum(f["file_size_in_bytes"] for f in files)
    assert report["bytes"] == sum(os.path.getsize(p) for p in paths)
    assert report["snapshots"] == len(table.snapshots())
    assert report["ledger_snapshot"] == weir_snapshots[-1].snapshot_id
    # Every metadata file, manifest list and manifest under the table is referenced.
    assert report["orphan_files"] == 0, report["orphans"]

    table_dir = Path(table.location().removeprefix("file://"))
    check_sweep(weir, "main.events", table_dir / "data", paths,
                lambda: lake.count("events"))
    check_fsck(weir, "main.events", paths)


def test_maintain_refuses_a_lake_that_does_not_exist_naming_the_setting(build_dir, tmp_path):
    run = subprocess.run(
        [str(build_dir / "weir"), "maintain", "stats"],
        env=dict(os.environ, WEIR_TOPIC="t", WEIR_TABLE="events",
                 WEIR_KAFKA_BOOTSTRAP_SERVERS="127.0.0.1:1",
                 WEIR_CATALOG_SQLITE_PATH=str(tmp_path / "none.sqlite")),
        cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert run.returncode == 1
    assert f"catalog.sqlite_path {tmp_path / 'none.sqlite'}: no DuckLake catalog there yet" \
        in run.stderr, run.stderr
    assert not (tmp_path / "none.sqlite").exists()


def expire(weir: WeirIngest, *args: str) -> dict:
    run = maintain(weir, "expire", "--json", "--older-than", "0s", *args)
    assert run.returncode == 0, run.stdout + run.stderr
    return {t["table"]: t["expire"] for t in json.loads(run.stdout)["tables"]}


def test_ducklake_expiry_after_duckdbs_own_merge_queues_and_deletes_the_old_files(
    kafka, build_dir, tmp_path
):
    bootstrap, topic, lake, weir = ingested(kafka, build_dir, Lake(tmp_path / "lake"),
                                            "expire")

    con = lake.connect(read_only=False)
    before = [r[0] for r in con.execute(
        "SELECT data_file FROM ducklake_list_files('lake', 'events')").fetchall()]
    con.execute("CALL ducklake_merge_adjacent_files('lake', 'events')")
    merged = [r[0] for r in con.execute(
        "SELECT data_file FROM ducklake_list_files('lake', 'events')").fetchall()]
    snapshots = [r[0] for r in con.execute(
        "SELECT snapshot_id FROM ducklake_snapshots('lake') ORDER BY snapshot_id").fetchall()]
    con.close()
    assert len(merged) < len(before)
    replaced = sorted(set(before) - set(merged))

    dry = expire(weir, "--retain-last", "2", "--dry-run")["main.events"]
    assert dry == {"dry_run": True, "snapshots": snapshots[:-2]}
    assert stats(weir)["main.events"]["snapshots"] == len(snapshots)

    done = expire(weir, "--retain-last", "2", "--yes", "--queue-window", "0s")["main.events"]
    assert done["expired"] == len(snapshots) - 2
    # The merged-away files were released (DuckLake's queue, emptied at once with window 0).
    assert sorted(done["released"]) == replaced
    assert done["still_stored"] == []
    assert not any(Path(p).exists() for p in replaced)
    assert all(Path(p).exists() for p in merged)
    report = stats(weir)["main.events"]
    assert report["snapshots"] == 2
    assert report["data_files"] == len(merged)
    assert report["rows"] == FLUSHES * PER_FLUSH
    assert report["orphan_files"] == 0, report["orphans"]

    # The ledger is untouched: a restarted ingest lands only what is new.
    total = (FLUSHES + 1) * PER_FLUSH
    ingest_more(build_dir, lake, bootstrap, topic, weir, total)
    assert lake.scalar("SELECT count(*) FROM lake.events") == total
    assert lake.scalar("SELECT count(DISTINCT id) FROM lake.events") == total


def test_iceberg_expiry_keeps_the_way_to_the_ledger_and_deletes_what_only_expired_snapshots_held(
    kafka, build_dir, tmp_path
):
    import datetime

    import pyarrow as pa

    bootstrap, topic, lake, weir = ingested(kafka, build_dir, IcebergLake(tmp_path / "lake"),
                                            "expire_iceberg")

    # Another engine appends after weir's last commit: main's head now carries no ledger.
    table = lake.table("events")
    now = datetime.datetime.now(datetime.timezone.utc)
    foreign = [{"id": 10**9 + i, "_inserted_at": now} for i in range(7)]
    table.append(pa.Table.from_pylist(foreign, schema=table.schema().as_arrow()))
    table = lake.table("events")
    snapshots = [s.snapshot_id for s in sorted(table.snapshots(), key=lambda s: s.timestamp_ms)]
    head, ledger = snapshots[-1], snapshots[-2]
    assert "weir.commit-id" not in table.current_snapshot().summary.additional_properties
    lists = {s.snapshot_id: s.manifest_list.removeprefix("file://") for s in table.snapshots()}

    # retain-last 1 would keep only the head; the ledger's snapshot is kept as well.
    dry = expire(weir, "--retain-last", "1", "--dry-run")["main.events"]
    assert dry == {"dry_run": True, "snapshots": snapshots[:-2]}
    done = expire(weir, "--retain-last", "1", "--yes")["main.events"]
    assert done["expired"] == len(snapshots) - 2
    expired_lists = sorted(lists[s] for s in snapshots[:-2])
    # Only the expired snapshots' manifest lists were theirs alone (weir appends; its manifests
    # are carried forward).
    assert sorted(done["released"]) == expired_lists
    assert done["still_stored"] == []
    assert not any(Path(p).exists() for p in expired_lists)
    table = lake.table("events")
    assert sorted(s.snapshot_id for s in table.snapshots()) == sorted([head, ledger])
    assert table.scan().to_arrow().num_rows == FLUSHES * PER_FLUSH + len(foreign)
    report = stats(weir)["main.events"]
    assert report["snapshots"] == 2
    assert report["ledger_snapshot"] == ledger
    assert report["orphan_files"] == 0, report["orphans"]

    total = (FLUSHES + 1) * PER_FLUSH + len(foreign)
    ingest_more(build_dir, lake, bootstrap, topic, weir, total)
    ids = lake.table("events").scan(selected_fields=("id",)).to_arrow().column("id").to_pylist()
    assert len(ids) == len(set(ids)) == total
