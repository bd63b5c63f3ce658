"""Proofs 9 and 10 of the ingest issue: a millpond deployment's environment runs the same job,
and bad configuration stops `weir ingest` before it consumes, naming the setting."""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.e2e.weir_run import (
    Lake,
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


def test_a_millpond_environment_runs_the_same_job(kafka, postgres, build_dir, tmp_path):
    import psycopg

    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("millpond")
    create_topic(bootstrap, topic, 4)
    produce(bootstrap, topic, event_records(0, 5000))
    lake = Lake(tmp_path / "lake", catalog="postgres")
    lake.postgres_dsn = fresh_postgres_database(postgres)
    parts = dict(item.split("=", 1) for item in lake.postgres_dsn.split())
    port = free_port()
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
        "DUCKLAKE_DATA_PATH": lake.data_path,
        "DUCKLAKE_CONNECTION": "ducklake:postgres:ignored",
        "DUCKLAKE_RDS_HOST": parts["host"],
        "DUCKLAKE_RDS_PORT": parts["port"],
        "DUCKLAKE_RDS_DATABASE": parts["dbname"],
        "DUCKLAKE_RDS_USERNAME": parts["user"],
        "DUCKLAKE_RDS_PASSWORD": "unused-with-trust-auth",
        "DUCKLAKE_PARTITION_BY": "year(_inserted_at),month(_inserted_at)",
        "MILLPOND_HTTP_PORT": str(port),
        "LOG_LEVEL": "INFO",
    })
    lake.root.mkdir(parents=True)
    log = lake.root / "millpond.log"
    with open(log, "wb") as out:
        process = subprocess.Popen([str(build_dir / "weir"), "ingest"], env=env, cwd=lake.root,
                                   stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_for(lambda: lake.count("events") >= 5000 or process.poll() is not None, 90,
                 "the millpond job's rows")
        assert process.poll() is None, log.read_text()
    finally:
        process.terminate()
        code = process.wait(timeout=100)
    text = log.read_text()
    assert code == 0, text
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
