"""Freshness of `weir ingest`: produce time → visible in a DuckDB query, at a low steady rate.

Run under the harness (Kafka + PostgreSQL), from the repository root:

    .deps/venv/bin/python -m tests.harness run --only kafka,postgres -- \
        .deps/venv/bin/python bench/freshness_bench.py --build build/release --rate 1000 \
        --seconds 30 --flush-interval 1s --runs 3

Per run: a new topic (4 partitions), a new PostgreSQL database as the DuckLake catalog, data in
a local directory; `weir ingest` is started and, once ready, a producer sends `--rate` events a
second for `--seconds` (each carrying its produce time in microseconds); a watcher thread reads
the catalog's newest snapshot id every `--poll-ms` (5 ms) and notes when each snapshot appeared
(from then on every DuckDB query sees it), and a DuckDB session reads each new snapshot's rows
(`AT (VERSION => s)`): an event's latency is the time its snapshot appeared less its produce
time. (A DuckDB full scan every 50 ms, the first version, measured the reader on a loaded
machine, not weir.) Prints p50/p99/max per run and the medians; every event must be seen
exactly once (count and distinct ids), and weir must exit 0 on SIGTERM.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from e2e_bench import EXTENSIONS, ROOT, free_port, fresh_database, require_env, unique  # noqa: E402


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def ready(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=1) as response:
            return response.status == 200
    except OSError:
        return False


def run_once(args, bootstrap: str, run: int) -> dict:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic
    import duckdb

    topic = unique("fresh")
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, num_partitions=4, replication_factor=1)])[topic].result()
    dsn = fresh_database(args.pg_url, args.pg_dsn)
    work = Path(tempfile.mkdtemp(prefix=f"weir-fresh-{run}-"))
    port = free_port()
    env = dict(os.environ)
    env.update({
        "WEIR_KAFKA_BOOTSTRAP_SERVERS": bootstrap, "WEIR_TOPIC": topic, "WEIR_TABLE": "events",
        "WEIR_KAFKA_GROUP_ID": unique("fresh_group"), "WEIR_FLUSH_INTERVAL": args.flush_interval,
        "WEIR_HTTP_PORT": str(port), "WEIR_CATALOG_KIND": "postgres",
        "WEIR_CATALOG_POSTGRES_DSN": dsn, "WEIR_STORAGE_DATA_PATH": str(work / "data") + "/",
    })
    log = open(work / "weir.log", "ab")
    proc = subprocess.Popen([str(args.build / "weir"), "ingest",
                             *sum((["--set", kv] for kv in args.set), [])], env=env, cwd=work,
                            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not ready(port):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"weir ingest not ready (log {work / 'weir.log'})")
        time.sleep(0.2)

    total = int(args.rate * args.seconds)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 1})

    def produce() -> None:
        start = time.monotonic()
        for i in range(total):
            due = start + i / args.rate
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            body = {"id": i, "sent_us": time.time_ns() // 1000, "pad": "x" * 200}
            producer.produce(topic, json.dumps(body).encode(), key=str(i).encode())
            producer.poll(0)
        producer.flush(30)

    sender = threading.Thread(target=produce)
    con = duckdb.connect(config={"extension_directory": str(EXTENSIONS),
                                 "autoinstall_known_extensions": False,
                                 "autoload_known_extensions": False})
    con.execute("LOAD ducklake")
    con.execute("LOAD postgres_scanner")
    con.execute(f"ATTACH 'ducklake:postgres:{dsn}' AS lake (READ_ONLY)")
    # The watcher: a snapshot is visible to every DuckDB query from the moment its catalog row
    # is committed, so a thread polls the catalog's newest snapshot id every --poll-ms (one
    # indexed query, ~1 ms) and notes when each appeared; the main thread then reads each new
    # snapshot's rows with DuckDB (`AT (VERSION => s)`) and gives every id first found there the
    # time its snapshot appeared. The reads' own cost cannot delay a detection.
    appeared: list[tuple[int, int]] = []  # (snapshot id, wall µs when first seen)
    stop_watch = threading.Event()

    def watch() -> None:
        import psycopg

        with psycopg.connect(dsn, autocommit=True) as pg:
            last = -1
            while not stop_watch.is_set():
                try:
                    row = pg.execute("SELECT max(snapshot_id) FROM ducklake_snapshot").fetchone()
                except psycopg.Error:
                    row = None  # the catalog's tables do not exist before weir made them
                now_us = time.time_ns() // 1000
                if row and row[0] is not None and row[0] > last:
                    last = row[0]
                    appeared.append((last, now_us))
                time.sleep(args.poll_ms / 1000)

    watcher = threading.Thread(target=watch)
    seen: dict[int, float] = {}
    rows_seen = 0
    read_upto = 0
    watcher.start()
    sender.start()
    end = time.monotonic() + args.seconds + 60
    try:
        while len(seen) < total and time.monotonic() < end:
            time.sleep(0.05)
            batch = appeared[read_upto:]
            for snapshot, seen_us in batch:
                try:
                    got = con.execute(f"SELECT id, sent_us FROM lake.events AT (VERSION => "
                                      f"{snapshot}) WHERE id >= 0").fetchall()
                except duckdb.Error:
                    continue  # a snapshot before the table's: no rows yet
                rows_seen = len(got)
                for event_id, sent_us in got:
                    if event_id not in seen:
                        seen[event_id] = (seen_us - sent_us) / 1000.0
            read_upto += len(batch)
    finally:
        stop_watch.set()
        watcher.join()
        sender.join()
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=120)
        distinct = con.execute("SELECT count(*), count(DISTINCT id) FROM lake.events").fetchone()
        con.close()
    if code != 0 or len(seen) != total or distinct != (total, total):
        raise SystemExit(f"run {run} FAILED: exit {code}, seen {len(seen)} of {total}, table "
                         f"{distinct} (log {work / 'weir.log'})")
    latencies = list(seen.values())
    result = {"p50": quantile(latencies, 0.5), "p99": quantile(latencies, 0.99),
              "max": max(latencies), "rows": rows_seen}
    print(f"run {run}: {total} events at {args.rate}/s, flush.interval {args.flush_interval}: "
          f"produce→visible p50 {result['p50']:.0f} ms, p99 {result['p99']:.0f} ms, max "
          f"{result['max']:.0f} ms", flush=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", type=Path, default=ROOT / "build" / "release")
    parser.add_argument("--rate", type=float, default=1000)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--flush-interval", default="1s")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--poll-ms", type=float, default=5,
                        help="how often the watcher reads the catalog's newest snapshot id")
    args = parser.parse_args()
    args.build = args.build if args.build.is_absolute() else ROOT / args.build
    bootstrap = require_env("WEIR_TEST_KAFKA_BOOTSTRAP")
    args.pg_dsn = require_env("WEIR_TEST_PG_DSN")
    args.pg_url = require_env("WEIR_TEST_PG_URL")
    results = []
    for run in range(1, args.runs + 1):
        load = os.getloadavg()[0]
        results.append(run_once(args, bootstrap, run))
        print(f"run {run}: load average (1 min) {load:.1f} -> {os.getloadavg()[0]:.1f}",
              flush=True)
    print(f"median of {len(results)}: p50 {statistics.median(r['p50'] for r in results):.0f} ms, "
          f"p99 {statistics.median(r['p99'] for r in results):.0f} ms")


if __name__ == "__main__":
    main()
