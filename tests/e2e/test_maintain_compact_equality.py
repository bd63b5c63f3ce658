"""`weir maintain compact` on an Iceberg upsert table (issue 16): each upsert flush commits
equality delete files on the key columns; compaction applies them by value while rewriting
(the superseded rows are not written) and drops every equality delete file no remaining data
file needs, in the same `replace` snapshot. Before, pyiceberg refuses the table (it plans no
scan over equality deletes) while DuckDB and Spark read one row per key; after, pyiceberg,
DuckDB and Spark read the same rows, and upserts go on onto the compacted files.

A delete committed between a compaction's plan and its commit (a debug build's pause,
WEIR_TEST_COMPACT_PAUSE) is never lost: an Iceberg upsert flush's equality deletes, or a
DuckDB DELETE's delete files on DuckLake, apply to a file the run replaces without having been
applied, so the run is given up, its files deleted, and the next compaction applies them."""

from __future__ import annotations

import json
import subprocess
import time

import pytest

from tests.e2e.test_ingest_iceberg import IcebergLake
from tests.e2e.weir_run import Lake
from tests.e2e.test_maintain_compact import env_of, plain_duckdb, run_weir, spark_rows
from tests.e2e.test_maintain_compact_deletes import upsert_pass

KEYS = 2000
COLUMNS = "id, v, name"


def compact(build_dir, env, lake: IcebergLake) -> dict:
    """A compaction to 16 MiB files: every file of these tables is in the small tier (below
    2 MiB), the compacted one included."""
    run = run_weir(build_dir, env, lake.root, "maintain", "compact", "--json",
                   "--target-size", "16MiB")
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    return {t["table"]: t for t in json.loads(run.stdout)["tables"]}["main.events"]["compact"]


def delete_files(lake: IcebergLake) -> list[dict]:
    return [f for f in lake.table("events").inspect.files().to_pylist() if f["content"] != 0]


def duckdb_rows(lake: IcebergLake) -> dict:
    con = plain_duckdb()
    con.execute("LOAD iceberg")
    rows = con.execute(f"SELECT {COLUMNS} FROM iceberg_scan("
                       f"'{lake.table('events').metadata_location}')").fetchall()
    assert len(rows) == len({r[0] for r in rows}), "one row per key"
    return {r[0]: (r[1], r[2]) for r in rows}


def pyiceberg_rows(lake: IcebergLake) -> dict:
    rows = lake.table("events").scan(selected_fields=("id", "v", "name")).to_arrow().to_pylist()
    assert len(rows) == len({r["id"] for r in rows}), "one row per key"
    return {r["id"]: (r["v"], r["name"]) for r in rows}


def test_iceberg_upsert_table_is_compacted_to_one_row_per_key_without_equality_deletes(
        build_dir, tmp_path):
    lake = IcebergLake(tmp_path / "lake")
    lake.root.mkdir(parents=True)
    env = env_of(lake)
    env.update({"WEIR_UPSERT_KEY": "id", "WEIR_PARTITION_BY": "", "WEIR_SORT_BY": "id"})
    expected: dict = {}
    # Three passes, each a few dozen flushes: every later pass re-emits a third of the keys
    # with a new value, so an equality delete of each flush applies to the rows before it.
    written = upsert_pass(build_dir, env, lake, tmp_path, 0, range(KEYS), expected)
    for n in (1, 2):
        written += upsert_pass(build_dir, env, lake, tmp_path, n,
                               [i for i in range(KEYS) if i % 3 == n], expected)
    assert len(expected) == KEYS
    deletes_before = delete_files(lake)
    assert deletes_before and all(f["content"] == 2 for f in deletes_before)
    assert duckdb_rows(lake) == expected
    with pytest.raises(ValueError, match="does not yet support equality deletes"):
        pyiceberg_rows(lake)
    table = lake.table("events")
    before_location = table.metadata_location
    data_before = [f for f in table.inspect.files().to_pylist() if f["content"] == 0]
    assert sum(f["record_count"] for f in data_before) == written

    report = compact(build_dir, env, lake)
    assert report["files_not_rewritable"] == 0, report["notes"]
    assert report["runs_committed"] == report["runs_planned"] == 1
    assert report["files_replaced"] == len(data_before)
    # Every superseded row was left out by value; no position delete was involved.
    assert report["equality_deletes_applied"] == report["deletes_applied"] == written - KEYS
    assert report["deleted_rows"] == 0 and report["delete_files_dropped"] == 0
    assert report["rows"] == KEYS

    table = lake.table("events")
    summary = table.current_snapshot().summary
    assert summary.operation.value == "replace"
    extra = summary.additional_properties
    assert extra["removed-equality-delete-files"] == str(len(deletes_before))
    assert extra["total-delete-files"] == "0" and extra["total-equality-deletes"] == "0"
    assert delete_files(lake) == []
    assert pyiceberg_rows(lake) == expected
    assert duckdb_rows(lake) == expected
    spark = spark_rows(table.metadata_location, COLUMNS)
    assert len(spark) == KEYS and {r[0]: (r[1], r[2]) for r in spark} == expected
    # Time travel to before the compaction still reads the old files and their deletes.
    con = plain_duckdb()
    con.execute("LOAD iceberg")
    old = con.execute(f"SELECT {COLUMNS} FROM iceberg_scan('{before_location}')").fetchall()
    assert {r[0]: (r[1], r[2]) for r in old} == expected and len(old) == KEYS

    # Upserts go on onto the compacted file; a second compaction applies their deletes too.
    upsert_pass(build_dir, env, lake, tmp_path, 3, range(0, KEYS, 2), expected)
    assert delete_files(lake)
    assert duckdb_rows(lake) == expected
    again = compact(build_dir, env, lake)
    assert again["files_not_rewritable"] == 0, again["notes"]
    assert again["runs_committed"] == again["runs_planned"] == 1
    assert again["equality_deletes_applied"] == KEYS // 2
    assert delete_files(lake) == []
    assert pyiceberg_rows(lake) == expected
    assert duckdb_rows(lake) == expected


