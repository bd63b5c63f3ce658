"""Proof 5 of the ingest issue: poison records neither crash nor wedge weir; every record ends
up in the table or in its rejects table, and the counters say exactly what happened."""

from __future__ import annotations

import json

import pytest

from tests.e2e.weir_run import Lake, WeirIngest, create_topic, produce, unique, wait_for

LONG_NAME = "k" * 200


@pytest.mark.parametrize("decode_threads", [1, 2])
def test_poison_records_are_rejected_or_repaired_and_counted(kafka, build_dir, tmp_path,
                                                            decode_threads):
    """With 2 decode threads the records are decoded, rejected and counted on a worker."""
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("poison")
    create_topic(bootstrap, topic, 1)
    lake = Lake(tmp_path / "lake")
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group"),
                      {"WEIR_DECODE_THREADS": str(decode_threads)}).start()

    first = [
        b'{"id": 1, "v": 1}',
        b'{"id": 2, "v": ',  # malformed JSON
        b"[1, 2, 3]",  # an array, not an object
        b'{"id": 4, "s": "\xff\xfe"}',  # invalid UTF-8
        b'{"id": 5, "big": "' + b"x" * (2 * 1024 * 1024) + b'"}',  # 2 MB value
        json.dumps({"id": 6, "_inserted_at": "x", "utm-source": "g", LONG_NAME: 1}).encode(),
        b'{"id": 7, "u": 18446744073709551615}',  # above INT64_MAX
        b'{"id": 8, "n": NaN}',
        b'{"id": 9, "n": Infinity}',
        # Type drift inside one flush: int -> double -> string -> object.
        b'{"id": 10, "drift": 1}',
        b'{"id": 11, "drift": 2.5}',
        b'{"id": 12, "drift": "text"}',
        b'{"id": 13, "drift": {"a": 1}}',
    ]
    try:
        produce(bootstrap, topic, ((None, value) for value in first))
        wait_for(lambda: lake.count("events") == 7 and lake.count("events_rejects") == 6, 60,
                 "the first flush", poll_s=0.5)
        # Against the now typed column v BIGINT: a string that is not a number is nulled and
        # counted, an integral double and a numeric string are cast.
        second = [b'{"id": 20, "v": "not a number"}', b'{"id": 21, "v": 3.0}',
                  b'{"id": 22, "v": "42"}']
        produce(bootstrap, topic, ((None, value) for value in second))
        wait_for(lambda: lake.count("events") == 10, 60, "the second flush")
        assert weir.alive(), weir.log()
        metric = weir.metric
        assert metric("weir_records_consumed_total") == 16
        assert metric("weir_records_written_total") == 10
        assert metric("weir_records_rejected_total", reason="invalid_json") == 3
        assert metric("weir_records_rejected_total", reason="not_an_object") == 1
        assert metric("weir_records_rejected_total", reason="invalid_utf8") == 1
        assert metric("weir_records_rejected_total", reason="record_too_large") == 1
        assert metric("weir_fields_dropped_total", reason="reserved_name") == 1
        assert metric("weir_fields_dropped_total", reason="invalid_name") == 1
        assert metric("weir_fields_dropped_total", reason="name_too_long") == 1
        assert metric("weir_values_nulled_total", reason="type_mismatch") == 1
        assert metric("weir_values_nulled_total", reason="integer_beyond_int64") == 1
    finally:
        assert weir.stop() == 0, weir.log()

    con = lake.connect()
    rows = con.execute("SELECT id, v, u, drift FROM lake.events ORDER BY id").fetchall()
    assert rows == [
        (1, 1, None, None),
        (6, None, None, None),
        (7, None, 18446744073709551615.0, None),
        (10, None, None, "1"),
        (11, None, None, "2.5"),
        (12, None, None, "text"),
        (13, None, None, '{"a": 1}'),
        (20, None, None, None),
        (21, 3, None, None),
        (22, 42, None, None),
    ]
    columns = {r[0] for r in con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_catalog = 'lake' "
        "AND table_name = 'events'").fetchall()}
    assert columns == {"id", "v", "u", "drift", "_inserted_at"}  # dropped names never appear
    rejects = con.execute(
        "SELECT \"offset\", reason, payload_bytes, length(payload) FROM lake.events_rejects "
        "ORDER BY \"offset\"").fetchall()
    assert [(o, r) for o, r, _, _ in rejects] == [
        (1, "invalid_json"), (2, "not_an_object"), (3, "invalid_utf8"),
        (4, "record_too_large"), (7, "invalid_json"), (8, "invalid_json"),
    ]
    big = [r for r in rejects if r[1] == "record_too_large"][0]
    assert big[2] == len(first[4]) and big[3] == 65536  # original size kept, payload truncated
    assert con.execute(
        "SELECT payload FROM lake.events_rejects WHERE reason = 'invalid_utf8'").fetchone() == (
        '{"id": 4, "s": "\\xFF\\xFE"}',)
    assert con.execute("SELECT DISTINCT topic, \"partition\" FROM lake.events_rejects").fetchall() == [
        (topic, 0)]
    con.close()


@pytest.mark.parametrize("fmt", ["ducklake", "iceberg"])
def test_a_rejected_record_does_not_shape_the_table(fmt, kafka, build_dir, tmp_path):
    """Two JSON objects in one message are rejected as invalid_json; the fields parsed before
    the fault reach no column: `phantom` comes from the good record after it, as a bigint."""
    from tests.e2e.test_ingest_iceberg import IcebergLake

    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("phantom")
    create_topic(bootstrap, topic, 1)
    lake = Lake(tmp_path / "lake") if fmt == "ducklake" else IcebergLake(tmp_path / "lake")
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group")).start()
    try:
        produce(bootstrap, topic, [(None, b'{"seq": 1}'), (None, b'{"phantom": "x"}{"b": 2}')])
        rejects = "events_rejects"
        wait_for(lambda: lake.count("events") == 1 and lake.count(rejects) == 1, 60,
                 "the first flush")
        produce(bootstrap, topic, [(None, b'{"seq": 2, "phantom": 7}')])
        wait_for(lambda: lake.count("events") == 2, 60, "the second record")
    finally:
        assert weir.stop() == 0, weir.log()
    if fmt == "ducklake":
        con = lake.connect()
        described = con.execute("DESCRIBE lake.events").fetchall()
        columns = sorted((row[0], row[1]) for row in described
                         if row[0] in ("seq", "phantom", "b"))
        rows = con.execute("SELECT seq, phantom FROM lake.events ORDER BY seq").fetchall()
        con.close()
        assert columns == [("phantom", "BIGINT"), ("seq", "BIGINT")]
    else:
        table = lake.table("events")
        columns = sorted((f.name, str(f.field_type)) for f in table.schema().fields
                         if f.name in ("seq", "phantom", "b"))
        assert columns == [("phantom", "long"), ("seq", "long")]
        arrow = table.scan(selected_fields=("seq", "phantom")).to_arrow().sort_by("seq")
        rows = list(zip(arrow.column("seq").to_pylist(), arrow.column("phantom").to_pylist()))
    assert rows == [(1, None), (2, 7)]
