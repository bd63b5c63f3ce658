"""node-postgres against `weir serve` (issue 4, proof 5): a named prepared statement reused with
new values, and a parameterised INSERT reused, over TLS with SCRAM-SHA-256."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess

import pytest

from tests.e2e.test_serve import PASSWORD, duckdb_lake, start_serve
from tests.harness.components import DEPS, ROOT

NODE_MODULES = DEPS / "clients" / "node" / "node_modules"
SCRIPT = ROOT / "tests" / "clients" / "node" / "named_statements.js"


def thing(i: int) -> dict:
    """Row i of the table the lake starts with."""
    return {"id": i, "name": f"thing {i}", "score": i * 0.25,
            "note": None if i % 3 == 0 else f"note {i}", "flag": i % 2 == 0}


def select(*rows: dict) -> dict:
    return {"command": "SELECT", "rowCount": len(rows), "rows": list(rows)}


@pytest.fixture
def served_things(build_dir, tmp_path):
    if shutil.which("node") is None or not (NODE_MODULES / "pg").is_dir():
        pytest.fail("node or node-postgres missing: run scripts/setup")
    lake = duckdb_lake(tmp_path, "CREATE TABLE things AS SELECT range::INTEGER AS id, "
                                 "'thing ' || range AS name, range * 0.25::DOUBLE AS score, "
                                 "CASE WHEN range % 3 = 0 THEN NULL ELSE 'note ' || range END "
                                 "AS note, range % 2 = 0 AS flag FROM range(20)")
    port, process = start_serve(build_dir, lake, tmp_path)
    yield port
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == 0


def test_node_postgres_named_statements_reused_with_new_values(served_things):
    run = subprocess.run(
        ["node", str(SCRIPT)], capture_output=True, text=True, timeout=120,
        env=dict(os.environ, NODE_PATH=str(NODE_MODULES), WEIR_PORT=str(served_things),
                 WEIR_PASSWORD=PASSWORD))
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)

    # int parameter: ten executions, the last matching nothing.
    assert out["by_id"] == [select(thing(i)) for i in [0, 1, 2, 3, 4, 5, 17, 18, 19]] + [select()]
    # text parameter.
    assert out["by_name"] == [select({"id": 7}), select({"id": 12}), select(), select({"id": 0})]
    # int, text, float, boolean and NULL parameters come back as they went out.
    echo = [
        [1, "one", 1.5, True],
        [-2, "two", -0.125, False],
        [None, "three", 3.0, True],
        [4, None, 1e10, False],
        [5, "fünf", None, True],
        [6, "", 0.1, None],
        [2147483647, "max", -1e-7, False],
        [-2147483648, "quote ' here", 123456.789, True],
        [None, None, None, None],
        [10, "ten", 2.5, False],
    ]
    assert out["echo"] == [select(dict(zip("itfb", values))) for values in echo]
    # The INSERT reused five times: one row each, all of them readable afterwards.
    inserted = [
        {"id": 100, "name": "new 100", "score": 0.5, "note": "n100", "flag": True},
        {"id": 101, "name": "new 101", "score": -1.25, "note": None, "flag": False},
        {"id": 102, "name": "new '102'", "score": 1e6, "note": "n102", "flag": None},
        {"id": 103, "name": "new 103", "score": None, "note": "n103", "flag": True},
        {"id": 104, "name": "new 104", "score": 4.75, "note": "n104", "flag": False},
    ]
    assert out["insert"] == [{"command": "INSERT", "rowCount": 1, "rows": []}] * 5
    assert out["inserted"] == select(*inserted)
    # The statement prepared before the INSERTs sees the new rows.
    assert out["by_id_after_insert"] == select(inserted[3])

    # Each name was parsed once on the wire and then only bound: 30 executions, 4 Parse.
    assert out["messages"] == {
        "parse": {"thing_by_id": 1, "thing_by_name": 1, "echo_types": 1, "add_thing": 1},
        "bind": 10 + 4 + 10 + 5 + 1,
    }
