"""Upsert datasets on Iceberg v3 with deletion vectors (upsert.iceberg_deletes:
deletion_vectors): each flush commits one snapshot holding the new rows and, for every live
data file with older rows of the flush's keys, one deletion vector (a Puffin blob) merged with
the file's current one, which the snapshot replaces. A windowed aggregation's changelog keyed
by (g, w), with re-emissions and tombstones, reads as one row per live key with its latest
value through DuckDB's iceberg extension, pyiceberg (0.12 reads deletion vectors) and Spark
(Iceberg 1.11), also through SIGKILLs with rebalances."""

from __future__ import annotations

import collections
import json
from pathlib import Path

import pytest

from tests.e2e.test_ingest_iceberg import IcebergLake
from tests.e2e.test_ingest_iceberg_upsert import changelog_lake, duckdb_rows, land_in_halves, \
    ledger
from tests.e2e.test_ingest_iceberg_upsert import spark_rows as spark_catalog_rows
from tests.e2e.test_ingest_upsert import KEYS, UPSERT, changelog, check_rows, upsert_kill_loop
from tests.e2e.test_maintain import expire, maintain, stats
from tests.e2e.test_maintain_compact import spark_rows
from tests.e2e.weir_run import WeirIngest, create_topic, produce, unique, wait_for

DV = {"WEIR_UPSERT_ICEBERG_DELETES": "deletion_vectors"}


def check_dv_snapshots(lake: IcebergLake, duck, history: bool = True) -> list[tuple]:
    """A format 3 table whose delete files are all deletion vectors: PUFFIN position deletes
    naming a live data file each (`referenced_data_file`, read with DuckDB's avro extension:
    pyiceberg's DataFile has no accessor for it), at most one live vector per data file, and no
    equality delete file; with `history`, some snapshot replaced a vector (merged with new
    positions). Returns the live vectors' (content, format, referenced data file, offset, size,
    cardinality, Puffin file)."""
    from pyiceberg.manifest import ManifestContent

    table = lake.table("agg")
    assert table.metadata.format_version == 3
    snapshot = table.current_snapshot()
    live_data, vectors = set(), []
    for manifest in snapshot.manifests(table.io):
        if manifest.content == ManifestContent.DATA:
            live_data.update(e.data_file.file_path
                             for e in manifest.fetch_manifest_entry(table.io))
            continue
        path = manifest.manifest_path.removeprefix("file://")
        vectors += duck.execute(
            "SELECT data_file.content, data_file.file_format, data_file.referenced_data_file, "
            "data_file.content_offset, data_file.content_size_in_bytes, data_file.record_count, "
            "data_file.file_path "
            f"FROM read_avro('{path}') WHERE status <> 2").fetchall()
    assert vectors
    assert {(content, fmt) for content, fmt, *_ in vectors} == {(1, "PUFFIN")}
    assert all(offset is not None and size > 0 for *_, offset, size, _, _ in vectors)
    per_file = collections.Counter(v[2] for v in vectors)
    assert None not in per_file
    assert max(per_file.values()) == 1, per_file.most_common(3)
    assert set(per_file) <= live_data
    summaries = [s.summary.additional_properties for s in table.snapshots()]
    assert not any("added-equality-delete-files" in s for s in summaries)
    if history:  # every snapshot is still there
        assert sum(int(s.get("added-dvs", 0)) for s in summaries) > len(vectors)
        assert any(int(s.get("removed-dvs", 0)) > 0 for s in summaries)
    summary = snapshot.summary.additional_properties
    assert int(summary["total-delete-files"]) == len(vectors)
    assert int(summary["total-position-deletes"]) == sum(v[5] for v in vectors)
    return vectors


def check_maintenance(weir: WeirIngest, lake: IcebergLake, duck, state: dict,
                      vectors: list[tuple]) -> None:
    """weir maintain on a deletion vector table: the Puffin files count as referenced (no
    orphans); expiry releases the Puffin files whose vectors were all replaced, keeps the
    others, and the table reads the same; compaction applies the vectors while rewriting (each
    vector leaves the table with its data file, in the `replace` snapshot) and the table still
    reads the same."""
    report = stats(weir)["main.agg"]
    assert report["orphan_files"] == 0, report["orphans"]
    assert report["delete_files"] == len(vectors)
    data = Path(lake.table("agg").location().removeprefix("file://")) / "data"
    before = {str(p) for p in data.glob("*.puffin")}
    expired = expire(weir, "--retain-last", "1", "--yes")["main.agg"]
    released = {p for p in expired["released"] if p.endswith(".puffin")}
    live = {v[6].removeprefix("file://") for v in check_dv_snapshots(lake, duck, history=False)}
    assert released and released <= before and not released & live
    assert {str(p) for p in data.glob("*.puffin")} == before - released == live
    check_rows(duckdb_rows(duck, lake), state, "DuckDB iceberg_scan after expiry")
    check_rows(pyiceberg_rows(lake), state, "pyiceberg after expiry")

    # Every file is small (16 MiB target): one run merges them all, applying every vector.
    live = check_dv_snapshots(lake, duck, history=False)
    run = maintain(weir, "compact", "--json", "--target-size", "16MiB")
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    compacted = json.loads(run.stdout)["tables"][0]["compact"]
    assert compacted["files_not_rewritable"] == 0, compacted["notes"]
    assert compacted["runs_committed"] == compacted["runs_planned"] == 1, compacted
    assert compacted["delete_files_dropped"] == len(live)
    assert compacted["deletes_applied"] == compacted["deleted_rows"] == sum(v[5] for v in live)
    assert compacted["rows"] == len(state)
    summary = lake.table("agg").current_snapshot().summary
    assert summary.operation.value == "replace"
    extra = summary.additional_properties
    assert extra["removed-dvs"] == str(len(live)) and extra["total-delete-files"] == "0"
    assert extra["total-records"] == str(len(state))
    check_rows(duckdb_rows(duck, lake), state, "DuckDB iceberg_scan after compaction")
    check_rows(pyiceberg_rows(lake), state, "pyiceberg after compaction")


