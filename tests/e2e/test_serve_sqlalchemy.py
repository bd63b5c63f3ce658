"""SQLAlchemy 2 over psycopg 3 against `weir serve` (issue 4): the Inspector's schemas, tables,
views, columns with their SQLAlchemy types, keys and indexes as PostgreSQL reports them for a
table without any, MetaData.reflect, and reads and writes through the reflected Table (psycopg
binds parameters server-side)."""

from __future__ import annotations

import datetime
import decimal
import signal
import urllib.parse

import pytest

from tests.e2e.test_serve import PASSWORD, duckdb_lake, start_serve

LAKE_SQL = """
CREATE TABLE events (id BIGINT NOT NULL, name VARCHAR, even BOOLEAN, score DOUBLE,
  ts TIMESTAMPTZ, amount DECIMAL(18,3), tags INTEGER[], small SMALLINT, i INTEGER, r FLOAT,
  d DATE, t TIME, plain TIMESTAMP, iv INTERVAL, u UUID, b BLOB, j JSON, names VARCHAR[]);
INSERT INTO events (id, name, even, score, amount)
  SELECT range, 'name ' || range, range % 2 = 0, range / 4, range * 1.5 FROM range(100);
CREATE SCHEMA other;
CREATE TABLE other.o2 (x INTEGER);
CREATE VIEW v1 AS SELECT 1 AS one;
"""


@pytest.fixture
def engine(build_dir, tmp_path):
    import sqlalchemy

    lake = duckdb_lake(tmp_path, LAKE_SQL)
    port, process = start_serve(build_dir, lake, tmp_path)
    password = urllib.parse.quote(PASSWORD)
    engine = sqlalchemy.create_engine(
        f"postgresql+psycopg://weir:{password}@127.0.0.1:{port}/lake?sslmode=require")
    yield engine
    engine.dispose()
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == 0


def test_inspector_lists_schemas_tables_views_and_columns(engine):
    from sqlalchemy import inspect
    from sqlalchemy.dialects import postgresql as pg

    inspector = inspect(engine)
    assert inspector.default_schema_name == "public"
    assert inspector.get_schema_names() == ["information_schema", "other", "public"]
    assert inspector.get_table_names() == ["events"]
    assert inspector.get_table_names(schema="other") == ["o2"]
    assert inspector.get_view_names() == ["v1"]
    assert inspector.get_view_definition("v1").strip().rstrip(";") == "SELECT 1 AS one"
    assert inspector.has_table("events") and inspector.has_table("o2", schema="other")
    assert not inspector.has_table("nope") and not inspector.has_table("o2")
    assert inspector.has_schema("other") and not inspector.has_schema("nope")

    columns = inspector.get_columns("events")
    # (name, type class, type arguments, nullable) for each column, in table order.
    expected = [
        ("id", pg.BIGINT, {}, False),
        ("name", pg.TEXT, {}, True),
        ("even", pg.BOOLEAN, {}, True),
        ("score", pg.DOUBLE_PRECISION, {}, True),
        ("ts", pg.TIMESTAMP, {"timezone": True}, True),
        ("amount", pg.NUMERIC, {"precision": 18, "scale": 3}, True),
        ("tags", pg.ARRAY, {}, True),
        ("small", pg.SMALLINT, {}, True),
        ("i", pg.INTEGER, {}, True),
        ("r", pg.REAL, {}, True),
        ("d", pg.DATE, {}, True),
        ("t", pg.TIME, {"timezone": False}, True),
        ("plain", pg.TIMESTAMP, {"timezone": False}, True),
        ("iv", pg.INTERVAL, {}, True),
        ("u", pg.UUID, {}, True),
        ("b", pg.BYTEA, {}, True),
        ("j", pg.JSON, {}, True),
        ("names", pg.ARRAY, {}, True),
    ]
    assert [column["name"] for column in columns] == [name for name, *_ in expected]
    for column, (name, type_class, arguments, nullable) in zip(columns, expected):
        assert type(column["type"]) is type_class, (name, column["type"])
        for argument, value in arguments.items():
            assert getattr(column["type"], argument) == value, (name, argument, column["type"])
        assert column["nullable"] is nullable, name
        assert column["default"] is None and column["comment"] is None, column
        assert column["autoincrement"] is False, column
    by_name = {column["name"]: column["type"] for column in columns}
    assert type(by_name["tags"].item_type) is pg.INTEGER
    assert type(by_name["names"].item_type) is pg.TEXT
    assert [c["name"] for c in inspector.get_columns("o2", schema="other")] == ["x"]

    # A lake table has no keys, indexes or constraints: reported as for such a PostgreSQL table.
    assert inspector.get_pk_constraint("events") == {"name": None, "constrained_columns": []}
    assert inspector.get_foreign_keys("events") == []
    assert inspector.get_indexes("events") == []
    assert inspector.get_unique_constraints("events") == []
    assert inspector.get_check_constraints("events") == []
    assert inspector.get_table_comment("events") == {"text": None}
    assert inspector.get_sequence_names() == []
    assert inspector.get_enums() == []


