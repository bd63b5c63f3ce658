"""`weir ingest` into Iceberg (issue 11): 100,000 events over 8 partitions land exactly once in an
Iceberg table, on the embedded SQL catalog (`weir-lake/catalog.db`, nothing configured but
lake.format) and through Iceberg's REST catalog fixture; pyiceberg and DuckDB's iceberg_scan
read them back with exact counts and sums, and the ledger in the newest snapshot's summary is
the topic's end offsets. Bad Iceberg settings are in test_ingest_config.py, lost commit
answers, concurrent writers and many small commits in test_ingest_iceberg_commits.py."""

from __future__ import annotations

import collections
import json
import random
import re
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from confluent_kafka import Consumer, TopicPartition

from tests.e2e.weir_run import (
    WeirIngest,
    create_topic,
    event,
    event_records,
    produce,
    unique,
    wait_for,
)

EVENTS = 100_000
PARTITIONS = 8


class IcebergLake:
    """An Iceberg lake in a directory (weir runs there): the embedded SQL catalog, or REST."""

    def __init__(self, root: Path, rest_uri: str = "", namespace: str = "main"):
        self.root = root
        self.rest_uri = rest_uri
        self.namespace = namespace

    def env(self) -> dict[str, str]:
        env = {"WEIR_LAKE_FORMAT": "iceberg", "WEIR_SCHEMA": self.namespace}
        if self.rest_uri:
            env.update({"WEIR_ICEBERG_CATALOG": "rest", "WEIR_ICEBERG_URI": self.rest_uri})
        return env

    def catalog(self):
        if self.rest_uri:
            from pyiceberg.catalog.rest import RestCatalog

            return RestCatalog("rest", uri=self.rest_uri)
        from pyiceberg.catalog.sql import SqlCatalog

        lake = self.root / "weir-lake"
        return SqlCatalog("weir", uri=f"sqlite:///{lake / 'catalog.db'}",
                          warehouse=(lake / "warehouse").as_uri())

    def table(self, name: str):
        return self.catalog().load_table((self.namespace, name))

    def count(self, name: str) -> int:
        """Rows in the table by its newest snapshot's summary; 0 while it does not exist."""
        try:
            snapshot = self.table(name).current_snapshot()
        except Exception:  # no catalog, namespace or table yet
            return 0
        if snapshot is None:
            return 0
        return int(snapshot.summary.additional_properties.get("total-records", 0))


def end_offsets(bootstrap: str, topic: str) -> dict[str, int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": unique("probe")})
    try:
        return {str(p): consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]
                for p in range(PARTITIONS)}
    finally:
        consumer.close()


@pytest.fixture(scope="module")
def events_topic(kafka):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("iceberg_events")
    create_topic(bootstrap, topic, PARTITIONS)
    assert produce(bootstrap, topic, event_records(0, EVENTS)) == EVENTS
    return topic


def expected() -> tuple:
    events = [event(i) for i in range(EVENTS)]
    return (
        EVENTS,
        EVENTS,
        sum(e["id"] for e in events),
        sum(e["score"] for e in events),
        sum(1 for e in events if e["ok"]),
        sum(1 for e in events if e["maybe"] is None),
        sum(e["maybe"] for e in events if e["maybe"] is not None),
    )


