"""Record filters (issue 14; millpond's MILLPOND_FILTER_*): the allowlist keeps the listed
values and fails closed, the denylist drops its values after it (keep ∩ ¬drop) and fails open,
each skip reason counts exactly the records it skipped, kept records are counted per matched
value, and the offset ledger covers every consumed record (filtered ones are accounted, never
replayed), in DuckLake and in Iceberg, from WEIR_ variables and from millpond's own."""

from __future__ import annotations

import json

import duckdb
import pytest

from tests.e2e.test_ingest_iceberg import IcebergLake
from tests.e2e.weir_run import Lake, WeirIngest, create_topic, produce, unique, wait_for

PARTITIONS = 2


def records() -> list[dict]:
    """40 records: team_id cycles 1..5, missing or null; user "bot" on every 7th."""
    out = []
    for i in range(40):
        r = {"id": i, "user": "bot" if i % 7 == 0 else f"u{i % 3}"}
        cycle = i % 8
        if cycle < 5:
            r["team_id"] = cycle + 1
        elif cycle == 5:
            r["team_id"] = None
        # cycles 6, 7: no team_id at all
        out.append(r)
    return out


KEEP = {2, 4, 1956}


def expected() -> tuple[set[int], dict[str, int], dict[str, int]]:
    """The ids written, the skips by reason and the allowlist's matches by value."""
    kept, skipped, matched = set(), {}, {}

    def skip(reason):
        skipped[reason] = skipped.get(reason, 0) + 1

    for r in records():
        team = r.get("team_id")
        if team is None:
            skip("filter_field_missing")
        elif team not in KEEP:
            skip("filter_excluded")
        else:
            matched[str(team)] = matched.get(str(team), 0) + 1
            if r["user"] == "bot":
                skip("filter_dropped")
            else:
                kept.add(r["id"])
    return kept, skipped, matched


def produce_records(bootstrap: str, topic: str) -> None:
    rs = records()
    # Keyed by id so both partitions get records.
    assert produce(bootstrap, topic, ((str(r["id"]).encode(), json.dumps(r).encode())
                                      for r in rs)) == len(rs)


def accounted(weir: WeirIngest) -> float:
    return weir.metric("weir_records_written_total") + weir.metric("weir_records_filtered_total")


def run(lake, build_dir, bootstrap, settings, total) -> WeirIngest:
    """Runs weir until every record is written or filtered; returns the stopped process."""
    topic = unique("filters")
    create_topic(bootstrap, topic, PARTITIONS)
    produce_records(bootstrap, topic)
    env = {"WEIR_FLUSH_INTERVAL": "2s", **settings}
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group"), env).start()
    try:
        wait_for(lambda: accounted(weir) == total or not weir.alive(), 120,
                 "every record written or filtered")
        assert weir.alive(), weir.log()
        metrics = weir.metrics()
    finally:
        assert weir.stop() == 0, weir.log()
    weir.final_metrics = metrics
    weir.topic = topic
    return weir


def check_counters(weir: WeirIngest, skipped: dict[str, int], matched: dict[str, int],
                   written: int) -> None:
    samples = weir.final_metrics

    def value(name, **labels):
        total = 0.0
        for series, v in samples.items():
            base, _, rest = series.partition("{")
            if base == name and all(f'{k}="{val}"' in rest for k, val in labels.items()):
                total += v
        return total

    assert value("weir_records_consumed_total") == len(records())
    assert value("weir_records_written_total") == written
    for reason in ("filter_field_missing", "filter_excluded", "filter_value_invalid",
                   "filter_dropped"):
        assert value("weir_records_filtered_total", reason=reason) == skipped.get(reason, 0), reason
    got_matched = {}
    for series, v in samples.items():
        if series.startswith("weir_filter_matched_total{"):
            got_matched[series.split('value="')[1].split('"')[0]] = int(v)
    assert got_matched == matched


def ducklake_ledger(lake: Lake) -> int:
    return lake.scalar(
        f"SELECT sum(next_offset) FROM sqlite_scan('{lake.sqlite_path}', 'weir_offset_ledger')")


def iceberg_ledger(lake: IcebergLake, topic: str) -> int:
    summary = lake.table("events").current_snapshot().summary.additional_properties
    return sum(json.loads(summary[f"weir.offsets.{topic}"]).values())


