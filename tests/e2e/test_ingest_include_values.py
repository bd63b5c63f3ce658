"""The dynamic allowlist (issue 14; millpond's MILLPOND_INCLUDE_VALUES_*) against an endpoint the
test controls (a Python http.server): additions apply at once, a removal waits for N
consecutive good polls, an empty answer, a bulk removal and an integer ↔ text flip are refused
(counted exactly, set kept), a redirect, an oversized body, a body shorter than its length and a
stalled answer each cost one failed poll and nothing else, and an endpoint that is down at start
stops an authoritative start but not a shadow one — with the records kept and skipped exactly
as the set in force says, in DuckLake."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.e2e.weir_run import (Lake, WeirIngest, create_topic, free_port, produce, unique,
                                wait_for)


class Endpoint:
    """An include-values endpoint: answers every GET with the current `mode`, counting them."""

    def __init__(self, port: int | None = None):
        self.port = port or free_port()
        self.mode: object = [1]
        self.served: dict[str, int] = {}
        self.headers: list[dict] = []
        self.lock = threading.Lock()
        self.server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/values"

    def set(self, mode) -> None:
        with self.lock:
            self.mode = mode

    def count(self, mode) -> int:
        with self.lock:
            return self.served.get(json.dumps(mode), 0)

    def start(self) -> "Endpoint":
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                with endpoint.lock:
                    mode = endpoint.mode
                    key = json.dumps(mode)
                    endpoint.served[key] = endpoint.served.get(key, 0) + 1
                    endpoint.headers.append(dict(self.headers))
                try:
                    endpoint.answer(self, mode)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (as it should on an oversized body)

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def answer(self, h: BaseHTTPRequestHandler, mode) -> None:
        if isinstance(mode, list):
            body = json.dumps(mode).encode()
            h.send_response(200)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(body)))
            h.end_headers()
            h.wfile.write(body)
        elif mode.startswith("redirect:"):
            h.send_response(302)
            h.send_header("Location", mode[len("redirect:"):])
            h.send_header("Content-Length", "0")
            h.end_headers()
        elif mode == "huge":  # no length: 1 MiB of a valid-looking array until close
            h.send_response(200)
            h.end_headers()
            h.wfile.write(b"[" + b"1," * (512 * 1024))
            h.wfile.write(b"1]")
        elif mode == "short":  # promises more than it sends, then closes
            h.send_response(200)
            h.send_header("Content-Length", "1000")
            h.end_headers()
            h.wfile.write(b"[1, 2")
        elif mode == "stall":  # answers nothing within the request timeout
            time.sleep(3)
        h.close_connection = True

    def stop(self) -> None:
        if self.server:
            self.server.shutdown()
            self.server.server_close()


POLL = {"WEIR_INCLUDE_VALUES_POLL_INTERVAL": "300ms",
        "WEIR_INCLUDE_VALUES_REQUEST_TIMEOUT": "1s",
        "WEIR_INCLUDE_VALUES_REMOVAL_POLLS": "3",
        "WEIR_INCLUDE_VALUES_MAX_BYTES": "64KiB",
        "WEIR_FLUSH_INTERVAL": "1s"}


def team_records(start: int, teams: range, per_team: int = 2) -> list[tuple[bytes, bytes]]:
    out = []
    i = start
    for team in teams:
        for _ in range(per_team):
            out.append((None, json.dumps({"id": i, "team_id": team}).encode()))
            i += 1
    return out


def accounted(weir: WeirIngest) -> float:
    return weir.metric("weir_records_written_total") + weir.metric("weir_records_filtered_total")


def settle(predicate, what: str, weir: WeirIngest, timeout_s: float = 60) -> None:
    wait_for(lambda: predicate() or not weir.alive(), timeout_s, what, poll_s=0.1)
    assert weir.alive(), weir.log()
    assert predicate(), what


def test_authoritative_allowlist_follows_the_endpoint_under_its_safety_rules(
    kafka, build_dir, tmp_path
):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("include")
    create_topic(bootstrap, topic, 1)
    endpoint = Endpoint().start()
    elsewhere = Endpoint().start()  # a redirect's target: must never be asked
    elsewhere.set([1, 2, 3, 4, 5, 6, 7])
    endpoint.set([1, 2, 3, 4, 5])
    lake = Lake(tmp_path / "lake")
    env = {**POLL, "WEIR_FILTER_KEEP_FIELD": "team_id", "WEIR_FILTER_KEEP_VALUES": "1",
           "WEIR_INCLUDE_VALUES_URL": endpoint.url, "WEIR_INCLUDE_VALUES_MODE": "authoritative",
           "WEIR_INCLUDE_VALUES_AUTH_HEADER_NAME": "X-Token",
           "WEIR_INCLUDE_VALUES_AUTH_TOKEN": "t0k3n"}
    started = time.time()
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group"), env).start()
    produced = 0
    kept: set[int] = set()

    def batch(teams_kept: set[int]) -> None:
        nonlocal produced
        records = team_records(produced, range(1, 8))
        produce(bootstrap, topic, records)
        for _, value in records:
            r = json.loads(value)
            if r["team_id"] in teams_kept:
                kept.add(r["id"])
        produced += len(records)
        settle(lambda: accounted(weir) == produced, f"{produced} records accounted", weir)

    m = weir.metric
    try:
        settle(lambda: m("weir_include_values_size") == 5, "the first poll", weir)
        assert m("weir_include_values_mode", mode="authoritative") == 1
        assert m("weir_include_values_pinned") == 1
        assert m("weir_include_values_pinned_only") == 0
        assert m("weir_include_values_last_success_timestamp_seconds") >= started
        assert m("weir_include_values_changes_total", action="add") == 4
        batch({1, 2, 3, 4, 5})

        # An addition applies on the first poll that shows it.
        endpoint.set([1, 2, 3, 4, 5, 6])
        settle(lambda: m("weir_include_values_size") == 6, "the addition", weir)
        assert m("weir_include_values_changes_total", action="add") == 5
        batch({1, 2, 3, 4, 5, 6})

        # A removal waits for 3 consecutive good polls.
        endpoint.set([1, 2, 3, 4, 5])
        settle(lambda: m("weir_include_values_pending_removals") == 1, "the countdown", weir)
        settle(lambda: m("weir_include_values_size") == 5, "the removal", weir)
        assert endpoint.count([1, 2, 3, 4, 5]) >= 3
        assert m("weir_include_values_changes_total", action="remove") == 1
        assert m("weir_include_values_pending_removals") == 0

        # Refusals: counted per refused poll, the set kept.
        for mode, reason in (([], "empty"), (["a", "b"], "type_flip")):
            endpoint.set(mode)
            settle(lambda: m("weir_include_values_refused_total", reason=reason) >= 2,
                   f"{reason} refused", weir)
            endpoint.set([1, 2, 3, 4, 5])
            settle(lambda: m("weir_include_values_refused_total", reason=reason) ==
                   endpoint.count(mode), f"every {reason} poll counted", weir)
            assert m("weir_include_values_size") == 5
        # Removing 3 of 5 at once: two polls count down, the third and later are refused.
        endpoint.set([1, 2])
        settle(lambda: m("weir_include_values_refused_total", reason="bulk_removal") >= 2,
               "bulk_removal refused", weir)
        endpoint.set([1, 2, 3, 4, 5])
        settle(lambda: m("weir_include_values_refused_total", reason="bulk_removal") ==
               endpoint.count([1, 2]) - 2, "every bulk poll counted", weir)
        settle(lambda: m("weir_include_values_pending_removals") == 0, "countdowns reset", weir)
        assert m("weir_include_values_size") == 5
        assert m("weir_include_values_changes_total", action="remove") == 1

        # Hostile answers each cost one failed poll; the set is kept.
        failing = [f"redirect:{elsewhere.url}", "huge", "short", "stall"]
        for mode in failing:
            endpoint.set(mode)
            settle(lambda: endpoint.count(mode) >= 2, f"{mode} served", weir)
            endpoint.set([1, 2, 3, 4, 5])
        settle(lambda: m("weir_include_values_poll_failures_total") ==
               sum(endpoint.count(mode) for mode in failing), "every failure counted", weir)
        assert m("weir_include_values_size") == 5
        assert m("weir_include_values_refused_total") == (
            endpoint.count([]) + endpoint.count(["a", "b"]) + endpoint.count([1, 2]) - 2)
        assert sum(elsewhere.served.values()) == 0  # the redirect was never followed
        assert all(h.get("X-Token") == "t0k3n" for h in endpoint.headers)
        batch({1, 2, 3, 4, 5})
    finally:
        code = weir.stop()
        endpoint.stop()
        elsewhere.stop()
    assert code == 0, weir.log()
    log = weir.log(2000)
    assert "redirect refused (HTTP 302)" in log
    assert "response body over 65536 bytes" in log
    assert "include-values: removing 6 (absent 3 consecutive polls)" in log
    assert "t0k3n" not in log  # the token is never printed
    con = lake.connect()
    try:
        ids = {r[0] for r in con.execute("SELECT id FROM lake.events").fetchall()}
    finally:
        con.close()
    assert ids == kept
    assert lake.scalar(f"SELECT sum(next_offset) FROM sqlite_scan('{lake.sqlite_path}', "
                       "'weir_offset_ledger')") == produced


def test_authoritative_start_fails_while_the_endpoint_is_down(kafka, build_dir, tmp_path):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("include_down")
    create_topic(bootstrap, topic, 1)
    produce(bootstrap, topic, team_records(0, range(1, 3)))
    lake = Lake(tmp_path / "lake")
    down = Endpoint()  # never started: connections are refused
    env = {**POLL, "WEIR_FILTER_KEEP_FIELD": "team_id", "WEIR_FILTER_KEEP_VALUES": "1",
           "WEIR_INCLUDE_VALUES_URL": down.url, "WEIR_INCLUDE_VALUES_MODE": "authoritative",
           "WEIR_INCLUDE_VALUES_STARTUP_TIMEOUT": "2s"}
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group"), env).start()
    code = weir.process.wait(timeout=120)
    assert code != 0
    log = weir.log(400)
    assert f"no good poll of {down.url} within 2000 ms" in log
    assert "include_values.startup_timeout" in log
    assert lake.count("events") == 0


def test_shadow_starts_on_the_static_values_while_the_endpoint_is_down(
    kafka, build_dir, tmp_path
):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("include_shadow")
    create_topic(bootstrap, topic, 1)
    lake = Lake(tmp_path / "lake")
    endpoint = Endpoint()  # down until started below
    env = {**POLL, "MILLPOND_FILTER_KEEP_FIELD_NAME": "team_id",
           "MILLPOND_FILTER_VALUES": "1,2", "MILLPOND_INCLUDE_VALUES_URL": endpoint.url,
           "MILLPOND_INCLUDE_VALUES_POLL_INTERVAL_S": "0.3"}
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group"), env).start()
    m = weir.metric
    try:
        produce(bootstrap, topic, team_records(0, range(1, 4)))
        settle(lambda: accounted(weir) == 6, "the first records", weir)
        assert m("weir_records_written_total") == 4
        assert m("weir_records_filtered_total", reason="filter_excluded") == 2
        assert m("weir_include_values_mode", mode="shadow") == 1
        settle(lambda: m("weir_include_values_poll_failures_total") >= 2, "failed polls", weir)
        # The endpoint comes up: observed, never applied.
        endpoint.set([2, 3, 4])
        endpoint.start()
        settle(lambda: m("weir_include_values_shadow_only_remote") == 2, "a shadow poll", weir)
        assert m("weir_include_values_shadow_only_static") == 1
        assert m("weir_include_values_pinned_only") == 1
        assert m("weir_include_values_size") == 4  # what authoritative mode would serve
        produce(bootstrap, topic, team_records(6, range(1, 4)))
        settle(lambda: accounted(weir) == 12, "the second records", weir)
        assert m("weir_records_written_total") == 8
        assert m("weir_records_filtered_total", reason="filter_excluded") == 4
        assert m("weir_filter_matched_total", value="3") == 0
    finally:
        code = weir.stop()
        endpoint.stop()
    assert code == 0, weir.log()
    con = lake.connect()
    try:
        teams = sorted(r[0] for r in con.execute("SELECT team_id FROM lake.events").fetchall())
    finally:
        con.close()
    assert teams == [1, 1, 1, 1, 2, 2, 2, 2]


def test_authoritative_allowlist_in_iceberg(kafka, build_dir, tmp_path):
    """The polled set ∪ the pins decides what lands in an Iceberg table too."""
    from tests.e2e.test_ingest_iceberg import IcebergLake

    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("include_iceberg")
    create_topic(bootstrap, topic, 1)
    endpoint = Endpoint().start()
    endpoint.set([2, 3])
    lake = IcebergLake(tmp_path / "lake")
    env = {**POLL, "WEIR_FILTER_KEEP_FIELD": "team_id", "WEIR_FILTER_KEEP_VALUES": "1",
           "WEIR_INCLUDE_VALUES_URL": endpoint.url, "WEIR_INCLUDE_VALUES_MODE": "authoritative"}
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group"), env).start()
    m = weir.metric
    try:
        settle(lambda: m("weir_include_values_size") == 3, "the first poll", weir)
        produce(bootstrap, topic, team_records(0, range(1, 6)))
        settle(lambda: accounted(weir) == 10, "every record", weir)
        assert m("weir_records_written_total") == 6
        assert m("weir_records_filtered_total", reason="filter_excluded") == 4
        assert {v: m("weir_filter_matched_total", value=v) for v in "123"} == \
            {"1": 2, "2": 2, "3": 2}
    finally:
        code = weir.stop()
        endpoint.stop()
    assert code == 0, weir.log()
    rows = lake.table("events").scan().to_arrow().to_pylist()
    assert sorted((r["team_id"], r["id"]) for r in rows) == \
        [(1, 0), (1, 1), (2, 2), (2, 3), (3, 4), (3, 5)]


def test_values_that_cannot_be_uuids_against_a_uuid_column(kafka, build_dir, tmp_path):
    """millpond's filter_value_invalid error: on a uuid-pinned column a served value that is not
    a UUID is left out of the comparison (counted on weir_errors_total{type=
    "filter_value_invalid"}) while the rest of the set applies. (The skip reason of the same name
    needs a set with no usable value, which the rules make unreachable: an include-values URL
    needs static pins, and a static value that is not a UUID stops startup.)"""
    import uuid

    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("include_uuid")
    create_topic(bootstrap, topic, 1)
    users = [str(uuid.UUID(int=(k + 1) * 7777)) for k in range(3)]
    pin = str(uuid.UUID(int=424242))  # no record has it
    endpoint = Endpoint().start()
    endpoint.set(["alice", "bob"])  # nothing a uuid column can hold
    lake = Lake(tmp_path / "lake")
    env = {**POLL, "WEIR_TYPED_COLUMNS": "user_id:uuid", "WEIR_FILTER_KEEP_FIELD": "user_id",
           "WEIR_FILTER_KEEP_VALUES": pin, "WEIR_INCLUDE_VALUES_URL": endpoint.url,
           "WEIR_INCLUDE_VALUES_MODE": "authoritative"}
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group"), env).start()
    produced = 0

    def batch() -> list[dict]:
        nonlocal produced
        rows = [{"id": produced + i, "user_id": users[i % 3]} for i in range(30)]
        produce(bootstrap, topic, ((None, json.dumps(r).encode()) for r in rows))
        produced += len(rows)
        settle(lambda: accounted(weir) == produced, f"{produced} records accounted", weir)
        return rows

    m = weir.metric
    try:
        settle(lambda: m("weir_include_values_size") == 3, "the first poll", weir)
        batch()
        assert m("weir_records_filtered_total", reason="filter_excluded") == 30
        assert m("weir_records_filtered_total", reason="filter_value_invalid") == 0
        assert m("weir_records_written_total") == 0
        assert m("weir_errors_total", type="filter_value_invalid") >= 1

        endpoint.set([users[1], "bob"])  # one usable value, one that is not a UUID
        # Added at once; "alice" goes after 3 polls. (Wait on the removal counter, not on the
        # size: a scrape can see the add counter before the size gauge of the same poll.)
        settle(lambda: m("weir_include_values_changes_total", action="remove") == 1,
               "alice's removal", weir)
        settle(lambda: m("weir_include_values_size") == 3, "the new set", weir)
        assert m("weir_include_values_changes_total", action="add") == 3
        rows = batch()
        assert m("weir_records_written_total") == 10
        assert m("weir_records_filtered_total", reason="filter_excluded") == 50
    finally:
        assert weir.stop() == 0, weir.log()
        endpoint.stop()
    landed = lake.connect().execute(
        "SELECT id, user_id::VARCHAR FROM lake.events ORDER BY id").fetchall()
    assert landed == [(r["id"], r["user_id"]) for r in rows if r["user_id"] == users[1]]
