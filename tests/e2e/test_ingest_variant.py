"""VARIANT companions (issue 14; millpond's MILLPOND_VARIANT_COLUMNS): `properties` lands as
its JSON text and as `properties_variant`, weir's own Parquet Variant encoding, which DuckDB's
ducklake reader reads back equal to `json::VARIANT` of the source for every record (nested
objects, arrays, integers beyond INT64, decimals, unicode, the empty object, long strings,
many keys), malformed JSON nulling only the companion, payload fields named like the companion
dropped. Iceberg's variant companions (format version 3): test_ingest_iceberg_variant.py."""

from __future__ import annotations

import json

import pytest

from tests.e2e.weir_run import Lake, WeirIngest, create_topic, produce, unique, wait_for

MANY = "{" + ",".join(f'"k{i}":{i}' for i in range(300)) + "}"

# id → the record's raw JSON text (numbers written exactly as they travel).
RECORDS = {
    1: '{"id":1,"properties":{"a":1,"b":"x","c":true,"d":null}}',
    2: '{"id":2,"properties":{"user":{"name":"Zo\u00eb","tags":["a","b"],'
       '"deep":{"x":[1,{"y":null}]}}}}',
    3: '{"id":3,"properties":{"list":[1,2.5,"three",true,null,[],{}]}}',
    4: '{"id":4,"properties":{"big":9223372036854775808,"max":18446744073709551615,'
       '"huge":18446744073709551616,"min":-9223372036854775808,"i64":9223372036854775807,'
       '"beyond":123456789012345678901234567890}}',
    5: '{"id":5,"properties":{"pi":3.14159265358979323846264338327950288,"small":0.1,'
       '"exp":1e-7,"neg":-2.5e10,"one":1.0,"i8":-128,"i16":300,"i32":70000,'
       '"i64":5000000000}}',
    6: '{"id":6,"properties":{"emoji":"\\ud83d\\ude00","cjk":"\u6f22\u5b57",'
       '"esc":"line\\nbreak\\t\\"q\\"","raw":"caf\u00e9"}}',
    7: '{"id":7,"properties":{}}',
    8: '{"id":8,"properties":"{not json"}',
    9: '{"id":9,"properties":"{\\"s\\":1,\\"t\\":[2]}"}',
    10: '{"id":10,"properties":{"long":"' + "x" * 200 + '","z":"' + "y" * 63 + '"}}',
    11: '{"id":11}',
    12: '{"id":12,"properties":42}',
    13: '{"id":13,"properties":{"a":2},"properties_variant":"junk"}',
    14: '{"id":14,"properties":[{"k":1},{"k":"v"}],"PROPERTIES_VARIANT":{"x":1}}',
    15: '{"id":15,"properties":' + MANY + '}',
    16: '{"id":16,"properties":{"dup":1,"dup":2}}',
}


