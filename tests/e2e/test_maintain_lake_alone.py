"""`weir maintain` with the lake's settings alone: no kafka.*, no datasets (the issue: stats
failed on `kafka.bootstrap_servers: required` and `datasets: at least one dataset is required`).

A lake made by `weir ingest` (one rejected record, so a rejects table too) is maintained from
its catalog settings only (a shortcut flag, or a YAML file with nothing else), for DuckLake on
SQLite and the embedded Iceberg lake (SQL catalog), and through an Iceberg REST catalog by
--table: every table of the lake is listed with its exact row count (the rejects table
included), fsck passes, compaction leaves one file, expiry removes what its dry run named, a
planted orphan is swept, and a --table not in the lake exits 1 naming it and the lake's tables.
`weir maintain --serve` on the same settings exports every table's metrics, and a table created
while it runs joins them.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

from tests.e2e.test_ingest_iceberg import IcebergLake
from tests.e2e.test_maintain import plant
from tests.e2e.weir_run import Lake, WeirIngest, create_topic, event_records, free_port, produce, \
    unique, wait_for

FLUSHES = 4
PER_FLUSH = 500
ROWS = FLUSHES * PER_FLUSH
DAY_S = 86400


def make_lake(kafka, build_dir, lake, prefix: str) -> None:
    """FLUSHES commits of PER_FLUSH events into `events`, and one record that is not JSON into
    `events_rejects`; weir stopped cleanly."""
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic = unique(prefix)
    create_topic(bootstrap, topic, 2)
    weir = WeirIngest(build_dir, lake, bootstrap, topic, "events", unique("group")).start()
    try:
        produce(bootstrap, topic, [(None, b"not json")])
        for k in range(FLUSHES):
            produce(bootstrap, topic, event_records(k * PER_FLUSH, PER_FLUSH))
            wait_for(lambda: lake.count("events") >= (k + 1) * PER_FLUSH or not weir.alive(), 90,
                     f"flush {k}")
            assert weir.alive(), weir.log()
        wait_for(lambda: lake.count("events_rejects") == 1, 60, "the rejected record")
    finally:
        assert weir.stop() == 0, weir.log()
    assert lake.count("events") == ROWS


def lake_only_env() -> dict[str, str]:
    """The test's environment without a single weir setting (the harness's WEIR_TEST_* stay:
    weir ignores them)."""
    return {k: v for k, v in os.environ.items()
            if not k.startswith("WEIR_") or k.startswith("WEIR_TEST_")}


class Maintain:
    """`weir maintain` run in `cwd` with `env` and the lake flags `flags` after every action."""

    def __init__(self, build_dir: Path, cwd: Path, flags: list[str], env=None):
        self.binary = build_dir / "weir"
        self.cwd = cwd
        self.flags = flags
        self.env = env if env is not None else lake_only_env()

    def __call__(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(self.binary), "maintain", *args, *self.flags], env=self.env,
                              cwd=self.cwd, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=180)

    def report(self, action: str = "stats", *args: str) -> dict:
        run = self(action, "--json", *args)
        assert run.returncode == 0, run.stdout + run.stderr
        return {t["table"]: t for t in json.loads(run.stdout)["tables"]}


class MaintainServe(WeirIngest):
    """One `weir maintain --serve` with the lake flags `flags` and no other setting than its
    HTTP port, a 1s stats interval and `settings`."""

    def __init__(self, build_dir: Path, lake: Lake, flags: list[str], settings: dict[str, str]):
        self.binary = build_dir / "weir"
        self.lake = lake
        self.http_port = free_port()
        self.log_path = lake.root / f"maintain-{unique('serve')}.log"
        self.env = lake_only_env()
        self.env["WEIR_MAINTAIN_STATS_INTERVAL"] = "1s"
        self.env.update(settings)
        self.args = ["--serve", "--http-port", str(self.http_port), *flags]
        self.process = None

    def start(self, *extra_args: str) -> "MaintainServe":
        log = open(self.log_path, "ab")
        self.process = subprocess.Popen([str(self.binary), "maintain", *self.args, *extra_args],
                                        env=self.env, cwd=self.lake.root, stdout=log,
                                        stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        log.close()
        return self

    def rows(self, table: str) -> float | None:
        return self.metrics().get(f'weir_lake_rows{{dataset="",table="{table}"}}')


def check_every_table_listed(maintain: Maintain) -> int:
    """Both tables, their exact rows, no dataset; returns the events table's data files."""
    report = maintain.report()
    assert sorted(report) == ["main.events", "main.events_rejects"], sorted(report)
    assert report["main.events"]["rows"] == ROWS
    assert report["main.events_rejects"]["rows"] == 1
    assert report["main.events"]["dataset"] == ""
    assert report["main.events"]["orphan_files"] == 0, report["main.events"]["orphans"]
    files = report["main.events"]["data_files"]
    assert files >= FLUSHES
    text = maintain("stats")
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0].split()[:4] == ["table", "files", "deletes", "rows"]
    assert lines[1].split()[:4] == ["main.events", str(files), "0", str(ROWS)]
    assert lines[2].split()[:4] == ["main.events_rejects", "1", "0", "1"]
    return files


