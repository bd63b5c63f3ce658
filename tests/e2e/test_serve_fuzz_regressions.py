"""Bugs of weir serve found by the fuzz targets (tests/fuzz, issue 10 proof 2), replayed against
a real server: each made a backend message a client misreads (a NUL inside an ErrorResponse
field, a 16-bit count that wrapped). Every answer here is parsed field by field, and the
session must go on afterwards."""

from __future__ import annotations

import struct

import psycopg
import pytest

from tests.e2e.test_serve_hostile_peers import logged_in
from tests.e2e.test_serve_sessions import dsn, served  # noqa: F401 (the fixture)
from tests.e2e.test_serve import frame


def error_fields(body: bytes) -> dict[str, str]:
    """An ErrorResponse's fields, checking its layout: code byte, NUL-terminated text, ..., NUL."""
    fields, at = {}, 0
    while body[at:at + 1] != b"\0":
        code = body[at:at + 1].decode()
        end = body.index(b"\0", at + 1)
        assert code in "SVCMDHP", (code, body)
        fields[code] = body[at + 1:end].decode("utf-8")
        at = end + 1
    assert at == len(body) - 1, body
    return fields


def answer(reader) -> list[tuple[bytes, bytes]]:
    messages = []
    while True:
        kind, body = reader.next()
        messages.append((kind, body))
        if kind == b"Z":
            return messages


@pytest.mark.parametrize("message_type", [b"\0", b"\xff"])
def test_an_unknown_message_type_gets_a_well_formed_error_and_the_session_goes_on(
        served, message_type):  # noqa: F811
    """Type 0 put a NUL inside the error's M field; 0xff made it not UTF-8."""
    port, _, _, _ = served
    sock, reader = logged_in(port)
    sock.sendall(message_type + struct.pack("!i", 5) + b"\0")
    (kind, body), ready = answer(reader)
    assert kind == b"E" and ready == (b"Z", b"I")
    fields = error_fields(body)
    assert fields["C"] == "08P01"
    assert fields["M"] == "unknown message type '\ufffd'"
    sock.sendall(frame(b"Q", b"SELECT count(*) FROM events\0"))
    messages = answer(reader)
    assert [kind for kind, _ in messages] == [b"T", b"D", b"C", b"Z"]
    assert messages[1][1] == struct.pack("!hi", 1, 4) + b"1000"
    sock.close()


def test_a_statement_over_65535_parameters_is_refused_before_its_description(served):  # noqa: F811
    port, _, _, _ = served
    sock, reader = logged_in(port)
    sql = "SELECT " + ", ".join(f"${i}" for i in range(1, 66001))
    sock.sendall(frame(b"P", b"\0" + sql.encode() + b"\0\0\0") + frame(b"D", b"S\0") +
                 frame(b"S", b""))
    (kind, body), ready = answer(reader)
    assert kind == b"E" and ready == (b"Z", b"I")
    assert error_fields(body)["C"] == "54023"
    assert error_fields(body)["M"] == ("a statement can have at most 65535 parameters; this one "
                                       "has 66000")
    sock.close()


@pytest.mark.parametrize("binary", [False, True])
def test_a_result_over_32767_columns_is_refused_and_the_session_goes_on(served, binary):  # noqa: F811
    port, _, _, _ = served
    wide = "SELECT " + ", ".join(f"{i} AS c{i}" for i in range(33000))
    with psycopg.connect(dsn(port), autocommit=True) as conn:
        with pytest.raises(psycopg.errors.TooManyColumns) as refused:
            conn.execute(wide, binary=binary)
        assert refused.value.sqlstate == "54011"
        assert str(refused.value) == "a result can have at most 32767 columns; this one has 33000"
        if binary:
            return  # the rest does not depend on the format
        narrow = "SELECT " + ", ".join(f"{i} AS c{i}" for i in range(32767))
        row = conn.execute(narrow).fetchone()
        assert len(row) == 32767 and row[0] == 0 and row[32766] == 32766
        conn.execute("BEGIN")
        with pytest.raises(psycopg.errors.TooManyColumns):
            conn.execute(wide)
        # The error ended the block, as any other: it stays failed until ROLLBACK.
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.INERROR
        with pytest.raises(psycopg.Error):
            conn.execute("SELECT 1")
        conn.execute("ROLLBACK")
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        assert conn.execute("SELECT count(*) FROM events").fetchone() == (1000,)
