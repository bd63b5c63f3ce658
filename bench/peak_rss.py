"""A child's peak RSS, measured by GNU time (/usr/bin/time, Debian's `time`).

wait4's ru_maxrss is not the child's own: Linux carries the high-water mark across execve, so a
child forked from a Python process that holds pyiceberg and DuckDB reports at least that
process's RSS. GNU time forks the child from its own small process, so its %M is the child's.
"""

from __future__ import annotations

from pathlib import Path

TIME = "/usr/bin/time"


def measured(args: list[str], report: Path) -> list[str]:
    """`args` run under GNU time, which writes the peak RSS (KiB) to `report`."""
    if not Path(TIME).exists():
        raise SystemExit(f"{TIME} is missing: run scripts/setup (Debian's `time`)")
    return [TIME, "-f", "%M", "-o", str(report), *args]


def peak_rss_kib(report: Path) -> int:
    """The peak RSS GNU time wrote (its last line: a line before it may say the exit status)."""
    return int(report.read_text().strip().splitlines()[-1])


def signal_child(time_pid: int, sig: int) -> None:
    """Sends `sig` to the program GNU time runs (time itself does not pass signals on)."""
    import os

    children = Path(f"/proc/{time_pid}/task/{time_pid}/children").read_text().split()
    for pid in children:
        os.kill(int(pid), sig)
