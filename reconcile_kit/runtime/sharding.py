"""A controller's share of a sharded ring: the label filter of its watches and the drain
acknowledgement (as timebertt/kubernetes-controller-sharding's shard side).

A :class:`~reconcile_kit.manager.Manager` with ``sharding=`` gives each sharded
controller a :class:`ShardFilter` naming the ring and this replica's member name. The
controller then

* watches its primary kind and the kinds it ``owns()`` with the label selector
  ``shard.reconcile-kit.io/<ring>=<member>`` (added to its own ``label_selector``), so its
  caches hold only this replica's share;
* never reconciles an object that carries ``drain.shard.reconcile-kit.io/<ring>``: its
  worker, which the work queue never runs beside a reconcile of the same key, removes
  both labels instead (one merge patch with a resourceVersion precondition). That is the
  acknowledgement the ring's sharder waits for before labelling the object for its new
  owner; the object then leaves this replica's watch, without ``on_delete``. Any other
  object leaving the watch is looked up (GET) before ``on_delete`` runs: it runs only for
  an object that is gone, not for one another replica now owns;
* on a graceful stop of its replica, hands its objects over itself
  (:meth:`~reconcile_kit.runtime.controller.Controller.hand_over`, :class:`Handover`): a
  few at a time, each object is labelled for its new owner (one write per object) while
  no reconcile of it runs, and the others are still reconciled here until their turn.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from kr8s.asyncio import Api

from ..client.contenttypes import MERGE_PATCH
from ..client.errors import APIError, OwnershipLostError
from ..client.fencing import WriteFence, fenced
from ..client.request import send
from ..meta.objects import ObjectRef, metadata_of
from ..meta.shards import drain_label, shard_label
from .ownwrites import OwnWrites, integer_version, later_version
from .queue import WorkQueue
from .reflector import ADDED, DELETED, Reflector, ReflectorEvent
from .resources import ResourceInfo
from .store import Obj

if TYPE_CHECKING:
    from .context import Context


class _Counts(Protocol):
    drains: int
    lost_ownership: int


class ShardedController(Protocol):
    """What a :class:`ShardSide` uses of its
    :class:`~reconcile_kit.runtime.controller.Controller` (a protocol, so that this
    module does not import the controller's)."""

    name: str
    api: Api | None
    info: ResourceInfo | None
    queue: WorkQueue[ObjectRef]
    reflector: Reflector | None
    lease: Callable[[], bool] | None
    lease_holder: str
    _written: OwnWrites | None

    @property
    def stats(self) -> _Counts:
        """The controller's counters."""
        ...

    def _context(self, key: ObjectRef, reasons: frozenset[str], data: Any) -> Context:
        """The context of a reconcile of ``key``."""
        ...

    def _latest(self, key: ObjectRef, cached: Obj | None) -> Obj | None:
        """The cached object of ``key``, or the controller's own later write of it."""
        ...


__all__ = ["Handover", "ShardFilter", "ShardSide", "ShardedController"]

log = logging.getLogger(__name__)
FIRST_RETRY = 0.05
"""Seconds before a failed drain acknowledgement or handover write is tried again first."""
MAX_RETRY = 1.0
"""The longest wait, in seconds, between tries of one object's acknowledgement."""
HANDOVER = "handover"  # ReconcileReason.HANDOVER
UPDATED = "updated"  # ReconcileReason.UPDATED


@dataclass(frozen=True)
class ShardFilter:
    """This replica's share of ``ring``: objects labelled ``shard.reconcile-kit.io/<ring>``
    = ``member``.

    Attributes:
        ring: the ring's name (a label name: at most 63 characters).
        member: this replica's name in the ring (a label value).
    """

    ring: str
    member: str

    @property
    def label(self) -> str:
        """The shard label's key."""
        return shard_label(self.ring)

    @property
    def drain(self) -> str:
        """The drain label's key."""
        return drain_label(self.ring)

    def selector(self, base: str | None = None) -> str:
        """The label selector of this replica's share, after ``base`` (a user's selector)."""
        mine = f"{self.label}={self.member}"
        return f"{base},{mine}" if base else mine

    def draining(self, obj: Obj) -> bool:
        """Whether ``obj`` (a raw object) is marked to move away from its owner."""
        labels = metadata_of(obj).get("labels") or {}
        return self.drain in labels

    async def acknowledge(
        self, api: Api, info: ResourceInfo, obj: Obj, *, to: str | None = None
    ) -> Obj:
        """Let go of ``obj``: remove the drain label and set the shard label to ``to`` (a
        member name; None removes it, acknowledging a drain so that the sharder assigns
        the object), conditional on its resourceVersion. Returns the object as written.

        Raises:
            ConflictError: the object changed since ``obj`` was read (its next event
                brings the current state).
            APIError: other refusals (NotFoundError when it is gone).
        """
        meta = metadata_of(obj)
        patch = {
            "metadata": {
                "resourceVersion": meta.get("resourceVersion"),
                "labels": {self.label: to, self.drain: None},
            }
        }
        route = info.route(meta.get("namespace"), meta.get("name", ""))
        reply = await send(api, "PATCH", **route, body=patch, content_type=MERGE_PATCH)
        result: Obj = reply.json()
        return result


class Handover:
    """One controller's handover of its share on a graceful stop: the keys left to move,
    and those being moved (a reconcile of them runs no more here).

    Args:
        owner: ``ObjectRef -> member name or None``: the new owner of a key.
        keys: the share when the handover starts, moved in this order.
    """

    def __init__(self, owner: Callable[[ObjectRef], str | None], keys: Iterable[ObjectRef]) -> None:
        self.owner = owner
        self.moving: set[ObjectRef] = set()
        self._todo = deque(keys)

    def next(self) -> ObjectRef | None:
        """The next key to move (now counted as moving), or None when all were taken."""
        while self._todo:
            key = self._todo.popleft()
            if key not in self.moving:
                self.moving.add(key)
                return key
        return None

    def target(self, key: ObjectRef) -> str | None:
        """The member to move ``key`` to now, or None when it is not being moved or no
        member takes it (it is then reconciled here again)."""
        if key not in self.moving:
            return None
        to = self.owner(key)
        if to is None:
            self.moving.discard(key)
        return to


class ShardSide:
    """What sharding adds to one run of a sharded controller: the one hook a
    :class:`~reconcile_kit.runtime.controller.Controller` calls at each step (an event of
    its primary kind, a key about to be reconciled or deleted, a reconcile's write fence
    and its failure, the handover on a graceful stop); the controller knows nothing else
    of shards.

    Args:
        shard: this replica's share of the ring.
        controller: the controller it serves (its queue, cache and request context).
    """

    def __init__(self, shard: ShardFilter, controller: ShardedController) -> None:
        self.shard = shard
        self.controller = controller
        # handed over (drain acknowledged, or moved to a member), leaving the watch: the
        # resourceVersion its acknowledgement wrote (None while the write is in flight)
        self.moved: dict[ObjectRef, int | None] = {}
        self.failures: dict[ObjectRef, int] = {}  # failed acknowledgements in a row
        self.handover: Handover | None = None
        self._handed = asyncio.Event()  # set once the share is empty during a handover

    # --- events ----------------------------------------------------------------------------

    def on_primary(self, key: ObjectRef, event: ReflectorEvent) -> bool:
        """Handle what sharding decides about a primary event; True when handled: a drain
        marker, or a change of an object being handed over, queues the key whatever the
        predicates say (its worker acknowledges or moves it), and an object leaving this
        replica's share after its drain was acknowledged is not a deletion (other DELETED
        events are checked with a GET before ``on_delete`` runs: see :meth:`deleted`).
        An object handed over that shows up in the share at a later state than the
        hand-over wrote is back: an ADDED event, or a relist's MODIFIED when the watch
        broke before its leaving (DELETED) event came."""
        handover = self.handover
        if event.type == DELETED:
            if handover is not None:
                handover.moving.discard(key)
                self._check_handed()
            if key in self.moved:
                del self.moved[key]
                return True
            return False
        if key in self.moved and (event.type == ADDED or self._back(key, event.obj)):
            del self.moved[key]  # back in this replica's share
        if event.type == ADDED and handover is not None:
            handover.moving.add(key)  # entered the share during the handover
        if (handover is not None and key in handover.moving) or self.shard.draining(event.obj):
            self.controller.queue.add(key, UPDATED)
            return True
        return False

    def _back(self, key: ObjectRef, obj: Obj) -> bool:
        """Whether ``obj``, an event's state of ``key`` (handed over), is later than the
        state the hand-over wrote: resourceVersions compared as integers, as client-go's
        MutationCache does (not an integer, or the write unanswered: not known to be)."""
        version = integer_version(metadata_of(obj).get("resourceVersion"))
        return later_version(version, self.moved.get(key))

    async def intercept(self, key: ObjectRef, raw: Obj, ctx: Context) -> bool:
        """Before a reconcile of ``key`` (read as ``raw``): True when sharding handles the
        key instead (handed over already, draining, or being handed over)."""
        if key in self.moved:
            self.controller.queue.forget(key)  # handed over: its leaving event is on its way
            return True
        to = self.handover.target(key) if self.handover is not None else None
        if to is not None or self.shard.draining(raw):
            await self.let_go(key, raw, ctx, to)
            return True
        return False

    async def deleted(self, key: ObjectRef, ctx: Context) -> bool:
        """Whether an object that left this replica's watch was deleted (a GET answers 404)
        rather than moved to another replica (it still exists). When the GET fails, False
        (the caller retries the key)."""
        try:
            reply = await self._get(key)
        except Exception as error:
            ctx.log.warning("checking whether it was deleted or moved failed: %s", error)
            raise
        if reply.status == 404:
            return True
        ctx.log.debug("left this replica's share (moved to another replica): no on_delete")
        return False

    # --- fenced writes ---------------------------------------------------------------------

    def fence(self, key: ObjectRef, raw: Obj) -> WriteFence:
        """The write fence of a reconcile of ``key`` read as ``raw``: the controller's Lease
        check, and a precondition on writes to the object (see
        :mod:`reconcile_kit.client.fencing`)."""
        ctrl = self.controller
        assert ctrl.info is not None
        return WriteFence(
            ctrl.lease,
            ctrl.lease_holder,
            kind=ctrl.info.kind,
            namespace=key.namespace,
            name=key.name,
            label=self.shard.label,
            member=self.shard.member,
            resource_version=metadata_of(raw).get("resourceVersion"),
        )

    async def lost(self, key: ObjectRef, error: Exception, fence: WriteFence, ctx: Context) -> bool:
        """Whether a failed reconcile of ``key`` failed because the object moved to another
        replica at the server (handled: one INFO line, the key forgotten, no retry here).
        A 409 or 422 from an object not yet known to have moved is followed by a GET that
        tells."""
        conflict = isinstance(error, APIError) and error.status in (409, 422)
        if not (fence.lost or conflict or isinstance(error, OwnershipLostError)):
            return False
        if not fence.lost:
            await self._read_owner(key, fence)  # a 409: changed, or moved to another replica?
        if not fence.lost:
            return False
        ctx.log.info(
            "lost ownership: labelled for %s at the server; not written, not retried here",
            fence.owner or "no replica",
        )
        self.controller.stats.lost_ownership += 1
        self.controller.queue.forget(key)
        return True

    async def _read_owner(self, key: ObjectRef, fence: WriteFence) -> None:
        """GET ``key`` under ``fence``, which learns its owner at the server (a failed GET
        teaches nothing: the reconcile is retried)."""
        with fenced(fence):
            try:
                await self._get(key)
            except Exception as error:
                name = self.controller.name
                log.debug("%s: reading the owner of %s failed: %s", name, key, error)

    async def _get(self, key: ObjectRef) -> Any:
        """GET ``key`` (a 404 answers, not raises)."""
        ctrl = self.controller
        assert ctrl.info is not None and ctrl.api is not None
        route = ctrl.info.route(key.namespace, key.name)
        return await send(ctrl.api, "GET", **route, accept=(404,))

    # --- letting go ------------------------------------------------------------------------

    async def let_go(self, key: ObjectRef, raw: Obj, ctx: Context, to: str | None) -> None:
        """Hand ``key`` back to the ring's sharder (a drain, ``to`` None), or to its new
        owner ``to`` (a handover): no reconcile runs for it here any more (the queue runs
        no key twice at once, so one in flight has finished). A failed write is decided
        again after the key's backoff (a 409 is an object changed since read, or a fault
        that brings no event), never dropped; a 404 (gone) ends it. The backoff is the
        key's own (0.05 s doubling up to 1 s, as the sharder's label writes), not the
        controller's retry rate limit: after an API server restart every acknowledgement
        in flight fails at once, and 10 retries a second for all of them (client-go's
        overall bucket) left objects unmoved for 18 s."""
        ctrl = self.controller
        assert ctrl.info is not None and ctrl.api is not None
        self.moved[key] = None
        try:
            written = await self.shard.acknowledge(ctrl.api, ctrl.info, raw, to=to)
        except Exception as error:
            self.moved.pop(key, None)
            if isinstance(error, APIError) and error.status == 404:
                ctx.log.debug("not handed over: gone (%s)", error)
                ctrl.queue.forget(key)
                return
            conflict = isinstance(error, APIError) and error.status == 409
            level = logging.DEBUG if conflict else logging.WARNING
            ctx.log.log(level, "handing over to %s failed: %s", to or "the sharder", error)
            failures = self.failures[key] = self.failures.get(key, 0) + 1
            delay = min(MAX_RETRY, FIRST_RETRY * 2 ** (failures - 1))
            ctrl.queue.add_after(key, delay, HANDOVER if to is not None else UPDATED)
            return
        self.failures.pop(key, None)
        ctrl.queue.forget(key)
        ctrl.stats.drains += 1
        if ctrl._written is not None:
            ctrl._written.forget(key)  # the controller's copy of its own write goes
        ctx.log.debug("handed over to %s", to or "the sharder (drain acknowledged)")
        self._acknowledged(key, integer_version(metadata_of(written).get("resourceVersion")))

    def _acknowledged(self, key: ObjectRef, version: int | None) -> None:
        """Record the resourceVersion the hand-over of ``key`` wrote; when the cache
        already holds a later state of it (a relist while the write was in flight found it
        back in the share), it is back: reconciled here again."""
        ctrl = self.controller
        if key not in self.moved or ctrl.reflector is None:
            return
        stored = integer_version(ctrl.reflector.store.resource_version(key.namespace, key.name))
        if later_version(stored, version):
            del self.moved[key]
            ctrl.queue.add(key, UPDATED)
        else:
            self.moved[key] = version

    async def hand_over(self, owner: Callable[[ObjectRef], str | None], movers: int) -> None:
        """Move every object of the share to ``owner(key)``, ``movers`` at a time, then
        return once the share is empty (see
        :meth:`~reconcile_kit.runtime.controller.Controller.hand_over`)."""
        ctrl = self.controller
        if ctrl.reflector is None or ctrl.info is None:
            return
        store, kind = ctrl.reflector.store, ctrl.info.ref_kind
        keys = [ObjectRef(kind, namespace, name) for namespace, name in store.list_keys()]
        handover = self.handover = Handover(owner, keys)
        self._handed = asyncio.Event()
        await asyncio.gather(*(self._mover(handover) for _ in range(max(1, movers))))
        self._check_handed()
        await self._handed.wait()

    async def _mover(self, handover: Handover) -> None:
        """Move keys of ``handover`` until none is left to take."""
        ctrl = self.controller
        assert ctrl.reflector is not None
        store = ctrl.reflector.store
        while (key := handover.next()) is not None:
            if (key.namespace, key.name) not in store:
                continue
            if ctrl.queue.claim(key) is None:  # a reconcile runs: its worker moves it next
                ctrl.queue.add(key, HANDOVER)
                continue
            try:
                raw = ctrl._latest(key, store.get(key.namespace, key.name))
                to = handover.target(key)
                ctx = ctrl._context(key, frozenset({HANDOVER}), None)
                if raw is not None and to is not None:
                    await self.let_go(key, raw, ctx, to)
                elif raw is not None:  # no member takes it: reconciled here
                    ctrl.queue.add(key, HANDOVER)
            finally:
                ctrl.queue.done(key)

    def _check_handed(self) -> None:
        reflector = self.controller.reflector
        if reflector is not None and len(reflector.store) == 0:
            self._handed.set()
