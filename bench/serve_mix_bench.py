"""The mixed read/write load of issue 19 on `weir serve`, on a SQLite and a PostgreSQL catalog in
the same run, with `weir ingest` committing into another table of the lake every second.

From the repository root (starts its own Kafka and PostgreSQL, on free ports):

    .deps/venv/bin/python bench/serve_mix_bench.py --build build/release --seconds 30
    # issue 10's 200 sessions: --readers 200 --writers 4 --seconds 60 --catalogs sqlite

For each catalog: a DuckDB-made lake with a --rows table `big` and an empty table `w`;
--readers sessions (32) reading it (point lookups, aggregates, 10,000-row scans), --writers
sessions (8), half INSERTing one row every 50 ms and half COPYing 100 rows every 200 ms into
`w`, for --seconds (closed loops: the readers keep the cores busy, so latencies include
queueing). serve.max_connections is raised to fit them. Prints queries per second and p50/p99 per
kind, the errors (0 expected), weir serve's peak RSS and thread count sampled from /proc every
0.2 s during the load (and VmHWM), and a point lookup's latency in-process (DuckDB's Python API)
on the same DuckLake table and on a native DuckDB copy of it.
"""

from __future__ import annotations

import argparse
import json
import signal
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.e2e.serve_mix import (  # noqa: E402
    KINDS,
    EventFeeder,
    Load,
    create_tables,
    duckdb_attach,
    start_serve,
)
from tests.e2e.weir_run import (  # noqa: E402
    Lake,
    WeirIngest,
    create_topic,
    fresh_postgres_database,
    unique,
)
from tests.harness.stack import Stack  # noqa: E402


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def in_process_point_lookups(lake: Lake, rows: int, lookups: int) -> dict:
    con = duckdb_attach(lake)
    con.execute("CREATE TABLE native AS SELECT * FROM l.big")
    out = {}
    for name, table in (("ducklake", "l.big"), ("native", "native")):
        times = []
        for i in range(lookups):
            started = time.perf_counter()
            con.execute(f"SELECT v FROM {table} WHERE id = ?", [(i * 7919) % rows]).fetchone()
            times.append(time.perf_counter() - started)
        out[name] = statistics.median(times) * 1000
    con.close()
    return out


def solo_point_lookups(port: int, rows: int, lookups: int) -> float:
    """The median point lookup of one psycopg session with nothing else running on weir."""
    import psycopg

    from tests.e2e.serve_mix import dsn

    times = []
    with psycopg.connect(dsn(port), autocommit=True) as conn:
        for i in range(lookups):
            started = time.perf_counter()
            conn.execute("SELECT v FROM big WHERE id = %s", ((i * 7919) % rows,)).fetchone()
            times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


