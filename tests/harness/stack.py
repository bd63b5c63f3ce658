"""Starting and stopping a set of harness components together."""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .components import COMPONENTS, Component


class Stack:
    """Components started in parallel and stopped in reverse order, always.

    Use as a context manager: leaving the block (normally, by an exception, or by SIGTERM /
    SIGINT turned into KeyboardInterrupt) stops every component and removes the working
    directory unless `keep` is set (then the logs stay for inspection).
    """

    def __init__(
        self,
        names: list[str],
        workdir: Path | None = None,
        keep: bool = False,
        given: dict[str, str] | None = None,
    ):
        """`given`: settings of components already running (a requirement found there is used,
        not started); a requirement neither named nor given is started too."""
        unknown = [n for n in names if n not in COMPONENTS]
        if unknown:
            raise ValueError(f"unknown components {unknown}; known: {sorted(COMPONENTS)}")
        self.given = dict(given or {})
        self.names = list(names)
        for name in list(self.names):
            for needed, marker in COMPONENTS[name].requires.items():
                if needed not in self.names and marker not in self.given:
                    self.names.insert(0, needed)
        self.keep = keep or os.environ.get("WEIR_KEEP_HARNESS") == "1"
        self.workdir = workdir or Path(tempfile.mkdtemp(prefix="weir-harness-"))
        self.components: list[Component] = []

    def start(self) -> dict[str, str]:
        """Starts the components in waves: those whose requirements are up, in parallel."""
        pending = [COMPONENTS[name](self.workdir) for name in self.names]
        self.components = []
        while pending:
            up = {c.name for c in self.components}
            wave = [c for c in pending if all(
                _started_as(n, self.names, up) or m in self.given for n, m in c.requires.items()
            )]
            if not wave:
                raise ValueError(f"unmet requirements of {[c.name for c in pending]}")
            pending = [c for c in pending if c not in wave]
            self.components += wave
            settings = dict(self.given, **self.settings())
            for component in wave:
                component.configure(settings)
            with ThreadPoolExecutor(max_workers=max(1, len(wave))) as pool:
                futures = [pool.submit(c.start) for c in wave]
                errors = [f.exception() for f in futures]
            failures = [e for e in errors if e is not None]
            if failures:
                self.stop()
                raise failures[0]
        return self.settings()

    def settings(self) -> dict[str, str]:
        merged = {"WEIR_TEST_HARNESS_DIR": str(self.workdir)}
        for component in self.components:
            merged.update(component.settings())
        return merged

    def stop(self) -> None:
        for component in reversed(self.components):
            component.stop()
        if not self.keep:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> dict[str, str]:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def _started_as(name: str, names: list[str], up: set[str]) -> bool:
    """True when the component `name` is one the stack started (its class's name is up)."""
    return name in names and COMPONENTS[name].name in up


def raise_on_termination() -> None:
    """Turns SIGTERM (and SIGHUP) into KeyboardInterrupt so `with Stack(...)` cleans up."""

    def handler(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGHUP, handler)
