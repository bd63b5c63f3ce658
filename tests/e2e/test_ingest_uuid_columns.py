"""uuid typed columns (issue 14; millpond's `col:uuid` pin): every shape of millpond's uuid
grammar lands as its exact 16 bytes in a real uuid column — DuckDB's UUID through the ducklake
extension, Iceberg's uuid through pyiceberg and DuckDB's iceberg extension — written as Parquet
FIXED_LEN_BYTE_ARRAY(16) with the UUID logical type; every refused shape is nulled and counted
(the per-column counters, coerced vs coercion error, are exclusive); the pre-write sort orders a
uuid by its bytes; and the live column wins both ways: a uuid pin on a live varchar column
writes canonical text, unpinned text into a live uuid column is parsed."""

from __future__ import annotations

import json
import uuid

import pyarrow.parquet as pq
import pytest

from tests.e2e.test_ingest_iceberg import IcebergLake
from tests.e2e.weir_run import Lake, WeirIngest, create_topic, produce, unique, wait_for

C = "0123abcd-4567-89ef-0123-456789abcdef"
V7 = "01936d5a-7c3e-7b2a-9f1e-5d4c3b2a1f0e"

# (value in the record, the uuid it stores, or None when it is nulled)
CASES = [
    (C, C),  # canonical
    (C.upper(), C),  # hex digits in any case
    ("0123aBcD-4567-89eF-0123-456789AbCdEf", C),
    (C.replace("-", ""), C),  # 32 hex digits
    ("{" + C + "}", C),  # in braces
    ("{" + C.replace("-", "").upper() + "}", C),
    ("urn:uuid:" + C, C),  # after the URN prefix
    ("urn:uuid:" + C.replace("-", ""), C),
    ("00000000-0000-0000-0000-000000000000", "00000000-0000-0000-0000-000000000000"),
    ("ffffffff-ffff-ffff-ffff-ffffffffffff", "ffffffff-ffff-ffff-ffff-ffffffffffff"),
    (V7, V7),  # version and variant bits are not checked
    ("7a1b2c3d-4e5f-1234-c567-89abcdef0123", "7a1b2c3d-4e5f-1234-c567-89abcdef0123"),
    ("URN:UUID:" + C, None),  # the prefix is case-sensitive
    ("uuid:" + C, None),
    ("urn:" + C, None),
    ("{urn:uuid:" + C + "}", None),
    ("urn:uuid:{" + C + "}", None),
    (C + "urn:", None),
    ("0123-abcd-4567-89ef-0123-4567-89ab-cdef", None),  # hyphens at other offsets
    ("0123abcd4567-89ef-0123-456789abcdef", None),
    ("0x" + C.replace("-", ""), None),  # radix prefix
    ("0123abcd_4567_89ef_0123_456789abcdef", None),  # PEP 515 underscores
    (C[:-1] + "g", None),  # not hex
    (C[:-1], None),
    (C + "0", None),
    (" " + C, None),
    (C + " ", None),
    ("{" + C, None),
    ("", None),
    (7, None),  # a JSON number is never a uuid
]
NULLED = sum(1 for _, want in CASES if want is None)


def records(first_id: int = 0) -> list[dict]:
    # `other` is a second pinned column whose every value is good: counted as coerced.
    return [{"id": first_id + i, "u": text, "other": V7} for i, (text, _) in enumerate(CASES)]


def expected(first_id: int = 0) -> dict[int, uuid.UUID | None]:
    return {first_id + i: (uuid.UUID(want) if want else None) for i, (_, want) in enumerate(CASES)}


def as_uuid(value) -> uuid.UUID | None:
    if value is None or isinstance(value, uuid.UUID):
        return value
    return uuid.UUID(bytes=bytes(value))


