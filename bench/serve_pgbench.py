"""weir serve beside PostgreSQL, measured by pgbench in one run (issue 32's table).

From the repository root (no harness component is needed; PostgreSQL 15's server binaries and
pgbench come with scripts/setup):

    .deps/venv/bin/python bench/serve_pgbench.py --build build/release --runs 3 --seconds 10

Makes one table of --rows rows x 4 columns (id BIGINT, k INTEGER, v DOUBLE, name VARCHAR) in a
DuckLake lake (SQLite catalog, local data) served by `<build>/weir serve`, and the same rows in
a private PostgreSQL (TLS on, SCRAM-SHA-256 logins, a btree index on id, analysed), then runs
each case with pgbench against both, alternating, --runs times:

    select1-simple / -extended / -prepared   SELECT 1 on one client (latency)
    select1-8clients                         SELECT 1 on 8 clients, 2 threads (tps)
    connect                                  a new TLS connection + login + SELECT 1 (pgbench -C)
    point-lookup                             SELECT * FROM t WHERE id = :id, random id
    group-by                                 SELECT k, count(*), sum(v) FROM t GROUP BY k

and prints each case's median for weir and PostgreSQL with their ratio (weir / PostgreSQL:
below 1 is weir faster for latencies; for tps above 1 is weir ahead).
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.e2e.test_serve import PASSWORD, duckdb_lake, start_serve  # noqa: E402
from tests.harness.components import Postgres  # noqa: E402

CASES = {
    # name: (pgbench arguments, script, reported figure)
    "select1-simple": (["-M", "simple", "-c", "1"], "SELECT 1;\n", "latency"),
    "select1-extended": (["-M", "extended", "-c", "1"], "SELECT 1;\n", "latency"),
    "select1-prepared": (["-M", "prepared", "-c", "1"], "SELECT 1;\n", "latency"),
    "select1-8clients": (["-M", "simple", "-c", "8", "-j", "2"], "SELECT 1;\n", "tps"),
    "connect": (["-M", "simple", "-c", "1", "-C"], "SELECT 1;\n", "latency"),
    "point-lookup": (["-M", "simple", "-c", "1"],
                     "\\set id random(0, {last})\nSELECT * FROM t WHERE id = :id;\n", "latency"),
    "group-by": (["-M", "simple", "-c", "1"],
                 "SELECT k, count(*), sum(v) FROM t GROUP BY k;\n", "latency"),
}


class TlsPostgres(Postgres):
    """The harness's PostgreSQL with TLS on and SCRAM-SHA-256 logins over TCP, as weir serve
    has them, so connection set-up costs the same steps on both."""

    def prepare(self) -> None:
        super().prepare()
        data = self.workdir / "data"
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                        "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2", "-subj",
                        "/CN=127.0.0.1", "-keyout", str(data / "server.key"), "-out",
                        str(data / "server.crt")], check=True, capture_output=True)
        (data / "server.key").chmod(0o600)
        if self.as_user:
            import pwd
            nobody = pwd.getpwnam("nobody")
            for name in ("server.key", "server.crt"):
                os.chown(data / name, nobody.pw_uid, nobody.pw_gid)

    def command(self) -> list[str]:
        return super().command() + ["-c", "ssl=on", "-c", "password_encryption=scram-sha-256"]

    def require_scram(self) -> None:
        """After the password is set: TCP logins need TLS and SCRAM from now on."""
        data = self.workdir / "data"
        (data / "pg_hba.conf").write_text(
            "hostssl all all 127.0.0.1/32 scram-sha-256\n")
        import psycopg
        with psycopg.connect(self.dsn("postgres"), autocommit=True) as conn:
            conn.execute("SELECT pg_reload_conf()")


def pgbench(port: int, dbname: str, case: str, seconds: int, rows: int, workdir: Path) -> float:
    args, script, figure = CASES[case]
    path = workdir / f"{case}.sql"
    path.write_text(script.format(last=rows - 1))
    env = dict(os.environ, PGPASSWORD=PASSWORD, PGSSLMODE="require")
    result = subprocess.run(
        ["pgbench", "-n", "-T", str(seconds), *args, "-f", str(path), "-h", "127.0.0.1", "-p",
         str(port), "-U", "weir", dbname],
        env=env, capture_output=True, text=True, timeout=seconds * 4 + 60)
    if result.returncode != 0:
        raise RuntimeError(f"pgbench {case} on port {port}: {result.stderr}{result.stdout}")
    pattern = r"tps = ([0-9.]+)" if figure == "tps" else r"latency average = ([0-9.]+) ms"
    found = re.search(pattern, result.stdout)
    if found is None:
        raise RuntimeError(f"pgbench {case}: no {figure} in\n{result.stdout}")
    return float(found.group(1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, default=ROOT / "build" / "release")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--cases", default=",".join(CASES))
    args = parser.parse_args()
    cases = args.cases.split(",")
    with tempfile.TemporaryDirectory(prefix="weir-pgbench-") as tmp:
        work = Path(tmp)
        create = (f"CREATE TABLE t AS SELECT range AS id, (range % 100)::INTEGER AS k, "
                  f"range * 0.5 AS v, 'name ' || range AS name FROM range({args.rows})")
        lake = duckdb_lake(work, create)
        port, process = start_serve(args.build, lake, work)
        pg = TlsPostgres(work)
        pg.start()
        try:
            import psycopg
            with psycopg.connect(pg.dsn(), autocommit=True) as conn:
                conn.execute(f"ALTER USER weir PASSWORD '{PASSWORD}'")
                conn.execute(f"CREATE TABLE t AS SELECT g::bigint AS id, (g % 100)::integer AS k, "
                             f"g * 0.5::double precision AS v, 'name ' || g AS name "
                             f"FROM generate_series(0, {args.rows - 1}) g")
                conn.execute("CREATE INDEX ON t (id)")
                conn.execute("ANALYZE t")
            pg.require_scram()
            results: dict[str, dict[str, list[float]]] = {c: {"weir": [], "pg": []} for c in cases}
            for run in range(args.runs):
                for case in cases:
                    # weir's database is `lake`; PostgreSQL's the harness's `weir`.
                    results[case]["weir"].append(
                        pgbench(port, "lake", case, args.seconds, args.rows, work))
                    results[case]["pg"].append(
                        pgbench(pg.port, "weir", case, args.seconds, args.rows, work))
                    print(f"run {run + 1} {case}: weir {results[case]['weir'][-1]:.3f} "
                          f"PostgreSQL {results[case]['pg'][-1]:.3f}", flush=True)
            print(f"\n{'case':<18} {'figure':<11} {'weir':>10} {'PostgreSQL':>11} {'ratio':>7}")
            for case in cases:
                figure = "tps" if CASES[case][2] == "tps" else "latency ms"
                weir = statistics.median(results[case]["weir"])
                pg_median = statistics.median(results[case]["pg"])
                print(f"{case:<18} {figure:<11} {weir:>10.3f} {pg_median:>11.3f} "
                      f"{weir / pg_median:>7.2f}")
        finally:
            pg.stop()
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=60)
    return 0


if __name__ == "__main__":
    sys.exit(main())
