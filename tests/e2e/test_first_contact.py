"""First contact (issue 30): no silent traps and nothing left behind by a failed start. A
PostgreSQL catalog setting with catalog.kind unset means PostgreSQL (never a local SQLite lake);
a setting the deciding one leaves unused is refused; a failed `weir ingest` (missing topic,
unreachable broker, HTTP port in use) leaves its working directory as it found it; a backfill
takes no HTTP port; the HTTP error says why; a YAML syntax error is the only error shown."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import pytest

from tests.e2e.weir_run import create_topic, event_records, free_port, produce, unique


def clean_environment(**settings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WEIR_")}
    env.update(settings)
    return env


def tree(directory: Path) -> list[str]:
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*"))


def run(build_dir: Path, args: list[str], env: dict[str, str], cwd: Path,
        timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([str(build_dir / "weir"), *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def test_a_postgres_host_without_the_kind_means_postgres_and_check_says_so(build_dir, tmp_path):
    closed = free_port()
    env = clean_environment(WEIR_KAFKA_BOOTSTRAP_SERVERS=f"127.0.0.1:{free_port()}",
                            WEIR_TOPIC="events", WEIR_TABLE="events", WEIR_CHECK_TIMEOUT="2s",
                            WEIR_CATALOG_POSTGRES_HOST="127.0.0.1",
                            WEIR_CATALOG_POSTGRES_PORT=str(closed))
    result = run(build_dir, ["check"], env, tmp_path)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert ("catalog.kind: not set; postgres, implied by catalog.postgres_host (from "
            "WEIR_CATALOG_POSTGRES_HOST)") in output, output
    assert "SQLite" not in output, output
    assert f"port={closed}" in output, output
    assert tree(tmp_path) == [], "weir check created nothing"


def test_a_postgres_setting_under_an_explicit_sqlite_kind_stops_naming_both(build_dir, tmp_path):
    env = clean_environment(WEIR_KAFKA_BOOTSTRAP_SERVERS="127.0.0.1:1", WEIR_TOPIC="events",
                            WEIR_TABLE="events", WEIR_CATALOG_KIND="sqlite",
                            WEIR_CATALOG_POSTGRES_HOST="pg.internal")
    result = run(build_dir, ["ingest"], env, tmp_path)
    assert result.returncode == 1, result.stderr
    assert ("catalog.postgres_host: needs catalog.kind postgres (which catalog.postgres_host or "
            "catalog.postgres_dsn imply when catalog.kind is unset), but catalog.kind is sqlite "
            "(from WEIR_CATALOG_POSTGRES_HOST)") in result.stderr, result.stderr
    assert tree(tmp_path) == []


@pytest.mark.parametrize("fault", ["missing_topic", "unreachable_broker", "port_in_use"])
def test_a_failed_ingest_start_leaves_the_directory_as_it_was(fault, kafka, build_dir, tmp_path):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("first_contact")
    port = free_port()
    env = clean_environment(WEIR_KAFKA_BOOTSTRAP_SERVERS=bootstrap, WEIR_TOPIC=topic,
                            WEIR_TABLE="events", WEIR_HTTP_PORT=str(port),
                            WEIR_HTTP_HOST="127.0.0.1")
    busy = None
    if fault == "missing_topic":
        message = topic
    elif fault == "unreachable_broker":
        env["WEIR_KAFKA_BOOTSTRAP_SERVERS"] = f"127.0.0.1:{free_port()}"
        message = "startup check failed"
    else:
        create_topic(bootstrap, topic, 1)
        busy = socket.socket()
        busy.bind(("127.0.0.1", port))
        busy.listen()
        message = f"HTTP server (http.host 127.0.0.1, http.port {port}): "
    (tmp_path / "notes.txt").write_text("mine")
    before = tree(tmp_path)
    try:
        result = run(build_dir, ["ingest"], env, tmp_path, timeout=180)
    finally:
        if busy is not None:
            busy.close()
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert message in output, output
    if fault == "port_in_use":
        assert "Address already in use" in output, output
    assert tree(tmp_path) == before, output


def test_a_backfill_takes_no_http_port_unless_given_one(kafka, build_dir, tmp_path):
    lines = tmp_path / "events.jsonl"
    lines.write_text("".join(f'{{"id": {i}}}\n' for i in range(10)))
    env = clean_environment(WEIR_TOPIC="events", WEIR_TABLE="events")
    result = run(build_dir, ["ingest", "--from", str(lines)], env, tmp_path)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "HTTP on" not in output, output
    port = free_port()
    env["WEIR_HTTP_PORT"] = str(port)
    result = run(build_dir, ["ingest", "--from", str(lines)], env, tmp_path)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert f"HTTP on 0.0.0.0:{port}" in output, output


def test_a_yaml_syntax_error_is_the_only_error_shown(build_dir, tmp_path):
    config = tmp_path / "weir.yaml"
    config.write_text("kafka: {bootstrap_servers: k:9092\ndatasets: []\n")
    result = run(build_dir, ["ingest", "--config", str(config)], clean_environment(), tmp_path)
    assert result.returncode == 1, result.stderr
    assert "not valid YAML" in result.stderr, result.stderr
    assert "required" not in result.stderr, result.stderr
    assert tree(tmp_path) == ["weir.yaml"]


def test_wal_settings_in_direct_mode_are_refused_and_wal_check_says_wal_mode_is_off(
    build_dir, tmp_path
):
    env = clean_environment(WEIR_KAFKA_BOOTSTRAP_SERVERS="127.0.0.1:1", WEIR_TOPIC="events",
                            WEIR_TABLE="events", WEIR_WAL_DIR=str(tmp_path / "wal"))
    result = run(build_dir, ["ingest"], env, tmp_path)
    assert result.returncode == 1, result.stderr
    assert ("wal.dir: needs ingest.mode wal, but ingest.mode is direct (no WAL is written) "
            "(from WEIR_WAL_DIR)") in result.stderr, result.stderr
    env.pop("WEIR_WAL_DIR")
    result = run(build_dir, ["wal", "check"], env, tmp_path)
    assert result.returncode == 2, result.stderr
    assert "WAL mode is off in this configuration (ingest.mode is direct)" in result.stderr
    assert tree(tmp_path) == []


@pytest.mark.parametrize("where", ["no_lake_here", "missing_directory"])
def test_serve_without_a_lake_says_so_and_creates_nothing(where, build_dir, tmp_path):
    args = ["serve", "--port", str(free_port())]
    catalog = tmp_path / "weir-lake" / "catalog.sqlite"
    if where == "missing_directory":
        catalog = tmp_path / "nowhere" / "catalog.sqlite"
        args += ["--catalog-sqlite", str(catalog)]
    result = run(build_dir, args, clean_environment(), tmp_path, timeout=60)
    assert result.returncode == 1, result.stdout + result.stderr
    relative = catalog.relative_to(tmp_path) if where == "no_lake_here" else catalog
    assert (f"weir serve: no lake at {relative} (catalog.sqlite_path): run weir ingest first, "
            "or set catalog.* to the lake's catalog") in result.stderr, result.stderr
    assert "password" not in result.stdout + result.stderr
    assert tree(tmp_path) == []


def test_a_catalog_that_refuses_connections_fails_the_start_at_once(kafka, build_dir, tmp_path):
    """A refusing PostgreSQL catalog once kept `weir ingest` retrying for 202 s (the whole
    commit retry budget): nothing listens there, and waiting cannot help, so the start fails
    at the first attempt, naming the catalog."""
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("startup_refused")
    create_topic(bootstrap, topic, 1)
    closed = free_port()
    env = clean_environment(WEIR_KAFKA_BOOTSTRAP_SERVERS=bootstrap, WEIR_TOPIC=topic,
                            WEIR_TABLE="events", WEIR_HTTP_PORT="0",
                            WEIR_CATALOG_POSTGRES_DSN=f"host=127.0.0.1 port={closed} user=x "
                                                      "dbname=y",
                            WEIR_STARTUP_TIMEOUT="60s")
    result = run(build_dir, ["ingest"], env, tmp_path)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "Connection refused" in output and "nothing listens there" in output, output
    assert "retrying in" not in output, output  # not one retry
    assert "catalog.postgres_dsn" in output, output
    assert tree(tmp_path) == []


def test_a_catalog_that_never_answers_fails_the_start_within_the_startup_timeout(
    kafka, build_dir, tmp_path
):
    """A PostgreSQL catalog that accepts connections and never answers (a hung server, a
    black-holing proxy): each attempt is bounded, and the start gives up at startup.timeout,
    naming the catalog."""
    import socket
    import time

    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("startup_deadline")
    create_topic(bootstrap, topic, 1)
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)  # the kernel completes handshakes; nobody ever answers
    try:
        env = clean_environment(WEIR_KAFKA_BOOTSTRAP_SERVERS=bootstrap, WEIR_TOPIC=topic,
                                WEIR_TABLE="events", WEIR_HTTP_PORT="0",
                                WEIR_CATALOG_POSTGRES_DSN=f"host=127.0.0.1 "
                                f"port={silent.getsockname()[1]} user=x dbname=y",
                                WEIR_STARTUP_TIMEOUT="4s")
        started = time.monotonic()
        result = run(build_dir, ["ingest"], env, tmp_path)
        took = time.monotonic() - started
    finally:
        silent.close()
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "connecting to the catalog (gave up after " in output, output
    assert "the limit being 4 s" in output, output
    assert "catalog.postgres_dsn" in output, output
    # Far below the 200 s of the retry budget (the bound is loose: a loaded machine is slow).
    assert took < 60, f"{took:.1f} s\n{output}"
    assert tree(tmp_path) == []
