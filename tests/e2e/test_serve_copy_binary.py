"""Binary COPY FROM STDIN against declarations that cannot be right (issue 10): a negative field
count other than -1 is 22P04 naming the row (it read as a row of no fields), and a length over
the session's memory limit is refused when it is read, not after buffering up to it."""

from __future__ import annotations

import signal
import struct

import pytest

from tests.e2e.test_serve import PASSWORD, duckdb_lake, start_serve

HEADER = b"PGCOPY\n\xff\r\n\0" + struct.pack("!ii", 0, 0)


def row(*values: int) -> bytes:
    out = struct.pack("!h", len(values))
    for value in values:
        out += struct.pack("!ii", 4, value)
    return out


@pytest.fixture
def served(build_dir, tmp_path):
    lake = duckdb_lake(tmp_path, "CREATE TABLE t (x INTEGER)")
    port, process = start_serve(build_dir, lake, tmp_path, "--session-memory-mb", "1")
    yield port
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == 0


def copy_error(port: int, data: bytes):
    """The error of a binary COPY of `data`, and the table's rows after it."""
    import psycopg

    with psycopg.connect(f"host=127.0.0.1 port={port} user=weir dbname=lake sslmode=require "
                         f"password='{PASSWORD}'", autocommit=True) as connection:
        with pytest.raises(psycopg.Error) as failed:
            with connection.cursor().copy("COPY t FROM STDIN (FORMAT binary)") as copy:
                copy.write(data)
        rows = connection.execute("SELECT count(*) FROM t").fetchone()[0]
    return failed.value, rows


def test_a_negative_field_count_is_22p04_naming_the_row(served):
    error, rows = copy_error(served, HEADER + row(1) + row(2) + struct.pack("!h", -2) + row(4))
    assert error.sqlstate == "22P04", error
    assert error.diag.message_primary == (
        "COPY, line 3: row field count is -2 (only -1, the end of the data, may be negative)")
    assert rows == 0  # the COPY landed nothing


def test_a_declared_length_over_the_session_memory_limit_is_refused_at_once(served):
    # 2 GiB - 1 declared, none of it sent: the server used to wait for it.
    error, rows = copy_error(served, HEADER + row(1) + struct.pack("!hi", 1, 0x7FFFFFFF))
    assert error.sqlstate == "54000", error
    assert error.diag.message_primary == (
        "COPY, line 2: field 1 declares 2147483647 bytes, over the session's memory limit of "
        "1048576 bytes")
    assert rows == 0
