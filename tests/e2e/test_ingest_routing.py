"""Routing (issue 14; the Kafka Connect sink's route field): `events_{event}` sends each record
to events_click, events_view or events_buy (the allowlist), and every other record (a name not
allowed, a value that names no table, no value) to the dataset's own table `events`. Each
routed table carries its own ledger and commits before `events`, whose ledger is where a
restart resumes: SIGKILLs at random and rebalances between two writers leave every table with
exactly its records, none lost, none twice, in DuckLake and in Iceberg. A run without kills
counts the fallback reasons exactly."""

from __future__ import annotations

import json
import random
import re
import sqlite3
import time

import pytest

from tests.e2e.test_ingest_iceberg import IcebergLake
from tests.e2e.test_ingest_recovery import FAST_GROUP, FAST_GROUP_ARGS
from tests.e2e.weir_run import (Lake, WeirIngest, create_topic, produce, produce_slowly, unique,
                                wait_for)

ROUTED = ("click", "view", "buy")
ROUTE = {"WEIR_ROUTE_TEMPLATE": "events_{event}",
         "WEIR_ROUTE_ALLOW": "events_click,events_view,events_buy"}


def event_of(i: int) -> str | None:
    """The route value of record i; None: the record has no event field."""
    r = i % 10
    if r < 3:
        return "click" if i % 20 < 10 else "Click"  # names fold to lower case
    if r < 6:
        return "view"
    if r < 8:
        return "buy"
    if r == 8:
        return "spam" if (i // 10) % 2 else "bad name!"
    return None


def table_of(i: int) -> str:
    event = event_of(i)
    return f"events_{event.lower()}" if event and event.lower() in ROUTED else "events"


def records(start: int, count: int):
    for i in range(start, start + count):
        record = {"id": i, "n": f"n{i}"}
        if event_of(i) is not None:
            record["event"] = event_of(i)
        yield str(i).encode(), json.dumps(record).encode()


def expected(total: int) -> dict[str, set[int]]:
    out: dict[str, set[int]] = {f"events_{e}": set() for e in ROUTED}
    out["events"] = set()
    for i in range(total):
        out[table_of(i)].add(i)
    return out


class DuckLakeTables:
    def __init__(self, lake: Lake):
        self.lake = lake

    def count(self, table: str) -> int:
        return self.lake.count(table)

    def ids(self, table: str) -> list[int]:
        con = self.lake.connect()
        try:
            return [r[0] for r in con.execute(f"SELECT id FROM lake.{table}").fetchall()]
        finally:
            con.close()


class IcebergTables:
    def __init__(self, lake: IcebergLake):
        self.lake = lake

    def count(self, table: str) -> int:
        return self.lake.count(table)

    def ids(self, table: str) -> list[int]:
        return self.lake.table(table).scan(selected_fields=("id",)).to_arrow().column(
            "id").to_pylist()


def make(fmt: str, root):
    if fmt == "ducklake":
        lake = Lake(root)
        return lake, DuckLakeTables(lake)
    lake = IcebergLake(root)
    return lake, IcebergTables(lake)


def assert_exactly(tables, total: int) -> None:
    for table, want in expected(total).items():
        got = tables.ids(table)
        assert len(got) == len(want), f"{table}: {len(got)} rows, want {len(want)}"
        assert len(set(got)) == len(got), f"{table}: {len(got) - len(set(got))} duplicates"
        assert set(got) == want, f"{table}: wrong records"


def all_committed(tables, total: int) -> bool:
    return all(tables.count(t) >= len(w) for t, w in expected(total).items())


def commits(weir: WeirIngest) -> int:
    """Flushes the writer has committed, over every start (its log is appended to)."""
    return weir.log_path.read_text(errors="replace").count(" committed snapshot ")


@pytest.mark.parametrize("fmt", ["ducklake", "iceberg"])
def test_routing_into_three_tables_and_the_fallback_survives_a_kill_loop_exactly(
        fmt, kafka, build_dir, tmp_path):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("route_kills")
    total = 40_000
    create_topic(bootstrap, topic, 4)
    lake, tables = make(fmt, tmp_path / "lake")
    group = unique("group")
    # Small flushes: many commits in flight, so kills land between a flush's table commits.
    settings = dict(FAST_GROUP, WEIR_FLUSH_MAX_BYTES="64KiB", **ROUTE)
    workers = [WeirIngest(build_dir, lake, bootstrap, topic, "events", group, settings,
                          name=f"w{i}") for i in range(2)]
    for w in workers:
        w.start(*FAST_GROUP_ARGS)
    producer = produce_slowly(bootstrap, topic, total, 90, records)
    rng = random.Random(20261201 if fmt == "ducklake" else 20261202)
    kills = 0
    try:
        while kills < 16 and producer.is_alive():
            victim = workers[rng.randrange(2)]
            # Kill a writer that is committing: after one of its flushes landed since its last
            # start, a moment into the next one (often between a flush's table commits).
            landed = commits(victim)
            wait_for(lambda: commits(victim) > landed or not producer.is_alive(), 60,
                     "a commit of the victim")
            time.sleep(rng.uniform(0.0, 0.6))
            victim.kill()  # SIGKILL: anywhere, between a flush's table commits too
            kills += 1
            victim.start(*FAST_GROUP_ARGS)
        assert kills >= 10, f"only {kills} kills while the producer ran"
        producer.join(timeout=120)
        assert not producer.is_alive()
        wait_for(lambda: all_committed(tables, total), 300, "every record committed")
    finally:
        codes = [w.stop() for w in workers]
    assert codes == [0, 0], "\n".join(w.log() for w in workers)
    assert_exactly(tables, total)
    replays = sum(len(re.findall(r"rows for events_\w+ (?:are|were) in it already",
                                 w.log_path.read_text())) for w in workers)
    print(f"{kills} kills; {replays} routed commits found (part of) their rows landed already")


@pytest.mark.parametrize("fmt", ["ducklake", "iceberg"])
def test_routing_counts_each_fallback_reason_and_each_routed_table(
        fmt, kafka, build_dir, tmp_path):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("route")
    total = 1000
    create_topic(bootstrap, topic, 2)
    assert produce(bootstrap, topic, records(0, total)) == total
    lake, tables = make(fmt, tmp_path / "lake")
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group"),
                      dict(ROUTE, WEIR_FLUSH_INTERVAL="2s")).start()
    try:
        wait_for(lambda: all_committed(tables, total) or not weir.alive(), 120, "every record")
        assert weir.alive(), weir.log()
        want = expected(total)
        for e in ROUTED:
            assert weir.metric("weir_records_routed_total", table=f"events_{e}") == \
                len(want[f"events_{e}"])
        assert weir.metric("weir_records_written_total") == total
        reasons = {r: weir.metric("weir_route_fallback_total", reason=r)
                   for r in ("field_missing", "not_a_name", "not_allowed", "over_cap")}
        assert reasons == {"field_missing": total // 10, "not_a_name": total // 20,
                           "not_allowed": total // 20, "over_cap": 0}
    finally:
        assert weir.stop() == 0, weir.log()
    assert_exactly(tables, total)


def refuse_commits_to_events(fmt: str, lake) -> tuple:
    """(arm, disarm): SQLite triggers that make every commit to `events` fail while armed (the
    DuckLake ledger row of `events`, the Iceberg SQL catalog's pointer swap of `events`), so
    that a flush's routed tables land and its own table cannot."""
    if fmt == "ducklake":
        path = lake.sqlite_path
        events_uuid = ("(SELECT table_uuid FROM ducklake_table WHERE table_name = 'events' "
                       "AND end_snapshot IS NULL)")
        statements = [
            f"CREATE TRIGGER refuse_events_{op.lower()} BEFORE {op} ON weir_offset_ledger "
            f"WHEN NEW.table_uuid = {events_uuid} BEGIN SELECT RAISE(ABORT, 'test: refused'); END"
            for op in ("INSERT", "UPDATE")]
        drops = ["DROP TRIGGER refuse_events_insert", "DROP TRIGGER refuse_events_update"]
    else:
        path = lake.root / "weir-lake" / "catalog.db"
        statements = [
            "CREATE TRIGGER refuse_events BEFORE UPDATE ON iceberg_tables "
            "WHEN OLD.table_name = 'events' BEGIN SELECT RAISE(ABORT, 'test: refused'); END"]
        drops = ["DROP TRIGGER refuse_events"]

    def execute(sqls: list[str]) -> None:
        with sqlite3.connect(path, timeout=30) as db:
            for sql in sqls:
                db.execute(sql)

    return (lambda: execute(statements)), (lambda: execute(drops))


@pytest.mark.parametrize("fmt", ["ducklake", "iceberg"])
def test_a_crash_after_the_routed_tables_landed_and_before_the_dataset_table_did(
        fmt, kafka, build_dir, tmp_path):
    """The second flush's routed tables commit and `events` cannot; weir is killed there. The
    restart resumes at `events`' ledger, re-reads the flush, finds its routed rows in their
    tables already and commits only the rest: every table exact."""
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("route_crash")
    create_topic(bootstrap, topic, 1)
    lake, tables = make(fmt, tmp_path / "lake")
    group = unique("group")
    arm, disarm = refuse_commits_to_events(fmt, lake)
    settings = dict(ROUTE, WEIR_FLUSH_INTERVAL="2s")
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", group, settings).start()
    first, second = expected(100), expected(200)
    try:
        produce(bootstrap, topic, records(0, 100))
        wait_for(lambda: all_committed(tables, 100) or not weir.alive(), 90, "the first flush")
        assert weir.alive(), weir.log()
        arm()
        produce(bootstrap, topic, records(100, 100))
        wait_for(lambda: all(tables.count(f"events_{e}") == len(second[f"events_{e}"])
                             for e in ROUTED) or not weir.alive(), 90,
                 "the second flush's routed tables")
    finally:
        weir.kill()
    for e in ROUTED:
        assert tables.count(f"events_{e}") == len(second[f"events_{e}"]), weir.log()
    assert tables.count("events") == len(first["events"]), "events must not have moved"
    disarm()
    restarted = WeirIngest(build_dir, lake, bootstrap, topic, "events", group, settings).start()
    try:
        wait_for(lambda: all_committed(tables, 200) or not restarted.alive(), 90,
                 "the second flush after the restart")
        assert restarted.alive(), restarted.log()
    finally:
        assert restarted.stop() == 0, restarted.log()
    log = restarted.log_path.read_text()
    for e in ROUTED:
        assert re.search(rf"the flush's \d+ rows for events_{e} are in it already", log), \
            restarted.log()
    assert_exactly(tables, 200)
