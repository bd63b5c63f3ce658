"""The millpond contract for record handling (issue 14): one deployment that sets every
`MILLPOND_*` record variable at once — typed columns (uuid among them), the static allowlist and
denylist, the dynamic include-values endpoint with its auth header, the pre-write sort and the
VARIANT companion — lands exactly the rows millpond would, typed, sorted and with their
companions, counting every skipped record by its reason."""

from __future__ import annotations

import datetime
import json
import uuid

import pyarrow.parquet as pq

from tests.e2e.test_ingest_config import millpond_environment
from tests.e2e.test_ingest_include_values import Endpoint
from tests.e2e.weir_run import (Lake, create_topic, fresh_postgres_database, produce, unique,
                                wait_for)

N = 3000
PINNED = {1, 2, 3}  # MILLPOND_FILTER_VALUES: the allowlist's static pins
REMOTE = [4]        # what the include-values endpoint adds


def record(i: int) -> dict:
    ts = datetime.datetime(2026, 11, 30, tzinfo=datetime.timezone.utc) + \
        datetime.timedelta(seconds=i)
    return {
        "id": i,
        "team": i % 6 + 1,
        "kind": "spam" if i % 5 == 0 else "click",
        "ts": ts.isoformat(),
        "n": (i * 7919) % 1000,
        "score": i / 4,
        "ok": i % 2 == 0,
        "user_id": "not-a-uuid" if i % 7 == 0 else str(uuid.UUID(int=i * 2654435761)),
        "props": {"path": f"/p/{i % 3}", "depth": i % 4, "tags": ["a", i]},
    }


def kept(r: dict) -> bool:
    return r["team"] in PINNED | set(REMOTE) and r["kind"] != "spam"