MILLPOND = {"MILLPOND_FILTER_KEEP_FIELD_NAME": "team_id",
            "MILLPOND_FILTER_VALUES": "2,4,1956",
            "MILLPOND_FILTER_DROP_FIELD_NAME": "user",
            "MILLPOND_FILTER_DROP_VALUES": "bot"}
WEIR = {"WEIR_FILTER_KEEP_FIELD": "team_id", "WEIR_FILTER_KEEP_VALUES": "2,4,1956",
        "WEIR_FILTER_DROP_FIELD": "user", "WEIR_FILTER_DROP_VALUES": "bot"}


@pytest.mark.parametrize("variables", [WEIR, MILLPOND], ids=["weir", "millpond"])
def test_allowlist_then_denylist_in_ducklake(variables, kafka, build_dir, tmp_path):
    lake = Lake(tmp_path / "lake")
    kept, skipped, matched = expected()
    weir = run(lake, build_dir, kafka["WEIR_TEST_KAFKA_BOOTSTRAP"], variables, len(records()))
    con = lake.connect()
    try:
        ids = {r[0] for r in con.execute("SELECT id FROM lake.events").fetchall()}
        assert con.execute("SELECT count(*) FROM lake.events").fetchone()[0] == len(kept)
    finally:
        con.close()
    assert ids == kept
    check_counters(weir, skipped, matched, len(kept))
    # Every consumed offset is in the ledger: the filtered records are accounted.
    assert ducklake_ledger(lake) == len(records())


def test_allowlist_then_denylist_in_iceberg(kafka, build_dir, tmp_path):
    lake = IcebergLake(tmp_path / "lake")
    kept, skipped, matched = expected()
    weir = run(lake, build_dir, kafka["WEIR_TEST_KAFKA_BOOTSTRAP"], WEIR, len(records()))
    rows = lake.table("events").scan().to_arrow().to_pylist()
    assert len(rows) == len(kept)
    assert {r["id"] for r in rows} == kept
    assert all(r["team_id"] in KEEP and r["user"] != "bot" for r in rows)
    check_counters(weir, skipped, matched, len(kept))
    assert iceberg_ledger(lake, weir.topic) == len(records())


def test_allowlist_fails_closed_and_denylist_fails_open_in_ducklake(kafka, build_dir, tmp_path):
    """An allowlist on a column of another type (user is text, the values integers — fine —
    but `score` is a double) skips every record as filter_field_missing; a denylist on a field
    no record has keeps every record."""
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    n = len(records())
    # Fails open: no record has `tenant`.
    lake = Lake(tmp_path / "open")
    weir = run(lake, build_dir, bootstrap,
               {"WEIR_FILTER_DROP_FIELD": "tenant", "WEIR_FILTER_DROP_VALUES": "1,2"}, n)
    assert lake.count("events") == n
    check_counters(weir, {}, {}, n)
    assert "denylist on tenant: no such column" in weir.log(400)
    # Fails closed: integers against text compare as text ("u1" never matches), and against a
    # double column nothing can be evaluated.
    lake = Lake(tmp_path / "closed")
    weir = run(lake, build_dir, bootstrap,
               {"WEIR_FILTER_KEEP_FIELD": "user", "WEIR_FILTER_KEEP_VALUES": "1,2"}, n)
    assert lake.count("events") == 0
    check_counters(weir, {"filter_excluded": n}, {}, 0)
    assert ducklake_ledger(lake) == n


