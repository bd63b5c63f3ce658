"""Apache Spark as a reader of Iceberg tables in tests: pyspark (PyPI) with Iceberg's Spark
runtime jar (Maven Central, scripts/setup), in local mode, one core, no UI.

Spark is heavy (a JVM of its own, several seconds to start on an idle machine): use it in the
few tests that prove a table is readable by an engine other than pyiceberg and DuckDB.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from .components import DEPS, ComponentError


def runtime_jars() -> list[Path]:
    jars = sorted((DEPS / "spark" / "jars").glob("iceberg-spark-runtime-*.jar"))
    if not jars:
        raise ComponentError(f"no Iceberg Spark runtime in {DEPS / 'spark' / 'jars'}: run scripts/setup")
    return jars


@contextlib.contextmanager
def spark_session(
    catalog_uri: str, warehouse: str, catalog: str = "rest", memory: str = "512m"
) -> Iterator[object]:
    """A local SparkSession whose catalog `catalog` is the Iceberg REST catalog at `catalog_uri`
    with `warehouse`; stopped (JVM included) on leaving the block."""
    from pyspark.sql import SparkSession

    scratch = tempfile.mkdtemp(prefix="weir-spark-")
    os.environ.setdefault("PYSPARK_PYTHON", str(DEPS / "venv" / "bin" / "python"))
    prefix = f"spark.sql.catalog.{catalog}"
    builder = (
        SparkSession.builder.master("local[1]")
        .appName("weir-test")
        .config("spark.jars", ",".join(str(j) for j in runtime_jars()))
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
    session = builder.getOrCreate()
    try:
        yield session
    finally:
        session.stop()
        # The JVM outlives stop(); end its gateway so the next session starts clean.
        from pyspark import SparkContext

        gateway = getattr(SparkContext, "_gateway", None)
        if gateway is not None:
            gateway.shutdown()
            SparkContext._gateway = None
            SparkContext._jvm = None
        import shutil

        shutil.rmtree(scratch, ignore_errors=True)
