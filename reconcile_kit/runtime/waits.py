"""Waiting for the first of several awaitables: what a controller's start (its caches,
against its shutdown) and a manager's groups (leadership, a stop, a failure) wait on."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any

__all__ = ["first"]


async def first(*waits: Awaitable[Any]) -> bool:
    """Await the first of ``waits`` to finish (the others are cancelled, and awaited until
    they are); True when it was the first one. What they return or raise is dropped."""
    tasks = [asyncio.ensure_future(w) for w in waits]
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        return tasks[0] in done
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
