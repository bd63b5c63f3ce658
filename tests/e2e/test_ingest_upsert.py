"""Upsert datasets (issue 15) on DuckLake: a windowed aggregation's changelog keyed by (g, w)
lands as one row per live key with its latest value, through re-emissions (byte-identical and
new values), tombstones, SIGKILLs with rebalances, aborted transactions and DuckDB's own
compaction running at the same time. Read back by DuckDB's ducklake extension."""

from __future__ import annotations

import json
import random
import threading
import time

import duckdb
from confluent_kafka import Producer

from tests.e2e.weir_run import (
    EXTENSIONS,
    Lake,
    WeirIngest,
    create_topic,
    produce,
    unique,
    wait_for,
)

KEYS = 20_000  # 1,000 groups x 20 windows
GROUPS = 1_000
FAST_GROUP_ARGS = ("--set", "kafka.properties.session.timeout.ms=6000",
                   "--set", "kafka.properties.heartbeat.interval.ms=1000")


def key_of(k: int) -> dict:
    return {"g": f"m{k % GROUPS}", "w": k // GROUPS}


def changelog(total: int, seed: int) -> tuple[list[tuple[bytes, bytes | None]], dict]:
    """`total` records: every key once, then re-emissions of 30 % of the keys (windows): 70 %
    new values, 20 % byte-identical to the key's last record, 10 % tombstones. Returns the
    records and the expected state {(g, w): (v, n)} (absent: deleted)."""
    rng = random.Random(seed)
    records: list[tuple[bytes, bytes | None]] = []
    last: dict[int, tuple[bytes, tuple[int, int]] | None] = {}
    state: dict[tuple[str, int], tuple[int, int]] = {}
    reemitted = rng.sample(range(KEYS), KEYS * 30 // 100)
    key_bytes = [json.dumps(key_of(k)).encode() for k in range(KEYS)]

    def emit(k: int, payload: bytes | None, values: tuple[int, int] | None):
        records.append((key_bytes[k], payload))
        key = key_of(k)
        if payload is None:
            last[k] = None
            state.pop((key["g"], key["w"]), None)
        else:
            last[k] = (payload, values)
            state[(key["g"], key["w"])] = values

    def value(v: int, n: int) -> bytes:
        return json.dumps({"v": v, "n": n}).encode()

    for k in range(KEYS):
        emit(k, value(k * 7, 1), (k * 7, 1))
    seq = 1
    while len(records) < total:
        k = rng.choice(reemitted)
        roll = rng.random()
        seq += 1
        if roll < 0.2 and last.get(k) is not None:
            emit(k, *last[k])  # the resume's byte-identical re-emission
        elif roll < 0.3:
            emit(k, None, None)  # a tombstone
        else:
            v = rng.randrange(1_000_000)
            emit(k, value(v, seq), (v, seq))
    return records, state


def ledger(lake: Lake) -> int:
    try:
        return lake.scalar(
            f"SELECT sum(next_offset) FROM sqlite_scan('{lake.sqlite_path}', 'weir_offset_ledger')"
        ) or 0
    except duckdb.Error:
        return 0


def assert_state(lake: Lake, table: str, state: dict) -> None:
    con = lake.connect()
    try:
        rows = con.execute(f"SELECT g, w, v, n FROM lake.{table}").fetchall()
    finally:
        con.close()
    got: dict[tuple[str, int], tuple[int, int]] = {}
    duplicates = 0
    for g, w, v, n in rows:
        duplicates += (g, w) in got
        got[(g, w)] = (v, n)
    assert duplicates == 0, f"{duplicates} keys have more than one row"
    assert len(rows) == len(state)
    missing = [k for k in state if k not in got]
    deleted_present = [k for k in got if k not in state]
    assert not missing, f"{len(missing)} live keys missing, e.g. {missing[:3]}"
    assert not deleted_present, f"{len(deleted_present)} deleted keys present: {deleted_present[:3]}"
    wrong = [(k, got[k], state[k]) for k in state if got[k] != state[k]]
    assert not wrong, f"{len(wrong)} keys hold an older value, e.g. {wrong[:3]}"


UPSERT = {"WEIR_UPSERT_KEY": "g,w", "WEIR_UPSERT_KEY_FROM": "kafka_key",
          "WEIR_FLUSH_MAX_BYTES": "1MiB"}


def test_a_changelog_lands_one_row_per_live_key_with_its_latest_value(kafka, build_dir, tmp_path):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("changelog")
    create_topic(bootstrap, topic, 4)
    records, state = changelog(200_000, seed=15)
    assert sum(1 for _, v in records if v is None) > 10_000  # tombstones
    assert len(state) < KEYS  # some keys end deleted
    lake = Lake(tmp_path / "lake")
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "agg", unique("group"), UPSERT).start()
    try:
        # In two halves, so that the second half's keys meet rows of earlier flushes too.
        produce(bootstrap, topic, records[:100_000])
        wait_for(lambda: ledger(lake) >= 100_000, 240, "the first half committed")
        produce(bootstrap, topic, records[100_000:])
        wait_for(lambda: ledger(lake) >= len(records), 240, "every record committed")
    finally:
        code = weir.stop()
    assert code == 0, weir.log()
    assert_state(lake, "agg", state)
    # The older rows went by positional delete files, and the log says how many.
    deletes = lake.scalar(f"SELECT count(*) FROM sqlite_scan('{lake.sqlite_path}', "
                          "'ducklake_delete_file') WHERE end_snapshot IS NULL")
    assert deletes > 0
    assert "older rows deleted" in weir.log_path.read_text()


def test_kill_loop_during_upserts_keeps_one_row_per_key(kafka, build_dir, tmp_path):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("changelog_kills")
    create_topic(bootstrap, topic, 8)
    records, state = changelog(100_000, seed=16)
    # The key in the value this time (upsert.key_from value), and the table partitioned by w.
    values = []
    for key, value in records:
        body = None if value is None else json.dumps({**json.loads(key), **json.loads(value)})
        values.append((key, None if body is None else body.encode()))
    lake = Lake(tmp_path / "lake")
    group = unique("group")
    settings = {"WEIR_UPSERT_KEY": "g,w", "WEIR_PARTITION_BY": "w",
                "WEIR_FLUSH_MAX_BYTES": "2MiB"}
    workers = [WeirIngest(build_dir, lake, bootstrap, topic, "agg", group, settings,
                          name=f"w{i}") for i in range(2)]
    for w in workers:
        w.start(*FAST_GROUP_ARGS)

    def run():
        chunk = len(values) // 40
        for start in range(0, len(values), chunk):
            produce(bootstrap, topic, values[start:start + chunk])
            time.sleep(1)

    producer = threading.Thread(target=run, daemon=True)
    producer.start()
    rng = random.Random(20261202)
    kills = 0
    try:
        while kills < 20:
            time.sleep(rng.uniform(0.5, 3.0))
            victim = workers[rng.randrange(2)]
            victim.kill()  # SIGKILL: no flush, no goodbye to the group
            kills += 1
            victim.start(*FAST_GROUP_ARGS)  # rejoining forces another rebalance
        producer.join(timeout=180)
        assert not producer.is_alive()
        # Each commit rewrites the delete files of every data file its keys touch: seconds per
        # commit on a loaded machine (docs/ARCHITECTURE.md, "Upsert datasets", costs).
        wait_for(lambda: ledger(lake) >= len(values), 900, "every record committed")
    finally:
        codes = [w.stop() for w in workers]
    assert codes == [0, 0], "\n".join(w.log() for w in workers)
    assert_state(lake, "agg", state)


def test_aborted_transactions_never_land(kafka, build_dir, tmp_path):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("changelog_tx")
    partitions = 4
    create_topic(bootstrap, topic, partitions)
    lake = Lake(tmp_path / "lake")
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "agg", unique("group"), UPSERT).start()
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": unique("tx"),
                         "linger.ms": 5})
    producer.init_transactions(30)
    state: dict[tuple[str, int], tuple[int, int]] = {}
    try:
        for t in range(40):
            producer.begin_transaction()
            commit = t % 2 == 0
            for i in range(250):
                k = (t * 250 + i) % 5_000
                key = key_of(k)
                # An aborted transaction overwrites committed keys with v = -1 and adds keys
                # of its own (window 99): none of it may appear.
                value = {"v": t * 1000 + i if commit else -1, "n": t}
                producer.produce(topic, key=json.dumps(key).encode(),
                                 value=json.dumps(value).encode())
                if not commit:
                    producer.produce(topic, key=json.dumps({"g": f"x{k}", "w": 99}).encode(),
                                     value=json.dumps({"v": -1, "n": t}).encode())
                else:
                    state[(key["g"], key["w"])] = (value["v"], value["n"])
            producer.flush(30)  # every record acknowledged inside the transaction
            if commit:
                producer.commit_transaction(30)
            else:
                producer.abort_transaction(30)
        # A committed sentinel per partition marks the end.
        producer.begin_transaction()
        for p in range(partitions):
            producer.produce(topic, partition=p, key=json.dumps({"g": f"end{p}", "w": -1}).encode(),
                             value=json.dumps({"v": 0, "n": 0}).encode())
            state[(f"end{p}", -1)] = (0, 0)
        producer.commit_transaction(30)
        wait_for(lambda: lake.count("agg") > 0 and lake.scalar(
            "SELECT count(*) FROM lake.agg WHERE w = -1") == partitions, 240, "the sentinels")
    finally:
        code = weir.stop()
    assert code == 0, weir.log()
    assert lake.scalar("SELECT count(*) FROM lake.agg WHERE v = -1 OR w = 99") == 0
    assert_state(lake, "agg", state)


