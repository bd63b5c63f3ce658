"""Proofs 9 and 10 of the ingest issue: a millpond deployment's environment runs the same job,
and bad configuration stops `weir ingest` before it consumes, naming the setting; and issue
11's proof 8: the same for Iceberg (the millpond job into the embedded Iceberg lake, bad Iceberg
settings, and a transform that cannot take its column's type once that type is known)."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from tests.e2e.test_ingest_iceberg import IcebergLake
from tests.e2e.weir_run import (
    Lake,
    WeirIngest,
    create_topic,
    event_records,
    fresh_postgres_database,
    free_port,
    produce,
    unique,
    wait_for,
)


def clean_environment() -> dict[str, str]:
    """The process environment without weir's or the harness's own variables."""
    return {k: v for k, v in os.environ.items() if not k.startswith("WEIR_")}


def millpond_environment(bootstrap: str, topic: str) -> dict[str, str]:
    """What a millpond deployment sets, but for its DuckLake catalog and data path."""
    env = clean_environment()
    env.update({
        "KAFKA_BOOTSTRAP_SERVERS": bootstrap,
        "KAFKA_TOPIC": topic,
        "REPLICA_COUNT": "1",
        "POD_NAME": "millpond-0",
        "KAFKA_AUTO_OFFSET_RESET": "earliest",
        "KAFKA_CONSUMER_SOCKET_KEEPALIVE_ENABLE": "true",
        "FLUSH_SIZE": "1048576",
        "FLUSH_INTERVAL_MS": "1000",
        "CONSUME_BATCH_SIZE": "500",
        "FETCH_MIN_BYTES": "1",
        "FETCH_MAX_WAIT_MS": "100",
        "DUCKLAKE_TABLE": "events",
        "DUCKLAKE_SCHEMA": "main",
        "DUCKLAKE_PARTITION_BY": "year(_inserted_at),month(_inserted_at)",
        "MILLPOND_HTTP_PORT": str(free_port()),
        "LOG_LEVEL": "INFO",
    })
    return env


def run_millpond_job(build_dir, env: dict[str, str], root, landed) -> str:
    """Runs weir ingest as millpond would until `landed()`; returns its log."""
    root.mkdir(parents=True, exist_ok=True)
    log = root / "millpond.log"
    with open(log, "wb") as out:
        process = subprocess.Popen([str(build_dir / "weir"), "ingest"], env=env, cwd=root,
                                   stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_for(lambda: landed() or process.poll() is not None, 90, "the millpond job's rows")
        assert process.poll() is None, log.read_text()
    finally:
        process.terminate()
        code = process.wait(timeout=100)
    text = log.read_text()
    assert code == 0, text
    return text


def test_a_millpond_environment_runs_the_same_job(kafka, postgres, build_dir, tmp_path):
    import psycopg

    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("millpond")
    create_topic(bootstrap, topic, 4)
    produce(bootstrap, topic, event_records(0, 5000))
    lake = Lake(tmp_path / "lake", catalog="postgres")
    lake.postgres_dsn = fresh_postgres_database(postgres)
    parts = dict(item.split("=", 1) for item in lake.postgres_dsn.split())
    env = millpond_environment(bootstrap, topic)
    env.update({
        "DUCKLAKE_DATA_PATH": lake.data_path,
        "DUCKLAKE_CONNECTION": "ducklake:postgres:ignored",
        "DUCKLAKE_RDS_HOST": parts["host"],
        "DUCKLAKE_RDS_PORT": parts["port"],
        "DUCKLAKE_RDS_DATABASE": parts["dbname"],
        "DUCKLAKE_RDS_USERNAME": parts["user"],
        "DUCKLAKE_RDS_PASSWORD": "unused-with-trust-auth",
    })
    text = run_millpond_job(build_dir, env, lake.root, lambda: lake.count("events") >= 5000)
    assert lake.scalar("SELECT count(DISTINCT id) FROM lake.events") == 5000
    # millpond's group id form, offsets committed to Kafka after the lake commit
    assert f"kafka.group_id = millpond-{topic}-events" in text
    assert "DUCKLAKE_CONNECTION" in text  # reported as not used, not silently ignored
    con = lake.connect()
    partition = con.execute(
        "SELECT partition_key_index, transform FROM postgres_scan(?, 'public', "
        "'ducklake_partition_column') ORDER BY 1", [lake.postgres_dsn]).fetchall()
    assert partition == [(0, "year"), (1, "month")]
    con.close()
    with psycopg.connect(lake.postgres_dsn) as conn:
        assert conn.execute("SELECT sum(next_offset) FROM weir_offset_ledger").fetchone() == (5000,)


@pytest.mark.parametrize(
    "setting,value,message",
    [
        ("WEIR_TOPIC", None, "topic"),
        ("WEIR_PARTITION_BY", "week(_inserted_at)", "partition_by"),
        ("WEIR_FLUSH_MAX_BYTES", "-5", "flush.max_bytes"),
        ("WEIR_CATALOG_POSTGRES_DSN", "host=127.0.0.1 port={closed} user=x dbname=y",
         "catalog.postgres_dsn"),
    ],
)
def test_bad_configuration_stops_before_consuming(setting, value, message, kafka, build_dir,
                                                   tmp_path):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("badconfig")
    create_topic(bootstrap, topic, 1)
    env = clean_environment()
    env.update({
        "WEIR_KAFKA_BOOTSTRAP_SERVERS": bootstrap,
        "WEIR_TOPIC": topic,
        "WEIR_TABLE": "events",
        "WEIR_HTTP_PORT": "0",
        "WEIR_COMMIT_MAX_ATTEMPTS": "2",
    })
    if setting == "WEIR_CATALOG_POSTGRES_DSN":
        env["WEIR_CATALOG_KIND"] = "postgres"
    if value is None:
        env.pop(setting)
    else:
        env[setting] = value.format(closed=free_port())
    result = subprocess.run([str(build_dir / "weir"), "ingest"], env=env, cwd=tmp_path,
                            capture_output=True, text=True, timeout=120)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert message in output, output
    assert "assigned" not in output  # never joined the group
    assert not (tmp_path / "weir-lake" / "data" / "main").exists()


def test_a_millpond_environment_runs_the_same_job_into_iceberg(kafka, build_dir, tmp_path):
    """The millpond deployment's environment plus lake.format iceberg: the same job lands in the
    embedded Iceberg lake (weir-lake/), partitioned by millpond's DUCKLAKE_PARTITION_BY."""
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("millpond_iceberg")
    create_topic(bootstrap, topic, 4)
    produce(bootstrap, topic, event_records(0, 5000))
    lake = IcebergLake(tmp_path / "lake")
    env = millpond_environment(bootstrap, topic)
    env["WEIR_LAKE_FORMAT"] = "iceberg"
    text = run_millpond_job(build_dir, env, lake.root, lambda: lake.count("events") >= 5000)
    assert f"kafka.group_id = millpond-{topic}-events" in text
    table = lake.table("events")
    ids = table.scan(selected_fields=("id",)).to_arrow().column("id").to_pylist()
    assert (len(ids), len(set(ids)), sum(ids)) == (5000, 5000, 5000 * 4999 // 2)
    spec = [(f.name, str(f.transform)) for f in table.spec().fields]
    assert spec == [("_inserted_at_year", "year"), ("_inserted_at_month", "month")]
    ledger = json.loads(table.current_snapshot().summary.additional_properties[
        f"weir.offsets.{topic}"])
    assert sum(ledger.values()) == 5000


def iceberg_environment(bootstrap: str, topic: str) -> dict[str, str]:
    env = clean_environment()
    env.update({
        "WEIR_KAFKA_BOOTSTRAP_SERVERS": bootstrap,
        "WEIR_TOPIC": topic,
        "WEIR_TABLE": "events",
        "WEIR_HTTP_PORT": "0",
        "WEIR_COMMIT_MAX_ATTEMPTS": "2",
        "WEIR_LAKE_FORMAT": "iceberg",
    })
    return env


@pytest.mark.parametrize(
    "settings,message",
    [
        ({"WEIR_ICEBERG_CATALOG": "rest"}, "iceberg.uri: required when iceberg.catalog is rest"),
        ({"WEIR_ICEBERG_CATALOG": "rest", "WEIR_ICEBERG_URI": "127.0.0.1:8181"},
         "is not an http(s):// URI"),
        ({"WEIR_ICEBERG_CATALOG": "rest", "WEIR_ICEBERG_URI": "http://127.0.0.1:{closed}"},
         "iceberg.uri"),
        ({"WEIR_ICEBERG_CATALOG": "sql", "WEIR_ICEBERG_POSTGRES_DSN":
          "host=127.0.0.1 port={closed} user=x dbname=y"}, "iceberg.postgres_dsn"),
        ({"WEIR_PARTITION_BY": "week(_inserted_at)"}, "partition_by"),
        ({"WEIR_PARTITION_BY": "sqrt(id)"}, "partition_by"),
        ({"WEIR_PARTITION_BY": "bucket[0](id)"}, "partition_by"),
        ({"WEIR_PARTITION_BY": "truncate[0](name)"}, "partition_by"),
        # _inserted_at's type is known before anything is consumed.
        ({"WEIR_PARTITION_BY": "truncate[4](_inserted_at)"}, "partition_by"),
        ({"WEIR_PARTITION_BY": "bucket[8](_inserted_at),sqrt(id)"}, "partition_by"),
    ],
    ids=["no-uri", "uri-not-http", "rest-unreachable", "postgres-unreachable", "unknown-transform",
         "unknown-function", "bucket-0", "truncate-0", "truncate-timestamp", "one-of-two-bad"],
)
def test_bad_iceberg_configuration_stops_before_consuming(settings, message, kafka, build_dir,
                                                          tmp_path):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("badiceberg")
    create_topic(bootstrap, topic, 1)
    produce(bootstrap, topic, event_records(0, 10))
    env = iceberg_environment(bootstrap, topic)
    closed = free_port()
    env.update({k: v.format(closed=closed) for k, v in settings.items()})
    result = subprocess.run([str(build_dir / "weir"), "ingest"], env=env, cwd=tmp_path,
                            capture_output=True, text=True, timeout=120)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert message in output, output
    assert "assigned" not in output  # never joined the group
    assert not (tmp_path / "weir-lake" / "warehouse" / "main").exists()  # no table made


@pytest.mark.parametrize("key,column_type", [("bucket[4](score)", "double"),
                                             ("truncate[4](ok)", "boolean")])
def test_a_transform_its_column_cannot_take_stops_once_the_type_is_known(
    key, column_type, kafka, build_dir, tmp_path
):
    """A bucket of a double or a truncate of a boolean: the column's type is known from the first
    batch when weir creates the table, so weir stops there, naming the setting, with nothing
    created or committed (the events are all read again once the setting is fixed); on a table
    that exists the type is known at once, so weir stops before it consumes."""
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("badtype")
    total = 2000
    create_topic(bootstrap, topic, 2)
    produce(bootstrap, topic, event_records(0, total))
    lake = IcebergLake(tmp_path / "lake")
    group = unique("group")
    expected = f"partition_by: Iceberg cannot partition main.events by {key}: column " \
               f"{key[key.index('(') + 1:-1]} is {column_type}"

    def run(settings: dict[str, str]) -> WeirIngest:
        return WeirIngest(build_dir, lake, bootstrap, topic, "events", group, settings).start()

    # A new table: the first batch shows the type; nothing is created.
    weir = run({"WEIR_PARTITION_BY": key})
    assert weir.process.wait(timeout=120) != 0, weir.log()
    assert expected in weir.log_path.read_text(), weir.log()
    assert lake.count("events") == 0
    assert not (lake.root / "weir-lake" / "warehouse" / "main" / "events").exists()
    # Fixed: every event lands (nothing was lost with the failed run).
    weir = run({})
    try:
        wait_for(lambda: lake.count("events") >= total or not weir.alive(), 120, "every event")
    finally:
        assert weir.stop() == 0, weir.log()
    snapshot = lake.table("events").current_snapshot().snapshot_id
    # The table exists: its column's type is known at startup, before anything is consumed.
    weir = run({"WEIR_PARTITION_BY": key})
    assert weir.process.wait(timeout=120) != 0, weir.log()
    log = weir.log_path.read_text()  # this run's own log
    assert expected in log, weir.log()
    # Refused while taking the partitions, before the pipeline starts them or consumes.
    assert "resume from the ledger" not in log and "committed snapshot" not in log, weir.log()
    assert lake.table("events").current_snapshot().snapshot_id == snapshot
    ids = lake.table("events").scan(selected_fields=("id",)).to_arrow().column("id").to_pylist()
    assert (len(ids), len(set(ids))) == (total, total)
