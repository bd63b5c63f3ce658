"""The harness itself: it passes settings on, propagates the exit code, and always cleans up."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.harness.components import ROOT, Kafka, port_open

# Prints the harness settings as JSON, then exits with the code given as argv[1] or sleeps.
CHILD = (
    "import json, os, sys, time\n"
    "print(json.dumps({k: v for k, v in os.environ.items() if k.startswith('WEIR_TEST_')}),"
    " flush=True)\n"
    "if sys.argv[1] == 'sleep':\n"
    "    time.sleep(120)\n"
    "sys.exit(int(sys.argv[1]))\n"
)


def harness(*args: str, **kwargs) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WEIR_TEST_")}
    return subprocess.Popen(
        [sys.executable, "-m", "tests.harness", "run", "--only", "postgres,s3", "--",
         sys.executable, "-c", CHILD, *args],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs,
    )


def ports(settings: dict[str, str]) -> list[int]:
    pg = int(settings["WEIR_TEST_PG_DSN"].split("port=")[1].split()[0])
    s3 = int(settings["WEIR_TEST_S3_ENDPOINT"].rsplit(":", 1)[1])
    return [pg, s3]


def assert_cleaned_up(settings: dict[str, str]) -> None:
    deadline = time.monotonic() + 10
    while any(port_open(p) for p in ports(settings)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert [p for p in ports(settings) if port_open(p)] == []
    assert not Path(settings["WEIR_TEST_HARNESS_DIR"]).exists()


def test_run_passes_settings_and_the_exit_code_then_stops_everything():
    proc = harness("3")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 3, err
    settings = json.loads(out.splitlines()[0])
    assert sorted(settings) == [
        "WEIR_TEST_HARNESS_DIR", "WEIR_TEST_PG_DSN", "WEIR_TEST_PG_URL", "WEIR_TEST_S3_ACCESS_KEY",
        "WEIR_TEST_S3_ENDPOINT", "WEIR_TEST_S3_REGION", "WEIR_TEST_S3_SECRET_KEY",
    ]
    assert_cleaned_up(settings)


def test_sigterm_while_running_still_stops_everything():
    proc = harness("sleep")
    settings = json.loads(proc.stdout.readline())
    assert all(port_open(p) for p in ports(settings))
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    assert proc.returncode != 0
    assert_cleaned_up(settings)
    # The command run under the harness was ended too.
    leftover = subprocess.run(["pgrep", "-f", "time.sleep\\(120\\)"], capture_output=True)
    assert leftover.stdout == b""


def test_kafka_starts_with_a_cluster_id_that_begins_with_a_dash(tmp_path):
    # Random ids did so once in 64 starts, and the storage tool took the id for an option.
    broker = Kafka(tmp_path, heap="256m")
    broker.cluster_id = "-" + broker.cluster_id[1:]
    try:
        broker.start()
        assert port_open(broker.port)
    finally:
        broker.stop()