def check_missing_table_refused(maintain: Maintain, name: str, tables: str) -> None:
    run = maintain("stats", "--table", name)
    assert run.returncode == 1, run.stdout + run.stderr
    assert run.stdout == ""
    assert f"weir maintain: --table {name}: no such table in the lake (its tables: {tables})" \
        in run.stderr.splitlines(), run.stderr


def check_actions(maintain: Maintain, table_dir: Path, files: int, rows_of) -> None:
    """fsck, the sweep of a planted orphan, compaction to one file, expiry of what a dry run
    names: each on `--table events` of the lake."""
    fsck = maintain("fsck")
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr
    assert fsck.stdout.splitlines()[-1] == \
        "fsck: OK, 2 table(s), every live file present with its size", fsck.stdout

    orphan = plant(table_dir / "crashed-flush.parquet", 2 * DAY_S)
    swept = maintain("orphans", "--table", "events", "--yes")
    assert swept.returncode == 0, swept.stderr
    assert swept.stdout.splitlines()[-1] == \
        "main.events: deleted 1 orphan(s) (123 bytes) older than 24h; kept 0 younger", swept.stdout
    assert not orphan.exists()

    compacted = maintain("compact", "--table", "main.events")
    assert compacted.returncode == 0, compacted.stderr
    assert re.fullmatch(rf"main\.events: merged {files} file\(s\) \(.+\) into 1 \(.+\), {ROWS} "
                        r"rows, in 1 of 1 run\(s\); [0-9.]+s",
                        compacted.stdout.splitlines()[-1]), compacted.stdout
    after = maintain.report()
    assert after["main.events"]["data_files"] == 1
    assert after["main.events"]["rows"] == ROWS
    assert after["main.events_rejects"]["data_files"] == 1  # not asked for: untouched
    assert rows_of() == ROWS

    dry = maintain("expire", "--table", "events", "--older-than", "0s", "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    ids = json.loads(dry.stdout)["tables"][0]["expire"]["snapshots"]
    assert ids, dry.stdout
    expired = maintain("expire", "--table", "events", "--older-than", "0s", "--yes")
    assert expired.returncode == 0, expired.stderr
    assert expired.stdout.splitlines()[-1].startswith(
        f"main.events: expired {len(ids)} snapshot(s); "), expired.stdout
    final = maintain.report()
    assert final["main.events"]["snapshots"] == after["main.events"]["snapshots"] - len(ids)
    assert final["main.events"]["rows"] == ROWS
    assert rows_of() == ROWS


def test_ducklake_is_maintained_from_its_catalog_alone(kafka, build_dir, tmp_path):
    lake = Lake(tmp_path / "lake")
    make_lake(kafka, build_dir, lake, "lake_alone")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    maintain = Maintain(build_dir, elsewhere, ["--catalog-sqlite", str(lake.sqlite_path)])

    files = check_every_table_listed(maintain)
    # The same from a file holding the lake alone, and from one shared with ingest (its kafka.*
    # settings read, not required, not an error).
    for name, text in [("lake.yaml", f"catalog:\n  sqlite_path: {lake.sqlite_path}\n"),
                       ("shared.yaml", "kafka:\n  bootstrap_servers: 127.0.0.1:1\n"
                                       "  assignment: static\n  replica_count: 3\n"
                                       f"catalog:\n  sqlite_path: {lake.sqlite_path}\n")]:
        config = tmp_path / name
        config.write_text(text)
        report = Maintain(build_dir, elsewhere, ["--config", str(config)]).report()
        assert {t: r["rows"] for t, r in report.items()} == \
            {"main.events": ROWS, "main.events_rejects": 1}, name
    check_missing_table_refused(maintain, "nope", "main.events, main.events_rejects")
    check_actions(maintain, Path(lake.data_path) / "main" / "events", files,
                  lambda: lake.count("events"))
    # Nothing was made where maintain ran (no default lake, no data directory).
    assert list(elsewhere.iterdir()) == []
    check_serve(build_dir, lake)


def check_serve(build_dir: Path, lake: Lake) -> None:
    """--serve on the lake's catalog alone, its policies turned off by settings given without a
    dataset (every table's): the metrics of every table, then of one created while it runs."""
    off = {"WEIR_MAINTAIN_EXPIRE_INTERVAL": "0", "WEIR_MAINTAIN_ORPHANS_INTERVAL": "0",
           "WEIR_MAINTAIN_COMPACT_INTERVAL": "0"}
    serve = MaintainServe(build_dir, lake, ["--catalog-sqlite", str(lake.sqlite_path)],
                          off).start()
    try:
        wait_for(lambda: serve.rows("main.events_rejects") == 1 or not serve.alive(), 60,
                 "the first inspection")
        assert serve.alive(), serve.log()
        assert serve.rows("main.events") == ROWS
        assert serve.metrics()['weir_lake_data_files{dataset="",table="main.events"}'] == 1
        assert serve.http("/readyz")[0] == 200
        con = lake.connect(read_only=False)
        try:
            # Enough rows for a data file (DuckLake inlines a few rows into its catalog).
            con.execute("CREATE TABLE lake.main.clicks AS SELECT range AS x FROM range(5000)")
        finally:
            con.close()
        wait_for(lambda: serve.rows("main.clicks") == 5000 or not serve.alive(), 60,
                 "the new table in the metrics")
        assert serve.alive(), serve.log()
        assert serve.metric("weir_maintain_runs_total") == 0  # every policy is off
        assert serve.metric("weir_maintain_errors_total") == 0
    finally:
        assert serve.stop(60) == 0, serve.log()
    assert "weir maintain --serve stopped" in serve.log_path.read_text(), serve.log()


def test_embedded_iceberg_lake_is_maintained_from_its_format_alone(kafka, build_dir, tmp_path):
    lake = IcebergLake(tmp_path / "lake")
    make_lake(kafka, build_dir, lake, "lake_alone_iceberg")
    # Where ingest ran, the embedded lake's defaults find it: only the format is given.
    maintain = Maintain(build_dir, lake.root, ["--format", "iceberg"])

    files = check_every_table_listed(maintain)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    embedded = lake.root / "weir-lake"
    config = tmp_path / "lake.yaml"
    config.write_text(f"lake:\n  format: iceberg\niceberg:\n"
                      f"  sqlite_path: {embedded / 'catalog.db'}\n"
                      f"  warehouse: {embedded / 'warehouse'}\n")
    report = Maintain(build_dir, elsewhere, ["-c", str(config)]).report()
    assert {t: r["rows"] for t, r in report.items()} == \
        {"main.events": ROWS, "main.events_rejects": 1}
    assert list(elsewhere.iterdir()) == []
    check_missing_table_refused(maintain, "main.nope", "main.events, main.events_rejects")
    table_dir = Path(lake.table("events").location().removeprefix("file://"))
    check_actions(maintain, table_dir / "data", files, lambda: lake.count("events"))


def test_a_table_of_an_iceberg_rest_catalog_is_maintained_by_name(kafka, iceberg_rest,
                                                                  build_dir, tmp_path):
    uri = iceberg_rest["WEIR_TEST_ICEBERG_REST_URI"]
    ns = unique("ns")
    lake = IcebergLake(tmp_path / "lake", rest_uri=uri, namespace=ns)
    make_lake(kafka, build_dir, lake, "lake_alone_rest")
    rest = ["--format", "iceberg", "--set", "iceberg.catalog=rest", "--set", f"iceberg.uri={uri}"]
    maintain = Maintain(build_dir, tmp_path, rest)
    report = maintain.report("stats", "--table", f"{ns}.events", "--table", f"{ns}.events_rejects")
    assert {t: r["rows"] for t, r in report.items()} == {f"{ns}.events": ROWS,
                                                         f"{ns}.events_rejects": 1}
    files = report[f"{ns}.events"]["data_files"]
    compacted = maintain("compact", "--table", f"{ns}.events")
    assert compacted.returncode == 0, compacted.stderr
    assert compacted.stdout.splitlines()[-1].startswith(f"{ns}.events: merged {files} file(s) "), \
        compacted.stdout
    assert maintain.report("stats", "--table", f"{ns}.events")[f"{ns}.events"]["data_files"] == 1
    assert lake.count("events") == ROWS
    # The catalog is shared with other tests: the error lists this test's tables among others
    # (the first 50 tables by name, then how many more).
    run = maintain("stats", "--table", f"{ns}.nope")
    assert run.returncode == 1, run.stdout + run.stderr
    message = [line for line in run.stderr.splitlines()
               if line.startswith(f"weir maintain: --table {ns}.nope: no such table in the lake "
                                  "(its tables: ")]
    assert len(message) == 1, run.stderr
    assert f"{ns}.events, {ns}.events_rejects" in message[0] or \
        re.search(r" and \d+ more\)$", message[0]), message[0]
