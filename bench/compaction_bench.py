"""`weir maintain compact` benchmark (issue 16): N small flushes into DuckLake and into Iceberg,
then a typical aggregation (count, sum, group by a low-cardinality column, a filter on the sort
key) timed before and after compaction with DuckDB, and the compaction's throughput (input MB/s)
and peak RSS (the child's ru_maxrss from wait4).

    .deps/venv/bin/python bench/compaction_bench.py --build-dir build/debug --flushes 1000 --runs 3

Each run builds its tables afresh; the figures printed are the medians of the runs, with every
run's value beside them.

The flushes come from the file source (`weir ingest --from`), one commit per consume batch of
`--rows-per-flush` lines (flush.max_bytes at its minimum), partitioned by `grp` (2 values) and
sorted by `id`, so each flush writes 2 files. No broker needed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parents[1]
EXTENSIONS = ROOT / ".deps" / "duckdb" / "extensions"

QUERY = ("SELECT grp, count(*), sum(v), avg(score) FROM {rel} WHERE id BETWEEN {lo} AND {hi} "
         "GROUP BY grp ORDER BY grp")


def line(i: int) -> str:
    return json.dumps({"id": i, "grp": i % 2, "v": i * 2, "name": f"user-{i % 977}",
                       "score": i + 0.5, "ok": i % 3 == 0, "region": ["eu", "us", "ap"][i % 3]})


def env_for(fmt: str, root: Path, rows_per_flush: int) -> dict:
    env = dict(os.environ)
    env.update({"WEIR_TOPIC": "bench", "WEIR_TABLE": "events", "WEIR_LOG_LEVEL": "warn",
                "WEIR_HTTP_PORT": "0",
                "WEIR_KAFKA_BOOTSTRAP_SERVERS": "127.0.0.1:1",
                "WEIR_FLUSH_MAX_BYTES": "1KiB", "WEIR_FLUSH_INTERVAL": "60s",
                "WEIR_KAFKA_CONSUME_BATCH_SIZE": str(rows_per_flush),
                "WEIR_PARTITION_BY": "grp", "WEIR_SORT_BY": "id"})
    if fmt == "iceberg":
        env.update({"WEIR_LAKE_FORMAT": "iceberg", "WEIR_SCHEMA": "main"})
    else:
        env.update({"WEIR_CATALOG_KIND": "sqlite",
                    "WEIR_CATALOG_SQLITE_PATH": str(root / "catalog.sqlite"),
                    "WEIR_STORAGE_DATA_PATH": str(root / "data") + "/"})
    return env


def duck() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(config={"extension_directory": str(EXTENSIONS),
                                 "autoinstall_known_extensions": False,
                                 "autoload_known_extensions": False})
    con.execute("SET TimeZone = 'UTC'")
    return con


def relation(fmt: str, root: Path, con) -> str:
    if fmt == "ducklake":
        con.execute("LOAD ducklake")
        con.execute("LOAD sqlite_scanner")
        con.execute(f"ATTACH 'ducklake:sqlite:{root / 'catalog.sqlite'}' AS lake (READ_ONLY)")
        return "lake.events"
    from pyiceberg.catalog.sql import SqlCatalog
    lake = root / "weir-lake"
    table = SqlCatalog("weir", uri=f"sqlite:///{lake / 'catalog.db'}",
                       warehouse=(lake / "warehouse").as_uri()).load_table(("main", "events"))
    con.execute("LOAD iceberg")
    return f"iceberg_scan('{table.metadata_location}')"


def time_query(fmt: str, root: Path, rows: int, repeats: int) -> tuple[float, list]:
    con = duck()
    rel = relation(fmt, root, con)
    sql = QUERY.format(rel=rel, lo=rows // 10, hi=rows // 2)
    result = con.execute(sql).fetchall()  # warm-up (footers, metadata)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        con.execute(sql).fetchall()
        times.append(time.perf_counter() - start)
    con.close()
    return statistics.median(times), result


def run_measured(args: list[str], env: dict, cwd: Path) -> tuple[int, str, int, float]:
    """Runs a child; returns (exit code, stdout, peak RSS in KiB, wall seconds)."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        child = subprocess.Popen(args, env=env, cwd=cwd, stdout=out, stderr=err,
                                 stdin=subprocess.DEVNULL)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            sys.stderr.write(err.read().decode()[-4000:])
        return code, out.read().decode(), usage.ru_maxrss, wall


def events_table(stats: dict) -> dict:
    return {t["table"]: t for t in stats["tables"]}["main.events"]


