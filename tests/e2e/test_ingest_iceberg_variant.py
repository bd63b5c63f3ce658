"""VARIANT companions on Iceberg (issue 14): `variant_columns` makes `<column>_variant` an
Iceberg `variant` column, so the table is created as format version 3 with row lineage
(`next-row-id`, each snapshot's `first-row-id` / `added-rows`, manifests' `first_row_id`).
Records from the real broker land through the embedded SQL catalog (SQLite) and through
Iceberg's REST catalog server; DuckDB's iceberg extension and Spark (Iceberg's runtime) read
every companion back equal to DuckDB's `json::VARIANT` of the source, including integers
beyond INT64 and the records whose `properties` is not JSON (only the companion is null; the
record is counted). Spark also reads each row's `_row_id`: distinct, one per record.

A v2 table weir made before `variant_columns` was set is upgraded in place to format
version 3 when the companion column is added (REST: the `upgrade-format-version` update;
SQL: the next metadata file), its older rows keeping a null companion.

pyiceberg 0.12 is not a reader here: it has no variant type, so it cannot load the table's
schema at all (not even its plain columns); the test asserts that refusal, so a pyiceberg that
learns variant shows up as a failure to update this docstring.
"""

from __future__ import annotations

import json
import sqlite3
import urllib.request

import pytest

from tests.e2e.test_ingest_iceberg import IcebergLake
from tests.e2e.test_ingest_variant import RECORDS, strictly_equal
from tests.e2e.weir_run import WeirIngest, create_topic, produce, unique, wait_for

MALFORMED = 8  # '{not json': the companion is null, the record lands
ABSENT = 11  # no `properties` at all


def metadata(lake: IcebergLake, table: str) -> tuple[str, dict] | None:
    """(metadata location, metadata JSON) of `table`, read without pyiceberg; None while the
    table does not exist."""
    if lake.rest_uri:
        url = f"{lake.rest_uri}/v1/namespaces/{lake.namespace}/tables/{table}"
        try:
            with urllib.request.urlopen(url, timeout=10) as answer:
                loaded = json.load(answer)
        except Exception:  # 404 until weir creates it
            return None
        return loaded["metadata-location"], loaded["metadata"]
    db = lake.root / "weir-lake" / "catalog.db"
    if not db.exists():
        return None
    con = sqlite3.connect(db)
    try:
        row = con.execute(
            "SELECT metadata_location FROM iceberg_tables WHERE table_namespace = ? AND "
            "table_name = ?", (lake.namespace, table)).fetchone()
    except sqlite3.OperationalError:  # the catalog's tables are not made yet
        return None
    finally:
        con.close()
    if row is None:
        return None
    location = row[0].removeprefix("file://")
    with open(location) as f:
        return row[0], json.load(f)


def total_records(lake: IcebergLake, table: str) -> int:
    found = metadata(lake, table)
    if found is None:
        return 0
    meta = found[1]
    head = meta.get("current-snapshot-id")
    for snapshot in meta.get("snapshots", []):
        if snapshot["snapshot-id"] == head:
            return int(snapshot["summary"].get("total-records", 0))
    return 0


def check_row_lineage(meta: dict) -> None:
    """Format 3, every snapshot since the upgrade carrying its row id range, contiguous."""
    assert meta["format-version"] == 3
    lineage = [s for s in meta["snapshots"] if "first-row-id" in s]
    assert lineage, meta["snapshots"]
    lineage.sort(key=lambda s: s["sequence-number"])
    for before, after in zip(lineage, lineage[1:]):
        assert after["first-row-id"] == before["first-row-id"] + before["added-rows"]
    last = lineage[-1]
    assert meta["next-row-id"] == last["first-row-id"] + last["added-rows"]


def duckdb_rows(duck, location: str, extra: str = "") -> dict:
    """id → (properties, companion is null, companion as JSON, json::VARIANT of the source as
    JSON), read by DuckDB's iceberg extension from the table's metadata file."""
    rows = duck.execute(
        "SELECT id, properties, properties_variant IS NULL, properties_variant::JSON, "
        f"try_cast(properties AS JSON)::VARIANT::JSON FROM iceberg_scan('{location}') {extra} "
        "ORDER BY id").fetchall()
    return {r[0]: r[1:] for r in rows}


def check_companions(by_id: dict, ids) -> None:
    assert sorted(by_id) == sorted(ids)
    for i, (source, is_null, ours, duckdbs) in by_id.items():
        if i in (MALFORMED, ABSENT):
            assert is_null, (i, source, ours)  # (DuckDB casts a NULL variant to 'null')
            continue
        assert not is_null, (i, source)
        assert strictly_equal(json.loads(ours), json.loads(duckdbs)), (i, ours, duckdbs)
    assert by_id[MALFORMED][0] == "{not json"
    # Beyond INT64: exact up to UINT64_MAX (a decimal), doubles past it, as DuckDB's cast.
    assert json.loads(by_id[4][2]) == {
        "big": 9223372036854775808, "max": 18446744073709551615, "huge": 1.8446744073709552e19,
        "min": -9223372036854775808, "i64": 9223372036854775807,
        "beyond": 1.2345678901234568e29}


def spark_reads(frame) -> dict:
    """id → (companion as JSON text or None, _row_id) as Spark reads the table's DataFrame."""
    from pyspark.sql import functions as F

    rows = frame.select(frame["id"], F.to_json(frame["properties_variant"]),
                        frame.metadataColumn("_row_id")).collect()
    return {r[0]: (r[1], r[2]) for r in rows}


