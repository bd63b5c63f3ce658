"""Upsert datasets (issue 15): events/s of `weir ingest` landing a keyed changelog as an upsert
at 10 % and 50 % key overlap per flush, against plain append of the same records in the same
run; and the time of `SELECT count(*), sum(v)` on the upserted table after its ~100 flushes,
before and after maintenance.

Run under the harness (Kafka), from the repository root:

    .deps/venv/bin/python -m tests.harness run --only kafka -- \\
        .deps/venv/bin/python bench/upsert_bench.py --build build/debug --events 200000 --runs 3

Per run and mode (append, upsert-10, upsert-50; the order rotates between runs): a new topic of
4 partitions is filled with N records (a record reuses a key already emitted with probability
= the overlap, else takes a new one; the message key is the JSON key), a fresh SQLite DuckLake
catalog and local data directory; `weir ingest` (flush.max_bytes sized for ~100 flushes) runs
from the start of the topic until the ledger holds every record, and its events/s is N over
that time. Rows are checked: append N, upsert the distinct keys. After the upsert-50 run, the
query is timed (median of 5) before maintenance, after `weir maintain compact` (which refuses
files with deletes) and after DuckDB's `ducklake_merge_adjacent_files` +
`ducklake_rewrite_data_files` (which apply the deletes). Prints medians over the runs.
"""

from __future__ import annotations

import argparse
import json
import os
import random
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
EXTENSIONS = ROOT / ".deps" / "duckdb" / "extensions"


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


def connect(root: Path, read_only: bool = True):
    con = duckdb.connect(config={"extension_directory": str(EXTENSIONS),
                                 "autoinstall_known_extensions": False,
                                 "autoload_known_extensions": False})
    con.execute("LOAD ducklake; LOAD sqlite_scanner")
    con.execute(f"ATTACH 'ducklake:sqlite:{root / 'catalog.sqlite'}' AS lake"
                + (" (READ_ONLY)" if read_only else ""))
    return con


def ledger(root: Path) -> int:
    try:
        con = duckdb.connect(config={"extension_directory": str(EXTENSIONS),
                                     "autoinstall_known_extensions": False,
                                     "autoload_known_extensions": False})
        con.execute("LOAD sqlite_scanner")
        return con.execute(f"SELECT sum(next_offset) FROM sqlite_scan('{root / 'catalog.sqlite'}', "
                           "'weir_offset_ledger')").fetchone()[0] or 0
    except duckdb.Error:
        return 0


def env_for(root: Path, bootstrap: str, topic: str, upsert: bool, max_bytes: str) -> dict:
    env = dict(os.environ)
    env.update({"WEIR_KAFKA_BOOTSTRAP_SERVERS": bootstrap, "WEIR_TOPIC": topic,
                "WEIR_TABLE": "agg", "WEIR_KAFKA_GROUP_ID": unique("g"),
                "WEIR_CATALOG_KIND": "sqlite",
                "WEIR_CATALOG_SQLITE_PATH": str(root / "catalog.sqlite"),
                "WEIR_STORAGE_DATA_PATH": str(root / "data") + "/",
                "WEIR_FLUSH_MAX_BYTES": max_bytes, "WEIR_FLUSH_INTERVAL": "60s",
                "WEIR_HTTP_PORT": "0", "WEIR_LOG_LEVEL": "warn"})
    if upsert:
        env.update({"WEIR_UPSERT_KEY": "g,w", "WEIR_UPSERT_KEY_FROM": "kafka_key"})
    return env


def run_mode(args, bootstrap: str, mode: str, run: int) -> dict:
    overlap = {"append": 0.5, "upsert-10": 0.1, "upsert-50": 0.5}[mode]
    recs, keys = records(args.events, overlap, seed=run)
    topic = unique(mode.replace("-", ""))
    fill(bootstrap, topic, recs)
    root = Path(tempfile.mkdtemp(prefix=f"upsert-bench-{mode}-"))
    env = env_for(root, bootstrap, topic, mode != "append", args.max_bytes)
    log = open(root / "weir.log", "wb")
    started = time.monotonic()
    proc = subprocess.Popen([str(Path(args.build) / "weir"), "ingest"], env=env, cwd=root,
                            stdout=log, stderr=subprocess.STDOUT)
    while ledger(root) < args.events:
        if proc.poll() is not None:
            sys.exit(f"weir exited {proc.returncode}: {(root / 'weir.log').read_text()[-3000:]}")
        time.sleep(0.2)
    elapsed = time.monotonic() - started
    proc.terminate()
    assert proc.wait(120) == 0
    con = connect(root)
    rows, distinct = con.execute("SELECT count(*), count(DISTINCT (g, w)) FROM lake.agg").fetchone()
    snapshots = con.execute("SELECT count(*) FROM ducklake_snapshots('lake')").fetchone()[0]
    con.close()
    expected = args.events if mode == "append" else keys
    assert rows == expected and (mode == "append" or distinct == keys), (mode, rows, distinct, keys)
    return {"mode": mode, "eps": args.events / elapsed, "rows": rows, "snapshots": snapshots,
            "root": root}


def time_query(root: Path) -> float:
    times = []
    for _ in range(5):
        con = connect(root)
        t = time.monotonic()
        con.execute("SELECT count(*), sum(v) FROM lake.agg").fetchone()
        times.append(time.monotonic() - t)
        con.close()
    return statistics.median(times)


def maintenance_figures(args, root: Path) -> dict:
    out = {"before": time_query(root)}
    env = env_for(root, "unused:9092", "unused", True, args.max_bytes)
    compact = subprocess.run([str(Path(args.build) / "weir"), "maintain", "compact"], env=env,
                             cwd=root, capture_output=True, text=True)
    out["weir_compact_exit"] = compact.returncode
    out["weir_compact_said"] = (compact.stdout + compact.stderr).strip().splitlines()[-1:]
    out["after_weir_compact"] = time_query(root)
    con = connect(root, read_only=False)
    con.execute("CALL ducklake_rewrite_data_files('lake', 'agg')")
    con.execute("CALL ducklake_merge_adjacent_files('lake')")
    con.close()
    out["after_duckdb_rewrite_merge"] = time_query(root)
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
    args = parser.parse_args()
    bootstrap = os.environ["WEIR_TEST_KAFKA_BOOTSTRAP"]
    modes = ["append", "upsert-10", "upsert-50"]
    results: dict[str, list[float]] = {m: [] for m in modes}
    maint = []
    for run in range(args.runs):
        order = modes[run % 3:] + modes[:run % 3]
        for mode in order:
            r = run_mode(args, bootstrap, mode, run)
            results[mode].append(r["eps"])
            print(f"run {run} {mode}: {r['eps']:.0f} events/s, {r['rows']} rows, "
                  f"{r['snapshots']} snapshots", flush=True)
            if mode == "upsert-50":
                m = maintenance_figures(args, r["root"])
                maint.append(m)
                print(f"run {run} query: {m}", flush=True)
    print("median events/s:", {m: round(statistics.median(v)) for m, v in results.items()})
    for m in modes[1:]:
        print(f"{m} / append: {statistics.median(results[m]) / statistics.median(results['append']):.2f}")
    for k in ("before", "after_weir_compact", "after_duckdb_rewrite_merge"):
        print(f"median SELECT count(*), sum(v) {k}: {statistics.median(x[k] for x in maint) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
