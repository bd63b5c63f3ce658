"""JMESPath record mappings wired into `weir ingest` (issue 14): a dataset's `mapping` (column →
expression) decides its table's columns, for DuckLake and for Iceberg alike; every mapped row
is exactly what the expressions give, every record an expression fails on is in the rejects
table as `mapping_failed` naming the column, and a mapping that does not compile stops startup
naming the dataset, the setting and the column."""

from __future__ import annotations

import json

import pytest

from tests.e2e.test_ingest_iceberg import IcebergLake
from tests.e2e.weir_run import Lake, WeirIngest, create_topic, produce, unique, wait_for

GOOD = 240

# Eleven columns: plain paths, a quoted key, functions, a comparison, a filter projection, a
# multi-select and a pipe.
MAPPING = {
    "event": "event",
    "user_id": "properties.user.id",
    "city": 'properties."$geo".city',
    "n_tags": "length(tags)",
    "tags_csv": "join(',', tags)",
    "first_tag": "tags[0]",
    "premium": "properties.plan == 'pro'",
    "revenue": "properties.revenue",
    "geo": 'properties."$geo"',
    "big_skus": "items[?qty > `1`].sku",
    "summary": "{e: event, n: length(items)} | to_string(@)",
}
ENV = {f"WEIR_MAPPING_{column.upper()}": expression for column, expression in MAPPING.items()}


def source(i: int) -> dict:
    record = {
        "event": ["view", "buy", "signup"][i % 3],
        "properties": {
            "user": {"id": 1000 + i},
            "$geo": {"city": f"city-{i % 5}", "country": "NO"} if i % 4 else None,
            "plan": "pro" if i % 2 else "free",
            "revenue": i * 1.5 if i % 3 == 1 else None,
        },
        "tags": [f"t{j}" for j in range(i % 4)],
        "items": [{"sku": f"s{i}-{j}", "qty": j} for j in range(i % 3 + 1)],
        "ignored": "x" * (i % 7),
    }
    if i % 10 == 0:
        del record["properties"]["$geo"]
    return record


def mapped(i: int) -> dict:
    """What the mapping gives for source(i), as the table holds it (nested results as JSON)."""
    r = source(i)
    geo = r["properties"].get("$geo")
    return {
        "event": r["event"],
        "user_id": 1000 + i,
        "city": geo["city"] if geo else None,
        "n_tags": len(r["tags"]),
        "tags_csv": ",".join(r["tags"]),
        "first_tag": r["tags"][0] if r["tags"] else None,
        "premium": r["properties"]["plan"] == "pro",
        "revenue": r["properties"]["revenue"],
        "geo": json.dumps(geo, separators=(",", ":")) if geo else None,
        "big_skus": json.dumps([it["sku"] for it in r["items"] if it["qty"] > 1],
                               separators=(",", ":")),
        "summary": json.dumps({"e": r["event"], "n": len(r["items"])}, separators=(",", ":")),
    }


# Records the mapping rejects, with the column named in the reason; and one invalid JSON.
BAD = [
    (json.dumps({"event": "x", "tags": 5, "items": []}).encode(), "mapping_failed", "n_tags"),
    (json.dumps({"event": "x", "tags": ["a", 1], "items": []}).encode(), "mapping_failed",
     "tags_csv"),
    (json.dumps({"event": "x", "tags": [], "items": 3}).encode(), "mapping_failed", "summary"),
    (b'{"event": "x", ', "invalid_json", "invalid JSON"),
]

TYPES_DUCKLAKE = {"event": "VARCHAR", "user_id": "BIGINT", "city": "VARCHAR", "n_tags": "BIGINT",
                  "tags_csv": "VARCHAR", "first_tag": "VARCHAR", "premium": "BOOLEAN",
                  "revenue": "DOUBLE", "geo": "VARCHAR", "big_skus": "VARCHAR",
                  "summary": "VARCHAR", "_inserted_at": "TIMESTAMP WITH TIME ZONE"}
TYPES_ICEBERG = {"event": "string", "user_id": "long", "city": "string", "n_tags": "long",
                 "tags_csv": "string", "first_tag": "string", "premium": "boolean",
                 "revenue": "double", "geo": "string", "big_skus": "string", "summary": "string",
                 "_inserted_at": "timestamptz"}


def records() -> list[tuple[bytes, bytes]]:
    out = []
    bad = iter(BAD)
    for i in range(GOOD):
        out.append((str(i).encode(), json.dumps(source(i)).encode()))
        if i % 60 == 59:
            value, _, _ = next(bad)
            out.append((b"bad", value))
    return out


