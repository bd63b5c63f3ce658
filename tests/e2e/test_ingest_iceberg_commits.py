"""Issue 11's commit proofs through `weir ingest` (real broker, real catalogs, pyiceberg and
DuckDB reading back):

- a REST commit whose answer is lost (dropped after the server applied it, or a 502 after it
  applied it, or a 503 without forwarding) is resolved by reading the table back: exactly one
  snapshot carries each `weir.commit-id`, every row once (proof 4);
- three weir writers (three topics, three ledgers) and a pyiceberg writer appending to one
  table at once, on the REST catalog and on the PostgreSQL SQL catalog: every commit lands after
  the conflicts, each ledger is exact, pyiceberg's rows are all there (proof 5, and an ingest
  run on the PostgreSQL SQL catalog);
- a table of more than 1,000 small weir commits plans from at most ~100 manifests and reads back
  exactly (proof 7).
"""

from __future__ import annotations

import collections
import datetime
import json
import threading
import time
import urllib.parse
from pathlib import Path

import pyarrow as pa
import pytest
from confluent_kafka import Consumer, TopicPartition

from tests.e2e.test_ingest_iceberg import IcebergLake
from tests.e2e.weir_run import (
    WeirIngest,
    create_topic,
    event,
    event_records,
    fresh_postgres_database,
    produce,
    unique,
    wait_for,
)
from tests.harness.fault_proxy import FaultProxy, Rule


class PostgresIcebergLake(IcebergLake):
    """The SQL catalog on a PostgreSQL database; data in `weir-lake/warehouse` under root."""

    def __init__(self, root: Path, dsn: str, namespace: str = "main"):
        super().__init__(root, namespace=namespace)
        self.dsn = dsn

    def env(self) -> dict[str, str]:
        return {**super().env(), "WEIR_ICEBERG_POSTGRES_DSN": self.dsn}

    def catalog(self):
        from pyiceberg.catalog.sql import SqlCatalog

        p = dict(item.split("=", 1) for item in self.dsn.split())
        uri = f"postgresql+psycopg://{p['user']}@{p['host']}:{p['port']}/{p['dbname']}"
        return SqlCatalog("weir", uri=uri,
                          warehouse=(self.root / "weir-lake" / "warehouse").as_uri())


def end_offsets(bootstrap: str, topic: str, partitions: int) -> dict[str, int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": unique("probe")})
    try:
        return {str(p): consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]
                for p in range(partitions)}
    finally:
        consumer.close()


def ancestry(table) -> list:
    """main's snapshots, newest first."""
    out = []
    snapshot = table.current_snapshot()
    while snapshot is not None:
        out.append(snapshot)
        parent = snapshot.parent_snapshot_id
        snapshot = table.snapshot_by_id(parent) if parent is not None else None
    return out


def summary(snapshot) -> dict[str, str]:
    return snapshot.summary.additional_properties


def newest_weir_summary(table) -> dict[str, str]:
    """The summary of the newest snapshot of main that weir committed ({} when none)."""
    return next((summary(s) for s in ancestry(table) if "weir.commit-id" in summary(s)), {})


def ledger_of(table, topic: str) -> dict[str, int]:
    return json.loads(newest_weir_summary(table).get(f"weir.offsets.{topic}", "{}"))


def assert_one_snapshot_per_commit_id(table) -> int:
    """Every weir.commit-id is carried by exactly one snapshot; returns how many there are."""
    ids = collections.Counter(summary(s)["weir.commit-id"] for s in table.snapshots()
                              if "weir.commit-id" in summary(s))
    assert ids and max(ids.values()) == 1, [i for i, n in ids.items() if n > 1][:5]
    return len(ids)


def duck_count(duck, table) -> tuple[int, int]:
    return duck.execute("SELECT count(*), count(DISTINCT id) "
                        f"FROM iceberg_scan('{table.metadata_location}')").fetchone()


# --- proof 4: lost commit answers ---------------------------------------------------------------


