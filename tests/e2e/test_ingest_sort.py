"""The pre-write sort (issue 14; millpond's MILLPOND_SORT_BY): every data file holds its rows in
sort-key order — ascending, left to right, stable (ties keep their consume order), nulls last —
checked by reading each file in order and through its row groups' Parquet statistics, on
DuckLake and on Iceberg (where the keys are also the table's declared sort order). A flush
that lacks a key is written unsorted and counted, with one warning per key set."""

from __future__ import annotations

import json
import random

import pyarrow.parquet as pq

from tests.e2e.test_ingest_iceberg import IcebergLake
from tests.e2e.weir_run import Lake, WeirIngest, create_topic, produce, unique, wait_for

TEAMS = ["delta", "alpha", "charlie", "bravo", None]
N = 6000


def events(start: int, count: int, seed: int, with_ts: bool = True):
    rng = random.Random(seed)
    out = []
    for i in range(start, start + count):
        e = {"id": i, "team": rng.choice(TEAMS), "pad": "x" * rng.randrange(20)}
        if with_ts:
            e["ts"] = rng.randrange(50)  # many ties, to show the sort is stable
        out.append(e)
    return out


def sort_key(e: dict):
    # Ascending, nulls last, then the consume order (the sort is stable).
    return (e["team"] is None, e["team"] or "", e["ts"], e["id"])


def check_file_order(path: str, rows: list[dict]) -> int:
    """The file's rows are in (team, ts) order with ties by id, and its row groups' statistics
    never go back: each group's team minimum is at least the previous group's maximum (after a
    group of nulls only nulls follow). Returns the number of row groups."""
    assert rows == sorted(rows, key=sort_key), f"{path} is not in sort order"
    meta = pq.ParquetFile(path).metadata
    team = meta.schema.names.index("team")
    previous_max = None
    for g in range(meta.num_row_groups):
        stats = meta.row_group(g).column(team).statistics
        if not stats.has_min_max:  # all null
            previous_max = "\U0010ffff"
            continue
        if previous_max is not None:
            assert stats.min >= previous_max, (path, g, stats.min, previous_max)
        previous_max = stats.max
    return meta.num_row_groups


def read_file(path: str) -> list[dict]:
    table = pq.read_table(path, columns=["id", "team", "ts"])
    return table.to_pylist()


def produce_flushes(bootstrap: str, topic: str, weir: WeirIngest, count, seed: int,
                    with_ts: bool = True) -> list[dict]:
    batch = events(0, N, seed, with_ts)
    produce(bootstrap, topic, ((None, json.dumps(e).encode()) for e in batch))
    wait_for(lambda: count() >= N or not weir.alive(), 90, "the sorted flush")
    assert weir.alive(), weir.log()
    return batch


SETTINGS = {"WEIR_PARQUET_ROW_GROUP_ROWS": "1024", "WEIR_FLUSH_INTERVAL": "3s"}


def test_ducklake_files_are_sorted_by_millponds_sort_by_and_a_missing_key_is_counted(
    kafka, build_dir, tmp_path
):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("sorted")
    create_topic(bootstrap, topic, 1)
    lake = Lake(tmp_path / "lake")
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group"),
                      dict(SETTINGS, MILLPOND_SORT_BY="team, ts")).start()
    try:
        produce_flushes(bootstrap, topic, weir, lambda: lake.count("events"), 1)
        assert weir.metric("weir_sort_skipped_total") == 0
        con = lake.connect()
        files = [r[0] for r in con.execute(
            "SELECT data_file FROM ducklake_list_files('lake', 'events')").fetchall()]
        con.close()
        assert files
        total, groups = 0, 0
        for path in files:
            rows = read_file(path)
            total += len(rows)
            groups = max(groups, check_file_order(path, rows))
        assert total == N
        assert groups >= 2, "the statistics check needs a file of several row groups"
        # Two flushes without `ts`: written unsorted, every record counted, one warning.
        for k in (1, 2):
            batch = events(0, 500, 100 + k, with_ts=False)
            produce(bootstrap, topic, ((None, json.dumps(e).encode()) for e in batch))
            wait_for(lambda: lake.count("events") >= N + 500 * k or not weir.alive(), 90,
                     "an unsorted flush")
        assert weir.alive(), weir.log()
        assert weir.metric("weir_sort_skipped_total", reason="field_missing") == 1000
    finally:
        assert weir.stop() == 0, weir.log()
    log = weir.log_path.read_text()
    assert log.count("sort key(s) ts missing from the flush") == 1, weir.log()


def test_iceberg_files_are_sorted_and_the_table_declares_the_sort_order(
    kafka, build_dir, tmp_path
):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("sorted_iceberg")
    create_topic(bootstrap, topic, 1)
    lake = IcebergLake(tmp_path / "lake")
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group"),
                      dict(SETTINGS, WEIR_SORT_BY="team,ts")).start()
    try:
        produce_flushes(bootstrap, topic, weir, lambda: lake.count("events"), 2)
        assert weir.metric("weir_sort_skipped_total") == 0
    finally:
        assert weir.stop() == 0, weir.log()
    table = lake.table("events")
    order = table.sort_order()
    schema = table.schema()
    assert order.order_id == 1
    assert [(schema.find_field(f.source_id).name, str(f.transform), f.direction.value,
             f.null_order.value) for f in order.fields] == [
        ("team", "identity", "asc", "nulls-last"), ("ts", "identity", "asc", "nulls-last")]
    tasks = list(table.scan().plan_files())
    assert tasks
    total, groups = 0, 0
    for task in tasks:
        path = task.file.file_path.removeprefix("file://")
        rows = read_file(path)
        total += len(rows)
        groups = max(groups, check_file_order(path, rows))
    assert total == N
    assert groups >= 2, "the statistics check needs a file of several row groups"
    # Readers see the same rows (order aside) as were produced.
    ids = table.scan(selected_fields=("id",)).to_arrow().column("id").to_pylist()
    assert sorted(ids) == list(range(N))