def strictly_equal(a, b) -> bool:
    """Equal values of equal JSON types (1 and 1.0 differ; key order does not matter)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(strictly_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(strictly_equal(x, y) for x, y in zip(a, b))
    return a == b


def run(lake, build_dir, bootstrap, variable) -> WeirIngest:
    topic = unique("variant")
    create_topic(bootstrap, topic, 1)
    assert produce(bootstrap, topic, ((None, text.encode()) for text in RECORDS.values())) == \
        len(RECORDS)
    env = {"WEIR_FLUSH_INTERVAL": "3s", variable: "properties"}
    return WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group"), env).start()


@pytest.mark.parametrize("variable", ["WEIR_VARIANT_COLUMNS", "MILLPOND_VARIANT_COLUMNS"])
def test_variant_companion_reads_back_equal_to_duckdbs_json_variant(
    variable, kafka, build_dir, tmp_path
):
    lake = Lake(tmp_path / "lake")
    weir = run(lake, build_dir, kafka["WEIR_TEST_KAFKA_BOOTSTRAP"], variable)
    try:
        wait_for(lambda: lake.count("events") == len(RECORDS) or not weir.alive(), 120,
                 "every record")
        assert weir.alive(), weir.log()
        assert weir.metric("weir_records_written_total") == len(RECORDS)
        assert weir.metric("weir_values_nulled_total", reason="variant_invalid_json") == 1
        assert weir.metric("weir_fields_dropped_total", reason="variant_companion") == 2
    finally:
        assert weir.stop() == 0, weir.log()
    con = lake.connect()
    try:
        types = dict(con.execute(
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_catalog = 'lake' AND table_name = 'events'").fetchall())
        assert types == {"id": "BIGINT", "properties": "VARCHAR", "properties_variant": "VARIANT",
                         "_inserted_at": "TIMESTAMP WITH TIME ZONE"}
        rows = con.execute(
            "SELECT id, properties, properties_variant IS NULL, "
            # DuckDB 1.5.5 crashes comparing its own json::VARIANT of a repeated key (id 16):
            # that one is compared by its JSON text only.
            "CASE WHEN id <> 16 THEN properties_variant = try_cast(properties AS JSON)::VARIANT "
            "END, properties_variant::JSON, try_cast(properties AS JSON)::VARIANT::JSON "
            "FROM lake.events ORDER BY id").fetchall()
    finally:
        con.close()
    assert [r[0] for r in rows] == sorted(RECORDS)
    by_id = {r[0]: r[1:] for r in rows}
    # Malformed JSON nulls only the companion; an absent source has no companion.
    assert by_id[8][:2] == ("{not json", True)
    assert by_id[11][:2] == (None, True)
    for i, (source, is_null, equal, ours, duckdbs) in by_id.items():
        if i in (8, 11):
            continue
        assert not is_null, (i, source)
        assert equal is (None if i == 16 else True), (i, source, ours, duckdbs)
        assert strictly_equal(json.loads(ours), json.loads(duckdbs)), (i, ours, duckdbs)
    # The exact numbers: beyond INT64 exact up to UINT64_MAX, doubles past it, as DuckDB's.
    big = json.loads(by_id[4][3])
    assert big == {"big": 9223372036854775808, "max": 18446744073709551615,
                   "huge": 1.8446744073709552e19, "min": -9223372036854775808,
                   "i64": 9223372036854775807, "beyond": 1.2345678901234568e29}
    assert json.loads(by_id[9][3]) == {"s": 1, "t": [2]}
    assert json.loads(by_id[12][3]) == 42
    assert json.loads(by_id[15][3]) == {f"k{i}": i for i in range(300)}
    assert json.loads(by_id[6][3])["emoji"] == "\U0001F600"


def shaped(i: int) -> str:
    """Common keys n (int, 2^63 in every 10th record), s, f, ok; a rare key now and then."""
    n = "9223372036854775808" if i % 10 == 0 else str(i * 1000)
    rare = f',"rare_{i}":[{i}]' if i % 7 == 0 else ""
    ok = "null" if i % 5 == 0 else ("true" if i % 2 else "false")
    s = '"s":"v%d",' % i if i % 3 else '"s":%d,' % i
    return (f'{{"id":{i},"properties":{{"n":{n},{s}"f":{i}.25,"ok":{ok},'
            f'"nested":{{"x":{i}}}{rare}}}}}')


def test_common_keys_are_shredded_and_big_integers_do_not_poison_them(
    kafka, build_dir, tmp_path
):
    import pyarrow.parquet as pq

    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("variant_shred")
    create_topic(bootstrap, topic, 1)
    count = 200
    assert produce(bootstrap, topic, ((None, shaped(i).encode()) for i in range(count))) == count
    lake = Lake(tmp_path / "lake")
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group"),
                      {"WEIR_FLUSH_INTERVAL": "3s", "WEIR_VARIANT_COLUMNS": "properties"}).start()
    try:
        wait_for(lambda: lake.count("events") == count or not weir.alive(), 120, "every record")
        assert weir.alive(), weir.log()
    finally:
        assert weir.stop() == 0, weir.log()
    con = lake.connect()
    try:
        rows = con.execute(
            "SELECT id, properties_variant = properties::JSON::VARIANT, "
            "properties_variant::JSON, properties::JSON::VARIANT::JSON, "
            "variant_extract(properties_variant, 'n')::VARCHAR FROM lake.events ORDER BY id").fetchall()
        files = [r[0] for r in con.execute(
            "SELECT data_file FROM ducklake_list_files('lake', 'events')").fetchall()]
    finally:
        con.close()
    assert [r[0] for r in rows] == list(range(count))
    for i, equal, ours, duckdbs, n in rows:
        assert equal is True, (i, ours, duckdbs)
        assert strictly_equal(json.loads(ours), json.loads(duckdbs)), (i, ours, duckdbs)
        assert n == ("9223372036854775808" if i % 10 == 0 else str(i * 1000)), (i, n)
    # The file's companion is a VARIANT group whose common keys are typed sub-columns.
    assert files
    for path in files:
        schema = pq.ParquetFile(path).schema
        text = str(schema)
        assert "properties_variant (Variant(1))" in text, text
        prefix = "properties_variant.typed_value."
        shredded = {}
        for c in range(len(schema)):
            column = schema.column(c)
            parts = column.path[len(prefix):].split(".") if column.path.startswith(prefix) else []
            if len(parts) == 2 and parts[1] == "typed_value":
                shredded[parts[0]] = column.physical_type
        # nested is an object (not shredded), rare_* are not common.
        assert shredded == {"f": "DOUBLE", "n": "INT64", "ok": "BOOLEAN", "s": "BYTE_ARRAY"}, \
            shredded

