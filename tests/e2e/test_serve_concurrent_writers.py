"""Issue 19: writers of `weir serve` never fail because of each other or of `weir ingest` next to
them. 32 reading sessions and 8 writing sessions (INSERT and COPY FROM STDIN) for 30 s while
`weir ingest` commits into another table of the same lake every second, on a SQLite catalog
made by weir (WAL), one made by DuckDB (rollback journal, switched to WAL by serve) and a
PostgreSQL catalog: no session sees an error, and every table holds exactly what was written."""

from __future__ import annotations

import signal

import pytest

from tests.e2e.serve_mix import (
    EventFeeder,
    Load,
    create_tables,
    duckdb_attach,
    journal_mode,
    start_serve,
)
from tests.e2e.weir_run import (
    Lake,
    WeirIngest,
    create_topic,
    event_records,
    fresh_postgres_database,
    produce,
    unique,
    wait_for,
)

SECONDS = 30
BIG_ROWS = 100_000


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
    create_tables(lake, BIG_ROWS)
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
        load = Load(port, BIG_ROWS)
        with EventFeeder(bootstrap, topic, produced) as feeder:
            load.run(SECONDS)
        produced = feeder.produced
        assert load.errors == [], "\n".join(load.errors[:10]) + "\n" + serve_log.read_text()[-3000:]
        assert all(load.latencies.values()), {k: len(v) for k, v in load.latencies.items()}
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


def test_a_transaction_block_that_loses_to_another_writer_gets_40001(build_dir, tmp_path):
    """What the writer lock cannot cover: a block read the catalog before another writer
    committed. Its COMMIT fails as a serialization failure the client may retry, not XX000."""
    import psycopg

    from tests.e2e.serve_mix import dsn

    lake = Lake(tmp_path / "lake")
    lake.root.mkdir(parents=True)
    create_tables(lake, 10)
    port, serve, serve_log = start_serve(build_dir, lake, tmp_path)
    try:
        with psycopg.connect(dsn(port)) as block, \
                psycopg.connect(dsn(port), autocommit=True) as other:
            block.execute("INSERT INTO w VALUES (1, 'block')")  # psycopg opened the block
            other.execute("INSERT INTO w VALUES (2, 'other')")
            with pytest.raises(psycopg.errors.SerializationFailure) as failure:
                block.commit()
            assert failure.value.sqlstate == "40001", failure.value
            block.rollback()
            block.execute("INSERT INTO w VALUES (3, 'retried')")
            block.commit()  # the retry lands
        con = duckdb_attach(lake)
        assert con.execute("SELECT id, who FROM l.w ORDER BY id").fetchall() == [
            (2, "other"), (3, "retried")]
        con.close()
    finally:
        serve.send_signal(signal.SIGTERM)
        assert serve.wait(timeout=60) == 0, serve_log.read_text()[-3000:]