def test_duckdbs_compaction_during_upserts_keeps_one_row_per_key(kafka, build_dir, tmp_path):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("changelog_merge")
    create_topic(bootstrap, topic, 4)
    records, state = changelog(100_000, seed=17)
    lake = Lake(tmp_path / "lake")
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "agg", unique("group"), UPSERT).start()
    stop = threading.Event()
    outcomes = {"merged": 0, "failed": 0}

    def compact():
        while not stop.is_set():
            try:
                con = lake.connect(read_only=False)
                try:
                    con.execute("CALL ducklake_merge_adjacent_files('lake')")
                    outcomes["merged"] += 1
                finally:
                    con.close()
            except duckdb.Error:
                outcomes["failed"] += 1  # a lost race with weir's commit: DuckDB's to retry
            time.sleep(0.3)

    try:
        produce(bootstrap, topic, records[:20_000])
        wait_for(lambda: ledger(lake) >= 20_000, 240, "the first keys committed")
        compactor = threading.Thread(target=compact, daemon=True)
        compactor.start()
        chunk = 8_000
        for start in range(20_000, len(records), chunk):
            produce(bootstrap, topic, records[start:start + chunk])
            time.sleep(1)
        wait_for(lambda: ledger(lake) >= len(records), 240, "every record committed")
        stop.set()
        compactor.join(timeout=120)
    finally:
        stop.set()
        code = weir.stop()
    assert code == 0, weir.log()
    assert outcomes["merged"] > 0, outcomes
    assert_state(lake, "agg", state)
