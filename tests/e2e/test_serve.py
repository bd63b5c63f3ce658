"""weir serve (first slice of issue 4): TLS required, SCRAM-SHA-256, the simple query protocol
over a DuckLake lake, with psql as the client."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from tests.e2e.weir_run import Lake, free_port, wait_for

PASSWORD = "correct horse battery staple"


def duckdb_lake(tmp_path, create_sql: str) -> Lake:
    """A lake written by DuckDB's own ducklake extension (SQLite catalog, local data)."""
    import duckdb

    from tests.e2e.weir_run import EXTENSIONS

    lake = Lake(tmp_path / "lake")
    lake.root.mkdir(parents=True)
    con = duckdb.connect(config={"extension_directory": str(EXTENSIONS),
                                 "autoinstall_known_extensions": False,
                                 "autoload_known_extensions": False})
    con.execute("LOAD ducklake; LOAD sqlite_scanner")
    con.execute(f"ATTACH 'ducklake:sqlite:{lake.sqlite_path}' AS l (DATA_PATH '{lake.data_path}')")
    con.execute("USE l")
    con.execute(create_sql)
    con.close()
    return lake


def start_serve(build_dir, lake: Lake, tmp_path, *flags: str):
    """`weir serve` on a free port; returns (port, process) once it listens."""
    port = free_port()
    log = open(tmp_path / "serve.log", "wb")
    process = subprocess.Popen(
        [str(build_dir / "weir"), "serve", "--catalog-sqlite", str(lake.sqlite_path),
         "--port", str(port), "--tls-dir", str(tmp_path / "tls"), *flags],
        env=dict(os.environ, WEIR_SERVE_PASSWORD=PASSWORD), stdout=log, stderr=subprocess.STDOUT)
    wait_for(lambda: b"listening on" in (tmp_path / "serve.log").read_bytes()
             or process.poll() is not None, 60, "weir serve to listen")
    assert process.poll() is None, (tmp_path / "serve.log").read_text()
    return port, process


@pytest.fixture
def served_lake(build_dir, tmp_path):
    lake = duckdb_lake(tmp_path, "CREATE TABLE events AS SELECT range AS id, 'name ' || range "
                                 "AS name, range % 2 = 0 AS even FROM range(1000)")
    port, process = start_serve(build_dir, lake, tmp_path)
    yield port, process, tmp_path
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)


def psql(port: int, sql: str, sslmode: str = "require", password: str = PASSWORD):
    env = dict(os.environ, PGPASSWORD=password, PGCONNECT_TIMEOUT="10")
    return subprocess.run(
        ["psql", f"host=127.0.0.1 port={port} user=weir dbname=lake sslmode={sslmode}",
         "-X", "-A", "-t", "-v", "VERBOSITY=verbose", "-c", sql],
        env=env, capture_output=True, text=True, timeout=60)


def test_psql_queries_the_lake_over_tls_with_scram(served_lake):
    port, process, tmp_path = served_lake
    run = psql(port, "SELECT count(*), sum(id), count(*) FILTER (even) FROM events")
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "1000|499500|500"
    run = psql(port, "SELECT name, even FROM events WHERE id = 7")
    assert run.stdout.strip() == "name 7|f"
    # Several statements in one Query message: both results come back.
    run = psql(port, "SELECT 1 AS a; SELECT 'two' AS b")
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["1", "two"]
    # Errors carry the SQLSTATE of the engine's error type; the session goes on.
    run = psql(port, "SELECT * FROM no_such_table")
    assert run.returncode != 0
    assert "42P01" in run.stderr, run.stderr
    run = psql(port, "SELEC 1")
    assert "42601" in run.stderr, run.stderr
    # The password is stored only as a SCRAM verifier.
    users = (tmp_path / "tls" / "users").read_text()
    assert users.startswith("weir SCRAM-SHA-256$4096:") and PASSWORD not in users


