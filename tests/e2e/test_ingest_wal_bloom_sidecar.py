"""The bloom-filter sidecar of WAL mode (`wal.bloom_sidecar`, issue 13; the format is
docs/WAL_BLOOM_SIDECAR.md): every landed `wal-<uuid>.parquet` has its `wal-<uuid>.bloom` next
to it, naming the data file and its size, holding for each row group and listed column exactly
the filter bytes the data file holds at its `bloom_filter_offset` (DuckDB's `parquet_metadata`),
and those filters, probed here with the Parquet spec's split-block algorithm (a pure-Python
xxHash64), hold every value of their row group. Without the setting no sidecar is written.
`weir maintain orphans` keeps the sidecars of referenced files and sweeps an old sidecar whose
data file does not exist (a young one stays, as any orphan inside the window)."""

from __future__ import annotations

import json
import os
import struct
import time
import uuid
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from tests.e2e.test_ingest_iceberg import IcebergLake
from tests.e2e.test_ingest_wal import wal_settings
from tests.e2e.test_maintain import DAY_S, maintain, plant, stats
from tests.e2e.weir_run import Lake, WeirIngest, create_topic, event_records, produce, unique, \
    wait_for

TOTAL = 6_000
COLUMNS = ("id", "name")

# --- xxHash64 (seed 0) and the Parquet split-block bloom filter ---------------------------------

_M = (1 << 64) - 1
_P1, _P2, _P3, _P4, _P5 = (11400714785074694791, 14029467366897019727, 1609587929392839161,
                           9650029242287828579, 2870177450012600261)


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _M


def _round(acc: int, lane: int) -> int:
    return (_rotl((acc + lane * _P2) & _M, 31) * _P1) & _M


def _merge(acc: int, val: int) -> int:
    return ((acc ^ _round(0, val)) * _P1 + _P4) & _M


def xxh64(data: bytes) -> int:
    n, i = len(data), 0
    if n >= 32:
        v = [(_P1 + _P2) & _M, _P2, 0, (-_P1) & _M]
        while i + 32 <= n:
            for k in range(4):
                v[k] = _round(v[k], struct.unpack_from("<Q", data, i + 8 * k)[0])
            i += 32
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & _M
        for k in range(4):
            h = _merge(h, v[k])
    else:
        h = _P5
    h = (h + n) & _M
    while i + 8 <= n:
        h = (_rotl(h ^ _round(0, struct.unpack_from("<Q", data, i)[0]), 27) * _P1 + _P4) & _M
        i += 8
    if i + 4 <= n:
        h = (_rotl(h ^ (struct.unpack_from("<I", data, i)[0] * _P1) & _M, 23) * _P2 + _P3) & _M
        i += 4
    while i < n:
        h = (_rotl(h ^ (data[i] * _P5) & _M, 11) * _P1) & _M
        i += 1
    h ^= h >> 33
    h = (h * _P2) & _M
    h ^= h >> 29
    h = (h * _P3) & _M
    return h ^ (h >> 32)


_SALT = (0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d, 0x705495c7, 0x2df1424b, 0x9efc4947,
         0x5c6bfb31)


def bitset_of(serialized: bytes) -> bytes:
    """The bitset of a serialized filter: the Thrift compact BloomFilterHeader's field 1 (i32
    numBytes, zigzag varint) says how many of the trailing bytes it is."""
    assert serialized[0] == 0x15, serialized[:4]  # field 1, type i32
    value, shift, i = 0, 0, 1
    while True:
        byte = serialized[i]
        value |= (byte & 0x7F) << shift
        shift += 7
        i += 1
        if not byte & 0x80:
            break
    num_bytes = (value >> 1) ^ -(value & 1)
    assert 32 <= num_bytes < len(serialized)
    return serialized[-num_bytes:]


