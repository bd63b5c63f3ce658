"""One record path (issue 31): the same event mix through direct and WAL mode lands the same rows
and the same rejects, and counts the same `weir_*` counters, on DuckLake and on Iceberg.

The mix exercises every record stage both modes share (ingest/record_stages.h): field names the
decoder drops or renames, integers beyond int64, Kafka metadata columns (a payload field named
like one, a key that is not UTF-8), typed columns (a value that does not cast), the filters
(an allowlist and a denylist), VARIANT companions (malformed JSON, a payload field named like the
companion), and poison records for the rejects table. Every counter is also checked against the
value the mix implies, so two modes that both count nothing cannot pass."""

from __future__ import annotations

import json
import re

import pytest

from tests.e2e.test_ingest_iceberg import IcebergLake
from tests.e2e.test_ingest_iceberg_variant import metadata, total_records
from tests.e2e.weir_run import Lake, WeirIngest, create_topic, produce, unique, wait_for

N = 400
PARTITIONS = 2
SETTINGS = {
    "WEIR_FLUSH_INTERVAL": "2s",
    "WEIR_TYPED_COLUMNS": "ts:timestamptz,score:double",
    "WEIR_FILTER_KEEP_FIELD": "team",
    "WEIR_FILTER_KEEP_VALUES": "0,1,2,3",
    "WEIR_FILTER_DROP_FIELD": "user",
    "WEIR_FILTER_DROP_VALUES": "bot",
    "WEIR_VARIANT_COLUMNS": "doc",
    "WEIR_METADATA_COLUMNS": "kafka_offset:offset,kafka_key:key",
}
WAL = {"WEIR_INGEST_MODE": "wal", "WEIR_WAL_MAX_FILE_AGE": "1s", "WEIR_WAL_COMMIT_INTERVAL": "2s"}


def poison(i: int) -> bool:
    return i % 31 == 7


def record(i: int) -> tuple[bytes, bytes]:
    """The key and payload of event i."""
    key = b"\xff\xfe" if i % 11 == 0 else f"k{i}".encode()
    if poison(i):
        return key, b"[1, 2, 3]" if i % 2 else b"{not json"
    event: dict = {
        "id": i,
        "team": i % 5,  # 4 is not in the allowlist
        "user": "bot" if i % 9 == 0 else f"u{i % 4}",
        "ts": "not a time" if i % 17 == 0 else f"2026-12-0{1 + i % 7}T10:00:00Z",
        "score": f"{i}.5",
        "doc": "{broken" if i % 13 == 0 else json.dumps({"a": i, "tags": ["x", i]}),
    }
    if i % 19 == 0:
        event["doc_variant"] = "forged"  # loses to the companion
    if i % 10 == 3:
        event["KAFKA_OFFSET"] = "forged"  # loses to the metadata column
    if i % 23 == 0:
        event["big"] = 2**63 + i  # beyond int64: kept as a double, counted
    if i % 29 == 0:
        event["_inserted_at"] = "reserved"  # weir's own column: dropped
    if i % 37 == 0:
        event["row_id"] = i  # DuckLake's reserved name: written as row_id_
    return key, json.dumps(event).encode()


def landed(i: int) -> bool:
    return not poison(i) and i % 5 != 4 and i % 9 != 0


def expected_counters() -> dict[tuple[str, str], int]:
    good = [i for i in range(N) if not poison(i)]
    kept = [i for i in good if landed(i)]
    return {
        ("weir_records_consumed_total", ""): N,
        ("weir_records_rejected_total", "not_an_object"):
            sum(1 for i in range(N) if poison(i) and i % 2),
        ("weir_records_rejected_total", "invalid_json"):
            sum(1 for i in range(N) if poison(i) and not i % 2),
        ("weir_records_filtered_total", "filter_excluded"): sum(1 for i in good if i % 5 == 4),
        ("weir_records_filtered_total", "filter_dropped"):
            sum(1 for i in good if i % 5 != 4 and i % 9 == 0),
        ("weir_values_nulled_total", "column_coercion"): sum(1 for i in good if i % 17 == 0),
        ("weir_values_nulled_total", "variant_invalid_json"): sum(1 for i in kept if i % 13 == 0),
        ("weir_values_nulled_total", "invalid_utf8"): sum(1 for i in good if i % 11 == 0),
        ("weir_values_nulled_total", "integer_beyond_int64"): sum(1 for i in good if i % 23 == 0),
        ("weir_fields_dropped_total", "variant_companion"): sum(1 for i in kept if i % 19 == 0),
        ("weir_fields_dropped_total", "metadata_column"): sum(1 for i in good if i % 10 == 3),
        ("weir_fields_dropped_total", "reserved_name"): sum(1 for i in good if i % 29 == 0),
    }


