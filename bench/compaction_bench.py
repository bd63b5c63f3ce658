"""`weir maintain compact` benchmark (issue 16): N small flushes into DuckLake and into Iceberg,
then a typical aggregation (count, sum, group by a low-cardinality column, a filter on the sort
key) timed before and after compaction with DuckDB, and the compaction's throughput (input MB/s)
and peak RSS (GNU time's, bench/peak_rss.py: wait4's ru_maxrss carries the Python parent's).

    .deps/venv/bin/python bench/compaction_bench.py --build-dir build/debug --flushes 1000 --runs 3

Each run builds its tables afresh; the figures printed are the medians of the runs, with every
run's value beside them.

The flushes come from the file source (`weir ingest --from`), one commit per consume batch of
`--rows-per-flush` lines (flush.max_bytes at its minimum), partitioned by `grp` (2 values) and
sorted by `id`, so each flush writes 2 files. No broker needed.

`--verify` (issue 16's proof as a soak check, too slow for CI at 1,000 Iceberg flushes) also
checks, printing each check and exiting non-zero on any failure: after compaction at least 95 %
of the bytes are in files of at least target / 2 (the target defaults to 32KiB with --verify:
these partitions hold ~0.45 MB each, so a 4MiB target could not fill half a file); the row
multiset is unchanged (count, distinct ids, id sum and a hash of every column of every row, by
tests/e2e/test_maintain_compact.py's `fingerprint`, before and after); and after compaction
DuckDB, pyiceberg and Spark read the same rows (Iceberg; DuckLake: DuckDB):

    .deps/venv/bin/python bench/compaction_bench.py --build-dir build/debug --flushes 1000 \
        --runs 1 --formats iceberg,ducklake --verify
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
sys.path.insert(0, str(ROOT))  # --verify reuses the e2e tests' helpers (tests.e2e, tests.harness)
from bench.peak_rss import measured, peak_rss_kib  # noqa: E402

COLUMNS = "id, grp, v, name, score, ok, region"  # every field of line()
HASHED = COLUMNS + ", _inserted_at"  # and the column weir adds

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
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "rss"
        child = subprocess.Popen(measured(args, report), env=env, cwd=cwd, stdout=out,
                                 stderr=err, stdin=subprocess.DEVNULL)
        code = child.wait()
        wall = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        if code != 0:
            sys.stderr.write(err.read().decode()[-4000:])
        return code, out.read().decode(), peak_rss_kib(report), wall


def events_table(stats: dict) -> dict:
    return {t["table"]: t for t in stats["tables"]}["main.events"]


class Checks:
    """--verify's checks: each printed as it is made; `failed` names those that failed."""

    def __init__(self) -> None:
        self.failed: list[str] = []
        self.passed = 0

    def check(self, name: str, ok: bool, detail: object = "") -> bool:
        print(f"  {'PASS' if ok else 'FAIL'}  {name}: {detail}", flush=True)
        if ok:
            self.passed += 1
        else:
            self.failed.append(name)
        return ok


def parse_size(text: str) -> int:
    """'32KiB', '4MiB', '8192B' → bytes (the units weir's --target-size takes)."""
    units = {"GiB": 1 << 30, "MiB": 1 << 20, "KiB": 1 << 10, "B": 1}
    for unit, factor in units.items():
        if text.endswith(unit):
            return int(float(text[:-len(unit)]) * factor)
    return int(text)


def iceberg_table(root: Path):
    from pyiceberg.catalog.sql import SqlCatalog
    lake = root / "weir-lake"
    return SqlCatalog("weir", uri=f"sqlite:///{lake / 'catalog.db'}",
                      warehouse=(lake / "warehouse").as_uri()).load_table(("main", "events"))


def all_rows(con, relation: str) -> list[tuple]:
    """Every row, every column (_inserted_at in microseconds), sorted: the form spark_rows
    returns."""
    return sorted(con.execute(f"SELECT {COLUMNS}, epoch_us(_inserted_at) FROM {relation}")
                  .fetchall())


def readers(fmt: str, root: Path, con) -> tuple[dict, list[int]]:
    """The relations DuckDB reads the table through (DuckLake: its ducklake extension;
    Iceberg: its iceberg extension and pyiceberg's scan) and the live data files' sizes."""
    if fmt == "ducklake":
        rel = relation(fmt, root, con)
        sizes = [r[0] for r in con.execute(
            "SELECT data_file_size_bytes FROM ducklake_list_files('lake', 'events')").fetchall()]
        return {"duckdb": rel}, sizes
    table = iceberg_table(root)
    con.execute("LOAD iceberg")
    con.execute(f"CREATE OR REPLACE VIEW duck AS SELECT * FROM "
                f"iceberg_scan('{table.metadata_location}')")
    con.register("py", table.scan().to_arrow())
    sizes = [f["file_size_in_bytes"] for f in table.inspect.files().to_pylist()]
    return {"duckdb": "duck", "pyiceberg": "py"}, sizes


