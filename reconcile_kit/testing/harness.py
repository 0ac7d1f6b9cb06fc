"""Running a controller in a test until a condition holds."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

from ..runtime.controller import Controller, ErrorPolicy, OnDelete, Reconcile

__all__ = ["run_until"]


async def run_until(
    controller: Controller,
    reconcile: Reconcile,
    condition: Callable[[], bool | Awaitable[bool]],
    *,
    timeout: float = 10.0,
    error_policy: ErrorPolicy | None = None,
    data: Any = None,
    on_delete: OnDelete | None = None,
    shutdown_timeout: float = 5.0,
) -> bool:
    """Run ``controller`` until ``condition()`` holds (checked after every reconcile) or
    ``timeout`` seconds pass, then shut it down. Returns whether the condition held.

    An error that stops ``controller.run`` (e.g. an unknown kind) is raised.
    """
    runner = asyncio.create_task(
        controller.run(reconcile, error_policy=error_policy, data=data, on_delete=on_delete)
    )
    waiter = asyncio.create_task(controller.wait_reconciled(condition, timeout))
    try:
        done, _ = await asyncio.wait({runner, waiter}, return_when=asyncio.FIRST_COMPLETED)
        if runner in done:
            waiter.cancel()
            runner.result()
            return False
        return waiter.result()
    finally:
        waiter.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await waiter
        await controller.shutdown(shutdown_timeout)
        await runner
