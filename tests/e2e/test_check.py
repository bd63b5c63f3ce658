"""`weir check` (issue 18): every probe in parallel under check.timeout, one line per probe, and
no side effects — no catalog or lake created, the storage marker always deleted."""

from __future__ import annotations

import os
import re
import socket
import sqlite3
import subprocess
import time
from pathlib import Path

from tests.e2e.weir_run import Lake, create_topic, fresh_bucket, free_port, unique

# "<verdict>  <name>  <seconds>s  <detail>", as weir check prints each probe.
PROBE_LINE = re.compile(r"^(ok|FAILED|TIMEOUT) +(.+?) +(\d+\.\d{3})s  (.*)$")
TOTAL = re.compile(r"\((?:\d+ probes in )?(\d+\.\d{3})s\)$")


def clean_environment() -> dict[str, str]:
    """The process environment without weir's or the harness's own variables."""
    return {k: v for k, v in os.environ.items() if not k.startswith("WEIR_")}


def s3_env(s3: dict, data_path: str) -> dict[str, str]:
    return {
        "WEIR_STORAGE_DATA_PATH": data_path,
        "WEIR_STORAGE_S3_ACCESS_KEY_ID": s3["WEIR_TEST_S3_ACCESS_KEY"],
        "WEIR_STORAGE_S3_SECRET_ACCESS_KEY": s3["WEIR_TEST_S3_SECRET_KEY"],
        "WEIR_STORAGE_S3_REGION": s3["WEIR_TEST_S3_REGION"],
        "WEIR_STORAGE_S3_ENDPOINT": s3["WEIR_TEST_S3_ENDPOINT"],
        "WEIR_STORAGE_S3_USE_SSL": "false",
        "WEIR_STORAGE_S3_URL_STYLE": "path",
    }


class Check:
    """One `weir check` run: exit code, output, wall time and its probe lines by name."""

    def __init__(self, build_dir: Path, env: dict[str, str], cwd: Path):
        start = time.monotonic()
        run = subprocess.run([str(build_dir / "weir"), "check"], env=env, cwd=cwd,
                             capture_output=True, text=True, timeout=120)
        self.wall_s = time.monotonic() - start
        self.code = run.returncode
        self.stdout = run.stdout
        self.stderr = run.stderr
        self.probes: dict[str, tuple[str, float, str]] = {}
        for line in run.stdout.splitlines():
            match = PROBE_LINE.match(line)
            if match:
                verdict, name, seconds, detail = match.groups()
                self.probes[name] = (verdict, float(seconds), detail)
        summary = (run.stdout + run.stderr).strip().splitlines()[-1]
        total = TOTAL.search(summary)
        assert total, summary
        self.total_s = float(total.group(1))

    def __repr__(self) -> str:
        return f"exit {self.code}, {self.wall_s:.2f}s\n{self.stdout}\n{self.stderr}"


