"""Running `weir ingest` against the harness components, and reading its lake back with DuckDB.

Shared by the end-to-end tests: a Lake describes where a table lives (catalog and storage), a
WeirIngest is one `weir ingest` process, and the producer helpers write test events to Kafka.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

import duckdb
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from tests.harness.components import DEPS, free_port  # noqa: F401 (tests import it from here)

EXTENSIONS = DEPS / "duckdb" / "extensions"


def unique(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:10]}"


def wait_for(predicate: Callable[[], bool], timeout_s: float, what: str, poll_s: float = 0.5):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(poll_s)
    raise AssertionError(f"timed out after {timeout_s:.0f}s waiting for {what}")


# --- Kafka -------------------------------------------------------------------------------------


# Records up to this size can be produced (the poison test sends a 2 MB one).
MAX_MESSAGE_BYTES = 8 * 1024 * 1024


def create_topic(bootstrap: str, topic: str, partitions: int,
                 config: dict[str, str] | None = None) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    new = NewTopic(topic, partitions, 1,
                   config={"max.message.bytes": str(MAX_MESSAGE_BYTES), **(config or {})})
    for future in admin.create_topics([new]).values():
        future.result(timeout=60)
    wait_for(
        lambda: topic in admin.list_topics(timeout=10).topics
        and len(admin.list_topics(timeout=10).topics[topic].partitions) == partitions,
        30,
        f"topic {topic}",
    )


def produce(bootstrap: str, topic: str, records: Iterable[tuple[bytes | None, bytes]],
            partition_of: Callable[[int], int] | None = None) -> int:
    """Produces (key, value) records with idempotence; returns how many were acknowledged."""
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "enable.idempotence": True,
            "linger.ms": 20,
            "message.max.bytes": MAX_MESSAGE_BYTES,
        }
    )
    failures: list[str] = []

    def report(err, _msg):
        if err is not None:
            failures.append(str(err))

    n = 0
    for n, (key, value) in enumerate(records, start=1):
        kwargs = {} if partition_of is None else {"partition": partition_of(n - 1)}
        while True:
            try:
                producer.produce(topic, key=key, value=value, on_delivery=report, **kwargs)
                break
            except BufferError:
                producer.poll(0.1)
        if n % 5000 == 0:
            producer.poll(0)
    assert producer.flush(60) == 0, "producer could not deliver everything"
    assert not failures, failures[:3]
    return n


def event(i: int) -> dict:
    """A test event with every inferred type: int, double, bool, text, nested object, array."""
    return {
        "id": i,
        "name": f"user-{i} \"quoted\" é",
        "score": i + 0.25,
        "ok": i % 3 == 0,
        "props": {"plan": "pro" if i % 2 else "free", "n": i % 7},
        "tags": ["a", i % 5],
        "maybe": None if i % 4 else i,
    }


def event_records(start: int, count: int) -> Iterable[tuple[bytes, bytes]]:
    for i in range(start, start + count):
        yield str(i).encode(), json.dumps(event(i)).encode()


# --- Lakes -------------------------------------------------------------------------------------


def produce_slowly(bootstrap: str, topic: str, total: int, seconds: float,
                   make=None) -> threading.Thread:
    """Produces `total` records over about `seconds`, in 40 chunks from a background thread;
    `make(start, count)` gives the records (default: the reference events)."""
    make = make or event_records

    def run():
        chunk = max(1, total // 40)
        for start in range(0, total, chunk):
            produce(bootstrap, topic, make(start, min(chunk, total - start)))
            time.sleep(seconds / 40)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


@dataclass
class Lake:
    """Where a table lives: a SQLite file or a PostgreSQL database, local or S3 data."""

    root: Path
    catalog: str = "sqlite"  # sqlite | postgres
    storage: str = "local"  # local | s3
    postgres_dsn: str = ""
    s3: dict = field(default_factory=dict)  # endpoint, access_key, secret_key, region, bucket

    @property
    def sqlite_path(self) -> Path:
        return self.root / "catalog.sqlite"

    @property
    def data_path(self) -> str:
        if self.storage == "s3":
            return f"s3://{self.s3['bucket']}/lake/"
        return str(self.root / "data") + "/"

    def env(self) -> dict[str, str]:
        env = {"WEIR_CATALOG_KIND": self.catalog, "WEIR_STORAGE_DATA_PATH": self.data_path}
        if self.catalog == "sqlite":
            env["WEIR_CATALOG_SQLITE_PATH"] = str(self.sqlite_path)
        else:
            env["WEIR_CATALOG_POSTGRES_DSN"] = self.postgres_dsn
        if self.storage == "s3":
            env.update(
                {
                    "WEIR_STORAGE_S3_ACCESS_KEY_ID": self.s3["access_key"],
                    "WEIR_STORAGE_S3_SECRET_ACCESS_KEY": self.s3["secret_key"],
                    "WEIR_STORAGE_S3_REGION": self.s3["region"],
                    "WEIR_STORAGE_S3_ENDPOINT": self.s3["endpoint"],
                    "WEIR_STORAGE_S3_USE_SSL": "false",
                    "WEIR_STORAGE_S3_URL_STYLE": "path",
                }
            )
        return env

    def connect(self, read_only: bool = True) -> duckdb.DuckDBPyConnection:
        """A DuckDB connection with this lake attached as `lake` (extensions from local files)."""
        con = duckdb.connect(
            config={
                "extension_directory": str(EXTENSIONS),
                "autoinstall_known_extensions": False,
                "autoload_known_extensions": False,
            }
        )
        con.execute("SET TimeZone = 'UTC'")
        con.execute("LOAD ducklake")
        con.execute("LOAD sqlite_scanner" if self.catalog == "sqlite" else "LOAD postgres_scanner")
        if self.storage == "s3":
            con.execute("LOAD httpfs")
            con.execute(
                "CREATE SECRET (TYPE s3, KEY_ID ?, SECRET ?, REGION ?, ENDPOINT ?, "
                "USE_SSL false, URL_STYLE 'path')".replace("?", "'{}'").format(
                    self.s3["access_key"], self.s3["secret_key"], self.s3["region"],
                    self.s3["endpoint"],
                )
            )
        target = (
            f"ducklake:sqlite:{self.sqlite_path}"
            if self.catalog == "sqlite"
            else f"ducklake:postgres:{self.postgres_dsn}"
        )
        mode = " (READ_ONLY)" if read_only else ""
        con.execute(f"ATTACH '{target}' AS lake{mode}")
        return con

    def scalar(self, sql: str):
        con = self.connect()
        try:
            return con.execute(sql).fetchone()[0]
        finally:
            con.close()

    def count(self, table: str) -> int:
        """Rows in lake.<table>; 0 while the table does not exist yet."""
        try:
            return self.scalar(f"SELECT count(*) FROM lake.{table}")
        except duckdb.Error:  # no catalog or no table yet
            return 0


def fresh_postgres_database(postgres: dict) -> str:
    """A new database on the harness PostgreSQL; returns its libpq DSN."""
    import psycopg

    name = unique("lake")
    with psycopg.connect(postgres["WEIR_TEST_PG_URL"], autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return f"{postgres['WEIR_TEST_PG_DSN']} dbname={name}"


def fresh_bucket(s3: dict) -> dict:
    from pyarrow import fs

    bucket = unique("bucket").replace("_", "-")
    store = fs.S3FileSystem(
        access_key=s3["WEIR_TEST_S3_ACCESS_KEY"],
        secret_key=s3["WEIR_TEST_S3_SECRET_KEY"],
        region=s3["WEIR_TEST_S3_REGION"],
        endpoint_override=s3["WEIR_TEST_S3_ENDPOINT"],
        scheme="http",
        allow_bucket_creation=True,
    )
    store.create_dir(bucket)
    return {
        "endpoint": s3["WEIR_TEST_S3_ENDPOINT"],
        "access_key": s3["WEIR_TEST_S3_ACCESS_KEY"],
        "secret_key": s3["WEIR_TEST_S3_SECRET_KEY"],
        "region": s3["WEIR_TEST_S3_REGION"],
        "bucket": bucket,
    }


# --- weir ingest -------------------------------------------------------------------------------


class WeirIngest:
    """One `weir ingest` process; its log goes to a file next to the lake."""

    def __init__(self, build_dir: Path, lake: Lake, bootstrap: str, topic: str, table: str,
                 group: str, settings: dict[str, str] | None = None, name: str = "weir"):
        self.binary = build_dir / "weir"
        self.lake = lake
        self.http_port = free_port()
        self.log_path = lake.root / f"{name}-{uuid.uuid4().hex[:6]}.log"
        self.env = dict(os.environ)
        self.env.update(lake.env())
        self.env.update(
            {
                "WEIR_KAFKA_BOOTSTRAP_SERVERS": bootstrap,
                "WEIR_TOPIC": topic,
                "WEIR_TABLE": table,
                "WEIR_KAFKA_GROUP_ID": group,
                "WEIR_FLUSH_INTERVAL": "1s",
                "WEIR_HTTP_PORT": str(self.http_port),
                "WEIR_LOG_LEVEL": "info",
            }
        )
        self.env.update(settings or {})
        self.args: list[str] = []
        self.process: subprocess.Popen | None = None

    def start(self, *extra_args: str) -> "WeirIngest":
        self.lake.root.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "ab")
        self.process = subprocess.Popen(
            [str(self.binary), "ingest", *self.args, *extra_args],
            env=self.env,
            cwd=self.lake.root,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        log.close()
        return self

    def signal(self, sig: int) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(sig)

    def kill(self) -> None:
        self.signal(signal.SIGKILL)
        if self.process:
            self.process.wait(timeout=30)

    def stop(self, timeout_s: float = 120) -> int:
        """SIGTERM, then the exit code (SIGKILL and a failure if it does not end in time)."""
        self.signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise AssertionError(f"weir ingest ignored SIGTERM for {timeout_s}s\n{self.log()}")

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log(self, lines: int = 40) -> str:
        text = self.log_path.read_text(errors="replace").splitlines()
        return f"--- {self.log_path} ---\n" + "\n".join(text[-lines:])

    def http(self, path: str) -> tuple[int, str]:
        """(status, body) of a GET on weir's HTTP port."""
        import urllib.error
        import urllib.request

        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.http_port}{path}",
                                        timeout=5) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()

    def metrics(self) -> dict[str, float]:
        """The /metrics samples, keyed by the series as written (name{labels})."""
        import urllib.error
        import urllib.request

        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.http_port}/metrics",
                                        timeout=5) as r:
                text = r.read().decode()
        except urllib.error.URLError:
            if self.alive():
                return {}  # still starting: no series yet
            raise
        samples = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                series, value = line.rsplit(" ", 1)
                samples[series] = float(value)
        return samples

    def metric(self, name: str, **labels: str) -> float:
        """The value of one series; labels given must all match (others are ignored)."""
        total = 0.0
        found = False
        for series, value in self.metrics().items():
            base, _, rest = series.partition("{")
            if base != name:
                continue
            have = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', rest))
            if all(have.get(k) == v for k, v in labels.items()):
                total += value
                found = True
        return total if found else 0.0
