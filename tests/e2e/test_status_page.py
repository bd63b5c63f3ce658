"""Issue 17's status page in a real browser: headless Chromium (Debian's) loads /status of a
running `weir ingest` (real broker, real lake) and of a running `weir serve`, a screenshot is
taken, and the numbers the page shows are checked through the DOM against /status.json and
/metrics; the page is served with a policy that lets nothing load and makes no other request."""

from __future__ import annotations

import json
import signal
import urllib.request

import psycopg
import pytest

from tests.e2e.chromium import Browser
from tests.e2e.test_serve import PASSWORD, duckdb_lake, start_serve
from tests.e2e.weir_run import (
    Lake,
    WeirIngest,
    create_topic,
    event_records,
    free_port,
    produce,
    unique,
    wait_for,
)

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'"
EVENTS = 5000
PARTITIONS = 4
BAD = [b"{not json", b"[1, 2]", b"{\"truncated\": ", b"\"a string\""]

# Everything the test reads from the page, by the stable ids and data attributes of
# src/observe/status_html.cc.
READ_PAGE = """JSON.stringify((() => {
  const fields = (root) => Object.fromEntries([...root.querySelectorAll('[data-field]')]
      .filter((e) => e.closest('tr[data-commit],tr[data-partition],tr[data-reason],'
                               + 'tr[data-status],tr[data-statement]') === null)
      .map((e) => [e.dataset.field, {value: e.dataset.value, text: e.textContent}]));
  const rows = (root, attr) => [...root.querySelectorAll(`tr[data-${attr}]`)].map((r) => ({
      key: r.getAttribute(`data-${attr}`),
      fields: Object.fromEntries([...r.querySelectorAll('[data-field]')].map(
          (e) => [e.dataset.field, e.dataset.value ?? e.textContent]))}));
  const serve = document.querySelector('#serve');
  return {
    service: document.querySelector('#service').dataset.service,
    wal: document.querySelector('#wal')?.dataset.value ?? null,
    external: [...document.querySelectorAll('[src],link[href],script')].map((e) => e.outerHTML),
    datasets: [...document.querySelectorAll('section.dataset')].map((s) => ({
      name: s.dataset.dataset,
      fields: fields(s),
      lag: rows(s, 'partition'),
      commits: rows(s, 'commit'),
      rejects: rows(s, 'reason'),
      charts: [...s.querySelectorAll('svg')].map((c) => c.id),
      bars: s.querySelectorAll('svg[id^=file-sizes] rect[fill="#4a7"]').length,
      chart_points: Number(s.querySelector('svg[id^=events-chart]').dataset.points),
      polylines: s.querySelectorAll('svg polyline').length,
    })),
    serve: serve && {fields: fields(serve), queries: rows(serve, 'status'),
                     slowest: rows(serve, 'statement'),
                     charts: [...serve.querySelectorAll('svg')].map((c) => c.id)},
  };
})())"""


def get(port: int, path: str):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as r:
        return r.status, dict(r.headers), r.read().decode()


def metrics_of(port: int) -> dict[str, float]:
    samples = {}
    for line in get(port, "/metrics")[2].splitlines():
        if line and not line.startswith("#"):
            series, value = line.rsplit(" ", 1)
            samples[series] = float(value)
    return samples


def number(field: dict) -> float:
    """A page number: its data-value, which the displayed text (rounded to an integer from 100
    on, else to 3 significant digits) must agree with."""
    value = float(field["value"])
    text = field["text"].replace(" ", "")
    if text.replace(".", "", 1).isdigit():
        assert abs(float(text) - value) <= (0.5 if abs(value) >= 100 else abs(value) * 5e-3), field
    return value


@pytest.fixture
def browser(tmp_path):
    b = Browser(tmp_path / "chromium")
    yield b
    b.close()


def load_page(browser: Browser, port: int, shot):
    """Loads /status (no refresh) and returns what the DOM says; checks requests and policy."""
    url = f"http://127.0.0.1:{port}/status?refresh=0"
    requests, responses = browser.load(url)
    assert [r["request"]["url"] for r in requests] == [url], requests
    assert len(responses) == 1 and responses[0]["response"]["status"] == 200
    headers = {k.lower(): v for k, v in responses[0]["response"]["headers"].items()}
    assert headers["content-security-policy"] == CSP
    assert headers["content-type"] == "text/html; charset=utf-8"
    png = browser.screenshot(shot)
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 10_000
    page = json.loads(browser.evaluate(READ_PAGE))
    assert page["external"] == [f'<link rel="icon" href="data:,">']
    return page


