"""weir's Iceberg REST catalog client against real servers (Iceberg's REST fixture and Nessie),
with pyiceberg writing and reading the same tables, and against peers that misbehave: a fault
proxy in front of the real server, and servers that stall or never stop talking."""

from __future__ import annotations

import json
import time
import uuid

import pytest
from pyiceberg.catalog import load_catalog

from tests.e2e.iceberg_catalog_tool import SCHEMA, rows, run_tool, snapshot_commit
from tests.harness.fault_proxy import FaultProxy, HostileServer, Rule


class Server:
    def __init__(self, kind: str, settings: dict[str, str]):
        self.kind = kind
        if kind == "iceberg-rest":
            self.uri = settings["WEIR_TEST_ICEBERG_REST_URI"]
            self.pyiceberg_props = {}
        else:
            self.uri = settings["WEIR_TEST_NESSIE_URI"]
            self.pyiceberg_props = {
                "s3.access-key-id": settings["WEIR_TEST_S3_ACCESS_KEY"],
                "s3.secret-access-key": settings["WEIR_TEST_S3_SECRET_KEY"],
                "s3.region": settings["WEIR_TEST_S3_REGION"],
            }

    def pyiceberg(self):
        return load_catalog(
            f"weir-test-{self.kind}", type="rest", uri=self.uri, **self.pyiceberg_props
        )


@pytest.fixture(params=["iceberg-rest", "nessie"])
def server(request) -> Server:
    settings = request.getfixturevalue(request.param.replace("-", "_"))
    return Server(request.param, settings)


@pytest.fixture(scope="module")
def rest_fixture(iceberg_rest) -> Server:
    return Server("iceberg-rest", iceberg_rest)


def unique(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:10]}"


def create_with_weir(build_dir, tmp_path, uri: str, ns: str, table: str) -> dict:
    assert run_tool(build_dir, "rest", uri, "ensure-namespace", ns)["ok"]
    spec = tmp_path / f"{table}-create.json"
    spec.write_text(json.dumps({"schema": SCHEMA, "properties": {"owner": "weir"}}))
    created = run_tool(build_dir, "rest", uri, "create", ns, table, str(spec))
    assert created["ok"], created
    return created


def commit(build_dir, tmp_path, uri: str, ns: str, table: str, body: dict, *extra: str) -> dict:
    path = tmp_path / f"commit-{uuid.uuid4().hex[:8]}.json"
    path.write_text(json.dumps(body))
    return run_tool(build_dir, "rest", uri, *extra, "commit", ns, table, str(path))