def test_allowlist_on_a_double_column_skips_everything_in_iceberg(kafka, build_dir, tmp_path):
    """`score` is a double: the allowlist cannot be evaluated and fails closed; a denylist on
    the same column fails open (in the same run: keep on team_id, drop on score)."""
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("filters_double")
    create_topic(bootstrap, topic, 1)
    rs = [{"id": i, "team_id": i % 3, "score": i + 0.5} for i in range(12)]
    produce(bootstrap, topic, ((None, json.dumps(r).encode()) for r in rs))
    lake = IcebergLake(tmp_path / "lake")
    env = {"WEIR_FLUSH_INTERVAL": "2s", "WEIR_FILTER_KEEP_FIELD": "team_id",
           "WEIR_FILTER_KEEP_VALUES": "0,1", "WEIR_FILTER_DROP_FIELD": "score",
           "WEIR_FILTER_DROP_VALUES": "1"}
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group"), env).start()
    try:
        wait_for(lambda: accounted(weir) == len(rs) or not weir.alive(), 120, "every record")
        assert weir.alive(), weir.log()
        assert weir.metric("weir_records_filtered_total", reason="filter_excluded") == 4
        assert weir.metric("weir_records_filtered_total", reason="filter_dropped") == 0
        assert weir.metric("weir_filter_matched_total", value="0") == 4
        assert weir.metric("weir_filter_matched_total", value="1") == 4
    finally:
        assert weir.stop() == 0, weir.log()
    assert "denylist on score: column \"score\": its type double cannot be filtered" in \
        weir.log(400)
    rows = lake.table("events").scan().to_arrow().to_pylist()
    assert sorted(r["id"] for r in rows) == [i for i in range(12) if i % 3 in (0, 1)]
    # And an allowlist on the double column: every record skipped as filter_field_missing.
    topic2 = unique("filters_double")
    create_topic(bootstrap, topic2, 1)
    produce(bootstrap, topic2, ((None, json.dumps(r).encode()) for r in rs))
    lake2 = IcebergLake(tmp_path / "lake2")
    env = {"WEIR_FLUSH_INTERVAL": "2s", "WEIR_FILTER_KEEP_FIELD": "score",
           "WEIR_FILTER_KEEP_VALUES": "1"}
    weir = WeirIngest(build_dir, lake2, bootstrap, topic2, "events", unique("group"), env).start()
    try:
        wait_for(lambda: accounted(weir) == len(rs) or not weir.alive(), 120, "every record")
        assert weir.alive(), weir.log()
        assert weir.metric("weir_records_filtered_total", reason="filter_field_missing") == 12
        assert weir.metric("weir_records_written_total") == 0
    finally:
        assert weir.stop() == 0, weir.log()
    # Nothing written, yet the ledger covers all 12 offsets.
    assert iceberg_ledger(lake2, topic2) == 12
    assert lake2.count("events") == 0


def test_kill_loop_with_filters_lands_exactly_the_kept_records_once(kafka, build_dir, tmp_path):
    """SIGKILLs and rebalances while filtering: every kept record lands exactly once, no
    filtered one lands, and the ledger covers every offset (filtered ones included)."""
    import random
    import threading
    import time

    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("filter_kills")
    total = 40_000
    create_topic(bootstrap, topic, 4)
    lake = Lake(tmp_path / "lake")
    group = unique("group")
    settings = {"WEIR_FILTER_KEEP_FIELD": "team", "WEIR_FILTER_KEEP_VALUES": "0,1,2",
                "WEIR_FILTER_DROP_FIELD": "team", "WEIR_FILTER_DROP_VALUES": "2",
                "WEIR_FLUSH_MAX_BYTES": "1MiB"}
    args = ("--set", "kafka.properties.session.timeout.ms=6000",
            "--set", "kafka.properties.heartbeat.interval.ms=1000")
    workers = [WeirIngest(build_dir, lake, bootstrap, topic, "events", group, settings,
                          name=f"w{i}") for i in range(2)]
    for w in workers:
        w.start(*args)

    def produce_slowly():
        chunk = total // 40
        for start in range(0, total, chunk):
            produce(bootstrap, topic, ((str(i).encode(),
                                        json.dumps({"id": i, "team": i % 5}).encode())
                                       for i in range(start, start + chunk)))
            time.sleep(0.5)

    producer = threading.Thread(target=produce_slowly, daemon=True)
    producer.start()
    rng = random.Random(20261201)
    try:
        for _ in range(10):
            time.sleep(rng.uniform(0.5, 3.0))
            victim = workers[rng.randrange(2)]
            victim.kill()
            victim.start(*args)
        producer.join(timeout=120)
        assert not producer.is_alive()
        def ledger() -> int:
            try:
                return ducklake_ledger(lake) or 0
            except duckdb.Error:  # no catalog or no ledger yet
                return 0

        wait_for(lambda: ledger() == total, 240, "every offset in the ledger")
    finally:
        codes = [w.stop() for w in workers]
    assert codes == [0, 0], "\n".join(w.log() for w in workers)
    kept = [i for i in range(total) if i % 5 in (0, 1)]
    assert lake.scalar("SELECT count(*) FROM lake.events") == len(kept)
    assert lake.scalar("SELECT count(DISTINCT id) FROM lake.events") == len(kept)
    assert lake.scalar("SELECT sum(id) FROM lake.events") == sum(kept)
    assert lake.scalar("SELECT count(*) FROM lake.events WHERE team NOT IN (0, 1)") == 0
