"""End-to-end throughput of `weir ingest` against the librdkafka consume-only ceiling.

Run under the harness (Kafka + PostgreSQL, and Iceberg's REST fixture for the iceberg target),
from the repository root:

    .deps/venv/bin/python -m tests.harness run --only kafka,postgres,iceberg-rest -- \
        .deps/venv/bin/python bench/e2e_bench.py --build build/release --events 2000000 --runs 3 \
        --targets ducklake,iceberg

1. bench_fill_topic fills a new topic with N reference events;
2. bench_consume_ceiling reads it all once (the ceiling, events/s);
3. per run and target (ducklake, iceberg; ducklake-wal, iceberg-wal for ingest.mode wal, which
   also reports the peak bytes of its WAL directory and catalog commits per minute), in turn (the order alternates between runs, so drift falls on both):
   a fresh consumer group and data directory, and a fresh lake: `ducklake` — a new PostgreSQL
   database as the DuckLake catalog, data in the local directory; `iceberg` — a new namespace on
   the Iceberg REST catalog (its warehouse a local directory). `weir ingest` is started and its
   /metrics polled every 0.2 s (and its VmHWM) until
   weir_records_written_total{dataset="events"} == N; then SIGTERM (exit 0 expected) and the
   table's rows are counted (DuckDB for DuckLake, a pyiceberg scan for Iceberg; exactly N).
Prints per run and the median per target: end-to-end events/s, ceiling events/s, ratio, peak
RSS; the target checks (ratio >= 60 %, peak RSS <= flush.max_bytes + 64 MiB); with both targets,
Iceberg's events/s over DuckLake's per run and their median (target >= 90 %).

`--profiles plain,records` (issue 14) runs each target twice per run: `plain` as above and
`records` with the record stages on: 4 typed columns (uuid:uuid, timestamp:timestamptz,
team_id:bigint, distinct_id:varchar), a pre-write sort by team_id,timestamp and a VARIANT
companion of `properties` (an Iceberg table is then format version 3, counted through DuckDB's
iceberg extension since pyiceberg cannot load it); it prints records / plain events/s per run
and the median, per target.

Issue 12's series: `--variant LABEL:KEY=VALUE,...` (repeatable) runs every target once per
variant per run with those settings (a target may name one: `ducklake-wal@zstd`);
`--stop-when-consumed` times first record -> last commit without the final flush.interval wait
(SIGTERM once all is consumed; the drain commits at once; CPU from wait4, peak RSS from VmHWM
read until the exit);
`--ceiling-each-run`; `--perf DIR` records a flat perf profile of every run. Each run prints CPU
us/event, cores used and the load average; the summary checks issue 12's targets.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXTENSIONS = ROOT / ".deps" / "duckdb" / "extensions"
UNITS = {"": 1, "b": 1, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "kb": 1000, "mb": 10**6,
         "gb": 10**9}


def parse_bytes(text: str) -> int:
    m = re.fullmatch(r"\s*(\d+)\s*([a-zA-Z]*)\s*", text)
    if not m or m.group(2).lower() not in UNITS:
        raise SystemExit(f"not a byte size: {text}")
    return int(m.group(1)) * UNITS[m.group(2).lower()]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def unique(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:10]}"


def require_env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise SystemExit(f"{name} is not set: run under `python -m tests.harness run --only "
                         "kafka,postgres -- ...`")
    return value


def metric_sum(text: str, name: str, labels: str | None = None) -> int:
    """The sum of the samples of `name` (those whose label set contains `labels`, if given)."""
    total = 0.0
    for line in text.splitlines():
        if not line.startswith(name) or line.startswith("#"):
            continue
        head, _, value = line.rpartition(" ")
        metric = head.split("{", 1)[0]
        if metric != name or (labels and labels not in head):
            continue
        total += float(value)
    return int(total)


def vm_hwm_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def memory_kib(pid: int) -> dict:
    """VmRSS, RssAnon (private heap, the data) and RssFile (mapped libraries) of a live process."""
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key = line.split(":", 1)[0]
                if key in ("VmRSS", "RssAnon", "RssFile"):
                    out[key] = int(line.split()[1])
    except OSError:
        pass
    return out


def memory_at_peak(kib: dict, metrics: str) -> dict:
    """What the highest RSS seen was made of: the kernel's split, and weir's own gauges of the
    moment (its Arrow pools by stage, the buffered bytes, librdkafka's queued messages)."""
    pools = {stage: float(value) / (1 << 20) for stage, value in re.findall(
        r'^weir_arrow_pool_bytes\{stage="(\w+)"\} (\S+)$', metrics, re.M)}
    return {
        "rss_mib": kib.get("VmRSS", 0) / 1024,
        "anon_mib": kib.get("RssAnon", 0) / 1024,
        "file_mib": kib.get("RssFile", 0) / 1024,
        "pools_mib": pools,
        "buffer_mib": metric_sum(metrics, "weir_buffer_bytes") / (1 << 20),
        "fetchq_messages": metric_sum(metrics, "weir_librdkafka_fetchq_messages"),
    }


def format_memory(m: dict) -> str:
    if not m:
        return "not sampled"
    pools = ", ".join(f"{k} {v:.1f}" for k, v in sorted(m["pools_mib"].items())) or "none"
    return (f"RSS {m['rss_mib']:.1f} MiB = anonymous {m['anon_mib']:.1f} + file-backed "
            f"{m['file_mib']:.1f}; Arrow pools (MiB) {pools}; buffered {m['buffer_mib']:.1f} MiB; "
            f"librdkafka fetch queues {m['fetchq_messages']} messages")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a live process."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


COMMIT_LINE = re.compile(r"committed snapshot \d+: (\d+) rows, .*?(\d+) file\(s\), (\d+) bytes, "
                         r"write (\d+) ms, commit (\d+) ms")


def flush_summary(path: Path) -> dict:
    """Flushes in weir's log: count, rows, Parquet bytes, write and commit milliseconds."""
    rows, size, write, commit = [], [], [], []
    try:
        text = path.read_text(errors="replace")
    except OSError:
        text = ""
    for m in COMMIT_LINE.finditer(text):
        rows.append(int(m.group(1)))
        size.append(int(m.group(3)))
        write.append(int(m.group(4)))
        commit.append(int(m.group(5)))
    n = len(rows)
    return {
        "flushes": n,
        "rows_per_flush": sum(rows) / n if n else 0,
        "file_mib": sum(size) / n / (1 << 20) if n else 0,
        "write_ms": statistics.median(write) if n else 0,
        "commit_ms": statistics.median(commit) if n else 0,
        "write_s": sum(write) / 1000,
        "commit_s": sum(commit) / 1000,
    }


def count_commits_in_log(path: Path) -> int:
    """Catalog commits of the dataset `events` in weir's log (direct and WAL mode)."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return 0
    return len(re.findall(r"dataset events(?: committed snapshot|: WAL commit:)", text))


def wait_rusage(proc: subprocess.Popen, timeout: float):
    """Waits for `proc` like Popen.wait, returning (exit code, its rusage, its VmHWM in KiB as
    last read): the CPU of a process that has exited, which /proc no longer shows. The peak RSS
    is VmHWM, read every 10 ms until the exit: wait4's ru_maxrss is no measure of it, since
    Linux carries the forking parent's high-water mark across exec (here Python's)."""
    deadline = time.monotonic() + timeout
    hwm = 0
    while True:
        hwm = max(hwm, vm_hwm_kib(proc.pid))
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return proc.returncode, usage, hwm
        if time.monotonic() > deadline:
            raise subprocess.TimeoutExpired(proc.args, timeout)
        time.sleep(0.01)


def log_tail(path: Path, lines: int = 60) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError as e:
        return f"(no log: {e})"


def fill_topic(build: Path, bootstrap: str, topic: str, partitions: int, events: int,
               seed: int, compression: str) -> None:
    cmd = [str(build / "bench" / "bench_fill_topic"), "--bootstrap", bootstrap, "--topic", topic,
           "--partitions", str(partitions), "--events", str(events), "--seed", str(seed),
           "--compression", compression]
    print("$", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)


def consume_ceiling(build: Path, bootstrap: str, topic: str, events: int) -> float:
    cmd = [str(build / "bench" / "bench_consume_ceiling"), "--bootstrap", bootstrap, "--topic",
           topic, "--events", str(events)]
    print("$", " ".join(cmd), flush=True)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    print(out, end="", flush=True)
    m = re.search(r"CEILING_EVENTS_PER_S (\d+)", out)
    if not m:
        raise SystemExit("bench_consume_ceiling printed no CEILING_EVENTS_PER_S")
    return float(m.group(1))


def fresh_database(pg_url: str, pg_dsn: str) -> str:
    import psycopg

    name = unique("bench_lake")
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return f"{pg_dsn} dbname={name}"


def count_ducklake_rows(dsn: str, table: str) -> int:
    import duckdb

    con = duckdb.connect(config={"extension_directory": str(EXTENSIONS),
                                 "autoinstall_known_extensions": False,
                                 "autoload_known_extensions": False})
    try:
        con.execute("LOAD ducklake")
        con.execute("LOAD postgres_scanner")
        con.execute(f"ATTACH 'ducklake:postgres:{dsn}' AS lake (READ_ONLY)")
        return con.execute(f"SELECT count(*) FROM lake.{table}").fetchone()[0]
    finally:
        con.close()


# The record stages of the `records` profile (issue 14's benchmark).
RECORDS_PROFILE = {
    "WEIR_TYPED_COLUMNS": "uuid:uuid,timestamp:timestamptz,team_id:bigint,distinct_id:varchar",
    "WEIR_SORT_BY": "team_id,timestamp",
    "WEIR_VARIANT_COLUMNS": "properties",
}


def count_iceberg_rows_duckdb(rest_uri: str, namespace: str, table: str) -> int:
    """Rows of a (format 3) Iceberg table by DuckDB's iceberg_scan of its metadata file,
    checked against the current snapshot's total-records (read from the REST catalog)."""
    import json

    import duckdb

    with urllib.request.urlopen(f"{rest_uri}/v1/namespaces/{namespace}/tables/{table}",
                                timeout=30) as answer:
        loaded = json.load(answer)
    meta = loaded["metadata"]
    head = next(s for s in meta["snapshots"] if s["snapshot-id"] == meta["current-snapshot-id"])
    con = duckdb.connect(config={"extension_directory": str(EXTENSIONS),
                                 "autoinstall_known_extensions": False,
                                 "autoload_known_extensions": False})
    try:
        con.execute("LOAD iceberg")
        rows = con.execute(
            f"SELECT count(*) FROM iceberg_scan('{loaded['metadata-location']}')").fetchone()[0]
    finally:
        con.close()
    if int(head["summary"].get("total-records", -1)) != rows:
        raise RuntimeError(f"the scan read {rows} rows, the snapshot says "
                           f"{head['summary'].get('total-records')}")
    return rows


