"""Iceberg lakes on S3 (moto) and Azure Blob (azurite) for the end-to-end tests: the weir
settings that put a lake there, and the same access for the readers (pyiceberg's FileIO
properties, DuckDB's secrets, Spark's S3FileIO)."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.weir_run import unique


def fresh_container(azure: dict) -> str:
    """A new container on the harness's azurite."""
    from pyarrow import fs

    container = unique("cont").replace("_", "-")
    azure_fs(azure).create_dir(container)
    return container


def azure_fs(azure: dict):
    from pyarrow import fs

    authority = azure["WEIR_TEST_AZURE_BLOB_AUTHORITY"]
    return fs.AzureFileSystem(
        account_name=azure["WEIR_TEST_AZURE_ACCOUNT"], account_key=azure["WEIR_TEST_AZURE_KEY"],
        blob_storage_authority=authority, blob_storage_scheme="http",
        dfs_storage_authority=authority, dfs_storage_scheme="http")


def s3_settings(bucket: dict) -> dict[str, str]:
    return {
        "WEIR_STORAGE_S3_ACCESS_KEY_ID": bucket["access_key"],
        "WEIR_STORAGE_S3_SECRET_ACCESS_KEY": bucket["secret_key"],
        "WEIR_STORAGE_S3_REGION": bucket["region"],
        "WEIR_STORAGE_S3_ENDPOINT": bucket["endpoint"],
        "WEIR_STORAGE_S3_USE_SSL": "false",
        "WEIR_STORAGE_S3_URL_STYLE": "path",
    }


def azure_settings(azure: dict) -> dict[str, str]:
    return {
        "WEIR_STORAGE_AZURE_ACCOUNT_NAME": azure["WEIR_TEST_AZURE_ACCOUNT"],
        "WEIR_STORAGE_AZURE_ACCOUNT_KEY": azure["WEIR_TEST_AZURE_KEY"],
        "WEIR_STORAGE_AZURE_ENDPOINT": f"http://{azure['WEIR_TEST_AZURE_BLOB_AUTHORITY']}",
    }


def duck_s3_secret(duck, bucket: dict) -> None:
    duck.execute("LOAD httpfs")
    duck.execute(
        "CREATE OR REPLACE SECRET weir_s3 (TYPE s3, KEY_ID '{}', SECRET '{}', REGION '{}', "
        "ENDPOINT '{}', USE_SSL false, URL_STYLE 'path')".format(
            bucket["access_key"], bucket["secret_key"], bucket["region"], bucket["endpoint"]))


def duck_azure_secret(duck, azure: dict) -> None:
    account = azure["WEIR_TEST_AZURE_ACCOUNT"]
    url = f"http://{azure['WEIR_TEST_AZURE_BLOB_AUTHORITY']}/{account}"
    connection = (f"DefaultEndpointsProtocol=http;AccountName={account};"
                  f"AccountKey={azure['WEIR_TEST_AZURE_KEY']};BlobEndpoint={url};"
                  f"DfsEndpoint={url};")
    duck.execute("LOAD azure")
    duck.execute(f"CREATE OR REPLACE SECRET weir_azure (TYPE azure, CONNECTION_STRING "
                 f"'{connection}')")


class StoredLake:
    """An Iceberg lake whose files are local, on a moto bucket or an azurite container, in the
    embedded SQL catalog (SQLite under `root`) or a REST catalog; `root` is weir's directory."""

    def __init__(self, root: Path, catalog: str, storage: str, namespace: str, *,
                 rest_uri: str = "", bucket: dict | None = None, azure: dict | None = None,
                 container: str = ""):
        self.root = root
        self.catalog_kind = catalog
        self.storage = storage
        self.namespace = namespace
        self.rest_uri = rest_uri
        self.bucket = bucket or {}
        self.azure = azure or {}
        self.container = container

    @property
    def warehouse(self) -> str:
        if self.storage == "s3":
            return f"s3://{self.bucket['bucket']}/warehouse"
        if self.storage == "azure":
            # pyiceberg's PyArrowFileIO reads Azure locations in this form only (the account
            # comes from the settings); DuckDB reads both.
            return f"abfss://{self.container}/warehouse"
        return str((self.root / "weir-lake" / "warehouse").resolve())

    def env(self) -> dict[str, str]:
        env = {"WEIR_LAKE_FORMAT": "iceberg", "WEIR_SCHEMA": self.namespace}
        if self.catalog_kind == "rest":
            env.update({"WEIR_ICEBERG_CATALOG": "rest", "WEIR_ICEBERG_URI": self.rest_uri})
        elif self.storage != "local":
            env["WEIR_ICEBERG_WAREHOUSE"] = self.warehouse
        if self.storage == "s3":
            env.update(s3_settings(self.bucket))
        if self.storage == "azure":
            env.update(azure_settings(self.azure))
        return env

    def properties(self) -> dict[str, str]:
        """pyiceberg's FileIO properties for the storage."""
        if self.storage == "s3":
            return {"s3.endpoint": f"http://{self.bucket['endpoint']}",
                    "s3.access-key-id": self.bucket["access_key"],
                    "s3.secret-access-key": self.bucket["secret_key"],
                    "s3.region": self.bucket["region"], "s3.force-virtual-addressing": "false"}
        if self.storage == "azure":
            authority = self.azure["WEIR_TEST_AZURE_BLOB_AUTHORITY"]
            return {"adls.account-name": self.azure["WEIR_TEST_AZURE_ACCOUNT"],
                    "adls.account-key": self.azure["WEIR_TEST_AZURE_KEY"],
                    "adls.blob-storage-authority": authority,
                    "adls.blob-storage-scheme": "http",
                    "adls.dfs-storage-authority": authority,
                    "adls.dfs-storage-scheme": "http",
                    "py-io-impl": "pyiceberg.io.pyarrow.PyArrowFileIO"}
        return {}

    def catalog(self):
        if self.catalog_kind == "rest":
            from pyiceberg.catalog.rest import RestCatalog

            return RestCatalog("rest", uri=self.rest_uri, **self.properties())
        from pyiceberg.catalog.sql import SqlCatalog

        lake = self.root / "weir-lake"
        warehouse = self.warehouse if self.storage != "local" else Path(self.warehouse).as_uri()
        return SqlCatalog("weir", uri=f"sqlite:///{lake / 'catalog.db'}", warehouse=warehouse,
                          **self.properties())

    def table(self, name: str):
        return self.catalog().load_table((self.namespace, name))

    def count(self, name: str) -> int:
        try:
            snapshot = self.table(name).current_snapshot()
        except Exception:  # no catalog, namespace or table yet
            return 0
        if snapshot is None:
            return 0
        return int(snapshot.summary.additional_properties.get("total-records", 0))

    def reader(self, duck):
        """`duck` with this lake's secret."""
        if self.storage == "s3":
            duck_s3_secret(duck, self.bucket)
        if self.storage == "azure":
            duck_azure_secret(duck, self.azure)
        return duck
