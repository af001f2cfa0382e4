"""``asyncio.wait_for`` whose timeout cannot come due before the call it gives up on has started,
however slow the machine: a test of "a timeout cancels a call under way" then never tests a call
cancelled before it was sent."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any


async def wait_for_once_started(
    awaitable: Awaitable[Any], started: Callable[[], Awaitable[object]], timeout: float
) -> Any:
    """``asyncio.wait_for(awaitable, timeout)``, with the running loop's clock held still until
    ``started()`` returns, so its timer cannot fire earlier. ``started`` must not wait on the
    loop's clock (no ``asyncio.sleep``): it polls in a thread or waits on an event. If it fails
    (the call never started), its error is raised once the clock runs again."""
    loop = asyncio.get_running_loop()
    held = loop.time()
    loop.time = lambda: held  # type: ignore[method-assign]

    async def release() -> None:
        try:
            await started()
        finally:
            del loop.time

    releasing = loop.create_task(release())
    try:
        return await asyncio.wait_for(awaitable, timeout)
    finally:
        await releasing