def test_unreachable_broker_catalog_and_bucket_fail_within_the_deadline_leaving_no_file(
        s3, build_dir, tmp_path):
    broker_port, catalog_port = free_port(), free_port()
    bucket = unique("nobucket").replace("_", "-")
    env = clean_environment()
    env.update(s3_env(s3, f"s3://{bucket}/lake/"))
    env.update({
        "WEIR_KAFKA_BOOTSTRAP_SERVERS": f"127.0.0.1:{broker_port}",
        "WEIR_TOPIC": "nope",
        "WEIR_TABLE": "t",
        "WEIR_CATALOG_KIND": "postgres",
        "WEIR_CATALOG_POSTGRES_DSN": f"host=127.0.0.1 port={catalog_port} user=x dbname=y",
        "WEIR_CHECK_TIMEOUT": "2s",
    })
    work = tmp_path / "cwd"
    work.mkdir()
    check = Check(build_dir, env, work)
    assert check.code == 1, check
    assert sorted(check.probes) == ["catalog", "storage", "topic nope"], check
    verdict, seconds, detail = check.probes["topic nope"]
    assert verdict == "FAILED", check
    assert detail == (f"broker 127.0.0.1:{broker_port}: topic nope: metadata request failed: "
                      "Local: Broker transport failure"), check
    verdict, seconds, detail = check.probes["catalog"]
    assert verdict == "FAILED", check
    assert detail.startswith("catalog.postgres_dsn (or catalog.postgres_*): cannot connect to the "
                             "PostgreSQL catalog: "), check
    assert f"port {catalog_port} failed: Connection refused" in detail, check
    verdict, seconds, detail = check.probes["storage"]
    assert verdict == "FAILED", check
    assert detail.startswith(f"storage.data_path s3://{bucket}/lake/ (writing a marker object "
                             ".weir-probe-"), check
    assert detail.endswith(")") and "The specified bucket does not exist" in detail, check
    assert check.stderr.endswith(
        f"weir check: 3 of 3 probes failed: topic nope, catalog, storage "
        f"({check.total_s:.3f}s)\n"), check
    # The deadline bounds every probe and the whole check (deadline + 1 s, as the issue asks);
    # the wall-clock bound is generous for process start on a busy machine.
    assert all(s <= 2.5 for _, s, _ in check.probes.values()), check
    assert check.total_s <= 3.0, check
    assert check.wall_s < 8.0, check
    assert list(work.iterdir()) == [], check