def test_create_load_and_commit_with_typed_outcomes(server, build_dir, tmp_path):
    ns, name = unique("ns"), unique("events")
    config = run_tool(build_dir, "rest", server.uri, "config")
    assert config["prefix"] == ("main" if server.kind == "nessie" else "")

    created = create_with_weir(build_dir, tmp_path, server.uri, ns, name)
    # A namespace that exists already is not an error.
    assert run_tool(build_dir, "rest", server.uri, "ensure-namespace", ns)["ok"]
    metadata = created["metadata"]
    assert [f["name"] for f in metadata["schemas"][0]["fields"]] == ["id", "v"]
    assert metadata["properties"]["owner"] == "weir"
    assert metadata.get("current-snapshot-id") in (None, -1)
    table_uuid = metadata["table-uuid"]

    # pyiceberg appends through the same server: snapshot S1 with 5 rows.
    py_table = server.pyiceberg().load_table((ns, name))
    assert py_table.metadata.table_uuid == uuid.UUID(table_uuid)
    py_table.append(rows(5))
    s1 = py_table.current_snapshot().snapshot_id

    loaded = run_tool(build_dir, "rest", server.uri, "load", ns, name)
    assert loaded["metadata"]["current-snapshot-id"] == s1
    assert loaded["metadata_location"].endswith(".metadata.json")
    if server.kind == "iceberg-rest":  # Nessie answers pyiceberg with a location of its API
        assert loaded["metadata_location"] == py_table.metadata_location

    # weir commits snapshot S2 on top of S1 (correct assert-ref-snapshot-id): committed.
    s2 = s1 + 1
    body = snapshot_commit(loaded["metadata"], table_uuid, s1, s2)
    done = commit(build_dir, tmp_path, server.uri, ns, name, body)
    assert done["outcome"] == "committed", done
    assert done["table"]["metadata"]["current-snapshot-id"] == s2
    assert done["table"]["metadata_location"] != loaded["metadata_location"]

    # The same commit again asserts main is still S1: a conflict, and nothing changes.
    stale = commit(build_dir, tmp_path, server.uri, ns, name, snapshot_commit(
        loaded["metadata"], table_uuid, s1, s2 + 1))
    assert stale["outcome"] == "conflict", stale
    assert "HTTP 409" in stale["message"]
    if server.kind == "iceberg-rest":  # Nessie's error model names no type
        assert "CommitFailedException" in stale["message"]

    py_table = server.pyiceberg().load_table((ns, name))
    assert py_table.current_snapshot().snapshot_id == s2
    assert py_table.current_snapshot().summary["weir.commit-id"] == f"c-{s2}"
    assert py_table.current_snapshot().sequence_number == 2
    if server.kind == "iceberg-rest":  # Nessie keeps the current snapshot only, parentless
        assert py_table.current_snapshot().parent_snapshot_id == s1
        assert [s.snapshot_id for s in py_table.snapshots()] == [s1, s2]
    data = py_table.scan().to_arrow()
    assert data.num_rows == 5 and sorted(data["id"].to_pylist()) == [0, 1, 2, 3, 4]

    missing = run_tool(build_dir, "rest", server.uri, "load", ns, "no_such_table")
    assert (missing["kind"], missing["class"]) == ("not_found", "fatal")
    again = run_tool(
        build_dir, "rest", server.uri, "create", ns, name, str(tmp_path / f"{name}-create.json")
    )
    assert again["kind"] == "already_exists"


def test_a_multi_level_namespace_round_trips(server, build_dir, tmp_path):
    ns = f"{unique('a')}.b c.d"  # three levels, one with a space (URL-encoded)
    create_with_weir(build_dir, tmp_path, server.uri, ns, "t")
    py = server.pyiceberg()
    assert (*ns.split("."), "t") in [tuple(i) for i in py.list_tables(tuple(ns.split(".")))]
    assert py.load_table((*ns.split("."), "t")).name() == (*ns.split("."), "t")
    loaded = run_tool(build_dir, "rest", server.uri, "load", ns, "t")
    assert loaded["metadata_location"].endswith(".metadata.json")


def test_a_namespace_created_by_a_racer_in_between_is_success(rest_fixture, build_dir):
    ns = unique("ns")
    assert run_tool(build_dir, "rest", rest_fixture.uri, "ensure-namespace", ns)["ok"]
    with FaultProxy(rest_fixture.uri) as proxy:
        # weir sees no namespace, then its create meets the one that exists: 409, tolerated.
        proxy.add(Rule("GET", f"/namespaces/{ns}", "status_without_forward", status=404))
        result = run_tool(build_dir, "rest", proxy.uri, "ensure-namespace", ns)
    assert result["ok"], result
    assert [(m, p.split("?")[0]) for m, p, _ in proxy.forwarded][-1] == ("POST", "/v1/namespaces")


def test_oauth2_client_credentials_are_exchanged_for_a_token(rest_fixture, build_dir):
    config = run_tool(build_dir, "rest", rest_fixture.uri, "--credential", "weir:secret", "config")
    assert config["ok"], config


def s1_table(server, build_dir, tmp_path):
    ns, name = unique("ns"), unique("t")
    created = create_with_weir(build_dir, tmp_path, server.uri, ns, name)
    py_table = server.pyiceberg().load_table((ns, name))
    py_table.append(rows(3))
    loaded = run_tool(build_dir, "rest", server.uri, "load", ns, name)
    return ns, name, created["metadata"]["table-uuid"], loaded["metadata"]


