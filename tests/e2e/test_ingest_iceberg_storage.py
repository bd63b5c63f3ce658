"""Proof 1 of issue 11 on every storage: 100,000 events over 8 partitions land exactly once in an
Iceberg table whose data, manifests and metadata are on S3 (moto) or Azure Blob Storage
(azurite), through the embedded SQL catalog and through Iceberg's REST catalog (a server of its
own, keeping its tables on S3); pyiceberg and DuckDB's iceberg extension return exactly the
events with equal values, Spark reads the REST/S3 table with the same counts and sums, and
Nessie's REST catalog (tables on S3) takes an ingest with exact counts. DuckLake tables with
their data on Azure complete the storage matrix. (SQL and REST on local files:
test_ingest_iceberg.py.)

The topic is produced once for the module; each table is one 100,000-event run."""

from __future__ import annotations

import pytest
from pyarrow.fs import FileSelector

from tests.e2e.iceberg_storage import (
    StoredLake,
    azure_fs,
    azure_settings,
    duck_azure_secret,
    fresh_container,
)
from tests.e2e.test_ingest_iceberg import check_table, expected, run_to_completion
from tests.e2e.weir_run import (
    WeirIngest,
    create_topic,
    event_records,
    fresh_bucket,
    produce,
    unique,
    wait_for,
)

EVENTS = 100_000
# Flushes stream in parts well below their size, so each flush's uploads (S3 multipart, Azure
# blocks) stay open across parts and complete only when the flush ends.
STREAMED = {"WEIR_FLUSH_MAX_BYTES": "4MiB", "WEIR_FLUSH_PART_BYTES": "256KiB"}
PARTITIONS = 8


@pytest.fixture(scope="module")
def topic(kafka):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    name = unique("stored_events")
    create_topic(bootstrap, name, PARTITIONS)
    assert produce(bootstrap, name, event_records(0, EVENTS)) == EVENTS
    return name


@pytest.fixture(scope="module")
def rest_on_s3(s3, tmp_path_factory):
    """Iceberg's REST catalog server with its warehouse on a moto bucket (S3FileIO)."""
    from tests.harness.iceberg_catalogs import IcebergRest

    settings = {k: v for k, v in s3.items() if k.startswith("WEIR_TEST_S3_")}
    server = IcebergRest(tmp_path_factory.mktemp("rest-s3"), s3=settings)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def bucket_of(s3: dict, name: str) -> dict:
    """The connection of the harness's moto with `name` as the bucket."""
    bucket = fresh_bucket(s3)
    if name:
        bucket["bucket"] = name
    return bucket


def assert_files_under(lake: StoredLake, prefix: str) -> None:
    """Metadata, manifest list, manifests and data files of the table all live under `prefix`."""
    table = lake.table("events")
    assert table.metadata_location.startswith(prefix + "/metadata/"), table.metadata_location
    snapshot = table.current_snapshot()
    assert snapshot.manifest_list.startswith(prefix + "/metadata/"), snapshot.manifest_list
    manifests = snapshot.manifests(table.io)
    assert manifests and all(m.manifest_path.startswith(prefix + "/metadata/") for m in manifests)
    files = [t.file.file_path for t in table.scan().plan_files()]
    assert files and all(f.startswith(prefix + "/data/") for f in files), files[:3]


def test_sql_catalog_with_data_and_metadata_on_s3(topic, kafka, s3, build_dir, tmp_path, duck):
    bucket = fresh_bucket(s3)
    lake = StoredLake(tmp_path / "lake", "sql", "s3", "main", bucket=bucket)
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    run_to_completion(lake, build_dir, bootstrap, topic, STREAMED)
    assert lake.table("events").metadata.location == f"s3://{bucket['bucket']}/warehouse/main/events"
    assert_files_under(lake, f"s3://{bucket['bucket']}/warehouse/main/events")
    check_table(lake, lake.reader(duck), bootstrap, topic)


def test_sql_catalog_with_data_and_metadata_on_azure(topic, kafka, azure, build_dir, tmp_path,
                                                     duck):
    container = fresh_container(azure)
    lake = StoredLake(tmp_path / "lake", "sql", "azure", "main", azure=azure, container=container)
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    run_to_completion(lake, build_dir, bootstrap, topic, STREAMED)
    prefix = f"abfss://{container}/warehouse/main/events"
    assert lake.table("events").metadata.location == prefix
    assert_files_under(lake, prefix)
    # The objects are in the container (not a local directory of that name).
    listed = azure_fs(azure).get_file_info(
        FileSelector(f"{container}/warehouse/main/events/data", recursive=True))
    assert sum(1 for f in listed if f.path.endswith(".parquet")) == len(
        list(lake.table("events").scan().plan_files()))
    assert not (tmp_path / "lake" / "abfss:").exists()
    check_table(lake, lake.reader(duck), bootstrap, topic)


