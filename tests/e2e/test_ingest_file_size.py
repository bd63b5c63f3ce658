"""Issue 12: flush.target_file_size rotates data files independently of flush.max_bytes.

A 1,000,000-event topic of the benchmark's reference events (~1.36 KB of JSON each, filled by
bench_fill_topic) is ingested with flush.max_bytes 1 GiB and flush.target_file_size 32 MiB:
every data file but the last of each flush and encode lane is 32 MiB ± 10 %, every event lands
once, and the process's peak RSS stays under memory_budget (512 MiB): the 1 GiB flush streams
through the open files in parts of flush.part_bytes instead of being held whole (it was ~1.8
GiB before).
A bound, not a timing: what the figure is, is the benchmarks' business."""

from __future__ import annotations

import signal
import subprocess
import time
from collections import defaultdict

from tests.e2e.weir_run import Lake, WeirIngest, unique, wait_for

EVENTS = 1_000_000
PARTITIONS = 8
TARGET = 32 << 20
BUDGET_MIB = 512
LANES = 2  # flush.encode_lanes' default


def vm_hwm_mib(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass  # it just ended
    return 0.0


def test_files_are_the_target_size_whatever_the_flush_size(kafka, build_dir, tmp_path,
                                                          record_property):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique("file_size")
    fill = build_dir / "bench" / "bench_fill_topic"
    assert fill.exists(), f"{fill} is not built"
    subprocess.run([str(fill), "--bootstrap", bootstrap, "--topic", topic, "--partitions",
                    str(PARTITIONS), "--events", str(EVENTS), "--seed", "42"], check=True,
                   capture_output=True)

    lake = Lake(tmp_path / "lake")
    # flush.interval is out of reach: the flushes are the 1 GiB ones, and the SIGTERM drain
    # commits the rest once everything is consumed.
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group"), settings={
        "WEIR_FLUSH_MAX_BYTES": "1GiB",
        "WEIR_FLUSH_TARGET_FILE_SIZE": "32MiB",
        "WEIR_FLUSH_INTERVAL": "1h",
        "WEIR_MEMORY_BUDGET": f"{BUDGET_MIB}MiB",
        "WEIR_SHUTDOWN_DRAIN_TIMEOUT": "600s",
    }).start()
    peak_mib = 0.0
    try:
        def consumed_all() -> bool:
            nonlocal peak_mib
            peak_mib = max(peak_mib, vm_hwm_mib(weir.process.pid)) if weir.alive() else peak_mib
            return weir.metric("weir_records_consumed_total") >= EVENTS or not weir.alive()
        wait_for(consumed_all, 900, "all events consumed", poll_s=2)
        assert weir.alive(), weir.log()
        assert weir.metric("weir_records_consumed_total") == EVENTS
        weir.signal(signal.SIGTERM)
        while weir.alive():
            peak_mib = max(peak_mib, vm_hwm_mib(weir.process.pid))
            time.sleep(0.5)
    finally:
        code = weir.stop(timeout_s=660)
    assert code == 0, weir.log()
    record_property("peak_rss_mib", round(peak_mib, 1))
    print(f"peak RSS of weir ingest: {peak_mib:.1f} MiB")
    assert 0 < peak_mib < BUDGET_MIB, (peak_mib, weir.log())

    con = lake.connect()
    assert con.execute("SELECT count(*), count(DISTINCT uuid) FROM lake.events").fetchone() == (
        EVENTS, EVENTS)
    files = con.execute(
        f"SELECT f.begin_snapshot, f.path, f.file_size_bytes, f.record_count "
        f"FROM sqlite_scan('{lake.sqlite_path}', 'ducklake_data_file') f "
        f"JOIN sqlite_scan('{lake.sqlite_path}', 'ducklake_table') t USING (table_id) "
        f"WHERE t.table_name = 'events' AND t.end_snapshot IS NULL ORDER BY 1, 2").fetchall()
    con.close()
    assert sum(f[3] for f in files) == EVENTS
    by_flush: dict[int, list[tuple]] = defaultdict(list)
    for snapshot, path, size, rows in files:
        by_flush[snapshot].append((path, size, rows))
    # The first flush is the 1 GiB one (several files' worth); the drain's holds the rest.
    full = []
    for snapshot, flush_files in by_flush.items():
        # Every file of a flush but the last of each encode lane (the remainders, smaller) is
        # the target size.
        outside = [f for f in flush_files if not TARGET * 0.90 <= f[1] <= TARGET * 1.10]
        assert len(outside) <= LANES and all(f[1] < TARGET for f in outside), (snapshot, files)
        full.extend(f for f in flush_files if f not in outside)
    assert len(full) >= 3, files
