"""The process table, read from /proc, for tests that check what is left running."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple


class Proc(NamedTuple):
    pid: int
    state: str  # "Z" for a zombie
    ppid: int
    pgid: int
    argv: list[bytes]


def processes() -> Iterator[Proc]:
    """Every process that can still be read (one may end while the table is read)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")[:-1]
        except OSError:
            continue
        state, ppid, pgid = stat[stat.rindex(")") + 2 :].split()[:3]
        yield Proc(int(entry), state, int(ppid), int(pgid), argv)


def alive(pid: int) -> bool:
    """Whether ``pid`` is a living process; a zombie counts as dead.

    Any error reading /proc means the process is gone: a process that ends between the open
    and the read makes the read fail with ESRCH, not ENOENT.
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2 :].split()[0] != "Z"


def gone(pids: list[int], within: float = 5.0) -> bool:
    """Whether every process in ``pids`` has ended (or is a zombie) within ``within`` seconds."""
    deadline = time.monotonic() + within
    while any(alive(p) for p in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def descendants(root: int) -> list[Proc]:
    """Every living (non-zombie) process below ``root`` in the parent tree."""
    table = [p for p in processes() if p.state != "Z"]
    below: list[Proc] = []
    parents = {root}
    grew = True
    while grew:
        grew = False
        for p in table:
            if p.ppid in parents and p.pid not in parents:
                parents.add(p.pid)
                below.append(p)
                grew = True
    return below


def in_groups(pgids: set[int]) -> list[Proc]:
    """Living processes whose process group is one of ``pgids`` (wherever their parent is)."""
    return [p for p in processes() if p.pgid in pgids and p.state != "Z"]
