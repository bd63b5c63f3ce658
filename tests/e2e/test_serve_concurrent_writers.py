"""Issue 19: writers of `weir serve` never fail because of each other or of `weir ingest` next to
them. 32 reading sessions and 8 writing sessions (INSERT and COPY FROM STDIN) for 30 s while
`weir ingest` commits into another table of the same lake every second, on a SQLite catalog
made by weir (WAL), one made by DuckDB (rollback journal, switched to WAL by serve) and a
PostgreSQL catalog: no session sees an error, and every table holds exactly what was written."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time

import duckdb
import psycopg
import pytest

from tests.e2e.test_serve import PASSWORD
from tests.e2e.weir_run import (
    EXTENSIONS,
    Lake,
    WeirIngest,
    create_topic,
    event_records,
    free_port,
    fresh_postgres_database,
    produce,
    unique,
    wait_for,
)

SECONDS = 30
READERS = 32
INSERTERS = 4
COPIERS = 4
BIG_ROWS = 100_000


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


def create_tables(lake: Lake) -> None:
    con = duckdb_attach(lake)
    con.execute(f"CREATE TABLE l.big AS SELECT range AS id, range % 97 AS k, 'v' || range AS v "
                f"FROM range({BIG_ROWS})")
    con.execute("CREATE TABLE l.w (id BIGINT, who VARCHAR)")
    con.close()


def journal_mode(path) -> str:
    import sqlite3

    with sqlite3.connect(path) as db:
        return db.execute("PRAGMA journal_mode").fetchone()[0]


def start_serve(build_dir, lake: Lake, tmp_path):
    port = free_port()
    log_path = tmp_path / "serve.log"
    process = subprocess.Popen(
        [str(build_dir / "weir"), "serve", "--port", str(port), "--tls-dir",
         str(tmp_path / "tls")],
        env=dict(os.environ, WEIR_SERVE_PASSWORD=PASSWORD, WEIR_SERVE_MAX_CONNECTIONS_PER_IP="64",
                 WEIR_SERVE_QUERY_LOG="false", **lake.env()),
        stdout=open(log_path, "wb"), stderr=subprocess.STDOUT)
    wait_for(lambda: b"listening on" in log_path.read_bytes() or process.poll() is not None, 60,
             "weir serve to listen")
    assert process.poll() is None, log_path.read_text()
    return port, process, log_path


class Load:
    """The sessions of the mix; each records its errors and what it wrote."""

    def __init__(self, port: int):
        self.port = port
        self.stop = threading.Event()
        self.errors: list[str] = []
        self.inserted: list[int] = []  # ids whose INSERT or COPY returned success
        self.queries = {"point": 0, "aggregate": 0, "scan": 0}
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
                if kind == "point":
                    key = (i * 7919) % BIG_ROWS
                    assert conn.execute("SELECT v FROM big WHERE id = %s", (key,)).fetchone() == (
                        f"v{key}",)
                elif kind == "aggregate":
                    assert conn.execute("SELECT count(*), sum(id) FROM big").fetchone() == (
                        BIG_ROWS, BIG_ROWS * (BIG_ROWS - 1) // 2)
                else:
                    start = (i * 104729) % (BIG_ROWS - 10_000)
                    rows = conn.execute("SELECT id, v FROM big WHERE id >= %s AND id < %s",
                                        (start, start + 10_000)).fetchall()
                    assert len(rows) == 10_000
                with self.lock:
                    self.queries[kind] += 1
                i += 1
        self._run(f"reader {n}", body)

    def inserter(self, n: int):
        def body(conn):
            i = 0
            while not self.stop.is_set():
                row_id = n * 1_000_000 + i
                conn.execute("INSERT INTO w VALUES (%s, %s)", (row_id, f"insert {n}"))
                with self.lock:
                    self.inserted.append(row_id)
                i += 1
                time.sleep(0.05)
        self._run(f"inserter {n}", body)

    def copier(self, n: int):
        def body(conn):
            batch = 0
            while not self.stop.is_set():
                ids = [(INSERTERS + n) * 1_000_000 + batch * 100 + j for j in range(100)]
                with conn.cursor().copy("COPY w FROM STDIN") as copy:
                    for row_id in ids:
                        copy.write_row((row_id, f"copy {n}"))
                with self.lock:
                    self.inserted.extend(ids)
                batch += 1
                time.sleep(0.2)
        self._run(f"copier {n}", body)

    def run(self, seconds: float):
        threads = [threading.Thread(target=self.reader, args=(n,)) for n in range(READERS)]
        threads += [threading.Thread(target=self.inserter, args=(n,)) for n in range(INSERTERS)]
        threads += [threading.Thread(target=self.copier, args=(n,)) for n in range(COPIERS)]
        for thread in threads:
            thread.start()
        time.sleep(seconds)
        self.stop.set()
        for thread in threads:
            thread.join(timeout=120)
        assert not any(t.is_alive() for t in threads), "a session hung"


@pytest.mark.parametrize("made_by", ["weir", "duckdb", "postgres"])
def test_serve_writers_never_collide_with_each_other_or_with_ingest(
        made_by, kafka, postgres, build_dir, tmp_path):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    lake = Lake(tmp_path / "lake", catalog="postgres" if made_by == "postgres" else "sqlite")
    lake.root.mkdir(parents=True)
    if made_by == "postgres":
        lake.postgres_dsn = fresh_postgres_database(postgres)
    topic = unique("beside_serve")
    create_topic(bootstrap, topic, 2)
    produced = 0
    if made_by == "weir":
        # weir creates the catalog (and its first table) before DuckDB adds the others.
        first = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group")).start()
        produced += produce(bootstrap, topic, event_records(0, 100))
        wait_for(lambda: lake.count("events") == produced, 60, "the first events")
        assert first.stop() == 0, first.log()
        assert journal_mode(lake.sqlite_path) == "wal"
    create_tables(lake)
    if made_by == "duckdb":
        assert journal_mode(lake.sqlite_path) == "delete"  # DuckDB's SQLite default
    port, serve, serve_log = start_serve(build_dir, lake, tmp_path)
    ingest = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group"),
                        {"WEIR_FLUSH_INTERVAL": "1s"}).start()
    try:
        if made_by == "duckdb":
            assert journal_mode(lake.sqlite_path) == "wal"
            assert "switched from journal_mode=delete to write-ahead logging" in \
                serve_log.read_text()
        load = Load(port)
        feeder_stop = threading.Event()

        def feed():
            nonlocal produced
            while not feeder_stop.is_set():
                produced += produce(bootstrap, topic, event_records(produced, 200))
                time.sleep(0.3)

        feeder = threading.Thread(target=feed)
        feeder.start()
        load.run(SECONDS)
        feeder_stop.set()
        feeder.join()
        assert load.errors == [], "\n".join(load.errors[:10]) + "\n" + serve_log.read_text()[-3000:]
        assert min(load.queries.values()) > 0, load.queries
        wait_for(lambda: lake.count("events") == produced or not ingest.alive(), 90,
                 f"all {produced} events")
        assert ingest.alive(), ingest.log()
        assert ingest.metric("weir_commits_total") >= SECONDS // 3, ingest.log()
    finally:
        code = ingest.stop()
        serve.send_signal(signal.SIGTERM)
        serve_code = serve.wait(timeout=60)
    assert code == 0, ingest.log()
    assert serve_code == 0, serve_log.read_text()[-3000:]
    con = duckdb_attach(lake)
    try:
        assert con.execute("SELECT count(*), count(DISTINCT id) FROM l.w").fetchone() == (
            len(load.inserted), len(set(load.inserted)))
        assert sorted(r[0] for r in con.execute("SELECT id FROM l.w").fetchall()) == sorted(
            load.inserted)
        assert con.execute("SELECT count(*), sum(id) FROM l.big").fetchone() == (
            BIG_ROWS, BIG_ROWS * (BIG_ROWS - 1) // 2)
        assert con.execute("SELECT count(*), count(DISTINCT id) FROM l.events").fetchone() == (
            produced, produced)
    finally:
        con.close()
