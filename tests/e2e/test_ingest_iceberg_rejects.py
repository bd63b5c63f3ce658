"""Rejects exactly once on Iceberg (issue 11): an Iceberg snapshot is per table, so a flush's
rejects commit to `<table>_rejects` first, in its own snapshot carrying the rejects table's own
ledger, and its rows follow. A crash between the two commits, SIGKILLs at random and
rebalances between two writers neither lose nor duplicate a row or a reject, on the embedded
SQLite SQL catalog and through the REST catalog."""

from __future__ import annotations

import json
import random
import re
import sqlite3
import time

import pytest

from tests.e2e.test_ingest_iceberg import IcebergLake
from tests.e2e.test_ingest_recovery import FAST_GROUP, FAST_GROUP_ARGS
from tests.e2e.weir_run import (WeirIngest, create_topic, produce, produce_slowly, unique,
                                wait_for)
from tests.harness.fault_proxy import FaultProxy, Rule


def is_poison(i: int) -> bool:
    return i % 23 == 7


def records(start: int, count: int):
    """Events `start`..: every 23rd one is malformed JSON that still names its id."""
    for i in range(start, start + count):
        if is_poison(i):
            yield str(i).encode(), f'{{"id": {i}, "v": '.encode()
        else:
            yield str(i).encode(), json.dumps({"id": i, "v": i * 2, "name": f"n{i}"}).encode()


def expected(total: int) -> tuple[set[int], set[int]]:
    rows = {i for i in range(total) if not is_poison(i)}
    return rows, set(range(total)) - rows


def assert_exactly(lake: IcebergLake, total: int) -> None:
    """Every good event once in the table and every poison one once in its rejects table."""
    want_rows, want_rejects = expected(total)
    ids = lake.table("events").scan(selected_fields=("id", "v")).to_arrow()
    got = ids.column("id").to_pylist()
    assert (len(got), len(set(got))) == (len(want_rows), len(want_rows)), "rows lost or doubled"
    assert set(got) == want_rows
    assert ids.column("v").to_pylist() == [i * 2 for i in got]
    rejects = lake.table("events_rejects").scan().to_arrow().to_pylist()
    coordinates = [(r["partition"], r["offset"]) for r in rejects]
    assert len(coordinates) == len(set(coordinates)) == len(want_rejects), (
        f"{len(coordinates)} rejects, {len(set(coordinates))} distinct, want {len(want_rejects)}")
    reject_ids = [int(re.match(r'\{"id": (\d+),', r["payload"]).group(1)) for r in rejects]
    assert sorted(reject_ids) == sorted(want_rejects)
    assert {r["reason"] for r in rejects} == {"invalid_json"}


def committed(lake: IcebergLake, total: int) -> bool:
    want_rows, want_rejects = expected(total)
    return (lake.count("events") >= len(want_rows)
            and lake.count("events_rejects") >= len(want_rejects))


def kill_loop(lake: IcebergLake, build_dir, bootstrap: str, kills: int, seed: int) -> None:
    topic = unique("iceberg_poison_kills")
    total = 30_000
    create_topic(bootstrap, topic, 4)
    group = unique("group")
    # Small flushes, so that most flushes carry rejects and many commits are in flight.
    settings = dict(FAST_GROUP, WEIR_FLUSH_MAX_BYTES="64KiB")
    workers = [WeirIngest(build_dir, lake, bootstrap, topic, "events", group, settings,
                          name=f"w{i}") for i in range(2)]
    for w in workers:
        w.start(*FAST_GROUP_ARGS)
    producer = produce_slowly(bootstrap, topic, total, 25, records)
    rng = random.Random(seed)
    try:
        for _ in range(kills):
            time.sleep(rng.uniform(0.3, 2.5))
            victim = workers[rng.randrange(2)]
            victim.kill()  # SIGKILL: wherever it is, between the two commits too
            victim.start(*FAST_GROUP_ARGS)
        producer.join(timeout=120)
        assert not producer.is_alive()
        wait_for(lambda: committed(lake, total), 300, "every row and reject committed")
    finally:
        codes = [w.stop() for w in workers]
    assert codes == [0, 0], "\n".join(w.log() for w in workers)
    assert_exactly(lake, total)


def test_kill_loop_with_poison_records_on_the_sql_catalog_keeps_rows_and_rejects_exact(
    kafka, build_dir, tmp_path
):
    kill_loop(IcebergLake(tmp_path / "lake"), build_dir, kafka["WEIR_TEST_KAFKA_BOOTSTRAP"],
              kills=10, seed=20261201)