def stats(build_dir, env, lake) -> dict:
    run = run_weir(build_dir, env, lake.root, "maintain", "stats", "--json")
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    return {t["table"]: t for t in json.loads(run.stdout)["tables"]}["main.events"]


@pytest.mark.parametrize("fmt", ["iceberg", "ducklake"])
def test_a_delete_committed_between_the_plan_and_the_commit_gives_the_run_up(
        fmt, build_dir, tmp_path):
    lake = IcebergLake(tmp_path / "lake") if fmt == "iceberg" else Lake(tmp_path / "lake")
    lake.root.mkdir(parents=True)
    env = env_of(lake)
    env.update({"WEIR_UPSERT_KEY": "id", "WEIR_PARTITION_BY": "", "WEIR_SORT_BY": "id"})
    expected: dict = {}
    upsert_pass(build_dir, env, lake, tmp_path, 0, range(KEYS), expected)
    upsert_pass(build_dir, env, lake, tmp_path, 1, range(1, KEYS, 3), expected)

    marker = tmp_path / "paused"
    paused = dict(env, WEIR_TEST_COMPACT_PAUSE=str(marker))
    compaction = subprocess.Popen(
        [str(build_dir / "weir"), "maintain", "compact", "--json", "--target-size", "16MiB"],
        env=paused, cwd=lake.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 300
        while not marker.exists():
            assert compaction.poll() is None, compaction.communicate()
            assert time.monotonic() < deadline, "the compaction never reached its commit"
            time.sleep(0.05)
        # The run's files are written; now a delete lands on rows of its inputs.
        if fmt == "iceberg":
            upsert_pass(build_dir, env, lake, tmp_path, 2, range(2, KEYS, 3), expected)
        else:
            con = lake.connect(read_only=False)
            con.execute("CALL lake.set_option('data_inlining_row_limit', 0)")
            con.execute("DELETE FROM lake.events WHERE id % 7 = 0")
            con.close()
            expected = {k: v for k, v in expected.items() if k % 7 != 0}
        marker.unlink()
        out, err = compaction.communicate(timeout=300)
    finally:
        if compaction.poll() is None:
            compaction.kill()
            compaction.wait()
    assert compaction.returncode == 0, out[-4000:] + err[-4000:]
    report = {t["table"]: t for t in json.loads(out)["tables"]}["main.events"]["compact"]
    assert report["runs_planned"] == report["runs_given_up"] == 1, report
    assert report["runs_committed"] == 0
    reason = ("(equality deletes the rewrite did not apply)" if fmt == "iceberg"
              else "deletes apply to files to rewrite that the rewrite did not apply")
    assert any(reason in n for n in report["notes"]), report["notes"]

    def rows() -> dict:
        if fmt == "iceberg":
            return duckdb_rows(lake)
        con = lake.connect()
        got = con.execute(f"SELECT {COLUMNS} FROM lake.events").fetchall()
        con.close()
        assert len(got) == len({r[0] for r in got})
        return {r[0]: (r[1], r[2]) for r in got}

    assert rows() == expected
    # The given-up run's files are gone (no orphan), and the next compaction applies the delete.
    assert stats(build_dir, env, lake)["orphan_files"] == 0
    again = compact(build_dir, env, lake)
    assert again["runs_committed"] == again["runs_planned"] == 1, again
    assert again["files_not_rewritable"] == 0, again["notes"]
    assert rows() == expected
    if fmt == "iceberg":
        assert delete_files(lake) == []
        assert pyiceberg_rows(lake) == expected
