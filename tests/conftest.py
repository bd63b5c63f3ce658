"""pytest fixtures for the harness components (session-scoped).

When the WEIR_TEST_* settings are already in the environment (scripts/test starts one harness
for ctest and pytest together), the fixtures use those components; otherwise each fixture
starts its component for the session and stops it at the end, also on failure or interrupt.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.harness.components import COMPONENTS, DEPS, ROOT
from tests.harness.stack import Stack

# When this worker's session began (conftest is imported as the session starts).
_SESSION_STARTED = time.monotonic()


def pytest_runtest_setup(item):
    """WEIR_PYTEST_BUDGET (seconds): once a session has run that long, every test not yet
    started fails at once, naming the budget. A run under a hard time limit (CI) then still
    ends with pytest's summary naming each failure, instead of being killed without one."""
    budget = os.environ.get("WEIR_PYTEST_BUDGET")
    if budget and time.monotonic() - _SESSION_STARTED > float(budget):
        pytest.fail(f"not run: the session's budget of {budget} s (WEIR_PYTEST_BUDGET) was "
                    "spent before this test started", pytrace=False)


# The settings variable that proves a component is already up, per component.
_MARKER = {
    "kafka": "WEIR_TEST_KAFKA_BOOTSTRAP",
    "postgres": "WEIR_TEST_PG_DSN",
    "s3": "WEIR_TEST_S3_ENDPOINT",
    "azure": "WEIR_TEST_AZURE_BLOB_AUTHORITY",
    "iceberg-rest": "WEIR_TEST_ICEBERG_REST_URI",
    "nessie": "WEIR_TEST_NESSIE_URI",
}


def _component(name: str, tmp_path_factory: pytest.TempPathFactory):
    if _MARKER[name] in os.environ:
        yield dict(os.environ)
        return
    # Components already up (named in the environment) serve as requirements (nessie's s3).
    stack = Stack(
        [name], workdir=tmp_path_factory.mktemp(f"harness-{name}"), given=dict(os.environ)
    )
    with stack as settings:
        yield settings


def _component_fixture(name: str):
    @pytest.fixture(scope="session", name=name.replace("-", "_"))
    def fixture(tmp_path_factory):
        yield from _component(name, tmp_path_factory)

    fixture.__doc__ = f"The harness's {name} component: its WEIR_TEST_* settings."
    return fixture


# One session fixture per component: kafka, postgres, s3, azure, iceberg_rest, nessie.
kafka = _component_fixture("kafka")
postgres = _component_fixture("postgres")
s3 = _component_fixture("s3")
azure = _component_fixture("azure")
iceberg_rest = _component_fixture("iceberg-rest")
nessie = _component_fixture("nessie")


@pytest.fixture(scope="session")
def build_dir() -> Path:
    """The CMake build tree under test (scripts/test sets WEIR_BUILD_DIR)."""
    path = Path(os.environ.get("WEIR_BUILD_DIR", ROOT / "build" / "debug"))
    assert (path / "weir").exists(), f"no weir binary in {path}: run scripts/build first"
    return path


@pytest.fixture(scope="session")
def duckdb_extension_dir() -> Path:
    return DEPS / "duckdb" / "extensions"


@pytest.fixture
def duck(duckdb_extension_dir):
    """A DuckDB connection that loads the pinned extensions from local files only."""
    import duckdb

    con = duckdb.connect(
        config={
            "extension_directory": str(duckdb_extension_dir),
            "autoinstall_known_extensions": False,
            "autoload_known_extensions": True,
        }
    )
    con.execute("SET TimeZone = 'UTC'")
    yield con
    con.close()


assert set(_MARKER) == set(COMPONENTS), "every harness component needs a settings marker"
