"""Typed columns (issue 14; millpond's MILLPOND_TYPED_COLUMNS): pinned columns land as their
type in DuckLake and Iceberg, every timestamp wire form parses, values that cannot be cast are
nulled one by one, the per-column counters (coerced vs coercion error) are exact and exclusive,
a day() transform of a typed timestamp partitions the table, and a live TIMESTAMPTZ column of a
table made by someone else takes the text of unpinned records."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from tests.e2e.test_ingest_iceberg import IcebergLake
from tests.e2e.weir_run import Lake, WeirIngest, create_topic, produce, unique, wait_for

UTC = dt.timezone.utc
TYPED = "ts:timestamptz,project_id:bigint,score:double,ok:boolean,label:varchar"

# (wire text, the instant it means, or None when it is nulled)
TIMESTAMPS = [
    ("2024-01-01 12:00:00", dt.datetime(2024, 1, 1, 12, tzinfo=UTC)),
    ("2024-01-01 12:00:00.123", dt.datetime(2024, 1, 1, 12, 0, 0, 123000, tzinfo=UTC)),
    ("2024-01-01 12:00:00.123456", dt.datetime(2024, 1, 1, 12, 0, 0, 123456, tzinfo=UTC)),
    ("2024-01-02T08:30:00Z", dt.datetime(2024, 1, 2, 8, 30, tzinfo=UTC)),
    ("2024-01-02T10:30:00.5+02:00", dt.datetime(2024, 1, 2, 8, 30, 0, 500000, tzinfo=UTC)),
    ("2024-01-02T03:00:00-0530", dt.datetime(2024, 1, 2, 8, 30, tzinfo=UTC)),
    ("2024-01-03 00:00", dt.datetime(2024, 1, 3, tzinfo=UTC)),
    ("2024-02-29", dt.datetime(2024, 2, 29, tzinfo=UTC)),
    ("2023-02-29 00:00:00", None),
    ("2024-01-01 12:00:00.1234567", None),
    ("yesterday", None),
    ("2024-01-01 25:00:00", None),
]


def records() -> list[dict]:
    out = []
    for i, (text, _) in enumerate(TIMESTAMPS):
        out.append({"id": i, "ts": text, "project_id": None,
                    "score": ["1.5", 2, "x"][i % 3], "ok": ["true", False, "yes"][i % 3],
                    "label": [7, 2.5, True][i % 3]})
    return out


def expected_rows() -> dict[int, tuple]:
    rows = {}
    for i, (_, instant) in enumerate(TIMESTAMPS):
        rows[i] = (instant, None, [1.5, 2.0, None][i % 3], [True, False, None][i % 3],
                   ["7", "2.5", "true"][i % 3])
    return rows


def check_metrics(weir: WeirIngest) -> None:
    n = len(TIMESTAMPS)
    assert weir.metric("weir_records_written_total") == n
    # One flush: every column reported once, in exactly one of the two families.
    errors = {c: weir.metric("weir_column_coercion_errors_total", column=c)
              for c in ("ts", "project_id", "score", "ok", "label")}
    coerced = {c: weir.metric("weir_columns_coerced_total", column=c)
               for c in ("ts", "project_id", "score", "ok", "label")}
    # label: 7, 2.5, true is promoted to text by decoding, already varchar: not reported.
    assert errors == {"ts": 1, "project_id": 0, "score": 1, "ok": 1, "label": 0}
    assert coerced == {"ts": 0, "project_id": 1, "score": 0, "ok": 0, "label": 0}
    assert weir.metric("weir_columns_coerced_total", column="project_id",
                       target_type="bigint") == 1
    assert weir.metric("weir_column_coercion_errors_total", column="ts",
                       target_type="timestamptz") == 1
    nulled = sum(1 for _, t in TIMESTAMPS if t is None) + n // 3 + n // 3
    assert weir.metric("weir_values_nulled_total", reason="column_coercion") == nulled


def run(lake, build_dir, bootstrap, settings) -> None:
    topic = unique("typed")
    create_topic(bootstrap, topic, 1)
    assert produce(bootstrap, topic, ((None, json.dumps(r).encode()) for r in records())) == \
        len(TIMESTAMPS)
    env = {"WEIR_FLUSH_INTERVAL": "3s", **settings}
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group"), env).start()
    try:
        wait_for(lambda: lake.count("events") == len(TIMESTAMPS) or not weir.alive(), 120,
                 "every record")
        assert weir.alive(), weir.log()
        check_metrics(weir)
    finally:
        assert weir.stop() == 0, weir.log()


@pytest.mark.parametrize("variable", ["WEIR_TYPED_COLUMNS", "MILLPOND_TYPED_COLUMNS"])
def test_typed_columns_in_ducklake_partitioned_by_day_of_a_typed_timestamp(
    variable, kafka, build_dir, tmp_path
):
    lake = Lake(tmp_path / "lake")
    run(lake, build_dir, kafka["WEIR_TEST_KAFKA_BOOTSTRAP"],
        {variable: TYPED, "WEIR_PARTITION_BY": "day(ts)"})
    con = lake.connect()
    try:
        types = dict(con.execute(
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_catalog = 'lake' AND table_name = 'events'").fetchall())
        assert types == {"id": "BIGINT", "ts": "TIMESTAMP WITH TIME ZONE",
                         "project_id": "BIGINT", "score": "DOUBLE", "ok": "BOOLEAN",
                         "label": "VARCHAR", "_inserted_at": "TIMESTAMP WITH TIME ZONE"}
        got = {r[0]: tuple(r[1:]) for r in con.execute(
            "SELECT id, ts, project_id, score, ok, label FROM lake.events").fetchall()}
        assert got == expected_rows()
        # One file per day of ts (and one for the null ts): the partition spec is real.
        files = con.execute(
            "SELECT count(*) FROM ducklake_list_files('lake', 'events')").fetchone()[0]
        days = {t.date() for _, t in TIMESTAMPS if t is not None}
        assert files == len(days) + 1
    finally:
        con.close()


def test_typed_columns_in_iceberg_partitioned_by_day_of_a_typed_timestamp(
    kafka, build_dir, tmp_path
):
    lake = IcebergLake(tmp_path / "lake")
    run(lake, build_dir, kafka["WEIR_TEST_KAFKA_BOOTSTRAP"],
        {"WEIR_TYPED_COLUMNS": TYPED, "WEIR_PARTITION_BY": "day(ts)"})
    table = lake.table("events")
    assert {f.name: str(f.field_type) for f in table.schema().fields} == {
        "id": "long", "ts": "timestamptz", "project_id": "long", "score": "double",
        "ok": "boolean", "label": "string", "_inserted_at": "timestamptz"}
    spec = table.spec()
    assert [(str(f.transform), table.schema().find_field(f.source_id).name)
            for f in spec.fields] == [("day", "ts")]
    rows = table.scan().to_arrow().to_pylist()
    got = {r["id"]: (r["ts"], r["project_id"], r["score"], r["ok"], r["label"]) for r in rows}
    assert got == expected_rows()
    days = {t.date() for _, t in TIMESTAMPS if t is not None}
    assert len(list(table.scan().plan_files())) == len(days) + 1


def test_a_live_timestamptz_column_takes_the_text_of_unpinned_records(kafka, build_dir, tmp_path):
    """The live column wins: once the table has ts TIMESTAMPTZ (made by a pinned run), a run
    with the pin removed (a rollback) still lands every timestamp text as its instant, and text
    outside the grammar is nulled and counted."""
    lake = Lake(tmp_path / "lake")
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("live_ts")
    create_topic(bootstrap, topic, 1)
    produce(bootstrap, topic, [(None, json.dumps({"id": -1, "ts": "2020-05-05 05:05:05"}).encode())])
    pinned = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group"),
                        {"WEIR_TYPED_COLUMNS": "ts:timestamptz"}).start()
    try:
        wait_for(lambda: lake.count("events") == 1 or not pinned.alive(), 120, "the first row")
    finally:
        assert pinned.stop() == 0, pinned.log()
    produce(bootstrap, topic, ((None, json.dumps({"id": i, "ts": t}).encode())
                               for i, (t, _) in enumerate(TIMESTAMPS)))
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group")).start()
    try:
        wait_for(lambda: lake.count("events") == 1 + len(TIMESTAMPS) or not weir.alive(), 120,
                 "every record")
        assert weir.alive(), weir.log()
        assert weir.metric("weir_values_nulled_total", reason="type_mismatch") == \
            sum(1 for _, t in TIMESTAMPS if t is None)
    finally:
        assert weir.stop() == 0, weir.log()
    con = lake.connect()
    try:
        assert con.execute(
            "SELECT data_type FROM information_schema.columns WHERE table_catalog = 'lake' "
            "AND table_name = 'events' AND column_name = 'ts'").fetchone()[0] == \
            "TIMESTAMP WITH TIME ZONE"
        got = dict(con.execute("SELECT id, ts FROM lake.events").fetchall())
    finally:
        con.close()
    want = {i: t for i, (_, t) in enumerate(TIMESTAMPS)}
    want[-1] = dt.datetime(2020, 5, 5, 5, 5, 5, tzinfo=UTC)
    assert got == want
