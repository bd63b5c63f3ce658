"""The Iceberg REST catalogs of the harness: Apache Iceberg's REST fixture and Project Nessie.

Both are the real servers, from Maven Central (scripts/setup): Iceberg's `RESTCatalogServer`
(the server the Iceberg project tests its clients against, backed by a JDBC catalog on SQLite,
with a warehouse in a local directory) and Nessie's Quarkus server, whose Iceberg REST API lives
under /iceberg and keeps its tables on S3 (the harness's moto).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import urllib.request
from pathlib import Path

from .components import DEPS, Component, ComponentError, free_port


def _get_json(url: str, timeout: float = 2.0) -> dict:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        if response.status != 200:
            raise ComponentError(f"{url} answered {response.status}")
        return json.loads(response.read())


class IcebergRest(Component):
    """Apache Iceberg's REST catalog server over a JDBC (SQLite) catalog, warehouse on disk, or
    on a bucket of the harness's moto S3 when given `s3` settings (S3FileIO; clients bring
    their own S3 endpoint and credentials: the server's table config carries none).

    The server reads its catalog properties from CATALOG_* variables (CATALOG_REST_PORT is
    `rest.port`, `__` is `-` and `_` is `.`); it binds every interface on that port (it has no
    host setting).
    """

    name = "iceberg-rest"
    start_timeout_s = 90.0

    def __init__(self, workdir: Path, heap: str = "256m", s3: dict[str, str] | None = None):
        super().__init__(workdir)
        self.heap = heap
        self.libs = DEPS / "iceberg-rest" / "libs"
        self.s3 = s3
        self.bucket = f"iceberg-rest-{self.port}"
        self.warehouse = self.workdir / "warehouse"

    def prepare(self) -> None:
        if not self.libs.is_dir():
            raise ComponentError(f"no Iceberg REST jars in {self.libs}: run scripts/setup")
        for stale in (self.workdir / "catalog.db", self.warehouse):
            if stale.is_dir():
                shutil.rmtree(stale)
            elif stale.exists():
                stale.unlink()
        self.warehouse.mkdir(parents=True)
        if self.s3:
            _s3_client(self.s3).create_bucket(Bucket=self.bucket)

    def command(self) -> list[str]:
        return [
            "java",
            f"-Xmx{self.heap}",
            "-XX:+UseSerialGC",
            "-Djava.awt.headless=true",
            "-cp",
            f"{self.libs}/*",
            "org.apache.iceberg.rest.RESTCatalogServer",
        ]

    def environment(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CATALOG_")}
        env.update(
            {
                "CATALOG_REST_PORT": str(self.port),
                "CATALOG_WAREHOUSE": self.warehouse_location,
                "CATALOG_URI": f"jdbc:sqlite:file:{self.workdir / 'catalog.db'}",
            }
        )
        if self.s3:
            env.update(
                {
                    "CATALOG_IO__IMPL": "org.apache.iceberg.aws.s3.S3FileIO",
                    "CATALOG_S3_ENDPOINT": f"http://{self.s3['WEIR_TEST_S3_ENDPOINT']}",
                    "CATALOG_S3_PATH__STYLE__ACCESS": "true",
                    "CATALOG_S3_ACCESS__KEY__ID": self.s3["WEIR_TEST_S3_ACCESS_KEY"],
                    "CATALOG_S3_SECRET__ACCESS__KEY": self.s3["WEIR_TEST_S3_SECRET_KEY"],
                    "CATALOG_CLIENT_REGION": self.s3["WEIR_TEST_S3_REGION"],
                    "AWS_REGION": self.s3["WEIR_TEST_S3_REGION"],
                }
            )
        return env

    @property
    def warehouse_location(self) -> str:
        return f"s3://{self.bucket}/warehouse" if self.s3 else str(self.warehouse)

    def ready(self) -> bool:
        return "endpoints" in _get_json(f"{self.uri}/v1/config")

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def settings(self) -> dict[str, str]:
        return {
            "WEIR_TEST_ICEBERG_REST_URI": self.uri,
            "WEIR_TEST_ICEBERG_REST_WAREHOUSE": self.warehouse_location,
        }


def _s3_client(s3: dict[str, str]):
    import boto3

    return boto3.client(
        "s3",
        endpoint_url=f"http://{s3['WEIR_TEST_S3_ENDPOINT']}",
        aws_access_key_id=s3["WEIR_TEST_S3_ACCESS_KEY"],
        aws_secret_access_key=s3["WEIR_TEST_S3_SECRET_KEY"],
        region_name=s3["WEIR_TEST_S3_REGION"],
    )


def find_java(minimum: int) -> str:
    """A `java` of at least version `minimum`: WEIR_JAVA<minimum>_HOME, JAVA_HOME, PATH's, or one
    under /usr/lib/jvm (newest first)."""
    candidates = []
    for var in (f"WEIR_JAVA{minimum}_HOME", "JAVA_HOME"):
        if os.environ.get(var):
            candidates.append(Path(os.environ[var]) / "bin" / "java")
    candidates.append(Path("java"))
    candidates += sorted(Path("/usr/lib/jvm").glob("*/bin/java"), reverse=True)
    for java in candidates:
        try:
            out = subprocess.run(
                [str(java), "-version"], capture_output=True, text=True, timeout=30
            ).stderr
        except (OSError, subprocess.TimeoutExpired):
            continue
        match = re.search(r'version "(\d+)', out)
        if match and int(match.group(1)) >= minimum:
            return str(java)
    raise ComponentError(
        f"no Java {minimum} or newer (tried {', '.join(map(str, candidates))}): "
        f"set WEIR_JAVA{minimum}_HOME"
    )


class Nessie(Component):
    """Project Nessie (in-memory version store) serving Iceberg REST under /iceberg.

    Nessie keeps table metadata and data in an object store: here a bucket of its own on the
    harness's moto S3, whose settings it needs before it starts (`requires`).
    """

    name = "nessie"
    start_timeout_s = 120.0
    requires = {"s3": "WEIR_TEST_S3_ENDPOINT"}

    def __init__(self, workdir: Path, heap: str = "384m"):
        super().__init__(workdir)
        self.heap = heap
        self.management_port = free_port()
        self.bucket = f"nessie-{self.port}"
        self.s3: dict[str, str] = {}

    def configure(self, settings: dict[str, str]) -> None:
        self.s3 = {k: v for k, v in settings.items() if k.startswith("WEIR_TEST_S3_")}

    def prepare(self) -> None:
        jars = sorted((DEPS / "nessie").glob("nessie-quarkus-*-runner.jar"))
        if not jars:
            raise ComponentError(f"no Nessie runner jar in {DEPS / 'nessie'}: run scripts/setup")
        if not self.s3:
            raise ComponentError("nessie needs the s3 component's settings (configure())")
        self.jar = jars[-1]
        self.java = find_java(21)
        _s3_client(self.s3).create_bucket(Bucket=self.bucket)

    def command(self) -> list[str]:
        s3 = self.s3
        props = {
            "quarkus.http.host": "127.0.0.1",
            "quarkus.http.port": self.port,
            "quarkus.management.host": "127.0.0.1",
            "quarkus.management.port": self.management_port,
            "quarkus.log.console.level": "WARN",
            "quarkus.log.category.\"io.quarkus\".level": "INFO",
            "nessie.version.store.type": "IN_MEMORY",
            "nessie.catalog.default-warehouse": "warehouse",
            "nessie.catalog.warehouses.warehouse.location": self.warehouse,
            "nessie.catalog.service.s3.default-options.endpoint": (
                f"http://{s3['WEIR_TEST_S3_ENDPOINT']}"
            ),
            "nessie.catalog.service.s3.default-options.path-style-access": "true",
            "nessie.catalog.service.s3.default-options.region": s3["WEIR_TEST_S3_REGION"],
            "nessie.catalog.service.s3.default-options.access-key": (
                "urn:nessie-secret:quarkus:weir-s3"
            ),
            "weir-s3.name": s3["WEIR_TEST_S3_ACCESS_KEY"],
            "weir-s3.secret": s3["WEIR_TEST_S3_SECRET_KEY"],
        }
        return (
            [self.java, f"-Xmx{self.heap}", "-XX:+UseSerialGC", "-Djava.awt.headless=true"]
            + [f"-D{k}={v}" for k, v in props.items()]
            + ["-jar", str(self.jar)]
        )

    def ready(self) -> bool:
        return "defaults" in _get_json(f"{self.uri}/v1/config")

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.port}/iceberg"

    @property
    def warehouse(self) -> str:
        return f"s3://{self.bucket}/warehouse"

    def settings(self) -> dict[str, str]:
        return {"WEIR_TEST_NESSIE_URI": self.uri, "WEIR_TEST_NESSIE_WAREHOUSE": self.warehouse}
