"""Rejects in WAL mode (issue 13): a record direct mode would send to `<table>_rejects` goes to
a rejects segment of its Kafka partition's rotation group, rotates, uploads and commits with
the group's rows under the same offset range — in the rows' snapshot on DuckLake, just before
it (the rejects table's own ledger) on Iceberg. Exact rows and rejects, each reject's payload
and coordinates, the counters, and SIGKILLs at the protocol's fault points (WEIR_TEST_WAL_FAULT,
src/wal/fault.h) and at random that neither lose nor duplicate a reject."""

from __future__ import annotations

import json
import random
import time

import pytest

from tests.e2e.test_ingest_iceberg import IcebergLake
from tests.e2e.test_ingest_wal import FAST_GROUP_ARGS, wal_files, wal_settings
from tests.e2e.weir_run import Lake, WeirIngest, create_topic, produce, produce_slowly, unique, \
    wait_for

PARTITIONS = 3


def is_poison(i: int) -> bool:
    return i % 23 == 7


def payload(i: int) -> bytes:
    if is_poison(i):
        return f'{{"id": {i}, "v": '.encode()  # malformed JSON that still names its id
    return json.dumps({"id": i, "v": i * 2}).encode()


def records(start: int, count: int):
    for i in range(start, start + count):
        yield str(i).encode(), payload(i)


def produce_spread(bootstrap: str, topic: str, start: int, count: int) -> None:
    """Event i goes to partition i % 3, so its offset is i // 3 (a fresh topic)."""
    produce(bootstrap, topic, records(start, count), partition_of=lambda n: (start + n) % PARTITIONS)


def expected(total: int) -> tuple[set[int], set[int]]:
    rows = {i for i in range(total) if not is_poison(i)}
    return rows, set(range(total)) - rows


def make_lake(kind: str, root):
    return Lake(root) if kind == "ducklake" else IcebergLake(root)


def read(lake, kind: str) -> tuple[list[tuple[int, int]], list[dict]]:
    """(id, v) of every row, and every reject as a dict."""
    if kind == "ducklake":
        con = lake.connect()
        try:
            rows = con.execute("SELECT id, v FROM lake.events").fetchall()
            cursor = con.execute("SELECT * FROM lake.events_rejects")
            names = [d[0] for d in cursor.description]
            rejects = [dict(zip(names, r)) for r in cursor.fetchall()]
        finally:
            con.close()
        return [(int(i), int(v)) for i, v in rows], rejects
    table = lake.table("events").scan(selected_fields=("id", "v")).to_arrow()
    rows = list(zip(table.column("id").to_pylist(), table.column("v").to_pylist()))
    return rows, lake.table("events_rejects").scan().to_arrow().to_pylist()


def landed(lake, total: int) -> bool:
    want_rows, want_rejects = expected(total)
    return (lake.count("events") >= len(want_rows)
            and lake.count("events_rejects") >= len(want_rejects))


def assert_exactly(lake, kind: str, total: int, spread: bool = True) -> None:
    """Every good event once in the table, every poison one once in the rejects table, with
    its raw payload and (when produced spread) its exact coordinates."""
    want_rows, want_rejects = expected(total)
    rows, rejects = read(lake, kind)
    ids = [i for i, _ in rows]
    assert (len(ids), len(set(ids))) == (len(want_rows), len(want_rows)), "rows lost or doubled"
    assert set(ids) == want_rows
    assert all(v == i * 2 for i, v in rows)
    coordinates = [(r["partition"], r["offset"]) for r in rejects]
    assert len(coordinates) == len(set(coordinates)) == len(want_rejects), (
        f"{len(coordinates)} rejects, {len(set(coordinates))} distinct, want {len(want_rejects)}")
    by_id = {int(r["payload"].split(",")[0].split(":")[1]): r for r in rejects}
    assert set(by_id) == want_rejects
    for i, r in by_id.items():
        assert r["payload"] == payload(i).decode()
        assert r["payload_bytes"] == len(payload(i))
        assert r["key"] == str(i)
        assert r["reason"] == "invalid_json"
        assert r["topic"]
        if spread:
            assert (r["partition"], r["offset"]) == (i % PARTITIONS, i // PARTITIONS)


@pytest.mark.parametrize("kind", ["ducklake", "iceberg"])
def test_rejects_land_once_with_their_rows(kafka, build_dir, tmp_path, kind):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("wal_rejects")
    total = 3_000
    create_topic(bootstrap, topic, PARTITIONS)
    produce_spread(bootstrap, topic, 0, total)
    lake = make_lake(kind, tmp_path / "lake")
    want_rows, want_rejects = expected(total)
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group"),
                      wal_settings(lake.root)).start()
    try:
        wait_for(lambda: landed(lake, total) or not weir.alive(), 180,
                 "every row and reject committed")
        wait_for(lambda: not [f for f in wal_files(lake.root) if f.startswith("ready_")], 60,
                 "the ready files deleted")
        assert weir.metric("weir_records_consumed_total") == total
        assert weir.metric("weir_records_written_total") == len(want_rows)
        assert weir.metric("weir_records_rejected_total", reason="invalid_json") == \
            len(want_rejects)
    finally:
        assert weir.stop() == 0, weir.log()
    assert_exactly(lake, kind, total)
    assert wal_files(lake.root) == []


