"""`weir wal ls` and `weir wal check` (issue 13): the recovery table of the ingestor design,
row by row, on WAL files and committed Kafka offsets the test prepares, against a real broker
and a real DuckLake or Iceberg table (weir ingested it in direct mode, so its ledger and the
group's committed offsets agree). "In the table" is a ready file whose object a kept snapshot
references (the test adds one with DuckDB's ducklake_add_data_files / pyiceberg's add_files)
while the ledger has passed its end."""

from __future__ import annotations

import json
import signal
import subprocess
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from confluent_kafka import Consumer, TopicPartition

from tests.e2e.test_ingest_iceberg import IcebergLake
from tests.e2e.weir_run import Lake, WeirIngest, create_topic, event_records, produce, unique, \
    wait_for

PER_PARTITION = 150  # events on partitions 0 and 1; partition 2 stays empty


def committed(bootstrap: str, group: str, topic: str) -> dict[int, int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        parts = consumer.committed([TopicPartition(topic, p) for p in range(3)], timeout=30)
        return {tp.partition: tp.offset for tp in parts if tp.offset >= 0}
    finally:
        consumer.close()


def ingested(kafka, build_dir, lake) -> tuple[WeirIngest, str]:
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("wal_t")
    create_topic(bootstrap, topic, 3)
    produce(bootstrap, topic, event_records(0, 2 * PER_PARTITION), partition_of=lambda i: i % 2)
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group")).start()
    try:
        wait_for(lambda: lake.count("events") >= 2 * PER_PARTITION or not weir.alive(), 120,
                 "the direct ingest")
    finally:
        assert weir.stop() == 0, weir.log()
    assert lake.count("events") == 2 * PER_PARTITION
    # weir commits Kafka offsets after each lake commit: they agree with the ledger now.
    wait_for(lambda: committed(bootstrap, weir.env["WEIR_KAFKA_GROUP_ID"], topic)
             == {0: PER_PARTITION, 1: PER_PARTITION}, 60, "the committed offsets")
    return weir, topic


def wal_env(weir: WeirIngest, **extra: str) -> dict[str, str]:
    """The direct-mode run's environment switched to WAL mode (the volume beside the lake)."""
    return dict(weir.env, WEIR_INGEST_MODE="wal", WEIR_WAL_DIR=str(weir.lake.root / "wal"),
                **extra)


def ingest_wal(weir: WeirIngest) -> subprocess.CompletedProcess:
    """`weir ingest` in WAL mode, expected to stop at its start."""
    return subprocess.run([str(weir.binary), "ingest"], env=wal_env(weir),
                          cwd=weir.lake.root, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=180)


def wal(weir: WeirIngest, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(weir.binary), "wal", *args], env=wal_env(weir), cwd=weir.lake.root,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=180)


def segment(directory: Path, state: str, topic: str, partition: int, start: int,
            end: int | None = None, rows: int = 3, name_id: str | None = None) -> str:
    """A segment file with `rows` rows; its name says its state and range."""
    name_id = name_id or str(uuid.uuid4())
    span = f"{start}" if end is None else f"{start}-{end}"
    name = f"{state}_{topic}_{partition}_{span}_{name_id}.parquet"
    pq.write_table(pa.table({"id": list(range(rows))}), directory / name)
    return name


