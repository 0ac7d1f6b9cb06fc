"""The controllers a :class:`~reconcile_kit.manager.Manager` runs, and running a group of
them: start, notice one failing, stop (draining), as the manager's leader-elected,
sharded and unconditional groups all do (controller-runtime's runnable groups).

:class:`RunnableGroups` sorts the entries once by where they run; :func:`run_together`
runs the manager's parts (the leader-elected group, the ring membership) in one
``asyncio.TaskGroup``; :func:`warmed` warms a group's caches while it waits.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..runtime.controller import Controller, ErrorPolicy, OnDelete, Reconcile
from ..runtime.waits import first

if TYPE_CHECKING:
    from .leaderelection import LeaderElection

log = logging.getLogger("reconcile_kit.manager.manager")  # its lines read as the manager's

__all__ = [
    "Entry",
    "RunnableGroups",
    "failure",
    "fence_by",
    "first",
    "raise_failures",
    "run_together",
    "shutdown",
    "start",
    "stepping_down_timeout",
    "warm",
    "warmed",
]


@dataclass
class Entry:
    """One controller added to a manager, with what it runs and its task while it runs."""

    controller: Controller
    reconcile: Reconcile
    error_policy: ErrorPolicy | None
    data: object
    on_delete: OnDelete | None
    needs_leader: bool
    sharded: bool | None = None
    task: asyncio.Task[None] | None = None
    drains_reported: int = 0


@dataclass
class RunnableGroups:
    """A manager's entries by where they run, sorted once when it starts.

    Attributes:
        every_replica: run on every replica from the start (``needs_leader=False``, or no
            leader election), outside any ring.
        leader_only: run while this replica holds the leadership Lease.
        sharded: run while this replica is a member of the ring.
    """

    every_replica: list[Entry] = field(default_factory=list)
    leader_only: list[Entry] = field(default_factory=list)
    sharded: list[Entry] = field(default_factory=list)

    @classmethod
    def of(cls, entries: Sequence[Entry], leader_election: bool, sharding: bool) -> RunnableGroups:
        """Sort ``entries``: with ``sharding``, those not ``sharded=False`` are sharded;
        of the rest, those needing the leader are leader-only when ``leader_election``."""
        groups = cls()
        for entry in entries:
            if sharding and entry.sharded is not False:
                groups.sharded.append(entry)
            elif entry.needs_leader and leader_election:
                groups.leader_only.append(entry)
            else:
                groups.every_replica.append(entry)
        return groups


async def run_together(parts: Sequence[Awaitable[None]], stop: asyncio.Event) -> None:
    """Run ``parts`` in one ``asyncio.TaskGroup`` until all return. The first to fail sets
    ``stop`` (the others stop gracefully, as on :meth:`Manager.stop`, instead of being
    cancelled as a TaskGroup would) and its error is raised once all are done.

    Raises:
        Exception: the first part's error.
    """
    errors: list[BaseException] = []

    async def part(work: Awaitable[None]) -> None:
        try:
            await work
        except Exception as err:
            errors.append(err)
            stop.set()

    async with asyncio.TaskGroup() as group:
        for work in parts:
            group.create_task(part(work))
    if errors:
        raise errors[0]


def start(entries: list[Entry]) -> None:
    """Run each entry's controller in a task of its own."""
    for entry in entries:
        entry.task = asyncio.create_task(
            entry.controller.run(
                entry.reconcile,
                error_policy=entry.error_policy,
                data=entry.data,
                on_delete=entry.on_delete,
            )
        )


async def failure(entries: list[Entry]) -> None:
    """Return when any of ``entries``' controllers stops on its own (an error)."""
    tasks = [e.task for e in entries if e.task is not None]
    if tasks:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    else:
        await asyncio.Event().wait()


def raise_failures(entries: list[Entry]) -> None:
    """Raise RuntimeError (from the controller's error) for the first that failed."""
    for entry in entries:
        task = entry.task
        if task is not None and task.done() and not task.cancelled() and task.exception():
            raise RuntimeError(f"controller {entry.controller.name} failed") from (task.exception())


async def shutdown(entries: list[Entry], timeout: float) -> None:
    """Stop ``entries``' controllers: running reconciles get ``timeout`` seconds."""
    running = [e for e in entries if e.task is not None]
    stopping = []
    for entry in running:
        assert entry.task is not None
        if entry.task.done():
            continue
        if entry.controller.running:
            stopping.append(entry.controller.shutdown(timeout))
        else:
            entry.task.cancel()  # not started yet: nothing to drain
    await asyncio.gather(*stopping, return_exceptions=True)
    for entry in running:
        assert entry.task is not None
        await asyncio.gather(entry.task, return_exceptions=True)
        if entry.task.cancelled() or entry.task.exception() is None:
            entry.task = None


def stepping_down_timeout(graceful_shutdown_timeout: float, election: LeaderElection) -> float:
    """Seconds running reconciles get when ``election``'s Lease is lost (not a graceful
    stop): half the margin between the renew deadline and the Lease's expiry, so that they
    end before another replica can take over; at most ``graceful_shutdown_timeout``, at
    least 0.1."""
    margin = (election.lease_duration - election.renew_deadline) / 2
    return max(min(graceful_shutdown_timeout, margin), 0.1)


def fence_by(entries: list[Entry], election: LeaderElection, holder: str) -> None:
    """Fence the writes of ``entries``' controllers by ``election``'s Lease (see
    :mod:`reconcile_kit.client.fencing`); ``holder`` names it in messages."""
    for entry in entries:
        entry.controller.lease = election.holds_lease
        entry.controller.lease_holder = holder


async def warm(entries: list[Entry], cools: list[Callable[[], Awaitable[None]]]) -> None:
    """Warm the caches of ``entries``' controllers while this replica waits for leadership
    (see :meth:`~reconcile_kit.runtime.controller.Controller.warm`), adding to ``cools``
    what releases them. A failure only costs the warm start: logged, not raised."""
    for entry in entries:
        try:
            cools.append(await entry.controller.warm())
        except asyncio.CancelledError:
            raise
        except Exception:
            log.warning("%s: warming its caches failed", entry.controller.name, exc_info=True)


@contextlib.asynccontextmanager
async def warmed(entries: list[Entry]) -> AsyncIterator[None]:
    """Warm ``entries``' caches in the background (:func:`warm`) while the ``async with``
    block runs; at its end stop warming and release what was warmed."""
    cools: list[Callable[[], Awaitable[None]]] = []
    warming = asyncio.create_task(warm(entries, cools))
    try:
        yield
    finally:
        warming.cancel()
        await asyncio.gather(warming, return_exceptions=True)
        for cool in cools:
            await cool()