def check_spark(spark_rows: dict, duck_rows: dict) -> None:
    assert sorted(spark_rows) == sorted(duck_rows)
    for i, (ours, _) in spark_rows.items():
        expected = duck_rows[i][3]
        if i in (MALFORMED, ABSENT):
            assert ours is None, (i, ours)
            continue
        assert strictly_equal(json.loads(ours), json.loads(expected)), (i, ours, expected)
    row_ids = [row_id for _, row_id in spark_rows.values()]
    assert None not in row_ids and len(set(row_ids)) == len(row_ids), row_ids


def start(build_dir, lake, bootstrap, topic, group, variant: bool = True) -> WeirIngest:
    env = {"WEIR_FLUSH_INTERVAL": "3s"}
    if variant:
        env["WEIR_VARIANT_COLUMNS"] = "properties"
    return WeirIngest(build_dir, lake, bootstrap, topic, "events", group, env).start()


def ingest(lake, build_dir, bootstrap, records: dict, total: int, variant: bool = True):
    topic = unique("ice_variant")
    create_topic(bootstrap, topic, 1)
    assert produce(bootstrap, topic, ((None, t.encode()) for t in records.values())) == \
        len(records)
    weir = start(build_dir, lake, bootstrap, topic, unique("group"), variant)
    try:
        wait_for(lambda: total_records(lake, "events") == total or not weir.alive(), 120,
                 f"{total} records")
        assert weir.alive(), weir.log()
        assert weir.metric("weir_records_written_total") == len(records)
        if variant:
            invalid = sum(1 for i in records if i == MALFORMED)
            assert weir.metric("weir_values_nulled_total", reason="variant_invalid_json") == \
                invalid
            dropped = sum(1 for i in records if i in (13, 14))
            assert weir.metric("weir_fields_dropped_total", reason="variant_companion") == \
                dropped
    finally:
        assert weir.stop() == 0, weir.log()
    return weir


def make_lake(kind: str, tmp_path, iceberg_rest) -> IcebergLake:
    if kind == "rest":
        return IcebergLake(tmp_path / "lake", rest_uri=iceberg_rest["WEIR_TEST_ICEBERG_REST_URI"],
                           namespace=unique("ns"))
    return IcebergLake(tmp_path / "lake")


@pytest.mark.parametrize("kind", ["sql", "rest"])
def test_variant_companions_land_in_a_v3_table_read_equal_by_duckdb_and_spark(
    kind, kafka, iceberg_rest, build_dir, tmp_path, duck
):
    from tests.harness.spark import spark_session

    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    lake = make_lake(kind, tmp_path, iceberg_rest)
    ingest(lake, build_dir, bootstrap, RECORDS, len(RECORDS))

    location, meta = metadata(lake, "events")
    check_row_lineage(meta)
    schema = next(s for s in meta["schemas"] if s["schema-id"] == meta["current-schema-id"])
    assert {f["name"]: f["type"] for f in schema["fields"]} == {
        "id": "long", "properties": "string", "properties_variant": "variant",
        "_inserted_at": "timestamptz"}
    assert meta["next-row-id"] >= len(RECORDS)

    by_id = duckdb_rows(duck, location)
    check_companions(by_id, RECORDS)

    # pyiceberg 0.12 has no variant type: it cannot load the table.
    with pytest.raises(Exception) as refused:
        lake.table("events")
    assert "variant" in str(refused.value).lower(), refused.value

    with spark_session(iceberg_rest["WEIR_TEST_ICEBERG_REST_URI"],
                       iceberg_rest["WEIR_TEST_ICEBERG_REST_WAREHOUSE"]) as spark:
        # REST: through the catalog; SQL: the metadata file itself (Iceberg's static table).
        if kind == "sql":
            frame = spark.read.format("iceberg").load(location)
        else:
            frame = spark.table(f"rest.{lake.namespace}.events")
        got = spark_reads(frame)
    check_spark(got, by_id)


@pytest.mark.parametrize("kind", ["sql", "rest"])
def test_a_v2_table_is_upgraded_to_v3_when_a_variant_column_is_added(
    kind, kafka, iceberg_rest, build_dir, tmp_path, duck
):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    lake = make_lake(kind, tmp_path, iceberg_rest)
    first = {i: t for i, t in RECORDS.items() if i <= 3}
    ingest(lake, build_dir, bootstrap, first, len(first), variant=False)
    _, before = metadata(lake, "events")
    assert before["format-version"] == 2 and "next-row-id" not in before
    old_snapshots = {s["snapshot-id"] for s in before["snapshots"]}

    rest = {i: t for i, t in RECORDS.items() if i > 3}
    ingest(lake, build_dir, bootstrap, rest, len(RECORDS))
    location, meta = metadata(lake, "events")
    check_row_lineage(meta)
    assert meta["table-uuid"] == before["table-uuid"]
    for snapshot in meta["snapshots"]:
        if snapshot["snapshot-id"] in old_snapshots:
            assert "first-row-id" not in snapshot, snapshot  # the spec: no ids before v3
    # The first v3 snapshot gives the v2 files row ids too (next-row-id covers every row).
    assert meta["next-row-id"] >= len(RECORDS)

    by_id = duckdb_rows(duck, location)
    assert sorted(by_id) == sorted(RECORDS)
    for i in first:  # written before the companion existed
        assert by_id[i][1] is True, (i, by_id[i])
    check_companions({i: v for i, v in by_id.items() if i > 3}, rest)