def startup_without_tls(port: int) -> bytes:
    """A raw protocol-3.0 startup message without SSLRequest; returns the server's answer."""
    import socket
    import struct

    body = struct.pack("!i", 196608) + b"user\0weir\0database\0lake\0\0"
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(struct.pack("!i", len(body) + 4) + body)
        answer = b""
        while chunk := s.recv(4096):
            answer += chunk
    return answer


def test_plaintext_and_wrong_passwords_are_refused(served_lake):
    port, process, _ = served_lake
    plain = psql(port, "SELECT 1", sslmode="disable")
    assert plain.returncode != 0
    assert "requires TLS" in plain.stderr, plain.stderr
    answer = startup_without_tls(port)  # the FATAL ErrorResponse, byte for byte fields
    assert answer[:1] == b"E" and b"SFATAL\0" in answer and b"C28000\0" in answer, answer
    wrong = psql(port, "SELECT 1", password="not it")
    assert wrong.returncode != 0
    assert 'password authentication failed for user "weir"' in wrong.stderr, wrong.stderr
    refused = scram_login(tls_socket(port), password="not it either")
    assert refused is not None and b"SFATAL\0" in refused and b"C28P01\0" in refused, refused
    assert psql(port, "SELECT 1").returncode == 0  # the server is still fine


def test_sigterm_stops_the_server_with_exit_0(served_lake):
    port, process, _ = served_lake
    assert psql(port, "SELECT 1").returncode == 0
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == 0


def test_psycopg_parameterized_queries_text_and_binary(served_lake):
    import psycopg

    port, _, _ = served_lake
    dsn = f"host=127.0.0.1 port={port} user=weir dbname=lake sslmode=require password='{PASSWORD}'"
    with psycopg.connect(dsn) as conn:
        row = conn.execute("SELECT %s::BIGINT + 1, %s::DOUBLE * 2, %s::VARCHAR || '!', %s::INT",
                           [41, 1.25, "hi", None]).fetchone()
        assert row == (42, 2.5, "hi!", None)
        text = conn.execute("SELECT id, name, even FROM events WHERE id < %s ORDER BY id",
                            [5]).fetchall()
        assert text == [(i, f"name {i}", i % 2 == 0) for i in range(5)]
        with conn.cursor(binary=True) as cur:
            cur.execute("SELECT id, name, even FROM events WHERE id < %s ORDER BY id", [5])
            assert cur.fetchall() == text
        # The same statement prepared once and reused with new values.
        for i in range(10):
            got = conn.execute("SELECT count(*) FROM events WHERE id < %s", [i * 10],
                               prepare=True).fetchone()
            assert got == (i * 10,)
        # More than 32,767 parameters: the wire's counts are unsigned 16-bit.
        ids = list(range(40000))
        placeholders = ", ".join(["%s"] * len(ids))
        got = conn.execute(f"SELECT count(*), sum(id) FROM events WHERE id IN ({placeholders})",
                           ids).fetchone()
        assert got == (1000, sum(range(1000)))


def tls_socket(port: int):
    import socket
    import ssl
    import struct

    raw = socket.create_connection(("127.0.0.1", port), timeout=10)
    raw.sendall(struct.pack("!ii", 8, 80877103))
    assert raw.recv(1) == b"S"
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context.wrap_socket(raw)