def count_iceberg_rows(rest_uri: str, namespace: str, table: str) -> int:
    """Rows of the Iceberg table by a pyiceberg scan of one column (every data file is read),
    checked against the current snapshot's total-records."""
    from pyiceberg.catalog.rest import RestCatalog

    tbl = RestCatalog("rest", uri=rest_uri).load_table((namespace, table))
    rows = tbl.scan(selected_fields=("uuid",)).to_arrow().num_rows
    summary = tbl.current_snapshot().summary.additional_properties
    if int(summary.get("total-records", -1)) != rows:
        raise RuntimeError(f"the scan read {rows} rows, the snapshot says "
                           f"{summary.get('total-records')}")
    return rows


def dir_bytes(path: Path) -> int:
    """Bytes of the regular files under `path` (0 while it does not exist)."""
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += os.stat(os.path.join(root, name)).st_size
            except OSError:
                pass  # renamed or deleted meanwhile
    return total


def run_weir(args, target: str, bootstrap: str, topic: str, run: int) -> dict:
    """One run of `target`: `ducklake` or `iceberg` (a -wal suffix: ingest.mode wal), with
    `:records` for the records profile."""
    target_base, _, variant = target.partition("@")
    lake, _, profile = target_base.partition(":")
    variant_sets = args.variants.get(variant, []) if variant else []
    work = Path(tempfile.mkdtemp(prefix=f"weir-e2e-bench-{run}-{lake}-{profile or 'plain'}-"
                                        f"{variant or 'base'}-"))
    wal = lake.endswith("-wal")
    lake = lake.removesuffix("-wal")
    port = free_port()
    log_path = work / "weir.log"
    env = dict(os.environ)
    env.update({
        "WEIR_KAFKA_BOOTSTRAP_SERVERS": bootstrap,
        "WEIR_TOPIC": topic,
        "WEIR_TABLE": "events",
        "WEIR_KAFKA_GROUP_ID": unique("bench_group"),
        "WEIR_FLUSH_MAX_BYTES": args.flush_max_bytes,
        "WEIR_FLUSH_INTERVAL": args.flush_interval,
        "WEIR_HTTP_PORT": str(port),
        "WEIR_LOG_LEVEL": "info",
    })
    if profile == "records":
        env.update(RECORDS_PROFILE)
    if wal:
        env.update({"WEIR_INGEST_MODE": "wal", "WEIR_WAL_DIR": str(work / "wal"),
                    "WEIR_WAL_COMMIT_INTERVAL": args.wal_commit_interval})
    if lake == "ducklake":
        dsn = fresh_database(args.pg_url, args.pg_dsn)
        env.update({
            "WEIR_CATALOG_KIND": "postgres",
            "WEIR_CATALOG_POSTGRES_DSN": dsn,
            "WEIR_STORAGE_DATA_PATH": str(work / "data") + "/",
        })
        where = f"catalog {dsn}"

        def count() -> int:
            return count_ducklake_rows(dsn, "events")
    else:
        namespace = unique("bench_lake")
        env.update({
            "WEIR_LAKE_FORMAT": "iceberg",
            "WEIR_ICEBERG_CATALOG": "rest",
            "WEIR_ICEBERG_URI": args.rest_uri,
            "WEIR_SCHEMA": namespace,
        })
        where = f"REST catalog {args.rest_uri}, namespace {namespace}"

        def count() -> int:
            if profile == "records":  # a variant column: format 3, which pyiceberg cannot load
                return count_iceberg_rows_duckdb(args.rest_uri, namespace, "events")
            return count_iceberg_rows(args.rest_uri, namespace, "events")
    binary = args.build / "weir"
    print(f"run {run} {target}: {binary} ingest {' '.join('--set ' + kv for kv in [*args.set, *variant_sets])}, "
          f"log {log_path}, {where}", flush=True)
    with open(log_path, "ab") as log:
        start = time.monotonic()
        load_start = os.getloadavg()
        sets = [*args.set, *variant_sets]
        proc = subprocess.Popen([str(binary), "ingest", *sum((["--set", kv] for kv in sets), [])],
                                env=env, cwd=work, stdout=log,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    profiler = None
    if args.perf:
        # A flat profile of the whole run (every thread), sampled at a low rate so that it costs
        # the run little: `perf report -i FILE --sort comm,dso,sym`.
        args.perf.mkdir(parents=True, exist_ok=True)
        data = args.perf / f"run{run}-{target.replace(':', '-').replace('@', '-')}.data"
        graph = ["--call-graph", args.perf_call_graph] if args.perf_call_graph else []
        profiler = subprocess.Popen(["perf", "record", "-F", str(args.perf_hz), *graph, "-p",
                                     str(proc.pid), "-o", str(data)],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/metrics"
    written = consumed = 0
    first_consumed = all_consumed = None
    text = ""
    peak_kib = 0
    peak_memory: dict = {}
    wal_peak = 0
    deadline = start + args.timeout
    try:
        while True:
            peak_kib = max(peak_kib, vm_hwm_kib(proc.pid))
            kib = memory_kib(proc.pid)
            if kib.get("VmRSS", 0) / 1024 > peak_memory.get("rss_mib", 0):
                peak_memory = memory_at_peak(kib, text)
            if wal:
                wal_peak = max(wal_peak, dir_bytes(work / "wal"))
            if proc.poll() is not None:
                raise RuntimeError(f"weir ingest exited with {proc.returncode} after "
                                   f"{time.monotonic() - start:.1f}s, {written} written")
            if time.monotonic() > deadline:
                raise RuntimeError(f"timed out after {args.timeout}s: {written} of "
                                   f"{args.events} written, {consumed} consumed")
            try:
                with urllib.request.urlopen(url, timeout=2) as response:
                    text = response.read().decode()
            except OSError:
                time.sleep(0.2)
                continue
            now = time.monotonic()
            written = metric_sum(text, "weir_records_written_total", 'dataset="events"')
            consumed = metric_sum(text, "weir_records_consumed_total")
            if first_consumed is None and consumed > 0:
                first_consumed = now
            if all_consumed is None and consumed >= args.events:
                all_consumed = now
                if args.stop_when_consumed:
                    # The drain writes and commits what is buffered at once: the final
                    # flush.interval wait is left out, the last commit is the exit.
                    proc.send_signal(signal.SIGTERM)
                    try:
                        code, usage, hwm = wait_rusage(proc, 600)
                    except subprocess.TimeoutExpired:
                        proc.kill()
                        proc.wait()
                        raise RuntimeError("weir ingest did not drain within 600 s of SIGTERM")
                    done = time.monotonic()
                    peak_kib = max(peak_kib, hwm)
                    cpu_s = usage.ru_utime + usage.ru_stime  # the drain included
                    commits = -1
                    break
            if written >= args.events:
                done = now
                cpu_s = cpu_seconds(proc.pid)
                commits = metric_sum(text, "weir_commits_total", 'dataset="events"')
                break
            time.sleep(0.2)
        if not (args.stop_when_consumed and commits == -1):
            peak_kib = max(peak_kib, vm_hwm_kib(proc.pid))
            proc.send_signal(signal.SIGTERM)
            try:
                code = proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                raise RuntimeError("weir ingest ignored SIGTERM for 120 s")
        else:
            commits = count_commits_in_log(log_path)
            written = args.events if code == 0 else written
        if code != 0:
            raise RuntimeError(f"weir ingest exited with {code} after SIGTERM")
        rows = count()
    except Exception as e:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        print(f"run {run} {target} FAILED: {e}\n--- weir log tail ({log_path}) ---\n{log_tail(log_path)}\n"
              "---", flush=True)
        raise SystemExit(1)
    if profiler is not None:
        try:
            profiler.wait(timeout=30)  # perf ends with the process it follows
        except subprocess.TimeoutExpired:
            profiler.send_signal(signal.SIGINT)
            profiler.wait()
    total_s = done - start
    load_end = os.getloadavg()
    flushes = flush_summary(log_path)
    stages = {f"{kind}:{stage}": float(value) for kind, stage, value in re.findall(
        r'^weir_stage_(busy|idle)_seconds_total\{stage="(\w+)"\} (\S+)$', text, re.M)}
    fresh = {stage: float(value) / (1 << 20) for stage, value in re.findall(
        r'^weir_arrow_pool_fresh_bytes_total\{stage="(\w+)"\} (\S+)$', text, re.M)}
    consumed_s = (all_consumed or done) - (first_consumed or start)
    from_first_s = done - (first_consumed or start)
    result = {
        "run": run,
        "target": target,
        "written": written,
        "rows": rows,
        "total_s": total_s,
        "from_first_s": from_first_s,
        "eps": args.events / total_s,
        "eps_from_first": args.events / from_first_s,
        "peak_mib": peak_kib / 1024,
        "exit": code,
        "cpu_s": cpu_s,
        "cpu_us_per_event": cpu_s * 1e6 / args.events,
        "consumed_s": consumed_s,
        "eps_consumed": args.events / consumed_s,
        "tail_s": done - (all_consumed or done),
        "stages": stages,
        "wal_peak_mib": wal_peak / (1 << 20),
        "cores": cpu_s / from_first_s,
        "drain_s": (done - all_consumed) if args.stop_when_consumed and all_consumed else 0.0,
        "load": f"{load_start[0]:.1f}->{load_end[0]:.1f}",
        "commits": commits,
        "commits_per_min": commits / (total_s / 60),
        "memory": peak_memory,
        **flushes,
    }
    print(f"run {run} {target}: {written} written in {total_s:.2f}s from start ({result['eps']:.0f} "
          f"events/s), {from_first_s:.2f}s from first consumed ({result['eps_from_first']:.0f} "
          f"events/s), peak RSS {result['peak_mib']:.1f} MiB, exit {code}, table rows {rows}",
          flush=True)
    print(f"run {run} {target}: {commits} catalog commits ({result['commits_per_min']:.1f} per "
          f"minute); peak WAL disk {result['wal_peak_mib']:.1f} MiB", flush=True)
    print(f"run {run} {target}: weir CPU {cpu_s:.1f} s over {total_s:.1f} s wall "
          f"({cpu_s / total_s:.0%} of one core); {flushes['flushes']} flushes of "
          f"{flushes['rows_per_flush']:.0f} rows ({flushes['file_mib']:.1f} MiB Parquet), median "
          f"write {flushes['write_ms']:.0f} ms, commit {flushes['commit_ms']:.0f} ms; total write "
          f"{flushes['write_s']:.1f} s, commit {flushes['commit_s']:.1f} s", flush=True)
    print(f"run {run} {target}: at the highest RSS sampled (every 0.2 s): "
          f"{format_memory(peak_memory)}", flush=True)
    print(f"run {run} {target}: {result['cores']:.2f} cores used from the first record; load "
          f"average (1 min) {result['load']}", flush=True)
    print(f"run {run} {target}: {result['cpu_us_per_event']:.2f} CPU us/event; all consumed "
          f"{consumed_s:.2f}s after the first ({result['eps_consumed']:.0f} events/s), last "
          f"commit {result['tail_s']:.2f}s after that ("
          f"{'the SIGTERM drain: last write and commit' if args.stop_when_consumed else 'the final flush.interval wait'}); stage "
          f"seconds {', '.join(f'{k} {v:.1f}' for k, v in sorted(stages.items()))}", flush=True)
    print(f"run {run} {target}: large blocks the Arrow pools took from the allocator instead of "
          f"reusing freed ones (MiB): "
          f"{', '.join(f'{k} {v:.0f}' for k, v in sorted(fresh.items())) or 'none'}", flush=True)
    if rows != args.events:
        print(f"run {run} {target} FAILED: the table has {rows} rows, expected {args.events}\n"
              f"--- weir log tail ({log_path}) ---\n{log_tail(log_path)}\n---", flush=True)
        raise SystemExit(1)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return result


def per_run_eps(results: list[dict]) -> str:
    return ", ".join(f"{r['eps_from_first']:.0f}" for r in results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", type=Path, default=ROOT / "build" / "release")
    parser.add_argument("--events", type=int, default=2_000_000)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--compression", default="lz4")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--flush-max-bytes", default="128MiB")
    parser.add_argument("--flush-interval", default="10s")
    parser.add_argument("--timeout", type=float, default=1800, help="per weir run, seconds")
    parser.add_argument("--topic", help="reuse this already filled topic (skips the fill)")
    parser.add_argument("--keep", action="store_true", help="keep data directories and logs")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a setting passed to weir ingest as --set KEY=VALUE (repeatable)")
    parser.add_argument("--targets", default="ducklake",
                        help="comma list of ducklake (PostgreSQL catalog) and iceberg (REST); "
                        "a -wal suffix (ducklake-wal, iceberg-wal) runs ingest.mode wal")
    parser.add_argument("--wal-commit-interval", default="20s",
                        help="wal.commit_interval of the -wal targets")
    parser.add_argument("--variant", action="append", default=[], metavar="LABEL:KEY=VALUE,...",
                        help="a series of runs with these extra settings, labelled LABEL "
                        "(repeatable): every target runs once per variant per run, e.g. "
                        "--variant lz4:parquet.compression=lz4 --variant w1:encode_threads=1")
    parser.add_argument("--stop-when-consumed", action="store_true",
                        help="SIGTERM weir as soon as every record is consumed and time its exit "
                        "(the drain writes and commits at once): first record -> last commit "
                        "without the final flush.interval wait")
    parser.add_argument("--perf", type=Path, metavar="DIR",
                        help="record a flat `perf` profile of every weir run into DIR")
    parser.add_argument("--perf-hz", type=int, default=99)
    parser.add_argument("--perf-call-graph", metavar="MODE",
                        help="record call chains too (perf's --call-graph: dwarf, fp); "
                             "`perf report --no-children -G` then names who called a hot leaf")
    parser.add_argument("--ceiling-each-run", action="store_true",
                        help="measure the ceiling before every run, not once")
    parser.add_argument("--profiles", default="plain",
                        help="comma list of plain and records (typed columns + sort + VARIANT)")
    args = parser.parse_args()
    args.build = args.build if args.build.is_absolute() else ROOT / args.build
    # A target may name its variant (ducklake-wal@zstd); one without runs every variant.
    listed = [t for t in args.targets.split(",") if t]
    lakes = list(dict.fromkeys(t.partition("@")[0] for t in listed))
    if not lakes or any(t.removesuffix("-wal") not in ("ducklake", "iceberg") for t in lakes):
        raise SystemExit(f"--targets: expected ducklake and/or iceberg, got {args.targets}")
    profiles = [p for p in args.profiles.split(",") if p]
    if not profiles or any(p not in ("plain", "records") for p in profiles):
        raise SystemExit(f"--profiles: expected plain and/or records, got {args.profiles}")
    args.variants = {}
    for spec in args.variant:
        label, sep, kvs = spec.partition(":")
        if not sep or not label or "@" in label:
            raise SystemExit(f"--variant: expected LABEL:KEY=VALUE[,KEY=VALUE...], got {spec}")
        args.variants[label] = [kv for kv in kvs.split(",") if kv]
    targets = []
    for entry in listed:
        lake, at, label = entry.partition("@")
        if at and label not in args.variants:
            raise SystemExit(f"--targets: {entry} names no --variant {label}")
        labels = [label] if at else list(args.variants) or [""]
        for label in labels:
            for p in profiles:
                targets.append(lake + ("" if p == "plain" else ":" + p) +
                               (f"@{label}" if label else ""))

    bootstrap = require_env("WEIR_TEST_KAFKA_BOOTSTRAP")
    if any(t.startswith("ducklake") for t in lakes):
        args.pg_dsn = require_env("WEIR_TEST_PG_DSN")
        args.pg_url = require_env("WEIR_TEST_PG_URL")
    if any(t.startswith("iceberg") for t in lakes):
        args.rest_uri = require_env("WEIR_TEST_ICEBERG_REST_URI")
    flush_bytes = parse_bytes(args.flush_max_bytes)

    topic = args.topic or unique("bench_e2e")
    if not args.topic:
        fill_topic(args.build, bootstrap, topic, args.partitions, args.events, args.seed,
                   args.compression)
    ceilings = [consume_ceiling(args.build, bootstrap, topic, args.events)]

    # Each run goes round the targets, the order alternating, so drift falls on all alike.
    results = []
    for run in range(1, args.runs + 1):
        if args.ceiling_each_run and run > 1:
            ceilings.append(consume_ceiling(args.build, bootstrap, topic, args.events))
        order = targets if run % 2 else list(reversed(targets))
        for target in order:
            results.append(run_weir(args, target, bootstrap, topic, run))

    ceiling = statistics.median(ceilings)
    print()
    print(f"ceiling (bench_consume_ceiling, events/s): {', '.join(f'{c:.0f}' for c in ceilings)}; "
          f"median {ceiling:.0f}")
    print(f"events {args.events}, topic {topic} ({args.partitions} partitions, "
          f"{args.compression}), flush.max_bytes {args.flush_max_bytes} ({flush_bytes} B), "
          f"flush.interval {args.flush_interval}, build {args.build}")
    header = (f"{'run':>4} {'target':>16} {'total_s':>8} {'e2e_ev/s':>10} {'first_s':>8} "
              f"{'first_ev/s':>10} {'ceiling':>10} {'ratio':>7} {'peakMiB':>8} {'rows':>9} "
              f"{'cpu%':>5} {'flushes':>7} {'write_ms':>8} {'commit_ms':>9} {'commits/min':>11} "
              f"{'walMiB':>7} {'us/ev':>6} {'cores':>5} {'tail_s':>6} {'load':>10}")
    print(header)
    for r in sorted(results, key=lambda r: (r["run"], targets.index(r["target"]))):
        print(f"{r['run']:>4} {r['target']:>16} {r['total_s']:>8.2f} {r['eps']:>10.0f} "
              f"{r['from_first_s']:>8.2f} {r['eps_from_first']:>10.0f} {ceiling:>10.0f} "
              f"{r['eps'] / ceiling:>7.1%} {r['peak_mib']:>8.1f} {r['rows']:>9} "
              f"{r['cpu_s'] / r['total_s']:>5.0%} {r['flushes']:>7} {r['write_ms']:>8.0f} "
              f"{r['commit_ms']:>9.0f} {r['commits_per_min']:>11.1f} {r['wal_peak_mib']:>7.1f} "
              f"{r['cpu_us_per_event']:>6.2f} {r['cores']:>5.2f} {r['tail_s']:>6.2f} "
              f"{r['load']:>10}")
    budget_mib = flush_bytes / (1 << 20) + 64
    medians = {}
    for target in targets:
        mine = [r for r in results if r["target"] == target]
        eps = statistics.median(r["eps"] for r in mine)
        eps_first = statistics.median(r["eps_from_first"] for r in mine)
        eps_consumed = statistics.median(r["eps_consumed"] for r in mine)
        cpu_us = statistics.median(r["cpu_us_per_event"] for r in mine)
        peak = statistics.median(r["peak_mib"] for r in mine)
        peak_max = max(r["peak_mib"] for r in mine)
        medians[target] = eps
        ratio = eps / ceiling
        print(f"{target} median: {eps:.0f} events/s end to end ({eps_first:.0f} from first "
              f"consumed), ceiling {ceiling:.0f} events/s, ratio {ratio:.1%}, peak RSS "
              f"{peak:.1f} MiB (max {peak_max:.1f}); first record to all consumed "
              f"{eps_consumed:.0f} events/s; {cpu_us:.2f} CPU us/event")
        print(f"{target} median: {statistics.median(r['cores'] for r in mine):.2f} cores used, "
              f"last commit {statistics.median(r['tail_s'] for r in mine):.2f} s after the last "
              f"record; per run events/s from first record: "
              f"{per_run_eps(mine)}")
        print(f"{target} median: {statistics.median(r['commits_per_min'] for r in mine):.1f} "
              f"catalog commits per minute, peak WAL disk "
              f"{statistics.median(r['wal_peak_mib'] for r in mine):.1f} MiB")
        print(f"{target} target ratio >= 60%: {'PASS' if ratio >= 0.6 else 'FAIL'} ({ratio:.1%})")
        print(f"{target} issue 12 targets: >= 200,000 events/s from the first record "
              f"{'PASS' if eps_first >= 200_000 else 'FAIL'} ({eps_first:.0f}); <= 5 CPU us/event "
              f"{'PASS' if cpu_us <= 5 else 'FAIL'} ({cpu_us:.2f}); peak RSS <= 256 MiB "
              f"{'PASS' if peak <= 256 else 'FAIL'} (median {peak:.1f})")
        print(f"{target} target peak RSS <= flush.max_bytes + 64 MiB = {budget_mib:.0f} MiB: "
              f"{'PASS' if peak_max <= budget_mib else 'FAIL'} (max {peak_max:.1f} MiB)")
    by_run = {}
    for r in results:
        by_run.setdefault(r["run"], {})[r["target"]] = r
    for lake in lakes:
        if lake + ":records" not in medians or lake not in medians:
            continue
        ratios = [pair[lake + ":records"]["eps"] / pair[lake]["eps"] for pair in by_run.values()]
        print(f"{lake}: records profile (4 typed columns + sort + VARIANT of properties) / plain "
              f"events/s per run: {', '.join(f'{x:.1%}' for x in ratios)}; median "
              f"{statistics.median(ratios):.1%}")
    for target in targets:  # WAL mode against direct mode, same lake and variant, per run
        lake, at, label = target.partition("@")
        if "-wal" not in lake:
            continue
        direct = lake.replace("-wal", "") + at + label
        if direct not in medians:
            continue
        ratios = [pair[target]["eps_from_first"] / pair[direct]["eps_from_first"]
                  for pair in by_run.values() if target in pair and direct in pair]
        print(f"{target} / {direct} events/s from the first record per run: "
              f"{', '.join(f'{x:.1%}' for x in ratios)}; median {statistics.median(ratios):.1%}")
    if "iceberg" in medians and "ducklake" in medians:
        by_run = {}
        for r in results:
            by_run.setdefault(r["run"], {})[r["target"]] = r
        ratios = [pair["iceberg"]["eps"] / pair["ducklake"]["eps"] for pair in by_run.values()]
        # (the iceberg / ducklake comparison is of the direct targets)
        rss = [pair["iceberg"]["peak_mib"] / pair["ducklake"]["peak_mib"]
               for pair in by_run.values()]
        ratio = statistics.median(ratios)
        print(f"iceberg / ducklake events/s per run: "
              f"{', '.join(f'{x:.1%}' for x in ratios)}; median {ratio:.1%}; peak RSS per run: "
              f"{', '.join(f'{x:.1%}' for x in rss)}")
        print(f"target iceberg within 10% of ducklake: {'PASS' if ratio >= 0.9 else 'FAIL'} "
              f"({ratio:.1%})")


if __name__ == "__main__":
    sys.exit(main())
