"""Proof 6 of the Iceberg issue: schema evolution as every reader sees it. A table made by
pyiceberg with 32-bit `int` and `float` columns is fed by `weir ingest` through the REST
catalog: wider values promote int→long and float→double, new fields become new columns (null
in the older rows), and a field whose live column is `long` that later carries floats keeps
its type (Iceberg has no long→double; the live column's type wins, as on DuckLake): integral
values land, fractional ones are nulled and counted. pyiceberg, DuckDB's iceberg extension and
Spark return exactly the same rows."""

from __future__ import annotations

import json

import pyarrow as pa

from tests.e2e.test_ingest_iceberg import IcebergLake
from tests.e2e.weir_run import WeirIngest, create_topic, produce, unique, wait_for

COLUMNS = ("id", "small", "ratio", "n", "extra")

# Rows pyiceberg writes first (int32 and float32 values, exact in both widths).
OLD = [(1, 1, 0.5), (2, -2, 1.5), (3, 2**31 - 1, 2.25)]
# Flush 1: `small` needs 64 bits, `ratio` a double, `n` is a new integer field.
FLUSH_1 = [{"id": 10, "small": 5_000_000_000, "ratio": 0.1, "n": 1},
           {"id": 11, "small": 7, "ratio": 2.0, "n": 2}]
# Flush 2: `extra` is new; `n` (live: long) now carries floats.
FLUSH_2 = [{"id": 20, "small": 8, "ratio": 0.3, "n": 2.5, "extra": "x"},
           {"id": 21, "small": -9, "ratio": 1e300, "n": 3.0},
           {"id": 22, "ratio": -0.0625, "n": 4, "extra": "z"}]

EXPECTED = sorted(
    [(i, s, r, None, None) for i, s, r in OLD]
    + [(10, 5_000_000_000, 0.1, 1, None), (11, 7, 2.0, 2, None)]
    + [(20, 8, 0.3, None, "x"), (21, -9, 1e300, 3, None), (22, None, -0.0625, 4, "z")]
)


def test_new_fields_and_promotions_read_the_same_in_pyiceberg_duckdb_and_spark(
    kafka, iceberg_rest, build_dir, tmp_path, duck
):
    from pyiceberg.catalog import load_catalog

    from tests.harness.spark import spark_session

    uri = iceberg_rest["WEIR_TEST_ICEBERG_REST_URI"]
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    namespace = unique("ns")
    catalog = load_catalog("rest", type="rest", uri=uri)
    catalog.create_namespace(namespace)
    old = pa.table({"id": pa.array([r[0] for r in OLD], pa.int64()),
                    "small": pa.array([r[1] for r in OLD], pa.int32()),
                    "ratio": pa.array([r[2] for r in OLD], pa.float32())})
    catalog.create_table((namespace, "evolve"), schema=old.schema).append(old)

    topic = unique("iceberg_evolve")
    create_topic(bootstrap, topic, 1)
    lake = IcebergLake(tmp_path / "lake", rest_uri=uri, namespace=namespace)
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "evolve", unique("group")).start()
    try:
        for batch, total in ((FLUSH_1, 5), (FLUSH_2, 8)):
            produce(bootstrap, topic, ((None, json.dumps(r).encode()) for r in batch))
            wait_for(lambda: lake.count("evolve") == total or not weir.alive(), 90,
                     f"{total} rows")
            assert weir.alive(), weir.log()
        assert weir.metric("weir_values_nulled_total", reason="type_mismatch") == 1
    finally:
        assert weir.stop() == 0, weir.log()

    table = lake.table("evolve")
    types = {f.name: str(f.field_type) for f in table.schema().fields}
    assert types == {"id": "long", "small": "long", "ratio": "double", "n": "long",
                     "extra": "string"}, types
    ids = {f.name: f.field_id for f in table.schema().fields}
    assert [ids[c] for c in ("id", "small", "ratio")] == [1, 2, 3], "promotion keeps field ids"
    # The first schema is pyiceberg's, 32-bit; weir added schemas on top of it.
    first = {f.name: str(f.field_type) for f in table.metadata.schemas[0].fields}
    assert first == {"id": "long", "small": "int", "ratio": "float"}, first
    assert table.metadata.current_schema_id != table.metadata.schemas[0].schema_id

    rows = table.scan(selected_fields=COLUMNS).to_arrow()
    got = sorted(tuple(r[c] for c in COLUMNS) for r in rows.to_pylist())
    assert got == EXPECTED

    cols = ", ".join(COLUMNS)
    got = sorted(duck.execute(
        f"SELECT {cols} FROM iceberg_scan('{table.metadata_location}')").fetchall())
    assert got == EXPECTED

    with spark_session(uri, iceberg_rest["WEIR_TEST_ICEBERG_REST_WAREHOUSE"]) as spark:
        frame = spark.sql(f"SELECT {cols} FROM rest.{namespace}.evolve")
        spark_types = dict(frame.dtypes)
        got = sorted(tuple(r) for r in frame.collect())
    assert spark_types == {"id": "bigint", "small": "bigint", "ratio": "double", "n": "bigint",
                           "extra": "string"}
    assert got == EXPECTED