# The counters compared between the modes: every series of these, whatever its labels.
COMPARED = ("weir_records_consumed_total", "weir_records_rejected_total",
            "weir_records_filtered_total", "weir_filter_matched_total",
            "weir_values_nulled_total", "weir_fields_dropped_total",
            "weir_fields_renamed_total", "weir_columns_coerced_total",
            "weir_column_coercion_errors_total", "weir_records_written_total")


def counters(weir: WeirIngest) -> dict[str, float]:
    found = {}
    for series, value in weir.metrics().items():
        if series.partition("{")[0] in COMPARED and value != 0:
            found[series] = value
    return found


def by_reason(found: dict[str, float]) -> dict[tuple[str, str], int]:
    out: dict[tuple[str, str], int] = {}
    for series, value in found.items():
        name, _, rest = series.partition("{")
        reason = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', rest)).get("reason", "")
        out[(name, reason)] = out.get((name, reason), 0) + int(value)
    return out


# Not compared row by row: the time of the write, and the VARIANT companion (its values are
# test_ingest_variant.py's and test_ingest_iceberg_variant.py's; pyiceberg cannot read it).
IGNORED = {"_inserted_at", "doc_variant"}


class Cell:
    """One lake, read back by DuckDB (DuckLake through its extension, Iceberg by iceberg_scan of
    the table's metadata file: pyiceberg cannot load a table with a VARIANT column)."""

    def __init__(self, fmt: str, root, duck):
        self.fmt, self.root, self.duck = fmt, root, duck
        self.lake = Lake(root) if fmt == "ducklake" else IcebergLake(root)

    def columns(self, table: str) -> list[str]:
        if self.fmt == "ducklake":
            con = self.lake.connect()
            try:
                return sorted(r[0] for r in con.execute(
                    f"SELECT column_name FROM (DESCRIBE lake.{table})").fetchall())
            finally:
                con.close()
        meta = metadata(self.lake, table)[1]
        schema = next(s for s in meta["schemas"] if s["schema-id"] == meta["current-schema-id"])
        return sorted(f["name"] for f in schema["fields"])

    def rows(self, table: str) -> list[tuple]:
        wanted = [c for c in self.columns(table) if c not in IGNORED]
        select = ", ".join(f"CAST({c} AS VARCHAR)" for c in wanted)
        if self.fmt == "ducklake":
            con = self.lake.connect()
            try:
                return con.execute(f"SELECT {select} FROM lake.{table} ORDER BY ALL").fetchall()
            finally:
                con.close()
        location = metadata(self.lake, table)[0]
        return self.duck.execute(
            f"SELECT {select} FROM iceberg_scan('{location}') ORDER BY ALL").fetchall()

    def count(self, table: str) -> int:
        if self.fmt == "ducklake":
            return self.lake.count(table)
        return total_records(self.lake, table)


def run(mode: str, fmt: str, kafka, duck, build_dir, tmp_path) -> tuple[Cell, dict[str, float]]:
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique(f"matrix_{mode}")
    create_topic(bootstrap, topic, PARTITIONS)
    assert produce(bootstrap, topic, (record(i) for i in range(N))) == N
    cell = Cell(fmt, tmp_path / f"{mode}-{fmt}", duck)
    settings = dict(SETTINGS)
    if mode == "wal":
        settings.update(WAL, WEIR_WAL_DIR=str(cell.root / "wal"))
    weir = WeirIngest(build_dir, cell.lake, bootstrap, topic, "events", unique("group"),
                      settings).start()
    kept = sum(1 for i in range(N) if landed(i))
    rejected = sum(1 for i in range(N) if poison(i))
    try:
        wait_for(lambda: (cell.count("events") == kept and cell.count("events_rejects") == rejected)
                 or not weir.alive(), 120, f"{kept} rows and {rejected} rejects ({mode}, {fmt})")
        assert weir.alive(), weir.log()
        found = counters(weir)
    finally:
        assert weir.stop() == 0, weir.log()
    return cell, found


