"""The wire benchmarks of `weir serve` (issue 4), run against a served DuckDB-made lake.

From the repository root (no harness component is needed):

    .deps/venv/bin/python bench/serve_bench.py --build build/h-bench --runs 3

Creates a lake (SQLite catalog, local data, one small table: the benchmark queries do not read
it), starts `<build>/weir serve` on a free port with a fresh TLS directory, runs
`<build>/bench/bench_serve` against it --runs times (each run: SELECT 1 round trips on one
session, simple and extended protocol; connection setups to the first result; the streamed
result in text and binary; the same query in-process through the DuckDB C API), and prints each
run and the medians next to the targets:
  SELECT 1 p50 <= 100 µs; connection setup p50 <= 20 ms; wire rows/s >= 80 % of in-process.
Also reports weir's peak RSS (VmHWM) after the runs. Stops weir with SIGTERM (exit 0 expected).

Comparisons in one run: --build may be repeated (LABEL=PATH names a build), and --users
write,read also runs every part as a read user (`--role read`, on the builds that know it). Each
build gets its own server; every run goes round all of them in turn, so drift on a shared
machine falls on each alike; the client is the first build's bench_serve for all. After the
per-target medians a table puts the targets side by side, e.g.

    .deps/venv/bin/python bench/serve_bench.py --build after=build/release \
        --build before=../wt-before/build/release --users write,read --runs 5
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.e2e.test_serve import PASSWORD, duckdb_lake, start_serve  # noqa: E402

READER, READER_PASSWORD = "analyst", "reader pass"


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def run_bench(build: Path, port: int, args: argparse.Namespace, user: str = "weir",
              password: str = PASSWORD) -> dict:
    command = [str(build / "bench" / "bench_serve"),
               "--conninfo", f"host=127.0.0.1 port={port} user={user} dbname=lake sslmode=require",
               "--round-trips", str(args.round_trips), "--connections", str(args.connections),
               "--rows", str(args.rows), "--formats", args.formats, "--parts", args.parts]
    if args.libpq_rows:
        command.append("--libpq-rows")
    print("$ " + " ".join(command), flush=True)
    run = subprocess.run(command, env=dict(os.environ, PGPASSWORD=password), capture_output=True,
                         text=True, timeout=args.timeout)
    print(run.stdout, end="")
    if run.returncode != 0:
        raise SystemExit(f"bench_serve failed ({run.returncode}): {run.stderr}")
    return json.loads(run.stdout.strip().splitlines()[-1])


def median_of(results: list[dict], *path: str) -> float | None:
    values = []
    for result in results:
        value = result
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        if value is not None:
            values.append(value)
    return statistics.median(values) if values else None


def report(results: list[dict], peak_mib: float) -> None:
    print(f"\nmedians over {len(results)} runs:")
    rows = [
        ("SELECT 1 simple p50 / p99 (µs)", ("select1_simple_us", "p50"),
         ("select1_simple_us", "p99"), "p50 <= 100 µs"),
        ("SELECT 1 extended p50 / p99 (µs)", ("select1_extended_us", "p50"),
         ("select1_extended_us", "p99"), "p50 <= 100 µs"),
        ("connect to first result p50 / p99 (ms)", ("connect_ms", "p50"), ("connect_ms", "p99"),
         "p50 <= 20 ms"),
        ("  of which PQconnectdb p50 / p99 (ms)", ("connect_ready_ms", "p50"),
         ("connect_ready_ms", "p99"), ""),
    ]
    for label, first, second, target in rows:
        a, b = median_of(results, *first), median_of(results, *second)
        if a is not None:
            print(f"  {label:42} {a:10.1f} / {b:10.1f}   {'target ' + target if target else ''}")
    inprocess = median_of(results, "inprocess", "rows_per_s")
    for fmt in ("text", "binary"):
        rate = median_of(results, f"stream_{fmt}", "rows_per_s")
        if rate is None:
            continue
        first = median_of(results, f"stream_{fmt}", "first_row_s")
        after = median_of(results, f"stream_{fmt}", "rows_per_s_after_first")
        ratio = median_of(results, f"ratio_{fmt}")
        ratio_text = f"{100 * ratio:5.1f} % of in-process" if ratio is not None else ""
        print(f"  stream {fmt:6} (rows/s)                    {rate:12.0f}   {ratio_text}   "
              f"target >= 80 %\n    first row after {first:.3f} s, then {after:.0f} rows/s")
        libpq = median_of(results, f"stream_{fmt}_libpq_rows", "rows_per_s")
        if libpq is not None:
            print(f"  stream {fmt:6} via libpq single-row (rows/s) {libpq:12.0f}")
    if inprocess is not None:
        print(f"  in-process DuckDB C API (rows/s)           {inprocess:12.0f}")
    print(f"  weir peak RSS: {peak_mib:.0f} MiB")
    print(json.dumps({"runs": results, "weir_peak_rss_mib": round(peak_mib, 1)}))


def add_users(build: Path, workdir: Path) -> bool:
    """The users file with the writer `weir` and the reader; false when this build has no
    --role (before issue 10)."""
    (workdir / "tls").mkdir(exist_ok=True)
    for user, password, role in [("weir", PASSWORD, "write"), (READER, READER_PASSWORD, "read")]:
        added = subprocess.run(
            [str(build / "weir"), "serve", "--tls-dir", str(workdir / "tls"), "--add-user", user,
             "--role", role], env=dict(os.environ, WEIR_SERVE_NEW_PASSWORD=password),
            capture_output=True, text=True, timeout=60)
        if added.returncode != 0:
            shutil.rmtree(workdir / "tls")
            return False
    return True


COMPARED = [("SELECT 1 simple p50 (µs)", ("select1_simple_us", "p50"), "{:.1f}"),
            ("SELECT 1 simple p99 (µs)", ("select1_simple_us", "p99"), "{:.1f}"),
            ("SELECT 1 extended p50 (µs)", ("select1_extended_us", "p50"), "{:.1f}"),
            ("connect to first result p50 (ms)", ("connect_ms", "p50"), "{:.2f}"),
            ("connect to first result p99 (ms)", ("connect_ms", "p99"), "{:.2f}"),
            ("stream text (M rows/s)", ("stream_text", "rows_per_s"), "{:.3f}"),
            ("stream binary (M rows/s)", ("stream_binary", "rows_per_s"), "{:.3f}"),
            ("in-process (M rows/s)", ("inprocess", "rows_per_s"), "{:.3f}")]


def compare(targets: list[dict]) -> None:
    labels = [t["label"] for t in targets]
    width = max(14, *(len(label) + 2 for label in labels))
    print(f"\nside by side (medians of {len(targets[0]['results'])} runs):")
    print(f"  {'':34}" + "".join(f"{label:>{width}}" for label in labels))
    for name, path, form in COMPARED:
        cells = []
        for t in targets:
            value = median_of(t["results"], *path)
            if value is not None and "rows_per_s" in path:
                value /= 1e6
            cells.append("-" if value is None else form.format(value))
        print(f"  {name:34}" + "".join(f"{cell:>{width}}" for cell in cells))
    print(f"  {'weir peak RSS (MiB)':34}" +
          "".join(f"{t['peak_mib']:>{width}.0f}" for t in targets))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", action="append", help="a build tree with weir (the first "
                        "also with bench/bench_serve); LABEL=PATH names it; repeat to compare "
                        "(default build/h-bench)")
    parser.add_argument("--users", default="write",
                        help="write,read: also as a read user, on the builds that know --role")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--round-trips", type=int, default=5000)
    parser.add_argument("--connections", type=int, default=200)
    parser.add_argument("--formats", default="text,binary")
    parser.add_argument("--parts", default="select1,connect,stream,inprocess")
    parser.add_argument("--libpq-rows", action="store_true",
                        help="also fetch through libpq's single-row mode (a client-bound figure)")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds per bench_serve run")
    parser.add_argument("--keep", action="store_true", help="keep the lake and weir's log")
    args = parser.parse_args()

    builds = []
    for spec in args.build or ["build/h-bench"]:
        label, _, path = spec.rpartition("=")
        builds.append((label or path, (ROOT / path).resolve()))
    client = builds[0][1]
    for binary in [client / "bench" / "bench_serve"] + [build / "weir" for _, build in builds]:
        if not binary.exists():
            raise SystemExit(f"{binary} missing: ninja -C <build> weir bench_serve")
    roles = args.users.split(",")
    servers, targets = [], []
    try:
        for label, build in builds:
            workdir = Path(tempfile.mkdtemp(prefix="serve_bench_"))
            lake = duckdb_lake(workdir, "CREATE TABLE t AS SELECT 1 AS x")
            has_reader = "read" in roles and add_users(build, workdir)
            port, process = start_serve(build, lake, workdir)
            server = {"label": label, "build": build, "workdir": workdir, "process": process}
            servers.append(server)
            for role in roles:
                if role == "read" and not has_reader:
                    print(f"{label}: no --role read in this build; the write user only")
                    continue
                user, password = (READER, READER_PASSWORD) if role == "read" else ("weir",
                                                                                  PASSWORD)
                targets.append({"label": label if len(roles) == 1 else f"{label}/{role}",
                                "port": port, "user": user, "password": password,
                                "server": server, "results": []})
        for run in range(args.runs):
            for target in targets:
                print(f"\nrun {run + 1}/{args.runs}: {target['label']}", flush=True)
                target["results"].append(run_bench(client, target["port"], args,
                                                   target["user"], target["password"]))
        for server in servers:
            server["peak_mib"] = peak_rss_mib(server["process"].pid)
    finally:
        failed = []
        for server in servers:
            server["process"].send_signal(signal.SIGTERM)
            code = server["process"].wait(timeout=120)
            if code != 0:
                print((server["workdir"] / "serve.log").read_text()[-4000:], file=sys.stderr)
                failed.append(f"{server['label']}: weir serve exited {code} after SIGTERM")
            if args.keep:
                print(f"kept {server['workdir']}")
            else:
                shutil.rmtree(server["workdir"], ignore_errors=True)
    if failed:
        raise SystemExit("; ".join(failed))
    for target in targets:
        target["peak_mib"] = target["server"]["peak_mib"]
        print(f"\n=== {target['label']}")
        report(target["results"], target["peak_mib"])
    if len(targets) > 1:
        compare(targets)


if __name__ == "__main__":
    main()
