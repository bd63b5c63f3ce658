"""The fault matrix (issue 29): every mode (direct, WAL) on every catalog (DuckLake on SQLite and
on PostgreSQL, Iceberg on its SQL catalog and on a REST catalog) through each fault a deployment
meets, with poison records in the stream and, in direct mode, an upsert dataset beside the plain
one (WAL mode refuses upsert datasets):

- drain: records held by the flush or commit interval when SIGTERM comes are committed by the
  drain; the process exits 0 with an empty WAL directory;
- outage: the catalog goes away for 20 s (PostgreSQL stopped, the REST catalog's answers cut,
  SQLite locked by another process) while a flush that carries rejects waits; weir stays up,
  commits nothing meanwhile, and lands it all afterwards; the same with the object store;
- kill: three SIGKILLs at random moments while records arrive, each followed by a restart;
- broker restart: the broker stopped for 5 s and started again while weir runs.

After each: every good record exactly once in the table, every poison record exactly once in
the rejects table, and the upsert table holding each key's last value. The harness's broker and
REST catalog serve every cell; a private PostgreSQL where the test stops it, a private S3
emulator for the object store's outage (in both modes on each format, the data on its bucket
frozen by SIGSTOP: connections accepted, nothing answered), and a private broker for the
restart.
"""

from __future__ import annotations

import contextlib
import json
import random
import re
import sqlite3
import time
from pathlib import Path

import pytest

from tests.e2e.iceberg_storage import StoredLake
from tests.e2e.test_ingest_iceberg import IcebergLake
from tests.e2e.test_ingest_iceberg_rejects import is_poison, records
from tests.e2e.test_ingest_recovery import FAST_GROUP_ARGS
from tests.e2e.weir_run import Lake, WeirIngest, create_topic, fresh_bucket, produce, unique, \
    wait_for
from tests.harness.components import Kafka, MotoS3, Postgres
from tests.harness.fault_proxy import FaultProxy

MODES = ["direct", "wal"]
CATALOGS = ["ducklake-sqlite", "ducklake-postgres", "iceberg-sql", "iceberg-rest"]
UPSERT_KEYS = 40


def upserts(start: int, count: int):
    """Updates of UPSERT_KEYS keys, each key on one partition (the message key)."""
    for i in range(start, start + count):
        k = i % UPSERT_KEYS
        yield str(k).encode(), json.dumps({"k": k, "n": i}).encode()


