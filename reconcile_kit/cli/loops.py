"""The event loop ``reconcile-kit run`` runs the manager on.

``asyncio`` (the default) is asyncio's own loop; ``uvloop`` needs the
``reconcile-kit[uvloop]`` extra; ``auto`` takes uvloop when it is installed and asyncio's
loop otherwise, as uvicorn's ``--loop auto`` does. Not uvloop by default: the sharding
chaos test (tests/manager/test_sharding_processes.py) failed 5 times in 16 with its
replicas on uvloop and passed 5 of 5 on asyncio's loop (longer change waits, one stale
reconcile overlapping its owner's; see CHANGELOG). asyncio's loop and its TLS transport
are Python, uvloop's are C: on the real control plane uvloop took a median 7% less CPU
per reconcile (17 interleaved pairs, 0.75-1.17 of asyncio's; benchmarks/run.py, scenario
converge-uvloop; README "Performance"). Library users choose their loop themselves
(``uvloop.run(...)``).
"""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import click

__all__ = ["LOOPS", "loop_factory", "run_on"]

LOOPS = ("auto", "asyncio", "uvloop")

T = TypeVar("T")


def loop_factory(name: str) -> Callable[[], asyncio.AbstractEventLoop]:
    """A factory of new event loops of ``name`` (one of :data:`LOOPS`).

    Raises:
        ValueError: ``name`` is not one of :data:`LOOPS`.
        click.UsageError: ``uvloop`` asked for and not installed (naming the extra).
    """
    if name not in LOOPS:
        raise ValueError(f"loop must be one of {LOOPS}, got {name!r}")
    if name == "asyncio" or (name == "auto" and importlib.util.find_spec("uvloop") is None):
        return asyncio.new_event_loop
    try:
        import uvloop
    except ImportError as error:
        raise click.UsageError(
            f"--loop uvloop: uvloop is not installed ({error}); pip install 'reconcile-kit[uvloop]'"
        ) from None
    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory


def run_on(name: str, main: Coroutine[Any, Any, T]) -> T:
    """Run ``main`` to completion on a new event loop of ``name`` (:func:`loop_factory`),
    as ``asyncio.run`` does (the loop closed after, its async generators shut down)."""
    try:
        factory = loop_factory(name)
    except BaseException:
        main.close()  # never awaited: no "coroutine was never awaited" warning
        raise
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(main)