def prepare(weir: WeirIngest, topic: str, add_to_table) -> tuple[Path, dict[str, str]]:
    """One file per row of the recovery table (committed offsets: p0 150, p1 150, p2 none),
    and the action recovery must take for each."""
    run = wal(weir, "ls", "--json")
    assert run.returncode == 0, run.stderr
    listing = json.loads(run.stdout)
    [dataset] = listing["datasets"]
    assert dataset["files"] == []  # no WAL yet
    directory = Path(dataset["directory"])
    if not directory.is_absolute():
        directory = weir.lake.root / directory
    directory.mkdir(parents=True)
    in_table_id = str(uuid.uuid4())
    add_to_table(f"wal-{in_table_id}.parquet")
    expect = {
        segment(directory, "active", topic, 0, 150): "delete",
        segment(directory, "ready", topic, 2, 0, 9): "delete",  # no committed offset
        segment(directory, "ready", topic, 0, 150, 159): "delete",  # C = start: not after it
        segment(directory, "ready", topic, 0, 160, 170): "delete",  # C before start
        segment(directory, "ready", topic, 1, 100, 149): "keep",  # C after, not in the table
        segment(directory, "ready", topic, 0, 0, 49, name_id=in_table_id): "delete_local",
        segment(directory, "ready", topic, 1, 140, 160): "refuse",  # C inside the range
        segment(directory, "ready", topic, 0, 10, 150): "refuse",  # C = end: inside
    }
    (directory / "notes.txt").write_text("not a segment")
    expect["notes.txt"] = "ignore"
    return directory, expect


def check_table(weir: WeirIngest, topic: str, add_to_table) -> None:
    directory, expect = prepare(weir, topic, add_to_table)
    before = sorted(p.name for p in directory.iterdir())

    run = wal(weir, "check", "--json")
    assert run.returncode == 1 and run.stdout, run.stderr
    report = json.loads(run.stdout)
    assert report["refused"] is True
    [dataset] = report["datasets"]
    assert dataset["table_exists"] is True
    assert {f["file"]: f["action"] for f in dataset["files"]} == expect
    by_file = {f["file"]: f for f in dataset["files"]}
    for name, action in expect.items():
        if name == "notes.txt":
            continue
        partition = int(name.split("_")[-3])
        assert by_file[name]["committed"] == {0: 150, 1: 150}.get(partition), name
        assert by_file[name]["in_table"] == {"keep": False, "delete_local": True}.get(action), name
    refused = [name for name, action in expect.items() if action == "refuse"]
    for name in refused:
        assert name in run.stderr, run.stderr
    # The check changes nothing.
    assert sorted(p.name for p in directory.iterdir()) == before
    # `weir ingest` in WAL mode runs the same recovery at its start: it refuses, naming every
    # refused file, and deletes nothing.
    run = ingest_wal(weir)
    assert run.returncode == 1, run.stdout + run.stderr
    for name in refused:
        assert name in run.stdout + run.stderr, run.stdout + run.stderr
    assert sorted(p.name for p in directory.iterdir()) == before

    # Without the refused files recovery would start: exit 0, the same plan for the rest.
    for name in refused:
        (directory / name).unlink()
    run = wal(weir, "check")
    assert run.returncode == 0, run.stderr
    for name, action in expect.items():
        if action != "refuse":
            assert f"{action} " in run.stdout and name in run.stdout, run.stdout

    run = wal(weir, "ls", "--json")
    assert run.returncode == 0, run.stderr
    [dataset] = json.loads(run.stdout)["datasets"]
    files = {f["file"]: f for f in dataset["files"]}
    assert set(files) == set(expect) - set(refused)
    for name, f in files.items():
        assert f["size_bytes"] == (directory / name).stat().st_size
        if name == "notes.txt":
            assert f["state"] == "unknown"
            continue
        assert f["state"] == name.split("_")[0]
        assert f["topic"] == topic
        assert f["partition"] == int(name.split("_")[-3])
        span = name.split("_")[-2].split("-")
        assert f["start"] == int(span[0])
        assert f["end"] == (int(span[1]) if len(span) == 2 else None)
    assert dataset["totals"]["active"]["files"] == 1
    assert dataset["totals"]["ready"]["files"] == 5
    assert dataset["totals"]["unknown"]["files"] == 1

    # Without the refused files `weir ingest` in WAL mode starts, applying the table row by
    # row: the deletes and the local copy go, the kept file stays for the committer (which
    # finds its range below the ledger, so landed, and deletes it too), notes.txt is left alone.
    wal_dir_env = wal_env(weir, WEIR_WAL_COMMIT_INTERVAL="1s")
    proc = subprocess.Popen([str(weir.binary), "ingest"], env=wal_dir_env, cwd=weir.lake.root,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            stdin=subprocess.DEVNULL)
    try:
        wait_for(lambda: sorted(p.name for p in directory.iterdir()) == ["notes.txt"], 120,
                 "recovery and the committer to leave only notes.txt")
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0, out
    assert "4 file(s) deleted, 1 kept, 1 local copies of committed files deleted" in out, out


