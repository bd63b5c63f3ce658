"""`weir serve` over an Iceberg REST catalog (issue 11, proof 9): `weir ingest` lands events in
Iceberg through Apache Iceberg's REST catalog fixture, then `weir serve`, configured by the same
lake.format / iceberg.* settings, attaches that catalog through DuckDB's iceberg extension.

- psql `\\dt` lists the Iceberg tables (a namespace's, and `public`, the namespace main); `\\d`
  describes one; counts and sums equal the produced events exactly through psql and psycopg
  (text and binary);
- the read user's INSERT, CREATE, DROP (and every other write, and the function handing out the
  catalog's vended credentials) are refused with 25006 / 42501, and the table's snapshot is
  unchanged; a write user's INSERT lands as an Iceberg snapshot, and ingest goes on committing
  after it with its ledger exact;
- a new commit by ingest is visible to the next query of an open session, without a restart;
- iceberg.catalog sql, a dead and a stalling catalog stop startup with a clear error naming the
  setting; a catalog failing once serve is up fails the query (58030 / XX000 with the catalog's
  answer), never the server, which serves again when the catalog is back.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.e2e.test_ingest_iceberg import IcebergLake
from tests.e2e.weir_run import (
    WeirIngest,
    create_topic,
    event,
    event_records,
    free_port,
    produce,
    unique,
    wait_for,
)
from tests.harness.fault_proxy import FaultProxy, HostileServer, Rule

EVENTS = 20_000
LATER = 3_000  # produced once serve is up (freshness)
PARTITIONS = 4
WRITER, WRITER_PASSWORD = "weir", "writer pass"
READER, READER_PASSWORD = "analyst", "reader pass"
REFUSED = {"25006", "42501"}


def dsn(port: int, user: str, password: str) -> str:
    return (f"host=127.0.0.1 port={port} user={user} dbname=lake sslmode=require "
            f"password='{password}'")


def psql(port: int, *commands: str, user: str = READER, password: str = READER_PASSWORD,
         options: str = "") -> subprocess.CompletedProcess:
    env = dict(os.environ, PGPASSWORD=password, PGCONNECT_TIMEOUT="10")
    if options:
        env["PGOPTIONS"] = options
    args = ["psql", f"host=127.0.0.1 port={port} user={user} dbname=lake sslmode=require",
            "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-v", "VERBOSITY=verbose"]
    for command in commands:
        args += ["-c", command]
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)


def add_users(build_dir: Path, tls: Path) -> None:
    tls.mkdir(parents=True, exist_ok=True)
    for user, password, role in [(WRITER, WRITER_PASSWORD, "write"),
                                 (READER, READER_PASSWORD, "read")]:
        added = subprocess.run(
            [str(build_dir / "weir"), "serve", "--tls-dir", str(tls), "--add-user", user,
             "--role", role], env=dict(os.environ, WEIR_SERVE_NEW_PASSWORD=password),
            capture_output=True, text=True, timeout=60)
        assert added.returncode == 0, added.stderr


class IcebergServe:
    """`weir serve` over an Iceberg REST catalog, configured by the environment as ingest is."""

    def __init__(self, build_dir: Path, workdir: Path, uri: str, **settings: str):
        self.workdir = workdir
        self.port = free_port()
        self.log_path = workdir / f"serve-{self.port}.log"
        workdir.mkdir(parents=True, exist_ok=True)
        add_users(build_dir, workdir / "tls")
        env = {k: v for k, v in os.environ.items() if not k.startswith("WEIR_")}
        env.update({"WEIR_LAKE_FORMAT": "iceberg", "WEIR_ICEBERG_CATALOG": "rest",
                    "WEIR_ICEBERG_URI": uri, **settings})
        self.command = [str(build_dir / "weir"), "serve", "--port", str(self.port),
                        "--tls-dir", str(workdir / "tls")]
        self.env = env
        self.process: subprocess.Popen | None = None

    def start(self, wait: bool = True) -> "IcebergServe":
        log = open(self.log_path, "ab")
        self.process = subprocess.Popen(self.command, env=self.env, cwd=self.workdir,
                                        stdout=log, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL)
        log.close()
        if wait:
            wait_for(lambda: b"listening on" in self.log_path.read_bytes()
                     or self.process.poll() is not None, 120, "weir serve to listen")
            assert self.process.poll() is None, self.log()
        return self

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            assert self.process.wait(timeout=60) == 0, self.log()


def expected(count: int) -> tuple:
    events = [event(i) for i in range(count)]
    return (count, count, sum(e["id"] for e in events), sum(e["score"] for e in events),
            sum(1 for e in events if e["ok"]), sum(1 for e in events if e["maybe"] is None))


AGGREGATE = ("SELECT count(*), count(DISTINCT id), sum(id), sum(score), "
             "count(*) FILTER (WHERE ok), count(*) FILTER (WHERE maybe IS NULL) FROM {}")


def ingest(lake: IcebergLake, build_dir: Path, bootstrap: str, topic: str, table: str,
           group: str, total: int) -> None:
    """Runs `weir ingest` until the table holds `total` rows, then stops it (exit 0)."""
    weir = WeirIngest(build_dir, lake, bootstrap, topic, table, group).start()
    try:
        wait_for(lambda: lake.count(table) >= total or not weir.alive(), 300,
                 f"{total} rows in {lake.namespace}.{table}")
        assert weir.alive(), weir.log()
    finally:
        code = weir.stop()
    assert code == 0, weir.log()
    assert lake.count(table) == total


@pytest.fixture(scope="module")
def lake(kafka, iceberg_rest, build_dir, tmp_path_factory):
    """EVENTS events in <ns>.events and in main.<unique> (the public schema), through REST."""
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    uri = iceberg_rest["WEIR_TEST_ICEBERG_REST_URI"]
    topic = unique("serve_iceberg")
    create_topic(bootstrap, topic, PARTITIONS)
    assert produce(bootstrap, topic, event_records(0, EVENTS)) == EVENTS
    root = tmp_path_factory.mktemp("serve-iceberg")
    ns = IcebergLake(root / "ns", rest_uri=uri, namespace=unique("ns"))
    group = unique("group")
    ingest(ns, build_dir, bootstrap, topic, "events", group, EVENTS)
    main = IcebergLake(root / "main", rest_uri=uri, namespace="main")
    public_table = unique("served")
    ingest(main, build_dir, bootstrap, topic, public_table, unique("group"), EVENTS)
    serve = IcebergServe(build_dir, root / "serve", uri).start()
    yield {"ns": ns, "main": main, "public_table": public_table, "topic": topic,
           "group": group, "bootstrap": bootstrap, "port": serve.port, "serve": serve,
           "uri": uri}
    serve.stop()


def test_psql_lists_and_counts_the_iceberg_tables(lake):
    port, ns = lake["port"], lake["ns"].namespace
    # The namespace's tables, by pattern and on the search path.
    run = psql(port, f"\\dt {ns}.*")
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == [f"{ns}|events|table|{READER}"], run.stdout
    run = psql(port, "\\dt", options=f"-c search_path={ns}")
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == [f"{ns}|events|table|{READER}"], run.stdout
    # public is the namespace main: exactly the tables the REST catalog holds there.
    from pyiceberg.catalog.rest import RestCatalog

    in_main = sorted(t[-1] for t in RestCatalog("rest", uri=lake["uri"]).list_tables("main"))
    assert lake["public_table"] in in_main
    run = psql(port, "\\dt")
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == [f"public|{t}|table|{READER}" for t in in_main], run.stdout
    # \d: the columns with PostgreSQL's types, as ingest made them.
    run = psql(port, f"\\d {ns}.events")
    assert run.returncode == 0, run.stderr
    columns = [line.split("|")[:2] for line in run.stdout.split("\n") if line.strip()]
    assert columns == [["id", "bigint"], ["name", "text"], ["score", "double precision"],
                       ["ok", "boolean"], ["props", "text"], ["tags", "text"],
                       ["maybe", "bigint"], ["_inserted_at", "timestamp with time zone"]]
    # Counts and sums equal the produced events, in both tables, through psql.
    want = expected(EVENTS)
    for table in (f"{ns}.events", lake["public_table"]):
        run = psql(port, AGGREGATE.format(table))
        assert run.returncode == 0, run.stderr
        got = run.stdout.strip().split("|")
        assert [int(got[0]), int(got[1]), int(got[2])] == list(want[:3]), got
        assert float(got[3]) == pytest.approx(want[3])
        assert [int(got[4]), int(got[5])] == list(want[4:]), got
    run = psql(port, "SELECT table_schema, table_name FROM information_schema.tables "
                     f"WHERE table_schema = '{ns}'")
    assert run.stdout.split() == [f"{ns}|events"], run.stdout


def test_psycopg_reads_the_iceberg_table_in_text_and_binary(lake):
    import psycopg

    port, ns = lake["port"], lake["ns"].namespace
    want = expected(EVENTS)
    with psycopg.connect(dsn(port, READER, READER_PASSWORD), autocommit=True) as conn:
        for binary in (False, True):
            with conn.cursor(binary=binary) as cur:
                cur.execute(AGGREGATE.format(f"{ns}.events"))
                row = cur.fetchone()
                assert row[:3] == want[:3] and row[4:] == want[4:]
                assert row[3] == pytest.approx(want[3])
                cur.execute(f"SELECT id, name, score, ok, props, maybe FROM {ns}.events "
                            "WHERE id IN (%s, %s, %s, %s) ORDER BY id", [0, 7, 4242, EVENTS - 1])
                rows = cur.fetchall()
        assert rows == [(e["id"], e["name"], e["score"], e["ok"], json.dumps(e["props"]),
                         e["maybe"]) for e in map(event, [0, 7, 4242, EVENTS - 1])]


# Every write a read user tries on the Iceberg table, each refused by the READ_ONLY attachment
# (25006) or, for the function that hands out vended credentials, before DuckDB runs it (42501).
READ_USER_WRITES = [
    "INSERT INTO {t} (id, name) VALUES (-1, 'reader')",
    "CREATE TABLE {ns}.made_by_reader (i INTEGER)",
    "CREATE TABLE {ns}.made_by_reader AS SELECT 1 AS i",
    "DROP TABLE {t}",
    "DELETE FROM {t} WHERE id < 10",
    "UPDATE {t} SET name = 'x' WHERE id = 1",
    "TRUNCATE {t}",
    "ALTER TABLE {t} ADD COLUMN extra INTEGER",
    "CREATE SCHEMA lake.reader_ns",
    "CALL set_iceberg_table_properties('lake.{ns}.events', {{'weir.by': 'reader'}})",
    "CALL remove_iceberg_table_properties('lake.{ns}.events', ['write.parquet.compression-codec'])",
    "SELECT config, storage_credentials FROM iceberg_load_table_response('lake.{ns}.events')",
    "COPY {t} FROM STDIN",
]


def test_the_read_user_cannot_write_the_iceberg_lake(lake):
    import psycopg

    port, ns = lake["port"], lake["ns"].namespace
    table = lake["ns"].table("events")
    before = (table.current_snapshot().snapshot_id, dict(table.properties))
    t = f"{ns}.events"
    with psycopg.connect(dsn(port, READER, READER_PASSWORD), autocommit=True) as conn:
        for sql in READ_USER_WRITES:
            statement = sql.format(t=t, ns=ns)
            with pytest.raises(psycopg.Error) as refused:
                if statement.startswith("COPY"):
                    with conn.cursor().copy(statement) as copy:
                        copy.write_row((-1, "copied"))
                else:
                    conn.execute(statement)
            assert refused.value.sqlstate in REFUSED, (statement, refused.value)
            if refused.value.sqlstate == "25006":
                assert "read-only" in str(refused.value), (statement, refused.value)
            # The session goes on.
            assert conn.execute(f"SELECT count(*) FROM {t}").fetchone() == (EVENTS,)
        # The sandbox: the table's own files are readable, the server's other files are not.
        data = conn.execute(f"SELECT count(*) FROM iceberg_metadata('lake.{ns}.events')"
                            ).fetchone()[0]
        assert data >= 1
        for outside in ("SELECT * FROM read_text('/etc/passwd')",
                        "SELECT * FROM read_csv('/etc/hostname')"):
            with pytest.raises(psycopg.Error) as refused:
                conn.execute(outside)
            assert refused.value.sqlstate == "42501", (outside, refused.value)
        # Inside a transaction block too.
        conn.execute("BEGIN")
        with pytest.raises(psycopg.Error) as refused:
            conn.execute(f"INSERT INTO {t} (id) VALUES (-2)")
        assert refused.value.sqlstate == "25006"
        conn.execute("ROLLBACK")
    # psql as well, with its message.
    run = psql(port, f"DROP TABLE {t}")
    assert run.returncode != 0 and "25006" in run.stderr and "read-only" in run.stderr, run.stderr
    table = lake["ns"].table("events")
    assert (table.current_snapshot().snapshot_id, dict(table.properties)) == before
    from pyiceberg.catalog.rest import RestCatalog

    assert "made_by_reader" not in [
        t[-1] for t in RestCatalog("rest", uri=lake["uri"]).list_tables(ns)]


def test_a_write_users_insert_and_ingests_next_commits_are_visible_without_a_restart(
    lake, build_dir
):
    import psycopg

    port, ns, t = lake["port"], lake["ns"].namespace, f"{lake['ns'].namespace}.events"
    with psycopg.connect(dsn(port, READER, READER_PASSWORD), autocommit=True) as reader:
        assert reader.execute(f"SELECT count(*) FROM {t}").fetchone() == (EVENTS,)
        # A write user's INSERT is an Iceberg commit of DuckDB's (no weir ledger in it).
        with psycopg.connect(dsn(port, WRITER, WRITER_PASSWORD), autocommit=True) as writer:
            inserted = writer.execute(f"INSERT INTO {t} (id, name, score) VALUES "
                                      "(-1, 'from serve', 0.5), (-2, 'from serve', 0.25)")
            assert inserted.rowcount == 2
        table = lake["ns"].table("events")
        assert "weir.commit-id" not in table.current_snapshot().summary.additional_properties
        assert reader.execute(f"SELECT count(*), sum(score) FILTER (WHERE id < 0) FROM {t}"
                              ).fetchone() == (EVENTS + 2, 0.75)
        # Ingest goes on from its ledger (the newest weir snapshot) past DuckDB's snapshot.
        bootstrap, topic = lake["bootstrap"], lake["topic"]
        assert produce(bootstrap, topic, event_records(EVENTS, LATER)) == LATER
        ingest(lake["ns"], build_dir, bootstrap, topic, "events", lake["group"],
               EVENTS + LATER + 2)
        # The open session's next query sees the new commits.
        row = reader.execute(AGGREGATE.format(t) + " WHERE id >= 0").fetchone()
        want = expected(EVENTS + LATER)
        assert row[:3] == want[:3] and row[4:] == want[4:]
        assert row[3] == pytest.approx(want[3])
        assert reader.execute(f"SELECT count(*) FROM {t} WHERE id < 0").fetchone() == (2,)
    summary = lake["ns"].table("events").current_snapshot().summary.additional_properties
    ledger = json.loads(summary[f"weir.offsets.{topic}"])
    assert sum(ledger.values()) == EVENTS + LATER
    # And psql, in a new session.
    run = psql(port, f"SELECT count(*), count(DISTINCT id) FROM {t}")
    assert run.stdout.strip() == f"{EVENTS + LATER + 2}|{EVENTS + LATER + 2}", run.stderr


def test_a_sql_catalog_stops_serve_startup_naming_the_setting(build_dir, tmp_path):
    for settings in ({"WEIR_ICEBERG_CATALOG": "sql"},
                     {"WEIR_ICEBERG_CATALOG": "sql", "WEIR_ICEBERG_SQLITE_PATH": "x.db"}):
        serve = IcebergServe(build_dir, tmp_path / unique("sql"), "", **settings)
        serve.env.pop("WEIR_ICEBERG_URI")
        serve.start(wait=False)
        assert serve.process.wait(timeout=60) != 0
        log = serve.log()
        assert "iceberg.catalog: weir serve reads Iceberg through a REST catalog only" in log, log
        assert "listening" not in log


def test_a_dead_or_stalling_catalog_stops_startup_within_its_timeout(build_dir, tmp_path):
    dead = f"http://127.0.0.1:{free_port()}"
    with HostileServer("stall") as stalling:
        for uri in (dead, stalling.uri):
            serve = IcebergServe(build_dir, tmp_path / unique("down"), uri,
                                 WEIR_SERVE_ICEBERG_TIMEOUT="1s")
            started = time.monotonic()
            serve.start(wait=False)
            code = serve.process.wait(timeout=90)
            elapsed = time.monotonic() - started
            log = serve.log()
            assert code != 0, log
            assert f"iceberg.uri {uri}" in log and "serve.iceberg_timeout" in log, log
            assert "listening" not in log
            # DuckDB's HTTP deadline and its 3 retries bound it, not the stall.
            assert elapsed < 60, (elapsed, log)
        assert stalling.requests >= 1


def test_a_catalog_failing_once_serve_is_up_fails_queries_not_the_server(
    lake, build_dir, tmp_path
):
    import psycopg

    ns = lake["ns"].namespace
    with FaultProxy(lake["uri"]) as proxy:
        serve = IcebergServe(build_dir, tmp_path / "proxied", proxy.uri,
                             WEIR_SERVE_ICEBERG_TIMEOUT="2s").start()
        try:
            with psycopg.connect(dsn(serve.port, READER, READER_PASSWORD),
                                 autocommit=True) as conn:
                count = conn.execute(f"SELECT count(*) FROM {ns}.events").fetchone()[0]
                assert count >= EVENTS
                # The catalog answers 503 to every table load: the query fails, clearly.
                rule = proxy.add(Rule("GET", "/tables/events", "status_without_forward",
                                      status=503, times=1_000_000))
                with pytest.raises(psycopg.Error) as failed:
                    conn.execute(f"SELECT count(*) FROM {ns}.events")
                assert failed.value.sqlstate in {"58030", "XX000"}, failed.value
                assert "503" in str(failed.value) or "events" in str(failed.value), failed.value
                assert rule.hits
                # The server and the session go on; once the catalog answers again, so do reads.
                assert serve.process.poll() is None
                rule.times = 0
                assert conn.execute(f"SELECT count(*) FROM {ns}.events").fetchone() == (count,)
                # The catalog stalls (accepts, reads the request, never answers): the query
                # fails once DuckDB's deadline and retries run out, not never.
                stall = proxy.add(Rule("GET", "/tables/events", "stall", times=1_000_000))
                started = time.monotonic()
                with pytest.raises(psycopg.Error) as failed:
                    conn.execute(f"SELECT count(*) FROM {ns}.events")
                assert time.monotonic() - started < 90
                assert failed.value.sqlstate in {"58030", "XX000"}, failed.value
                assert "imeout" in str(failed.value), failed.value
                assert stall.hits and serve.process.poll() is None
                # Another session meanwhile: logs in, runs what needs no catalog.
                with psycopg.connect(dsn(serve.port, READER, READER_PASSWORD),
                                     autocommit=True) as other:
                    assert other.execute("SELECT 41 + 1").fetchone() == (42,)
                stall.times = 0
                assert conn.execute(f"SELECT count(*) FROM {ns}.events").fetchone() == (count,)
        finally:
            serve.stop()


def test_the_catalog_token_and_oauth2_credentials_reach_the_catalog_and_no_session(
    lake, build_dir, tmp_path
):
    import psycopg

    ns = lake["ns"].namespace
    with FaultProxy(lake["uri"]) as proxy:
        proxy.token_lifetime_s = 3600
        for settings, bearer in (({"WEIR_ICEBERG_TOKEN": "fixed-token-1"}, "fixed-token-1"),
                                 ({"WEIR_ICEBERG_CREDENTIAL": "serve-client:s3cret"}, None)):
            proxy.forwarded.clear()
            serve = IcebergServe(build_dir, tmp_path / unique("auth"), proxy.uri,
                                 **settings).start()
            try:
                for user, password in ((READER, READER_PASSWORD), (WRITER, WRITER_PASSWORD)):
                    with psycopg.connect(dsn(serve.port, user, password),
                                         autocommit=True) as conn:
                        count = conn.execute(f"SELECT count(*) FROM {ns}.events").fetchone()
                        assert count[0] >= EVENTS
                        secrets = conn.execute(
                            "SELECT string_agg(secret_string, ' ') FROM duckdb_secrets()"
                        ).fetchone()[0] or ""
                        options = conn.execute(
                            "SELECT string_agg(options::VARCHAR, ' ') FROM duckdb_databases()"
                        ).fetchone()[0] or ""
                        for secret in ("fixed-token-1", "s3cret", "token-0"):
                            assert secret not in secrets + options, (secret, secrets, options)
                assert "fixed-token-1" not in serve.log() and "s3cret" not in serve.log()
            finally:
                serve.stop()
            sent = {headers.get("Authorization") for _, _, headers in proxy.forwarded}
            if bearer:
                assert sent == {f"Bearer {bearer}"}, sent
            else:
                # One OAuth2 exchange per DuckDB database (the writers' and the readers').
                assert len(proxy.tokens_issued) == 2, proxy.tokens_issued
                assert all(t.endswith("-serve-client") for t in proxy.tokens_issued)
                for request in proxy.token_requests:  # client credentials, scope catalog
                    assert request["form"]["grant_type"] == ["client_credentials"], request
                    assert request["form"].get("scope") == ["catalog"], request
                assert sent == {f"Bearer {t}" for t in proxy.tokens_issued}, sent