def scram_login(sock, password: str = PASSWORD) -> bytes | None:
    """Startup and SCRAM-SHA-256 as a client, by hand; the ErrorResponse body if refused."""
    import base64
    import hashlib
    import hmac
    import os as _os
    import struct

    def send(type_: bytes, body: bytes) -> None:
        sock.sendall(type_ + struct.pack("!i", len(body) + 4) + body)

    body = struct.pack("!i", 196608) + b"user\0weir\0database\0lake\0\0"
    sock.sendall(struct.pack("!i", len(body) + 4) + body)
    reader = MessageReader(sock)
    assert reader.next()[0] == b"R"
    nonce = base64.b64encode(_os.urandom(18)).decode()
    first_bare = f"n=,r={nonce}"
    first = ("n,," + first_bare).encode()
    send(b"p", b"SCRAM-SHA-256\0" + struct.pack("!i", len(first)) + first)
    kind, payload = reader.next()
    server_first = payload[4:].decode()
    fields = dict(item.split("=", 1) for item in server_first.split(","))
    salted = hashlib.pbkdf2_hmac("sha256", password.encode(), base64.b64decode(fields["s"]),
                                 int(fields["i"]))
    client_key = hmac.new(salted, b"Client Key", hashlib.sha256).digest()
    stored = hashlib.sha256(client_key).digest()
    without_proof = f"c=biws,r={fields['r']}"
    auth = f"{first_bare},{server_first},{without_proof}".encode()
    signature = hmac.new(stored, auth, hashlib.sha256).digest()
    proof = bytes(a ^ b for a, b in zip(client_key, signature))
    send(b"p", f"{without_proof},p={base64.b64encode(proof).decode()}".encode())
    while True:
        kind, body = reader.next()
        if kind == b"Z":
            return None
        if kind == b"E":
            return body


class MessageReader:
    def __init__(self, sock):
        self.sock, self.buffer = sock, b""

    def next(self):
        import struct

        while True:
            if len(self.buffer) >= 5:
                length = struct.unpack("!i", self.buffer[1:5])[0]
                if len(self.buffer) >= 1 + length:
                    kind, body = self.buffer[:1], self.buffer[5:1 + length]
                    self.buffer = self.buffer[1 + length:]
                    return kind, body
            chunk = self.sock.recv(65536)
            assert chunk, "connection closed"
            self.buffer += chunk


def frame(type_: bytes, body: bytes) -> bytes:
    import struct

    return type_ + struct.pack("!i", len(body) + 4) + body


def test_raw_extended_protocol_frames(served_lake):
    import struct

    port, _, _ = served_lake
    sock = tls_socket(port)
    assert scram_login(sock) is None
    reader = MessageReader(sock)
    # Parse(bad) + Bind + Describe + Execute + Sync: exactly ErrorResponse, ReadyForQuery.
    sock.sendall(frame(b"P", b"\0SELEC nonsense\0\0\0") + frame(b"B", b"\0\0\0\0\0\0\0\0") +
                 frame(b"D", b"P\0") + frame(b"E", b"\0\0\0\0\0") + frame(b"S", b""))
    kinds = [reader.next()[0], reader.next()[0]]
    assert kinds == [b"E", b"Z"]
    # Execute with max rows 128 on a 1,000-row portal: 7 PortalSuspended, then SELECT 1000.
    sock.sendall(frame(b"P", b"\0SELECT id FROM events\0\0\0") +
                 frame(b"B", b"\0\0\0\0\0\0\0\0") + frame(b"H", b""))
    assert [reader.next()[0], reader.next()[0]] == [b"1", b"2"]
    suspended, rows = 0, 0
    while True:
        sock.sendall(frame(b"E", b"\0" + struct.pack("!i", 128)))
        sock.sendall(frame(b"H", b""))
        while True:
            kind, body = reader.next()
            if kind == b"D":
                rows += 1
                continue
            break
        if kind == b"s":
            suspended += 1
            continue
        assert kind == b"C" and body == b"SELECT 1000\0"
        break
    assert (suspended, rows) == (7, 1000)
    sock.sendall(frame(b"S", b""))
    assert reader.next()[0] == b"Z"
    # A Bind whose parameter length runs past the message: 08P01, and the session lives on.
    sock.sendall(frame(b"P", b"s1\0SELECT $1::INT\0\0\0") +
                 frame(b"B", b"\0s1\0\0\0\0\x01" + struct.pack("!i", 1000) + b"abc") +
                 frame(b"S", b""))
    assert reader.next()[0] == b"1"
    kind, body = reader.next()
    assert kind == b"E" and b"C08P01\0" in body, body
    assert reader.next()[0] == b"Z"
    # An unknown message type: an error, not a hang.
    sock.sendall(frame(b"?", b""))
    kind, body = reader.next()
    assert kind == b"E" and b"C08P01\0" in body
    assert reader.next()[0] == b"Z"
    sock.sendall(frame(b"Q", b"SELECT 1\0"))
    assert [reader.next()[0] for _ in range(4)] == [b"T", b"D", b"C", b"Z"]
    sock.close()