def test_the_recovery_table_row_by_row_on_ducklake(kafka, build_dir, tmp_path):
    lake = Lake(tmp_path / "lake")
    weir, topic = ingested(kafka, build_dir, lake)

    def add_to_table(object_name: str) -> None:
        path = Path(lake.data_path) / object_name
        con = lake.connect(read_only=False)
        try:
            con.execute(f"COPY (SELECT * FROM lake.events LIMIT 5) TO '{path}' (FORMAT parquet)")
            con.execute(f"CALL ducklake_add_data_files('lake', 'events', '{path}')")
        finally:
            con.close()
        assert lake.count("events") == 2 * PER_PARTITION + 5

    check_table(weir, topic, add_to_table)


def test_the_recovery_table_row_by_row_on_iceberg(kafka, build_dir, tmp_path):
    lake = IcebergLake(tmp_path / "lake")
    weir, topic = ingested(kafka, build_dir, lake)

    def add_to_table(object_name: str) -> None:
        table = lake.table("events")
        path = lake.root / "weir-lake" / "warehouse" / object_name
        pq.write_table(table.scan(limit=5).to_arrow(), path)
        table.add_files([path.as_uri()])
        assert lake.count("events") == 2 * PER_PARTITION + 5

    check_table(weir, topic, add_to_table)


def test_check_and_wal_ingest_refuse_without_the_committed_offsets(kafka, build_dir, tmp_path):
    lake = Lake(tmp_path / "lake")
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    weir = WeirIngest(build_dir, lake, bootstrap, unique("wal_none"), "events", unique("group"))
    lake.root.mkdir(parents=True)
    run = wal(weir, "check")  # the topic does not exist: no committed offsets to read
    assert run.returncode == 1
    assert "cannot read the committed offsets" in run.stderr, run.stderr
    # WAL mode does not start either (its startup check finds no topic before recovery would
    # find no committed offsets).
    run = ingest_wal(weir)
    assert run.returncode == 1
    assert "startup check failed" in run.stdout + run.stderr, run.stdout + run.stderr


def test_check_gives_up_on_a_silent_catalog_within_check_timeout(kafka, build_dir, tmp_path):
    """A PostgreSQL catalog that accepts connections and never answers: `weir wal check` gives
    the catalog check.timeout (3 s here), as it gives the committed offsets, instead of the
    startup budget, and says which catalog it could not open."""
    import socket
    import time

    lake = Lake(tmp_path / "lake")
    weir, _ = ingested(kafka, build_dir, lake)
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)  # the kernel completes handshakes; nobody ever answers
    try:
        env = {k: v for k, v in wal_env(weir, WEIR_CHECK_TIMEOUT="3s").items()
               if k != "WEIR_CATALOG_SQLITE_PATH"}
        env.update({"WEIR_CATALOG_KIND": "postgres",
                    "WEIR_CATALOG_POSTGRES_DSN":
                        f"host=127.0.0.1 port={silent.getsockname()[1]} dbname=lake user=weir"})
        started = time.monotonic()
        run = subprocess.run([str(weir.binary), "wal", "check"], env=env, cwd=lake.root,
                             capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
        elapsed = time.monotonic() - started
    finally:
        silent.close()
    assert run.returncode == 1, run.stdout + run.stderr
    assert "DuckLake catalog" in run.stderr, run.stderr
    # The deadline, not the 15 s startup budget nor the commit budget (47-60 s before).
    assert elapsed < 14, (elapsed, run.stderr)