def verify_before(fmt: str, root: Path, flushes: int, rows: int, checks: Checks) -> dict:
    """The fingerprint and rows before compaction, every reader agreeing, every row there,
    one commit and two files (one per `grp`) per flush."""
    from tests.e2e.test_maintain_compact import fingerprint
    print(f"verify {fmt}, before compaction:", flush=True)
    con = duck()
    rels, sizes = readers(fmt, root, con)
    checks.check(f"{fmt} before: data files = 2 x flushes", len(sizes) == 2 * flushes,
                 f"{len(sizes)} files, {sum(sizes)} bytes")
    if fmt == "iceberg":
        commits = sum("weir.commit-id" in s.summary.additional_properties
                      for s in iceberg_table(root).snapshots())
    else:
        commits = con.execute("SELECT count(*) FROM ducklake_snapshots('lake') WHERE "
                              "len(changes['tables_inserted_into']) > 0").fetchone()[0]
    checks.check(f"{fmt} before: ingest commits = flushes", commits == flushes, commits)
    prints = {name: fingerprint(con, rel, HASHED) for name, rel in rels.items()}
    expected = prints["duckdb"]
    checks.check(f"{fmt} before: count, distinct ids, id sum are every row once",
                 expected[:3] == (rows, rows, rows * (rows - 1) // 2), expected)
    for name, got in prints.items():
        if name != "duckdb":
            checks.check(f"{fmt} before: {name} fingerprint = duckdb's", got == expected, got)
    result = {"fingerprint": expected}
    if fmt == "iceberg":
        result["rows"] = all_rows(con, "duck")
        result["types"] = con.execute("SELECT column_name, column_type FROM "
                                      "(DESCRIBE duck)").fetchall()
    con.close()
    return result


def spark_relation(con, rows: list[tuple], types: list[tuple]) -> str:
    """Spark's rows as a DuckDB view in the table's own column types, so that the same
    fingerprint is computed over what Spark read."""
    import pyarrow as pa
    names = [c.strip() for c in COLUMNS.split(",")] + ["_inserted_at_us"]
    con.register("spark_raw", pa.table({n: [r[k] for r in rows] for k, n in enumerate(names)}))
    kinds = dict(types)
    cols = ", ".join(f"{n}::{kinds[n]} AS {n}" for n in names[:-1])
    con.execute(f"CREATE OR REPLACE VIEW spark AS SELECT {cols}, make_timestamp(_inserted_at_us)"
                f"::{kinds['_inserted_at']} AS _inserted_at FROM spark_raw")
    return "spark"


def verify_after(fmt: str, root: Path, expected: dict, target: int, checks: Checks) -> None:
    from tests.e2e.test_maintain_compact import big_share, fingerprint, spark_rows
    print(f"verify {fmt}, after compaction (target {target} B):", flush=True)
    con = duck()
    rels, sizes = readers(fmt, root, con)
    share = big_share(sizes, target)
    checks.check(f"{fmt} after: >= 95 % of bytes in files >= target/2 ({target // 2} B)",
                 share >= 0.95, f"{share:.2%} of {sum(sizes)} bytes in {len(sizes)} files")
    for name, rel in rels.items():
        got = fingerprint(con, rel, HASHED)
        checks.check(f"{fmt} after: {name} fingerprint = before", got == expected["fingerprint"],
                     got)
    if fmt == "iceberg":
        for name, rel in rels.items():
            checks.check(f"{fmt} after: {name} rows = before (every row, every column)",
                         all_rows(con, rel) == expected["rows"], f"{len(expected['rows'])} rows")
        got = spark_rows(iceberg_table(root).metadata_location, COLUMNS)
        checks.check(f"{fmt} after: spark rows = before (every row, every column)",
                     got == expected["rows"], f"{len(got)} rows")
        spark = fingerprint(con, spark_relation(con, got, expected["types"]), HASHED)
        checks.check(f"{fmt} after: spark fingerprint = before", spark == expected["fingerprint"],
                     spark)
    con.close()


def bench(fmt: str, weir: Path, flushes: int, rows_per_flush: int, target: str,
          repeats: int, ingest_weir: Path | None = None, checks: Checks | None = None) -> dict:
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
    if checks:
        expected = verify_before(fmt, root, flushes, rows, checks)
    before_s, before = time_query(fmt, root, rows, repeats)
    stats = json.loads(run_measured([str(weir), "maintain", "stats", "--json"], env, root)[1])
    files_before = events_table(stats)["data_files"]
    code, out, rss_kib, wall = run_measured(
        [str(weir), "maintain", "compact", "--json", "--target-size", target], env, root)
    assert code == 0, "compaction failed"
    report = events_table(json.loads(out))["compact"]
    assert report["runs_given_up"] == 0 and report["runs_committed"] == report["runs_planned"]
    if checks:
        verify_after(fmt, root, expected, parse_size(target), checks)
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
    parser.add_argument("--target-size", default="",
                        help="compaction's target (default 4MiB; 32KiB with --verify)")
    parser.add_argument("--repeats", type=int, default=7, help="query timings per table")
    parser.add_argument("--runs", type=int, default=3, help="fresh tables per format")
    parser.add_argument("--formats", default="ducklake,iceberg")
    parser.add_argument("--keep", action="store_true", help="keep the lakes' directories")
    parser.add_argument("--verify", action="store_true",
                        help="check issue 16's proof on every table (exit 1 on a failure)")
    args = parser.parse_args()
    target = args.target_size or ("32KiB" if args.verify else "4MiB")
    checks = Checks() if args.verify else None
    weir = Path(args.build_dir) / "weir"
    medians = []
    for fmt in args.formats.split(","):
        runs = []
        for _ in range(args.runs):
            ingest_weir = Path(args.ingest_build_dir) / "weir" if args.ingest_build_dir else None
            runs.append(bench(fmt, weir, args.flushes, args.rows_per_flush, target,
                              args.repeats, ingest_weir, checks))
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
    if checks:
        print(f"verify: {checks.passed} check(s) passed, {len(checks.failed)} failed"
              + (": " + "; ".join(checks.failed) if checks.failed else ""))
        sys.exit(1 if checks.failed else 0)


if __name__ == "__main__":
    main()