def test_the_ingest_status_page_shows_what_metrics_and_json_say(kafka, build_dir, tmp_path,
                                                                 browser):
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic, table = unique("status"), unique("status_events")
    create_topic(bootstrap, topic, PARTITIONS)
    records = list(event_records(0, EVENTS)) + [(None, bad) for bad in BAD]
    assert produce(bootstrap, topic, records) == EVENTS + len(BAD)
    lake = Lake(tmp_path / "lake")
    weir = WeirIngest(build_dir, lake, bootstrap, topic, table, unique("g")).start()
    try:
        def settled():
            m = weir.metrics()
            lags = [v for k, v in m.items() if k.startswith("weir_consumer_lag{")
                    and f'topic="{topic}"' in k]
            if (m.get(f'weir_records_written_total{{dataset="{table}"}}') != EVENTS
                    or len(lags) != PARTITIONS or any(lags)):
                return False
            status = json.loads(weir.http("/status.json")[1])
            return len(status["datasets"][0]["lag"]) == PARTITIONS and \
                status["datasets"][0]["lag_total"] == 0
        wait_for(settled, 180, "every event committed and no lag", poll_s=1)
        # Two 10-s rate samples after the start, so the charts have a line to draw.
        wait_for(lambda: len(json.loads(weir.http("/status.json")[1])["datasets"][0]["rates"]
                             ["series"]) >= 2, 60, "two rate samples", poll_s=1)
        assert weir.alive(), weir.log()

        before = json.loads(weir.http("/status.json")[1])
        page = load_page(browser, weir.http_port, tmp_path / "ingest-status.png")
        status = json.loads(weir.http("/status.json")[1])
        metrics = weir.metrics()
        assert status["datasets"][0]["events_total"] == before["datasets"][0]["events_total"]
        assert status["datasets"][0]["commits"] == before["datasets"][0]["commits"]  # idle

        assert page["service"] == status["service"] == "ingest"
        assert page["wal"] == status["wal"]["mode"] == "direct"
        [shown] = page["datasets"]
        [data] = status["datasets"]
        assert shown["name"] == data["name"] == table
        f = shown["fields"]
        label = f'{{dataset="{table}"}}'
        assert number(f["events_total"]) == data["events_total"] == EVENTS + len(BAD) \
            == metrics[f"weir_records_consumed_total{label}"]
        assert number(f["rows_total"]) == data["rows_total"] == EVENTS \
            == metrics[f"weir_records_written_total{label}"]
        assert number(f["commits_total"]) == data["commits_total"] \
            == metrics[f"weir_commits_total{label}"] >= 1
        assert number(f["rejects_total"]) == data["rejects_total"] == len(BAD)
        assert number(f["bytes_total"]) == data["bytes_total"] == sum(
            len(value) for _, value in records)
        assert number(f["lag_total"]) == data["lag_total"] == 0
        # The 15-minute rate is everything consumed over the time since the start.
        rate = number(f["events_per_second_15m"])
        uptime = float(page_uptime(browser))
        assert abs(rate * uptime - (EVENTS + len(BAD))) <= 0.05 * (EVENTS + len(BAD)), (rate,
                                                                                         uptime)

        lag = {row["key"]: float(row["fields"]["lag"]) for row in shown["lag"]}
        assert lag == {str(p["partition"]): p["lag"] for p in data["lag"]} == {
            str(p): metrics[f'weir_consumer_lag{{partition="{p}",topic="{topic}"}}']
            for p in range(PARTITIONS)}

        # The last commits, newest first: the same in the DOM and the JSON, and (fewer than 20
        # here) every row committed.
        assert data["commits_total"] <= 20
        commits = [{k: int(float(v)) for k, v in row["fields"].items()} for row in shown["commits"]]
        assert commits == [{k: c[k] for k in ("snapshot_id", "rows", "rejects", "files", "bytes",
                                              "write_ms", "commit_ms")} for c in data["commits"]]
        assert sum(c["rows"] for c in commits) == EVENTS
        assert sum(c["rejects"] for c in commits) == len(BAD)
        assert sum(c["files"] for c in commits) == metrics[f"weir_files_written_total{label}"]
        latest = lake.scalar("SELECT max(snapshot_id) FROM ducklake_snapshots('lake')")
        assert commits[0]["snapshot_id"] == latest

        rejects = {row["key"]: int(float(row["fields"]["count"])) for row in shown["rejects"]}
        assert rejects == data["rejects"]
        assert rejects == {
            reason: int(metrics[f'weir_records_rejected_total{{dataset="{table}",'
                                f'reason="{reason}"}}']) for reason in rejects}
        assert sum(rejects.values()) == len(BAD)

        assert shown["charts"] == ["events-chart-0", "bytes-chart-0", "file-sizes-0"]
        # The events chart draws the JSON's series (a sample may land between the reads).
        points = {len(before["datasets"][0]["rates"]["series"]), len(data["rates"]["series"])}
        assert shown["chart_points"] in points and min(points) >= 2
        assert shown["polylines"] == 2
        assert shown["bars"] == len(data["file_sizes"]["counts"])
        assert sum(data["file_sizes"]["counts"]) == data["file_sizes"]["files"] >= 1
        assert number(f["paused"]) == len(data["paused"]["partitions"]) == 0
    finally:
        assert weir.stop() == 0, weir.log()