class Cell:
    """One mode on one catalog: the topics, the lake (as weir writes it and as a reader sees it),
    the settings, a catalog outage, and exact read-back."""

    def __init__(self, mode: str, catalog: str, kafka, request, build_dir: Path, tmp_path: Path,
                 on_s3: bool = False):
        self.mode, self.catalog, self.root = mode, catalog, tmp_path / "lake"
        self.build_dir = build_dir
        self.bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
        self.topic, self.upsert_topic = unique("matrix"), unique("matrix_upsert")
        create_topic(self.bootstrap, self.topic, 2)
        self.upsert = mode == "direct"
        if self.upsert:
            create_topic(self.bootstrap, self.upsert_topic, 2)
        self.group = unique("group")
        self.postgres = self.proxy = None
        self.duck = request.getfixturevalue("duck")
        if catalog == "ducklake-sqlite":
            self.reader = Lake(self.root)
        elif catalog == "ducklake-postgres":
            self.postgres = Postgres(tmp_path / "pg")
            self.postgres.start()
            self.reader = Lake(self.root, catalog="postgres")
            self.reader.postgres_dsn = self.postgres.settings()["WEIR_TEST_PG_DSN"]
        elif catalog == "iceberg-sql":
            self.reader = IcebergLake(self.root)
        else:
            rest = request.getfixturevalue("iceberg_rest")
            self.reader = IcebergLake(self.root, rest_uri=rest["WEIR_TEST_ICEBERG_REST_URI"],
                                      namespace=unique("ns"))
            self.proxy = FaultProxy(self.reader.rest_uri).__enter__()
        self.writer = self.reader if self.proxy is None else IcebergLake(
            self.root, rest_uri=self.proxy.uri, namespace=self.reader.namespace)
        self.store = None
        if on_s3:
            # The data files on a bucket of a private S3 emulator the test can freeze.
            self.store = MotoS3(tmp_path / "s3")
            self.store.start()
            bucket = fresh_bucket(self.store.settings())
            if catalog == "ducklake-sqlite":
                self.reader = Lake(self.root, storage="s3", s3=bucket)
            else:
                self.reader = StoredLake(self.root, "sql", "s3", unique("ns"), bucket=bucket)
            self.writer = self.reader
        self.produced, self.upserted = 0, 0

    def close(self) -> None:
        if self.store is not None:
            self.store.stop()
        if self.proxy is not None:
            self.proxy.__exit__(None, None, None)
        if self.postgres is not None:
            self.postgres.stop()

    # --- running weir ----------------------------------------------------------------------
    def weir(self, **extra: str) -> WeirIngest:
        settings = {"WEIR_FLUSH_MAX_BYTES": "256KiB", **extra}
        if self.mode == "wal":
            settings = {"WEIR_INGEST_MODE": "wal", "WEIR_WAL_DIR": str(self.root / "wal"),
                        "WEIR_WAL_MAX_FILE_AGE": "1s", "WEIR_WAL_COMMIT_INTERVAL": "1s",
                        **settings}
        weir = WeirIngest(self.build_dir, self.writer, self.bootstrap, self.topic, "events",
                          self.group, settings)
        if self.upsert:
            config = self.root / "datasets.yaml"
            self.root.mkdir(parents=True, exist_ok=True)
            config.write_text(
                f"datasets:\n  - topic: {self.topic}\n    table: events\n"
                f"  - topic: {self.upsert_topic}\n    table: agg\n    upsert: {{key: [k]}}\n")
            del weir.env["WEIR_TOPIC"], weir.env["WEIR_TABLE"]
            weir.args = ["--config", str(config)]
        weir.args += list(FAST_GROUP_ARGS)
        return weir

    def produce(self, count: int) -> None:
        produce(self.bootstrap, self.topic, records(self.produced, count))
        self.produced += count
        if self.upsert:
            produce(self.bootstrap, self.upsert_topic, upserts(self.upserted, count // 2))
            self.upserted += count // 2

    # --- reading back ----------------------------------------------------------------------
    def rows(self) -> list[tuple[int, int]]:
        if isinstance(self.reader, Lake):
            return self._duck_rows("SELECT id, v FROM lake.events")
        try:
            table = self.reader.table("events").scan(selected_fields=("id", "v")).to_arrow()
        except Exception:  # not created yet
            return []
        return list(zip(table.column("id").to_pylist(), table.column("v").to_pylist()))

    def rejects(self) -> list[tuple[int, int, str, str]]:
        if isinstance(self.reader, Lake):
            return self._duck_rows(
                'SELECT "partition", "offset", payload, reason FROM lake.events_rejects')
        try:
            scanned = self.reader.table("events_rejects").scan().to_arrow().to_pylist()
        except Exception:
            return []
        return [(r["partition"], r["offset"], r["payload"], r["reason"]) for r in scanned]

    def upsert_state(self) -> dict[int, int]:
        if isinstance(self.reader, Lake):
            return dict(self._duck_rows("SELECT k, n FROM lake.agg"))
        location = self.reader.table("agg").metadata_location
        duck = self.reader.reader(self.duck) if isinstance(self.reader, StoredLake) else self.duck
        return dict(duck.execute(f"SELECT k, n FROM iceberg_scan('{location}')").fetchall())

    def _duck_rows(self, sql: str) -> list[tuple]:
        try:
            con = self.reader.connect()
        except Exception:  # no catalog yet (or locked)
            return []
        try:
            return con.execute(sql).fetchall()
        except Exception:  # no table yet
            return []
        finally:
            con.close()

    def committed(self) -> bool:
        good = sum(1 for i in range(self.produced) if not is_poison(i))
        return len(self.rows()) >= good and len(self.rejects()) >= self.produced - good

    def assert_exactly(self) -> None:
        want_rows = {i for i in range(self.produced) if not is_poison(i)}
        rows = self.rows()
        ids = [i for i, _ in rows]
        assert (len(ids), len(set(ids))) == (len(want_rows), len(want_rows)), "lost or doubled"
        assert set(ids) == want_rows
        assert all(v == i * 2 for i, v in rows)
        rejects = self.rejects()
        coordinates = [(p, o) for p, o, _, _ in rejects]
        assert len(coordinates) == len(set(coordinates)) == self.produced - len(want_rows)
        reject_ids = sorted(int(re.match(r'\{"id": (\d+),', payload).group(1))
                            for _, _, payload, _ in rejects)
        assert reject_ids == sorted(set(range(self.produced)) - want_rows)
        assert {reason for _, _, _, reason in rejects} <= {"invalid_json"}
        if self.upsert:
            last = {}
            for i in range(self.upserted):
                last[i % UPSERT_KEYS] = i
            assert self.upsert_state() == last

    def upserts_landed(self) -> bool:
        if not self.upsert:
            return True
        try:
            state = self.upsert_state()
        except Exception:
            return False
        return len(state) == min(UPSERT_KEYS, self.upserted) and max(state.values()) == \
            self.upserted - 1

    def wal_left(self) -> list[str]:
        wal = self.root / "wal"
        return sorted(str(p.relative_to(wal)) for p in wal.rglob("*") if p.is_file()) \
            if wal.exists() else []

    # --- the catalog outage ----------------------------------------------------------------
    @contextlib.contextmanager
    def outage(self):
        if self.store is not None:  # the object store's: frozen, answering nothing
            self.store.freeze()
            try:
                yield
            finally:
                self.store.thaw()
        elif self.proxy is not None:
            self.proxy.outage.set()
            try:
                yield
            finally:
                self.proxy.outage.clear()
        elif self.postgres is not None:
            self.postgres.stop()
            try:
                yield
            finally:
                self.postgres.restart()
        else:
            # SQLite has no server to stop: another process holding its write lock is the
            # outage a SQLite catalog meets (a long transaction, a backup).
            path = self.reader.sqlite_path if isinstance(self.reader, Lake) \
                else self.root / "weir-lake" / "catalog.db"
            lock = sqlite3.connect(path, timeout=30, isolation_level=None)
            lock.execute("BEGIN EXCLUSIVE")
            try:
                yield
            finally:
                lock.execute("ROLLBACK")
                lock.close()


@pytest.fixture(params=[(m, c) for m in MODES for c in CATALOGS],
                ids=lambda p: f"{p[0]}-{p[1]}")
def cell(request, kafka, build_dir, tmp_path):
    mode, catalog = request.param
    made = Cell(mode, catalog, kafka, request, build_dir, tmp_path)
    try:
        yield made
    finally:
        made.close()


@pytest.fixture(params=[(m, c) for m in MODES for c in ("ducklake-sqlite", "iceberg-sql")],
                ids=lambda p: f"{p[0]}-{p[1]}-s3")
def cell_on_s3(request, kafka, build_dir, tmp_path):
    mode, catalog = request.param
    made = Cell(mode, catalog, kafka, request, build_dir, tmp_path, on_s3=True)
    try:
        yield made
    finally:
        made.close()


@pytest.fixture(params=[(m, c) for m in MODES for c in CATALOGS],
                ids=lambda p: f"{p[0]}-{p[1]}")
def cell_with_own_broker(request, build_dir, tmp_path):
    """A cell on a broker of its own, which the test stops and starts again."""
    mode, catalog = request.param
    broker = Kafka(tmp_path / "broker", heap="512m")
    broker.start()
    made = None
    try:
        made = Cell(mode, catalog, broker.settings(), request, build_dir, tmp_path)
        made.broker = broker
        yield made
    finally:
        if made is not None:
            made.close()
        broker.stop()


def landed(cell: Cell) -> bool:
    return cell.committed() and cell.upserts_landed()


def finish(cell: Cell, weir: WeirIngest) -> None:
    code = weir.stop(timeout_s=90)
    log = weir.log(200)
    assert code == 0, log
    assert "stop requested" not in log, log
    cell.assert_exactly()
    assert cell.wal_left() == []


def test_sigterm_drains_what_the_intervals_hold(cell):
    cell.produce(400)
    first = cell.weir().start()
    try:
        wait_for(lambda: landed(cell) or not first.alive(), 120, "the first records")
    finally:
        assert first.stop(timeout_s=90) == 0, first.log()
    # Nothing is committed by an interval now: what comes next is held until the drain.
    held = {"WEIR_FLUSH_INTERVAL": "10m", "WEIR_FLUSH_MAX_BYTES": "64MiB"}
    if cell.mode == "wal":
        held.update(WEIR_WAL_COMMIT_INTERVAL="10m")
    weir = cell.weir(**held).start()
    before = len(cell.rows())
    cell.produce(200)
    wait_for(lambda: weir.metric("weir_records_consumed_total") >= 200 + (100 if cell.upsert
                                                                          else 0)
             or not weir.alive(), 60, "the held records consumed")
    if cell.mode == "wal":
        wait_for(lambda: any(Path(f).name.startswith("ready_") for f in cell.wal_left()), 30,
                 "a segment rotated and waiting for its commit")
    assert len(cell.rows()) == before, "held records committed before the drain"
    finish(cell, weir)


def test_a_catalog_outage_with_rejects_in_the_flush_is_ridden_out(cell):
    ride_out_an_outage(cell)


def test_an_object_store_outage_with_rejects_in_the_flush_is_ridden_out(cell_on_s3):
    ride_out_an_outage(cell_on_s3)


def ride_out_an_outage(cell: Cell) -> None:
    weir = cell.weir().start()
    try:
        cell.produce(100)  # rejects among them: both tables exist before the outage
        wait_for(lambda: landed(cell) or not weir.alive(), 120, "the first records")
        written = weir.metric("weir_records_written_total")
        consumed = weir.metric("weir_records_consumed_total")
        with cell.outage():
            cell.produce(50)  # poison records among them
            wait_for(lambda: weir.metric("weir_records_consumed_total") >= consumed + 50, 30,
                     "the records of the outage consumed")
            time.sleep(18)  # every flush attempt fails or waits, and is retried
            assert weir.alive(), weir.log(100)
            # The outage is real: nothing landed while it lasted.
            assert weir.metric("weir_records_written_total") == written
        assert weir.alive(), weir.log(100)
        wait_for(lambda: landed(cell) or not weir.alive(), 120, "everything after the outage")
    finally:
        if not weir.alive():
            pytest.fail("weir exited during or after the outage\n" + weir.log(200))
    finish(cell, weir)


def test_sigkills_while_records_arrive_lose_and_double_nothing(cell):
    rng = random.Random(f"{cell.mode}-{cell.catalog}")
    weir = cell.weir().start()
    try:
        for _ in range(3):
            for _ in range(5):
                cell.produce(60)
                time.sleep(rng.uniform(0.05, 0.4))
            weir.kill()  # wherever it is: mid-flush, mid-commit, between the two commits
            weir = cell.weir().start()
        wait_for(lambda: landed(cell) or not weir.alive(), 180, "everything after the kills")
    except BaseException:
        weir.kill()
        raise
    finish(cell, weir)


def test_a_broker_restart_loses_and_doubles_nothing(cell_with_own_broker):
    cell = cell_with_own_broker
    weir = cell.weir().start()
    try:
        cell.produce(100)
        wait_for(lambda: landed(cell) or not weir.alive(), 120, "the records before the restart")
        cell.broker.stop()
        time.sleep(5)  # the consumer and its group coordinator are gone meanwhile
        assert weir.alive(), weir.log(100)
        cell.broker.restart()
        cell.produce(100)
        wait_for(lambda: landed(cell) or not weir.alive(), 180, "the records after the restart")
    except AssertionError as failed:
        weir.kill()
        raise AssertionError(f"{failed}\n{weir.log(60)}") from None
    except BaseException:
        weir.kill()
        raise
    finish(cell, weir)
