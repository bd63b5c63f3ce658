"""The quickstart's job, run with a local broker up (scripts/quickstart starts it).

Produces sample PostHog-like events to a fresh topic, runs `weir ingest` into ./weir-lake/
until every event is committed, stops it with SIGTERM (a clean drain), and queries the table
with DuckDB. `--format iceberg` writes the embedded Iceberg lake instead (the SQL catalog
./weir-lake/catalog.db, tables in ./weir-lake/warehouse/) and reads it with pyiceberg and
DuckDB's iceberg_scan.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.e2e.weir_run import EXTENSIONS, Lake, create_topic, free_port, produce, wait_for  # noqa: E402

EVENT_NAMES = ["$pageview", "$autocapture", "signed_up", "purchase", "$pageleave"]


def sample_events(count: int, seed: int):
    rng = random.Random(seed)
    import json

    for i in range(count):
        team = rng.choice([1, 2, 7, 42])
        body = {
            "uuid": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
            "event": rng.choice(EVENT_NAMES),
            "distinct_id": f"user-{rng.randrange(2000)}",
            "team_id": team,
            "timestamp": f"2026-11-{rng.randrange(1, 29):02}T{rng.randrange(24):02}:00:00Z",
            "properties": {"$browser": rng.choice(["Chrome", "Firefox", "Safari"]),
                           "$current_url": f"https://example.com/p/{rng.randrange(50)}",
                           "revenue": round(rng.uniform(1, 100), 2)},
            "seq": i,
        }
        yield str(team).encode(), json.dumps(body).encode()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=50_000)
    parser.add_argument("--lake", default=str(ROOT / "weir-lake"))
    parser.add_argument("--format", choices=["ducklake", "iceberg"], default="ducklake")
    parser.add_argument("--build-dir", default=str(ROOT / "build" / "quickstart"))
    args = parser.parse_args()
    if args.format == "iceberg":
        return run_iceberg(args)

    bootstrap = os.environ["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = f"quickstart-{int(time.time())}"
    create_topic(bootstrap, topic, 8)
    produced = produce(bootstrap, topic, sample_events(args.events, seed=time.time_ns()))
    print(f"[quickstart] produced {produced} events to topic {topic} on {bootstrap}")

    lake_dir = Path(args.lake)
    lake_dir.mkdir(parents=True, exist_ok=True)
    lake = Lake(lake_dir)
    before = lake.count("events")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("WEIR_")}
    command = [str(Path(args.build_dir) / "weir"), "ingest",
               "--bootstrap-servers", bootstrap, "--topic", topic, "--table", "events",
               "--catalog-sqlite", str(lake.sqlite_path), "--data-path", lake.data_path,
               "--flush-interval", "2s", "--http-port", str(port)]
    print("[quickstart] " + " ".join(command))
    weir = subprocess.Popen(command, env=env)
    try:
        wait_for(lambda: lake.count("events") >= before + produced or weir.poll() is not None,
                 300, "every event committed")
    finally:
        weir.terminate()
        code = weir.wait(timeout=120)
    if code != 0:
        print(f"[quickstart] weir ingest exited with {code}", file=sys.stderr)
        return 1
    con = lake.connect()
    print(f"\n[quickstart] the lake at {lake_dir} (SQLite catalog, Parquet files), read by DuckDB:")
    print(con.sql("SELECT count(*) AS events, count(DISTINCT uuid) AS distinct_uuids, "
                  "count(DISTINCT distinct_id) AS users FROM lake.events"))
    print(con.sql("SELECT event, count(*) AS n, round(sum(json_extract(properties, '$.revenue')::DOUBLE), 2) "
                  "AS revenue FROM lake.events GROUP BY event ORDER BY n DESC"))
    print(con.sql("SELECT snapshot_id, changes FROM lake.snapshots() ORDER BY snapshot_id DESC LIMIT 3"))
    con.close()
    weir_bin = Path(args.build_dir) / "weir"
    print("[quickstart] next: serve the lake over the PostgreSQL protocol as user weir with a "
          "password you choose, then query it from another terminal:\n"
          f"  WEIR_SERVE_PASSWORD=choose-one {weir_bin} serve --catalog-sqlite {lake.sqlite_path}\n"
          "  PGPASSWORD=choose-one psql \"host=127.0.0.1 port=5432 user=weir dbname=lake "
          "sslmode=require\" -c 'SELECT event, count(*) FROM events GROUP BY event'")
    return 0


def run_iceberg(args) -> int:
    from pyiceberg.catalog.sql import SqlCatalog

    bootstrap = os.environ["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = f"quickstart-{int(time.time())}"
    create_topic(bootstrap, topic, 8)
    produced = produce(bootstrap, topic, sample_events(args.events, seed=time.time_ns()))
    print(f"[quickstart] produced {produced} events to topic {topic} on {bootstrap}")
    lake_dir = Path(args.lake)
    lake_dir.mkdir(parents=True, exist_ok=True)
    catalog = SqlCatalog("weir", uri=f"sqlite:///{lake_dir / 'catalog.db'}",
                         warehouse=(lake_dir / "warehouse").as_uri())

    def count() -> int:
        try:
            snapshot = catalog.load_table(("main", "events")).current_snapshot()
        except Exception:  # no catalog or table yet
            return 0
        return int(snapshot.summary.additional_properties["total-records"]) if snapshot else 0

    before = count()
    env = {k: v for k, v in os.environ.items() if not k.startswith("WEIR_")}
    command = [str(Path(args.build_dir) / "weir"), "ingest",
               "--bootstrap-servers", bootstrap, "--topic", topic, "--table", "events",
               "--set", "lake.format=iceberg",
               "--set", f"iceberg.sqlite_path={lake_dir / 'catalog.db'}",
               "--set", f"iceberg.warehouse={lake_dir / 'warehouse'}",
               "--flush-interval", "2s", "--http-port", str(free_port())]
    print("[quickstart] " + " ".join(command))
    weir = subprocess.Popen(command, env=env)
    try:
        wait_for(lambda: count() >= before + produced or weir.poll() is not None, 300,
                 "every event committed")
    finally:
        weir.terminate()
        code = weir.wait(timeout=120)
    if code != 0:
        print(f"[quickstart] weir ingest exited with {code}", file=sys.stderr)
        return 1
    table = catalog.load_table(("main", "events"))
    print(f"\n[quickstart] the Iceberg table {table.metadata_location}, read by pyiceberg: "
          f"{table.scan().to_arrow().num_rows} rows")
    import duckdb

    con = duckdb.connect(config={"extension_directory": str(EXTENSIONS),
                                 "autoinstall_known_extensions": False})
    con.execute("LOAD iceberg")
    print(con.sql("SELECT event, count(*) AS n, count(DISTINCT uuid) AS distinct_uuids FROM "
                  f"iceberg_scan('{table.metadata_location}') GROUP BY event ORDER BY n DESC"))
    con.close()
    # weir serve reads Iceberg through a REST catalog only; this lake's catalog is SQLite.
    print("[quickstart] next: this Iceberg lake's catalog is the SQLite file "
          f"{lake_dir / 'catalog.db'} (a SQL catalog), which `weir serve` does not serve (it "
          "reads Iceberg through a REST catalog). Query it with any Iceberg reader, e.g. "
          "DuckDB:\n"
          f"  duckdb -c \"LOAD iceberg; SELECT count(*) FROM iceberg_scan("
          f"'{table.metadata_location}')\"  (the newest metadata file at this moment)\n"
          "or pyiceberg: SqlCatalog('weir', uri='sqlite:///"
          f"{lake_dir / 'catalog.db'}', warehouse='{(lake_dir / 'warehouse').as_uri()}')"
          ".load_table(('main', 'events')).scan().to_arrow()")
    return 0


if __name__ == "__main__":
    sys.exit(main())
