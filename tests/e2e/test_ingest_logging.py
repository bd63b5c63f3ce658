"""weir's log is weir's own (issue 18): with log.format=json, a broker outage during
`weir ingest` puts only JSON lines on stderr, librdkafka's among them with client and broker."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess

from tests.e2e.weir_run import (
    Lake,
    create_topic,
    event_records,
    free_port,
    produce,
    unique,
    wait_for,
)
from tests.harness.components import Kafka


def test_a_broker_outage_during_ingest_puts_only_json_lines_on_stderr(build_dir, tmp_path):
    broker = Kafka(tmp_path / "broker", heap="512m")  # its own broker: this test stops it
    broker.start()
    process = None
    try:
        bootstrap = broker.settings()["WEIR_TEST_KAFKA_BOOTSTRAP"]
        topic = unique("outage")
        create_topic(bootstrap, topic, 2)
        produce(bootstrap, topic, event_records(0, 1000))
        lake = Lake(tmp_path / "lake")
        lake.root.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith("WEIR_")}
        env.update(lake.env())
        env.update({
            "WEIR_KAFKA_BOOTSTRAP_SERVERS": bootstrap,
            "WEIR_TOPIC": topic,
            "WEIR_TABLE": "events",
            "WEIR_FLUSH_INTERVAL": "1s",
            "WEIR_HTTP_PORT": str(free_port()),
            "WEIR_LOG_FORMAT": "json",
        })
        stderr_path = tmp_path / "stderr.log"
        with open(stderr_path, "wb") as stderr, open(tmp_path / "stdout.log", "wb") as stdout:
            process = subprocess.Popen([str(build_dir / "weir"), "ingest"], env=env,
                                       cwd=lake.root, stdout=stdout, stderr=stderr,
                                       stdin=subprocess.DEVNULL)
        wait_for(lambda: lake.count("events") == 1000 or process.poll() is not None, 90,
                 "the events before the outage")
        assert process.poll() is None, stderr_path.read_text()

        broker.stop()
        wait_for(lambda: '"msg":"librdkafka FAIL: ' in stderr_path.read_text(errors="replace"),
                 60, "librdkafka reporting the outage")
        broker.restart()
        produce(bootstrap, topic, event_records(1000, 1000))
        wait_for(lambda: lake.count("events") == 2000, 120, "the events after the outage")
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=120) == 0, stderr_path.read_text()
        process = None
    finally:
        if process is not None:
            process.kill()
            process.wait()
        broker.stop()

    lines = stderr_path.read_text().splitlines()
    records = []
    for line in lines:
        record = json.loads(line)  # every line, or this raises naming it
        assert {"ts", "level", "thread", "msg"} <= record.keys(), line
        records.append(record)
    assert (tmp_path / "stdout.log").read_bytes() == b""
    librdkafka = [r for r in records if r["msg"].startswith("librdkafka ")]
    assert all(r["client"].startswith("rdkafka#consumer-") for r in librdkafka), librdkafka
    # The consumer's connections to the broker (named host:port/<node id>) were refused, and
    # each line says which broker.
    refused = [r for r in librdkafka
               if r["msg"].startswith(f"librdkafka FAIL: Connect to ipv4#{bootstrap} failed: "
                                      "Connection refused")]
    assert any(re.fullmatch(rf"{re.escape(bootstrap)}/\d+", r.get("broker", ""))
               for r in refused), "\n".join(lines[-40:])
    assert lake.scalar("SELECT count(DISTINCT id) FROM lake.events") == 2000