def test_reflected_tables_select_and_insert(engine):
    from sqlalchemy import MetaData, func, select

    metadata = MetaData()
    metadata.reflect(engine)
    assert sorted(metadata.tables) == ["events"]
    events = metadata.tables["events"]
    assert [column.name for column in events.columns][:4] == ["id", "name", "even", "score"]

    with engine.connect() as conn:
        rows = conn.execute(
            select(events.c.id, events.c.name, events.c.even, events.c.score, events.c.amount)
            .where(events.c.id.between(40, 43), events.c.even.is_(True))
            .order_by(events.c.id)).all()
        assert [tuple(row) for row in rows] == [
            (40, "name 40", True, 10.0, decimal.Decimal("60.000")),
            (42, "name 42", True, 10.5, decimal.Decimal("63.000")),
        ]
        assert conn.execute(select(func.count()).select_from(events)
                            .where(events.c.name.like("name 9%"))).scalar_one() == 11

    stamp = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)
    new_rows = [{"id": 1000 + k, "name": f"new {k}", "even": k % 2 == 0, "score": k / 8,
                 "ts": stamp, "amount": decimal.Decimal(f"{k}.125"), "tags": [k, k + 1]}
                for k in range(5)]
    with engine.begin() as conn:
        conn.execute(events.insert(), new_rows)  # executemany (rowcount -1, as on PostgreSQL)
    with engine.begin() as conn:
        assert conn.execute(select(func.count()).select_from(events)).scalar_one() == 105
        got = conn.execute(select(events.c.id, events.c.name, events.c.even, events.c.score,
                                  events.c.ts, events.c.amount, events.c.tags)
                           .where(events.c.id >= 1000).order_by(events.c.id)).all()
        assert [tuple(row) for row in got] == [
            (row["id"], row["name"], row["even"], row["score"], row["ts"], row["amount"],
             row["tags"]) for row in new_rows]
        conn.execute(events.insert().values(id=2000, name="one more"))
        deleted = conn.execute(events.delete().where(events.c.id >= 1003))
        assert deleted.rowcount == 3  # 1003, 1004 and 2000
    with engine.begin() as conn:
        assert conn.execute(select(func.count()).select_from(events)).scalar_one() == 103
        assert conn.execute(select(events.c.name).where(events.c.id == 1002)).scalar_one() == \
            "new 2"


# psycopg prepares executemany's statement (and any statement run 5 times) as a named
# server-side statement; after a ROLLBACK it sends `DEALLOCATE ALL` (and `DEALLOCATE name` when
# its cache rotates), which the protocol layer answers for its named statements.
def test_rollback_after_prepared_statements(engine):
    from sqlalchemy import MetaData, Table, func, select

    events = Table("events", MetaData(), autoload_with=engine)
    with engine.connect() as conn:
        conn.execute(events.insert(), [{"id": 1000 + k, "name": "gone"} for k in range(3)])
        conn.rollback()
        assert conn.execute(select(func.count()).select_from(events)).scalar_one() == 100
