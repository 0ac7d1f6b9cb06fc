"""A replica's part in its ring: the runnable a :class:`~reconcile_kit.manager.Manager`
with ``sharding=`` starts beside its other controllers.

:class:`RingMember` holds this replica's membership Lease and runs the sharded
controllers while it does (their shard side is :class:`~reconcile_kit.runtime.sharding.ShardSide`),
campaigns for the ring's sharder and runs the :class:`~.assigner.Assigner` while elected,
and on a graceful stop hands the replica's objects over and leaves the ring. The manager
knows nothing else of shards.
"""

from __future__ import annotations

import asyncio
import logging
import time

from kr8s.asyncio import Api

from ...meta.objects import ObjectRef
from ..entries import (
    Entry,
    failure,
    fence_by,
    first,
    raise_failures,
    shutdown,
    start,
    stepping_down_timeout,
    warmed,
)
from ..leaderelection import LeaderElection
from ..metrics import Metrics
from . import ring
from .assigner import Assigner, ShardedKind
from .config import Sharding
from .membership import LEAVING_ANNOTATION, RingView, membership_election

__all__ = ["RingMember"]

log = logging.getLogger("reconcile_kit.manager.manager")  # its lines read as the manager's


class RingMember:
    """This replica's membership of ``sharding``'s ring, running ``entries`` (the sharded
    controllers) while a member, until ``stop`` is set.

    Args:
        sharding: the ring's settings.
        entries: the manager's sharded controllers.
        api: the manager's kr8s asyncio Api.
        stop: set on a graceful stop (the manager's).
        metrics: the manager's metrics (``reconcile_kit_shard_*``).
        name: the manager's name, in logs.
        graceful_shutdown_timeout: seconds running reconciles get on a graceful stop.

    Attributes:
        member: whether the sharded controllers run (this replica is in the ring).
        membership: the election of this replica's membership Lease while :meth:`run` runs.
        assigner: the ring's sharder while it runs here, else None.
    """

    def __init__(
        self,
        sharding: Sharding,
        entries: list[Entry],
        *,
        api: Api,
        stop: asyncio.Event,
        metrics: Metrics,
        name: str,
        graceful_shutdown_timeout: float,
    ) -> None:
        self.sharding = sharding
        self.entries = entries
        self.member = False
        self.membership: LeaderElection | None = None
        self.assigner: Assigner | None = None
        self.api = api
        self.stop = stop
        self.metrics = metrics
        self.name = name
        self.graceful_shutdown_timeout = graceful_shutdown_timeout

    async def run(self) -> None:
        """Be a member of the ring and run the sharded controllers while one; campaign for
        the ring's sharder alongside. On a graceful stop: hand the objects over to the
        other members (see :meth:`_hand_over`), stop the controllers, release the
        membership Lease (the sharder moves what is left directly), then stop the
        sharder (see :meth:`_leave`)."""
        sharding, entries = self.sharding, self.entries
        ring, identity = sharding.ring, sharding.identity
        membership = self.membership = membership_election(sharding)
        gauge = self.metrics.shard.member.labels(ring, identity)
        membership.on_status_change.append(lambda member: gauge.set(1 if member else 0))
        fence_by(entries, membership, f"membership Lease {sharding.member_lease}")
        view = RingView(
            self.api,
            ring,
            sharding.namespace,
            retry_period=sharding.retry_period,
            rejoin_grace=sharding.rejoin_grace,
        )
        sharder_done = asyncio.Event()
        kinds = [
            ShardedKind(
                e.controller.kind,
                e.controller.namespace,
                e.controller.label_selector,
                e.controller.field_selector,
            )
            for e in entries
        ]
        stepping_down = stepping_down_timeout(self.graceful_shutdown_timeout, membership)
        try:
            if not await first(view.start(), self.stop.wait()):
                return
            # warm: the share's watches run before joining and between memberships
            async with warmed(entries), membership.campaign(self.api, self.stop.is_set):
                sharder = asyncio.create_task(
                    self._run_sharder(sharding, view, kinds, sharder_done)
                )
                try:
                    await self._serve(sharding, membership, view, stepping_down)
                finally:
                    await shutdown(entries, stepping_down)
                    self.member = False
                    sharder_done.set()
                    await asyncio.gather(sharder, return_exceptions=True)
        finally:
            await view.stop()

    async def _serve(
        self, sharding: Sharding, membership: LeaderElection, view: RingView, stepping_down: float
    ) -> None:
        """Run the sharded controllers while a member, until :attr:`stop` (handing the
        objects over then) or a failure; rejoin after losing the membership Lease."""
        entries = self.entries
        while not self.stop.is_set():
            if not await first(membership.leading(), self.stop.wait()):
                break
            log.info(
                "%s: joined ring %s as %s; starting sharded controllers",
                self.name,
                sharding.ring,
                sharding.identity,
            )
            self.member = True
            start(entries)
            stopped = await first(self.stop.wait(), membership.lost(), failure(entries))
            if stopped:
                await self._hand_over(sharding, membership, view, entries)
            await shutdown(entries, self.graceful_shutdown_timeout if stopped else stepping_down)
            self.member = False
            if stopped:
                await self._leave(sharding, membership)
            raise_failures(entries)
            if not stopped:
                log.warning(
                    "%s: not a member of ring %s any more (Lease not renewed);"
                    " sharded controllers stopped, rejoining",
                    self.name,
                    sharding.ring,
                )
                # whatever cut the renewals may have left the ring's watch dead unseen
                # (its share's watches are listed again as the controllers restart)
                view.reflector.relist()

    async def _hand_over(
        self,
        sharding: Sharding,
        membership: LeaderElection,
        view: RingView,
        entries: list[Entry],
    ) -> None:
        """Graceful stop of a member: annotate its Lease leaving (the sharder assigns it
        nothing more and leaves its objects to it), then have every sharded controller
        move its objects to their rendezvous owners among the other members taking
        objects, each claimed from its work queue as a worker would (see
        :meth:`~reconcile_kit.runtime.controller.Controller.hand_over`): each object is
        served here until the write that hands it over, and by its new owner from the
        event that write causes. At most ``drain_timeout`` seconds, and only while another
        member takes objects (replicas stopping together end their handovers once they
        see each other leaving)."""

        def others() -> frozenset[str]:
            return view.candidates() - {sharding.identity}

        if not others():
            return
        membership.annotations[LEAVING_ANNOTATION] = "true"
        if not await membership.renew_now():
            return  # not marked: the sharder would move the objects back; release instead

        def owner(key: ObjectRef) -> str | None:
            return ring.owner(ring.object_key(key.namespace, key.name), others())

        timeout = sharding.drain_timeout
        timeout = self.graceful_shutdown_timeout if timeout is None else timeout
        started = time.monotonic()
        nobody = asyncio.Event()

        def check() -> None:
            if not others():
                nobody.set()

        view.on_change.append(check)
        handovers = asyncio.gather(*(e.controller.hand_over(owner) for e in entries))
        try:
            async with asyncio.timeout(timeout):
                if not await first(handovers, nobody.wait()):
                    log.info(
                        "%s: ring %s: no other member takes objects; handover ended",
                        self.name,
                        sharding.ring,
                    )
                    return
        except TimeoutError:
            log.warning(
                "%s: ring %s: objects not handed over after %s s; the sharder moves them",
                self.name,
                sharding.ring,
                timeout,
            )
            return
        finally:
            view.on_change.remove(check)
        log.info(
            "%s: ring %s: objects handed over in %.2f s",
            self.name,
            sharding.ring,
            time.monotonic() - started,
        )

    async def _leave(self, sharding: Sharding, membership: LeaderElection) -> None:
        """Leave the ring once the sharded controllers stopped (their in-flight reconciles
        finished): release the membership Lease at once, so the sharder moves this
        member's objects directly, as timebertt's shards do on shutdown. When this replica
        runs the sharder, keep it running until it moved them (at most ``drain_timeout``
        seconds), or until no other member takes objects."""
        await membership.release()
        await membership.stop()
        log.info("%s: left ring %s", self.name, sharding.ring)
        assigner = self.assigner
        if assigner is None:
            return
        timeout = sharding.drain_timeout
        timeout = self.graceful_shutdown_timeout if timeout is None else timeout
        try:
            async with asyncio.timeout(timeout):
                await assigner.handed_over(sharding.identity)
        except TimeoutError:
            log.warning(
                "%s: ring %s: this replica's objects not moved after %s s; the next sharder"
                " moves them",
                self.name,
                sharding.ring,
                timeout,
            )

    async def _run_sharder(
        self, sharding: Sharding, view: RingView, kinds: list[ShardedKind], done: asyncio.Event
    ) -> None:
        """Campaign for the ring's sharder Lease and run the assigner while holding it,
        until ``done``."""
        election = sharding.election(sharding.sharder_lease)
        async with election.campaign(self.api, self.stop.is_set):
            while not done.is_set():
                if not await first(election.leading(), done.wait()):
                    break
                log.info("%s: running the sharder of ring %s", self.name, sharding.ring)
                assigner = Assigner(
                    self.api,
                    sharding.ring,
                    sharding.identity,
                    view,
                    kinds,
                    metrics=self.metrics.shard,
                    concurrency=sharding.concurrency,
                    lease_duration=sharding.lease_duration,
                )
                task = asyncio.create_task(assigner.run())
                self.assigner = assigner
                try:
                    await first(done.wait(), election.lost(), task)
                finally:
                    self.assigner = None
                    task.cancel()
                    await asyncio.gather(task, return_exceptions=True)
                if not task.cancelled() and task.exception() is not None:
                    log.error(
                        "%s: the sharder of ring %s failed; retrying in %s s",
                        self.name,
                        sharding.ring,
                        sharding.retry_period,
                        exc_info=task.exception(),
                    )
                    await first(asyncio.sleep(sharding.retry_period), done.wait())

    def observe(self) -> None:
        """Bring the per-replica shard metrics up to date (at each scrape)."""
        sharding, shard = self.sharding, self.metrics.shard
        for entry in self.entries:
            controller = entry.controller
            reflector = controller.reflector if controller.running else None
            count = len(reflector.store) if reflector is not None else 0
            shard.objects.labels(sharding.ring, sharding.identity, controller.name).set(count)
            drains = controller.stats.drains
            if drains > entry.drains_reported:
                shard.acknowledged.labels(sharding.ring, sharding.identity).inc(
                    drains - entry.drains_reported
                )
            entry.drains_reported = drains