@pytest.mark.parametrize("fmt", ["ducklake", "iceberg"])
def test_direct_and_wal_mode_land_and_count_the_same_event_mix(fmt, kafka, duck, build_dir,
                                                               tmp_path):
    direct, direct_counters = run("direct", fmt, kafka, duck, build_dir, tmp_path)
    wal, wal_counters = run("wal", fmt, kafka, duck, build_dir, tmp_path)
    # The same counters, series by series (labels included).
    assert wal_counters == direct_counters
    # And the values the mix implies (zero would hide a stage counted in neither mode).
    counted = by_reason(direct_counters)
    for key, value in expected_counters().items():
        assert counted.get(key, 0) == value, (key, counted)
    assert counted[("weir_records_written_total", "")] == sum(1 for i in range(N) if landed(i))
    # The same rows and rejects, value for value.
    assert wal.columns("events") == direct.columns("events")
    assert "doc_variant" in direct.columns("events")
    direct_rows = direct.rows("events")
    assert len(direct_rows) == sum(1 for i in range(N) if landed(i))
    assert wal.rows("events") == direct_rows
    assert wal.count("events_rejects") == direct.count("events_rejects") == \
        sum(1 for i in range(N) if poison(i))


@pytest.mark.parametrize("mode", ["direct", "wal"])
@pytest.mark.parametrize("fmt", ["ducklake", "iceberg"])
def test_a_table_changed_under_the_writer_is_reloaded_in_both_modes(mode, fmt, kafka, duck,
                                                                    build_dir, tmp_path):
    """Another writer adds a column while weir runs; weir's next schema change (a new field)
    meets a table that is not the one it loaded: it reloads the table and goes on, in either
    mode (WAL mode used to stop with "table changed")."""
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique(f"changed_{mode}")
    create_topic(bootstrap, topic, 1)
    cell = Cell(fmt, tmp_path / "lake", duck)
    settings = {"WEIR_FLUSH_INTERVAL": "1s"}
    if mode == "wal":
        settings.update(WAL, WEIR_WAL_DIR=str(cell.root / "wal"))
    first = [(None, json.dumps({"id": i, "v": "a"}).encode()) for i in range(50)]
    assert produce(bootstrap, topic, first) == 50
    weir = WeirIngest(build_dir, cell.lake, bootstrap, topic, "events", unique("group"),
                      settings).start()
    try:
        wait_for(lambda: cell.count("events") == 50 or not weir.alive(), 90, "the first 50 rows")
        assert weir.alive(), weir.log()
        if fmt == "ducklake":
            con = cell.lake.connect(read_only=False)
            con.execute("ALTER TABLE lake.events ADD COLUMN ext VARCHAR")
            con.close()
        else:
            from pyiceberg.types import StringType

            with cell.lake.table("events").update_schema() as update:
                update.add_column("ext", StringType())
        second = [(None, json.dumps({"id": i, "v": "b", "extra": i}).encode())
                  for i in range(50, 100)]
        assert produce(bootstrap, topic, second) == 50
        wait_for(lambda: cell.count("events") == 100 or not weir.alive(), 90, "all 100 rows")
        assert weir.alive(), weir.log()
    finally:
        assert weir.stop() == 0, weir.log()
    assert cell.columns("events") == sorted(["id", "v", "ext", "extra", "_inserted_at"])
    # (ext, extra, id, v): ext is the other writer's, never written by weir.
    assert sorted(cell.rows("events"), key=repr) == sorted(
        [(None, None, str(i), "a") for i in range(50)] +
        [(None, str(i), str(i), "b") for i in range(50, 100)], key=repr)
