"""Shared test helpers (the fixtures come from reconcile_kit's pytest plugin)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest


async def eventually(check: Callable[[], bool], timeout: float = 5.0) -> None:
    """Await ``check()`` becoming true, yielding to the event loop (fails after ``timeout``)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not check():
        if loop.time() > deadline:
            pytest.fail("condition not reached in time")
        await asyncio.sleep(0.005)