@pytest.mark.parametrize(
    "action,status,applied",
    [
        ("drop_after_forward", 0, True),
        ("status_after_forward", 502, True),
        ("status_without_forward", 503, False),
        ("status_without_forward", 504, False),
    ],
)
def test_a_commit_without_an_answer_is_unknown_and_reading_back_tells(
    rest_fixture, build_dir, tmp_path, action, status, applied
):
    ns, name, table_uuid, metadata = s1_table(rest_fixture, build_dir, tmp_path)
    s1 = metadata["current-snapshot-id"]
    with FaultProxy(rest_fixture.uri) as proxy:
        rule = proxy.add(Rule("POST", f"/tables/{name}", action, status=status))
        result = commit(build_dir, tmp_path, proxy.uri, ns, name,
                        snapshot_commit(metadata, table_uuid, s1, s1 + 7))
        assert len(rule.hits) == 1
    assert result["outcome"] == "unknown", result
    # The caller resolves it by reading the table back and looking for its commit.
    current = run_tool(build_dir, "rest", rest_fixture.uri, "load", ns, name)["metadata"]
    ids = [s["summary"].get("weir.commit-id") for s in current["snapshots"]]
    assert (f"c-{s1 + 7}" in ids) == applied
    assert current["current-snapshot-id"] == (s1 + 7 if applied else s1)


def test_a_server_that_is_gone_is_retriable_and_the_request_known_unsent(build_dir, tmp_path):
    with HostileServer("stall") as peer:
        uri = peer.uri
    result = run_tool(build_dir, "rest", uri, "config")
    assert (result["kind"], result["class"]) == ("unavailable", "retriable")
    assert "HTTP connect" in result["message"] and "request not sent" in result["message"]


def test_a_stalling_server_costs_the_total_timeout_only(build_dir):
    with HostileServer("stall") as peer:
        result = run_tool(build_dir, "rest", peer.uri, "--timeout-ms", "1500", "config")
        assert peer.requests == 1
    assert (result["kind"], result["class"]) == ("unavailable", "retriable")
    assert "HTTP timeout" in result["message"]
    assert 1.4 < result["seconds"] < 10


def test_a_stop_request_ends_a_stalled_call_at_once(build_dir):
    with HostileServer("stall") as peer:
        result = run_tool(
            build_dir, "rest", peer.uri, "--timeout-ms", "60000", "--stop-after-ms", "300",
            "config",
        )
    assert "HTTP stopped" in result["message"]
    assert result["seconds"] < 5


def test_an_endless_body_stops_at_the_size_cap(build_dir):
    with HostileServer("endless_body") as peer:
        result = run_tool(
            build_dir, "rest", peer.uri, "--max-body-bytes", "1000000", "--timeout-ms", "30000",
            "config",
        )
    assert "HTTP too_large" in result["message"], result
    assert result["seconds"] < 20


def test_a_body_shorter_than_its_length_is_a_transport_failure(build_dir):
    with HostileServer("short_body") as peer:
        result = run_tool(build_dir, "rest", peer.uri, "--timeout-ms", "10000", "config")
    assert "HTTP transport" in result["message"], result
    assert result["class"] == "retriable"


def headers_of(proxy: FaultProxy, method: str, suffix: str) -> list[dict[str, str]]:
    return [
        {k.lower(): v for k, v in headers.items()}
        for m, path, headers in proxy.forwarded
        if m == method and path.split("?")[0].endswith(suffix)
    ]


def test_a_bearer_token_is_sent_with_every_call(rest_fixture, build_dir):
    ns = unique("ns")
    with FaultProxy(rest_fixture.uri) as proxy:
        assert run_tool(build_dir, "rest", proxy.uri, "--token", "t0k3n", "ensure-namespace", ns)[
            "ok"
        ]
    assert [m for m, _, _ in proxy.forwarded] == ["GET", "GET", "POST"]  # config, load, create
    assert {h.get("Authorization") for _, _, h in proxy.forwarded} == {"Bearer t0k3n"}


