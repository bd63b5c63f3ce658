"""Empty storage.s3_* keys mean the default credential chain (issue 10): `weir serve` reads a
lake on S3 (moto) with the keys only in the environment (AWS_ACCESS_KEY_ID, ...), and with no
credentials anywhere it stops at startup naming the settings, instead of serving a lake it
cannot read."""

from __future__ import annotations

import os
import subprocess

from tests.e2e.test_serve import PASSWORD
from tests.e2e.weir_run import EXTENSIONS, Lake, free_port, fresh_bucket, wait_for


def make_lake(s3, tmp_path) -> Lake:
    import duckdb

    lake = Lake(tmp_path / "lake", catalog="sqlite", storage="s3")
    lake.root.mkdir(parents=True)
    lake.s3 = fresh_bucket(s3)
    con = duckdb.connect(config={"extension_directory": str(EXTENSIONS),
                                 "autoinstall_known_extensions": False,
                                 "autoload_known_extensions": False})
    con.execute("LOAD ducklake; LOAD sqlite_scanner; LOAD httpfs")
    con.execute(f"CREATE SECRET (TYPE s3, KEY_ID '{lake.s3['access_key']}', "
                f"SECRET '{lake.s3['secret_key']}', REGION '{lake.s3['region']}', "
                f"ENDPOINT '{lake.s3['endpoint']}', USE_SSL false, URL_STYLE 'path')")
    con.execute(f"ATTACH 'ducklake:sqlite:{lake.sqlite_path}' AS l "
                f"(DATA_PATH '{lake.data_path}')")
    con.execute("CREATE TABLE l.events AS SELECT range AS id FROM range(3000)")
    con.close()
    return lake


def serve_env(lake: Lake, aws: dict[str, str]) -> dict[str, str]:
    """The lake's settings with empty keys; AWS_* only as given (nothing else leaks in)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_") or k == "AWS_CA_BUNDLE"}
    env |= lake.env()
    env |= {"WEIR_STORAGE_S3_ACCESS_KEY_ID": "", "WEIR_STORAGE_S3_SECRET_ACCESS_KEY": "",
            "WEIR_SERVE_PASSWORD": PASSWORD, "HOME": str(lake.root)}  # no ~/.aws either
    return env | aws


def start(build_dir, tmp_path, env) -> tuple[int, subprocess.Popen, object]:
    port = free_port()
    log_path = tmp_path / f"serve-{port}.log"
    log = open(log_path, "wb")
    process = subprocess.Popen(
        [str(build_dir / "weir"), "serve", "--port", str(port), "--tls-dir", str(tmp_path / "tls")],
        env=env, stdout=log, stderr=subprocess.STDOUT)
    wait_for(lambda: b"listening on" in log_path.read_bytes() or process.poll() is not None, 60,
             "weir serve to listen or stop")
    return port, process, log_path


def test_empty_keys_read_the_lake_with_the_environments_credentials(s3, build_dir, tmp_path):
    import psycopg

    lake = make_lake(s3, tmp_path)
    env = serve_env(lake, {"AWS_ACCESS_KEY_ID": lake.s3["access_key"],
                           "AWS_SECRET_ACCESS_KEY": lake.s3["secret_key"]})
    port, process, log_path = start(build_dir, tmp_path, env)
    try:
        assert process.poll() is None, log_path.read_text()
        with psycopg.connect(f"host=127.0.0.1 port={port} user=weir dbname=lake "
                             f"sslmode=require password='{PASSWORD}'", autocommit=True) as conn:
            assert conn.execute("SELECT count(*), count(DISTINCT id), sum(id) FROM events"
                                ).fetchone() == (3000, 3000, sum(range(3000)))
    finally:
        process.terminate()
        assert process.wait(timeout=30) == 0


def test_empty_keys_and_no_credentials_stop_startup_naming_the_settings(s3, build_dir, tmp_path):
    lake = make_lake(s3, tmp_path)
    port, process, log_path = start(build_dir, tmp_path, serve_env(lake, {}))
    try:
        assert process.wait(timeout=60) != 0
        log = log_path.read_text()
        assert "setting up S3 access (storage.s3_*)" in log, log
        assert "listening on" not in log
    finally:
        if process.poll() is None:
            process.kill()