def check_table(lake: IcebergLake, duck, bootstrap: str, topic: str) -> None:
    table = lake.table("events")
    types = {f.name: str(f.field_type) for f in table.schema().fields}
    assert types == {"id": "long", "name": "string", "score": "double", "ok": "boolean",
                     "props": "string", "tags": "string", "maybe": "long",
                     "_inserted_at": "timestamptz"}
    # pyiceberg plans and reads the table itself.
    rows = table.scan().to_arrow()
    ids = rows.column("id").to_pylist()
    scores = rows.column("score").to_pylist()
    oks = rows.column("ok").to_pylist()
    maybes = rows.column("maybe").to_pylist()
    got = (rows.num_rows, len(set(ids)), sum(ids), sum(scores), sum(1 for o in oks if o),
           sum(1 for m in maybes if m is None), sum(m for m in maybes if m is not None))
    want = expected()
    assert got[:3] == want[:3] and got[4:] == want[4:]
    assert got[3] == pytest.approx(want[3])
    assert rows.column("_inserted_at").null_count == 0
    # Every value of a sample of rows round-trips exactly (nested values as their JSON text).
    wanted = [0, 1, 7, 4242, 99_999]
    sample = rows.filter(pc.is_in(rows.column("id"), value_set=pa.array(wanted)))
    assert sorted(sample.column("id").to_pylist()) == wanted
    for r in sample.to_pylist():
        e = event(r["id"])
        assert (r["name"], r["score"], r["ok"], r["props"], r["tags"], r["maybe"]) == (
            e["name"], e["score"], e["ok"], json.dumps(e["props"]), json.dumps(e["tags"]),
            e["maybe"])
    # DuckDB's iceberg extension reads the current metadata file.
    row = duck.execute(
        "SELECT count(*), count(DISTINCT id), sum(id), sum(score), count(*) FILTER (ok), "
        "count(*) FILTER (maybe IS NULL), sum(maybe) "
        f"FROM iceberg_scan('{table.metadata_location}')").fetchone()
    assert row[:3] == want[:3] and row[4:] == want[4:]
    assert row[3] == pytest.approx(want[3])
    # The ledger in the newest snapshot's summary is the topic's end offsets.
    summary = table.current_snapshot().summary.additional_properties
    ledger = json.loads(summary[f"weir.offsets.{topic}"])
    assert ledger == end_offsets(bootstrap, topic)
    assert sum(ledger.values()) == EVENTS
    assert summary["weir.commit-id"]


def run_to_completion(lake: IcebergLake, build_dir: Path, bootstrap: str, topic: str,
                      settings: dict | None = None) -> None:
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group"),
                      settings).start()
    try:
        wait_for(lambda: lake.count("events") >= EVENTS or not weir.alive(), 300,
                 "all events in the Iceberg table")
        assert weir.alive(), weir.log()
        assert weir.metric("weir_records_consumed_total") == EVENTS
        assert weir.metric("weir_records_written_total") == EVENTS
    finally:
        code = weir.stop()
    assert code == 0, weir.log()


def test_every_event_lands_once_in_iceberg_on_the_embedded_sql_catalog(
    events_topic, kafka, build_dir, tmp_path, duck
):
    lake = IcebergLake(tmp_path / "lake")
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    run_to_completion(lake, build_dir, bootstrap, events_topic)
    # The embedded default: weir-lake/catalog.db next to weir-lake/warehouse/.
    assert (lake.root / "weir-lake" / "catalog.db").is_file()
    location = lake.table("events").metadata.location
    assert location == str((lake.root / "weir-lake" / "warehouse" / "main" / "events").resolve())
    check_table(lake, duck, bootstrap, events_topic)


def test_every_event_lands_once_in_iceberg_through_the_rest_catalog(
    events_topic, kafka, iceberg_rest, build_dir, tmp_path, duck
):
    lake = IcebergLake(tmp_path / "lake", rest_uri=iceberg_rest["WEIR_TEST_ICEBERG_REST_URI"],
                       namespace=unique("ns"))
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    run_to_completion(lake, build_dir, bootstrap, events_topic)
    check_table(lake, duck, bootstrap, events_topic)


