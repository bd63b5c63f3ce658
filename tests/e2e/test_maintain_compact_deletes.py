"""`weir maintain compact` applies position delete files while rewriting (issue 16): an upsert
dataset's delete files (DuckLake) and a DuckDB DELETE's delete files are applied (the deleted
rows are not written, the delete files end with their data files in the rewrite snapshot), so
the table is compacted to one row per key with exact values; Spark's merge-on-read DELETE on
an Iceberg table weir wrote leaves position delete files that compaction applies and drops,
and Spark, pyiceberg and DuckDB then read the same rows."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.test_ingest_iceberg import IcebergLake
from tests.e2e.test_maintain_compact import FLUSH_ROWS, compact, env_of, ingest, plain_duckdb
from tests.e2e.weir_run import Lake

META = "__ducklake_metadata_lake"


def upsert_pass(build_dir, env, lake, tmp_path, n: int, keys, expected: dict) -> int:
    """Ingests one pass over `keys` (id, v = id * 10 + n, name) from a file; `expected` takes
    the new values. Returns the lines written."""
    lines = []
    for i in keys:
        v = i * 10 + n
        expected[i] = (v, f"n{n}-{i}")
        lines.append(json.dumps({"id": i, "v": v, "name": f"n{n}-{i}"}))
    src = tmp_path / f"p{n}.jsonl"
    src.write_text("\n".join(lines) + "\n")
    ingest(build_dir, env, lake.root, src)
    return len(lines)


def live_delete_files(con) -> int:
    return con.execute(f"SELECT count(*) FROM {META}.ducklake_delete_file "
                       "WHERE end_snapshot IS NULL").fetchone()[0]


def test_ducklake_upsert_table_is_compacted_to_one_row_per_key(build_dir, tmp_path):
    lake = Lake(tmp_path / "lake")
    lake.root.mkdir(parents=True)
    env = env_of(lake)
    env.update({"WEIR_UPSERT_KEY": "id", "WEIR_PARTITION_BY": "", "WEIR_SORT_BY": "id"})
    keys = 2000
    expected: dict = {}
    # Three passes over the keys, each a few dozen flushes: every later pass re-emits a third
    # of the keys with a new value (the upsert deletes the older row by a delete file).
    upsert_pass(build_dir, env, lake, tmp_path, 0, range(keys), expected)
    for n in (1, 2):
        upsert_pass(build_dir, env, lake, tmp_path, n, [i for i in range(keys) if i % 3 == n],
                    expected)
    con = lake.connect()
    rows = con.execute("SELECT id, v, name FROM lake.events").fetchall()
    deletes_before = live_delete_files(con)
    files_before = con.execute(
        "SELECT count(*) FROM ducklake_list_files('lake', 'events')").fetchone()[0]
    con.close()
    assert {r[0]: (r[1], r[2]) for r in rows} == expected and len(rows) == keys
    assert deletes_before > 0

    report = compact(build_dir, env, lake.root)["compact"]
    assert report["runs_committed"] == report["runs_planned"] >= 1
    assert report["files_not_rewritable"] == 0, report["notes"]
    assert report["delete_files_dropped"] == deletes_before
    con = lake.connect()
    rows = con.execute("SELECT id, v, name FROM lake.events").fetchall()
    assert len(rows) == keys and {r[0]: (r[1], r[2]) for r in rows} == expected
    assert report["deletes_applied"] == report["deleted_rows"] > 0
    assert report["rows"] == keys
    assert live_delete_files(con) == 0
    files_after = con.execute(
        "SELECT data_file, delete_file FROM ducklake_list_files('lake', 'events')").fetchall()
    assert len(files_after) == report["files_out"] < files_before
    assert all(d is None for _, d in files_after)
    # Every output file holds each key once, ids ascending.
    for path, _ in files_after:
        ids = [r[0] for r in con.execute(f"SELECT id FROM read_parquet('{path}')").fetchall()]
        assert ids == sorted(set(ids)), path
    con.close()

    # Upserts go on after the compaction, onto the compacted files' rows.
    src = tmp_path / "p3.jsonl"
    src.write_text("".join(json.dumps({"id": i, "v": -i, "name": "late"}) + "\n"
                           for i in range(0, keys, 2)))
    ingest(build_dir, env, lake.root, src)
    for i in range(0, keys, 2):
        expected[i] = (-i, "late")
    con = lake.connect()
    rows = con.execute("SELECT id, v, name FROM lake.events").fetchall()
    deletes_before = live_delete_files(con)
    con.close()
    assert len(rows) == keys and {r[0]: (r[1], r[2]) for r in rows} == expected
    # Only the small tier is merged again: the delete files of the larger compacted files stay
    # (their deletes still apply); those of the merged files leave with them.
    again = compact(build_dir, env, lake.root)["compact"]
    assert again["files_not_rewritable"] == 0
    con = lake.connect()
    rows = con.execute("SELECT id, v, name FROM lake.events").fetchall()
    assert live_delete_files(con) == deletes_before - again["delete_files_dropped"]
    con.close()
    assert len(rows) == keys and {r[0]: (r[1], r[2]) for r in rows} == expected


def test_ducklake_duckdb_delete_files_are_applied_and_inlined_ones_left(build_dir, tmp_path):
    lake = Lake(tmp_path / "lake")
    lake.root.mkdir(parents=True)
    env = env_of(lake)
    rows = 200 * FLUSH_ROWS
    src = tmp_path / "a.jsonl"
    src.write_text("".join(json.dumps({"id": i, "grp": i % 2, "v": i * 2, "name": f"u{i}",
                                       "score": i + 0.5, "ok": i % 3 == 0}) + "\n"
                           for i in range(rows)))
    ingest(build_dir, env, lake.root, src)
    con = lake.connect(read_only=False)
    # Delete files (inlining off for this DELETE), then a few inlined deletes.
    con.execute("CALL lake.set_option('data_inlining_row_limit', 0)")
    con.execute("DELETE FROM lake.events WHERE id % 7 = 0")
    assert live_delete_files(con) > 0
    con.execute("CALL lake.set_option('data_inlining_row_limit', 1000)")
    con.execute("DELETE FROM lake.events WHERE id IN (1, 2)")
    expected = sorted(con.execute("SELECT id, grp, v, name, score, ok FROM lake.events").fetchall())
    con.close()
    report = compact(build_dir, env, lake.root)["compact"]
    assert report["runs_committed"] == report["runs_planned"] >= 2
    assert report["deletes_applied"] == report["deleted_rows"] > 0
    con = lake.connect()
    got = sorted(con.execute("SELECT id, grp, v, name, score, ok FROM lake.events").fetchall())
    con.close()
    assert got == expected and len(got) == rows - (rows // 7 + 1) - 2
    if report["files_not_rewritable"]:
        assert any("inlined" in n for n in report["notes"]), report["notes"]


def test_iceberg_spark_merge_on_read_deletes_are_applied_by_compaction(
        iceberg_rest, build_dir, tmp_path):
    import pyarrow.parquet as pq

    from tests.e2e.test_maintain_compact import COLUMNS, TARGET, run_weir, spark_rows, \
        write_source
    from tests.e2e.weir_run import unique
    from tests.harness.spark import spark_session

    uri = iceberg_rest["WEIR_TEST_ICEBERG_REST_URI"]
    namespace = unique("ns")
    lake = IcebergLake(tmp_path / "lake", rest_uri=uri, namespace=namespace)
    lake.root.mkdir(parents=True)
    lake.catalog().create_namespace(namespace)
    env = env_of(lake)
    rows = 60 * FLUSH_ROWS
    ingest(build_dir, env, lake.root, write_source(tmp_path / "a.jsonl", 0, rows))

    with spark_session(uri, iceberg_rest["WEIR_TEST_ICEBERG_REST_WAREHOUSE"]) as spark:
        name = f"rest.{namespace}.events"
        spark.sql(f"ALTER TABLE {name} SET TBLPROPERTIES ('write.delete.mode'='merge-on-read', "
                  "'write.delete.granularity'='file')")
        spark.sql(f"DELETE FROM {name} WHERE id % 7 = 0")
    table = lake.table("events")
    files = table.inspect.files().to_pylist()
    deletes = [f for f in files if f["content"] == 1]
    assert deletes, "Spark wrote position delete files"
    expected = sorted((i, i % 2, i * 2, f"user-{i % 977}", i + 0.5, i % 3 == 0)
                      for i in range(rows) if i % 7 != 0)

    run = run_weir(build_dir, env, lake.root, "maintain", "compact", "--json",
                   "--target-size", f"{TARGET}B")
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    report = {t["table"]: t for t in json.loads(run.stdout)["tables"]}[
        f"{namespace}.events"]["compact"]
    assert report["files_not_rewritable"] == 0, report["notes"]
    assert report["runs_committed"] == report["runs_planned"] >= 2
    assert report["delete_files_dropped"] == len(deletes)
    assert report["deletes_applied"] == rows // 7 + 1
    assert report["rows"] == len(expected)

    table = lake.table("events")
    files = table.inspect.files().to_pylist()
    live_data = {f["file_path"] for f in files if f["content"] == 0}
    # No delete file left that names a replaced data file.
    for f in files:
        if f["content"] == 0:
            continue
        named = set(pq.read_table(f["file_path"].removeprefix("file://"),
                                  columns=["file_path"]).column(0).to_pylist())
        assert named <= live_data, named - live_data
    assert [f for f in files if f["content"] != 0] == []
    con = plain_duckdb()
    con.execute("LOAD iceberg")
    con.register("py", table.scan().to_arrow())
    cols = "id, grp, v, name, score, ok"
    assert sorted(con.execute(f"SELECT {cols} FROM py").fetchall()) == expected
    duck = sorted(con.execute(
        f"SELECT {cols} FROM iceberg_scan('{table.metadata_location}')").fetchall())
    assert duck == expected
    assert [r[:6] for r in spark_rows(table.metadata_location)] == expected
    assert COLUMNS.startswith(cols)
