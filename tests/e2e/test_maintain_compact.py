"""`weir maintain compact` (issue 16): 1,000 small flushes into DuckLake (300 into Iceberg)
merged into files of a target size, per partition, in sort-key order, committed as one rewrite
snapshot per merge run. The row multiset is unchanged (count, distinct ids and a hash of every
column of every row), DuckDB, pyiceberg and Spark read the same, time travel to before the compaction
still reads the old files, the ledger is untouched (a restart resumes where it stood), and
DuckDB's own ducklake_merge_adjacent_files / ducklake_expire_snapshots work on a table weir
compacted, and weir's compaction and fsck on one DuckDB compacted. Data files a DuckDB DELETE
inlined deletes for are not rewritten (their deletes still apply; delete files are applied:
test_maintain_compact_deletes.py). Compaction racing a running ingest
that is SIGKILLed in a loop loses and duplicates nothing."""

from __future__ import annotations

import json
import os
import random
import subprocess
import time
from pathlib import Path

import duckdb
import pytest

from tests.e2e.test_ingest_iceberg import IcebergLake
from tests.e2e.weir_run import EXTENSIONS, Lake, WeirIngest, create_topic, produce_slowly, \
    unique, wait_for

FLUSH_ROWS = 40  # WEIR_KAFKA_CONSUME_BATCH_SIZE: one flush per 40 lines
FLUSHES = 1000
ROWS = FLUSHES * FLUSH_ROWS
# Iceberg: 1,000 SQL-catalog commits of a debug build on a loaded 2-core machine outlast the
# test timeout (every commit writes the whole metadata JSON again), so its test takes 300.
ICEBERG_FLUSHES = 300
COLUMNS = "id, grp, v, name, score, ok"
TARGET = 8 * 1024


def line(i: int) -> str:
    return json.dumps({"id": i, "grp": i % 2, "v": i * 2, "name": f"user-{i % 977}",
                       "score": i + 0.5, "ok": i % 3 == 0})


def write_source(path: Path, start: int, count: int) -> Path:
    path.write_text("".join(line(i) + "\n" for i in range(start, start + count)))
    return path


def env_of(lake) -> dict:
    env = dict(os.environ)
    env.update(lake.env())
    # A flush every ~2 KiB of buffered records: a few hundred small commits.
    # maintain reads the ingest configuration, which names a broker it never contacts.
    env.update({"WEIR_TOPIC": "backfill", "WEIR_TABLE": "events", "WEIR_LOG_LEVEL": "warn",
                "WEIR_HTTP_PORT": "0",  # no /metrics: tests and other runs share the machine
                "WEIR_KAFKA_BOOTSTRAP_SERVERS": "127.0.0.1:1",
                "WEIR_FLUSH_MAX_BYTES": "2KiB", "WEIR_FLUSH_INTERVAL": "60s",
                "WEIR_KAFKA_CONSUME_BATCH_SIZE": str(FLUSH_ROWS), "WEIR_PARTITION_BY": "grp",
                "WEIR_SORT_BY": "id"})
    return env


def run_weir(build_dir: Path, env: dict, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    run = subprocess.run([str(build_dir / "weir"), *args], env=env, cwd=cwd,
                         capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=900)
    return run


def ingest(build_dir: Path, env: dict, cwd: Path, source: Path) -> None:
    run = run_weir(build_dir, env, cwd, "ingest", "--from", str(source))
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]


def compact(build_dir: Path, env: dict, cwd: Path, *args: str) -> dict:
    run = run_weir(build_dir, env, cwd, "maintain", "compact", "--json",
                   "--target-size", f"{TARGET}B", *args)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    return {t["table"]: t for t in json.loads(run.stdout)["tables"]}["main.events"]


def fingerprint(con: duckdb.DuckDBPyConnection, relation: str,
                columns: str = COLUMNS + ", _inserted_at") -> tuple:
    """Count, distinct ids, id sum and a hash sum over every column of every row
    (bench/compaction_bench.py --verify passes its own columns)."""
    return con.execute(
        f"SELECT count(*), count(DISTINCT id), sum(id), "
        f"sum(hash({columns})::HUGEINT) FROM {relation}"
    ).fetchone()


