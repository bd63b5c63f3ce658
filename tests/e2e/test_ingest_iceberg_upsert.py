"""Upsert datasets (issue 15) on Iceberg v2: each flush commits one snapshot holding equality
delete files on the key columns (a delete manifest) plus the new rows, so a windowed
aggregation's changelog keyed by (g, w) reads as one row per live key with its latest value,
through re-emissions (byte-identical and new values), tombstones, SIGKILLs with rebalances and
aborted transactions, and `weir maintain compact` running alongside (it applies the equality
deletes by value; a flush landing between its plan and its commit gives its run up). Read back
by DuckDB's iceberg extension and Spark; pyiceberg (0.12) refuses to plan a scan over equality
deletes, which the first test pins."""

from __future__ import annotations

import json
import subprocess
import threading
import time

import pytest

from tests.e2e.test_ingest_iceberg import IcebergLake
from tests.e2e.test_ingest_upsert import KEYS, UPSERT, changelog, check_rows, \
    produce_transactions, upsert_kill_loop
from tests.e2e.weir_run import WeirIngest, create_topic, produce, unique, wait_for

def ledger(lake: IcebergLake, topic: str) -> int:
    """The records the newest ledger covers, read as weir reads it: from the newest snapshot
    of main's ancestry that carries one (a compaction's `replace` snapshot carries none); 0
    while there is none."""
    try:
        table = lake.table("agg")
    except Exception:  # no catalog, namespace or table yet
        return 0
    snapshot = table.current_snapshot()
    while snapshot is not None:
        text = snapshot.summary.additional_properties.get(f"weir.offsets.{topic}")
        if text:
            return sum(json.loads(text).values())
        parent = snapshot.parent_snapshot_id
        snapshot = table.snapshot_by_id(parent) if parent is not None else None
    return 0


def changelog_lake(catalog: str, tmp_path, request) -> tuple[IcebergLake, dict | None]:
    """The lake of a changelog test: the embedded SQL catalog, or ("rest") a namespace of its
    own in the harness's REST catalog, with that catalog's settings."""
    if catalog != "rest":
        return IcebergLake(tmp_path / "lake"), None
    rest = request.getfixturevalue("iceberg_rest")
    return IcebergLake(tmp_path / "lake", rest_uri=rest["WEIR_TEST_ICEBERG_REST_URI"],
                       namespace=unique("ns")), rest


def land_in_halves(weir: WeirIngest, lake: IcebergLake, bootstrap: str, topic: str,
                   records: list) -> None:
    """Starts `weir` and lands `records` in two halves (so that the second half's keys meet
    rows of earlier flushes too), each committed before the next; stops it cleanly."""
    half = len(records) // 2
    weir.start()
    try:
        produce(bootstrap, topic, records[:half])
        wait_for(lambda: ledger(lake, topic) >= half or not weir.alive(), 300,
                 "the first half committed")
        assert weir.alive(), weir.log()
        produce(bootstrap, topic, records[half:])
        wait_for(lambda: ledger(lake, topic) >= len(records) or not weir.alive(), 300,
                 "every record committed")
        assert weir.alive(), weir.log()
    finally:
        code = weir.stop()
    assert code == 0, weir.log()


def duckdb_rows(duck, lake: IcebergLake) -> list[tuple]:
    location = lake.table("agg").metadata_location
    return duck.execute(f"SELECT g, w, v, n FROM iceberg_scan('{location}')").fetchall()


def assert_pyiceberg_refuses(lake: IcebergLake) -> None:
    """pyiceberg 0.12 plans no scan over equality deletes (DataScan.plan_files raises): it
    cannot be one of the readers, and says so rather than returning deleted rows."""
    with pytest.raises(ValueError, match="does not yet support equality deletes"):
        lake.table("agg").scan().to_arrow()


def check_snapshots(lake: IcebergLake) -> None:
    """The shape of an upsert snapshot: `overwrite` (or `delete`), its equality delete files in
    a delete manifest (content 1), content 2 entries on the key columns' field ids."""
    from pyiceberg.manifest import DataFileContent, ManifestContent

    table = lake.table("agg")
    ids = {f.name: f.field_id for f in table.schema().fields}
    operations = {s.summary.operation.value for s in table.snapshots()}
    assert "overwrite" in operations, operations
    snapshot = table.current_snapshot()
    summary = snapshot.summary.additional_properties
    assert int(summary["total-equality-deletes"]) > 0
    assert int(summary["total-delete-files"]) > 0
    overwrite = next(s for s in table.snapshots() if s.summary.operation.value == "overwrite")
    extra = overwrite.summary.additional_properties
    assert int(extra["added-equality-delete-files"]) >= 1
    assert extra["added-delete-files"] == extra["added-equality-delete-files"]
    assert int(extra["added-equality-deletes"]) > 0
    delete_manifests = [m for m in snapshot.manifests(table.io)
                        if m.content == ManifestContent.DELETES]
    assert delete_manifests
    entries = delete_manifests[0].fetch_manifest_entry(table.io)
    assert entries and all(e.data_file.content == DataFileContent.EQUALITY_DELETES
                           for e in entries)
    assert all(sorted(e.data_file.equality_ids) == sorted([ids["g"], ids["w"]]) for e in entries)


def spark_rows(lake: IcebergLake, rest: dict) -> list[tuple]:
    from tests.harness.spark import spark_session

    with spark_session(rest["WEIR_TEST_ICEBERG_REST_URI"],
                       rest["WEIR_TEST_ICEBERG_REST_WAREHOUSE"]) as spark:
        frame = spark.sql(f"SELECT g, w, v, n FROM rest.{lake.namespace}.agg")
        return [tuple(r) for r in frame.collect()]


