"""The file source (issue 17): `weir ingest --from FILE...` lands newline-delimited JSON files
(plain, gzip, zstd — told by magic bytes — and standard input) through the same pipeline, tables
and rejects as Kafka records, exactly once. Each file is its own ledger topic
`file:<sha256 of its bytes>` with uncompressed byte offsets, so a run SIGKILLed in the middle and
run again lands every line once, and a run of files already landed adds nothing."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import pty
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest
import zstandard

from tests.e2e.test_ingest_iceberg import IcebergLake
from tests.e2e.weir_run import Lake, wait_for

TOTAL = 1_000_000
# The bad lines of the file that has them: (text, the reason the rejects table gives).
BAD_LINES = [
    ('{"id": 1000000000, "v": ', "invalid_json"),
    ("[1, 2, 3]", "not_an_object"),
    ('{"id": "\xff\xfe"}', "invalid_utf8"),
]


def line(i: int) -> str:
    return json.dumps({"id": i, "v": i * 2, "name": f"user-{i}"})


def write_files(directory: Path, total: int) -> tuple[list[Path], Path, list[tuple[str, int, str]]]:
    """Four quarters of `total` events: plain with bad lines, gzip, zstd, and one for stdin.
    Returns (the files to pass, the stdin file, [(file, byte offset, reason)] of the bad
    lines)."""
    directory.mkdir(parents=True, exist_ok=True)
    quarter = total // 4
    bounds = [(k * quarter, total if k == 3 else (k + 1) * quarter) for k in range(4)]

    def text(lo: int, hi: int) -> str:
        return "".join(line(i) + "\n" for i in range(lo, hi))

    plain = directory / "part-0.jsonl"
    bad: list[tuple[str, int, str]] = []
    with open(plain, "wb") as f:
        lo, hi = bounds[0]
        middle = (lo + hi) // 2
        f.write(text(lo, middle).encode())
        for bad_text, reason in BAD_LINES:
            bad.append((str(plain), f.tell(), reason))
            f.write(bad_text.encode("latin-1") + b"\n")
        f.write(b"\n\n")  # empty lines carry no record
        f.write(text(middle, hi).encode())
    gz = directory / "part-1.data"  # no telling suffix: the magic bytes decide
    gz.write_bytes(gzip.compress(text(*bounds[1]).encode()))
    zst = directory / "part-2.jsonl.zst"
    zst.write_bytes(zstandard.ZstdCompressor().compress(text(*bounds[2]).encode()))
    stdin = directory / "part-3.jsonl"
    stdin.write_text(text(*bounds[3]))
    return [plain, gz, zst], stdin, bad


def ingest(build_dir: Path, env: dict, cwd: Path, files: list[Path], stdin: Path | None,
           log: Path, extra: tuple[str, ...] = ()) -> subprocess.Popen:
    args = [str(build_dir / "weir"), "ingest", "--from", *map(str, files)]
    if stdin is not None:
        args.append("-")
    with open(log, "ab") as out:
        return subprocess.Popen(
            args + list(extra), env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
            stdin=open(stdin, "rb") if stdin is not None else subprocess.DEVNULL)


def ducklake_env(lake: Lake) -> dict:
    env = dict(os.environ)
    env.update(lake.env())
    env.update({"WEIR_TOPIC": "backfill", "WEIR_TABLE": "events", "WEIR_LOG_LEVEL": "info",
                "WEIR_FLUSH_MAX_BYTES": "4MiB", "WEIR_FLUSH_INTERVAL": "60s"})
    return env


def kill_midway(process: subprocess.Popen, committed, total: int, log: Path,
                at_least: int = 1) -> int:
    """SIGKILLs `process` once `at_least` but not all rows are committed; returns the rows
    then."""
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        assert process.poll() is None, "finished before it could be killed:\n" + log.read_text()
        rows = committed()
        if rows >= at_least:
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=30)
            assert rows < total, "everything was committed before the kill"
            return rows
        time.sleep(0.2)
    raise AssertionError("no commit within 600 s:\n" + log.read_text())


def finish(process: subprocess.Popen, log: Path) -> None:
    code = process.wait(timeout=900)
    assert code == 0, log.read_text()[-6000:]


def assert_ducklake_exact(lake: Lake, total: int, bad: list[tuple[str, int, str]]) -> None:
    con = lake.connect()
    try:
        rows, distinct, ids, values = con.execute(
            "SELECT count(*), count(DISTINCT id), sum(id), sum(v) FROM lake.events").fetchone()
        assert (rows, distinct) == (total, total), "rows lost or doubled"
        assert ids == total * (total - 1) // 2
        assert values == total * (total - 1)
        rejects = con.execute(
            'SELECT key, "offset", reason, "partition", topic FROM lake.events_rejects '
            'ORDER BY "offset"').fetchall()
    finally:
        con.close()
    sha = hashlib.sha256(Path(bad[0][0]).read_bytes()).hexdigest()
    assert rejects == [(path, offset, reason, 0, f"file:{sha}") for path, offset, reason in bad]


def test_four_files_killed_midway_and_run_again_land_every_line_once(build_dir, tmp_path):
    files, stdin, bad = write_files(tmp_path / "in", TOTAL)
    lake = Lake(tmp_path / "lake")
    lake.root.mkdir(parents=True)
    env = ducklake_env(lake)
    log = lake.root / "weir.log"
    first = ingest(build_dir, env, lake.root, files, stdin, log)
    kill_midway(first, lambda: lake.count("events"), TOTAL, log)
    # Killed again once the gzip file (events 250,000 to 500,000) is being read.
    second = ingest(build_dir, env, lake.root, files, stdin, log)
    kill_midway(second, lambda: lake.count("events"), TOTAL, log, at_least=300_000)

    third = ingest(build_dir, env, lake.root, files, stdin, log)
    finish(third, log)
    text = log.read_text()
    assert "resuming after uncompressed byte" in text, text[-4000:]
    assert "(decompressing from the start)" in text, text[-4000:]
    assert "every file read to its end and committed" in text
    assert_ducklake_exact(lake, TOTAL, bad)

    # Everything is in the ledger: another run (stdin piped again) lands nothing more.
    snapshots = lake.scalar("SELECT count(*) FROM lake.snapshots()")
    finish(ingest(build_dir, env, lake.root, files, stdin, log), log)
    assert_ducklake_exact(lake, TOTAL, bad)
    assert lake.scalar("SELECT count(*) FROM lake.snapshots()") == snapshots


def test_iceberg_file_source_killed_midway_lands_rows_and_rejects_once(build_dir, tmp_path):
    total = 200_000
    files, stdin, bad = write_files(tmp_path / "in", total)
    lake = IcebergLake(tmp_path / "lake")
    lake.root.mkdir(parents=True)
    env = dict(os.environ)
    env.update(lake.env())
    env.update({"WEIR_TOPIC": "backfill", "WEIR_TABLE": "events", "WEIR_LOG_LEVEL": "info",
                "WEIR_FLUSH_MAX_BYTES": "2MiB", "WEIR_FLUSH_INTERVAL": "60s"})
    log = lake.root / "weir.log"
    first = ingest(build_dir, env, lake.root, files, stdin, log)
    kill_midway(first, lambda: lake.count("events"), total, log)
    finish(ingest(build_dir, env, lake.root, files, stdin, log), log)

    ids = lake.table("events").scan(selected_fields=("id",)).to_arrow().column("id").to_pylist()
    assert (len(ids), len(set(ids))) == (total, total), "rows lost or doubled"
    assert set(ids) == set(range(total))
    rejects = lake.table("events_rejects").scan().to_arrow()
    got = sorted(zip(rejects.column("key").to_pylist(), rejects.column("offset").to_pylist(),
                     rejects.column("reason").to_pylist()))
    assert got == sorted(bad)


def test_a_missing_file_fails_naming_it_and_lands_nothing(build_dir, tmp_path):
    files, _, _ = write_files(tmp_path / "in", 1000)
    lake = Lake(tmp_path / "lake")
    lake.root.mkdir(parents=True)
    missing = tmp_path / "in" / "absent.jsonl"
    result = subprocess.run(
        [str(build_dir / "weir"), "ingest", "--from", str(files[0]), str(missing)],
        env=ducklake_env(lake), cwd=lake.root, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1, result.stderr
    assert f"--from {missing}: No such file or directory" in result.stderr + result.stdout
    assert lake.count("events") == 0


def test_progress_line_on_a_terminal(build_dir, tmp_path):
    files, _, _ = write_files(tmp_path / "in", 20_000)
    lake = Lake(tmp_path / "lake")
    lake.root.mkdir(parents=True)
    env = ducklake_env(lake)
    env["WEIR_LOG_LEVEL"] = "warn"
    pid, fd = pty.fork()
    if pid == 0:  # the child: weir with its stderr on the terminal
        os.chdir(lake.root)
        os.execve(str(build_dir / "weir"), ["weir", "ingest", "--from", *map(str, files)], env)
    output = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the terminal closed: weir exited
            break
        if not chunk:
            break
        output += chunk
    _, status = os.waitpid(pid, 0)
    text = output.decode(errors="replace")
    assert os.waitstatus_to_exitcode(status) == 0, text
    # The last progress line: every byte read, every event counted.
    final = text.rstrip().split("\r")[-1]
    match = re.search(r"\x1b\[K(\S+ \S+) / (\S+ \S+) read, (\d+) events, (\d+) events/s", final)
    assert match, repr(final)
    assert match.group(1) == match.group(2), repr(final)
    assert int(match.group(3)) == 15_000 + len(BAD_LINES)  # records, the bad lines too
    assert lake.count("events") == 15_000


def test_sigterm_drains_a_backfill_and_the_same_command_continues_it(build_dir, tmp_path):
    total = 400_000  # the signal comes at the first commit (~110,000 rows), long before the end
    files, stdin, bad = write_files(tmp_path / "in", total)
    lake = Lake(tmp_path / "lake")
    lake.root.mkdir(parents=True)
    env = ducklake_env(lake)
    log = lake.root / "weir.log"
    first = ingest(build_dir, env, lake.root, files, stdin, log)
    wait_for(lambda: lake.count("events") > 0 or first.poll() is not None, 600, "a commit")
    first.send_signal(signal.SIGTERM)
    assert first.wait(timeout=300) == 0, log.read_text()[-6000:]
    drained = lake.count("events")
    assert 0 < drained < total, "the backfill ended before the signal"
    assert "stopped by a signal: what was read is committed" in log.read_text()
    finish(ingest(build_dir, env, lake.root, files, stdin, log), log)
    assert_ducklake_exact(lake, total, bad)