def big_share(sizes: list[int], target: int = TARGET) -> float:
    """The share of bytes in files of at least target / 2."""
    return sum(s for s in sizes if s >= target // 2) / sum(sizes)


def check_sorted(con, relation_of_file, files: list[str]) -> None:
    """Every file holds its ids ascending (the dataset's sort key)."""
    for f in files:
        ids = [r[0] for r in con.execute(
            f"SELECT id FROM read_parquet('{f}') ").fetchall()]
        assert ids == sorted(ids), f


def plain_duckdb() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(config={"extension_directory": str(EXTENSIONS),
                                 "autoinstall_known_extensions": False,
                                 "autoload_known_extensions": False})
    con.execute("SET TimeZone = 'UTC'")
    return con


def test_ducklake_compaction_merges_hundreds_of_flushes_keeping_every_row(build_dir, tmp_path):
    lake = Lake(tmp_path / "lake")
    lake.root.mkdir(parents=True)
    env = env_of(lake)
    ingest(build_dir, env, lake.root, write_source(tmp_path / "a.jsonl", 0, ROWS))

    con = lake.connect()
    before = fingerprint(con, "lake.events")
    assert before[:3] == (ROWS, ROWS, ROWS * (ROWS - 1) // 2)
    files_before = con.execute(
        "SELECT data_file, data_file_size_bytes FROM ducklake_list_files('lake', 'events')"
    ).fetchall()
    snapshot_before = con.execute(
        "SELECT max(snapshot_id) FROM ducklake_snapshots('lake')").fetchone()[0]
    aggregate = ("SELECT grp, count(*), sum(v), min(id), max(id) FROM lake.events "
                 "WHERE id BETWEEN 1000 AND 20000 GROUP BY grp ORDER BY grp")
    aggregate_before = con.execute(aggregate).fetchall()
    events_id = con.execute("SELECT table_id FROM __ducklake_metadata_lake.ducklake_table "
                            "WHERE table_name = 'events' AND end_snapshot IS NULL").fetchone()[0]
    commits = con.execute("SELECT count(*) FROM ducklake_snapshots('lake') WHERE "
                          "list_contains(changes['tables_inserted_into'], ?)",
                          [str(events_id)]).fetchone()[0]
    con.close()
    assert commits == FLUSHES
    assert len(files_before) == 2 * FLUSHES  # partitioned by grp: a file per value per flush
    assert big_share([s for _, s in files_before]) < 0.05

    dry = compact(build_dir, env, lake.root, "--dry-run")["compact"]
    assert dry["dry_run"] and dry["runs_committed"] == 0
    assert dry["files_in"] == len(files_before)

    report = compact(build_dir, env, lake.root)["compact"]
    assert report["runs_committed"] == report["runs_planned"] >= 2  # one per partition at least
    assert report["runs_given_up"] == 0 and report["sorted"]
    assert report["files_in"] == len(files_before) and report["rows"] == ROWS

    con = lake.connect()
    files_after = con.execute(
        "SELECT data_file, data_file_size_bytes FROM ducklake_list_files('lake', 'events')"
    ).fetchall()
    assert len(files_after) == report["files_out"] < len(files_before) // 10
    assert big_share([s for _, s in files_after]) >= 0.95, files_after
    assert fingerprint(con, "lake.events") == before
    assert con.execute(aggregate).fetchall() == aggregate_before
    # Time travel to before the rewrite still reads the old files, and the same rows.
    assert fingerprint(con, f"lake.events AT (VERSION => {snapshot_before})") == before
    # Each output file holds one partition, ids ascending.
    for path, _ in files_after:
        rows = con.execute(f"SELECT id, grp FROM read_parquet('{path}')").fetchall()
        assert [r[0] for r in rows] == sorted(r[0] for r in rows), path
        assert len({r[1] for r in rows}) == 1, path
    table_id = con.execute("SELECT table_id FROM __ducklake_metadata_lake.ducklake_table "
                           "WHERE table_name = 'events' AND end_snapshot IS NULL").fetchone()[0]
    # One snapshot per run, recorded as DuckDB records its own compaction.
    changes = con.execute("SELECT changes FROM ducklake_snapshots('lake') "
                          "WHERE snapshot_id > ? ORDER BY snapshot_id", [snapshot_before]).fetchall()
    assert [c[0] for c in changes] == [{"merge_adjacent": [str(table_id)]}] * len(changes)
    assert len(changes) == report["runs_committed"]
    con.close()

    # Nothing left to merge: a second run plans nothing.
    again = compact(build_dir, env, lake.root)["compact"]
    assert again["runs_planned"] == 0

    # The ledger is untouched: ingesting the same file again adds nothing, a new one lands.
    ingest(build_dir, env, lake.root, tmp_path / "a.jsonl")
    assert lake.count("events") == ROWS

    # DuckDB's own maintenance on the weir-compacted table, then weir's on DuckDB's result.
    ingest(build_dir, env, lake.root, write_source(tmp_path / "b.jsonl", ROWS, 4000))
    con = lake.connect(read_only=False)
    expected = fingerprint(con, "lake.events")
    assert expected[:2] == (ROWS + 4000, ROWS + 4000)
    con.execute("CALL ducklake_merge_adjacent_files('lake')")
    con.execute("CALL ducklake_expire_snapshots('lake', older_than => now())")
    assert fingerprint(con, "lake.events") == expected
    con.close()
    ingest(build_dir, env, lake.root, write_source(tmp_path / "c.jsonl", ROWS + 4000, 4000))
    after_duckdb = compact(build_dir, env, lake.root)["compact"]
    assert after_duckdb["runs_committed"] == after_duckdb["runs_planned"] >= 1
    con = lake.connect()
    final = fingerprint(con, "lake.events")
    assert final[:3] == (ROWS + 8000, ROWS + 8000, (ROWS + 8000) * (ROWS + 7999) // 2)
    con.close()
    # fsck finds every live file as the catalog records it, after both kinds of compaction.
    fsck = run_weir(build_dir, env, lake.root, "maintain", "fsck", "--json")
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr
    assert {t["table"]: t["fsck"] for t in json.loads(fsck.stdout)["tables"]}["main.events"] == []


def files_with_deletes(con) -> list[int]:
    """Live data files of lake.events that deletes apply to: a delete file, or deletes DuckDB
    inlined into the catalog (`ducklake_inlined_delete_<table id>`, its default for a few
    rows)."""
    meta = "__ducklake_metadata_lake"
    table_id = con.execute(f"SELECT table_id FROM {meta}.ducklake_table WHERE table_name = "
                           "'events' AND end_snapshot IS NULL").fetchone()[0]
    ids = {r[0] for r in con.execute(f"SELECT data_file_id FROM {meta}.ducklake_delete_file "
                                     "WHERE end_snapshot IS NULL").fetchall()}
    try:
        ids |= {r[0] for r in con.execute(
            f"SELECT DISTINCT file_id FROM {meta}.ducklake_inlined_delete_{table_id}").fetchall()}
    except duckdb.CatalogException:
        pass
    live = {r[0] for r in con.execute(f"SELECT data_file_id FROM {meta}.ducklake_data_file "
                                      "WHERE end_snapshot IS NULL AND table_id = ?",
                                      [table_id]).fetchall()}
    return sorted(ids & live)


def test_ducklake_files_a_duckdb_delete_applies_to_are_left_out_and_say_so(build_dir, tmp_path):
    """Compaction does not apply deletes inlined into the catalog: a data file DuckDB's DELETE
    applies to that way (DuckDB's default for a few rows) is not rewritten, so its rows
    stay deleted; the report counts it, every other file is merged."""
    lake = Lake(tmp_path / "lake")
    lake.root.mkdir(parents=True)
    env = env_of(lake)
    rows = 200 * FLUSH_ROWS
    ingest(build_dir, env, lake.root, write_source(tmp_path / "a.jsonl", 0, rows))
    con = lake.connect(read_only=False)
    con.execute("DELETE FROM lake.events WHERE id % 100 = 0")
    expected = fingerprint(con, "lake.events")
    live = con.execute("SELECT count(*) FROM ducklake_list_files('lake', 'events')").fetchone()[0]
    deleted_from = files_with_deletes(con)
    con.close()
    assert expected[:2] == (rows - rows // 100, rows - rows // 100)
    assert len(deleted_from) == rows // 100  # one id in 100 is deleted: one per 40-row flush

    report = compact(build_dir, env, lake.root)["compact"]
    assert report["files_not_rewritable"] == len(deleted_from)
    assert report["files_in"] == report["files_replaced"] == live - len(deleted_from)
    assert report["runs_committed"] == report["runs_planned"] == 2
    assert any("deletes apply" in note for note in report["notes"]), report["notes"]
    con = lake.connect()
    assert fingerprint(con, "lake.events") == expected
    assert files_with_deletes(con) == deleted_from
    after = con.execute("SELECT count(*) FROM ducklake_list_files('lake', 'events')").fetchone()[0]
    con.close()
    assert after == len(deleted_from) + report["files_out"]


def test_iceberg_compaction_commits_a_replace_snapshot_keeping_every_row(build_dir, tmp_path):
    flushes = ICEBERG_FLUSHES
    rows = flushes * FLUSH_ROWS
    lake = IcebergLake(tmp_path / "lake")
    lake.root.mkdir(parents=True)
    env = env_of(lake)
    ingest(build_dir, env, lake.root, write_source(tmp_path / "a.jsonl", 0, rows))

    table = lake.table("events")
    files_before = table.inspect.files().to_pylist()
    assert len(files_before) == 2 * flushes
    assert sum("weir.commit-id" in s.summary.additional_properties
               for s in table.snapshots()) == flushes
    ledger_before = {k: v for k, v in table.current_snapshot().summary.additional_properties.items()
                     if k.startswith("weir.")}
    before_id = table.current_snapshot().snapshot_id
    con = plain_duckdb()
    con.execute("LOAD iceberg")
    con.register("before", table.scan().to_arrow())
    before = fingerprint(con, "before")
    assert before[:3] == (rows, rows, rows * (rows - 1) // 2)

    report = compact(build_dir, env, lake.root)["compact"]
    assert report["runs_committed"] == report["runs_planned"] >= 2
    assert report["runs_given_up"] == 0 and report["sorted"]

    table = lake.table("events")
    snapshots = table.snapshots()
    position = [s.snapshot_id for s in snapshots].index(before_id)
    rewrites = snapshots[position + 1:]
    # One replace snapshot per run, none carrying weir's ledger keys.
    assert len(rewrites) == report["runs_committed"]
    assert {s.summary.operation.value for s in rewrites} == {"replace"}
    props = [s.summary.additional_properties for s in rewrites]
    assert sum(int(p["deleted-data-files"]) for p in props) == len(files_before)
    assert sum(int(p["deleted-records"]) for p in props) == rows
    assert sum(int(p["added-records"]) for p in props) == rows
    assert all(int(p["total-records"]) == rows for p in props)
    assert not any(k.startswith("weir.") and k != "weir.message" and k != "weir.rewrite"
                   for p in props for k in p)
    files_after = table.inspect.files().to_pylist()
    assert len(files_after) == report["files_out"] < len(files_before) // 10
    assert big_share([f["file_size_in_bytes"] for f in files_after]) >= 0.95
    con.register("after", table.scan().to_arrow())
    assert fingerprint(con, "after") == before
    # DuckDB's iceberg reader over the new metadata reads the same rows.
    con.execute(f"CREATE VIEW duck AS SELECT * FROM iceberg_scan('{table.metadata_location}')")
    assert fingerprint(con, "duck") == before
    # Time travel to the last append still reads the old files.
    con.register("old", table.scan(snapshot_id=before_id).to_arrow())
    assert fingerprint(con, "old") == before
    for f in files_after:
        path = f["file_path"].removeprefix("file://")
        ids = [r[0] for r in con.execute(f"SELECT id FROM read_parquet('{path}')").fetchall()]
        assert ids == sorted(ids), path
    # Every row, every column, as DuckDB's iceberg reader sees it; Spark must see the same.
    expected = sorted(con.execute(
        f"SELECT {COLUMNS}, epoch_us(_inserted_at) FROM duck").fetchall())
    con.close()
    assert len(expected) == rows
    assert spark_rows(table.metadata_location) == expected

    # The ledger still stands behind the replace snapshot: the same file again adds nothing.
    ingest(build_dir, env, lake.root, tmp_path / "a.jsonl")
    assert lake.count("events") == rows
    ingest(build_dir, env, lake.root, write_source(tmp_path / "b.jsonl", rows, 2000))
    assert lake.count("events") == rows + 2000
    table = lake.table("events")
    newest_weir = [s for s in table.snapshots()
                   if "weir.commit-id" in s.summary.additional_properties][-1]
    assert newest_weir.snapshot_id == table.current_snapshot().snapshot_id
    assert ledger_before  # the append carried weir's ledger keys


def spark_rows(metadata_location: str, columns: str = COLUMNS) -> list[tuple]:
    """Every row of the Iceberg table at `metadata_location` as Spark reads it (Iceberg's
    Spark runtime loading the metadata file directly: no catalog), sorted: `columns`, then
    _inserted_at in microseconds."""
    from tests.harness.spark import spark_session

    # The session's REST catalog is never touched: the table is read by its metadata path.
    with spark_session("http://127.0.0.1:9", "unused") as spark:
        frame = spark.read.format("iceberg").load(metadata_location)
        frame.createOrReplaceTempView("t")
        got = spark.sql(f"SELECT {columns}, unix_micros(_inserted_at) FROM t").collect()
    return sorted(tuple(r) for r in got)


def rows_of(lake) -> tuple:
    """count, distinct ids and the id sum, read by DuckDB (DuckLake) or pyiceberg (Iceberg)."""
    if isinstance(lake, Lake):
        return lake.connect().execute(
            "SELECT count(*), count(DISTINCT id), sum(id) FROM lake.events").fetchone()
    con = plain_duckdb()
    con.register("t", lake.table("events").scan().to_arrow())
    return con.execute("SELECT count(*), count(DISTINCT id), sum(id) FROM t").fetchone()


@pytest.mark.parametrize("fmt", ["ducklake", "iceberg"])
def test_compaction_while_ingest_runs_and_is_killed_loses_and_duplicates_nothing(
        kafka, build_dir, tmp_path, fmt):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("compact_kills")
    total = 20_000
    create_topic(bootstrap, topic, 2)
    lake = Lake(tmp_path / "lake") if fmt == "ducklake" else IcebergLake(tmp_path / "lake")
    # Static assignment: a restarted ingest owns its partitions at once (a group would first
    # wait out the killed member's session), so every round commits while compaction runs.
    settings = {"WEIR_FLUSH_MAX_BYTES": "64KiB", "WEIR_SORT_BY": "id",
                "WEIR_KAFKA_ASSIGNMENT": "static", "WEIR_KAFKA_REPLICA_COUNT": "1",
                "WEIR_KAFKA_ORDINAL": "0"}
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group"), settings)
    env = dict(weir.env)
    producer = produce_slowly(bootstrap, topic, total, 30)
    rng = random.Random(20261201)
    committed_runs = 0
    reports = []
    try:
        for _ in range(6):
            before = lake.count("events")
            weir.start()
            # Each round's ingest commits before compaction starts (a fixed sleep was not enough
            # on a loaded machine: every round found the table still empty).
            wait_for(lambda: lake.count("events") > before or lake.count("events") >= total
                     or not weir.alive(), 180, "a commit of this round")
            time.sleep(rng.uniform(1.0, 3.0))
            # Compaction races the running ingest's commits; then ingest dies mid-flush.
            if lake.count("events") > 0:
                run = run_weir(build_dir, env, lake.root, "maintain", "compact", "--json",
                               "--target-size", "8MiB")
                assert run.returncode == 0, run.stderr[-4000:]
                report = json.loads(run.stdout)["tables"][0]["compact"]
                assert report["runs_committed"] + report["runs_given_up"] == \
                    report["runs_planned"]
                committed_runs += report["runs_committed"]
                reports.append(report)
            weir.kill()
        producer.join(timeout=120)
        assert not producer.is_alive()
        weir.start()
        wait_for(lambda: lake.count("events") >= total or not weir.alive(), 240,
                 "every event committed")
    finally:
        code = weir.stop()
    assert code == 0, weir.log()
    assert committed_runs >= 1, reports
    assert rows_of(lake) == (total, total, total * (total - 1) // 2)
    final = run_weir(build_dir, env, lake.root, "maintain", "compact", "--json",
                     "--target-size", "1MiB")
    assert final.returncode == 0, final.stderr[-4000:]
    assert rows_of(lake) == (total, total, total * (total - 1) // 2)