def page_uptime(browser: Browser) -> str:
    return browser.evaluate("document.querySelector('[data-field=uptime_seconds]').dataset.value")


def test_the_serve_status_page_shows_sessions_queries_and_redacted_slow_statements(
        build_dir, tmp_path, browser):
    lake = duckdb_lake(tmp_path, "CREATE TABLE people AS SELECT range AS id, 'person ' || range "
                                 "AS name FROM range(20000)")
    http_port = free_port()
    port, process = start_serve(build_dir, lake, tmp_path, "--http-port", str(http_port))
    dsn = (f"host=127.0.0.1 port={port} user=weir dbname=lake sslmode=require "
           f"password='{PASSWORD}'")
    try:
        with psycopg.connect(dsn, autocommit=True) as a, psycopg.connect(dsn, autocommit=True) as b:
            for i in range(6):
                assert a.execute("SELECT count(*) FROM people WHERE name <> 'secret-value-42' "
                                 f"AND id >= {i}").fetchone()[0] == 20000 - i
            # The slowest: a self-join the engine has to work on.
            assert b.execute("SELECT count(*) FROM people x JOIN people y ON x.id % 100 = "
                             "y.id % 100 WHERE x.name <> 'hidden-literal'").fetchone()[0] == \
                20000 * 200
            for _ in range(2):
                with pytest.raises(psycopg.Error):
                    b.execute("SELECT * FROM no_such_table WHERE x = 'also-secret'")

            page = load_page(browser, http_port, tmp_path / "serve-status.png")
            status = json.loads(get(http_port, "/status.json")[2])
            metrics = metrics_of(http_port)
            assert page["service"] == status["service"] == "serve"
            assert page["datasets"] == [] and page["wal"] is None
            serve = page["serve"]
            assert number(serve["fields"]["sessions"]) == status["serve"]["sessions"] == 2 \
                == metrics["weir_serve_sessions"]
            totals = {row["key"]: int(float(row["fields"]["queries_total"]))
                      for row in serve["queries"]}
            assert totals == status["serve"]["queries_total"] == {
                s: int(metrics[f'weir_serve_queries_total{{status="{s}"}}'])
                for s in ("ok", "error", "cancelled")}
            assert totals["error"] == 2 and totals["ok"] >= 7 and totals["cancelled"] == 0
            assert serve["charts"] == ["queries-chart"]

            slowest = serve["slowest"]
            assert [row["fields"]["statement"] for row in slowest] == [
                q["statement"] for q in status["serve"]["slowest"]]
            assert [float(row["fields"]["seconds"]) for row in slowest] == sorted(
                (float(row["fields"]["seconds"]) for row in slowest), reverse=True)
            assert len(slowest) == min(10, sum(totals.values()))
            texts = [row["fields"]["statement"] for row in slowest]
            assert ("SELECT count(*) FROM people x JOIN people y ON x.id % ? = y.id % ? "
                    "WHERE x.name <> ?") in texts
            assert all("secret" not in t and "hidden" not in t for t in texts), texts
            assert all(row["fields"]["user"] == "weir" for row in slowest)
            body = get(http_port, "/status?refresh=0")[2]
            assert "secret-value" not in body and "hidden-literal" not in body
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0
