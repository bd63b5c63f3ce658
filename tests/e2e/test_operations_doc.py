"""Every command of docs/OPERATIONS.md marked runnable is run (issue 17).

A fenced block whose info string is `sh runnable` is run with `bash -euo pipefail`, in the
order of the file, in one scratch directory shared by all of them, with the weir under test and
helm on PATH, `$WEIR_REPO` the checkout and `$KAFKA_BOOTSTRAP` the harness's broker (topic
`events` created). A `text output` block right after one lists lines its output must contain.
The test fails on a non-zero exit, a missing line, or a doc with no runnable block."""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from confluent_kafka.admin import AdminClient

from tests.e2e.weir_run import create_topic
from tests.harness.components import DEPS, ROOT

DOC = ROOT / "docs" / "OPERATIONS.md"
FENCE = re.compile(r"^(?P<indent> *)```(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=indent)```[ \t]*$",
                   re.M | re.S)


@dataclass
class Block:
    line: int
    script: str
    expected: list[str] = field(default_factory=list)


def dedent(body: str, indent: str) -> str:
    return "".join(l[len(indent):] if l.startswith(indent) else l
                   for l in body.splitlines(keepends=True))


def runnable_blocks(text: str) -> list[Block]:
    blocks: list[Block] = []
    last_end = None
    for match in FENCE.finditer(text):
        info = match.group("info").split()
        body = dedent(match.group("body"), match.group("indent"))
        line = text.count("\n", 0, match.start()) + 1
        between = text[last_end:match.start()] if last_end is not None else None
        if info == ["sh", "runnable"]:
            blocks.append(Block(line, body))
        elif info == ["text", "output"]:
            # It belongs to the runnable block just before it (only blank lines between).
            assert blocks and between is not None and not between.strip(), (
                f"OPERATIONS.md:{line}: a `text output` block must follow a runnable block")
            blocks[-1].expected += [l.strip() for l in body.splitlines() if l.strip()]
        last_end = match.end()
    return blocks


def test_the_parser_finds_blocks_and_their_outputs():
    text = ("a\n```sh runnable\necho hi\n```\n\n```text output\nhi\n```\n"
            "  ```sh runnable\n  echo indented\n  ```\n```sh\nnot run\n```\n")
    blocks = runnable_blocks(text)
    assert [(b.script, b.expected) for b in blocks] == [("echo hi\n", ["hi"]),
                                                        ("echo indented\n", [])]


def test_every_runnable_command_of_operations_md_runs(kafka, build_dir, tmp_path):
    blocks = runnable_blocks(DOC.read_text())
    assert len(blocks) >= 6, "OPERATIONS.md lost its runnable blocks"
    bootstrap = kafka["WEIR_TEST_KAFKA_BOOTSTRAP"]
    if "events" not in AdminClient({"bootstrap.servers": bootstrap}).list_topics(
            timeout=10).topics:
        create_topic(bootstrap, "events", 2)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WEIR_", "KAFKA_",
                                                                       "DUCKLAKE_", "MILLPOND_"))}
    env.update({
        "PATH": f"{build_dir}:{DEPS / 'go' / 'bin'}:{env.get('PATH', '/usr/bin:/bin')}",
        "WEIR_REPO": str(ROOT),
        "KAFKA_BOOTSTRAP": bootstrap,
        "HOME": str(tmp_path),
        "TMPDIR": str(tmp_path),
    })
    work = tmp_path / "work"
    work.mkdir()
    for block in blocks:
        result = subprocess.run(["bash", "-euo", "pipefail", "-c", block.script], cwd=work,
                                env=env, capture_output=True, text=True, timeout=600)
        output = result.stdout + result.stderr
        where = f"OPERATIONS.md:{block.line}:\n{block.script}\n--- output ---\n{output[-4000:]}"
        assert result.returncode == 0, where
        for expected in block.expected:
            assert expected in output, f"missing {expected!r} in the output of {where}"


def test_every_test_the_recovery_table_names_exists():
    """The failures OPERATIONS.md says are proven name real tests."""
    references = re.findall(r"`(test_\w+\.py)::(\w+|\*)`", DOC.read_text())
    assert len(references) >= 10
    for file, name in references:
        path = ROOT / "tests" / "e2e" / file
        assert path.exists(), f"OPERATIONS.md names {file}, which does not exist"
        if name != "*":
            assert re.search(rf"^def {name}\(", path.read_text(), re.M), (
                f"OPERATIONS.md names {file}::{name}, which does not exist")