def test_a_deployment_with_every_millpond_record_variable(kafka, postgres, build_dir, tmp_path):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("millpond_records")
    create_topic(bootstrap, topic, 2)
    records = [record(i) for i in range(N)]
    produce(bootstrap, topic, ((str(r["id"]).encode(), json.dumps(r).encode()) for r in records))
    endpoint = Endpoint().start()
    endpoint.set(REMOTE)
    lake = Lake(tmp_path / "lake", catalog="postgres")
    lake.postgres_dsn = fresh_postgres_database(postgres)
    parts = dict(item.split("=", 1) for item in lake.postgres_dsn.split())
    env = millpond_environment(bootstrap, topic)
    env.update({
        "DUCKLAKE_DATA_PATH": lake.data_path,
        "DUCKLAKE_RDS_HOST": parts["host"],
        "DUCKLAKE_RDS_PORT": parts["port"],
        "DUCKLAKE_RDS_DATABASE": parts["dbname"],
        "DUCKLAKE_RDS_USERNAME": parts["user"],
        "DUCKLAKE_RDS_PASSWORD": "unused-with-trust-auth",
        "DUCKLAKE_PARTITION_BY": "",
        "FLUSH_INTERVAL_MS": "2000",
        "MILLPOND_TYPED_COLUMNS": "ts:timestamptz,n:bigint,score:double,ok:boolean,"
                                  "user_id:uuid,kind:varchar",
        "MILLPOND_FILTER_KEEP_FIELD_NAME": "team",
        "MILLPOND_FILTER_VALUES": ",".join(str(v) for v in sorted(PINNED)),
        "MILLPOND_FILTER_DROP_FIELD_NAME": "kind",
        "MILLPOND_FILTER_DROP_VALUES": "spam",
        "MILLPOND_INCLUDE_VALUES_URL": endpoint.url,
        "MILLPOND_INCLUDE_VALUES_MODE": "authoritative",
        "MILLPOND_INCLUDE_VALUES_POLL_INTERVAL_S": "0.5",
        "MILLPOND_INCLUDE_VALUES_REMOVAL_POLLS": "2",
        "MILLPOND_INCLUDE_VALUES_REQUEST_TIMEOUT_S": "2",
        "MILLPOND_INCLUDE_VALUES_STARTUP_TIMEOUT_S": "30",
        "MILLPOND_INCLUDE_VALUES_AUTH_HEADER_NAME": "X-Values-Token",
        "MILLPOND_INCLUDE_VALUES_AUTH_TOKEN": "s3cret-token",
        "MILLPOND_SORT_BY": "team,n",
        "MILLPOND_VARIANT_COLUMNS": "props",
    })
    import subprocess

    lake.root.mkdir(parents=True, exist_ok=True)
    log = lake.root / "millpond.log"
    port = env["MILLPOND_HTTP_PORT"]
    with open(log, "wb") as out:
        process = subprocess.Popen([str(build_dir / "weir"), "ingest"], env=env, cwd=lake.root,
                                   stdout=out, stderr=subprocess.STDOUT)

    def metric(name: str, **labels: str) -> float:
        import urllib.request

        try:
            text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read()
        except OSError:
            return -1
        total = 0.0
        for line in text.decode().splitlines():
            if line.startswith("#") or not line.startswith(name):
                continue
            series, value = line.rsplit(" ", 1)
            base, _, rest = series.partition("{")
            if base == name and all(f'{k}="{v}"' in rest for k, v in labels.items()):
                total += float(value)
        return total

    try:
        wait_for(lambda: metric("weir_records_written_total") +
                 metric("weir_records_filtered_total") >= N or process.poll() is not None,
                 120, "every record written or filtered")
        assert process.poll() is None, log.read_text()
        filtered = {reason: metric("weir_records_filtered_total", reason=reason)
                    for reason in ("filter_field_missing", "filter_excluded",
                                   "filter_value_invalid", "filter_dropped")}
        nulled_uuids = metric("weir_values_nulled_total", reason="column_coercion")
    finally:
        process.terminate()
        code = process.wait(timeout=100)
        endpoint.stop()
    text = log.read_text()
    assert code == 0, text
    assert "s3cret-token" not in text

    want = [r for r in records if kept(r)]
    assert filtered == {
        "filter_field_missing": 0,
        "filter_excluded": sum(1 for r in records if r["team"] not in PINNED | set(REMOTE)),
        "filter_value_invalid": 0,
        "filter_dropped": sum(1 for r in records
                              if r["team"] in PINNED | set(REMOTE) and r["kind"] == "spam")}
    assert nulled_uuids == sum(1 for r in records if r["user_id"] == "not-a-uuid")
    assert all(h.get("X-Values-Token") == "s3cret-token" for h in endpoint.headers)

    con = lake.connect()
    types = dict(con.execute(
        "SELECT column_name, data_type FROM information_schema.columns WHERE "
        "table_catalog = 'lake' AND table_name = 'events'").fetchall())
    assert {k: types[k] for k in ("ts", "n", "score", "ok", "user_id", "kind",
                                  "props_variant")} == {
        "ts": "TIMESTAMP WITH TIME ZONE", "n": "BIGINT", "score": "DOUBLE", "ok": "BOOLEAN",
        "user_id": "UUID", "kind": "VARCHAR", "props_variant": "VARIANT"}
    rows = con.execute(
        "SELECT id, team, kind, epoch_ms(ts), n, score, ok, user_id::VARCHAR, "
        "props_variant = props::JSON::VARIANT FROM lake.events ORDER BY id").fetchall()
    expected = [
        (r["id"], r["team"], r["kind"],
         int(datetime.datetime.fromisoformat(r["ts"]).timestamp() * 1000), r["n"], r["score"],
         r["ok"], None if r["user_id"] == "not-a-uuid" else r["user_id"], True)
        for r in want]
    assert rows == expected
    files = [f[0] for f in con.execute(
        "SELECT data_file FROM ducklake_list_files('lake', 'events')").fetchall()]
    con.close()
    assert files
    for path in files:  # every file in (team, n) order: millpond's MILLPOND_SORT_BY
        t = pq.read_table(path, columns=["team", "n"]).to_pylist()
        assert t == sorted(t, key=lambda x: (x["team"], x["n"])), path
