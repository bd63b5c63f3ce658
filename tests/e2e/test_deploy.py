"""deploy/: the Helm chart lints and renders for the default values and the value sets in
deploy/values/; every rendered object decodes strictly into the Kubernetes API types
(deploy/check, built from source here from the Go caches scripts/setup filled, offline); the
plain manifests are the chart's rendered defaults; the rendered StatefulSet's environment
(millpond's contract) and the rendered serve Deployment's run the real weir against the
harness's broker, PostgreSQL and S3; every metric the alert rules and the dashboard use is one
those processes export; the container file carries every shared library weir needs."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.e2e.weir_run import (
    Lake,
    create_topic,
    fresh_bucket,
    fresh_postgres_database,
    free_port,
    produce,
    unique,
    wait_for,
)
from tests.harness.components import DEPS, ROOT

HELM = DEPS / "go" / "bin" / "helm"
CHART = ROOT / "deploy" / "helm" / "weir"
VALUES = ROOT / "deploy" / "values"
PLAIN = ROOT / "deploy" / "kubernetes" / "weir.yaml"

# Each value set and exactly the objects it renders (kind, name).
SERVE = {("Service", "weir-serve"), ("Deployment", "weir-serve"),
         ("PodDisruptionBudget", "weir-serve")}
STATIC_EVENTS = {("Service", "weir-ingest-events"), ("StatefulSet", "weir-ingest-events"),
                 ("PodDisruptionBudget", "weir-ingest-events")}
VALUE_SETS = {
    "default": ([], STATIC_EVENTS | SERVE | {("ServiceAccount", "weir")}),
    "group": (["-f", VALUES / "group.yaml"],
              {("ConfigMap", "weir-ingest"), ("Service", "weir-ingest"),
               ("Deployment", "weir-ingest"), ("PodDisruptionBudget", "weir-ingest"),
               ("ServiceAccount", "weir")}),
    "millpond-fleet": (["-f", VALUES / "millpond-fleet.yaml"],
                       STATIC_EVENTS | SERVE | {
                           (k, f"weir-ingest-{p}") for p in ("sessions", "logs")
                           for k in ("Service", "StatefulSet", "PodDisruptionBudget")} | {
                           ("ServiceMonitor", "weir"), ("PrometheusRule", "weir"),
                           ("ConfigMap", "weir-dashboard"), ("Secret", "weir-lake"),
                           ("Secret", "weir-serve"), ("ServiceAccount", "weir")}),
    "wal-maintain": (["-f", VALUES / "wal-maintain.yaml"],
                     STATIC_EVENTS | SERVE | {
                         (k, "weir-ingest-logs")
                         for k in ("Service", "StatefulSet", "PodDisruptionBudget")} | {
                         ("ConfigMap", "weir-maintain"), ("Service", "weir-maintain"),
                         ("Deployment", "weir-maintain"), ("ServiceAccount", "weir")}),
}


def run(*args, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=300,
                          **kwargs)


def helm_template(*args) -> str:
    assert HELM.exists(), f"{HELM} is missing: run scripts/setup"
    done = run(HELM, "template", "weir", CHART, *args)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def checker(tmp_path_factory) -> Path:
    """deploy/check built from the working tree, offline (GOPROXY=off): its modules must be in
    the module cache scripts/setup filled."""
    out = tmp_path_factory.mktemp("check") / "weir-manifest-check"
    caches = dict(line.split("=", 1) for line in
                  (DEPS / "go" / "env").read_text().splitlines() if "=" in line)
    env = dict(os.environ, GOMODCACHE=caches["GOMODCACHE"], GOCACHE=caches["GOCACHE"],
               GOFLAGS="-mod=mod", GOPROXY="off")
    done = run("go", "build", "-o", out, ".", cwd=ROOT / "deploy" / "check", env=env)
    assert done.returncode == 0, done.stderr
    return out


def check(checker: Path, manifests: str) -> subprocess.CompletedProcess:
    return run(checker, "-", input=manifests)


def objects_of(manifests: str) -> list[dict]:
    return [d for d in yaml.safe_load_all(manifests) if d]


@pytest.mark.parametrize("value_set", sorted(VALUE_SETS))
def test_chart_lints(value_set):
    args, _ = VALUE_SETS[value_set]
    done = run(HELM, "lint", "--strict", CHART, *args)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 chart(s) linted, 0 chart(s) failed" in done.stdout


@pytest.mark.parametrize("value_set", sorted(VALUE_SETS))
def test_rendered_manifests_decode_strictly_into_the_api_types(value_set, checker):
    args, expected = VALUE_SETS[value_set]
    done = check(checker, helm_template(*args))
    assert done.returncode == 0, done.stderr
    decoded = {tuple(line.split()[2:4]) for line in done.stdout.splitlines()}
    assert all(line.startswith("ok ") for line in done.stdout.splitlines())
    assert decoded == expected


def test_plain_manifests_are_the_rendered_defaults():
    assert PLAIN.read_text() == helm_template(), "stale: run deploy/render"


def test_the_checker_refuses_unknown_fields_and_broken_invariants(checker):
    good = helm_template()
    assert check(checker, good).returncode == 0
    cases = {
        # An unknown field (a typo) and a field given twice.
        "unknown field \"spec.template.spec.containers[0].imagePullPolicyy\"":
            good.replace("imagePullPolicy: IfNotPresent", "imagePullPolicyy: IfNotPresent", 1),
        'key "replicas" already set in map':
            good.replace("  replicas: 2\n", "  replicas: 2\n  replicas: 3\n", 1),
        # millpond's REPLICA_COUNT out of step with the StatefulSet.
        "REPLICA_COUNT 3 differs from spec.replicas 2":
            good.replace('name: REPLICA_COUNT\n              value: "2"',
                         'name: REPLICA_COUNT\n              value: "3"'),
        # A probe on a port the container does not have.
        "readiness probe port metrics is not a container port":
            good.replace("httpGet: {path: /readyz, port: http}",
                         "httpGet: {path: /readyz, port: metrics}", 1),
        # A grace period shorter than the ingest drain.
        "terminationGracePeriodSeconds 30 does not outlast the drain timeout 1m36s":
            good.replace("terminationGracePeriodSeconds: 120", "terminationGracePeriodSeconds: 30"),
    }
    wal = helm_template("-f", VALUES / "wal-maintain.yaml")
    assert check(checker, wal).returncode == 0
    group = helm_template("-f", VALUES / "group.yaml", "--set", "wal.enabled=true",
                          "--set", "maintain.enabled=true")
    assert check(checker, group).returncode == 0
    wal_cases = {
        # weir maintain --serve runs once per lake, and a rollout never runs two.
        "weir maintain --serve with 2 replicas": wal.replace("  replicas: 1\n", "  replicas: 2\n", 1),
        "weir maintain --serve needs strategy Recreate":
            wal.replace("    type: Recreate", "    type: RollingUpdate", 1),
        # The WAL on the pod's emptyDir, and WAL mode without a wal.dir on any volume.
        'WEIR_WAL_DIR "/var/lib/weir/wal" is on volume work, not on a volumeClaimTemplate':
            wal.replace('value: "/var/lib/weir-wal"', 'value: "/var/lib/weir/wal"', 1),
        'WAL mode with wal.dir (default) "weir-wal", not an absolute path':
            good.replace("            - name: WEIR_MEMORY_BUDGET\n",
                         "            - name: WEIR_INGEST_MODE\n              value: wal\n"
                         "            - name: WEIR_MEMORY_BUDGET\n", 1),
        # The drain timeout of the mounted weir.yaml (group.yaml: 60s).
        "terminationGracePeriodSeconds 60 does not outlast the drain timeout 1m0s":
            group.replace("terminationGracePeriodSeconds: 120", "terminationGracePeriodSeconds: 60"),
    }
    for message, bad in {**cases, **wal_cases}.items():
        assert bad not in (good, wal, group), message
        done = check(checker, bad)
        assert done.returncode == 1 and message in done.stderr, (message, done.stderr)


# --- The rendered workloads run weir ----------------------------------------------------------


def container_env(manifests: str, kind: str, name: str, pod_name: str,
                  secrets: dict[str, str]) -> tuple[dict[str, str], dict]:
    """The environment a pod of the rendered workload gets (fieldRef metadata.name → pod_name,
    secretKeyRef → secrets[key]), and its container."""
    (obj,) = [o for o in objects_of(manifests) if o["kind"] == kind
              and o["metadata"]["name"] == name]
    (container,) = obj["spec"]["template"]["spec"]["containers"]
    env = {}
    for var in container["env"]:
        if "value" in var:
            env[var["name"]] = var["value"]
        elif "fieldRef" in var["valueFrom"]:
            assert var["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name"
            env[var["name"]] = pod_name
        else:
            ref = var["valueFrom"]["secretKeyRef"]
            if ref["key"] in secrets:
                env[var["name"]] = secrets[ref["key"]]
            else:
                assert ref.get("optional"), var
    return env, container


def http_get(port: int, path: str) -> tuple[int, str]:
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()
    except OSError:
        return 0, ""


def metric_names(exposition: str) -> set[str]:
    return {line.split("{")[0].split(" ")[0] for line in exposition.splitlines()
            if line and not line.startswith("#")}


PARTITIONS = 4
EVENTS = 2000  # event n goes to partition n % 4


@pytest.fixture(scope="module")
def running_weir(kafka, postgres, s3, build_dir, tmp_path_factory):
    """The rendered StatefulSet's pod weir-ingest-events-1 (millpond's environment, 2 replicas)
    and the rendered serve Deployment's pod, on one PostgreSQL catalog and S3 bucket; yields
    what the test needs and stops both (SIGTERM, exit 0 required)."""
    root = tmp_path_factory.mktemp("deploy-run")
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    topic, table = unique("events"), unique("events")
    lake, lake_values, secrets = harness_lake_values(postgres, s3, root)
    values = root / "values.yaml"
    values.write_text(yaml.safe_dump({
        "kafka": {"bootstrapServers": bootstrap},
        "lake": lake_values,
        "ingest": {"httpPort": free_port()},
        "static": {"pipelines": {"events": {"topic": topic, "table": table, "replicas": 2,
                                            "flushIntervalMs": "1000"}}},
        "serve": {"port": free_port(), "httpPort": free_port()},
    }))
    manifests = helm_template("-f", values)
    base = {k: v for k, v in os.environ.items() if not k.startswith(("WEIR_", "KAFKA_"))}

    create_topic(bootstrap, topic, PARTITIONS)
    produce(bootstrap, topic, ((None, json.dumps({"id": n}).encode()) for n in range(EVENTS)),
            partition_of=lambda n: n % PARTITIONS)
    produce(bootstrap, topic, [(None, b"{not json")], partition_of=lambda n: 1)

    ingest_env, ingest_container = container_env(manifests, "StatefulSet", "weir-ingest-events",
                                                 "weir-ingest-events-1", secrets)
    ingest_port = int(ingest_container["ports"][0]["containerPort"])
    ingest_log = root / "ingest.log"
    (root / "ingest").mkdir()
    with open(ingest_log, "wb") as log:
        ingest = subprocess.Popen([str(build_dir / "weir"), *ingest_container["args"]],
                                  env={**base, **ingest_env}, cwd=root / "ingest", stdout=log,
                                  stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    # weir serve attaches an existing lake (it exits, and Kubernetes restarts it, until ingest's
    # first commit has created the catalog): start it once there is one.
    try:
        wait_for(lambda: lake.count(table) > 0 or ingest.poll() is not None, 180,
                 "ingest's first commit")
    except AssertionError:
        ingest.kill()
        raise AssertionError(ingest_log.read_text()[-4000:])
    serve_env, serve_container = container_env(manifests, "Deployment", "weir-serve",
                                               "weir-serve-0", secrets)
    serve_env["WEIR_SERVE_HOST"] = "127.0.0.1"  # the pod's 0.0.0.0, kept to this machine here
    serve_env["WEIR_SERVE_TLS_DIR"] = str(root / "serve-tls")
    serve_http = int(serve_env["WEIR_SERVE_HTTP_PORT"])
    serve_log = root / "serve.log"
    with open(serve_log, "wb") as log:
        serve = subprocess.Popen([str(build_dir / "weir"), *serve_container["args"]],
                                 env={**base, **serve_env}, cwd=root, stdout=log,
                                 stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        yield {"lake": lake, "table": table, "manifests": manifests, "ingest": ingest,
               "ingest_port": ingest_port, "ingest_log": ingest_log, "serve": serve,
               "serve_http": serve_http, "serve_log": serve_log,
               "serve_port": int(serve_env["WEIR_SERVE_PORT"])}
    finally:
        codes = {}
        for name, process in (("ingest", ingest), ("serve", serve)):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
            try:
                codes[name] = process.wait(timeout=120)
            except subprocess.TimeoutExpired:
                process.kill()
                codes[name] = "killed"
        assert codes == {"ingest": 0, "serve": 0}, (codes, ingest_log.read_text()[-3000:])


def test_the_rendered_statefulset_environment_runs_static_assignment(running_weir):
    """Pod weir-ingest-events-1 of 2 owns partitions 1 and 3: exactly their events land, each
    once, and the bad record of partition 1 goes to the rejects table."""
    w = running_weir
    lake, table = w["lake"], w["table"]
    mine = [n for n in range(EVENTS) if n % PARTITIONS in (1, 3)]
    try:
        wait_for(lambda: lake.count(table) == len(mine) and lake.count(f"{table}_rejects") == 1,
                 180, "partitions 1 and 3 in the lake")
    except AssertionError:
        raise AssertionError(w["ingest_log"].read_text()[-4000:])
    assert lake.scalar(f"SELECT [count(*), count(DISTINCT id), sum(id)] FROM lake.{table}") == [
        len(mine), len(mine), sum(mine)]
    assert lake.scalar(f"SELECT count(*) FROM lake.{table} WHERE id % {PARTITIONS} IN (0, 2)") == 0
    # The probes the chart points at answer on the port it names.
    assert http_get(w["ingest_port"], "/healthz")[0] == 200
    assert http_get(w["ingest_port"], "/readyz")[0] == 200


def test_the_rendered_serve_deployment_answers_its_probes(running_weir):
    w = running_weir
    wait_for(lambda: http_get(w["serve_http"], "/readyz")[0] == 200, 60, "serve /readyz",
             poll_s=0.5)
    assert http_get(w["serve_http"], "/healthz")[0] == 200
    assert w["serve"].poll() is None, w["serve_log"].read_text()


def harness_lake_values(postgres, s3, root: Path) -> tuple[Lake, dict, dict]:
    """A fresh PostgreSQL catalog and S3 bucket: the Lake, the chart's `lake` values, and the
    Secret keys a pod would get."""
    dsn = fresh_postgres_database(postgres)
    pg = dict(kv.split("=", 1) for kv in shlex.split(dsn))
    bucket = fresh_bucket(s3)
    lake = Lake(root / "lake", catalog="postgres", storage="s3", postgres_dsn=dsn, s3=bucket)
    values = {"catalog": {"host": pg["host"], "port": int(pg["port"]), "database": pg["dbname"],
                          "user": pg["user"]},
              "dataPath": f"s3://{bucket['bucket']}/lake/",
              "s3": {"region": bucket["region"], "endpoint": bucket["endpoint"], "useSsl": False,
                     "urlStyle": "path"}}
    secrets = {"postgres-password": "unused", "s3-access-key-id": bucket["access_key"],
               "s3-secret-access-key": bucket["secret_key"], "password": "deploy-test-pw"}
    return lake, values, secrets


def test_the_rendered_group_deployment_runs_two_consumers_of_one_group(kafka, postgres, s3,
                                                                        build_dir, tmp_path):
    """deploy/values/group.yaml pointed at the harness: two pods of the Deployment (the rendered
    weir.yaml and environment) share the group; both datasets land every event exactly once."""
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    lake, lake_values, secrets = harness_lake_values(postgres, s3, tmp_path)
    topics = [unique("events"), unique("pageviews")]
    group_values = yaml.safe_load((VALUES / "group.yaml").read_text())
    datasets = group_values["group"]["datasets"]
    for dataset, topic in zip(datasets, topics):
        dataset["topic"] = topic
        dataset["flush"] = {"interval": "1s"}
    # group.yaml as it is but for where things are: the harness's plaintext broker (no SASL
    # properties), its PostgreSQL and S3.
    group_values["group"]["groupId"] = unique("group")
    group_values["kafka"] = {"bootstrapServers": bootstrap}
    group_values["lake"] = lake_values
    values = tmp_path / "values.yaml"
    values.write_text(yaml.safe_dump(group_values))
    manifests = helm_template("-f", values)
    (config,) = [o for o in objects_of(manifests) if o["kind"] == "ConfigMap"]
    (config_path := tmp_path / "weir.yaml").write_text(config["data"]["weir.yaml"])
    for topic in topics:
        create_topic(bootstrap, topic, PARTITIONS)
        produce(bootstrap, topic, ((None, json.dumps({"id": n}).encode()) for n in range(EVENTS)))
    base = {k: v for k, v in os.environ.items() if not k.startswith(("WEIR_", "KAFKA_"))}
    pods = []
    for i in range(2):
        env, container = container_env(manifests, "Deployment", "weir-ingest", f"weir-ingest-{i}",
                                       secrets)
        args = [str(config_path) if a == "/etc/weir/weir.yaml" else a for a in container["args"]]
        port = free_port()  # two pods on one machine: not the rendered http.port
        (tmp_path / f"pod{i}").mkdir()
        log_path = tmp_path / f"pod{i}.log"
        with open(log_path, "wb") as log:
            process = subprocess.Popen([str(build_dir / "weir"), *args],
                                       env={**base, **env, "WEIR_HTTP_PORT": str(port)},
                                       cwd=tmp_path / f"pod{i}", stdout=log,
                                       stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        pods.append((process, port, log_path))
    try:
        tables = [d["table"] for d in datasets]
        wait_for(lambda: all(lake.count(t) == EVENTS for t in tables)
                 or any(p.poll() is not None for p, _, _ in pods), 240, "both tables")
        logs = "\n".join(path.read_text()[-2000:] for _, _, path in pods)
        assert all(process.poll() is None for process, _, _ in pods), logs
        for table in tables:
            assert lake.scalar(
                f"SELECT [count(*), count(DISTINCT id), sum(id)] FROM lake.{table}") == [
                EVENTS, EVENTS, sum(range(EVENTS))], logs
        # Both consumers hold partitions of the group (ready: assigned, not draining).
        for _, port, _ in pods:
            assert http_get(port, "/readyz")[0] == 200, logs
    finally:
        for process, _, _ in pods:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        codes = [process.wait(timeout=150) for process, _, _ in pods]
    assert codes == [0, 0]


def used_metric_names() -> tuple[set[str], set[str]]:
    """(names in the alert rules, names in the dashboard): every weir_* token of their PromQL
    (no label or function of ours starts so), and Prometheus's own `up`."""
    alerts = yaml.safe_load((CHART / "files" / "alerts.yaml").read_text())
    alert_exprs = [r["expr"] for g in alerts["groups"] for r in g["rules"]]
    dashboard = json.loads((CHART / "files" / "dashboard.json").read_text())
    dash_exprs = [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]
    dash_exprs += [v["definition"] for v in dashboard["templating"]["list"] if "definition" in v]

    def names(exprs):
        found = set()
        for expr in exprs:
            found |= set(re.findall(r"\bweir_[a-z0-9_]+\b", expr))
            found |= {"up"} if re.search(r"\bup\{", expr) else set()
        return found

    return names(alert_exprs), names(dash_exprs)


