#!/usr/bin/env python3
"""Writes the seed corpus of the fuzz targets (tests/fuzz/corpus/<target>/seed-*).

The seeds are what clients send: psql's and psycopg's startup, SCRAM and query messages, the
extended protocol as pgjdbc and psycopg use it, COPY in its three formats. Each target's input
layout is described at the top of its .cc file. Run it again after changing a seed below; the
files are committed, and crash reproducers found later are added next to them (regress-*).
"""
import hashlib
import pathlib
import struct

ROOT = pathlib.Path(__file__).resolve().parent / "corpus"


def i16(v):
    return struct.pack(">h", v)


def i32(v):
    return struct.pack(">i", v)


def cstr(s):
    return (s.encode() if isinstance(s, str) else s) + b"\0"


def msg(kind, body):
    """A typed frontend message on the wire."""
    return kind.encode() + i32(len(body) + 4) + body


def startup_packet(body):
    return i32(len(body) + 4) + body


def startup(**params):
    body = i32(196608)
    for k, v in params.items():
        body += cstr(k) + cstr(v)
    return startup_packet(body + b"\0")


SSL_REQUEST = startup_packet(i32(80877103))
GSS_REQUEST = startup_packet(i32(80877104))
CANCEL = startup_packet(i32(80877102) + i32(4242) + i32(-559038737))

