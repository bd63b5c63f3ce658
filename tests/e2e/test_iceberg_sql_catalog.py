"""weir's Iceberg SQL catalog and pyiceberg's SqlCatalog on one database, both ways, on SQLite
(the embedded default) and PostgreSQL; and writers racing one compare-and-swap."""

from __future__ import annotations

import json
import shutil
import subprocess
import uuid
from pathlib import Path

import psycopg
import pytest
from pyiceberg.catalog.sql import SqlCatalog

from tests.e2e.iceberg_catalog_tool import minimal_v2_metadata, rows, run_tool, tool_path
from tests.e2e.weir_run import fresh_postgres_database


class Backend:
    def __init__(self, kind: str, tmp_path: Path, postgres: dict | None):
        self.kind = kind
        self.catalog_name = f"cat_{uuid.uuid4().hex[:8]}"
        self.warehouse = tmp_path / "weir-lake" / "warehouse"
        self.warehouse.mkdir(parents=True)
        if kind == "sqlite":
            db = tmp_path / "weir-lake" / "catalog.db"
            self.tool_target = ["sqlite", str(db)]
            self.sqlalchemy_uri = f"sqlite:///{db}"
        else:
            self.tool_target = ["postgres", postgres["WEIR_TEST_PG_DSN"]]
            self.sqlalchemy_uri = postgres["WEIR_TEST_PG_URL"].replace(
                "postgresql://", "postgresql+psycopg://", 1
            )

    def tool(self, build_dir, *args: str) -> dict:
        return run_tool(build_dir, *self.tool_target, "--catalog", self.catalog_name, *args)

    def tool_command(self, build_dir, *args: str) -> list[str]:
        return [str(tool_path(build_dir)), *self.tool_target, "--catalog", self.catalog_name, *args]

    def pyiceberg(self) -> SqlCatalog:
        return SqlCatalog(
            self.catalog_name, uri=self.sqlalchemy_uri, warehouse=self.warehouse.as_uri()
        )


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request, tmp_path) -> Backend:
    postgres = request.getfixturevalue("postgres") if request.param == "postgres" else None
    return Backend(request.param, tmp_path, postgres)


def test_a_table_pyiceberg_creates_is_loaded_by_weir(backend, build_dir):
    py = backend.pyiceberg()
    py.create_namespace("raw")
    table = py.create_table(("raw", "events"), schema=rows(0).schema)
    table.append(rows(4))

    loaded = backend.tool(build_dir, "load", "raw", "events")
    assert loaded["ok"], loaded
    assert loaded["metadata_location"] == table.metadata_location
    assert loaded["metadata"]["table-uuid"] == str(table.metadata.table_uuid)
    assert loaded["metadata"]["current-snapshot-id"] == table.current_snapshot().snapshot_id
    assert loaded["metadata"]["snapshots"][0]["summary"]["added-records"] == "4"
    # weir sees the namespace pyiceberg made and no table that is not there.
    assert backend.tool(build_dir, "ensure-namespace", "raw")["ok"]
    missing = backend.tool(build_dir, "load", "raw", "nope")
    assert (missing["kind"], missing["class"]) == ("not_found", "fatal")


