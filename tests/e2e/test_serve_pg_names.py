"""weir serve answers with PostgreSQL's own result column names (issue 32): the same queries run
through psycopg against `weir serve` and against the harness's real PostgreSQL holding the same
rows, and the column names compared exactly; the values too, where both engines define them
alike. Names PostgreSQL gives computed columns (`count`, `?column?`, `int4`, `case`, ...) come
from its FigureColname, which weir's rewriter applies as aliases."""

from __future__ import annotations

import datetime
import decimal
import signal
import uuid
from pathlib import Path

import psycopg
import pytest

from tests.e2e.test_serve import PASSWORD, duckdb_lake, start_serve

ROWS = [
    (1, 10, "one", datetime.date(2024, 1, 5), True),
    (2, 20, "two", datetime.date(2024, 2, 10), False),
    (2, 25, "two b", datetime.date(2024, 2, 11), True),
    (3, -5, None, datetime.date(2023, 12, 31), None),
]
CREATE = "CREATE TABLE t (k INTEGER, v BIGINT, name VARCHAR, d DATE, flag BOOLEAN)"
BIG_ROWS = 200_000
INSERT = ("INSERT INTO t VALUES (1, 10, 'one', '2024-01-05', true), "
          "(2, 20, 'two', '2024-02-10', false), (2, 25, 'two b', '2024-02-11', true), "
          "(3, -5, NULL, '2023-12-31', NULL)")

# Queries whose values differ by design between the two servers (clock, server, user, session)
# or whose result types differ (listed in docs/SERVE.md): their names are compared alone.
NAMES_ONLY = [
    "SELECT now()",
    "SELECT current_timestamp",
    "SELECT version()",
    "SELECT current_user",
    "SELECT session_user",
    "SELECT user",
    "SELECT current_schema()",
    "SELECT current_database()",
    "SELECT current_catalog",
    "SELECT pg_backend_pid()",
    "SELECT date_trunc('month', d) FROM t ORDER BY k, v",
    "SELECT now() - interval '1 day'",
]