def test_kill_loop_on_iceberg_loses_and_duplicates_nothing(kafka, build_dir, tmp_path):
    """Issue 11's proof 3: two writers in one consumer group on one embedded Iceberg lake (their
    commits race on the catalog's compare-and-swap), SIGKILLed at random 20 times while events
    arrive, each restart rejoining the group (a rebalance): every event once."""
    from tests.e2e.test_ingest_recovery import FAST_GROUP, FAST_GROUP_ARGS
    from tests.e2e.weir_run import produce_slowly

    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("iceberg_kills")
    total = 100_000
    create_topic(bootstrap, topic, PARTITIONS)
    lake = IcebergLake(tmp_path / "lake")
    group = unique("group")
    workers = [WeirIngest(build_dir, lake, bootstrap, topic, "events", group, FAST_GROUP,
                          name=f"w{i}") for i in range(2)]
    for w in workers:
        w.start(*FAST_GROUP_ARGS)
    producer = produce_slowly(bootstrap, topic, total, 90)

    def assignments(w: WeirIngest) -> int:
        return w.log_path.read_text().count("kafka: assigned ")

    rng = random.Random(20261201)
    try:
        for _ in range(20):
            time.sleep(rng.uniform(0.5, 3.0))
            victim = workers[rng.randrange(2)]
            victim.kill()  # SIGKILL: no flush, no goodbye to the group
            before = assignments(victim)
            victim.start(*FAST_GROUP_ARGS)
            # The group rebalances (once the dead member's session expires) and the restarted
            # writer takes partitions over: every kill moves partitions.
            wait_for(lambda: assignments(victim) > before, 90, "the restarted writer's partitions")
        producer.join(timeout=120)
        assert not producer.is_alive()
        wait_for(lambda: lake.count("events") >= total, 240, "every event committed")
    finally:
        codes = [w.stop() for w in workers]
    assert codes == [0, 0], "\n".join(w.log() for w in workers)
    rows = lake.table("events").scan(selected_fields=("id",)).to_arrow()
    ids = rows.column("id").to_pylist()
    repeated = sorted(i for i, n in collections.Counter(ids).items() if n > 1)
    # On a failure: where each repeated id is (one file listed twice, or two files), and
    # whether Kafka itself holds more records than were produced.
    files_of = {i: [t.file.file_path for t in lake.table("events").scan(
        row_filter=f"id == {i}").plan_files()] for i in repeated[:5]}
    assert (len(ids), len(set(ids)), sum(ids)) == (total, total, total * (total - 1) // 2), (
        f"ids landed more than once: {repeated[:20]}, in files {files_of}; "
        f"missing: {sorted(set(range(total)) - set(ids))[:20]}; "
        f"Kafka holds {sum(end_offsets(bootstrap, topic).values())} records"
        + "".join(f"\n--- {w.log_path}\n" + "\n".join(
            line for line in w.log_path.read_text(errors="replace").splitlines()
            if "fenced" in line or "delivered again" in line or "kafka:" in line)
            for w in workers))
    ledger = json.loads(
        lake.table("events").current_snapshot().summary.additional_properties[
            f"weir.offsets.{topic}"])
    assert ledger == end_offsets(bootstrap, topic)


def test_sigkill_mid_run_resumes_from_the_iceberg_ledger(kafka, build_dir, tmp_path):
    """One writer (static assignment, so a restart owns its partitions at once) SIGKILLed four
    times mid-run, each time after more commits landed: every restart resumes from the ledger in
    the snapshot summary, and the table ends with every event once."""
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("iceberg_restarts")
    total = 100_000
    create_topic(bootstrap, topic, PARTITIONS)
    # The events arrive in five parts, one more after each kill, so every kill falls mid-run
    # however fast weir commits.
    part = total // 5
    assert produce(bootstrap, topic, event_records(0, part)) == part
    lake = IcebergLake(tmp_path / "lake")
    settings = {"WEIR_FLUSH_MAX_BYTES": "1MiB", "WEIR_KAFKA_ASSIGNMENT": "static", "WEIR_KAFKA_ORDINAL": "0"}
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group"), settings)
    weir.start()
    seen = 0
    for k in range(1, 5):
        wait_for(lambda: lake.count("events") > seen or not weir.alive(), 120, "more commits")
        assert weir.alive(), weir.log()
        weir.kill()
        landed = lake.count("events")
        assert seen < landed <= k * part, f"killed at {landed} rows of {k * part} produced"
        seen = landed
        assert produce(bootstrap, topic, event_records(k * part, part)) == part
        weir.start()
    try:
        wait_for(lambda: lake.count("events") >= total or not weir.alive(), 300,
                 "every event committed")
    finally:
        code = weir.stop()
    assert code == 0, weir.log()
    log = weir.log_path.read_text()
    # The first start finds no ledger; each of the 4 restarts resumes the partitions committed
    # so far from it.
    resumed = [int(n) for n in re.findall(r"assigned 8 partition\(s\); (\d) resume", log)]
    assert len(resumed) == 5 and resumed[0] == 0 and all(n >= 1 for n in resumed[1:]), resumed
    rows = lake.table("events").scan(selected_fields=("id",)).to_arrow()
    ids = rows.column("id").to_pylist()
    assert (len(ids), len(set(ids)), sum(ids)) == (total, total, total * (total - 1) // 2)