CLIENT_FIRST = b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
CLIENT_FINAL = (b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")


def sasl_initial(data, mechanism="SCRAM-SHA-256"):
    return msg("p", cstr(mechanism) + (i32(-1) if data is None else i32(len(data)) + data))


def query(sql):
    return msg("Q", cstr(sql))


def parse(sql, name="", types=()):
    return msg("P", cstr(name) + cstr(sql) + i16(len(types)) + b"".join(i32(t) for t in types))


def bind(params=(), portal="", statement="", formats=(), results=()):
    body = cstr(portal) + cstr(statement) + i16(len(formats)) + b"".join(i16(f) for f in formats)
    body += i16(len(params))
    for p in params:
        body += i32(-1) if p is None else i32(len(p)) + p
    return msg("B", body + i16(len(results)) + b"".join(i16(f) for f in results))


def describe(kind, name=""):
    return msg("D", kind.encode() + cstr(name))


def execute(portal="", max_rows=0):
    return msg("E", cstr(portal) + i32(max_rows))


def close(kind, name=""):
    return msg("C", kind.encode() + cstr(name))


SYNC = msg("S", b"")
FLUSH = msg("H", b"")
TERMINATE = msg("X", b"")
COPY_DONE = msg("c", b"")


def copy_data(data):
    return msg("d", data)


def copy_fail(reason):
    return msg("f", cstr(reason))


def binary_copy(rows, extension=b""):
    out = b"PGCOPY\n\xff\r\n\0" + i32(0) + i32(len(extension)) + extension
    for row in rows:
        out += i16(len(row))
        for f in row:
            out += i32(-1) if f is None else i32(len(f)) + f
    return out + i16(-1)


# --- the extended protocol as drivers use it --------------------------------------------------
PSYCOPG_SELECT = (parse("SELECT id, name FROM t WHERE id > $1", types=(20,)) +
                  bind([b"1"]) + describe("P") + execute() + SYNC)
PGJDBC_SELECT = (parse("SELECT * FROM t WHERE name = $1", "S_1", (1043,)) +
                 bind([b"one"], statement="S_1", results=(1,)) + describe("P") + execute() +
                 SYNC + close("S", "S_1") + SYNC)
PORTAL_ROWS = (query("BEGIN") + parse("SELECT * FROM t") + bind(portal="c1") +
               execute("c1", 2) + execute("c1", 2) + execute("c1", 0) + SYNC + query("COMMIT"))
BINARY_PARAMS = (parse("SELECT $1::int4 + 1, $2::text, $3::bool, $4::float8", "s2") +
                 describe("S", "s2") +
                 bind([i32(41), b"x", b"\x01", struct.pack(">d", 2.5)], statement="s2",
                      formats=(1,), results=(1, 0, 1, 1)) + execute() + SYNC)
INSERT_PARAMS = (parse("INSERT INTO u VALUES ($1, $2)", "ins") +
                 bind([b"10", b"ten"], statement="ins") + execute() +
                 bind([None, None], statement="ins") + execute() + SYNC)
ERROR_IN_BATCH = (parse("SELECT 1/0") + bind() + execute() + parse("SELECT 1") + bind() +
                  execute() + SYNC + query("SELECT 2"))

SESSION_QUERIES = [
    "SELECT * FROM t ORDER BY id",
    "SELECT id, name, amount, ok, day, ts, data, score, tags FROM t; SELECT * FROM u",
    "SELECT count(*), sum(amount), max(day) FROM t",
    "",
    ";;",
    "BEGIN; INSERT INTO u VALUES (9, 'nine'); SELECT * FROM u; ROLLBACK",
    "BEGIN; SELECT 1/0; SELECT 1; ROLLBACK",
    "COMMIT",
    "ROLLBACK; BEGIN; BEGIN; COMMIT",
    "INSERT INTO u VALUES (5, 'five')",
    "UPDATE u SET v = 'B' WHERE k = 2",
    "DELETE FROM u WHERE k = 5",
    "CREATE TABLE w (a INTEGER); DROP TABLE w",
    "COPY t TO STDOUT",
    "COPY t TO STDOUT WITH (FORMAT csv, HEADER)",
    "COPY (SELECT * FROM u) TO STDOUT WITH (FORMAT binary)",
    "COPY u TO STDOUT WITH CSV DELIMITER '|' NULL 'NULL'",
    "DECLARE c CURSOR FOR SELECT * FROM t; FETCH 2 FROM c; FETCH ALL c; CLOSE c",
    "BEGIN; DECLARE c NO SCROLL CURSOR WITH HOLD FOR SELECT * FROM u; COMMIT; FETCH c; "
    "MOVE 1 IN c; CLOSE ALL",
    "FETCH BACKWARD 1 FROM nothing",
    "SET statement_timeout = '1s'; SHOW statement_timeout; RESET statement_timeout",
    "SET idle_session_timeout = 0; SHOW idle_session_timeout",
    "SET application_name = 'psql'; SHOW application_name",
    "SET search_path TO public; SHOW search_path",
    "PREPARE p AS SELECT * FROM u WHERE k = $1; EXECUTE p(1); DEALLOCATE p",
    "DEALLOCATE ALL",
    "SELECT n.nspname, c.relname FROM pg_catalog.pg_class c LEFT JOIN pg_catalog.pg_namespace n "
    "ON n.oid = c.relnamespace WHERE c.relkind IN ('r','p','v') AND "
    "pg_catalog.pg_table_is_visible(c.oid) ORDER BY 1, 2",
    "SELECT c.oid, n.nspname, c.relname FROM pg_catalog.pg_class c LEFT JOIN "
    "pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE c.relname "
    "OPERATOR(pg_catalog.~) '^(t)$' COLLATE pg_catalog.default",
    "SELECT 't'::regclass::oid, current_setting('server_version'), version()",
    "SELECT table_name, column_name, data_type FROM information_schema.columns "
    "WHERE table_schema = 'public'",
    "SELECT typname, oid FROM pg_type WHERE oid IN (16, 20, 25, 1700)",
    "SELECT 1::numeric(20, 5), 'a'::bytea, interval '1 day', 1e400, 'NaN'::float",
    "SELECT * FROM range(100000)",
    "SELECT repeat('x', 100000)",
    "SELECT $$dollar$$, E'esc\\n', U&'\\0041', /* comment */ 1 -- line",
    "EXPLAIN SELECT * FROM t",
    "CALL ducklake_merge_adjacent_files('lake')",
    "SELECT * FROM read_csv('/etc/passwd')",
    "ATTACH ':memory:' AS other",
    "SET memory_limit = '10GB'",
    "SELECT pg_sleep(0.01)",
    "LISTEN x; NOTIFY x",
    "SELEC 1",
]


def session_messages(*messages):
    """fuzz_session's structured layout: type, 16-bit length, body."""
    out = b""
    for m in messages:
        kind, body = m[0:1], m[5:]
        out += kind + struct.pack(">H", len(body)) + body
    return out


def seeds():
    s = {}
    # pgwire: byte 0 = (piece size - 1) << 1 | startup-first
    connect = SSL_REQUEST + startup(user="alice", database="lake", application_name="psql")
    s["pgwire"] = [
        b"\x01" + connect + sasl_initial(CLIENT_FIRST) + msg("p", CLIENT_FINAL),
        b"\x0f" + GSS_REQUEST + startup(user="bob", client_encoding="UTF8") + TERMINATE,
        b"\xff" + CANCEL,
        b"\x01" + startup_packet(i32(131072)),
        b"\x01" + startup_packet(i32(196608) + cstr("user")),
        b"\x00" + query("SELECT 1") + TERMINATE,
        b"\x10" + PSYCOPG_SELECT,
        b"\x22" + PGJDBC_SELECT,
        b"\x06" + BINARY_PARAMS,
        b"\x40" + PORTAL_ROWS,
        b"\x00" + query("COPY u FROM STDIN") + copy_data(b"1\ta\n") + COPY_DONE +
        copy_fail("stop"),
        b"\x00" + msg("Q", b"no terminator"),
        b"\x00" + b"Q\x00\x00\x00\x03",
        b"\x00" + b"Q\x7f\xff\xff\xff",
        b"\x00" + bind([b"a"], formats=(0, 1)),
        b"\x00" + describe("X") + close("P", "p") + execute("p", -1),
    ]
    # scram: byte 0 = unknown user | verifier text << 1
    fin = msg("p", CLIENT_FINAL)
    s["scram"] = [
        b"\x00" + sasl_initial(CLIENT_FIRST) + fin,
        b"\x01" + sasl_initial(CLIENT_FIRST) + fin,
        b"\x00" + sasl_initial(CLIENT_FIRST) + fin + fin + sasl_initial(CLIENT_FIRST),
        b"\x00" + sasl_initial(b"y,,n=,r=rOprNGfwEbeRWgbNEkqO") + fin,
        b"\x00" + sasl_initial(b"p=tls-server-end-point,,n=,r=abc") + fin,
        b"\x00" + sasl_initial(b"n,a=admin,n=,r=abc") + fin,
        b"\x00" + sasl_initial(b"n,,m=ext,n=,r=abc") + fin,
        b"\x00" + sasl_initial(b"n,,n=us=2Cer=3D,r=abc,x=ext") + fin,
        b"\x00" + sasl_initial(CLIENT_FIRST) + msg("p", CLIENT_FINAL[:-4] + b"AAA="),
        b"\x00" + sasl_initial(CLIENT_FIRST) +
        msg("p", b"c=biws,r=rOprNGfwEbeRWgbNEkqO,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="),
        b"\x00" + sasl_initial(CLIENT_FIRST, "SCRAM-SHA-256-PLUS") + fin,
        b"\x00" + sasl_initial(None),
        b"\x02" + b"SCRAM-SHA-256$4096:W22ZaJ0SNY7soEsUEjb6gQ==$"
        b"WG5d8oPm3OtcPnkdi4Uo7BkeZkBFzpcXkuLmtbsT4qY=:wfPLwcE6nTWhTAmQ7tl2KeoiWGPlZqQxSrmfPwDl2dU=",
        b"\x02" + b"SCRAM-SHA-256$1:AA==$AAAA:AAAA",
        b"\x02" + b"md5c4ca4238a0b923820dcc509a6f75849b",
    ]
    # copy: byte 0 = preset (0-2 text, 3-6 CSV, 7 binary), byte 1 = piece size - 1, byte 2 bit 0
    # = a 256-byte row limit
    s["copy"] = [
        b"\x00\x03\x00" + b"1\tone\n2\t\\N\n3\tesc\\t\\n\\\\\\x41\\101\n\\.\n",
        b"\x00\x00\x00" + b"a\tb\r\nc\td",
        b"\x01\x07\x00" + b"1,NULL\n2,x\\,y\n",
        b"\x02\x01\x00" + b"1||x\n|\n",
        b"\x03\x05\x00" + b'1,"quoted, with comma"\n2,"with ""doubled"" quote"\n3,\n4,""\n',
        b"\x04\x02\x00" + b'id,name\n1,"multi\nline"\n',
        b"\x05\x03\x00" + b"1;'it\\'s';NULL\n2;'back\\\\slash';\n",
        b"\x06\x09\x00" + b'h1\th2\n"a\\"b"\t\\N\n',
        b"\x03\x00\x00" + b'1,"unterminated\n',
        b"\x07\x04\x00" + binary_copy([[i32(1), b"one"], [None, b""]]),
        b"\x07\x0b\x00" + binary_copy([[struct.pack(">q", 7)]], extension=b"ext!"),
        b"\x07\x00\x01" + binary_copy([[b"x" * 300]]),
        b"\x07\x00\x00" + b"PGCOPY\n\xff\r\n\0" + i32(0) + i32(16) + b"short",
        b"\x07\x00\x00" + binary_copy([]) + b"after the trailer",
        b"\x07\x00\x00" + b"PGCOPY\n\xff\r\n\0" + i32(0) + i32(0) + i16(-2),
    ]
    # session: byte 0 = read user | raw << 1 | idle at end << 2
    session = []
    for i, sql in enumerate(SESSION_QUERIES):
        flags = b"\x01" if i % 5 == 4 else b"\x00"
        session.append(flags + session_messages(query(sql), TERMINATE))
    for extended in (PSYCOPG_SELECT, PGJDBC_SELECT, PORTAL_ROWS, BINARY_PARAMS, INSERT_PARAMS,
                     ERROR_IN_BATCH):
        frames = []
        rest = extended
        while rest:
            length = struct.unpack(">i", rest[1:5])[0]
            frames.append(rest[:1 + length])
            rest = rest[1 + length:]
        session.append(b"\x00" + session_messages(*frames))
    session += [
        b"\x00" + session_messages(query("COPY u FROM STDIN"), copy_data(b"20\tx\n21\t"),
                                   copy_data(b"\\N\n"), COPY_DONE, query("SELECT * FROM u")),
        b"\x00" + session_messages(query("COPY u (v, k) FROM STDIN WITH (FORMAT csv, HEADER)"),
                                   copy_data(b'v,k\n"a,b",22\n'), COPY_DONE),
        b"\x00" + session_messages(query("COPY u FROM STDIN WITH (FORMAT binary)"),
                                   copy_data(binary_copy([[i32(23), b"bin"], [None, None]])),
                                   COPY_DONE),
        b"\x00" + session_messages(query("COPY u FROM STDIN"), copy_data(b"1\n"),
                                   copy_fail("client gave up"), query("SELECT 1")),
        b"\x00" + session_messages(query("BEGIN"), query("COPY u FROM STDIN"),
                                   copy_data(b"x\ty\n"), COPY_DONE, query("COMMIT")),
        b"\x01" + session_messages(query("COPY u FROM STDIN"), copy_data(b"1\ta\n"), COPY_DONE),
        b"\x01" + session_messages(*[parse("DELETE FROM t"), bind(), execute(), SYNC]),
        b"\x04" + session_messages(query("SELECT 1")),
        b"\x02" + query("SELECT * FROM u") + PSYCOPG_SELECT + TERMINATE,
        # Counts the protocol carries in 16 bits: parameters, result columns.
        b"\x00" + session_messages(parse("SELECT $40000"), describe("S"), SYNC),
        b"\x00" + session_messages(query("SELECT * FROM (PIVOT (SELECT i FROM range(33000) r(i)) "
                                         "ON i USING count(*))")),
        b"\x00" + session_messages(query("PIVOT (SELECT chr(0) || 'x' AS k) ON k USING count(*)")),
        b"\x00" + session_messages(parse("SELECT $1::int"), bind([b"1\x002"]), execute(), SYNC),
        b"\x00" + session_messages(parse("SELECT * FROM u", "a"), bind(portal="p", statement="a"),
                                   FLUSH, describe("P", "p"), execute("p", 1), close("P", "p"),
                                   close("S", "a"), execute("p"), SYNC),
    ]
    s["session"] = session
    return s


def main():
    for target, inputs in seeds().items():
        directory = ROOT / target
        directory.mkdir(parents=True, exist_ok=True)
        for old in directory.glob("seed-*"):
            old.unlink()
        for data in inputs:
            name = "seed-" + hashlib.sha1(data).hexdigest()[:16]
            (directory / name).write_bytes(data)
        print(f"{target}: {len(inputs)} seeds in {directory}")


if __name__ == "__main__":
    main()