def ingest(lake, build_dir, bootstrap, settings, rows: list[dict], table: str = "events",
           topic: str | None = None, total: int | None = None) -> WeirIngest:
    """Produces `rows`, runs weir until `total` rows are in the table (one flush), checks it ran
    cleanly and returns the stopped process (its last metrics kept in `final`)."""
    if topic is None:
        topic = unique("uuid")
        create_topic(bootstrap, topic, 1)
    assert produce(bootstrap, topic, ((None, json.dumps(r).encode()) for r in rows)) == len(rows)
    weir = WeirIngest(build_dir, lake, bootstrap, topic, table, unique("group"),
                      {"WEIR_FLUSH_INTERVAL": "3s", **settings}).start()
    want = total if total is not None else len(rows)
    try:
        wait_for(lambda: lake.count(table) == want or not weir.alive(), 120, f"{want} rows")
        assert weir.alive(), weir.log()
        weir.final = {
            "errors": weir.metric("weir_column_coercion_errors_total", column="u",
                                  target_type="uuid"),
            "coerced": weir.metric("weir_columns_coerced_total", column="u", target_type="uuid"),
            "other_errors": weir.metric("weir_column_coercion_errors_total", column="other"),
            "other_coerced": weir.metric("weir_columns_coerced_total", column="other",
                                         target_type="uuid"),
            "column_coercion": weir.metric("weir_values_nulled_total", reason="column_coercion"),
            "type_mismatch": weir.metric("weir_values_nulled_total", reason="type_mismatch"),
            "written": weir.metric("weir_records_written_total"),
        }
    finally:
        assert weir.stop() == 0, weir.log()
    return weir


def check_pinned_counters(weir: WeirIngest) -> None:
    # One flush: u had values nulled (an error, not coerced); other was cast cleanly.
    assert weir.final == {"errors": 1, "coerced": 0, "other_errors": 0, "other_coerced": 1,
                          "column_coercion": NULLED, "type_mismatch": 0,
                          "written": len(CASES)}, weir.final


def ducklake_types(con) -> dict[str, str]:
    return dict(con.execute(
        "SELECT column_name, data_type FROM information_schema.columns "
        "WHERE table_catalog = 'lake' AND table_name = 'events'").fetchall())


def test_uuid_columns_in_ducklake_every_grammar_case_sorted_by_bytes(kafka, build_dir, tmp_path):
    lake = Lake(tmp_path / "lake")
    weir = ingest(lake, build_dir, kafka["WEIR_TEST_KAFKA_BOOTSTRAP"],
                  {"MILLPOND_TYPED_COLUMNS": "u:uuid,other:uuid", "WEIR_SORT_BY": "u"},
                  records())
    check_pinned_counters(weir)
    con = lake.connect()
    try:
        assert ducklake_types(con) == {"id": "BIGINT", "u": "UUID", "other": "UUID",
                                       "_inserted_at": "TIMESTAMP WITH TIME ZONE"}
        got = dict(con.execute("SELECT id, u FROM lake.events").fetchall())
        assert got == expected()
        assert con.execute("SELECT count(*), count(DISTINCT other) FROM lake.events "
                           f"WHERE other = '{V7}'::UUID").fetchone() == (len(CASES), 1)
        # Values compare equal as UUIDs, through the catalog's statistics too.
        assert con.execute(f"SELECT count(*) FROM lake.events WHERE u = '{C}'::UUID").fetchone() \
            == (sum(1 for _, w in CASES if w == C),)
        stats = con.execute(
            "SELECT s.min_value, s.max_value, s.contains_null FROM "
            "__ducklake_metadata_lake.ducklake_table_column_stats s JOIN "
            "__ducklake_metadata_lake.ducklake_column c USING (table_id, column_id) "
            "WHERE c.column_name = 'u'").fetchone()
        assert stats == ("00000000-0000-0000-0000-000000000000",
                         "ffffffff-ffff-ffff-ffff-ffffffffffff", True)
        files = [r[0] for r in con.execute(
            "SELECT data_file FROM ducklake_list_files('lake', 'events')").fetchall()]
    finally:
        con.close()
    # The file: FIXED_LEN_BYTE_ARRAY(16) + UUID, rows in byte order (nulls last) and stable.
    assert len(files) == 1
    parquet = pq.ParquetFile(files[0])
    column = parquet.schema.column(parquet.schema_arrow.get_field_index("u"))
    assert (column.physical_type, column.length, str(column.logical_type)) == \
        ("FIXED_LEN_BYTE_ARRAY", 16, "UUID")
    rows = parquet.read(columns=["id", "u"]).to_pylist()
    order = sorted(expected().items(), key=lambda kv: (kv[1] is None,
                                                       kv[1].bytes if kv[1] else b"", kv[0]))
    assert [(r["id"], as_uuid(r["u"])) for r in rows] == order


