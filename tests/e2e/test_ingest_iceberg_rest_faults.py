"""Faults on an Iceberg REST catalog, in both modes (issue 29): a SIGTERM drains what is
buffered or waiting in the WAL and exits 0 (a stop ends fetching and retry waits, never the
requests the drain needs), and a flush that carries rejects rides out a catalog outage like a
flush of good rows (the rejects table's loads and commit retry under the same budget), with
every row and every reject exactly once afterwards."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.e2e.test_ingest_iceberg import IcebergLake
from tests.e2e.test_ingest_iceberg_rejects import assert_exactly, committed, records
from tests.e2e.weir_run import WeirIngest, create_topic, produce, unique, wait_for
from tests.harness.fault_proxy import FaultProxy

MODES = {
    "direct": {},
    "wal": {"WEIR_INGEST_MODE": "wal", "WEIR_WAL_MAX_FILE_AGE": "1s",
            "WEIR_WAL_COMMIT_INTERVAL": "1s"},
}


def settings_of(mode: str, root: Path, **extra: str) -> dict[str, str]:
    settings = dict(MODES[mode], **extra)
    if mode == "wal":
        settings["WEIR_WAL_DIR"] = str(root / "wal")
    return settings


def wal_left(root: Path) -> list[str]:
    wal = root / "wal"
    return sorted(str(p.relative_to(wal)) for p in wal.rglob("*") if p.is_file()) \
        if wal.exists() else []


def topic_and_lake(kafka, iceberg_rest, tmp_path: Path, name: str) -> tuple[str, str, IcebergLake]:
    """(bootstrap, a new 2-partition topic, a lake in a new namespace of the REST catalog)."""
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique(name)
    create_topic(bootstrap, topic, 2)
    lake = IcebergLake(tmp_path / "lake", rest_uri=iceberg_rest["WEIR_TEST_ICEBERG_REST_URI"],
                       namespace=unique("ns"))
    return bootstrap, topic, lake


@pytest.mark.parametrize("mode", ["direct", "wal"])
def test_sigterm_on_a_rest_catalog_commits_what_is_held_and_exits_0(
    kafka, iceberg_rest, build_dir, tmp_path, mode
):
    bootstrap, topic, lake = topic_and_lake(kafka, iceberg_rest, tmp_path, f"rest_drain_{mode}")
    group = unique("group")
    produce(bootstrap, topic, records(0, 1000))
    first = WeirIngest(build_dir, lake, bootstrap, topic, "events", group,
                       settings_of(mode, lake.root)).start()
    try:
        wait_for(lambda: committed(lake, 1000) or not first.alive(), 120, "the first 1000")
    finally:
        assert first.stop() == 0, first.log()
    # Now nothing is committed by an interval: the next 200 are held until the drain.
    held = settings_of(mode, lake.root, WEIR_FLUSH_INTERVAL="10m",
                       **({"WEIR_WAL_COMMIT_INTERVAL": "10m"} if mode == "wal" else {}))
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", group, held).start()
    try:
        produce(bootstrap, topic, records(1000, 200))
        wait_for(lambda: weir.metric("weir_records_consumed_total") >= 200 or not weir.alive(),
                 60, "the 200 consumed")
        if mode == "wal":
            wait_for(lambda: any(Path(f).name.startswith("ready_") for f in wal_left(lake.root)),
                     30, "a segment rotated and waiting for its commit")
        assert not committed(lake, 1200)
        code = weir.stop(timeout_s=60)
    finally:
        if weir.alive():
            weir.kill()
    log = weir.log(200)
    assert code == 0, log
    assert "stop requested" not in log, log
    assert_exactly(lake, 1200)
    assert wal_left(lake.root) == []


@pytest.mark.parametrize("mode", ["direct", "wal"])
def test_a_flush_with_rejects_rides_out_a_rest_catalog_outage(
    kafka, iceberg_rest, build_dir, tmp_path, mode
):
    bootstrap, topic, reader = topic_and_lake(kafka, iceberg_rest, tmp_path,
                                              f"rest_outage_{mode}")
    with FaultProxy(reader.rest_uri) as proxy:
        writer = IcebergLake(reader.root, rest_uri=proxy.uri, namespace=reader.namespace)
        weir = WeirIngest(build_dir, writer, bootstrap, topic, "events", unique("group"),
                          settings_of(mode, writer.root)).start()
        try:
            produce(bootstrap, topic, records(0, 100))  # rejects among them: both tables exist
            wait_for(lambda: committed(reader, 100) or not weir.alive(), 120, "the first 100")
            proxy.outage.set()
            produce(bootstrap, topic, records(100, 50))  # two poison records among them
            time.sleep(12)  # the outage: every flush attempt fails, retried
            assert weir.alive(), weir.log(100)
            assert reader.count("events_rejects") == 5, "nothing committed during the outage"
            proxy.outage.clear()
            wait_for(lambda: committed(reader, 150) or not weir.alive(), 120,
                     "everything after the outage")
        finally:
            code = weir.stop(timeout_s=60)
    assert code == 0, weir.log(200)
    assert_exactly(reader, 150)
    assert wal_left(writer.root) == []
