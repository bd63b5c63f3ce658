"""Command line of the test harness.

  python -m tests.harness run [--only kafka,postgres,...] -- COMMAND...
      start the components, run COMMAND with their WEIR_TEST_* settings in its environment,
      stop them; exits with COMMAND's code.
  python -m tests.harness up [--only ...]     start them for manual work and print the settings
  python -m tests.harness down                stop what `up` started
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path

from .components import COMPONENTS, DEPS
from .stack import Stack, raise_on_termination

STATE = DEPS / "dev-harness.json"


def parse_only(text: str | None) -> list[str]:
    return list(COMPONENTS) if not text else [n.strip() for n in text.split(",") if n.strip()]


def cmd_run(args: argparse.Namespace) -> int:
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        print("harness run: give a command after --", file=sys.stderr)
        return 2
    raise_on_termination()
    with Stack(parse_only(args.only)) as settings:
        print(f"[harness] started {', '.join(parse_only(args.only))}", file=sys.stderr)
        child = subprocess.Popen(command, env=dict(os.environ, **settings))
        try:
            return child.wait()
        finally:
            if child.poll() is None:  # interrupted: end the command before the components
                child.terminate()
                try:
                    child.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    child.kill()


def cmd_up(args: argparse.Namespace) -> int:
    if STATE.exists():
        print(f"[harness] already up ({STATE}); run `scripts/dev-down` first", file=sys.stderr)
        return 1
    stack = Stack(parse_only(args.only), keep=True)
    settings = stack.start()
    STATE.write_text(
        json.dumps(
            {
                "workdir": str(stack.workdir),
                "pgids": [c.process.pid for c in stack.components if c.process],
                "settings": settings,
            },
            indent=2,
        )
    )
    for key, value in settings.items():
        print(f"export {key}={shlex.quote(value)}")
    print(f"# logs under {stack.workdir}; stop with scripts/dev-down", file=sys.stderr)
    return 0


def cmd_down(_: argparse.Namespace) -> int:
    if not STATE.exists():
        print("[harness] nothing is up", file=sys.stderr)
        return 0
    state = json.loads(STATE.read_text())
    for pgid in reversed(state["pgids"]):
        try:
            os.killpg(pgid, signal.SIGINT)  # PostgreSQL's fast shutdown; a stop for the rest
        except ProcessLookupError:
            pass
    STATE.unlink()
    print(f"[harness] stopped; logs kept under {state['workdir']}", file=sys.stderr)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.harness")
    sub = parser.add_subparsers(dest="verb", required=True)
    run = sub.add_parser("run", help="run a command with the components up")
    run.add_argument("--only", help=f"comma-separated subset of {','.join(COMPONENTS)}")
    run.add_argument("command", nargs=argparse.REMAINDER)
    up = sub.add_parser("up", help="start the components and print their settings")
    up.add_argument("--only", help=f"comma-separated subset of {','.join(COMPONENTS)}")
    sub.add_parser("down", help="stop the components started by up")
    args = parser.parse_args()
    return {"run": cmd_run, "up": cmd_up, "down": cmd_down}[args.verb](args)


if __name__ == "__main__":
    sys.exit(main())