def test_every_metric_of_the_alerts_and_the_dashboard_is_exported(running_weir):
    w = running_weir
    lake, table = w["lake"], w["table"]
    wait_for(lambda: lake.count(f"{table}_rejects") == 1, 180, "the reject")
    wait_for(lambda: "weir_consumer_lag{" in http_get(w["ingest_port"], "/metrics")[1], 60,
             "the lag gauges")
    ingest_names = metric_names(http_get(w["ingest_port"], "/metrics")[1])
    wait_for(lambda: http_get(w["serve_http"], "/metrics")[0] == 200, 60, "serve /metrics")
    serve_names = metric_names(http_get(w["serve_http"], "/metrics")[1])
    in_alerts, in_dashboard = used_metric_names()
    # Not vacuous: the families the issue names are there.
    for needed in ("weir_consumer_lag", "weir_commits_total", "weir_records_rejected_total",
                   "weir_fenced_commits_total", "weir_serve_auth_failures_total"):
        assert needed in in_alerts, needed
    assert len(in_dashboard) >= 20, sorted(in_dashboard)
    for used in (in_alerts, in_dashboard):
        serve_used = {n for n in used if n.startswith("weir_serve_")}
        # WAL mode's own series: test_ingest_wal checks a WAL-mode ingest exports them.
        wal_used = {n for n in used if n.startswith("weir_wal_")}
        ingest_used = used - serve_used - wal_used - {"up"}  # up: Prometheus's own series
        assert ingest_used - ingest_names == set(), sorted(ingest_names)
        assert serve_used - serve_names == set(), sorted(serve_names)


