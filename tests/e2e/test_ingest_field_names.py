"""Issue 9: no field name can wedge a table. Records whose keys are case variants of each other,
of weir's `_inserted_at` or of names DuckLake reserves land with exactly the fields the name
policy says, as the first record of a new table and again against the existing table, on the
SQLite and the PostgreSQL catalog; weir keeps running and the counters say what happened."""

from __future__ import annotations

import json

import pytest

from tests.e2e.weir_run import (
    Lake,
    WeirIngest,
    create_topic,
    fresh_postgres_database,
    produce,
    unique,
    wait_for,
)

# Per table: the records of the first flush (the poison record first, so it creates the table),
# then those of a flush against the existing table.
SCENARIOS = {
    "t_case": (
        [{"seq": 1, "Case": 1, "case": 2}, {"seq": 2, "v": "a"}],
        [{"seq": 3, "Case": 3, "case": 4}, {"seq": 4, "CASE": 5}],
    ),
    "t_inserted": (
        [{"seq": 1, "_inserted_AT": "x", "v": 1}, {"seq": 2, "v": 2}],
        [{"seq": 3, "_Inserted_At": "y", "v": 3}],
    ),
    "t_seq": (
        [{"seq": 1, "Seq": 2}, {"seq": 2}],
        [{"Seq": 3, "seq": 99}],
    ),
    "t_internal": (
        [{"seq": 1, "_ducklake_internal_snapshot_id": 5, "row_id": 9}, {"seq": 2}],
        [{"seq": 3, "_ducklake_internal_snapshot_id": 6, "ROW_ID": 10, "Begin_Snapshot": 11}],
    ),
    "t_name": (
        [{"seq": 1, "name": "lower"}],
        [{"seq": 2, "NAME": "upper"}],
    ),
}

# What lands: the table's columns (in order) and its rows ordered by seq.
EXPECTED = {
    "t_case": (["seq", "Case", "v", "_inserted_at"],
               [(1, 1, None), (2, None, "a"), (3, 3, None), (4, 5, None)]),
    "t_inserted": (["seq", "v", "_inserted_at"], [(1, 1), (2, 2), (3, 3)]),
    "t_seq": (["seq", "_inserted_at"], [(1,), (2,), (3,)]),
    "t_internal": (["seq", "row_id_", "_inserted_at", "Begin_Snapshot_"],
                   [(1, 9, None), (2, None, None), (3, 10, 11)]),
    "t_name": (["seq", "name", "_inserted_at"], [(1, "lower"), (2, "upper")]),
}

# The counters per table: (metric, reason) -> value.
COUNTERS = {
    "t_case": {("weir_fields_dropped_total", "duplicate_name"): 2,
               ("weir_fields_renamed_total", "case_variant"): 1},
    "t_inserted": {("weir_fields_dropped_total", "reserved_name"): 2},
    "t_seq": {("weir_fields_dropped_total", "duplicate_name"): 2,
              ("weir_fields_renamed_total", "case_variant"): 1},
    "t_internal": {("weir_fields_dropped_total", "reserved_name"): 2,
                   ("weir_fields_renamed_total", "reserved_name"): 3,
                   ("weir_fields_renamed_total", "case_variant"): 1},
    "t_name": {("weir_fields_renamed_total", "case_variant"): 1},
}
ALL_REASONS = [("weir_fields_dropped_total", r) for r in
               ("duplicate_name", "duplicate_key", "reserved_name", "invalid_name",
                "name_too_long", "refused_by_catalog")] + [
    ("weir_fields_renamed_total", r) for r in ("case_variant", "reserved_name")]


def _records(rows: list[dict]):
    # json.dumps keeps the keys in the order written, duplicates included.
    return ((None, json.dumps(row).encode()) for row in rows)


@pytest.mark.parametrize("catalog", ["sqlite", "postgres"])
def test_poison_field_names_never_wedge_a_new_or_existing_table(kafka, postgres, build_dir,
                                                                 tmp_path, catalog):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    lake = Lake(tmp_path / "lake", catalog=catalog)
    if catalog == "postgres":
        lake.postgres_dsn = fresh_postgres_database(postgres)
    topics = {table: unique(table) for table in SCENARIOS}
    for topic in topics.values():
        create_topic(bootstrap, topic, 1)
    config = tmp_path / "weir.yaml"
    config.write_text("datasets:\n" + "".join(
        f"  - topic: {topic}\n    table: {table}\n" for table, topic in topics.items()))
    weir = WeirIngest(build_dir, lake, bootstrap, "unused", "unused", unique("group"))
    del weir.env["WEIR_TOPIC"], weir.env["WEIR_TABLE"]
    weir.start("--config", str(config))
    try:
        for phase in (0, 1):
            for table, topic in topics.items():
                produce(bootstrap, topic, _records(SCENARIOS[table][phase]))
            for table in topics:
                want = sum(len(SCENARIOS[table][p]) for p in range(phase + 1))
                wait_for(lambda: lake.count(table) == want or not weir.alive(), 90,
                         f"{want} rows in {table} (phase {phase})")
                assert weir.alive(), weir.log()
        total = sum(len(a) + len(b) for a, b in SCENARIOS.values())
        assert weir.metric("weir_records_consumed_total") == total
        assert weir.metric("weir_records_written_total") == total
        assert weir.metric("weir_records_rejected_total") == 0
        for table in topics:
            for metric, reason in ALL_REASONS:
                assert weir.metric(metric, dataset=table, reason=reason) == COUNTERS[table].get(
                    (metric, reason), 0), (table, metric, reason, weir.log())
        log = weir.log(400)
        assert 'dropped (duplicate_name), e.g. key "case"' in log
        assert 'dropped (reserved_name), e.g. key "_inserted_AT"' in log
        assert 'key "row_id" of' in log and 'written as column "row_id_" (reserved_name)' in log
        assert "(case_variant)" in log
    finally:
        assert weir.stop() == 0, weir.log()

    con = lake.connect()
    try:
        for table, (columns, rows) in EXPECTED.items():
            got_columns = [r[0] for r in con.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_catalog = 'lake' "
                f"AND table_name = '{table}' ORDER BY ordinal_position").fetchall()]
            assert got_columns == columns, table
            data = [c for c in columns if c != "_inserted_at"]
            select = ", ".join(f'"{c}"' for c in data)
            assert con.execute(f"SELECT {select} FROM lake.{table} ORDER BY seq").fetchall() == rows, table
            assert con.execute(
                f"SELECT count(*) FROM lake.{table} WHERE _inserted_at IS NULL").fetchone() == (0,)
        assert con.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_catalog = 'lake' "
            "AND table_name LIKE '%_rejects'").fetchone() == (0,)
    finally:
        con.close()