def test_a_lost_commit_answer_is_resolved_by_reading_the_table_back(
    kafka, iceberg_rest, build_dir, tmp_path, duck
):
    """Through a proxy in front of Iceberg's REST fixture, the table's first commits are: applied
    with the answer dropped (twice), applied with a 502 answer, and refused with a 503 before
    reaching the server. weir reads the table back each time, finds the first three landed and
    the fourth not, commits that one again, and every row lands once."""
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("iceberg_lost")
    total, partitions = 20_000, 4
    create_topic(bootstrap, topic, partitions)
    assert produce(bootstrap, topic, event_records(0, total)) == total
    namespace = unique("ns")
    reader = IcebergLake(tmp_path / "lake", rest_uri=iceberg_rest["WEIR_TEST_ICEBERG_REST_URI"],
                         namespace=namespace)
    with FaultProxy(iceberg_rest["WEIR_TEST_ICEBERG_REST_URI"]) as proxy:
        # Commits go to POST .../tables/events; the creation (POST .../tables) is not matched.
        dropped = proxy.add(Rule("POST", "/tables/events", "drop_after_forward", times=2))
        gateway = proxy.add(Rule("POST", "/tables/events", "status_after_forward", status=502))
        unsent = proxy.add(Rule("POST", "/tables/events", "status_without_forward", status=503))
        lake = IcebergLake(tmp_path / "lake", rest_uri=proxy.uri, namespace=namespace)
        weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group"),
                          {"WEIR_FLUSH_MAX_BYTES": "128KiB"}).start()
        try:
            wait_for(lambda: reader.count("events") >= total or not weir.alive(), 240,
                     "every event in the table")
            assert weir.alive(), weir.log()
            commits = weir.metric("weir_commits_total")
        finally:
            code = weir.stop()
        assert code == 0, weir.log()
        assert (len(dropped.hits), len(gateway.hits), len(unsent.hits)) == (2, 1, 1)
    log = weir.log_path.read_text()
    assert log.count("outcome of the commit unknown") == 4, weir.log()
    assert log.count("the commit to " + namespace + ".events had landed, in snapshot") == 3, \
        weir.log()
    table = reader.table("events")
    # Exactly one snapshot per commit id, and one per commit weir counted (a re-sent commit
    # that had landed would be a second snapshot of the same rows).
    assert assert_one_snapshot_per_commit_id(table) == commits == len(table.snapshots())
    assert commits >= 5
    ids = table.scan(selected_fields=("id",)).to_arrow().column("id").to_pylist()
    assert (len(ids), len(set(ids)), sum(ids)) == (total, total, total * (total - 1) // 2)
    assert duck_count(duck, table) == (total, total)
    assert ledger_of(table, topic) == end_offsets(bootstrap, topic, partitions)


# --- proof 5: three weir writers and pyiceberg on one table -------------------------------------


TOPICS = 3
PER_TOPIC = 6_000
TOPIC_PARTITIONS = 2
PYICEBERG_BASE = 9_000_000  # ids pyiceberg appends: PYICEBERG_BASE + n


def produce_topic_slowly(bootstrap: str, topic: str, base: int, seconds: float):
    """PER_TOPIC events with ids base..base+PER_TOPIC-1 over about `seconds`."""
    def run():
        chunk = PER_TOPIC // 20
        for start in range(0, PER_TOPIC, chunk):
            records = ((str(base + i).encode(), json.dumps(event(base + i)).encode())
                       for i in range(start, start + chunk))
            produce(bootstrap, topic, records)
            time.sleep(seconds / 20)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


class PyicebergAppender(threading.Thread):
    """Appends 20-row batches to the table in a loop until stopped, reloading and trying again
    when a commit loses the race (pyiceberg does not retry by itself)."""

    def __init__(self, lake: IcebergLake):
        super().__init__(daemon=True)
        self.lake = lake
        self.stop = threading.Event()
        self.appended: list[int] = []
        self.conflicts = 0
        self.error: BaseException | None = None

    def run(self):
        from pyiceberg.exceptions import CommitFailedException

        try:
            catalog = self.lake.catalog()
            while not self.stop.is_set():
                start = PYICEBERG_BASE + len(self.appended)
                ids = list(range(start, start + 20))
                while True:
                    table = catalog.load_table((self.lake.namespace, "events"))
                    schema = table.schema().as_arrow()
                    now = datetime.datetime.now(datetime.timezone.utc)
                    rows = [{**event(i), "props": "{}", "tags": "[]", "_inserted_at": now}
                            for i in ids]
                    try:
                        table.append(pa.Table.from_pylist(rows, schema=schema))
                        break
                    except CommitFailedException:
                        self.conflicts += 1
                self.appended.extend(ids)
        except BaseException as error:  # reported by the test
            self.error = error


def lake_for(catalog: str, request, root: Path) -> IcebergLake:
    if catalog == "rest":
        rest = request.getfixturevalue("iceberg_rest")
        return IcebergLake(root, rest_uri=rest["WEIR_TEST_ICEBERG_REST_URI"],
                           namespace=unique("ns"))
    postgres = request.getfixturevalue("postgres")
    return PostgresIcebergLake(root, fresh_postgres_database(postgres))


@pytest.mark.parametrize("catalog", ["rest", "postgres"])
def test_three_weir_writers_and_pyiceberg_append_to_one_table(
    catalog, request, kafka, build_dir, tmp_path, duck
):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    lake = lake_for(catalog, request, tmp_path / "lake")
    topics = [unique(f"iceberg_writer{k}") for k in range(TOPICS)]
    for topic in topics:
        create_topic(bootstrap, topic, TOPIC_PARTITIONS)
    writers = [WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group"),
                          {"WEIR_FLUSH_MAX_BYTES": "128KiB"}, name=f"w{k}")
               for k, topic in enumerate(topics)]
    for w in writers:
        w.start()
    producers = [produce_topic_slowly(bootstrap, topic, k * 1_000_000, 20)
                 for k, topic in enumerate(topics)]
    appender = PyicebergAppender(lake)

    def weir_done() -> bool:
        try:
            table = lake.table("events")
        except Exception:  # not created yet
            return False
        return all(sum(ledger_of(table, t).values()) >= PER_TOPIC for t in topics)

    try:
        wait_for(lambda: lake.count("events") > 0 or not all(w.alive() for w in writers), 120,
                 "the table created by the first commit")
        appender.start()
        for p in producers:
            p.join(timeout=180)
        wait_for(lambda: weir_done() or not all(w.alive() for w in writers), 300,
                 "every topic's events committed")
        assert all(w.alive() for w in writers), "\n".join(w.log() for w in writers)
        # A flush's counters move just after its commit is visible in the table: wait for them
        # to catch up with the last commits before reading them (a CI run read 51 counted
        # commits of 52 landed ones).
        wait_for(lambda: sum(w.metric("weir_commits_total") for w in writers)
                 >= assert_one_snapshot_per_commit_id(lake.table("events")), 30,
                 "the commit counters caught up with the table")
        conflicts = sum(w.metric("weir_commit_conflicts_total") for w in writers)
        fenced = sum(w.metric("weir_fenced_commits_total") for w in writers)
        commits = sum(w.metric("weir_commits_total") for w in writers)
    finally:
        appender.stop.set()
        appender.join(timeout=120)
        codes = [w.stop() for w in writers]
    assert codes == [0] * TOPICS, "\n".join(w.log() for w in writers)
    assert appender.error is None, repr(appender.error)
    assert not appender.is_alive()
    # pyiceberg appended while weir committed, and the writers raced one another.
    assert len(appender.appended) >= 20, len(appender.appended)
    assert conflicts + appender.conflicts >= 1
    assert fenced == 0  # three topics, three ledgers: nobody's range is anybody else's
    table = lake.table("events")
    ids = table.scan(selected_fields=("id",)).to_arrow().column("id").to_pylist()
    everything = PER_TOPIC * TOPICS + len(appender.appended)
    assert (len(ids), len(set(ids))) == (everything, everything)
    got = collections.Counter(i // 1_000_000 for i in ids)
    assert got == {**{k: PER_TOPIC for k in range(TOPICS)}, 9: len(appender.appended)}
    assert set(i for i in ids if i >= PYICEBERG_BASE) == set(appender.appended)
    assert sum(i for i in ids if i < PYICEBERG_BASE) == sum(
        k * 1_000_000 * PER_TOPIC + PER_TOPIC * (PER_TOPIC - 1) // 2 for k in range(TOPICS))
    assert duck_count(duck, table) == (everything, everything)
    # The newest weir snapshot carries all three ledgers, each the topic's end offsets.
    for topic in topics:
        assert ledger_of(table, topic) == end_offsets(bootstrap, topic, TOPIC_PARTITIONS)
    assert assert_one_snapshot_per_commit_id(table) == commits
    # pyiceberg's snapshots carry no weir ledger: they are skipped when reading it.
    theirs = [s for s in ancestry(table) if "weir.commit-id" not in summary(s)]
    assert len(theirs) == len(appender.appended) // 20


# --- proof 7: a thousand small commits ----------------------------------------------------------


def test_a_thousand_small_weir_commits_plan_from_at_most_a_hundred_manifests(
    kafka, build_dir, tmp_path, duck
):
    """One record per poll and 1 KiB flushes: every few records are a commit of their own,
    on the embedded SQL catalog. Manifests are merged as they accumulate."""
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("iceberg_small")
    total = 9_400  # about nine records per 1 KiB flush: ~1,040 commits
    create_topic(bootstrap, topic, 1)
    assert produce(bootstrap, topic, event_records(0, total)) == total
    lake = IcebergLake(tmp_path / "lake")
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group"),
                      {"WEIR_FLUSH_MAX_BYTES": "1KiB", "WEIR_KAFKA_CONSUME_BATCH_SIZE": "1"})
    weir.start()
    try:
        wait_for(lambda: weir.metric("weir_records_written_total") >= total or not weir.alive(),
                 840, "every event committed", poll_s=2)
        assert weir.alive(), weir.log()
        commits = weir.metric("weir_commits_total")
    finally:
        code = weir.stop()
    assert code == 0, weir.log()
    assert commits >= 1000, f"only {commits} commits: lower the flush size or add events"
    table = lake.table("events")
    assert assert_one_snapshot_per_commit_id(table) == commits == len(ancestry(table))
    manifests = table.current_snapshot().manifests(table.io)
    assert len(manifests) <= 100, len(manifests)
    assert sum(m.added_files_count + m.existing_files_count for m in manifests) == int(
        summary(table.current_snapshot())["total-data-files"])
    ids = table.scan(selected_fields=("id",)).to_arrow().column("id").to_pylist()
    assert (len(ids), len(set(ids)), sum(ids)) == (total, total, total * (total - 1) // 2)
    assert duck_count(duck, table) == (total, total)
    assert ledger_of(table, topic) == {"0": total}


# --- superseded metadata files (issue 29) -------------------------------------------------------


@pytest.mark.parametrize("catalog", ["sql", "rest"])
def test_superseded_metadata_files_are_deleted_as_commits_land(
    catalog, kafka, request, build_dir, tmp_path, duck
):
    """weir creates its tables with write.metadata.delete-after-commit.enabled, so a table keeps
    previous-versions-max + 1 metadata files however many commits land (weir's SQL store deletes
    them; the REST server does on REST), and the table still reads back exactly."""
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("iceberg_metadata")
    create_topic(bootstrap, topic, 1)
    if catalog == "rest":
        rest = request.getfixturevalue("iceberg_rest")
        lake = IcebergLake(tmp_path / "lake", rest_uri=rest["WEIR_TEST_ICEBERG_REST_URI"],
                           namespace=unique("ns"))
    else:
        lake = IcebergLake(tmp_path / "lake")
    settings = {"WEIR_FLUSH_MAX_BYTES": "1KiB", "WEIR_KAFKA_CONSUME_BATCH_SIZE": "1"}
    group = unique("group")

    def run(first: int, last: int) -> None:
        assert produce(bootstrap, topic, event_records(first, last - first)) == last - first
        weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", group, settings).start()
        try:
            wait_for(lambda: lake.count("events") >= last or not weir.alive(), 300,
                     f"{last} events in the table")
            assert weir.alive(), weir.log()
        finally:
            code = weir.stop()
        assert code == 0, weir.log()

    run(0, 20)
    table = lake.table("events")
    assert table.properties.get("write.metadata.delete-after-commit.enabled") == "true"
    keep = 4
    with table.transaction() as tx:
        tx.set_properties({"write.metadata.previous-versions-max": str(keep)})
    run(20, 400)
    table = lake.table("events")
    commits = assert_one_snapshot_per_commit_id(table)
    assert commits >= 3 * keep, f"only {commits} commits: lower the flush size or add events"
    metadata_dir = Path(urllib.parse.urlparse(table.metadata_location).path).parent
    on_disk = sorted(p.name for p in metadata_dir.glob("*.metadata.json"))
    logged = sorted(Path(e.metadata_file).name for e in table.metadata.metadata_log)
    assert len(logged) == keep
    assert on_disk == sorted(logged + [Path(table.metadata_location).name])
    ids = table.scan(selected_fields=("id",)).to_arrow().column("id").to_pylist()
    assert (len(ids), len(set(ids)), sum(ids)) == (400, 400, 400 * 399 // 2)
    assert duck_count(duck, table) == (400, 400)
    assert ledger_of(table, topic) == {"0": 400}