def test_the_prometheus_rule_is_the_rule_file():
    manifests = helm_template("-f", VALUES / "millpond-fleet.yaml")
    (rule,) = [o for o in objects_of(manifests) if o["kind"] == "PrometheusRule"]
    assert rule["spec"] == yaml.safe_load((CHART / "files" / "alerts.yaml").read_text())
    (board,) = [o for o in objects_of(manifests) if o["kind"] == "ConfigMap"
                and o["metadata"]["name"] == "weir-dashboard"]
    assert json.loads(board["data"]["weir.json"]) == json.loads(
        (CHART / "files" / "dashboard.json").read_text())


# --- The container file -----------------------------------------------------------------------


def containerfile_arg(name: str) -> list[str]:
    text = (ROOT / "deploy" / "Containerfile").read_text()
    (value,) = re.findall(rf'^ARG {name}="([^"]*)"', text, re.M)
    return value.split()


def debian_packages_of(paths: set[str]) -> dict[str, str]:
    """The Debian package that installed each library path (merged /usr: either spelling), in
    one dpkg query."""
    spellings = {}
    for path in paths:
        for p in {path, os.path.realpath(path)}:
            for candidate in (p, p[4:] if p.startswith("/usr/") else "/usr" + p):
                spellings[candidate] = path
    done = run("dpkg", "-S", *sorted(spellings))  # exit 1 for the spellings it does not know
    owner = {}
    for line in done.stdout.splitlines():
        package, _, candidate = line.partition(": ")
        if candidate in spellings:
            owner[spellings[candidate]] = package.split(":")[0].split(",")[0].strip()
    missing = paths - owner.keys()
    assert not missing, f"no Debian package owns {sorted(missing)}"
    return owner


