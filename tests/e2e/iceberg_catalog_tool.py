"""Helpers of the Iceberg catalog tests: the C++ catalog tool and pyiceberg, side by side."""

from __future__ import annotations

import json
import subprocess
import time
import uuid
from pathlib import Path

import pyarrow as pa


def tool_path(build_dir: Path) -> Path:
    path = build_dir / "src" / "lake" / "iceberg" / "tests" / "iceberg_catalog_tool"
    assert path.exists(), f"{path} is missing: run scripts/build"
    return path


def run_tool(build_dir: Path, *args: str, timeout: float = 60) -> dict:
    """Runs one catalog call; returns its JSON result (with the seconds it took, and the results
    of every repetition under `lines`)."""
    started = time.monotonic()
    proc = subprocess.run(
        [str(tool_path(build_dir)), *args], capture_output=True, text=True, timeout=timeout
    )
    assert proc.stdout.strip(), f"no output (exit {proc.returncode}): {proc.stderr}"
    # weir's log lines (e.g. a SQLite catalog switched to WAL) may come before the results.
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    result = lines[-1]
    assert result["ok"] == (proc.returncode == 0), (proc.returncode, result)
    result["lines"] = lines  # one per call when the tool repeats it
    result["seconds"] = time.monotonic() - started
    return result


SCHEMA = {
    "type": "struct",
    "schema-id": 0,
    "fields": [
        {"id": 1, "name": "id", "required": True, "type": "long"},
        {"id": 2, "name": "v", "required": False, "type": "string"},
    ],
}


def rows(n: int, start: int = 0) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(start, start + n), pa.int64()),
            "v": pa.array([f"v{i}" for i in range(start, start + n)], pa.string()),
        },
        schema=pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("v", pa.string())]),
    )


def minimal_v2_metadata(location: str) -> dict:
    """A valid format-version 2 table metadata with no snapshot, written by the test."""
    return {
        "format-version": 2,
        "table-uuid": str(uuid.uuid4()),
        "location": location,
        "last-sequence-number": 0,
        "last-updated-ms": int(time.time() * 1000),
        "last-column-id": 2,
        "current-schema-id": 0,
        "schemas": [SCHEMA],
        "default-spec-id": 0,
        "partition-specs": [{"spec-id": 0, "fields": []}],
        "last-partition-id": 999,
        "default-sort-order-id": 0,
        "sort-orders": [{"order-id": 0, "fields": []}],
        "properties": {"written-by": "weir-test"},
        "snapshots": [],
        "snapshot-log": [],
        "metadata-log": [],
        "refs": {},
    }


def snapshot_commit(metadata: dict, table_uuid: str, parent_id: int, new_id: int) -> dict:
    """Requirements and updates that add a snapshot on top of `parent_id` (sharing its
    manifest list, so the data stays the same) and point main at it."""
    parent = next(s for s in metadata["snapshots"] if s["snapshot-id"] == parent_id)
    return {
        "requirements": [
            {"type": "assert-table-uuid", "uuid": table_uuid},
            {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": parent_id},
        ],
        "updates": [
            {
                "action": "add-snapshot",
                "snapshot": {
                    "snapshot-id": new_id,
                    "parent-snapshot-id": parent_id,
                    "sequence-number": metadata["last-sequence-number"] + 1,
                    "timestamp-ms": int(time.time() * 1000),
                    "manifest-list": parent["manifest-list"],
                    "summary": {"operation": "append", "weir.commit-id": f"c-{new_id}"},
                    "schema-id": metadata["current-schema-id"],
                },
            },
            {
                "action": "set-snapshot-ref",
                "ref-name": "main",
                "type": "branch",
                "snapshot-id": new_id,
            },
        ],
    }