def test_oauth2_tokens_are_refreshed_before_they_expire(rest_fixture, build_dir):
    ns = unique("ns")
    assert run_tool(build_dir, "rest", rest_fixture.uri, "ensure-namespace", ns)["ok"]
    with FaultProxy(rest_fixture.uri) as proxy:
        proxy.token_lifetime_s = 1.0  # refreshed after 80% of it: 0.8 s
        result = run_tool(
            build_dir, "rest", proxy.uri, "--credential", "weir-client:s3cret",
            "--repeat", "3", "--pause-ms", "1000", "ensure-namespace", ns,
        )
    assert result["ok"], result
    assert proxy.tokens_issued == [f"token-{i}-weir-client" for i in range(3)]
    calls = headers_of(proxy, "GET", f"/namespaces/{ns}")
    assert [h["authorization"] for h in calls] == [f"Bearer token-{i}-weir-client" for i in range(3)]


def test_mutations_carry_an_idempotency_key_only_when_the_server_advertises_them(
    rest_fixture, build_dir, tmp_path
):
    ns, name, table_uuid, metadata = s1_table(rest_fixture, build_dir, tmp_path)
    s1 = metadata["current-snapshot-id"]
    key = str(uuid.uuid4())
    with FaultProxy(rest_fixture.uri) as proxy:
        proxy.config_overrides = {"idempotency-key-lifetime": "PT30M"}
        assert run_tool(build_dir, "rest", proxy.uri, "config")["idempotency"] is True
        done = commit(build_dir, tmp_path, proxy.uri, ns, name,
                      snapshot_commit(metadata, table_uuid, s1, s1 + 3), "--timeout-ms", "30000")
        # The key is the caller's when it gives one (a retry of a commit of unknown outcome).
        path = tmp_path / "again.json"
        after = done["table"]["metadata"]
        path.write_text(json.dumps(snapshot_commit(after, table_uuid, s1 + 3, s1 + 4)))
        again = run_tool(build_dir, "rest", proxy.uri, "commit", ns, name, str(path), key)
    assert (done["outcome"], again["outcome"]) == ("committed", "committed")
    commits = headers_of(proxy, "POST", f"/tables/{name}")
    assert len(commits) == 2
    assert uuid.UUID(commits[0]["idempotency-key"]).version == 7
    assert commits[1]["idempotency-key"] == key
    assert all("idempotency-key" not in h for h in headers_of(proxy, "GET", "/v1/config"))

    with FaultProxy(rest_fixture.uri) as plain:  # not advertised: no key at all
        assert run_tool(build_dir, "rest", plain.uri, "ensure-namespace", unique("ns"))["ok"]
    assert all("idempotency-key" not in {k.lower() for k in h} for _, _, h in plain.forwarded)


def test_a_401_under_oauth2_is_retriable_and_the_next_call_fetches_a_new_token(
    rest_fixture, build_dir
):
    ns = unique("ns")
    assert run_tool(build_dir, "rest", rest_fixture.uri, "ensure-namespace", ns)["ok"]
    with FaultProxy(rest_fixture.uri) as proxy:
        proxy.token_lifetime_s = 3600.0
        proxy.add(Rule("GET", f"/namespaces/{ns}", "status_without_forward", status=401))
        result = run_tool(
            build_dir, "rest", proxy.uri, "--credential", "c:s", "--repeat", "2",
            "ensure-namespace", ns,
        )
    first, second = result["lines"]
    assert (first["ok"], first["kind"], first["class"]) == (False, "unavailable", "retriable")
    assert second["ok"], second
    assert proxy.tokens_issued == ["token-0-c", "token-1-c"]
    calls = headers_of(proxy, "GET", f"/namespaces/{ns}")
    assert [h["authorization"] for h in calls] == ["Bearer token-1-c"]  # the 401 was not forwarded
