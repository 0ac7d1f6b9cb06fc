"""Running a controller in a test until a condition holds, and ``eventually``:
awaiting any condition with a deadline."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any

from ..runtime.controller import Controller, ErrorPolicy, OnDelete, Reconcile

__all__ = ["eventually", "run_until"]


async def run_until(
    controller: Controller,
    reconcile: Reconcile,
    condition: Callable[[], bool | Awaitable[bool]],
    *,
    timeout: float = 10.0,
    error_policy: ErrorPolicy | None = None,
    data: Any = None,  # Any: the user's, handed back as ctx.data as they typed it
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


async def eventually(
    check: Callable[[], bool | Awaitable[bool]],
    timeout: float = 5.0,
    *,
    interval: float = 0.005,
    what: str | None = None,
) -> None:
    """Await ``check()`` holding, polling it until ``timeout`` seconds pass.

    Args:
        check: a function returning a bool, or an awaitable of one (an ``async def``
            re-reading objects from the API server, say). Called at once, then after every
            ``interval``; its exceptions propagate.
        timeout: seconds until giving up, counting the time spent inside ``check`` too (a
            check that hangs is cancelled at the deadline). Measured on the event loop's
            clock (looptime's virtual one in looptime tests) and on the wall clock,
            whichever passes first: polling with ``interval=0`` lets no loop time pass.
        interval: seconds to sleep between two checks; 0 only yields to the event loop.
        what: a description of the awaited condition, for the failure message (default:
            the check's name).

    Raises:
        AssertionError: ``check()`` did not hold within ``timeout`` seconds; the message
            names what was awaited. Plain ``AssertionError`` (no pytest needed), so a
            test fails in seconds instead of hanging.
    """
    name = what or getattr(check, "__qualname__", repr(check))
    failure = f"timed out after {timeout} s awaiting {name}"
    wall_deadline = time.monotonic() + timeout
    deadline = asyncio.timeout(timeout)
    try:
        async with deadline:
            while True:
                result = check()
                if inspect.isawaitable(result):
                    result = await result
                if result:
                    return
                if time.monotonic() > wall_deadline:
                    raise AssertionError(failure)
                await asyncio.sleep(interval)
    except TimeoutError:
        if not deadline.expired():
            raise  # a TimeoutError from check() itself
        raise AssertionError(failure) from None
