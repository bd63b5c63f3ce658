"""weir's Iceberg format code checked against the real readers.

`iceberg_tool` (src/lake/iceberg/tests) applies weir's transforms and writes tables with weir's
code alone (Parquet data files, Avro manifests and manifest lists, vN.metadata.json,
version-hint.text). These tests compare the transforms with pyiceberg's own, read the tables
back with pyiceberg and with DuckDB's iceberg extension, and check pyiceberg's scan planning
on partition fields.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import subprocess
import uuid
from decimal import Decimal
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from pyiceberg.expressions import And, EqualTo, GreaterThanOrEqual, LessThan
from pyiceberg.table import StaticTable
from pyiceberg.transforms import (
    BucketTransform,
    DayTransform,
    HourTransform,
    MonthTransform,
    TruncateTransform,
    YearTransform,
)
from tests.e2e.weir_run import fresh_bucket
from pyiceberg.types import (
    BinaryType,
    DateType,
    DecimalType,
    FixedType,
    IntegerType,
    LongType,
    StringType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

VALUES_PER_CASE = 10_000
MICROS_PER_DAY = 86_400_000_000


@pytest.fixture(scope="session")
def iceberg_tool(build_dir: Path) -> Path:
    tool = build_dir / "src" / "lake" / "iceberg" / "tests" / "iceberg_tool"
    assert tool.exists(), f"{tool} is missing: build the iceberg_tool target"
    return tool


# --- transforms --------------------------------------------------------------------------------


def _random_text(rng: random.Random) -> str:
    def code_point() -> str:
        while True:
            cp = rng.choice([rng.randrange(0x20, 0x7F), rng.randrange(0x80, 0x800),
                             rng.randrange(0x800, 0x10000), rng.randrange(0x10000, 0x110000)])
            if not 0xD800 <= cp <= 0xDFFF:
                return chr(cp)

    return "".join(code_point() for _ in range(rng.randrange(0, 12)))


# type text for weir, pyiceberg type, generator of (weir JSON input, pyiceberg input)
def _values(kind: str, rng: random.Random):
    if kind == "int":
        v = rng.randrange(-(2**31), 2**31)
        return v, v
    if kind in ("long", "time"):
        v = rng.randrange(-(2**63), 2**63) if kind == "long" else rng.randrange(0, MICROS_PER_DAY)
        return v, v
    if kind == "date":
        v = rng.randrange(-719_000, 2_900_000)  # years 1..9999, what Python dates hold
        return v, v
    if kind in ("timestamp", "timestamptz"):
        v = rng.randrange(-200 * 365 * MICROS_PER_DAY, 200 * 365 * MICROS_PER_DAY)
        return v, v
    if kind == "string":
        v = _random_text(rng)
        return v, v
    if kind == "binary":
        v = rng.randbytes(rng.randrange(0, 20))
        return v.hex(), v
    if kind == "fixed[5]":
        v = rng.randbytes(5)
        return v.hex(), v
    if kind == "uuid":
        v = uuid.UUID(bytes=rng.randbytes(16))
        return v.bytes.hex(), v
    if kind == "decimal(38,4)":
        unscaled = rng.randrange(-(10**38) + 1, 10**38)
        return str(unscaled), Decimal(f"{unscaled}E-4")  # exact: no context rounding
    if kind == "decimal(9,2)":
        unscaled = rng.randrange(-(10**9) + 1, 10**9)
        return str(unscaled), Decimal(f"{unscaled}E-2")
    raise AssertionError(kind)


_TYPES = {
    "int": IntegerType(), "long": LongType(), "date": DateType(), "time": TimeType(),
    "timestamp": TimestampType(), "timestamptz": TimestamptzType(), "string": StringType(),
    "binary": BinaryType(), "fixed[5]": FixedType(5), "uuid": UUIDType(),
    "decimal(38,4)": DecimalType(38, 4), "decimal(9,2)": DecimalType(9, 2),
}

_CASES = [
    *[(t, "bucket[16]") for t in ["int", "long", "date", "time", "timestamp", "timestamptz",
                                   "string", "binary", "fixed[5]", "uuid", "decimal(38,4)",
                                   "decimal(9,2)"]],
    ("long", "bucket[1000003]"), ("string", "bucket[1]"), ("uuid", "bucket[2147483647]"),
    ("int", "truncate[10]"), ("long", "truncate[7]"), ("string", "truncate[3]"),
    ("binary", "truncate[4]"), ("decimal(38,4)", "truncate[50]"), ("decimal(9,2)", "truncate[3]"),
    *[(t, f) for t in ["date", "timestamp", "timestamptz"] for f in ["year", "month", "day"]],
    ("timestamp", "hour"), ("timestamptz", "hour"),
]


def _pyiceberg_transform(text: str):
    if text.startswith("bucket["):
        return BucketTransform(int(text[7:-1]))
    if text.startswith("truncate["):
        return TruncateTransform(int(text[9:-1]))
    return {"year": YearTransform(), "month": MonthTransform(), "day": DayTransform(),
            "hour": HourTransform()}[text]


def _expected_json(value, kind: str, transform: str):
    if transform.startswith("truncate["):
        if kind == "binary":
            return value.hex()
        if kind.startswith("decimal"):
            scale = int(kind.split(",")[1].rstrip(")"))
            sign, digits, exponent = value.as_tuple()
            unscaled = int("".join(map(str, digits))) * 10 ** (exponent + scale)
            return str(-unscaled if sign else unscaled)
    return value


@pytest.mark.parametrize("kind,transform", _CASES, ids=[f"{t}-{f}" for t, f in _CASES])
def test_transforms_match_pyiceberg_on_random_values(iceberg_tool, kind, transform):
    rng = random.Random(f"{kind}/{transform}")
    pairs = [_values(kind, rng) for _ in range(VALUES_PER_CASE)]
    run = subprocess.run([str(iceberg_tool), "transform", kind, transform],
                         input="".join(json.dumps(w) + "\n" for w, _ in pairs),
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    # split("\n"), not splitlines(): results may hold U+2028, U+0085 and other line breaks.
    got = [json.loads(line) for line in run.stdout.split("\n")[:-1]]
    apply = _pyiceberg_transform(transform).transform(_TYPES[kind])
    expected = [_expected_json(apply(p), kind, transform) for _, p in pairs]
    assert len(got) == VALUES_PER_CASE
    mismatches = [(pairs[i][0], got[i], expected[i]) for i in range(len(got))
                  if got[i] != expected[i]]
    assert mismatches == [], f"{len(mismatches)} mismatches, first: {mismatches[:3]}"


@pytest.mark.parametrize("transform,message", [
    ("week", 'unknown transform "week"'),
    ("bucket[0]", "bucket count must be positive"),
    ("truncate[-1]", "truncate width must be positive"),
])
def test_transform_text_is_refused_clearly(iceberg_tool, transform, message):
    run = subprocess.run([str(iceberg_tool), "transform", "long", transform], input="",
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 1
    assert message in run.stderr


# --- tables ------------------------------------------------------------------------------------

DAY0 = int(dt.datetime(2026, 12, 1, tzinfo=dt.timezone.utc).timestamp()) * 1_000_000
NAMES = ["alpha", "alphabet", "beta", "gamma", "héllo wörld", "a/b=c&d", None]
SPEC = "day(ts),bucket[16](id),truncate[4](name)"


def _write_table(tool: Path, tmp_path: Path, rows: list[dict], spec: str = SPEC,
                 *extra: str, location: str | None = None, env: dict | None = None) -> str:
    rows_file = tmp_path / "rows.jsonl"
    rows_file.write_text("".join(json.dumps(r) + "\n" for r in rows))
    location = location or str(tmp_path / "table")
    run = subprocess.run([str(tool), "write-table", location, spec, str(rows_file), *extra],
                         capture_output=True, text=True, timeout=600,
                         env={**os.environ, **(env or {})})
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)["metadata"]


def _event_rows(commits: int, per_commit: int, seed: int = 7) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for c in range(commits):
        for i in range(per_commit):
            row = {"commit": c, "id": c * 1000 + i, "name": rng.choice(NAMES),
                   "ts": DAY0 + rng.randrange(-3 * MICROS_PER_DAY, 3 * MICROS_PER_DAY),
                   "amount": rng.randrange(0, 10_000) / 4, "flag": i % 3 == 0}
            if c >= commits // 2:
                row["extra"] = f"x{i}"
            rows.append(row)
    return rows


@pytest.fixture(scope="module")
def events_table(iceberg_tool, tmp_path_factory):
    rows = _event_rows(commits=8, per_commit=150)
    metadata = _write_table(iceberg_tool, tmp_path_factory.mktemp("iceberg-events"), rows)
    return rows, metadata


def test_pyiceberg_reads_every_row_weir_wrote(events_table):
    rows, metadata = events_table
    table = StaticTable.from_metadata(metadata)
    data = table.scan().to_arrow()
    assert data.num_rows == len(rows) == 1200
    assert sorted(data.column("id").to_pylist()) == sorted(r["id"] for r in rows)
    assert sum(data.column("amount").to_pylist()) == sum(r["amount"] for r in rows)
    assert data.column("name").null_count == sum(r["name"] is None for r in rows)
    # The column added half way: null in the older files, set in the newer ones.
    assert data.column("extra").null_count == sum("extra" not in r for r in rows) == 600
    assert len(table.metadata.snapshots) == 8
    assert [f.name for f in table.schema().fields] == ["id", "name", "ts", "amount", "flag",
                                                        "extra"]
    summary = table.current_snapshot().summary
    assert summary["total-records"] == "1200"
    assert summary["weir.commit-id"] == "commit-7"
    assert json.loads(summary["weir.offsets.events"]) == {"0": 1200}


def test_partition_values_are_pyicebergs_transform_of_every_row(events_table):
    _, metadata = events_table
    table = StaticTable.from_metadata(metadata)
    day, bucket, trunc = DayTransform(), BucketTransform(16), TruncateTransform(4)
    to_day = day.transform(TimestamptzType())
    to_bucket = bucket.transform(LongType())
    to_trunc = trunc.transform(StringType())
    tasks = list(table.scan().plan_files())
    assert len(tasks) > 50
    checked = 0
    for task in tasks:
        partition = task.file.partition
        part = pq.read_table(task.file.file_path).to_pylist()
        assert len(part) == task.file.record_count
        for row in part:
            micros = int(row["ts"].timestamp() * 1_000_000)
            # pyiceberg gives the day partition as days since 1970 (an int).
            assert partition[0] == to_day(micros)
            assert partition[1] == to_bucket(row["id"])
            assert partition[2] == (None if row["name"] is None else to_trunc(row["name"]))
            checked += 1
    assert checked == 1200


def test_duckdb_reads_the_table_weir_wrote(events_table, duck):
    rows, metadata = events_table
    count, distinct, total, extras, names = duck.execute(
        "SELECT count(*), count(DISTINCT id), sum(amount), count(extra), count(name) "
        f"FROM iceberg_scan('{metadata}')").fetchone()
    assert count == 1200
    assert distinct == 1200
    assert total == sum(r["amount"] for r in rows)
    assert extras == 600
    assert names == sum(r["name"] is not None for r in rows)
    ids = duck.execute(f"SELECT id FROM iceberg_scan('{metadata}') WHERE name = 'héllo wörld' "
                       "ORDER BY id").fetchall()
    assert [i for (i,) in ids] == sorted(r["id"] for r in rows if r["name"] == "héllo wörld")
    day_rows = duck.execute(
        f"SELECT count(*) FROM iceberg_scan('{metadata}') "
        "WHERE ts >= TIMESTAMPTZ '2026-12-01 00:00:00+00' "
        "AND ts < TIMESTAMPTZ '2026-12-02 00:00:00+00'").fetchone()[0]
    assert day_rows == sum(DAY0 <= r["ts"] < DAY0 + MICROS_PER_DAY for r in rows)


def _files_with_rows(table, predicate) -> set[str]:
    out = set()
    for task in table.scan().plan_files():
        if any(predicate(row) for row in pq.read_table(task.file.file_path).to_pylist()):
            out.add(task.file.file_path)
    return out


@pytest.mark.parametrize("name", ["day", "bucket", "truncate"])
def test_scan_planning_prunes_on_each_partition_field(events_table, name):
    rows, metadata = events_table
    table = StaticTable.from_metadata(metadata)
    all_files = {t.file.file_path: t.file for t in table.scan().plan_files()}
    start = dt.datetime(2026, 12, 1, tzinfo=dt.timezone.utc)
    if name == "day":
        expr = And(GreaterThanOrEqual("ts", start.isoformat()),
                   LessThan("ts", (start + dt.timedelta(days=1)).isoformat()))
        position, wanted = 0, DayTransform().transform(TimestamptzType())(DAY0)
        predicate = lambda r: start <= r["ts"] < start + dt.timedelta(days=1)  # noqa: E731
    elif name == "bucket":
        target = rows[123]["id"]
        expr = EqualTo("id", target)
        position, wanted = 1, BucketTransform(16).transform(LongType())(target)
        predicate = lambda r: r["id"] == target  # noqa: E731
    else:
        expr = EqualTo("name", "alphabet")
        position, wanted = 2, "alph"
        predicate = lambda r: r["name"] == "alphabet"  # noqa: E731
    planned = {t.file.file_path for t in table.scan(row_filter=expr).plan_files()}
    matching_partition = {p for p, f in all_files.items() if f.partition[position] == wanted}
    # Only files of the matching partition are planned, and every file with a matching row is.
    assert planned <= matching_partition
    assert _files_with_rows(table, predicate) <= planned
    assert 0 < len(planned) < len(all_files)
    assert table.scan(row_filter=expr).to_arrow().num_rows == sum(map(predicate, (
        {**r, "ts": dt.datetime.fromtimestamp(r["ts"] / 1e6, dt.timezone.utc)} for r in rows)))


def test_a_thousand_appends_plan_from_at_most_a_hundred_manifests(iceberg_tool, tmp_path, duck):
    rows = [{"commit": c, "id": c, "name": f"n{c % 10}", "ts": DAY0 + c * 1_000_000,
             "amount": 1.0, "flag": True} for c in range(1000)]
    metadata = _write_table(iceberg_tool, tmp_path, rows, "day(ts)", "--final-metadata-only")
    table = StaticTable.from_metadata(metadata)
    snapshot = table.current_snapshot()
    manifests = snapshot.manifests(table.io)
    assert 1 <= len(manifests) <= 100
    assert sum(m.added_files_count + m.existing_files_count for m in manifests) == 1000
    assert len(table.metadata.snapshots) == 1000
    assert snapshot.summary["total-records"] == "1000"
    assert snapshot.summary["total-data-files"] == "1000"
    data = table.scan().to_arrow()
    assert data.num_rows == 1000
    assert sorted(data.column("id").to_pylist()) == list(range(1000))
    count, distinct, total = duck.execute(
        f"SELECT count(*), count(DISTINCT id), sum(id) FROM iceberg_scan('{metadata}')").fetchone()
    assert (count, distinct, total) == (1000, 1000, sum(range(1000)))


def test_a_table_on_s3_reads_back_from_the_bucket(iceberg_tool, tmp_path, s3, duck):
    bucket = fresh_bucket(s3)
    rows = _event_rows(commits=3, per_commit=40, seed=11)
    location = f"s3://{bucket['bucket']}/warehouse/events"
    settings = {k: v for k, v in s3.items() if k.startswith("WEIR_TEST_S3_")}
    metadata = _write_table(iceberg_tool, tmp_path, rows, location=location, env=settings)
    assert metadata == f"{location}/metadata/v4.metadata.json"
    table = StaticTable.from_metadata(metadata, properties={
        "s3.endpoint": f"http://{bucket['endpoint']}",
        "s3.access-key-id": bucket["access_key"],
        "s3.secret-access-key": bucket["secret_key"],
        "s3.region": bucket["region"],
    })
    data = table.scan().to_arrow()
    assert data.num_rows == 120
    assert sorted(data.column("id").to_pylist()) == sorted(r["id"] for r in rows)
    assert all(t.file.file_path.startswith(f"{location}/data/ts_day=")
               for t in table.scan().plan_files())
    duck.execute("LOAD httpfs")
    duck.execute(
        "CREATE SECRET (TYPE s3, KEY_ID '{}', SECRET '{}', REGION '{}', ENDPOINT '{}', "
        "USE_SSL false, URL_STYLE 'path')".format(bucket["access_key"], bucket["secret_key"],
                                                  bucket["region"], bucket["endpoint"]))
    count, distinct, total = duck.execute(
        f"SELECT count(*), count(DISTINCT id), sum(amount) FROM iceberg_scan('{metadata}')"
    ).fetchone()
    assert (count, distinct, total) == (120, 120, sum(r["amount"] for r in rows))
