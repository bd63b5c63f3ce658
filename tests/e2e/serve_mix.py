"""The mixed load of issue 19 on `weir serve`: reading sessions (point lookups, aggregates,
10,000-row scans) and writing sessions (INSERT, COPY FROM STDIN), each recording its errors,
what it wrote and its latencies. Shared by tests/e2e/test_serve_concurrent_writers.py and
bench/serve_mix_bench.py."""

from __future__ import annotations

import os
import subprocess
import threading
import time

import duckdb
import psycopg

from tests.e2e.test_serve import PASSWORD
from tests.e2e.weir_run import EXTENSIONS, Lake, event_records, free_port, produce, wait_for

KINDS = ("point", "aggregate", "scan", "insert", "copy")



def dsn(port: int) -> str:
    return f"host=127.0.0.1 port={port} user=weir dbname=lake sslmode=require password='{PASSWORD}'"


def duckdb_attach(lake: Lake) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(config={"extension_directory": str(EXTENSIONS),
                                 "autoinstall_known_extensions": False,
                                 "autoload_known_extensions": False})
    con.execute("LOAD ducklake; LOAD sqlite_scanner; LOAD postgres_scanner")
    target = (f"sqlite:{lake.sqlite_path}" if lake.catalog == "sqlite"
              else f"postgres:{lake.postgres_dsn}")
    con.execute(f"ATTACH 'ducklake:{target}' AS l (DATA_PATH '{lake.data_path}')")
    return con


def create_tables(lake: Lake, big_rows: int) -> None:
    con = duckdb_attach(lake)
    con.execute(f"CREATE TABLE l.big AS SELECT range AS id, range % 97 AS k, 'v' || range AS v "
                f"FROM range({big_rows})")
    con.execute("CREATE TABLE l.w (id BIGINT, who VARCHAR)")
    con.close()


def journal_mode(path) -> str:
    import sqlite3

    with sqlite3.connect(path) as db:
        return db.execute("PRAGMA journal_mode").fetchone()[0]


def start_serve(build_dir, lake: Lake, tmp_path, query_log: bool = False,
                max_connections: int = 100):
    """`weir serve` on the lake; `max_connections` caps the total and (at least 64) the
    connections from 127.0.0.1."""
    port = free_port()
    log_path = tmp_path / "serve.log"
    process = subprocess.Popen(
        [str(build_dir / "weir"), "serve", "--port", str(port), "--tls-dir",
         str(tmp_path / "tls")],
        env=dict(os.environ, WEIR_SERVE_PASSWORD=PASSWORD,
                 WEIR_SERVE_MAX_CONNECTIONS=str(max_connections),
                 WEIR_SERVE_MAX_CONNECTIONS_PER_IP=str(max(64, max_connections)),
                 WEIR_SERVE_QUERY_LOG=str(query_log).lower(), **lake.env()),
        stdout=open(log_path, "wb"), stderr=subprocess.STDOUT)
    wait_for(lambda: b"listening on" in log_path.read_bytes() or process.poll() is not None, 60,
             "weir serve to listen")
    assert process.poll() is None, log_path.read_text()
    return port, process, log_path


class Load:
    """The sessions of the mix; each records its errors and what it wrote."""

    def __init__(self, port: int, big_rows: int, readers: int = 32, inserters: int = 4,
                 copiers: int = 4):
        self.port = port
        self.big_rows = big_rows
        self.readers, self.inserters, self.copiers = readers, inserters, copiers
        self.latencies: dict[str, list[float]] = {kind: [] for kind in KINDS}
        self.stop = threading.Event()
        self.errors: list[str] = []
        self.inserted: list[int] = []  # ids whose INSERT or COPY returned success
        self.lock = threading.Lock()

    def _run(self, name, body):
        try:
            with psycopg.connect(dsn(self.port), autocommit=True) as conn:
                body(conn)
        except Exception as error:  # noqa: BLE001 - every error is the test's finding
            with self.lock:
                self.errors.append(f"{name}: {type(error).__name__}: {error}")

    def reader(self, n: int):
        def body(conn):
            i = n
            while not self.stop.is_set():
                kind = ("point", "aggregate", "scan")[i % 3]
                started = time.perf_counter()
                if kind == "point":
                    key = (i * 7919) % self.big_rows
                    assert conn.execute("SELECT v FROM big WHERE id = %s", (key,)).fetchone() == (
                        f"v{key}",)
                elif kind == "aggregate":
                    assert conn.execute("SELECT count(*), sum(id) FROM big").fetchone() == (
                        self.big_rows, self.big_rows * (self.big_rows - 1) // 2)
                else:
                    start = (i * 104729) % (self.big_rows - 10_000)
                    rows = conn.execute("SELECT id, v FROM big WHERE id >= %s AND id < %s",
                                        (start, start + 10_000)).fetchall()
                    assert len(rows) == 10_000
                self._took(kind, started)
                i += 1
        self._run(f"reader {n}", body)

    def inserter(self, n: int):
        def body(conn):
            i = 0
            while not self.stop.is_set():
                row_id = n * 1_000_000 + i
                started = time.perf_counter()
                conn.execute("INSERT INTO w VALUES (%s, %s)", (row_id, f"insert {n}"))
                self._took("insert", started)
                with self.lock:
                    self.inserted.append(row_id)
                i += 1
                time.sleep(0.05)
        self._run(f"inserter {n}", body)

    def copier(self, n: int):
        def body(conn):
            batch = 0
            while not self.stop.is_set():
                ids = [(self.inserters + n) * 1_000_000 + batch * 100 + j for j in range(100)]
                started = time.perf_counter()
                with conn.cursor().copy("COPY w FROM STDIN") as copy:
                    for row_id in ids:
                        copy.write_row((row_id, f"copy {n}"))
                self._took("copy", started)
                with self.lock:
                    self.inserted.extend(ids)
                batch += 1
                time.sleep(0.2)
        self._run(f"copier {n}", body)

    def _took(self, kind: str, started: float) -> None:
        elapsed = time.perf_counter() - started
        with self.lock:
            self.latencies[kind].append(elapsed)

    def run(self, seconds: float):
        threads = [threading.Thread(target=self.reader, args=(n,)) for n in range(self.readers)]
        threads += [threading.Thread(target=self.inserter, args=(n,))
                    for n in range(self.inserters)]
        threads += [threading.Thread(target=self.copier, args=(n,)) for n in range(self.copiers)]
        for thread in threads:
            thread.start()
        time.sleep(seconds)
        self.stop.set()
        for thread in threads:
            thread.join(timeout=120)
        assert not any(t.is_alive() for t in threads), "a session hung"


class EventFeeder:
    """Produces 200 test events to `topic` every 0.3 s on a thread, until stopped; `produced`
    counts the acknowledged ones (event ids 0, 1, ... after `start_at`)."""

    def __init__(self, bootstrap: str, topic: str, start_at: int = 0):
        self.bootstrap, self.topic, self.produced = bootstrap, topic, start_at
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run)

    def _run(self):
        while not self._stop.is_set():
            self.produced += produce(self.bootstrap, self.topic,
                                     event_records(self.produced, 200))
            time.sleep(0.3)

    def __enter__(self) -> "EventFeeder":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