class Sampler:
    """The peak RSS and thread count of a process, read from /proc every 0.2 s on a thread."""

    def __init__(self, pid: int):
        self.pid, self.peak_rss_mib, self.peak_threads = pid, 0.0, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def status(self) -> dict[str, str]:
        fields = {}
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            name, _, value = line.partition(":")
            fields[name] = value.strip()
        return fields

    def _run(self):
        while not self._stop.is_set():
            fields = self.status()
            self.peak_rss_mib = max(self.peak_rss_mib, int(fields["VmRSS"].split()[0]) / 1024)
            self.peak_threads = max(self.peak_threads, int(fields["Threads"]))
            self._stop.wait(0.2)

    def __enter__(self) -> "Sampler":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def run_catalog(catalog: str, args, settings: dict, work: Path) -> dict:
    lake = Lake(work / catalog / "lake", catalog=catalog)
    lake.root.mkdir(parents=True)
    if catalog == "postgres":
        lake.postgres_dsn = fresh_postgres_database(
            {k: v for k, v in settings.items() if k.startswith("WEIR_TEST_PG")})
    create_tables(lake, args.rows)
    port, serve, serve_log = start_serve(args.build, lake, work / catalog,
                                         max_connections=args.readers + args.writers + 16)
    before = Sampler(serve.pid).status()
    bootstrap = settings["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("mix")
    create_topic(bootstrap, topic, 2)
    ingest = WeirIngest(args.build, lake, bootstrap, topic, "events", unique("group"),
                        {"WEIR_FLUSH_INTERVAL": "1s"}).start()
    inserters = args.writers // 2
    load = Load(port, args.rows, readers=args.readers, inserters=inserters,
                copiers=args.writers - inserters)
    started = time.monotonic()
    with EventFeeder(bootstrap, topic), Sampler(serve.pid) as sampler:
        load.run(args.seconds)
    elapsed = time.monotonic() - started
    hwm_mib = int(sampler.status()["VmHWM"].split()[0]) / 1024
    commits = ingest.metric("weir_commits_total")
    solo = solo_point_lookups(port, args.rows, args.lookups)
    ingest.stop()
    serve.send_signal(signal.SIGTERM)
    serve.wait(timeout=60)
    result = {"catalog": catalog, "errors": len(load.errors), "error_samples": load.errors[:3],
              "ingest_commits": commits, "kinds": {}, "sessions": args.readers + args.writers,
              "seconds": elapsed,
              "serve": {"rss_mib_before": int(before["VmRSS"].split()[0]) / 1024,
                        "threads_before": int(before["Threads"]),
                        "peak_rss_mib": sampler.peak_rss_mib, "peak_threads": sampler.peak_threads,
                        "vm_hwm_mib": hwm_mib}}
    for kind in KINDS:
        values = load.latencies[kind]
        result["kinds"][kind] = {
            "count": len(values), "qps": len(values) / elapsed,
            "p50_ms": percentile(values, 0.5) * 1000 if values else None,
            "p99_ms": percentile(values, 0.99) * 1000 if values else None}
    result["in_process_point_ms"] = in_process_point_lookups(lake, args.rows, args.lookups)
    result["in_process_point_ms"]["weir_serve_one_session"] = solo
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", type=Path, default=ROOT / "build" / "release")
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--lookups", type=int, default=200)
    parser.add_argument("--catalogs", default="sqlite,postgres")
    parser.add_argument("--readers", type=int, default=32, help="reading sessions")
    parser.add_argument("--writers", type=int, default=8,
                        help="writing sessions: half INSERT, half COPY FROM STDIN")
    args = parser.parse_args()
    args.build = args.build.resolve()
    with Stack(["kafka", "postgres"]) as settings, tempfile.TemporaryDirectory() as tmp:
        results = [run_catalog(c, args, settings, Path(tmp)) for c in args.catalogs.split(",")]
    for r in results:
        sv = r["serve"]
        print(f"\n{r['catalog']}: {r['sessions']} sessions for {r['seconds']:.0f} s, errors "
              f"{r['errors']}, ingest commits {r['ingest_commits']:.0f}")
        print(f"  weir serve: RSS {sv['rss_mib_before']:.0f} MiB and {sv['threads_before']} "
              f"threads before the load, peak {sv['peak_rss_mib']:.0f} MiB and "
              f"{sv['peak_threads']} threads during it (VmHWM {sv['vm_hwm_mib']:.0f} MiB)")
        print(f"  {'kind':<10} {'count':>7} {'qps':>8} {'p50 ms':>8} {'p99 ms':>8}")
        for kind, k in r["kinds"].items():
            p50 = f"{k['p50_ms']:.2f}" if k["p50_ms"] is not None else "-"
            p99 = f"{k['p99_ms']:.2f}" if k["p99_ms"] is not None else "-"
            print(f"  {kind:<10} {k['count']:>7} {k['qps']:>8.1f} {p50:>8} {p99:>8}")
        ip = r["in_process_point_ms"]
        print(f"  point lookup alone (median): weir serve, one session "
              f"{ip['weir_serve_one_session']:.2f} ms; in-process DuckDB on the DuckLake table "
              f"{ip['ducklake']:.2f} ms, on a native table {ip['native']:.2f} ms")
        for sample in r["error_samples"]:
            print(f"  error: {sample}")
    print(json.dumps(results))
    return 0 if all(r["errors"] == 0 for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