def test_uuid_columns_in_iceberg_every_grammar_case_with_bucket_partitions(
    kafka, build_dir, tmp_path, duck
):
    from pyiceberg.transforms import BucketTransform
    from pyiceberg.types import UUIDType

    lake = IcebergLake(tmp_path / "lake")
    weir = ingest(lake, build_dir, kafka["WEIR_TEST_KAFKA_BOOTSTRAP"],
                  {"WEIR_TYPED_COLUMNS": "u:uuid,other:uuid", "WEIR_PARTITION_BY": "bucket[4](u)",
                   "WEIR_SORT_BY": "u"},
                  records())
    check_pinned_counters(weir)
    table = lake.table("events")
    schema = table.schema()
    assert {f.name: str(f.field_type) for f in schema.fields} == {
        "id": "long", "u": "uuid", "other": "uuid", "_inserted_at": "timestamptz"}
    assert isinstance(schema.find_field("u").field_type, UUIDType)
    assert [(str(f.transform), schema.find_field(f.source_id).name)
            for f in table.spec().fields] == [("bucket[4]", "u")]
    assert [schema.find_field(f.source_id).name for f in table.sort_order().fields] == ["u"]
    rows = table.scan().to_arrow().to_pylist()
    assert {r["id"]: as_uuid(r["u"]) for r in rows} == expected()
    assert {as_uuid(r["other"]) for r in rows} == {uuid.UUID(V7)}
    # Each file's partition is pyiceberg's own bucket of its uuids, and its bounds are the
    # 16 big-endian bytes (Appendix D) of its smallest and largest uuid.
    bucket = BucketTransform(4).transform(UUIDType())
    u_id = schema.find_field("u").field_id
    by_id = expected()
    seen = 0
    for task in table.scan().plan_files():
        ids = pq.read_table(task.file.file_path.removeprefix("file://"),
                            columns=["id"]).column("id").to_pylist()
        values = [by_id[i] for i in ids]
        seen += len(ids)
        present = sorted(v.bytes for v in values if v is not None)
        want = bucket(values[0]) if values[0] is not None else None
        assert {bucket(v) if v else None for v in values} == {want}
        assert task.file.partition[0] == want
        if present:
            assert task.file.lower_bounds[u_id] == present[0]
            assert task.file.upper_bounds[u_id] == present[-1]
    assert seen == len(CASES)
    # DuckDB's iceberg extension reads the same uuids, as UUID.
    got = dict(duck.execute(
        f"SELECT id, u FROM iceberg_scan('{table.metadata_location}')").fetchall())
    assert got == expected()
    assert duck.execute(
        f"SELECT DISTINCT typeof(u) FROM iceberg_scan('{table.metadata_location}')"
    ).fetchall() == [("UUID",)]
    assert duck.execute(f"SELECT count(*) FROM iceberg_scan('{table.metadata_location}') "
                        f"WHERE u = '{C}'::UUID").fetchone() == \
        (sum(1 for _, w in CASES if w == C),)


def live_types(lake) -> dict[str, str]:
    if isinstance(lake, IcebergLake):
        return {f.name: str(f.field_type) for f in lake.table("events").schema().fields}
    con = lake.connect()
    try:
        return ducklake_types(con)
    finally:
        con.close()


def live_rows(lake) -> dict:
    if isinstance(lake, IcebergLake):
        return {r["id"]: r["u"] for r in lake.table("events").scan().to_arrow().to_pylist()}
    con = lake.connect()
    try:
        return dict(con.execute("SELECT id, u FROM lake.events").fetchall())
    finally:
        con.close()