def may_contain(bitset: bytes, value: bytes) -> bool:
    h = xxh64(value)
    block = (((h >> 32) * (len(bitset) // 32)) >> 32) * 32
    key = h & 0xFFFFFFFF
    for i, salt in enumerate(_SALT):
        word = struct.unpack_from("<I", bitset, block + 4 * i)[0]
        if not word & (1 << (((key * salt) & 0xFFFFFFFF) >> 27)):
            return False
    return True


def test_xxh64_matches_its_reference_values():
    assert xxh64(b"") == 0xEF46DB3751D8E999
    assert xxh64(b"a") == 0xD24EC4F1A98C6E5B


# --- The runs ----------------------------------------------------------------------------------


def ingested(build_dir: Path, kafka: dict, lake, sidecar: bool) -> WeirIngest:
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("sidecar")
    create_topic(bootstrap, topic, 2)
    produce(bootstrap, topic, event_records(0, TOTAL))
    settings = wal_settings(lake.root, WEIR_BLOOM_FILTER_COLUMNS=",".join(COLUMNS),
                            WEIR_PARQUET_ROW_GROUP_ROWS="1024")
    if sidecar:
        settings["WEIR_WAL_BLOOM_SIDECAR"] = "true"
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group"),
                      settings).start()
    try:
        wait_for(lambda: lake.count("events") >= TOTAL or not weir.alive(), 180,
                 "every event committed")
    finally:
        assert weir.stop() == 0, weir.log()
    assert lake.count("events") == TOTAL
    return weir


def make_lake(fmt: str, root: Path):
    return IcebergLake(root) if fmt == "iceberg" else Lake(root)


def landed_files(lake) -> list[str]:
    if isinstance(lake, IcebergLake):
        return [f["file_path"].removeprefix("file://")
                for f in lake.table("events").inspect.files().to_pylist()]
    with lake.connect() as con:
        return [r[0] for r in con.execute(
            "SELECT data_file FROM ducklake_list_files('lake', 'events')").fetchall()]


def table_dir_of(lake) -> Path:
    if isinstance(lake, IcebergLake):
        return Path(lake.table("events").location().removeprefix("file://"))
    return Path(lake.data_path) / "main" / "events"


def file_filters(con: duckdb.DuckDBPyConnection, path: str) -> dict[tuple[int, str], bytes]:
    """(row group, column) → the filter bytes the data file holds, located by its metadata."""
    rows = con.execute(
        "SELECT row_group_id, path_in_schema, bloom_filter_offset, bloom_filter_length "
        "FROM parquet_metadata(?) WHERE bloom_filter_offset IS NOT NULL", [path]).fetchall()
    data = Path(path).read_bytes()
    return {(rg, column): data[offset:offset + length] for rg, column, offset, length in rows}


@pytest.mark.parametrize("fmt", ["ducklake", "iceberg"])
def test_every_landed_file_has_a_sidecar_holding_its_filters_and_maintain_keeps_it(
        kafka, build_dir, tmp_path, fmt):
    lake = make_lake(fmt, tmp_path / "lake")
    weir = ingested(build_dir, kafka, lake, sidecar=True)
    files = landed_files(lake)
    assert files and all(Path(f).name.startswith("wal-") for f in files), files
    table_dir = table_dir_of(lake)
    sidecars = sorted(str(p) for p in table_dir.rglob("*.bloom"))
    assert sidecars == sorted(str(Path(f).with_suffix(".bloom")) for f in files)

    con = duckdb.connect()
    seen = []
    for path in files:
        sidecar = pq.read_table(Path(path).with_suffix(".bloom"))
        meta = {k.decode(): v.decode() for k, v in sidecar.schema.metadata.items()}
        assert meta["weir.sidecar.format"] == "weir-bloom-sidecar/1"
        assert meta["weir.sidecar.data_file"] == Path(path).name
        assert int(meta["weir.sidecar.data_file_size"]) == Path(path).stat().st_size
        assert meta["weir.sidecar.columns"] == ",".join(COLUMNS)
        entries = {(r["row_group"], r["column"]): r for r in sidecar.to_pylist()}
        assert len(entries) == sidecar.num_rows
        # Exactly the data file's filters, byte for byte, for every row group and column.
        expected = file_filters(con, path)
        row_groups = pq.ParquetFile(path).metadata.num_row_groups
        assert set(expected) == {(rg, c) for rg in range(row_groups) for c in COLUMNS}
        assert {k: e["filter"] for k, e in entries.items()} == expected
        # Probing the sidecar alone: every value of a row group may be in its filter.
        data = pq.ParquetFile(path)
        for rg in range(row_groups):
            group = data.read_row_group(rg, columns=list(COLUMNS)).to_pydict()
            assert entries[(rg, "id")]["row_group_rows"] == len(group["id"])
            ids, names = bitset_of(entries[(rg, "id")]["filter"]), \
                bitset_of(entries[(rg, "name")]["filter"])
            for i, name in zip(group["id"], group["name"]):
                assert may_contain(ids, struct.pack("<q", i)), (path, rg, i)
                assert may_contain(names, name.encode()), (path, rg, name)
            seen += group["id"]
            absent = sum(may_contain(ids, struct.pack("<q", 10**12 + k)) for k in range(200))
            assert absent < 40, (path, rg, absent)  # fpp 5 %: a few, not most
    assert sorted(seen) == list(range(TOTAL))  # every event once, in exactly one row group

    # The orphan sweep: every real sidecar (aged past the window) stays with its referenced
    # file; a planted old sidecar of no file goes, a young one stays.
    for sidecar in sidecars:
        plant_age(Path(sidecar), 2 * DAY_S)
    beside = Path(files[0]).parent
    gone = plant(beside / f"wal-{uuid.uuid4()}.bloom", 2 * DAY_S)
    young = plant(beside / f"wal-{uuid.uuid4()}.bloom", 60)
    report = stats(weir)["main.events"]
    assert sorted(o["path"] for o in report["orphans"]) == sorted([str(gone), str(young)])
    swept = maintain(weir, "orphans", "--yes", "--json")
    assert swept.returncode == 0, swept.stderr
    sweep = {t["table"]: t["sweep"] for t in json.loads(swept.stdout)["tables"]}["main.events"]
    assert sweep == {"dry_run": False, "older_than_ms": DAY_S * 1000, "deleted": 1,
                     "deleted_bytes": 123, "kept_young": 1}
    assert not gone.exists() and young.exists()
    assert all(Path(s).exists() for s in sidecars) and all(Path(f).exists() for f in files)
    assert lake.count("events") == TOTAL


def plant_age(path: Path, age_s: float) -> None:
    then = time.time() - age_s
    os.utime(path, (then, then))


def test_without_the_setting_no_sidecar_is_written(kafka, build_dir, tmp_path):
    lake = Lake(tmp_path / "lake")
    ingested(build_dir, kafka, lake, sidecar=False)
    files = landed_files(lake)
    assert files
    assert not list(Path(lake.data_path).rglob("*.bloom"))
    # The files still carry their filters (bloom_filter_columns is on).
    con = duckdb.connect()
    assert all(file_filters(con, f) for f in files)