def test_rest_catalog_on_s3_read_by_pyiceberg_duckdb_and_spark(topic, kafka, s3, rest_on_s3,
                                                               build_dir, tmp_path, duck):
    bucket = bucket_of(s3, rest_on_s3.bucket)
    namespace = unique("ns")
    lake = StoredLake(tmp_path / "lake", "rest", "s3", namespace, rest_uri=rest_on_s3.uri,
                      bucket=bucket)
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    run_to_completion(lake, build_dir, bootstrap, topic, STREAMED)
    prefix = f"s3://{rest_on_s3.bucket}/warehouse/{namespace}/events"
    assert lake.table("events").metadata.location == prefix
    assert_files_under(lake, prefix)
    check_table(lake, lake.reader(duck), bootstrap, topic)

    from tests.harness.spark import spark_session

    s3_conf = {
        "io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
        "s3.endpoint": f"http://{bucket['endpoint']}",
        "s3.path-style-access": "true",
        "s3.access-key-id": bucket["access_key"],
        "s3.secret-access-key": bucket["secret_key"],
        "client.region": bucket["region"],
    }
    want = expected()
    with spark_session(rest_on_s3.uri, rest_on_s3.warehouse_location, catalog_properties=s3_conf,
                       aws=True) as spark:
        row = spark.sql(
            "SELECT count(*), count(DISTINCT id), sum(id), sum(score), "
            "count_if(ok), count_if(maybe IS NULL), sum(maybe) "
            f"FROM rest.{namespace}.events").collect()[0]
    got = tuple(row)
    assert got[:3] == want[:3] and got[4:] == want[4:]
    assert got[3] == pytest.approx(want[3])


def test_nessie_rest_catalog_on_s3_takes_an_ingest_exactly(topic, kafka, nessie, build_dir,
                                                           tmp_path, duck):
    warehouse = nessie["WEIR_TEST_NESSIE_WAREHOUSE"]
    # Nessie's bucket is on the moto its fixture started for it (its settings come along).
    bucket = bucket_of(nessie, warehouse.removeprefix("s3://").split("/")[0])
    namespace = unique("ns")
    lake = StoredLake(tmp_path / "lake", "rest", "s3", namespace,
                      rest_uri=nessie["WEIR_TEST_NESSIE_URI"], bucket=bucket)
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    run_to_completion(lake, build_dir, bootstrap, topic, STREAMED)
    location = lake.table("events").metadata.location
    assert location.startswith(warehouse + "/"), location
    check_table(lake, lake.reader(duck), bootstrap, topic)


def test_ducklake_with_its_data_on_azure(topic, kafka, azure, build_dir, tmp_path, duck):
    """DuckLake (SQLite catalog) whose data path is an azurite container: weir writes the files
    through Arrow, DuckDB's ducklake and azure extensions read the table back."""
    container = fresh_container(azure)
    data_path = f"az://{container}/lake/"

    class AzureDuckLake:
        root = tmp_path / "lake"

        def env(self):
            return {"WEIR_CATALOG_KIND": "sqlite",
                    "WEIR_CATALOG_SQLITE_PATH": str(self.root / "catalog.sqlite"),
                    "WEIR_STORAGE_DATA_PATH": data_path, **azure_settings(azure)}

    lake = AzureDuckLake()
    duck_azure_secret(duck, azure)
    duck.execute("LOAD ducklake")
    duck.execute("LOAD sqlite_scanner")

    def count() -> int:
        if not (lake.root / "catalog.sqlite").exists():
            return 0
        try:
            duck.execute(f"ATTACH IF NOT EXISTS 'ducklake:sqlite:{lake.root / 'catalog.sqlite'}' "
                         "AS azlake (READ_ONLY)")
            return duck.execute("SELECT count(*) FROM azlake.main.events").fetchone()[0]
        except Exception:
            duck.execute("DETACH DATABASE IF EXISTS azlake")
            return 0

    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group"),
                      STREAMED).start()
    try:
        wait_for(lambda: count() >= EVENTS or not weir.alive(), 300, "all events in DuckLake")
        assert weir.alive(), weir.log()
    finally:
        code = weir.stop()
    assert code == 0, weir.log()
    want = expected()
    duck.execute("DETACH DATABASE IF EXISTS azlake")
    duck.execute(f"ATTACH 'ducklake:sqlite:{lake.root / 'catalog.sqlite'}' AS azlake (READ_ONLY)")
    row = duck.execute(
        "SELECT count(*), count(DISTINCT id), sum(id), sum(score), count(*) FILTER (ok), "
        "count(*) FILTER (maybe IS NULL), sum(maybe) FROM azlake.main.events").fetchone()
    assert row[:3] == want[:3] and row[4:] == want[4:]
    assert row[3] == pytest.approx(want[3])
    files = [r[0] for r in duck.execute(
        "SELECT data_file FROM ducklake_list_files('azlake', 'events')").fetchall()]
    assert files and all(f.startswith(data_path) for f in files), files[:3]