QUERIES = [
    "SELECT 1",
    "SELECT 1 + 1",
    "SELECT 'a' || 'b'",
    "SELECT 'it''s'",
    "SELECT NULL",
    "SELECT true, false",
    "SELECT 1::int4, 2::int8, '3'::text, 4.5::float8",
    "SELECT 1::integer, 1::bigint, 1::smallint, 1.5::real, 1.5::double precision",
    "SELECT 1::numeric, 'true'::boolean, '2024-01-01'::date, 'x'::varchar",
    "SELECT CAST(1 AS integer), CAST(k AS text) FROM t ORDER BY k, v",
    "SELECT count(*) FROM t",
    "SELECT count(k), count(DISTINCT k) FROM t",
    "SELECT sum(v), min(v), max(v) FROM t",
    "SELECT avg(k)::float8 FROM t",
    "SELECT count(*) AS n FROM t",
    "SELECT k, count(*) FROM t GROUP BY k ORDER BY k",
    "SELECT k, sum(v) FROM t GROUP BY k HAVING sum(v) > 0 ORDER BY k",
    "SELECT k, count(*), sum(v), min(d), max(d) FROM t GROUP BY 1 ORDER BY 1",
    "SELECT coalesce(name, 'x') FROM t ORDER BY k, v",
    "SELECT COALESCE(NULL, 1)",
    "SELECT nullif(k, 1) FROM t ORDER BY k, v",
    "SELECT greatest(k, 2), least(k, 2) FROM t ORDER BY k, v",
    "SELECT CASE WHEN k > 1 THEN 'big' ELSE 'small' END FROM t ORDER BY k, v",
    "SELECT CASE WHEN k > 1 THEN name END FROM t ORDER BY k, v",
    "SELECT CASE k WHEN 1 THEN 'one' ELSE name END FROM t ORDER BY k, v",
    "SELECT upper(name), lower(name), length(name) FROM t ORDER BY k, v",
    "SELECT substring(name FROM 1 FOR 3) FROM t ORDER BY k, v",
    "SELECT trim('  x  ')",
    "SELECT position('b' IN 'abc')",
    "SELECT extract(year FROM d) FROM t ORDER BY k, v",
    "SELECT k = 1 FROM t ORDER BY k, v",
    "SELECT k IS NULL, name IS NOT NULL FROM t ORDER BY k, v",
    "SELECT NOT flag FROM t ORDER BY k, v",
    "SELECT EXISTS (SELECT 1 FROM t WHERE k = 1)",
    "SELECT (SELECT max(v) FROM t)",
    "SELECT (SELECT max(v) AS top FROM t)",
    "SELECT ARRAY[1, 2, 3]",
    "SELECT k AS key FROM t ORDER BY 1",
    "SELECT t.k FROM t ORDER BY 1",
    "SELECT * FROM t ORDER BY k, v",
    "SELECT t.* FROM t ORDER BY k, v",
    "SELECT k, v FROM t WHERE name LIKE 'tw%' ORDER BY k, v",
    "SELECT abs(-1), ceil(1.2), floor(1.8)",
    "SELECT 1 UNION SELECT 2 ORDER BY 1",
    "SELECT sum(v) FROM t UNION ALL SELECT count(*) FROM t ORDER BY 1",
    "WITH w AS (SELECT k, v FROM t) SELECT k + v FROM w ORDER BY 1",
    "SELECT string_agg(name, ',' ORDER BY name) FROM t",
    "SELECT row_number() OVER (ORDER BY k, v) FROM t ORDER BY 1",
    "SELECT k, rank() OVER (PARTITION BY k ORDER BY v) FROM t ORDER BY k, v",
    "SELECT bool_and(flag), bool_or(flag) FROM t",
    "SELECT DISTINCT k FROM t ORDER BY k",
    "SELECT k FROM t ORDER BY k LIMIT 2 OFFSET 1",
    "SELECT concat(name, '!') FROM t ORDER BY k, v",
    "SELECT replace(name, 'w', 'W') FROM t ORDER BY k, v",
    "SELECT left(name, 2), right(name, 2) FROM t ORDER BY k, v",
    "SELECT md5('a')",
    "SELECT mod(7, 3), 7 % 3",
    "SELECT 'abc' ~ 'b'",
    "SELECT x FROM generate_series(1, 3) x ORDER BY x",
    "SELECT k::text || ':' || v::text FROM t ORDER BY k, v",
    "SELECT (k + 1) * 2, -k FROM t ORDER BY k, v",
    "SELECT k, v FROM t WHERE k IN (1, 2) AND v IS DISTINCT FROM 20 ORDER BY k, v",
    "SELECT count(*) FILTER (WHERE flag) FROM t",
    "SELECT max(v) - min(v) FROM t",
    "SELECT count(*) FROM t WHERE d BETWEEN '2024-01-01' AND '2024-12-31'",
    "SELECT k, count(*) FROM t GROUP BY k HAVING count(*) > 1",
    "SELECT k FROM t WHERE v > (SELECT avg(v) FROM t) ORDER BY k",
    "SELECT k, name FROM t ORDER BY name NULLS FIRST, k",
    "SELECT pg_size_pretty(0::bigint), pg_size_pretty(1::bigint), pg_size_pretty(10239::bigint), "
    "pg_size_pretty(10240::bigint), pg_size_pretty(10752::bigint), "
    "pg_size_pretty(1048575::bigint), pg_size_pretty(20970496::bigint), "
    "pg_size_pretty(20971520::bigint), pg_size_pretty(10000000000::bigint), "
    "pg_size_pretty(9007199254740992::bigint)",
    "SELECT current_catalog = current_database()",
    # Everyday SQL of dashboards and notebooks.
    "SELECT k, count(*) AS n, round(avg(v)::numeric, 2) AS mean FROM t GROUP BY k ORDER BY n DESC, k",
    "SELECT d, v, sum(v) OVER (ORDER BY d) FROM t ORDER BY d",
    "SELECT k, v, lag(v) OVER (PARTITION BY k ORDER BY v), lead(v) OVER (ORDER BY k, v) FROM t "
    "ORDER BY k, v",
    "SELECT k, first_value(v) OVER (PARTITION BY k ORDER BY v), dense_rank() OVER (ORDER BY k) "
    "FROM t ORDER BY k, v",
    "SELECT count(*) OVER () FROM t LIMIT 1",
    "SELECT k, array_agg(v ORDER BY v) FROM t GROUP BY k ORDER BY k",
    "SELECT k, max(name) FROM t GROUP BY k ORDER BY k",
    "SELECT name, length(name) FROM t WHERE name IS NOT NULL ORDER BY 2, 1",
    "SELECT split_part('a,b,c', ',', 2), starts_with('abc', 'a'), strpos('abc', 'c')",
    "SELECT lpad('7', 3, '0'), rpad('7', 3, '0'), repeat('ab', 2), reverse('abc')",
    "SELECT initcap('hello world'), ltrim('  x'), rtrim('x  '), btrim('xax', 'x')",
    "SELECT 'x' IN ('x', 'y'), 3 BETWEEN 1 AND 5, NOT (1 = 2)",
    "SELECT 10 / 3, 10.0 / 4, 10 % 3, -7 / 2",
    "SELECT 2 ^ 10, sqrt(16), exp(0), ln(1), log(100)",
    "SELECT sign(-3), trunc(2.7), round(2.567, 2), ceiling(2.1)",
    "SELECT CAST('42' AS integer) + 1, '3.5'::numeric * 2, 7::float8 / 2",
    "SELECT date '2024-03-01' - date '2024-02-01', date '2024-02-28' + 1",
    "SELECT date_part('month', d), date_part('year', d) FROM t ORDER BY k, v",
    "SELECT to_char(d, 'YYYY-MM') FROM t ORDER BY k, v",
    "SELECT d + interval '1 day' FROM t ORDER BY k, v",
    "SELECT age(date '2024-03-01', date '2024-01-01')",
    "SELECT make_date(2024, 2, 29), extract(dow FROM date '2024-02-29')",
    "SELECT k, CASE WHEN v > 15 THEN 'high' WHEN v > 0 THEN 'low' ELSE 'negative' END AS band "
    "FROM t ORDER BY k, v",
    "SELECT coalesce(sum(v) FILTER (WHERE k = 9), 0) FROM t",
    "SELECT k FROM t GROUP BY k HAVING sum(v) > 20 ORDER BY k",
    "SELECT k, v FROM t ORDER BY v DESC LIMIT 2",
    "SELECT k, v FROM t ORDER BY v DESC NULLS LAST OFFSET 1 LIMIT 2",
    "SELECT DISTINCT ON (k) k, v FROM t ORDER BY k, v DESC",
    "SELECT a.k, b.v FROM t a JOIN t b ON a.k = b.k AND a.v < b.v ORDER BY 1, 2",
    "SELECT a.k, b.name FROM t a LEFT JOIN t b ON b.v = a.v + 5 ORDER BY a.k, a.v",
    "SELECT k FROM t WHERE EXISTS (SELECT 1 FROM t t2 WHERE t2.k = t.k AND t2.v > 20) ORDER BY k",
    "SELECT k FROM t WHERE k NOT IN (SELECT k FROM t WHERE flag) ORDER BY k",
    "SELECT k FROM t INTERSECT SELECT k FROM t WHERE v > 0 ORDER BY 1",
    "SELECT k FROM t EXCEPT SELECT 2 ORDER BY 1",
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5) "
    "SELECT sum(i) FROM n",
    "WITH s AS (SELECT k, sum(v) AS total FROM t GROUP BY k) SELECT max(total) FROM s",
    "SELECT * FROM (VALUES (1, 'a'), (2, 'b')) AS v(id, label) ORDER BY id",
    "SELECT x.n FROM (SELECT count(*) AS n FROM t) x",
    "SELECT count(*) FROM t WHERE name ILIKE 'T%'",
    "SELECT count(*) FROM t WHERE name SIMILAR TO 't%'",
    "SELECT name ~* '^TWO' FROM t ORDER BY k, v",
    "SELECT string_agg(DISTINCT k::text, '-' ORDER BY k::text) FROM t",
    "SELECT stddev_samp(v)::numeric(10, 4), var_pop(v)::numeric(10, 4) FROM t",
    "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY v) FROM t",
    "SELECT mode() WITHIN GROUP (ORDER BY k) FROM t",
    "SELECT corr(k, v)::numeric(10, 6) FROM t",
    "SELECT every(v > -10), count(*) FILTER (WHERE name LIKE '%b') FROM t",
    "SELECT json_build_object('k', 1)::text",
    "SELECT 'a' < 'b', 'B' < 'a'",
    "SELECT greatest('a', 'b'), least(1.5, 2)",
    "SELECT pg_typeof(1), pg_typeof('a'::text), pg_typeof(1.5), pg_typeof(2.5::float8), "
    "pg_typeof(now()), pg_typeof(true)",
]


