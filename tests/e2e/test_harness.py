"""The harness itself: it passes settings on, propagates the exit code, and always cleans up."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from tests.harness.components import ROOT, Kafka, port_open
from tests.harness.stack import Stack

# Prints the harness settings as JSON, then exits with the code given as argv[1] or sleeps.
CHILD = (
    "import json, os, sys, time\n"
    "print(json.dumps({k: v for k, v in os.environ.items() if k.startswith('WEIR_TEST_')}),"
    " flush=True)\n"
    "if sys.argv[1] == 'sleep':\n"
    "    time.sleep(120)\n"
    "sys.exit(int(sys.argv[1]))\n"
)


def harness(*args: str, **kwargs) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WEIR_TEST_")}
    return subprocess.Popen(
        [sys.executable, "-m", "tests.harness", "run", "--only", "postgres,s3", "--",
         sys.executable, "-c", CHILD, *args],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs,
    )


def ports(settings: dict[str, str]) -> list[int]:
    pg = int(settings["WEIR_TEST_PG_DSN"].split("port=")[1].split()[0])
    s3 = int(settings["WEIR_TEST_S3_ENDPOINT"].rsplit(":", 1)[1])
    return [pg, s3]


def assert_cleaned_up(settings: dict[str, str]) -> None:
    deadline = time.monotonic() + 10
    while any(port_open(p) for p in ports(settings)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert [p for p in ports(settings) if port_open(p)] == []
    assert not Path(settings["WEIR_TEST_HARNESS_DIR"]).exists()


def test_run_passes_settings_and_the_exit_code_then_stops_everything():
    proc = harness("3")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 3, err
    settings = json.loads(out.splitlines()[0])
    assert sorted(settings) == [
        "WEIR_TEST_HARNESS_DIR", "WEIR_TEST_PG_DSN", "WEIR_TEST_PG_URL", "WEIR_TEST_S3_ACCESS_KEY",
        "WEIR_TEST_S3_ENDPOINT", "WEIR_TEST_S3_REGION", "WEIR_TEST_S3_SECRET_KEY",
    ]
    assert_cleaned_up(settings)


def test_sigterm_while_running_still_stops_everything():
    proc = harness("sleep")
    settings = json.loads(proc.stdout.readline())
    assert all(port_open(p) for p in ports(settings))
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    assert proc.returncode != 0
    assert_cleaned_up(settings)
    # The command run under the harness was ended too.
    leftover = subprocess.run(["pgrep", "-f", "time.sleep\\(120\\)"], capture_output=True)
    assert leftover.stdout == b""


def test_kafka_starts_with_a_cluster_id_that_begins_with_a_dash(tmp_path):
    # Random ids did so once in 64 starts, and the storage tool took the id for an option.
    broker = Kafka(tmp_path, heap="256m")
    broker.cluster_id = "-" + broker.cluster_id[1:]
    try:
        broker.start()
        assert port_open(broker.port)
    finally:
        broker.stop()


def _serves_tables(catalog, namespace: str) -> None:
    """pyiceberg creates a table through `catalog`, appends 3 rows and reads them back."""
    import pyarrow as pa

    catalog.create_namespace(namespace)
    data = pa.table({"id": pa.array([1, 2, 3], pa.int64())})
    table = catalog.create_table((namespace, "t"), schema=data.schema)
    table.append(data)
    assert catalog.load_table((namespace, "t")).scan().to_arrow()["id"].to_pylist() == [1, 2, 3]


def _assert_stopped(component) -> None:
    assert component.process.poll() is not None
    assert not port_open(component.port)


def test_the_iceberg_rest_fixture_starts_serves_and_stops_cleanly(tmp_path):
    from pyiceberg.catalog import load_catalog

    from tests.harness.iceberg_catalogs import IcebergRest

    server = IcebergRest(tmp_path)
    try:
        server.start()
        settings = server.settings()
        with urllib.request.urlopen(settings["WEIR_TEST_ICEBERG_REST_URI"] + "/v1/config") as r:
            config = json.loads(r.read())
        assert "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}" in config["endpoints"]
        _serves_tables(load_catalog("h", type="rest", uri=settings["WEIR_TEST_ICEBERG_REST_URI"]),
                       "harness")
        # Its warehouse is the directory it names.
        assert list(Path(settings["WEIR_TEST_ICEBERG_REST_WAREHOUSE"]).glob("harness/t/data/*"))
    finally:
        server.stop()
    _assert_stopped(server)


def test_nessie_starts_after_the_s3_it_requires_serves_and_stops_cleanly(tmp_path):
    from pyiceberg.catalog import load_catalog

    stack = Stack(["nessie"], workdir=tmp_path / "stack", given={})
    with stack as settings:
        assert [c.name for c in stack.components] == ["moto", "nessie"]
        with urllib.request.urlopen(settings["WEIR_TEST_NESSIE_URI"] + "/v1/config") as r:
            config = json.loads(r.read())
        assert config["defaults"]["prefix"] == "main"
        assert config["defaults"]["warehouse"] == settings["WEIR_TEST_NESSIE_WAREHOUSE"]
        _serves_tables(
            load_catalog(
                "n", type="rest", uri=settings["WEIR_TEST_NESSIE_URI"],
                **{"s3.access-key-id": settings["WEIR_TEST_S3_ACCESS_KEY"],
                   "s3.secret-access-key": settings["WEIR_TEST_S3_SECRET_KEY"],
                   "s3.region": settings["WEIR_TEST_S3_REGION"]},
            ),
            "harness",
        )
    for component in stack.components:
        _assert_stopped(component)
    assert not (tmp_path / "stack").exists()


def test_spark_reads_the_counts_and_sums_pyiceberg_wrote_through_the_rest_fixture(iceberg_rest):
    import pyarrow as pa
    from pyiceberg.catalog import load_catalog

    from tests.harness.spark import spark_session

    uri = iceberg_rest["WEIR_TEST_ICEBERG_REST_URI"]
    catalog = load_catalog("s", type="rest", uri=uri)
    namespace = f"spark_{os.getpid()}_{int(time.time() * 1000) % 100000}"
    catalog.create_namespace(namespace)
    data = pa.table({"id": pa.array(range(100), pa.int64()),
                     "k": pa.array([i % 7 for i in range(100)], pa.int32())})
    table = catalog.create_table((namespace, "t"), schema=data.schema)
    table.append(data.slice(0, 60))
    table.append(data.slice(60))
    with spark_session(uri, iceberg_rest["WEIR_TEST_ICEBERG_REST_WAREHOUSE"]) as spark:
        count, total, keys = spark.sql(
            f"SELECT count(*), sum(id), count(DISTINCT k) FROM rest.{namespace}.t"
        ).collect()[0]
        snapshots = spark.sql(f"SELECT count(*) FROM rest.{namespace}.t.snapshots").collect()[0][0]
    assert (count, total, keys, snapshots) == (100, 4950, 7, 2)


def test_the_iceberg_rest_fixture_keeps_its_warehouse_on_the_harness_s3(tmp_path, s3):
    from pyiceberg.catalog import load_catalog

    from tests.harness.iceberg_catalogs import IcebergRest, _s3_client

    server = IcebergRest(tmp_path, s3=s3)
    try:
        server.start()
        settings = server.settings()
        assert settings["WEIR_TEST_ICEBERG_REST_WAREHOUSE"] == f"s3://{server.bucket}/warehouse"
        catalog = load_catalog(
            "h3", type="rest", uri=settings["WEIR_TEST_ICEBERG_REST_URI"],
            **{"s3.endpoint": f"http://{s3['WEIR_TEST_S3_ENDPOINT']}",
               "s3.region": s3["WEIR_TEST_S3_REGION"],
               "s3.access-key-id": s3["WEIR_TEST_S3_ACCESS_KEY"],
               "s3.secret-access-key": s3["WEIR_TEST_S3_SECRET_KEY"]},
        )
        _serves_tables(catalog, "on_s3")
        listed = _s3_client(s3).list_objects_v2(Bucket=server.bucket, Prefix="warehouse/on_s3/t/")
        keys = [o["Key"] for o in listed.get("Contents", [])]
        assert any(k.endswith(".parquet") for k in keys), keys
        assert any(k.endswith(".metadata.json") for k in keys), keys
    finally:
        server.stop()
    _assert_stopped(server)