def test_sessions_are_sandboxed(served_lake):
    port, _, tmp_path = served_lake
    for sql in [f"COPY events TO '{tmp_path}/x.csv'",
                "SELECT * FROM read_csv('/etc/passwd')",
                f"SELECT * FROM read_text('{tmp_path}/tls/server.key')",
                f"ATTACH '{tmp_path}/other.db' AS other",
                "LOAD httpfs"]:
        run = psql(port, sql)
        assert run.returncode != 0, sql
        assert "42501" in run.stderr and "Permission Error" in run.stderr, (sql, run.stderr)
    for sql in ["SET enable_external_access = true", "SET allowed_directories = ['/']",
                "RESET lock_configuration", "SET GLOBAL threads = 1"]:
        locked = psql(port, sql)
        assert locked.returncode != 0 and "42501" in locked.stderr, (sql, locked.stderr)
        assert "permission denied to set parameter" in locked.stderr, locked.stderr
    assert not (tmp_path / "x.csv").exists()
    # The lake itself still reads and writes.
    assert psql(port, "INSERT INTO events (id, name, even) VALUES (-1, 'x', false)").returncode == 0
    assert psql(port, "SELECT count(*) FROM events").stdout.strip() == "1001"


def test_rows_committed_by_ingest_become_visible_to_psql(kafka, build_dir, tmp_path):
    """Ingest and serve on one lake: what weir ingest commits, psql sees within a flush."""
    from tests.e2e.weir_run import WeirIngest, create_topic, event_records, produce, unique

    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("live")
    create_topic(bootstrap, topic, 2)
    lake = Lake(tmp_path / "lake")
    ingest = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group")).start()
    try:
        produce(bootstrap, topic, event_records(0, 100))
        wait_for(lambda: lake.count("events") == 100, 60, "the first rows")
        port, serve = start_serve(build_dir, lake, tmp_path)
        try:
            assert psql(port, "SELECT count(*) FROM events").stdout.strip() == "100"
            # The open server sees the next commit (flush interval 1 s) without a restart.
            produce(bootstrap, topic, event_records(100, 50))
            wait_for(lambda: psql(port, "SELECT count(*) FROM events").stdout.strip() == "150",
                     30, "the new rows through psql")
            assert psql(port, "SELECT count(DISTINCT id) FROM events").stdout.strip() == "150"
        finally:
            serve.send_signal(signal.SIGTERM)
            assert serve.wait(timeout=30) == 0
    finally:
        assert ingest.stop() == 0, ingest.log()


def test_sigterm_lets_a_busy_statement_finish_and_ends_every_session_with_57p01(served_lake):
    import threading

    import psycopg

    port, process, _ = served_lake
    dsn = f"host=127.0.0.1 port={port} user=weir dbname=lake sslmode=require password='{PASSWORD}'"
    idle = psycopg.connect(dsn, autocommit=True)
    busy = psycopg.connect(dsn, autocommit=True)
    outcome = {}

    def run_busy():
        try:
            outcome["rows"] = busy.execute(
                "SELECT count(*) FROM range(300000000) t(i) WHERE i % 7 = 3").fetchone()
        except Exception as error:  # noqa: BLE001 - recorded for the assertion
            outcome["error"] = error

    thread = threading.Thread(target=run_busy)
    thread.start()
    time.sleep(1.0)  # the statement is running
    process.send_signal(signal.SIGTERM)
    thread.join(timeout=120)
    assert outcome.get("rows") == (42857143,), outcome  # the busy statement completed
    for conn in (idle, busy):
        try:
            conn.execute("SELECT 1")
            raise AssertionError("the session outlived the server")
        except psycopg.OperationalError as error:
            # The FATAL 57P01 arrives before the close (libpq reports it as the reason).
            assert error.sqlstate == "57P01" or "terminating connection" in str(error), error
    assert process.wait(timeout=60) == 0