def test_a_table_weir_registers_is_listed_loaded_and_appended_to_by_pyiceberg(backend, build_dir):
    location = backend.warehouse / "lake.db" / "orders"
    (location / "metadata").mkdir(parents=True)
    v1 = location / "metadata" / "00000-weir.metadata.json"
    metadata = minimal_v2_metadata(location.as_uri())
    v1.write_text(json.dumps(metadata))

    assert backend.tool(build_dir, "ensure-namespace", "lake")["ok"]
    created = backend.tool(build_dir, "create", "lake", "orders", v1.as_uri())
    assert created["ok"], created
    again = backend.tool(build_dir, "create", "lake", "orders", v1.as_uri())
    assert again["kind"] == "already_exists"

    py = backend.pyiceberg()
    assert ("lake",) in py.list_namespaces()
    assert py.list_tables("lake") == [("lake", "orders")]
    table = py.load_table(("lake", "orders"))
    assert table.metadata_location == v1.as_uri()
    assert str(table.metadata.table_uuid) == metadata["table-uuid"]
    assert [f.name for f in table.schema().fields] == ["id", "v"]
    assert table.properties["written-by"] == "weir-test"
    assert table.scan().to_arrow().num_rows == 0

    # pyiceberg's own commit moves the pointer; weir reads where it went.
    table.append(rows(2))
    after = backend.tool(build_dir, "load", "lake", "orders")
    assert after["metadata_location"] == table.metadata_location != v1.as_uri()

    # weir swaps: a stale expected location conflicts, the current one commits.
    v3 = location / "metadata" / "00002-weir.metadata.json"
    shutil.copy(Path(table.metadata_location.removeprefix("file://")), v3)
    stale = backend.tool(build_dir, "swap", "lake", "orders", v1.as_uri(), v3.as_uri())
    assert stale["outcome"] == "conflict", stale
    swapped = backend.tool(
        build_dir, "swap", "lake", "orders", table.metadata_location, v3.as_uri()
    )
    assert swapped["outcome"] == "committed", swapped
    reloaded = py.load_table(("lake", "orders"))
    assert reloaded.metadata_location == v3.as_uri()
    assert reloaded.scan().to_arrow().num_rows == 2


def test_of_writers_racing_one_swap_exactly_one_wins(backend, build_dir):
    assert backend.tool(build_dir, "ensure-namespace", "ns")["ok"]
    assert backend.tool(build_dir, "create", "ns", "t", "file:///m/v0.json")["ok"]
    writers = 6
    procs = [
        subprocess.Popen(
            backend.tool_command(build_dir, "swap", "ns", "t", "file:///m/v0.json",
                                 f"file:///m/v1-{i}.json"),
            stdout=subprocess.PIPE, text=True,
        )
        for i in range(writers)
    ]
    outputs = [p.communicate(timeout=120)[0] for p in procs]
    outcomes = [
        json.loads([line for line in out.splitlines() if line.startswith("{")][-1])["outcome"]
        for out in outputs
    ]
    assert sorted(outcomes) == ["committed"] + ["conflict"] * (writers - 1), outcomes
    winner = outcomes.index("committed")
    row = backend.pyiceberg()
    with row.engine.connect() as conn:
        from sqlalchemy import text

        locations = conn.execute(
            text("SELECT metadata_location, previous_metadata_location FROM iceberg_tables "
                 "WHERE catalog_name = :c AND table_namespace = 'ns' AND table_name = 't'"),
            {"c": backend.catalog_name},
        ).all()
    assert locations == [(f"file:///m/v1-{winner}.json", "file:///m/v0.json")]


def test_writers_opening_a_new_postgres_catalog_together_all_succeed(postgres, build_dir):
    # PostgreSQL's CREATE TABLE IF NOT EXISTS is not atomic: of two creators, one fails on
    # pg_type once the other commits. A CI run lost an ingest process to it at startup.
    writers = 8
    for _ in range(4):  # the race is narrow: several fresh databases
        dsn = fresh_postgres_database(postgres)
        procs = [
            subprocess.Popen(
                [str(tool_path(build_dir)), "postgres", dsn, "--catalog", "cat",
                 "ensure-namespace", "ns"],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            )
            for _ in range(writers)
        ]
        results = [p.communicate(timeout=120) for p in procs]
        failed = [(p.returncode, out, err) for p, (out, err) in zip(procs, results)
                  if p.returncode != 0]
        assert failed == [], failed
        with psycopg.connect(dsn) as conn:
            namespaces = conn.execute(
                "SELECT catalog_name, namespace, property_key FROM iceberg_namespace_properties"
            ).fetchall()
        assert namespaces == [("cat", "ns", "exists")]