def check_run(weir: WeirIngest) -> None:
    assert weir.alive(), weir.log()
    assert weir.metric("weir_records_consumed_total") == GOOD + len(BAD)
    assert weir.metric("weir_records_written_total") == GOOD
    assert weir.metric("weir_records_rejected_total", reason="mapping_failed") == 3
    assert weir.metric("weir_records_rejected_total", reason="invalid_json") == 1
    # A mapping drops no field.
    assert weir.metric("weir_fields_dropped_total") == 0


def check_rows(rows: list[dict]) -> None:
    assert len(rows) == GOOD
    by_user = {r["user_id"]: r for r in rows}
    assert len(by_user) == GOOD
    for i in range(GOOD):
        got = dict(by_user[1000 + i])
        got.pop("_inserted_at")
        assert got == mapped(i), i


def check_rejects(rejects: list[dict]) -> None:
    got = sorted((r["reason"], r["payload"]) for r in rejects)
    assert got == sorted((reason, value.decode()) for value, reason, _ in BAD)
    for r in rejects:
        column = next(c for v, _, c in BAD if v.decode() == r["payload"])
        if r["reason"] == "mapping_failed":
            assert f"mapping column {column} ({MAPPING[column]})" in r["error"], r["error"]
        assert r["key"] == "bad"


def test_mapping_decides_the_ducklake_table_and_rejects_what_fails(kafka, build_dir, tmp_path):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("mapping")
    create_topic(bootstrap, topic, 2)
    assert produce(bootstrap, topic, records()) == GOOD + len(BAD)
    lake = Lake(tmp_path / "lake")
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group"), ENV).start()
    try:
        wait_for(lambda: lake.count("events") == GOOD and lake.count("events_rejects") == len(BAD)
                 or not weir.alive(), 120, "every record in the table or its rejects")
        check_run(weir)
    finally:
        assert weir.stop() == 0, weir.log()
    con = lake.connect()
    try:
        types = dict(con.execute(
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_catalog = 'lake' AND table_name = 'events'").fetchall())
        assert types == TYPES_DUCKLAKE
        cursor = con.execute("SELECT * FROM lake.events")
        names = [d[0] for d in cursor.description]
        check_rows([dict(zip(names, row)) for row in cursor.fetchall()])
        cursor = con.execute("SELECT key, payload, reason, error FROM lake.events_rejects")
        check_rejects([dict(zip(("key", "payload", "reason", "error"), row))
                       for row in cursor.fetchall()])
    finally:
        con.close()


def test_mapping_decides_the_iceberg_table_and_rejects_what_fails(kafka, build_dir, tmp_path):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("mapping_ice")
    create_topic(bootstrap, topic, 2)
    assert produce(bootstrap, topic, records()) == GOOD + len(BAD)
    lake = IcebergLake(tmp_path / "lake")
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group"), ENV).start()
    try:
        wait_for(lambda: lake.count("events") == GOOD and lake.count("events_rejects") == len(BAD)
                 or not weir.alive(), 120, "every record in the table or its rejects")
        check_run(weir)
    finally:
        assert weir.stop() == 0, weir.log()
    table = lake.table("events")
    assert {f.name: str(f.field_type) for f in table.schema().fields} == TYPES_ICEBERG
    check_rows(table.scan().to_arrow().to_pylist())
    check_rejects(lake.table("events_rejects").scan(
        selected_fields=("key", "payload", "reason", "error")).to_arrow().to_pylist())


@pytest.mark.parametrize("fmt", ["ducklake", "iceberg"])
def test_a_mapping_that_does_not_compile_stops_startup_naming_dataset_and_column(
    fmt, kafka, build_dir, tmp_path
):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("mapping_bad")
    create_topic(bootstrap, topic, 1)
    lake = Lake(tmp_path / "lake") if fmt == "ducklake" else IcebergLake(tmp_path / "lake")
    for env, named in (
        ({"WEIR_MAPPING_USER": "properties.user_id", "WEIR_MAPPING_BROKEN": "items[?qty >"},
         "mapping column broken (items[?qty >)"),
        ({"WEIR_MAPPING_N": "no_such_function(tags)"}, "mapping column n (no_such_function"),
        ({"WEIR_MAPPING_ROW_ID": "id"}, "column \"row_id\": reserved by DuckLake"),
    ):
        weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group"),
                          env).start()
        code = weir.process.wait(timeout=60)
        log = weir.log()
        assert code != 0, log
        assert "mapping: " in log and 'dataset "events"' in log and named in log, log
        assert "partition(s)" not in log, log  # refused before the broker was even asked
    assert not (tmp_path / "lake" / "catalog.sqlite").exists()
    assert not (tmp_path / "lake" / "weir-lake").exists()