# Result types that differ from PostgreSQL's by DuckDB's type system, as docs/ARCHITECTURE.md
# ("PostgreSQL's column names") lists them: (weir's OID, PostgreSQL's OID) -> why. Any other
# difference fails the test.
TYPE_DIFFERENCES = {
    (25, 1043): "DuckDB's VARCHAR has no length: text, not varchar",
    (25, 19): "DuckDB has no name type: current_user and friends are text",
    (20, 23): "DuckDB's length(), position() and generate_series() return BIGINT",
    (20, 1700): "DuckDB's extract() returns BIGINT where PostgreSQL 14+ returns numeric",
    (23, 25): "an untyped NULL is an integer in DuckDB, text in PostgreSQL",
    (1114, 1184): "DuckDB's date_trunc() of a date is a timestamp, PostgreSQL's a timestamptz",
    (701, 1700): "a decimal constant divided is a double in DuckDB, numeric in PostgreSQL",
    (21, 701): "DuckDB's sign() of an integer is an integer, PostgreSQL's a double",
    (20, 701): "DuckDB's date_part() returns BIGINT, PostgreSQL's a double",
    (1700, 20): "DuckDB sums integers into HUGEINT (served as numeric), PostgreSQL into bigint",
    (25, 2206): "pg_typeof() is text: DuckDB has no regtype",
}