def bench(fmt: str, weir: Path, flushes: int, rows_per_flush: int, target: str,
          repeats: int, ingest_weir: Path | None = None) -> dict:
    root = Path(tempfile.mkdtemp(prefix=f"compact-bench-{fmt}-"))
    rows = flushes * rows_per_flush
    source = root / "events.jsonl"
    source.write_text("".join(line(i) + "\n" for i in range(rows)))
    env = env_for(fmt, root, rows_per_flush)
    start = time.perf_counter()
    code, _, _, _ = run_measured([str(ingest_weir or weir), "ingest", "--from", str(source)],
                                 env, root)
    assert code == 0, "ingest failed"
    ingest_s = time.perf_counter() - start
    before_s, before = time_query(fmt, root, rows, repeats)
    stats = json.loads(run_measured([str(weir), "maintain", "stats", "--json"], env, root)[1])
    files_before = events_table(stats)["data_files"]
    code, out, rss_kib, wall = run_measured(
        [str(weir), "maintain", "compact", "--json", "--target-size", target], env, root)
    assert code == 0, "compaction failed"
    report = events_table(json.loads(out))["compact"]
    assert report["runs_given_up"] == 0 and report["runs_committed"] == report["runs_planned"]
    after_s, after = time_query(fmt, root, rows, repeats)
    assert after == before, (before, after)
    stats = json.loads(run_measured([str(weir), "maintain", "stats", "--json"], env, root)[1])
    return {"format": fmt, "flushes": flushes, "rows": rows, "ingest_s": ingest_s,
            "files_before": files_before, "files_after": events_table(stats)["data_files"],
            "bytes_in": report["bytes_in"], "bytes_out": report["bytes_out"],
            "compact_s": report["seconds"], "compact_wall_s": wall,
            "mb_per_s": report["bytes_in"] / 1e6 / report["seconds"],
            "peak_rss_mib": rss_kib / 1024, "query_before_ms": before_s * 1000,
            "query_after_ms": after_s * 1000, "root": str(root)}


FIELDS = ("ingest_s", "files_before", "files_after", "bytes_in", "bytes_out", "compact_s",
          "mb_per_s", "peak_rss_mib", "query_before_ms", "query_after_ms")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--build-dir", default=str(ROOT / "build" / "debug"))
    parser.add_argument("--ingest-build-dir", default="",
                        help="the weir that makes the flushes (default: --build-dir's)")
    parser.add_argument("--flushes", type=int, default=1000)
    parser.add_argument("--rows-per-flush", type=int, default=100)
    parser.add_argument("--target-size", default="4MiB")
    parser.add_argument("--repeats", type=int, default=7, help="query timings per table")
    parser.add_argument("--runs", type=int, default=3, help="fresh tables per format")
    parser.add_argument("--formats", default="ducklake,iceberg")
    parser.add_argument("--keep", action="store_true", help="keep the lakes' directories")
    args = parser.parse_args()
    weir = Path(args.build_dir) / "weir"
    medians = []
    for fmt in args.formats.split(","):
        runs = []
        for _ in range(args.runs):
            ingest_weir = Path(args.ingest_build_dir) / "weir" if args.ingest_build_dir else None
            runs.append(bench(fmt, weir, args.flushes, args.rows_per_flush, args.target_size,
                              args.repeats, ingest_weir))
            print(json.dumps(runs[-1]), flush=True)
            if not args.keep:
                shutil.rmtree(runs[-1]["root"], ignore_errors=True)
        m = {"format": fmt, "flushes": args.flushes, "rows": runs[0]["rows"]}
        for field in FIELDS:
            m[field] = statistics.median(r[field] for r in runs)
            m[field + "_runs"] = [round(r[field], 2) for r in runs]
        medians.append(m)
    print(f"medians of {args.runs} run(s)")
    print(f"{'format':9} {'flushes':>7} {'rows':>8} {'files':>11} {'MB in':>7} {'MB out':>7} "
          f"{'MB/s':>6} {'RSS MiB':>8} {'query ms before→after':>22}")
    for r in medians:
        print(f"{r['format']:9} {r['flushes']:7} {r['rows']:8} "
              f"{r['files_before']:5.0f}→{r['files_after']:<5.0f} {r['bytes_in'] / 1e6:7.2f} "
              f"{r['bytes_out'] / 1e6:7.2f} {r['mb_per_s']:6.2f} {r['peak_rss_mib']:8.1f} "
              f"{r['query_before_ms']:10.1f}→{r['query_after_ms']:<10.1f}")
    print(json.dumps(medians, indent=1))


if __name__ == "__main__":
    main()