def test_the_container_file_carries_every_shared_library(build_dir):
    runtime = set(containerfile_arg("RUNTIME_PACKAGES"))
    bundled = set(containerfile_arg("BUNDLED_LIBS"))
    closure_out = run("apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests",
                      "--no-conflicts", "--no-breaks", "--no-replaces", "--no-enhances",
                      *sorted(runtime))
    assert closure_out.returncode == 0, closure_out.stderr
    closure = {line.strip() for line in closure_out.stdout.splitlines()
               if line and not line.startswith(" ")}
    assert runtime <= closure

    versions = dict(re.findall(r'^(\w+)="?([^"\n]*)"?', (ROOT / "versions.env").read_text(),
                               re.M))
    ext_dir = DEPS / "duckdb" / "extensions" / f"v{versions['DUCKDB_VERSION']}" / "linux_amd64"
    extensions = [ext_dir / f"{e}.duckdb_extension" for e in versions["DUCKDB_EXTENSIONS"].split()]
    assert all(e.exists() for e in extensions)
    binary = build_dir / "weir"
    needed = run("readelf", "-d", binary).stdout
    direct = set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", needed))
    assert "libduckdb.so" in direct and "librdkafka.so.1" in direct
    seen_bundled = set()
    system = []  # (target, lib, path) of the libraries Debian must provide
    for target in [binary, *extensions]:
        resolved = run("ldd", target).stdout
        assert "not found" not in resolved, resolved
        for lib, path in re.findall(r"^\s*(\S+) => (\S+)", resolved, re.M):
            if "/.deps/" in path or str(DEPS.resolve()) in os.path.realpath(path):
                assert lib in bundled, f"{target}: {lib} from .deps is not in BUNDLED_LIBS"
                seen_bundled.add(lib)
            else:
                system.append((target, lib, path))
    owner = debian_packages_of({path for _, _, path in system})
    for target, lib, path in system:
        package = owner[path]
        if target == binary and lib in direct:
            assert package in runtime, f"{lib} ({package}) is not in RUNTIME_PACKAGES"
        else:
            assert package in closure, f"{target}: {lib} ({package}) would be missing"
    assert seen_bundled == bundled, "BUNDLED_LIBS lists a library weir does not link"