def pyiceberg_rows(lake: IcebergLake) -> list[tuple]:
    frame = lake.table("agg").scan(selected_fields=("g", "w", "v", "n")).to_arrow()
    return list(zip(*(frame.column(c).to_pylist() for c in ("g", "w", "v", "n"))))


def spark_dv_rows(lake: IcebergLake) -> list[tuple]:
    return [r[:4] for r in spark_rows(lake.table("agg").metadata_location, "g, w, v, n")]


@pytest.mark.parametrize("catalog", ["sql", "rest"])
def test_a_changelog_lands_one_row_per_live_key_through_deletion_vectors(
    catalog, kafka, build_dir, tmp_path, duck, request
):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("ice_dv_changelog")
    create_topic(bootstrap, topic, 4)
    records, state = changelog(200_000, seed=17)
    assert sum(1 for _, v in records if v is None) > 10_000  # tombstones
    assert len(state) < KEYS  # some keys end deleted
    lake, rest = changelog_lake(catalog, tmp_path, request)
    settings = {**UPSERT, **DV, "WEIR_PARTITION_BY": "w"}  # vectors planned per partition
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "agg", unique("group"), settings)
    land_in_halves(weir, lake, bootstrap, topic, records)
    log = weir.log_path.read_text()
    assert "created Iceberg table" in log and "(format version 3)" in log
    assert "deletion vector(s))" in log and "equality delete file(s)" not in log
    check_dv_snapshots(lake, duck)
    check_rows(duckdb_rows(duck, lake), state, "DuckDB iceberg_scan")
    check_rows(pyiceberg_rows(lake), state, "pyiceberg")
    if rest is None:
        check_rows(spark_dv_rows(lake), state, "Spark (the metadata file)")
    else:
        check_rows(spark_catalog_rows(lake, rest), state, "Spark (the REST catalog)")


def test_an_unpartitioned_table_under_maintenance_and_a_format_2_table(
    kafka, build_dir, tmp_path, duck
):
    """Without partitions the vectors are planned by the key columns' bounds alone; weir
    maintain's stats, compaction and expiry handle the vectors (check_maintenance); and a
    format 2 table (created by an equality-deletes run) stops a deletion-vector run at startup,
    naming the setting and the table."""
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("ice_dv_small")
    create_topic(bootstrap, topic, 2)
    records, state = changelog(30_000, seed=18)
    lake = IcebergLake(tmp_path / "lake")
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "agg", unique("group"),
                      {**UPSERT, **DV, "WEIR_FLUSH_MAX_BYTES": "256KiB"})
    weir.start()
    try:
        produce(bootstrap, topic, records)
        wait_for(lambda: ledger(lake, topic) >= len(records) or not weir.alive(), 300,
                 "every record committed")
        assert weir.alive(), weir.log()
    finally:
        code = weir.stop()
    assert code == 0, weir.log()
    vectors = check_dv_snapshots(lake, duck)
    check_rows(duckdb_rows(duck, lake), state, "DuckDB iceberg_scan")
    check_rows(pyiceberg_rows(lake), state, "pyiceberg")
    check_maintenance(weir, lake, duck, state, vectors)

    v2_lake = IcebergLake(tmp_path / "v2")
    v2_topic = unique("ice_dv_v2")
    create_topic(bootstrap, v2_topic, 1)
    first = WeirIngest(build_dir, v2_lake, bootstrap, v2_topic, "agg", unique("group"), UPSERT)
    first.start()
    try:
        produce(bootstrap, v2_topic, records[:1000])
        wait_for(lambda: ledger(v2_lake, v2_topic) >= 1000 or not first.alive(), 120,
                 "the equality run committed")
    finally:
        assert first.stop() == 0, first.log()
    assert v2_lake.table("agg").metadata.format_version == 2
    second = WeirIngest(build_dir, v2_lake, bootstrap, v2_topic, "agg", unique("group"),
                        {**UPSERT, **DV})
    second.start()
    code = second.process.wait(timeout=120)
    assert code != 0, second.log()
    assert ("upsert.iceberg_deletes is deletion_vectors, which needs an Iceberg format version "
            "3 table, and table main.agg is format version 2") in second.log()


def test_kill_loop_during_deletion_vector_upserts_keeps_one_row_per_key(
    kafka, build_dir, tmp_path, duck
):
    lake = IcebergLake(tmp_path / "lake")
    topic = unique("ice_dv_kills")
    state = upsert_kill_loop(kafka["WEIR_TEST_KAFKA_BOOTSTRAP"], build_dir, lake, topic,
                             20261204, lambda: ledger(lake, topic), 900, DV)
    check_dv_snapshots(lake, duck)
    check_rows(duckdb_rows(duck, lake), state, "DuckDB iceberg_scan")
    check_rows(pyiceberg_rows(lake), state, "pyiceberg")