def make_lake(kind: str, tmp_path):
    return IcebergLake(tmp_path / "lake") if kind == "iceberg" else Lake(tmp_path / "lake")


@pytest.mark.parametrize("kind", ["ducklake", "iceberg"])
def test_a_uuid_pin_on_a_live_varchar_column_writes_canonical_text(
    kind, kafka, build_dir, tmp_path
):
    """A table made from unpinned records has u VARCHAR; adding u:uuid then leaves the column
    as it is (no DDL): the pin still nulls what is not a uuid (and counts it), and each uuid is
    written back as its canonical lower-case hyphenated text."""
    lake = make_lake(kind, tmp_path)
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("live_varchar")
    create_topic(bootstrap, topic, 1)
    ingest(lake, build_dir, bootstrap, {}, [{"id": -1, "u": "Not-A-Uuid"}], topic=topic)
    varchar = "string" if kind == "iceberg" else "VARCHAR"
    assert live_types(lake)["u"] == varchar
    weir = ingest(lake, build_dir, bootstrap, {"WEIR_TYPED_COLUMNS": "u:uuid"},
                  [{"id": i, "u": text} for i, (text, _) in enumerate(CASES)], topic=topic,
                  total=1 + len(CASES))
    assert weir.final["errors"] == 1 and weir.final["coerced"] == 0, weir.final
    assert weir.final["column_coercion"] == NULLED, weir.final
    assert weir.final["type_mismatch"] == 0, weir.final
    assert live_types(lake)["u"] == varchar
    want = {i: want for i, (_, want) in enumerate(CASES)}
    want[-1] = "Not-A-Uuid"
    assert live_rows(lake) == want


@pytest.mark.parametrize("kind", ["ducklake", "iceberg"])
def test_unpinned_text_into_a_live_uuid_column_is_parsed(kind, kafka, build_dir, tmp_path):
    """A table made with the pin has u as a uuid column; a run without the pin (a rollback, or
    one pod of a mixed fleet on the old configuration) parses the text with the same grammar:
    accepted shapes land as their bytes, the rest is nulled and counted as type_mismatch."""
    lake = make_lake(kind, tmp_path)
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("live_uuid")
    create_topic(bootstrap, topic, 1)
    ingest(lake, build_dir, bootstrap, {"WEIR_TYPED_COLUMNS": "u:uuid"},
           [{"id": -1, "u": V7}], topic=topic)
    uuid_type = "uuid" if kind == "iceberg" else "UUID"
    assert live_types(lake)["u"] == uuid_type
    # Unpinned, the 7 makes the decoded column text ("7"), which is no uuid either.
    weir = ingest(lake, build_dir, bootstrap, {},
                  [{"id": i, "u": text} for i, (text, _) in enumerate(CASES)], topic=topic,
                  total=1 + len(CASES))
    assert weir.final["type_mismatch"] == NULLED, weir.final
    assert weir.final["errors"] == 0 and weir.final["column_coercion"] == 0, weir.final
    assert live_types(lake)["u"] == uuid_type
    want = expected()
    want[-1] = uuid.UUID(V7)
    assert {i: as_uuid(v) for i, v in live_rows(lake).items()} == want


def test_truncate_of_a_typed_uuid_column_stops_startup_naming_the_setting(
    kafka, build_dir, tmp_path
):
    """Iceberg's truncate does not apply to uuids: refused at startup, before anything is
    consumed or created (identity and bucket are accepted, as the Iceberg test above shows)."""
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("uuid_truncate")
    create_topic(bootstrap, topic, 1)
    lake = IcebergLake(tmp_path / "lake")
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group"),
                      {"WEIR_TYPED_COLUMNS": "u:uuid", "WEIR_PARTITION_BY": "truncate[4](u)"})
    code = weir.start().process.wait(timeout=60)
    log = weir.log()
    assert code != 0, log
    assert "partition_by: partitioning by truncate[4](u): u is a typed uuid column" in log, log
    assert "created table" not in log, log
    with pytest.raises(Exception, match="events"):  # nothing was created
        lake.table("events")
