"""`weir maintain --serve` and `weir maintain fsck --repair` (issue 16), against tables weir
ingested: the lake metrics on /metrics equal what DuckDB, pyiceberg and the disk say of the
table; the configured policies expire snapshots and sweep orphans (an old planted orphan goes,
a fresh one stays); the service lives through a catalog that answers 503 and recovers; SIGTERM
ends it with 0. fsck --repair says what it would drop, refuses a terminal without --yes, and
drops a deleted and a truncated data file in one snapshot, after which DuckDB reads the table
with exactly the other files' rows and ingest still resumes from the untouched ledger."""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.e2e.test_ingest_iceberg import IcebergLake
from tests.e2e.test_maintain import FLUSHES, PER_FLUSH, ingest_more, ingested, maintain, plant, \
    stats
from tests.e2e.weir_run import Lake, WeirIngest, free_port, unique, wait_for
from tests.harness.fault_proxy import FaultProxy, Rule

HOUR_S = 3600
POLICIES_OFF = {"WEIR_MAINTAIN_EXPIRE_INTERVAL": "0", "WEIR_MAINTAIN_ORPHANS_INTERVAL": "0",
                "WEIR_MAINTAIN_COMPACT_INTERVAL": "0"}


class MaintainServe(WeirIngest):
    """One `weir maintain --serve` process on the ingest's configuration (its env)."""

    def __init__(self, ingest: WeirIngest, settings: dict[str, str]):
        self.binary = ingest.binary
        self.lake = ingest.lake
        self.http_port = free_port()
        self.log_path = ingest.lake.root / f"maintain-{unique('serve')}.log"
        self.env = dict(ingest.env)
        self.env.update({"WEIR_MAINTAIN_HTTP_PORT": str(self.http_port),
                         "WEIR_MAINTAIN_STATS_INTERVAL": "1s"})
        self.env.update(settings)
        self.args = []
        self.process = None

    def start(self, *extra_args: str) -> "MaintainServe":
        log = open(self.log_path, "ab")
        self.process = subprocess.Popen([str(self.binary), "maintain", "--serve", *extra_args],
                                        env=self.env, cwd=self.lake.root, stdout=log,
                                        stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        log.close()
        return self

    def gauge(self, name: str, table: str = "main.events") -> float | None:
        for series, value in self.metrics().items():
            if series == f'{name}{{dataset="events",table="{table}"}}':
                return value
        return None

    def wait_gauge(self, name: str, expected: float, what: str, timeout_s: float = 60) -> None:
        wait_for(lambda: self.gauge(name) == expected or not self.alive(), timeout_s, what)
        assert self.alive(), self.log()
        assert self.gauge(name) == expected, (name, self.gauge(name), self.log())


def stop_cleanly(serve: MaintainServe) -> None:
    assert serve.stop(60) == 0, serve.log()
    assert "weir maintain --serve stopped" in serve.log_path.read_text(), serve.log()


def test_serve_exports_exact_lake_metrics_then_its_policies_expire_and_sweep(
    kafka, build_dir, tmp_path
):
    bootstrap, topic, lake, weir = ingested(kafka, build_dir, Lake(tmp_path / "lake"),
                                            "mserve")
    con = lake.connect()
    files = [r[0] for r in con.execute(
        "SELECT data_file FROM ducklake_list_files('lake', 'events')").fetchall()]
    snapshots = con.execute("SELECT count(*) FROM ducklake_snapshots('lake')").fetchone()[0]
    con.close()
    table_dir = Path(lake.data_path) / "main" / "events"
    old = plant(table_dir / "crashed-flush.parquet", 2 * HOUR_S, 100)
    fresh = plant(table_dir / "in-flight.parquet", 60, 50)

    # Policies off: the metrics are the prepared lake's, exactly.
    serve = MaintainServe(weir, POLICIES_OFF).start()
    try:
        serve.wait_gauge("weir_lake_up", 1, "the first inspection")
        assert serve.gauge("weir_lake_data_files") == len(files) >= FLUSHES
        assert serve.gauge("weir_lake_delete_files") == 0
        assert serve.gauge("weir_lake_rows") == FLUSHES * PER_FLUSH
        assert serve.gauge("weir_lake_bytes") == sum(os.path.getsize(p) for p in files)
        assert serve.gauge("weir_lake_snapshots") == snapshots
        assert serve.gauge("weir_lake_orphan_files") == 2
        assert serve.gauge("weir_lake_orphan_bytes") == 150
        by_size = {s: v for s, v in serve.metrics().items()
                   if s.startswith("weir_lake_data_files_by_size{")}
        assert by_size['weir_lake_data_files_by_size{dataset="events",le="1048576",'
                       'table="main.events"}'] == len(files)
        assert by_size['weir_lake_data_files_by_size{dataset="events",le="+Inf",'
                       'table="main.events"}'] == len(files)
        assert len(by_size) == 6
        assert serve.gauge("weir_lake_oldest_snapshot_age_seconds") > 0
        assert serve.http("/readyz")[0] == 200
        assert serve.metric("weir_maintain_runs_total") == 0  # every policy is off
    finally:
        stop_cleanly(serve)
    assert old.exists() and fresh.exists()

    # Policies on: expiry keeps the newest 2 snapshots, the sweep deletes orphans over 1h old
    # (compaction on a schedule: test_maintain_serve_compact.py).
    serve = MaintainServe(weir, {"WEIR_MAINTAIN_EXPIRE_OLDER_THAN": "0s",
                                 "WEIR_MAINTAIN_EXPIRE_RETAIN_LAST": "2",
                                 "WEIR_MAINTAIN_EXPIRE_INTERVAL": "1h",
                                 "WEIR_MAINTAIN_ORPHANS_OLDER_THAN": "1h",
                                 "WEIR_MAINTAIN_ORPHANS_INTERVAL": "1h",
                                 "WEIR_MAINTAIN_COMPACT_INTERVAL": "0"}).start()
    try:
        wait_for(lambda: serve.metric("weir_maintain_runs_total", action="orphans",
                                      outcome="ok") == 1 or not serve.alive(), 60, "the sweep")
        serve.wait_gauge("weir_lake_snapshots", 2, "the expiry")
        serve.wait_gauge("weir_lake_orphan_files", 1, "the metrics after the sweep")
        assert serve.metric("weir_maintain_runs_total", action="expire", outcome="ok") == 1
        assert serve.metric("weir_maintain_snapshots_expired_total") == snapshots - 2
        assert serve.metric("weir_maintain_objects_deleted_total", action="orphans") == 1
        assert serve.metric("weir_maintain_bytes_deleted_total", action="orphans") == 100
        assert serve.metric("weir_maintain_runs_total", action="compact") == 0
        assert serve.gauge("weir_lake_orphan_bytes") == 50
        assert serve.gauge("weir_lake_data_files") == len(files)
    finally:
        stop_cleanly(serve)
    assert not old.exists() and fresh.exists()
    assert all(Path(p).exists() for p in files)
    assert lake.scalar("SELECT count(*) FROM lake.events") == FLUSHES * PER_FLUSH
    assert lake.scalar("SELECT count(DISTINCT id) FROM lake.events") == FLUSHES * PER_FLUSH


def test_serve_lives_through_a_catalog_that_answers_503_and_recovers(
    kafka, iceberg_rest, build_dir, tmp_path
):
    namespace = unique("ns")
    with FaultProxy(iceberg_rest["WEIR_TEST_ICEBERG_REST_URI"]) as proxy:
        lake = IcebergLake(tmp_path / "lake", rest_uri=proxy.uri, namespace=namespace)
        bootstrap, topic, lake, weir = ingested(kafka, build_dir, lake, "mserve_rest")
        files = lake.table("events").inspect.files().to_pylist()
        serve = MaintainServe(weir, POLICIES_OFF).start()
        try:
            wait_for(lambda: serve.metric("weir_lake_up", table=f"{namespace}.events") == 1
                     or not serve.alive(), 60, "the first inspection")
            labels = {"table": f"{namespace}.events"}
            assert serve.metric("weir_lake_data_files", **labels) == len(files)
            assert serve.metric("weir_lake_rows", **labels) == FLUSHES * PER_FLUSH

            # The catalog goes down: every load of the table answers 503.
            outage = proxy.add(Rule("GET", "/tables/events", "status_without_forward",
                                    status=503, times=10**9))
            wait_for(lambda: serve.metric("weir_lake_up", **labels) == 0 or not serve.alive(),
                     60, "the outage in the metrics")
            wait_for(lambda: serve.metric("weir_maintain_errors_total", **labels) >= 3
                     or not serve.alive(), 60, "retries")
            assert serve.alive(), serve.log()
            status, body = serve.http("/readyz")
            assert status == 503 and "503" in body, body
            # The last good values stay, and say how old they are.
            assert serve.metric("weir_lake_data_files", **labels) == len(files)
            assert serve.metric("weir_lake_report_age_seconds", **labels) >= 1
            assert "inspect failed" in serve.log_path.read_text()

            outage.times = len(outage.hits)  # the catalog is back
            wait_for(lambda: serve.metric("weir_lake_up", **labels) == 1 or not serve.alive(),
                     60, "the recovery")
            assert serve.alive(), serve.log()
            assert serve.http("/readyz")[0] == 200
            assert serve.metric("weir_lake_data_files", **labels) == len(files)
            assert serve.metric("weir_lake_report_age_seconds", **labels) < 5
        finally:
            stop_cleanly(serve)


def on_a_terminal(weir: WeirIngest, *args: str) -> tuple[int, str]:
    """`weir maintain` with its stdin a terminal (a pseudo-terminal)."""
    master, slave = pty.openpty()
    try:
        run = subprocess.run([str(weir.binary), "maintain", *args], env=weir.env,
                             cwd=weir.lake.root, stdin=slave, capture_output=True, text=True,
                             timeout=120)
    finally:
        os.close(slave)
        os.close(master)
    return run.returncode, run.stderr


def damage(live: list[str]) -> tuple[Path, Path, int]:
    gone, short = Path(live[0]), Path(live[1])
    size = short.stat().st_size
    gone.unlink()
    with open(short, "r+b") as f:
        f.truncate(size // 2)
    return gone, short, size


def check_repair(weir: WeirIngest, gone: Path, short: Path, size: int,
                 rows_of: dict[str, int]) -> dict:
    lost = rows_of[str(gone)] + rows_of[str(short)]
    code, stderr = on_a_terminal(weir, "fsck", "--repair")
    assert code == 2, stderr
    assert "fsck --repair: this changes the lake; run it with --dry-run to see what, then with " \
           "--yes" in stderr, stderr

    dry = maintain(weir, "fsck", "--repair", "--dry-run")
    assert dry.returncode == 1, dry.stdout + dry.stderr
    assert f"main.events: would drop 2 data file entries ({lost} rows," in dry.stdout, dry.stdout
    assert f"  drop {gone} ({rows_of[str(gone)]} rows): missing" in dry.stdout
    assert f"  drop {short} ({rows_of[str(short)]} rows): {size // 2} bytes where the catalog " \
           f"records {size}" in dry.stdout
    assert "the offset ledger is not rewound" in dry.stdout
    assert stats(weir, "fsck")["main.events"]["rows"] == FLUSHES * PER_FLUSH  # nothing changed

    done = maintain(weir, "fsck", "--repair", "--yes", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    repair = {t["table"]: t["repair"] for t in json.loads(done.stdout)["tables"]}["main.events"]
    assert sorted(repair["drop"]) == sorted([str(gone), str(short)])
    assert repair["rows"] == lost and repair["remaining"] == 0 and repair["unrepairable"] == []
    after = stats(weir, "fsck")["main.events"]
    assert after["fsck"] == []
    assert after["rows"] == FLUSHES * PER_FLUSH - lost
    again = maintain(weir, "fsck", "--repair", "--yes")
    assert again.returncode == 0 and "main.events: nothing to repair" in again.stdout
    return repair


def test_ducklake_fsck_repair_drops_a_deleted_and_a_truncated_file_in_one_snapshot(
    kafka, build_dir, tmp_path
):
    bootstrap, topic, lake, weir = ingested(kafka, build_dir, Lake(tmp_path / "lake"),
                                            "repair")
    con = lake.connect()
    rows_of = {}
    files = [r[0] for r in con.execute(
        "SELECT data_file FROM ducklake_list_files('lake', 'events')").fetchall()]
    for path in files:
        rows_of[path] = con.execute(f"SELECT count(*) FROM read_parquet('{path}')").fetchone()[0]
    ids_of = {p: {r[0] for r in con.execute(f"SELECT id FROM read_parquet('{p}')").fetchall()}
              for p in files}
    con.close()
    gone, short, size = damage(files)
    repair = check_repair(weir, gone, short, size, rows_of)

    kept = set().union(*(ids_of[p] for p in files[2:]))
    assert lake.scalar("SELECT count(*) FROM lake.events") == len(kept)
    assert lake.scalar("SELECT count(DISTINCT id) FROM lake.events") == len(kept)
    con = lake.connect()
    assert {r[0] for r in con.execute("SELECT id FROM lake.events").fetchall()} == kept
    # One snapshot, by weir, dropping them; the snapshot before it still lists them.
    changes = con.execute(
        "SELECT changes, author FROM ducklake_snapshots('lake') WHERE snapshot_id = ?",
        [repair["snapshot_id"]]).fetchone()
    assert changes[1] == "weir" and "tables_deleted_from" in str(changes[0]), changes
    listed = {r[0] for r in con.execute(
        "SELECT data_file FROM ducklake_list_files('lake', 'events')").fetchall()}
    assert listed == set(files[2:])
    con.close()

    # The ledger is untouched: ingest resumes after the last committed offset, the lost rows
    # are not replayed.
    ingest_more(build_dir, lake, bootstrap, topic, weir, len(kept) + PER_FLUSH)
    assert lake.scalar("SELECT count(*) FROM lake.events") == len(kept) + PER_FLUSH
    assert lake.scalar("SELECT count(DISTINCT id) FROM lake.events") == len(kept) + PER_FLUSH


def test_iceberg_fsck_repair_commits_a_delete_snapshot_readers_agree_on(
    kafka, build_dir, tmp_path, duck
):
    bootstrap, topic, lake, weir = ingested(kafka, build_dir, IcebergLake(tmp_path / "lake"),
                                            "repair_iceberg")
    table = lake.table("events")
    files = table.inspect.files().to_pylist()
    paths = [f["file_path"].removeprefix("file://") for f in files]
    rows_of = {p: f["record_count"] for p, f in zip(paths, files)}
    import pyarrow.parquet as pq

    ids_of = {p: set(pq.read_table(p, columns=["id"]).column("id").to_pylist()) for p in paths}
    ledger_before = table.current_snapshot().snapshot_id
    gone, short, size = damage(paths)
    repair = check_repair(weir, gone, short, size, rows_of)

    kept = set().union(*(ids_of[p] for p in paths[2:]))
    table = lake.table("events")
    head = table.current_snapshot()
    assert head.snapshot_id == repair["snapshot_id"]
    assert head.parent_snapshot_id == ledger_before
    summary = head.summary
    assert summary.operation.value == "delete"
    assert summary.additional_properties["deleted-data-files"] == "2"
    assert int(summary.additional_properties["total-records"]) == len(kept)
    assert "weir.commit-id" not in summary.additional_properties
    ids = table.scan(selected_fields=("id",)).to_arrow().column("id").to_pylist()
    assert sorted(ids) == sorted(kept)
    # DuckDB's iceberg extension reads the same table from its metadata.
    location = table.metadata_location.removeprefix("file://")
    assert duck.execute(f"SELECT count(*), count(DISTINCT id) FROM iceberg_scan('{location}')"
                        ).fetchone() == (len(kept), len(kept))

    ingest_more(build_dir, lake, bootstrap, topic, weir, len(kept) + PER_FLUSH)
    ids = lake.table("events").scan(selected_fields=("id",)).to_arrow().column("id").to_pylist()
    assert len(ids) == len(set(ids)) == len(kept) + PER_FLUSH


def test_serve_from_a_terminal_needs_yes_when_its_policies_delete(build_dir, tmp_path):
    """--serve with expiry or the sweep on is refused from a terminal without --yes; with both
    off it serves metrics only, and a lake that does not exist yet is reported down (retried,
    never a crash) until SIGTERM ends it with 0."""
    env = dict(os.environ, WEIR_TOPIC="t", WEIR_TABLE="events",
               WEIR_KAFKA_BOOTSTRAP_SERVERS="127.0.0.1:1",
               WEIR_CATALOG_SQLITE_PATH=str(tmp_path / "none.sqlite"),
               WEIR_MAINTAIN_STATS_INTERVAL="1s")
    master, slave = pty.openpty()
    try:
        refused = subprocess.run([str(build_dir / "weir"), "maintain", "--serve"], env=env,
                                 cwd=tmp_path, stdin=slave, capture_output=True, text=True,
                                 timeout=60)
        assert refused.returncode == 2, refused.stderr
        assert "weir maintain --serve: its policies delete (maintain.expire.interval, " \
               "maintain.orphans.interval); run it with --yes" in refused.stderr, refused.stderr

        port = free_port()
        log_path = tmp_path / "serve.log"
        with open(log_path, "wb") as log:
            serve = subprocess.Popen(
                [str(build_dir / "weir"), "maintain", "--serve"],
                env=dict(env, **POLICIES_OFF, WEIR_MAINTAIN_HTTP_PORT=str(port)), cwd=tmp_path,
                stdin=slave, stdout=log, stderr=subprocess.STDOUT)
        probe = MaintainServe.__new__(MaintainServe)
        probe.http_port, probe.process, probe.log_path = port, serve, log_path
        wait_for(lambda: probe.metric("weir_maintain_errors_total", stage="open") >= 2
                 or not probe.alive(), 60, "retries of the missing lake")
        assert probe.alive(), probe.log()
        assert probe.metric("weir_lake_up", table="main.events") == 0
        status, body = probe.http("/readyz")
        assert status == 503 and "no DuckLake catalog there yet" in body, body
        assert probe.stop(60) == 0, probe.log()
        assert not (tmp_path / "none.sqlite").exists()
    finally:
        os.close(slave)
        os.close(master)
