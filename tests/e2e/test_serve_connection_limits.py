"""weir serve's limits on connections that have not logged in, and on clients that stop reading
(issue 10): caps and bans apply before the first byte is read, the whole login runs under one
deadline (serve.authentication_timeout), a client that takes none of its results is ended after
serve.send_timeout, and SIGTERM never waits on it past serve.shutdown_timeout."""

from __future__ import annotations

import signal
import socket
import time

from tests.e2e.test_serve import PASSWORD, duckdb_lake, start_serve
from tests.e2e.test_serve_connection_lifecycle import error_fields, startup_packet
from tests.e2e.test_serve_hostile_peers import logged_in
from tests.e2e.test_serve import frame
from tests.e2e.weir_run import wait_for

# A result far larger than every socket buffer between the server and a client that reads none.
HUGE_QUERY = "SELECT repeat('x', 1000) AS filler FROM range(10000000)"


def silent(port: int) -> socket.socket:
    """A connection that sends nothing at all."""
    return socket.create_connection(("127.0.0.1", port), timeout=10)


def unprompted_answer(sock: socket.socket) -> bytes:
    """What the server sends, without being sent a byte, before it closes."""
    answer = b""
    while chunk := sock.recv(65536):
        answer += chunk
    return answer


def stop(process) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)


def dsn(port: int) -> str:
    return (f"host=127.0.0.1 port={port} user=weir dbname=lake sslmode=require "
            f"password='{PASSWORD}' connect_timeout=10")


def slot_came_back(port: int) -> bool:
    """Whether a client can log in and query; False while the server still counts closed
    connections (their threads notice the close within a poll interval), any other error
    fails the test."""
    import psycopg

    try:
        with psycopg.connect(dsn(port)) as connection:
            assert connection.execute("SELECT x FROM t").fetchall() == [(1,)]
            return True
    except psycopg.OperationalError as error:
        # The refusal (53300) comes before TLS, which libpq reports as an error response
        # "during SSL exchange" without its text.
        if "too many c" not in str(error) and "during SSL exchange" not in str(error):
            raise
        return False


def test_connections_that_send_nothing_count_against_both_caps(build_dir, tmp_path):
    """Silent connections held a thread each and counted against no cap (admission came after
    the startup message), so any number of them could be opened."""
    lake = duckdb_lake(tmp_path, "CREATE TABLE t AS SELECT 1 AS x")
    port, process = start_serve(build_dir, lake, tmp_path, "--max-connections-per-ip", "3")
    try:
        held = [silent(port) for _ in range(3)]
        refused = silent(port)
        fields = error_fields(unprompted_answer(refused))
        assert (fields["S"], fields["C"], fields["M"]) == (
            "FATAL", "53300", "too many connections from 127.0.0.1 (limit 3)"), fields
        refused.close()
        for sock in held:
            sock.close()
        wait_for(lambda: slot_came_back(port), 10, "a free slot")
    finally:
        stop(process)
    port, process = start_serve(build_dir, lake, tmp_path, "--max-connections", "2")
    try:
        held = [silent(port) for _ in range(2)]
        refused = silent(port)
        fields = error_fields(unprompted_answer(refused))
        assert (fields["C"], fields["M"]) == (
            "53300", "sorry, too many clients already (limit 2)"), fields
        refused.close()
        for sock in held:
            sock.close()
        wait_for(lambda: slot_came_back(port), 10, "the slots to come back")
    finally:
        stop(process)


def test_the_whole_login_runs_under_one_authentication_deadline(build_dir, tmp_path):
    """Every read before authentication had a deadline of its own, so a peer that sent its
    startup packet one byte every half second was never dropped."""
    lake = duckdb_lake(tmp_path, "CREATE TABLE t AS SELECT 1 AS x")
    port, process = start_serve(build_dir, lake, tmp_path,
                                "--set", "serve.authentication_timeout=3s")
    try:
        packet = startup_packet({"user": "weir", "database": "lake",
                                 "application_name": "x" * 200})
        sock = silent(port)
        started = time.monotonic()
        closed_after = None
        for byte in packet:
            try:
                sock.sendall(bytes([byte]))
            except (BrokenPipeError, ConnectionResetError):
                closed_after = time.monotonic() - started
                break
            sock.settimeout(0.5)
            try:
                if sock.recv(1) == b"":
                    closed_after = time.monotonic() - started
                    break
            except socket.timeout:
                pass
            except ConnectionResetError:
                closed_after = time.monotonic() - started
                break
        assert closed_after is not None, "the trickling peer was never dropped"
        assert 2.5 < closed_after < 5, closed_after
        sock.close()
    finally:
        stop(process)


def test_a_client_that_reads_none_of_its_results_is_ended_after_the_send_timeout(build_dir,
                                                                                 tmp_path):
    """A write to a client that stopped reading blocked for ever, holding its thread."""
    import psycopg

    lake = duckdb_lake(tmp_path, "CREATE TABLE t AS SELECT 1 AS x")
    port, process = start_serve(build_dir, lake, tmp_path, "--set", "serve.send_timeout=2s")
    try:
        sock, _ = logged_in(port)
        sent = time.monotonic()
        sock.sendall(frame(b"Q", HUGE_QUERY.encode() + b"\0"))
        log = tmp_path / "serve.log"
        wait_for(lambda: b"(serve.send_timeout)" in log.read_bytes(), 30, "the send timeout")
        ended_after = time.monotonic() - sent
        assert 2 <= ended_after < 15, ended_after
        assert "ended the session of weir from 127.0.0.1: it read nothing of its results for " \
               "2000 ms (serve.send_timeout)" in log.read_text()
        sock.settimeout(10)
        while sock.recv(1 << 20):  # what the buffers held, then the end of the connection
            pass
        sock.close()
        with psycopg.connect(dsn(port)) as connection:  # the server serves on
            assert connection.execute("SELECT x FROM t").fetchall() == [(1,)]
        signalled = time.monotonic()
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
        assert time.monotonic() - signalled < 3
    finally:
        stop(process)


def test_sigterm_waits_for_a_client_that_reads_nothing_only_for_the_shutdown_timeout(build_dir,
                                                                                    tmp_path):
    """With no send timeout, a client that reads nothing held SIGTERM for ever: Stop joined the
    thread blocked in its write."""
    import psycopg

    lake = duckdb_lake(tmp_path, "CREATE TABLE t AS SELECT 1 AS x")
    port, process = start_serve(build_dir, lake, tmp_path, "--set", "serve.send_timeout=0",
                                "--shutdown-timeout", "2")
    try:
        stuck, _ = logged_in(port)
        stuck.sendall(frame(b"Q", HUGE_QUERY.encode() + b"\0"))
        time.sleep(3)  # long enough to fill every buffer
        with psycopg.connect(dsn(port)) as connection:  # meanwhile others are served
            assert connection.execute("SELECT x FROM t").fetchall() == [(1,)]
        signalled = time.monotonic()
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
        waited = time.monotonic() - signalled
        assert 1.5 < waited < 3.5, waited  # the 2 s grace, then the write is abandoned
        log = (tmp_path / "serve.log").read_text()
        assert "interrupting 1 statement(s) still running after the 2 s shutdown grace" in log
        stuck.close()
    finally:
        stop(process)