@pytest.mark.parametrize("catalog", ["sql", "rest"])
def test_a_changelog_lands_one_row_per_live_key_with_its_latest_value(
    catalog, kafka, build_dir, tmp_path, duck, request
):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("ice_changelog")
    create_topic(bootstrap, topic, 4)
    records, state = changelog(200_000, seed=15)
    assert sum(1 for _, v in records if v is None) > 10_000  # tombstones
    assert len(state) < KEYS  # some keys end deleted
    settings = dict(UPSERT)
    lake, rest = changelog_lake(catalog, tmp_path, request)
    if rest is not None:
        settings["WEIR_PARTITION_BY"] = "w"  # deletes scoped by partition
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "agg", unique("group"), settings)
    land_in_halves(weir, lake, bootstrap, topic, records)
    check_rows(duckdb_rows(duck, lake), state, "DuckDB iceberg_scan")
    check_snapshots(lake)
    assert_pyiceberg_refuses(lake)
    assert "equality delete file(s)" in weir.log_path.read_text()
    if rest is not None:
        check_rows(spark_rows(lake, rest), state, "Spark")


def test_kill_loop_during_iceberg_upserts_keeps_one_row_per_key(kafka, build_dir, tmp_path, duck):
    lake = IcebergLake(tmp_path / "lake")
    topic = unique("ice_changelog_kills")
    state = upsert_kill_loop(kafka["WEIR_TEST_KAFKA_BOOTSTRAP"], build_dir, lake, topic,
                             20261203, lambda: ledger(lake, topic), 600)
    check_rows(duckdb_rows(duck, lake), state, "DuckDB iceberg_scan")


def test_aborted_transactions_never_land_in_iceberg(kafka, build_dir, tmp_path, duck):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("ice_changelog_tx")
    partitions = 4
    create_topic(bootstrap, topic, partitions)
    lake = IcebergLake(tmp_path / "lake")
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "agg", unique("group"), UPSERT).start()

    def sentinels() -> int:
        try:
            return sum(1 for _, w, _, _ in duckdb_rows(duck, lake) if w == -1)
        except Exception:  # no table yet
            return 0

    try:
        state = produce_transactions(bootstrap, topic, partitions)
        wait_for(lambda: sentinels() == partitions, 240, "the sentinels")
    finally:
        code = weir.stop()
    assert code == 0, weir.log()
    rows = duckdb_rows(duck, lake)
    assert [r for r in rows if r[2] == -1 or r[1] == 99] == []
    check_rows(rows, state, "DuckDB iceberg_scan")


def test_weirs_compaction_during_iceberg_upserts_keeps_one_row_per_key(
        kafka, build_dir, tmp_path, duck):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("ice_changelog_compact")
    create_topic(bootstrap, topic, 4)
    records, state = changelog(100_000, seed=19)
    lake = IcebergLake(tmp_path / "lake")
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "agg", unique("group"), UPSERT).start()
    stop = threading.Event()
    reports: list[dict] = []
    failures: list[str] = []

    def compact():
        env = dict(weir.env, WEIR_HTTP_PORT="0", WEIR_LOG_LEVEL="warn")
        while not stop.is_set():
            run = subprocess.run([str(build_dir / "weir"), "maintain", "compact", "--json",
                                  "--target-size", "16MiB"], env=env, cwd=lake.root,
                                 capture_output=True, text=True, stdin=subprocess.DEVNULL,
                                 timeout=600)
            if run.returncode != 0:
                failures.append(run.stdout[-2000:] + run.stderr[-2000:])
                return
            tables = {t["table"]: t for t in json.loads(run.stdout)["tables"]}
            if "main.agg" in tables:
                reports.append(tables["main.agg"]["compact"])
            time.sleep(0.5)

    compactor = threading.Thread(target=compact, daemon=True)
    try:
        produce(bootstrap, topic, records[:20_000])
        wait_for(lambda: ledger(lake, topic) >= 20_000 or not weir.alive(), 240,
                 "the first keys committed")
        compactor.start()
        chunk = 8_000
        for start in range(20_000, len(records), chunk):
            produce(bootstrap, topic, records[start:start + chunk])
            time.sleep(1)
        wait_for(lambda: ledger(lake, topic) >= len(records) or not weir.alive(), 300,
                 "every record committed")
        assert weir.alive(), weir.log()
    finally:
        stop.set()
        compactor.join(timeout=600)
        code = weir.stop()
    assert code == 0, weir.log()
    assert failures == [], failures
    committed = sum(r["runs_committed"] for r in reports)
    assert committed > 0, reports
    assert sum(r["equality_deletes_applied"] for r in reports) > 0, reports
    check_rows(duckdb_rows(duck, lake), state, "DuckDB iceberg_scan")
    # A last compaction with ingest stopped merges every file and drops every delete file, so
    # pyiceberg (which refuses equality deletes) reads the table too.
    env = dict(weir.env, WEIR_HTTP_PORT="0", WEIR_LOG_LEVEL="warn")
    run = subprocess.run([str(build_dir / "weir"), "maintain", "compact", "--json",
                          "--target-size", "16MiB"], env=env, cwd=lake.root, capture_output=True,
                         text=True, stdin=subprocess.DEVNULL, timeout=600)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    files = lake.table("agg").inspect.files().to_pylist()
    assert [f["file_path"] for f in files if f["content"] != 0] == []
    assert len(files) == 1, [f["file_path"] for f in files]
    check_rows(duckdb_rows(duck, lake), state, "DuckDB iceberg_scan after a last compaction")
    scanned = lake.table("agg").scan(selected_fields=("g", "w", "v", "n")).to_arrow().to_pylist()
    check_rows([(r["g"], r["w"], r["v"], r["n"]) for r in scanned], state, "pyiceberg")