@pytest.mark.parametrize("kind", ["ducklake", "iceberg"])
@pytest.mark.parametrize("point", ["exit_after_rename", "exit_after_upload", "exit_after_commit"])
def test_a_kill_at_a_chosen_point_neither_loses_nor_doubles_a_reject(
        kafka, build_dir, tmp_path, kind, point):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("wal_rejects_fault")
    total = 3_000
    create_topic(bootstrap, topic, PARTITIONS)
    produce_spread(bootstrap, topic, 0, total)
    lake = make_lake(kind, tmp_path / "lake")
    group = unique("group")
    dying = WeirIngest(build_dir, lake, bootstrap, topic, "events", group,
                       wal_settings(lake.root, WEIR_TEST_WAL_FAULT=point)).start()
    assert dying.process.wait(timeout=120) == 137, dying.log()
    assert f"WEIR_TEST_WAL_FAULT={point}" in dying.log()
    if point == "exit_after_commit":
        # The commit landed with its rejects; the local files were not deleted.
        assert lake.count("events_rejects") > 0
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", group,
                      wal_settings(lake.root)).start()
    try:
        wait_for(lambda: landed(lake, total) or not weir.alive(), 180,
                 "every row and reject committed after the restart")
        wait_for(lambda: not [f for f in wal_files(lake.root) if f.startswith("ready_")], 60,
                 "the ready files deleted")
    finally:
        assert weir.stop() == 0, weir.log()
    assert "WAL recovery" in weir.log(10_000)
    assert_exactly(lake, kind, total)


def test_a_kill_between_the_rejects_and_the_rows_commit_on_iceberg(kafka, build_dir, tmp_path):
    """Iceberg: the rejects table's commit landed (its own ledger moved), the rows' did not;
    the restart commits the rows only."""
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("wal_rejects_between")
    total = 3_000
    create_topic(bootstrap, topic, PARTITIONS)
    produce_spread(bootstrap, topic, 0, total)
    lake = IcebergLake(tmp_path / "lake")
    group = unique("group")
    dying = WeirIngest(build_dir, lake, bootstrap, topic, "events", group,
                       wal_settings(lake.root, WEIR_TEST_WAL_FAULT="exit_after_rejects_commit"))
    dying.start()
    assert dying.process.wait(timeout=120) == 137, dying.log()
    first_rejects = lake.count("events_rejects")
    assert first_rejects > 0
    assert lake.count("events") == 0
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", group,
                      wal_settings(lake.root)).start()
    try:
        wait_for(lambda: landed(lake, total) or not weir.alive(), 180,
                 "every row and reject committed after the restart")
    finally:
        assert weir.stop() == 0, weir.log()
    assert_exactly(lake, "iceberg", total)


@pytest.mark.parametrize("kind", ["ducklake", "iceberg"])
def test_random_sigkills_keep_rows_and_rejects_exact(kafka, build_dir, tmp_path, kind):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("wal_rejects_kills")
    total = 30_000
    create_topic(bootstrap, topic, PARTITIONS)
    lake = make_lake(kind, tmp_path / "lake")
    group = unique("group")
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", group,
                      wal_settings(lake.root, WEIR_WAL_COMMIT_INTERVAL="1s"))
    weir.start(*FAST_GROUP_ARGS)
    producer = produce_slowly(bootstrap, topic, total, 20, make=records)
    rng = random.Random(20261213)
    try:
        for _ in range(8):
            time.sleep(rng.uniform(0.5, 3.0))
            weir.kill()  # SIGKILL anywhere: between the rejects' and the rows' commit too
            weir.start(*FAST_GROUP_ARGS)
        producer.join(timeout=120)
        assert not producer.is_alive()
        wait_for(lambda: landed(lake, total) or not weir.alive(), 240,
                 "every row and reject committed")
    finally:
        code = weir.stop()
    assert code == 0, weir.log()
    assert_exactly(lake, kind, total, spread=False)