def test_kill_loop_with_poison_records_through_rest_keeps_rows_and_rejects_exact(
    kafka, iceberg_rest, build_dir, tmp_path
):
    lake = IcebergLake(tmp_path / "lake", rest_uri=iceberg_rest["WEIR_TEST_ICEBERG_REST_URI"],
                       namespace=unique("ns"))
    kill_loop(lake, build_dir, kafka["WEIR_TEST_KAFKA_BOOTSTRAP"], kills=10, seed=20261202)


def crash_between_the_commits(lake: IcebergLake, weir_of, bootstrap: str, topic: str,
                              arm, disarm) -> None:
    """The first 100 events land; `arm` makes the next commit to `events` kill weir (the
    rejects of the next 100 events have landed by then); after a restart every row and reject
    is there once."""
    rows_1, rejects_1 = (len(s) for s in expected(100))
    rows_2, rejects_2 = (len(s) for s in expected(200))
    weir = weir_of().start()
    try:
        produce(bootstrap, topic, records(0, 100))
        wait_for(lambda: lake.count("events") == rows_1
                 and lake.count("events_rejects") == rejects_1 or not weir.alive(), 60,
                 "the first flush")
        assert weir.alive(), weir.log()
        arm(weir)
        produce(bootstrap, topic, records(100, 100))
        wait_for(lambda: lake.count("events_rejects") == rejects_2 or not weir.alive(), 60,
                 "the second flush's rejects")
    finally:
        weir.kill()
    assert lake.count("events_rejects") == rejects_2, weir.log()
    assert lake.count("events") == rows_1, "the rows of the second flush must not have landed"
    disarm()
    restarted = weir_of().start()
    try:
        wait_for(lambda: lake.count("events") == rows_2 or not restarted.alive(), 90,
                 "the second flush's rows after the restart")
        assert restarted.alive(), restarted.log()
    finally:
        assert restarted.stop() == 0, restarted.log()
    # The restart re-read the second flush and found its rejects in the table already.
    assert re.search(r"the flush's \d+ rejects are in \S+ already",
                     restarted.log_path.read_text()), restarted.log()
    assert lake.count("events_rejects") == rejects_2
    assert_exactly(lake, 200)


def test_a_crash_between_the_rejects_and_the_rows_commit_on_the_sql_catalog(
    kafka, build_dir, tmp_path
):
    """The SQLite catalog refuses the swap of `events` (a trigger), so the second flush's
    rejects land and its rows cannot; weir is killed there and restarted."""
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("iceberg_poison_crash")
    create_topic(bootstrap, topic, 1)
    lake = IcebergLake(tmp_path / "lake")
    group = unique("group")
    catalog = lake.root / "weir-lake" / "catalog.db"

    def execute(sql: str) -> None:
        with sqlite3.connect(catalog, timeout=30) as db:
            db.execute(sql)

    arm = lambda _weir: execute(  # noqa: E731
        "CREATE TRIGGER refuse_events BEFORE UPDATE ON iceberg_tables "
        "WHEN OLD.table_name = 'events' BEGIN SELECT RAISE(ABORT, 'test: refused'); END")
    disarm = lambda: execute("DROP TRIGGER refuse_events")  # noqa: E731
    crash_between_the_commits(
        lake, lambda: WeirIngest(build_dir, lake, bootstrap, topic, "events", group), bootstrap,
        topic, arm, disarm)


def test_a_crash_between_the_rejects_and_the_rows_commit_through_rest(
    kafka, iceberg_rest, build_dir, tmp_path
):
    """A proxy in front of the REST catalog SIGKILLs weir when its commit to `events` arrives
    (after the rejects table's commit was answered) and never forwards it."""
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("iceberg_poison_crash")
    create_topic(bootstrap, topic, 1)
    group = unique("group")
    with FaultProxy(iceberg_rest["WEIR_TEST_ICEBERG_REST_URI"]) as proxy:
        lake = IcebergLake(tmp_path / "lake", rest_uri=proxy.uri, namespace=unique("ns"))
        rules: list[Rule] = []

        def arm(weir: WeirIngest) -> None:
            rules.append(proxy.add(Rule("POST", "/tables/events", "status_without_forward",
                                        status=503, before_action=weir.kill)))

        def disarm() -> None:
            assert len(rules[0].hits) == 1, rules[0].hits

        crash_between_the_commits(
            lake, lambda: WeirIngest(build_dir, lake, bootstrap, topic, "events", group),
            bootstrap, topic, arm, disarm)
        # The rejects table's commits went through the proxy; the killed commit never did.
        posts = [path for method, path, _ in proxy.forwarded if method == "POST"]
        assert any(p.endswith("/tables/events_rejects") for p in posts), posts