def test_a_statement_sent_once_sigterm_has_arrived_gets_57p01_on_every_session(build_dir,
                                                                                tmp_path):
    """The SIGTERM handler raises the server's stop flag itself and every message is checked
    against it after it is read: none runs once the signal is in, however soon it is sent
    (before, the flag was raised up to 100 ms later and a read woken by the message itself did
    not look at it, so a session could still answer SELECT 1)."""
    import urllib.error
    import urllib.request

    import psycopg

    lake = duckdb_lake(tmp_path, "CREATE TABLE t AS SELECT 1 AS x")
    http_port = free_port()
    port, process = start_serve(build_dir, lake, tmp_path, "--http-port", str(http_port))
    dsn = f"host=127.0.0.1 port={port} user=weir dbname=lake sslmode=require password='{PASSWORD}'"

    def ready() -> bool:
        try:
            return urllib.request.urlopen(f"http://127.0.0.1:{http_port}/readyz",
                                          timeout=10).status == 200
        except urllib.error.HTTPError:
            return False

    try:
        sessions = [psycopg.connect(dsn, autocommit=True) for _ in range(8)]
        for conn in sessions:
            assert conn.execute("SELECT x FROM t").fetchone() == (1,)
        assert ready()
        process.send_signal(signal.SIGTERM)
        wait_for(lambda: not ready(), 10, "the signal to be in", poll_s=0.002)
        for conn in sessions:
            with pytest.raises(psycopg.OperationalError) as ended:
                conn.execute("SELECT 1")
            assert (ended.value.sqlstate == "57P01"
                    or "terminating connection due to administrator command" in str(ended.value)
                    ), ended.value
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_failed_logins_ban_the_address_and_connection_caps_answer_53300(build_dir, tmp_path):
    """A banned address (within the connection caps) is answered after TLS and its startup
    message, so psql shows the readable FATAL 28000 even with the right password. The caps
    answer before the first byte is read, so a client that asked for TLS sees only that its
    SSLRequest got an error (libpq since 15.10 does not show an answer that is not TLS); the
    FATAL itself is what a raw connection reads."""
    import psycopg

    from tests.e2e.test_serve_connection_limits import silent, unprompted_answer
    from tests.e2e.test_serve_connection_lifecycle import error_fields

    lake = duckdb_lake(tmp_path, "CREATE TABLE t AS SELECT 1 AS x")
    port, process = start_serve(build_dir, lake, tmp_path, "--max-failed-logins", "3",
                                "--ban-seconds", "3", "--max-connections", "2")
    try:
        for _ in range(3):
            wrong = psql(port, "SELECT 1", password="wrong")
            assert "password authentication failed" in wrong.stderr, wrong.stderr
        banned = psql(port, "SELECT 1")  # the right password, but from a banned address
        assert banned.returncode != 0, banned.stdout
        assert "FATAL:  too many failed logins from 127.0.0.1; retry in " \
            in banned.stderr, banned.stderr
        assert "SSL" not in banned.stderr, banned.stderr
        wait_for(lambda: psql(port, "SELECT 1").returncode == 0, 20, "the ban to expire")
        dsn = (f"host=127.0.0.1 port={port} user=weir dbname=lake sslmode=require "
               f"password='{PASSWORD}'")
        held = [psycopg.connect(dsn), psycopg.connect(dsn)]
        with pytest.raises(psycopg.OperationalError) as refused:
            psycopg.connect(dsn)
        assert "error response during SSL exchange" in str(refused.value), refused.value
        with silent(port) as sock:
            fields = error_fields(unprompted_answer(sock))
        assert (fields["C"], fields["M"]) == (
            "53300", "sorry, too many clients already (limit 2)"), fields
        held[0].close()
        wait_for(lambda: psql(port, "SELECT 1").returncode == 0, 10, "a free slot")
        held[1].close()
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