# Queries weir answers otherwise, each with the reason (docs/ARCHITECTURE.md lists them too);
# the test fails when one of them changes, and on any other difference.
KNOWN_DIFFERENCES = {
    "SELECT initcap('hello world'), ltrim('  x'), rtrim('x  '), btrim('xax', 'x')":
        "DuckDB has no initcap()",
    "SELECT to_char(d, 'YYYY-MM') FROM t ORDER BY k, v":
        "DuckDB has no to_char(); strftime() takes its own patterns",
    "SELECT count(*) FROM t WHERE name SIMILAR TO 't%'":
        "DuckDB's SIMILAR TO takes a regular expression, not SQL's % and _ wildcards",
    "SELECT json_build_object('k', 1)::text":
        "DuckDB's JSON text has no spaces around : and ,",
}


def normalized(value):
    """Values compared across engines: numbers as floats (PostgreSQL answers numeric where DuckDB
    answers an integer or a double for the same value), everything else as it is."""
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, list):
        return [normalized(v) for v in value]
    return value


def answer(conn, sql: str):
    with conn.cursor() as cur:
        cur.execute(sql)
        names = [d.name for d in cur.description]
        oids = [d.type_code for d in cur.description]
        rows = [tuple(normalized(v) for v in row) for row in cur.fetchall()]
    return names, oids, rows


@pytest.fixture
def both(postgres, build_dir, tmp_path):
    """(weir serve connection, PostgreSQL connection), each holding table t with ROWS."""
    lake = duckdb_lake(tmp_path, f"{CREATE}; {INSERT}; CREATE TABLE big AS SELECT range AS id, "
                                 f"'row ' || range AS label FROM range({BIG_ROWS});")
    port, process = start_serve(build_dir, lake, tmp_path)
    schema = f"names_{uuid.uuid4().hex[:8]}"
    pg = psycopg.connect(postgres["WEIR_TEST_PG_URL"], autocommit=True)
    pg.execute(f"CREATE SCHEMA {schema}")
    pg.execute(f"SET search_path TO {schema}")
    pg.execute(CREATE)
    pg.execute(INSERT)
    weir = psycopg.connect(f"host=127.0.0.1 port={port} user=weir dbname=lake sslmode=require "
                           f"password='{PASSWORD}'", autocommit=True)
    try:
        yield weir, pg, lake
    finally:
        weir.close()
        pg.execute(f"DROP SCHEMA {schema} CASCADE")
        pg.close()
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)


