"""Apache Spark as a reader of Iceberg tables in tests: pyspark (PyPI) with Iceberg's Spark
runtime jar (Maven Central, scripts/setup), in local mode, one core, no UI.

Spark is heavy (a JVM of its own, several seconds to start on an idle machine): use it in the
few tests that prove a table is readable by an engine other than pyiceberg and DuckDB.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

from .components import DEPS, ComponentError


def runtime_jars(aws: bool = False) -> list[Path]:
    jars = sorted((DEPS / "spark" / "jars").glob("iceberg-spark-runtime-*.jar"))
    if not jars:
        raise ComponentError(f"no Iceberg Spark runtime in {DEPS / 'spark' / 'jars'}: run scripts/setup")
    if aws:
        # S3FileIO and its AWS SDK: Iceberg's aws bundle of the same version, which setup
        # fetches for the REST catalog server.
        bundle = sorted((DEPS / "iceberg-rest" / "libs").glob("iceberg-aws-bundle-*.jar"))
        if not bundle:
            raise ComponentError("no iceberg-aws-bundle jar in .deps/iceberg-rest/libs: run scripts/setup")
        jars += bundle
    return jars


def _end_jvm(proc) -> None:
    """Closes the Spark JVM's stdin (its signal to exit), then waits for it; kills it after 30 s."""
    if proc is None or proc.poll() is not None:
        return
    with contextlib.suppress(OSError):
        if proc.stdin is not None:
            proc.stdin.close()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=30)


@contextlib.contextmanager
def spark_session(
    catalog_uri: str, warehouse: str, catalog: str = "rest", memory: str = "512m",
    catalog_properties: dict[str, str] | None = None, aws: bool = False,
) -> Iterator[object]:
    """A local SparkSession whose catalog `catalog` is the Iceberg REST catalog at `catalog_uri`
    with `warehouse` (and `catalog_properties`, e.g. S3FileIO's endpoint and keys; `aws` adds
    the AWS bundle S3FileIO needs); stopped (JVM included) on leaving the block."""
    from pyspark.sql import SparkSession

    scratch = tempfile.mkdtemp(prefix="weir-spark-")
    os.environ.setdefault("PYSPARK_PYTHON", str(DEPS / "venv" / "bin" / "python"))
    prefix = f"spark.sql.catalog.{catalog}"
    builder = (
        SparkSession.builder.master("local[1]")
        .appName("weir-test")
        .config("spark.jars", ",".join(str(j) for j in runtime_jars(aws)))
        .config("spark.driver.memory", memory)
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.local.dir", scratch)
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config(
            "spark.sql.extensions",
            "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
        )
        .config(prefix, "org.apache.iceberg.spark.SparkCatalog")
        .config(f"{prefix}.type", "rest")
        .config(f"{prefix}.uri", catalog_uri)
        .config(f"{prefix}.warehouse", warehouse)
    )
    for key, value in (catalog_properties or {}).items():
        builder = builder.config(f"{prefix}.{key}", value)
    session = builder.getOrCreate()
    try:
        yield session
    finally:
        session.stop()
        # The JVM outlives stop(): it exits only when its stdin closes, i.e. when this process
        # does. End the gateway and the JVM itself, or every session leaves a ~450 MiB JVM
        # behind for the rest of the (xdist worker's) run.
        from pyspark import SparkContext

        gateway = getattr(SparkContext, "_gateway", None)
        if gateway is not None:
            gateway.shutdown()
            SparkContext._gateway = None
            SparkContext._jvm = None
            _end_jvm(getattr(gateway, "proc", None))
        import shutil

        shutil.rmtree(scratch, ignore_errors=True)
