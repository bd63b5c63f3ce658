"""Upsert datasets (issue 15): events/s of `weir ingest` landing a keyed changelog as an upsert
at 10 % and 50 % key overlap per flush, against plain append of the same records in the same
run; and the time of `SELECT count(*), sum(v)` on the upserted table after its ~100 flushes,
before and after maintenance. DuckLake (positional delete files) or Iceberg (`--format
iceberg`, SQL catalog on SQLite: equality delete files, or with `--iceberg-deletes
deletion_vectors` v3 deletion vectors).

Run under the harness (Kafka), from the repository root:

    .deps/venv/bin/python -m tests.harness run --only kafka -- \
        .deps/venv/bin/python bench/upsert_bench.py --build build/release --events 200000 \
        --runs 3 --format ducklake   # or iceberg

Per run and mode (append, upsert-10, upsert-50; the order rotates between runs): a new topic of
4 partitions is filled with N records (a record reuses a key already emitted with probability
= the overlap, else takes a new one; the message key is the JSON key), a fresh SQLite catalog
and local data directory; `weir ingest` (flush.max_bytes sized for ~100 flushes, flush.interval
1 s so that the last flush does not wait long) runs
from the start of the topic until the ledger holds every record, and its events/s is N over
that time, with weir's peak RSS (the upsert's key lookup holds the flush's keys and one candidate
file's key columns at a time: no index stays in memory). Rows are checked: append N, upsert the
distinct keys. After the upsert-50 run, the
query is timed (median of `--query-repeats`, 5; DuckDB's ducklake or iceberg extension) before maintenance, after
`weir maintain compact` (which applies the delete files while merging) and, for DuckLake, after
DuckDB's `ducklake_rewrite_data_files` + `ducklake_merge_adjacent_files`; the rows are checked
again after each. Prints medians over the runs.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import duckdb
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.peak_rss import measured, peak_rss_kib, signal_child  # noqa: E402
EXTENSIONS = ROOT / ".deps" / "duckdb" / "extensions"


ICEBERG_DELETES = "equality"  # upsert.iceberg_deletes (--iceberg-deletes)
QUERY_REPEATS = 5


def unique(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def records(n: int, overlap: float, seed: int):
    rng = random.Random(seed)
    keys = 0
    out = []
    for i in range(n):
        if keys and rng.random() < overlap:
            k = rng.randrange(keys)
        else:
            k = keys
            keys += 1
        out.append((json.dumps({"g": f"m{k % 1000}", "w": k // 1000}).encode(),
                    json.dumps({"v": i, "n": k, "pad": "x" * 40}).encode()))
    return out, keys


def fill(bootstrap: str, topic: str, recs) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(topic, 4, 1)]).values():
        f.result(timeout=60)
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "enable.idempotence": True})
    for key, value in recs:
        while True:
            try:
                p.produce(topic, key=key, value=value)
                break
            except BufferError:
                p.poll(0.1)
    assert p.flush(60) == 0


def plain_duckdb():
    return duckdb.connect(config={"extension_directory": str(EXTENSIONS),
                                  "autoinstall_known_extensions": False,
                                  "autoload_known_extensions": False})


def iceberg_table(root: Path):
    from pyiceberg.catalog.sql import SqlCatalog

    catalog = SqlCatalog("weir", uri=f"sqlite:///{root / 'catalog.db'}",
                         warehouse=(root / "warehouse").as_uri())
    return catalog.load_table(("main", "agg"))


def relation(con, root: Path, fmt: str) -> str:
    """The table as a DuckDB relation: the attached DuckLake, or iceberg_scan of its metadata."""
    if fmt == "ducklake":
        return "lake.agg"
    con.execute("LOAD iceberg")
    return f"iceberg_scan('{iceberg_table(root).metadata_location}')"


def connect(root: Path, read_only: bool = True, fmt: str = "ducklake"):
    if fmt == "iceberg":
        return plain_duckdb()
    con = duckdb.connect(config={"extension_directory": str(EXTENSIONS),
                                 "autoinstall_known_extensions": False,
                                 "autoload_known_extensions": False})
    con.execute("LOAD ducklake; LOAD sqlite_scanner")
    con.execute(f"ATTACH 'ducklake:sqlite:{root / 'catalog.sqlite'}' AS lake"
                + (" (READ_ONLY)" if read_only else ""))
    return con


def ledger(root: Path, fmt: str, topic: str) -> int:
    if fmt == "iceberg":
        try:
            snapshot = iceberg_table(root).current_snapshot()
        except Exception:  # no catalog or table yet
            return 0
        text = snapshot.summary.additional_properties.get(f"weir.offsets.{topic}") \
            if snapshot else None
        return sum(json.loads(text).values()) if text else 0
    try:
        con = duckdb.connect(config={"extension_directory": str(EXTENSIONS),
                                     "autoinstall_known_extensions": False,
                                     "autoload_known_extensions": False})
        con.execute("LOAD sqlite_scanner")
        return con.execute(f"SELECT sum(next_offset) FROM sqlite_scan('{root / 'catalog.sqlite'}', "
                           "'weir_offset_ledger')").fetchone()[0] or 0
    except duckdb.Error:
        return 0


def env_for(root: Path, bootstrap: str, topic: str, upsert: bool, max_bytes: str,
            fmt: str = "ducklake") -> dict:
    env = dict(os.environ)
    env.update({"WEIR_KAFKA_BOOTSTRAP_SERVERS": bootstrap, "WEIR_TOPIC": topic,
                "WEIR_TABLE": "agg", "WEIR_KAFKA_GROUP_ID": unique("g"),
                "WEIR_CATALOG_KIND": "sqlite",
                "WEIR_CATALOG_SQLITE_PATH": str(root / "catalog.sqlite"),
                "WEIR_STORAGE_DATA_PATH": str(root / "data") + "/",
                "WEIR_FLUSH_MAX_BYTES": max_bytes, "WEIR_FLUSH_INTERVAL": "1s",
                "WEIR_HTTP_PORT": "0", "WEIR_LOG_LEVEL": "warn"})
    if fmt == "iceberg":
        env.update({"WEIR_LAKE_FORMAT": "iceberg", "WEIR_SCHEMA": "main",
                    "WEIR_ICEBERG_SQLITE_PATH": str(root / "catalog.db"),
                    "WEIR_ICEBERG_WAREHOUSE": str(root / "warehouse")})
    if upsert:
        env.update({"WEIR_UPSERT_KEY": "g,w", "WEIR_UPSERT_KEY_FROM": "kafka_key"})
        if fmt == "iceberg":
            env["WEIR_UPSERT_ICEBERG_DELETES"] = ICEBERG_DELETES
    return env


def check_rows(root: Path, fmt: str, expected: int, keys: int | None) -> None:
    con = connect(root, fmt=fmt)
    # Append mode has no key columns (the key is the message's, and only an upsert reads it).
    distinct = "count(DISTINCT (g, w))" if keys is not None else "NULL"
    rows, distinct = con.execute(
        f"SELECT count(*), {distinct} FROM {relation(con, root, fmt)}").fetchone()
    con.close()
    assert rows == expected and (keys is None or distinct == keys), (rows, distinct, keys)


def run_mode(args, bootstrap: str, mode: str, run: int) -> dict:
    overlap = {"append": 0.5, "upsert-10": 0.1, "upsert-50": 0.5}[mode]
    recs, keys = records(args.events, overlap, seed=run)
    topic = unique(mode.replace("-", ""))
    fill(bootstrap, topic, recs)
    root = Path(tempfile.mkdtemp(prefix=f"upsert-bench-{mode}-"))
    env = env_for(root, bootstrap, topic, mode != "append", args.max_bytes, args.format)
    log = open(root / "weir.log", "wb")
    started = time.monotonic()
    report = root / "peak_rss"
    proc = subprocess.Popen(measured([str(Path(args.build).resolve() / "weir"), "ingest"], report),
                            env=env, cwd=root, stdout=log, stderr=subprocess.STDOUT)
    while ledger(root, args.format, topic) < args.events:
        if proc.poll() is not None:
            sys.exit(f"weir exited {proc.returncode}: {(root / 'weir.log').read_text()[-3000:]}")
        time.sleep(0.2)
    elapsed = time.monotonic() - started
    signal_child(proc.pid, signal.SIGTERM)  # weir drains and exits 0, and so does time
    assert proc.wait(120) == 0, (root / "weir.log").read_text()[-3000:]
    rss_mib = peak_rss_kib(report) / 1024  # the upsert's key lookup against plain append's
    expected = args.events if mode == "append" else keys
    check_rows(root, args.format, expected, None if mode == "append" else keys)
    if args.format == "iceberg":
        snapshots = len(iceberg_table(root).snapshots())
    else:
        con = connect(root)
        snapshots = con.execute("SELECT count(*) FROM ducklake_snapshots('lake')").fetchone()[0]
        con.close()
    return {"mode": mode, "eps": args.events / elapsed, "rss_mib": rss_mib,
            "rows": expected, "keys": keys,
            "snapshots": snapshots, "root": root}


def time_query(root: Path, fmt: str) -> float:
    times = []
    for _ in range(QUERY_REPEATS):
        con = connect(root, fmt=fmt)
        table = relation(con, root, fmt)
        t = time.monotonic()
        con.execute(f"SELECT count(*), sum(v) FROM {table}").fetchone()
        times.append(time.monotonic() - t)
        con.close()
    return statistics.median(times)


def maintenance_figures(args, root: Path, keys: int) -> dict:
    fmt = args.format
    out = {"before": time_query(root, fmt)}
    env = env_for(root, "unused:9092", "unused", True, args.max_bytes, fmt)
    compact = subprocess.run([str(Path(args.build).resolve() / "weir"), "maintain", "compact"], env=env,
                             cwd=root, capture_output=True, text=True)
    out["weir_compact_exit"] = compact.returncode
    out["weir_compact_said"] = (compact.stdout + compact.stderr).strip().splitlines()[-1:]
    check_rows(root, fmt, keys, keys)
    out["after_weir_compact"] = time_query(root, fmt)
    if fmt == "iceberg":
        files = iceberg_table(root).inspect.files().to_pylist()
        out["files_after"] = sum(1 for f in files if f["content"] == 0)
        out["delete_files_after"] = sum(1 for f in files if f["content"] != 0)
        return out
    con = connect(root, read_only=False)
    con.execute("CALL ducklake_rewrite_data_files('lake', 'agg')")
    con.execute("CALL ducklake_merge_adjacent_files('lake')")
    con.close()
    check_rows(root, fmt, keys, keys)
    out["after_duckdb_rewrite_merge"] = time_query(root, fmt)
    con = connect(root)
    out["files_after"] = con.execute(
        "SELECT count(*) FROM ducklake_list_files('lake', 'agg')").fetchone()[0]
    con.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default="build/debug")
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--max-bytes", default="256KiB", help="flush.max_bytes (~100 flushes)")
    parser.add_argument("--format", choices=("ducklake", "iceberg"), default="ducklake")
    parser.add_argument("--iceberg-deletes", choices=("equality", "deletion_vectors"),
                        default="equality", help="upsert.iceberg_deletes")
    parser.add_argument("--query-repeats", type=int, default=5,
                        help="timings of each query (the median is reported)")
    args = parser.parse_args()
    global ICEBERG_DELETES, QUERY_REPEATS
    ICEBERG_DELETES, QUERY_REPEATS = args.iceberg_deletes, args.query_repeats
    bootstrap = os.environ["WEIR_TEST_KAFKA_BOOTSTRAP"]
    modes = ["append", "upsert-10", "upsert-50"]
    results: dict[str, list[float]] = {m: [] for m in modes}
    rss: dict[str, list[float]] = {m: [] for m in modes}
    maint = []
    for run in range(args.runs):
        order = modes[run % 3:] + modes[:run % 3]
        for mode in order:
            r = run_mode(args, bootstrap, mode, run)
            results[mode].append(r["eps"])
            rss[mode].append(r["rss_mib"])
            print(f"run {run} {mode}: {r['eps']:.0f} events/s, peak RSS {r['rss_mib']:.1f} MiB, "
                  f"{r['rows']} rows, {r['snapshots']} snapshots", flush=True)
            if mode == "upsert-50":
                m = maintenance_figures(args, r["root"], r["keys"])
                maint.append(m)
                print(f"run {run} query: {m}", flush=True)
    print("median events/s:", {m: round(statistics.median(v)) for m, v in results.items()})
    print("median peak RSS MiB:", {m: round(statistics.median(v), 1) for m, v in rss.items()})
    for m in modes[1:]:
        print(f"{m} / append: {statistics.median(results[m]) / statistics.median(results['append']):.2f}")
    for k in ("before", "after_weir_compact", "after_duckdb_rewrite_merge"):
        if k not in maint[0]:
            continue
        print(f"median SELECT count(*), sum(v) {k}: {statistics.median(x[k] for x in maint) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
