"""Kafka metadata columns (issue 14): topic, partition, offset, timestamp, key and selected
headers land under their configured names with exactly the values the producer sent (the
delivery reports give partition and offset), in DuckLake and Iceberg; a null key and an absent
or null header are null, the last of repeated headers wins, header names are exact, a key that
is not UTF-8 is nulled and counted, a payload field named like a metadata column is dropped and
counted, and a metadata column named like a typed column stops startup."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from confluent_kafka import Producer

from tests.e2e.test_ingest_iceberg import IcebergLake
from tests.e2e.weir_run import Lake, WeirIngest, create_topic, unique, wait_for

UTC = dt.timezone.utc
EPOCH = dt.datetime(1970, 1, 1, tzinfo=UTC)
N = 60
PARTITIONS = 3
BASE_MS = 1_700_000_000_000
METADATA = ("kafka_topic:topic,kafka_partition:partition,kafka_offset:offset,"
            "kafka_ts:timestamp,kafka_key:key,trace_id:header.trace-id,tenant:header.tenant")


def key_of(i: int) -> bytes | None:
    return None if i % 5 == 0 else b"\xff\xfe" if i % 5 == 1 else f"k{i}".encode()


def headers_of(i: int) -> list[tuple[str, bytes | None]]:
    headers: list[tuple[str, bytes | None]] = []
    if i % 6 == 0:
        headers.append(("trace-id", b"first"))  # the last header of a name wins
    if i % 4 != 0:
        headers.append(("trace-id", f"t{i}".encode()))
    headers.append(("tenant", None if i % 7 == 0 else b"acme"))
    headers.append(("Trace-Id", b"other case"))  # names are exact
    return headers


def payload_of(i: int) -> dict:
    record = {"id": i, "v": f"v{i}"}
    if i % 10 == 3:
        record["KAFKA_OFFSET"] = "forged"  # loses to the metadata column
    return record


def produce_with_metadata(bootstrap: str, topic: str) -> dict[int, tuple[int, int]]:
    """Produces N records; returns id → (partition, offset) from the delivery reports."""
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    delivered: dict[int, tuple[int, int]] = {}
    errors: list[str] = []

    def report(err, msg, i):
        if err is not None:
            errors.append(str(err))
        else:
            delivered[i] = (msg.partition(), msg.offset())

    for i in range(N):
        producer.produce(topic, value=json.dumps(payload_of(i)).encode(), key=key_of(i),
                         partition=i % PARTITIONS, headers=headers_of(i),
                         timestamp=BASE_MS + i * 1001,
                         on_delivery=lambda err, msg, i=i: report(err, msg, i))
    assert producer.flush(60) == 0
    assert not errors, errors
    assert len(delivered) == N
    return delivered


def expected(topic: str, delivered: dict[int, tuple[int, int]]) -> dict[int, tuple]:
    out = {}
    for i in range(N):
        key = key_of(i)
        trace = f"t{i}" if i % 4 != 0 else ("first" if i % 6 == 0 else None)
        out[i] = (f"v{i}", topic, delivered[i][0], delivered[i][1],
                  EPOCH + dt.timedelta(milliseconds=BASE_MS + i * 1001),
                  key.decode() if key is not None and i % 5 != 1 else None, trace,
                  None if i % 7 == 0 else "acme")
    return out


def run(lake, build_dir, bootstrap, settings: dict | None = None
        ) -> tuple[str, dict[int, tuple[int, int]]]:
    topic = unique("metadata")
    # The records carry 2023 timestamps: time-based retention would delete them whenever the
    # broker's retention check (every 5 minutes) ran during the test.
    create_topic(bootstrap, topic, PARTITIONS, {"retention.ms": "-1"})
    delivered = produce_with_metadata(bootstrap, topic)
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group"),
                      {"WEIR_METADATA_COLUMNS": METADATA, "WEIR_FLUSH_INTERVAL": "3s",
                       **(settings or {})}).start()
    try:
        wait_for(lambda: lake.count("events") == N or not weir.alive(), 120, "every record")
        assert weir.alive(), weir.log()
        assert weir.metric("weir_records_written_total") == N
        assert weir.metric("weir_values_nulled_total", reason="invalid_utf8") == \
            sum(1 for i in range(N) if i % 5 == 1)
        assert weir.metric("weir_fields_dropped_total", reason="metadata_column") == \
            sum(1 for i in range(N) if i % 10 == 3)
    finally:
        assert weir.stop() == 0, weir.log()
    return topic, delivered


COLUMNS = ("id", "v", "kafka_topic", "kafka_partition", "kafka_offset", "kafka_ts", "kafka_key",
           "trace_id", "tenant")


@pytest.mark.parametrize("decode_threads", [1, 2])
def test_metadata_columns_in_ducklake_carry_what_the_producer_sent(kafka, build_dir, tmp_path,
                                                                   decode_threads):
    """With decode workers (2: partitions 0 and 2 on one, 1 on the other), the keys and header
    values are copied off librdkafka's buffers for them: the same values land."""
    lake = Lake(tmp_path / "lake")
    topic, delivered = run(lake, build_dir, kafka["WEIR_TEST_KAFKA_BOOTSTRAP"],
                           {"WEIR_DECODE_THREADS": str(decode_threads)})
    con = lake.connect()
    try:
        types = dict(con.execute(
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_catalog = 'lake' AND table_name = 'events'").fetchall())
        assert types == {"id": "BIGINT", "v": "VARCHAR", "kafka_topic": "VARCHAR",
                         "kafka_partition": "BIGINT", "kafka_offset": "BIGINT",
                         "kafka_ts": "TIMESTAMP WITH TIME ZONE", "kafka_key": "VARCHAR",
                         "trace_id": "VARCHAR", "tenant": "VARCHAR",
                         "_inserted_at": "TIMESTAMP WITH TIME ZONE"}
        rows = con.execute(f"SELECT {', '.join(COLUMNS)} FROM lake.events").fetchall()
    finally:
        con.close()
    got = {r[0]: tuple(r[1:]) for r in rows}
    assert len(rows) == N
    assert got == expected(topic, delivered)


def test_metadata_columns_in_iceberg_carry_what_the_producer_sent(kafka, build_dir, tmp_path):
    lake = IcebergLake(tmp_path / "lake")
    topic, delivered = run(lake, build_dir, kafka["WEIR_TEST_KAFKA_BOOTSTRAP"])
    table = lake.table("events")
    types = {f.name: str(f.field_type) for f in table.schema().fields}
    assert types == {"id": "long", "v": "string", "kafka_topic": "string",
                     "kafka_partition": "long", "kafka_offset": "long",
                     "kafka_ts": "timestamptz", "kafka_key": "string", "trace_id": "string",
                     "tenant": "string", "_inserted_at": "timestamptz"}
    rows = table.scan(selected_fields=COLUMNS).to_arrow().to_pylist()
    got = {r["id"]: tuple(r[c] for c in COLUMNS[1:]) for r in rows}
    assert len(rows) == N
    assert got == expected(topic, delivered)


def test_a_metadata_column_named_like_a_typed_column_stops_startup(kafka, build_dir, tmp_path):
    lake = Lake(tmp_path / "lake")
    weir = WeirIngest(build_dir, lake, kafka["WEIR_TEST_KAFKA_BOOTSTRAP"], unique("t"), "events",
                      unique("group"), {"WEIR_METADATA_COLUMNS": "Ts:timestamp",
                                        "WEIR_TYPED_COLUMNS": "ts:timestamptz"}).start()
    assert weir.process.wait(timeout=60) != 0
    log = weir.log()
    assert "metadata_columns" in log and 'is also a typed column "ts"' in log, log