def test_result_columns_are_named_as_postgresql_names_them(both):
    weir, pg, _ = both
    assert answer(pg, "SELECT count(*) FROM t")[2] == [(float(len(ROWS)),)]
    differences = []
    types = []
    for sql in QUERIES + NAMES_ONLY:
        pg_names, pg_oids, pg_rows = answer(pg, sql)
        try:
            weir_names, weir_oids, weir_rows = answer(weir, sql)
        except psycopg.Error as error:
            differences.append(f"{sql}: weir fails: {str(error).splitlines()[0]}")
            continue
        if weir_names != pg_names:
            differences.append(f"{sql}: names {weir_names} != PostgreSQL's {pg_names}")
        elif sql in QUERIES and weir_rows != pg_rows:
            differences.append(f"{sql}: rows {weir_rows} != PostgreSQL's {pg_rows}")
        for weir_oid, pg_oid in zip(weir_oids, pg_oids):
            if weir_oid != pg_oid and (weir_oid, pg_oid) not in TYPE_DIFFERENCES:
                types.append(f"{sql}: type OIDs {weir_oids} != PostgreSQL's {pg_oids}")
    unexpected = [d for d in differences if d.split(": ")[0] not in KNOWN_DIFFERENCES]
    assert not unexpected, "\n".join(unexpected)
    assert sorted(d.split(": ")[0] for d in differences) == sorted(KNOWN_DIFFERENCES), differences
    assert not types, "\n".join(types)


def test_pg_get_keywords_answers_as_postgresql(both):
    weir, pg, _ = both
    query = "SELECT word, catcode, catdesc FROM pg_get_keywords() ORDER BY word"
    weir_names, _, weir_rows = answer(weir, query)
    pg_names, _, pg_rows = answer(pg, query)
    assert weir_names == pg_names == ["word", "catcode", "catdesc"]
    weir_words = {word: (code, desc) for word, code, desc in weir_rows}
    pg_words = {word: (code, desc) for word, code, desc in pg_rows}
    # The list is the parser's that runs the statements, DuckDB's: PostgreSQL's grammar, whose
    # keywords keep their categories but for the few DuckDB changed (docs/ARCHITECTURE.md).
    shared = set(weir_words) & set(pg_words)
    assert {"select", "from", "user", "order", "group", "table", "abort"} <= shared
    assert len(shared) >= 0.9 * len(pg_words), sorted(set(pg_words) - shared)
    differing = sorted(w for w in shared if weir_words[w] != pg_words[w])
    assert differing == ["at", "by", "columns", "generated", "grant", "show", "user"], \
        [(w, weir_words[w], pg_words[w]) for w in differing]


def test_relation_sizes_are_the_tables_data_bytes(both):
    weir, _, lake = both
    on_disk = sum(f.stat().st_size for f in Path(lake.data_path).rglob("*.parquet")
                  if "big" in f.parts)
    assert on_disk > 100_000  # the table's rows are in Parquet files, not inlined
    with weir.cursor() as cur:
        cur.execute("SELECT pg_total_relation_size('big'::regclass), pg_relation_size('big'), "
                    "pg_table_size('public.big'::regclass), pg_indexes_size('big'::regclass), "
                    "pg_relation_size('big', 'fsm')")
        assert cur.fetchone() == (on_disk, on_disk, on_disk, 0, None)
        cur.execute("SELECT pg_total_relation_size(0)")
        assert cur.fetchone() == (None,)
        # psql's \dt+ and DBeaver ask pg_class for every table's size at once.
        cur.execute("SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c "
                    "JOIN pg_namespace n ON n.oid = c.relnamespace "
                    "WHERE n.nspname = 'public' AND c.relkind = 'r' ORDER BY 1")
        sizes = dict(cur.fetchall())
    assert sizes["big"] == on_disk
    assert set(sizes) == {"big", "t"}