def silent_listener() -> socket.socket:
    """A loopback port that accepts connections (the kernel's backlog) and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    return listener


def test_silent_broker_and_catalog_time_out_at_the_deadline_and_nothing_is_created(
        build_dir, tmp_path):
    broker, catalog = silent_listener(), silent_listener()
    broker_port = broker.getsockname()[1]
    try:
        env = clean_environment()
        env.update({
            "WEIR_KAFKA_BOOTSTRAP_SERVERS": f"127.0.0.1:{broker_port}",
            "WEIR_TOPIC": "events",
            "WEIR_TABLE": "events",
            "WEIR_CATALOG_KIND": "postgres",
            "WEIR_CATALOG_POSTGRES_DSN":
                f"host=127.0.0.1 port={catalog.getsockname()[1]} user=x dbname=y",
            "WEIR_CHECK_TIMEOUT": "2s",
        })
        check = Check(build_dir, env, tmp_path)
    finally:
        broker.close()
        catalog.close()
    assert check.code == 1, check
    verdict, seconds, detail = check.probes["topic events"]
    assert detail == (f"broker 127.0.0.1:{broker_port}: topic events: metadata "
                      "request failed: Local: Broker transport failure"), check
    assert verdict == "FAILED", check
    assert 1.9 <= seconds <= 2.5, check
    verdict, seconds, detail = check.probes["catalog"]
    assert verdict == "FAILED" and "timeout expired" in detail, check
    assert 1.9 <= seconds <= 2.5, check
    # The default local data path does not exist: reported, not created.
    verdict, _, detail = check.probes["storage"]
    assert verdict == "ok", check
    assert detail == f"{tmp_path}/weir-lake/data/: none yet, would be created on first write"
    assert check.total_s <= 3.0, check
    assert check.wall_s < 8.0, check
    assert list(tmp_path.iterdir()) == [], check


def test_check_passes_on_a_new_lake_without_creating_it_and_deletes_its_marker(
        kafka, s3, build_dir, tmp_path):
    from pyarrow import fs

    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("check")
    create_topic(bootstrap, topic, 3)
    lake = Lake(tmp_path / "lake", storage="s3")
    lake.s3 = fresh_bucket(s3)
    env = clean_environment()
    env.update(lake.env())
    env.update({"WEIR_KAFKA_BOOTSTRAP_SERVERS": bootstrap, "WEIR_TOPIC": topic,
                "WEIR_TABLE": "events"})
    check = Check(build_dir, env, tmp_path)
    assert check.code == 0, check
    assert check.stdout.endswith("weir check: configuration valid; broker, catalog and storage "
                                 f"reachable (3 probes in {check.total_s:.3f}s)\n"), check
    assert check.probes[f"topic {topic}"] == (
        "ok", check.probes[f"topic {topic}"][1],
        f"3 partition(s) on {bootstrap} (dataset events → main.events)"), check
    assert check.probes["catalog"][0] == "ok", check
    assert check.probes["catalog"][2] == (f"SQLite {lake.sqlite_path}: no DuckLake catalog yet, "
                                          "would be created on first write"), check
    verdict, _, detail = check.probes["storage"]
    assert verdict == "ok", check
    assert re.fullmatch(rf"wrote, read and deleted {lake.data_path}\.weir-probe-[0-9a-f-]{{36}}",
                        detail), check
    assert "****" in check.stdout  # the S3 secret is masked, never printed
    assert lake.s3["secret_key"] not in check.stdout + check.stderr
    # Nothing left behind: no catalog file or directory, and no object in the bucket but the
    # empty "lake/" directory entry Arrow's S3 file system keeps once a prefix's last object is
    # deleted.
    assert list(tmp_path.iterdir()) == [], check
    store = fs.S3FileSystem(access_key=lake.s3["access_key"], secret_key=lake.s3["secret_key"],
                            region=lake.s3["region"], endpoint_override=lake.s3["endpoint"],
                            scheme="http")
    left = store.get_file_info(fs.FileSelector(lake.s3["bucket"], recursive=True))
    assert [(i.path, i.type) for i in left] == [(f"{lake.s3['bucket']}/lake",
                                                 fs.FileType.Directory)], left

    env["WEIR_TOPIC"] = unique("missing")
    missing = Check(build_dir, env, tmp_path)
    assert missing.code == 1, missing
    assert missing.probes[f"topic {env['WEIR_TOPIC']}"] == (
        "FAILED", missing.probes[f"topic {env['WEIR_TOPIC']}"][1],
        f"broker {bootstrap}: topic {env['WEIR_TOPIC']} does not exist"), missing
    assert missing.stderr.endswith(
        f"weir check: 1 of 3 probes failed: topic {env['WEIR_TOPIC']} "
        f"({missing.total_s:.3f}s)\n"), missing


def test_check_of_an_existing_catalog_changes_nothing_and_probes_its_data_path(
        kafka, build_dir, tmp_path, duckdb_extension_dir):
    import duckdb

    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("check")
    create_topic(bootstrap, topic, 1)
    catalog = tmp_path / "catalog.sqlite"
    recorded = tmp_path / "recorded"
    recorded.mkdir()
    con = duckdb.connect(config={"extension_directory": str(duckdb_extension_dir),
                                 "autoinstall_known_extensions": False})
    con.execute("LOAD ducklake")
    con.execute("LOAD sqlite_scanner")
    con.execute(f"ATTACH 'ducklake:sqlite:{catalog}' AS lake (DATA_PATH '{recorded}/')")
    con.close()
    # Write-ahead logging, as weir's own catalogs use it: a read-only connection would leave
    # catalog.sqlite-wal and -shm behind.
    with sqlite3.connect(catalog) as db:
        assert db.execute("PRAGMA journal_mode=WAL").fetchone() == ("wal",)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    env = clean_environment()
    env.update({"WEIR_KAFKA_BOOTSTRAP_SERVERS": bootstrap, "WEIR_TOPIC": topic,
                "WEIR_TABLE": "events", "WEIR_CATALOG_SQLITE_PATH": str(catalog),
                "WEIR_STORAGE_DATA_PATH": str(tmp_path / "configured")})
    check = Check(build_dir, env, tmp_path)
    assert check.code == 0, check
    assert check.probes["catalog"][2] == (f"SQLite {catalog}: DuckLake catalog with data path "
                                          f"{recorded}/"), check
    assert check.probes["storage"][2] == (f"{tmp_path}/configured/: none yet, would be created "
                                          "on first write"), check
    verdict, _, detail = check.probes["storage (the catalog's data path)"]
    assert verdict == "ok", check
    assert detail.startswith(f"wrote, read and deleted {recorded}/.weir-probe-"), check
    assert list(recorded.iterdir()) == [], check
    after = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    assert after == before, "the catalog file is unchanged (no ledger table added)"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["catalog.sqlite", "recorded"], check


def test_check_of_a_postgres_catalog_creates_no_table_and_names_a_role_that_may_not_write(
        kafka, postgres, build_dir, tmp_path):
    import psycopg

    from tests.e2e.weir_run import fresh_postgres_database

    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("check")
    create_topic(bootstrap, topic, 1)
    dsn = fresh_postgres_database(postgres)
    env = clean_environment()
    env.update({"WEIR_KAFKA_BOOTSTRAP_SERVERS": bootstrap, "WEIR_TOPIC": topic,
                "WEIR_TABLE": "events", "WEIR_CATALOG_KIND": "postgres",
                "WEIR_CATALOG_POSTGRES_DSN": dsn,
                "WEIR_STORAGE_DATA_PATH": str(tmp_path / "data")})
    check = Check(build_dir, env, tmp_path)
    assert check.code == 0, check
    assert check.probes["catalog"][2] == ("PostgreSQL catalog: no DuckLake catalog yet, would be "
                                          "created on first write"), check
    with psycopg.connect(dsn) as conn:
        tables = conn.execute("SELECT table_name FROM information_schema.tables "
                              "WHERE table_schema NOT IN ('pg_catalog', 'information_schema')")
        assert tables.fetchall() == [], "weir check created catalog tables"

    # A role without CREATE in the schema (PostgreSQL 15 grants it to the owner only).
    role = unique("reader")
    with psycopg.connect(postgres["WEIR_TEST_PG_URL"], autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN")
    env["WEIR_CATALOG_POSTGRES_DSN"] = re.sub(r"\buser=\S+", f"user={role}", dsn)
    denied = Check(build_dir, env, tmp_path)
    assert denied.code == 1, denied
    assert denied.probes["catalog"] == (
        "FAILED", denied.probes["catalog"][1],
        f"PostgreSQL catalog: weir could not write to it: role {role} may not CREATE tables in "
        "the current schema"), denied
    assert list(tmp_path.iterdir()) == [], denied


def iceberg_check_env(bootstrap: str, topic: str, **settings: str) -> dict[str, str]:
    env = clean_environment()
    env.update({"WEIR_KAFKA_BOOTSTRAP_SERVERS": bootstrap, "WEIR_TOPIC": topic,
                "WEIR_TABLE": "events", "WEIR_LAKE_FORMAT": "iceberg",
                "WEIR_CHECK_TIMEOUT": "10s"})
    env.update(settings)
    return env


def test_check_of_an_iceberg_sql_lake_on_s3_probes_catalog_and_warehouse(
        kafka, s3, build_dir, tmp_path):
    from pyarrow import fs

    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("check")
    create_topic(bootstrap, topic, 2)
    bucket = fresh_bucket(s3)
    warehouse = f"s3://{bucket['bucket']}/warehouse"
    env = iceberg_check_env(bootstrap, topic, WEIR_ICEBERG_WAREHOUSE=warehouse)
    env.update({k: v for k, v in s3_env(s3, "unused/").items()
                if k != "WEIR_STORAGE_DATA_PATH"})
    check = Check(build_dir, env, tmp_path)
    assert check.code == 0, check
    sqlite = "weir-lake/catalog.db"
    assert check.probes["catalog"][:1] + check.probes["catalog"][2:] == (
        "ok", f"Iceberg SQL catalog (SQLite {sqlite}): none yet, would be created on first "
        "write"), check
    verdict, _, detail = check.probes["storage"]
    assert verdict == "ok", check
    assert re.fullmatch(rf"wrote, read and deleted {warehouse}/\.weir-probe-[0-9a-f-]{{36}}",
                        detail), check
    # No catalog file, no marker left in the bucket.
    assert list(tmp_path.iterdir()) == [], check
    store = fs.S3FileSystem(access_key=bucket["access_key"], secret_key=bucket["secret_key"],
                            region=bucket["region"], endpoint_override=bucket["endpoint"],
                            scheme="http")
    left = store.get_file_info(fs.FileSelector(bucket["bucket"], recursive=True))
    assert [i.path for i in left if i.type == fs.FileType.File] == [], left

    # A bucket that does not exist (moto takes any key): the storage probe fails naming the
    # warehouse setting and the bucket.
    missing = f"s3://{unique('nobucket').replace('_', '-')}/warehouse"
    env["WEIR_ICEBERG_WAREHOUSE"] = missing
    bad = Check(build_dir, env, tmp_path)
    assert bad.code == 1, bad
    verdict, _, detail = bad.probes["storage"]
    assert verdict == "FAILED", bad
    assert detail.startswith(f"iceberg.warehouse {missing} (writing a marker object"), bad
    assert "NO_SUCH_BUCKET" in detail, bad
    assert bad.stderr.endswith(f"weir check: 1 of 3 probes failed: storage "
                               f"({bad.total_s:.3f}s)\n"), bad


def test_check_of_an_iceberg_rest_catalog_probes_config_and_the_table(
        kafka, iceberg_rest, build_dir, tmp_path):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("check")
    create_topic(bootstrap, topic, 2)
    uri = iceberg_rest["WEIR_TEST_ICEBERG_REST_URI"]
    namespace = unique("ns")
    env = iceberg_check_env(bootstrap, topic, WEIR_ICEBERG_CATALOG="rest", WEIR_ICEBERG_URI=uri,
                            WEIR_SCHEMA=namespace)
    check = Check(build_dir, env, tmp_path)
    assert check.code == 0, check
    assert check.probes["catalog"][:1] + check.probes["catalog"][2:] == (
        "ok", f"Iceberg REST catalog {uri}; {namespace}.events: not created yet"), check
    assert "storage" not in check.probes, check  # the server chooses where tables live

    # An existing table: its location is reported and its storage probed (a local directory).
    from pyiceberg.catalog.rest import RestCatalog
    import pyarrow as pa

    catalog = RestCatalog("rest", uri=uri)
    catalog.create_namespace(namespace)
    table = catalog.create_table((namespace, "events"), schema=pa.schema([("id", pa.int64())]))
    location = table.metadata.location
    again = Check(build_dir, env, tmp_path)
    assert again.code == 0, again
    assert again.probes["catalog"][2] == (
        f"Iceberg REST catalog {uri}; {namespace}.events at {location}"), again
    verdict, _, detail = again.probes[f"storage (table at {location})"]
    assert verdict == "ok", again
    assert re.fullmatch(rf"wrote, read and deleted {location}/\.weir-probe-[0-9a-f-]{{36}}",
                        detail), again

    # A catalog URI nobody answers: the catalog probe fails naming iceberg.uri.
    dead = f"http://127.0.0.1:{free_port()}"
    env["WEIR_ICEBERG_URI"] = dead
    bad = Check(build_dir, env, tmp_path)
    assert bad.code == 1, bad
    verdict, _, detail = bad.probes["catalog"]
    assert verdict == "FAILED", bad
    assert detail.startswith(f"iceberg.uri {dead}"), bad
    assert bad.stderr.endswith(f"weir check: 1 of 2 probes failed: catalog "
                               f"({bad.total_s:.3f}s)\n"), bad
