"""How an isolated tool runs: the ``Isolation`` limits and the checks of an ``isolate=`` setting.

A tool, a ``Toolkit`` or a ``RunPolicy`` reads these when it is made; the worker processes that
apply them are in :mod:`agentmaker.isolation.workers`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentmaker.errors import ToolConfigError

__all__ = ["DEFAULT", "Isolation", "check_importable", "setting"]


@dataclass(frozen=True, slots=True)
class Isolation:
    """How an isolated tool runs.

    - ``memory_mb``: the worker's address-space limit (``RLIMIT_AS``), in MiB; None: no limit.
      The interpreter itself needs some 100 MiB of address space, so very small values leave
      no room for the tool.
    - ``cpu_seconds``: CPU time one call may use (``RLIMIT_CPU``); None: no limit.
    - ``open_files``: the most file descriptors the worker may hold (``RLIMIT_NOFILE``).
    - ``workers``: idle workers kept per distinct ``Isolation`` (busy ones beyond it are started
      on demand and retired after their call).
    - ``warm``: workers started as soon as the first isolated call is made.
    - ``grace_seconds``: time between SIGTERM and SIGKILL when a worker is stopped.
    """

    memory_mb: int | None = None
    cpu_seconds: float | None = None
    open_files: int | None = None
    workers: int = 2
    warm: int = 1
    grace_seconds: float = 1.0

    def __post_init__(self) -> None:
        for field, value, low in (
            ("memory_mb", self.memory_mb, 1),
            ("open_files", self.open_files, 8),
        ):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < low):
                raise ToolConfigError(f"Isolation.{field} must be an integer >= {low} or None, got {value!r}")
        if self.cpu_seconds is not None and (
            isinstance(self.cpu_seconds, bool)
            or not isinstance(self.cpu_seconds, (int, float))
            or not self.cpu_seconds > 0
        ):
            raise ToolConfigError(
                f"Isolation.cpu_seconds must be a positive number or None, got {self.cpu_seconds!r}"
            )
        for field, value in (("workers", self.workers), ("warm", self.warm)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ToolConfigError(f"Isolation.{field} must be an integer >= 0, got {value!r}")
        if (
            isinstance(self.grace_seconds, bool)
            or not isinstance(self.grace_seconds, (int, float))
            or self.grace_seconds < 0
        ):
            raise ToolConfigError(
                f"Isolation.grace_seconds must be a number >= 0, got {self.grace_seconds!r}"
            )


DEFAULT = Isolation()


def setting(value: Any, where: str) -> Isolation | bool | None:
    """Checks an ``isolate=`` value: None (unset), a bool, or an Isolation."""
    if value is None or isinstance(value, (bool, Isolation)):
        return value
    raise ToolConfigError(f"{where}: isolate must be True, False, None or an Isolation, got {value!r}")


def check_importable(func: Any, name: str) -> None:
    """An isolated function tool is found by the worker through its module and qualified name."""
    qualname = getattr(func, "__qualname__", "") or ""
    module = getattr(func, "__module__", None)
    if "<locals>" in qualname or "<lambda>" in qualname or not module:
        raise ToolConfigError(
            f"tool '{name}' is isolated, so a worker process must be able to import its function, "
            f"but {qualname or func!r} is not defined at module level; move it to the top level of a module"
        )
