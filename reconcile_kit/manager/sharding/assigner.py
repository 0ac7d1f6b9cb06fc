"""The ring's sharder: labels the objects of sharded kinds with their owning member.

As timebertt/kubernetes-controller-sharding's sharder: one replica of the ring (the
holder of the Lease ``<ring>-sharder``, elected with
:class:`~reconcile_kit.manager.leaderelection.LeaderElection`) watches every object of
the sharded kinds (metadata only: it lists and watches PartialObjectMetadata) and,
whenever an object or the ring's membership changes, compares each object's shard label
with its rendezvous-hashing owner among the members that take objects (:mod:`.ring`):

* unassigned: labelled for its owner;
* assigned to a member that is not live (its Lease expired, was released or is gone):
  moved directly, but only while the sharder itself holds that member's Lease (holder
  ``sharder:<its identity>``, written with a resourceVersion precondition, or created when
  there is none, and renewed every third of ``lease_duration`` while the member owns
  objects), as timebertt's sharder acquires a dead shard's Lease. A member that comes
  back therefore cannot rejoin (and reconcile) before the sharder is done with its
  objects or has stopped renewing for a whole Lease duration. The sharder holds Leases
  only while some member takes objects: with none (every member's Lease expired at once,
  an API server outage longer than the renew deadline), it lets its holds lapse so that
  the members can rejoin with the objects they still own;
* assigned to a live member that is not the owner any more (a member joined):
  labelled ``drain.shard.reconcile-kit.io/<ring>``. The owner acknowledges by removing
  both labels (:mod:`reconcile_kit.runtime.sharding`), and the object, now unassigned,
  is labelled for its new owner;
* assigned to a live member whose Lease is annotated leaving (a graceful stop): left
  alone, as that member moves its objects to their new owners itself;
* draining but its owner is again the right one: the drain label is removed.

Leases of members that are not live and own no object any more are deleted (conditional
on their resourceVersion), so that replicas with random identities leave nothing behind.

Every write is a merge patch with a resourceVersion precondition, so a write based on a
stale copy fails (409); every failed write is decided again after the object's backoff,
never dropped, and a full pass every :data:`RESYNC` seconds finds whatever was left
behind (a label naming no live member, a stale drain label). Never are two members
labelled owners of one object, and an object only gets a new owner once the old one has
let go of it (acknowledged, released its Lease after its controllers stopped, as a
gracefully stopping member does, or stopped renewing it for ``renew_deadline`` before
others could see it expire).
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from kr8s.asyncio import Api

from ...client.contenttypes import MERGE_PATCH
from ...client.errors import APIError
from ...client.request import Target, send
from ...meta.objects import metadata_of
from ...meta.shards import MEMBER_LABEL, RING_LABEL, drain_label, shard_label
from ...meta.time import format_micro_time
from ...runtime.reflector import DELETED, Reflector, ReflectorEvent
from ...runtime.resources import KindLike, ResourceInfo, resolve_kind
from ...runtime.store import Obj
from . import ring
from .membership import LEASE, RingView

__all__ = ["Assigner", "AssignerMetrics", "ShardedKind", "metadata_only"]

log = logging.getLogger(__name__)
FIRST_RETRY = 0.05
"""Seconds before an object whose label write failed is looked at again the first time."""
RESYNC = 30.0
"""Seconds between the sharder's full passes over every object when nothing else caused
one: whatever a lost event or a failed write left behind (a label naming no live member,
a stale drain label) is found and moved within this long."""
LAPSE_SLACK = 0.05
"""Seconds after another sharder's hold of a Lease lapses before trying to take it."""
TIMER_SLACK = 0.001
"""Seconds early a held Lease counts as due for renewal (see ``Assigner._hold``)."""

_Key = tuple[int, str, str]  # kind index, namespace, name


@dataclass(frozen=True)
class ShardedKind:
    """One kind the sharder labels: the scope and filters of a sharded controller.

    Attributes:
        kind: a kr8s class or kind string (resolved when the sharder starts).
        namespace: the namespace (None: all).
        label_selector: only objects matching it (the controller's own selector).
        field_selector: only objects matching it.
    """

    kind: KindLike
    namespace: str | None = None
    label_selector: str | None = None
    field_selector: str | None = None


class AssignerMetrics:
    """Where the sharder reports (the manager's Prometheus metrics implement it); every
    method does nothing here."""

    def assigned(self, ring: str, seconds: float, moved: bool) -> None:
        """An object got an owner, ``seconds`` after the sharder saw that it needed one;
        ``moved``: it had another owner before."""

    def drain_started(self, ring: str) -> None:
        """An object was marked draining."""

    def members(self, ring: str, live: int, candidates: int) -> None:
        """The ring's live members and those taking objects."""

    def unowned(self, ring: str, count: int) -> None:
        """Objects without a live owner now (unlabelled, labelled for a member that is not
        live, or draining), after each pass."""


def metadata_only(obj: Obj) -> Obj:
    """The reflector transform of the sharder: keep the metadata fields it reads (its
    reflectors list and watch PartialObjectMetadata, as client-go's metadata informer)."""
    meta = metadata_of(obj)
    kept = {
        key: meta[key]
        for key in ("name", "namespace", "uid", "resourceVersion", "labels", "deletionTimestamp")
        if key in meta
    }
    return {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"), "metadata": kept}


class Assigner:
    """Assign the objects of ``kinds`` to the members of ``view`` until cancelled.

    Args:
        api: a kr8s asyncio Api.
        ring: the ring's name.
        identity: the identity of the replica running it (in Leases it holds).
        view: the ring's membership (started by the caller).
        kinds: the sharded kinds.
        metrics: where to report (default: nowhere).
        concurrency: label writes at once.
        retry_delay: the longest wait, in seconds, before an object whose label write
            failed (any failure: a 409 or 404 too) is decided again from the cache: 0.05 s
            after its first failure, doubled after each further one (as client-go's
            per-item exponential rate limiter), and before the sharder tries a Lease it
            failed to hold again.
        lease_duration: the ring's Lease duration in seconds: the sharder renews the
            Leases it holds every third of it and moves objects under a hold only within
            two thirds of it after its last successful write.
        resync: seconds between full passes over every object (see :data:`RESYNC`).
    """

    def __init__(
        self,
        api: Api,
        ring: str,
        identity: str,
        view: RingView,
        kinds: list[ShardedKind],
        *,
        metrics: AssignerMetrics | None = None,
        concurrency: int = 8,
        retry_delay: float = 1.0,
        lease_duration: float = 15.0,
        resync: float = RESYNC,
    ) -> None:
        self.api = api
        self.ring = ring
        self.label = shard_label(ring)
        self.drain = drain_label(ring)
        self.identity = identity
        self.view = view
        self.kinds = kinds
        self.infos: list[ResourceInfo] = []
        self.metrics = metrics or AssignerMetrics()
        self.concurrency = concurrency
        self.retry_delay = retry_delay
        self.lease_duration = lease_duration
        self.resync = resync
        self.reflectors: list[Reflector] = []
        self._dirty: set[_Key] = set()
        self._all = True
        self._wake = asyncio.Event()
        self._pending: dict[_Key, float] = {}  # needs an owner since (_now())
        self._owners: dict[_Key, str] = {}  # each labelled object's owner
        self._owned: Counter[str] = Counter()  # objects per owner (kept by the handlers)
        self._moving: set[_Key] = set()  # drained away from a live owner
        self._not_before: dict[str, float] = {}  # Lease -> next hold attempt (loop time)
        self._held: dict[str, float] = {}  # Lease -> when its last write by us was sent
        self._failures: dict[_Key, int] = {}  # label writes failed in a row, per object
        self._timer: asyncio.TimerHandle | None = None
        self._synced = False
        self._ended = False
        self._passed = asyncio.Event()  # set after each pass (then replaced)

    async def handed_over(self, member: str) -> None:
        """Return once no object is labelled for ``member`` any more, or no live member
        takes objects (nothing can move), or this sharder stopped: a stopping replica
        running the sharder waits so after releasing its membership Lease."""
        while not self._ended:
            if self._synced and (not self.view.candidates() or member not in self._owning()):
                return
            await self._passed.wait()

    async def run(self) -> None:
        """Watch and assign until cancelled (the reflectors stop with it)."""
        unsubscribe: list[Callable[[], None]] = []

        def on_members() -> None:
            self._all = True
            self._wake.set()

        self.view.on_change.append(on_members)
        try:
            for index, kind in enumerate(self.kinds):
                info = await resolve_kind(self.api, kind.kind)
                reflector = Reflector(
                    self.api,
                    info,
                    namespace=kind.namespace,
                    label_selector=kind.label_selector,
                    field_selector=kind.field_selector,
                    transform=metadata_only,
                    metadata_only=True,
                )
                self.infos.append(info)
                self.reflectors.append(reflector)
                unsubscribe.append(reflector.subscribe(self._handler(index), replay=False))
                reflector.start()
            for reflector in self.reflectors:
                await reflector.wait_synced()
            log.info("ring %s: sharder started (%s)", self.ring, self._counts())
            self._all = True
            self._wake.set()
            last_full = _now()
            while True:
                try:
                    async with asyncio.timeout(max(0.0, last_full + self.resync - _now())):
                        await self._wake.wait()
                except TimeoutError:
                    self._all = True
                self._wake.clear()
                if self._all:
                    last_full = _now()
                await self._pass()
                self._synced = True
                self._passed.set()
                self._passed = asyncio.Event()
        finally:
            self._ended = True
            self._passed.set()
            if on_members in self.view.on_change:
                self.view.on_change.remove(on_members)
            for undo in unsubscribe:
                undo()
            for reflector in self.reflectors:
                await reflector.stop()
            if self._timer is not None:
                self._timer.cancel()
            log.info("ring %s: sharder stopped", self.ring)

    def _counts(self) -> str:
        pairs = zip(self.reflectors, self.infos, strict=True)
        return ", ".join(f"{len(r.store)} {info.ref_kind}" for r, info in pairs)

    def _handler(self, index: int) -> Callable[[ReflectorEvent], None]:
        def handle(event: ReflectorEvent) -> None:
            meta = metadata_of(event.obj)
            key = (index, meta.get("namespace") or "", meta.get("name", ""))
            owner = None if event.type == DELETED else (meta.get("labels") or {}).get(self.label)
            self._count(key, owner)
            if event.type == DELETED:
                self._pending.pop(key, None)
                self._failures.pop(key, None)
                self._moving.discard(key)
                return
            self._dirty.add(key)
            self._wake.set()

        return handle

    async def _pass(self) -> None:
        """Hold the Leases of gone owners, then look at the dirty objects (every object
        after a membership change), then let go of Leases nobody needs."""
        members = self.view.members()
        candidates = sorted(self.view.candidates())
        self.metrics.members(self.ring, len(members), len(candidates))
        owning = self._owning()
        if candidates:
            for member in sorted(owning - members):
                await self._hold(member)
        elif self._held:
            # nobody to move their objects to: holding their Leases would only keep the
            # members out (after an API server outage, every member at once); they rejoin
            # once the holds lapse, their objects never having moved
            log.info("ring %s: no member takes objects; letting the Leases held lapse", self.ring)
            self._held.clear()
        if self._all:
            self._all, self._dirty = False, set()
            keys: list[_Key] = [
                (index, *key)
                for index, reflector in enumerate(self.reflectors)
                for key in reflector.store.list_keys()
            ]
        else:
            keys, self._dirty = list(self._dirty), set()
        writes: list[Callable[[], Awaitable[None]]] = []
        for key in keys:
            obj = self.reflectors[key[0]].store.get(key[1], key[2])
            if obj is not None:
                write = self._decide(key, obj, members, candidates)
                if write is not None:
                    writes.append(write)
        if writes:
            limit = asyncio.Semaphore(self.concurrency)

            async def bounded(write: Callable[[], Awaitable[None]]) -> None:
                async with limit:
                    await write()

            await asyncio.gather(*(bounded(write) for write in writes))
        await self._forget(self._owning())
        self._schedule_renewal()
        self.metrics.unowned(self.ring, len(self._pending))

    def _count(self, key: _Key, owner: str | None) -> None:
        """Keep the objects-per-owner counts as an event changes ``key``'s owner (None:
        unlabelled or deleted), so that :meth:`_owning` costs no walk over the cache."""
        old = self._owners.pop(key, None)
        if old is not None:
            self._owned[old] -= 1
            if not self._owned[old]:
                del self._owned[old]
        if owner:
            self._owners[key] = owner
            self._owned[owner] += 1

    def _owning(self) -> set[str]:
        """The members some object is labelled with."""
        return set(self._owned)

    def _holds(self, member: str) -> bool:
        """Whether the sharder holds ``member``'s Lease: its last write of it was sent less
        than two thirds of a Lease duration ago."""
        sent = self._held.get(self._lease_name(member))
        return sent is not None and _now() < sent + self.lease_duration * 2 / 3

    def _lease_name(self, member: str) -> str:
        return f"{self.ring}-{member}"

    async def _hold(self, member: str) -> None:
        """Take, create or renew the Lease of ``member``, which is not live but owns objects
        (each write conditional on the Lease's resourceVersion)."""
        name = self._lease_name(member)
        now = _now()
        sent = self._held.get(name)
        # due a little early: the renewal timer may fire before its time (asyncio runs
        # timers up to the clock's resolution early; looptime rounds its clock), and
        # finding it not due would set the same timer again, in a busy loop
        if sent is not None and now + TIMER_SLACK < sent + self.lease_duration / 3:
            return  # renewed recently
        if self._not_before.get(name, 0.0) > now:
            return
        mine = f"sharder:{self.identity}"
        lease = self.view.lease(name)
        if member == self.identity and lease is not None and self._rejoining(name, lease):
            return
        stamp = format_micro_time(datetime.now(UTC))
        spec: dict[str, Any] = {
            "holderIdentity": mine,
            "leaseDurationSeconds": max(1, math.ceil(self.lease_duration)),
            "acquireTime": stamp,
            "renewTime": stamp,
            "leaseTransitions": 0,
        }
        body: dict[str, Any]
        if lease is None:
            metadata = {
                "name": name,
                "namespace": self.view.namespace,
                "labels": {RING_LABEL: self.ring, MEMBER_LABEL: member},
            }
            method, url = "POST", ""
            body = {"apiVersion": LEASE.api_version, "kind": "Lease", "metadata": metadata}
            body["spec"] = spec
        else:
            current = lease.get("spec") or {}
            holder = current.get("holderIdentity") or ""
            if holder == member and member in self.view.expired():
                pass  # expired: taken over
            elif holder and holder not in (member, mine) and self.view.lapsed(name):
                pass  # another sharder's hold, not renewed for a Lease duration
            elif holder not in ("", mine):
                # held validly by someone else (the member is back, or a previous sharder
                # holds it): not ours to renew, or the renewal timer, due at once, would wake
                # the sharder in a busy loop; look again when that hold lapses (no event
                # marks a lapse) or the Lease changes
                self._held.pop(name, None)
                if holder != member:
                    self._retry_at(self.view.lapses_at(name) + LAPSE_SLACK)
                return
            transitions = int(current.get("leaseTransitions") or 0)
            if holder == mine:
                spec["acquireTime"] = current.get("acquireTime") or stamp
                spec["leaseTransitions"] = transitions
            else:
                spec["leaseTransitions"] = transitions + 1
            method, url, body = "PUT", name, {**lease, "spec": spec}
        try:
            await self._lease_request(method, url, body)
        except APIError as error:
            self._held.pop(name, None)
            if error.status not in (404, 409):
                log.warning("ring %s: holding the Lease of %s failed: %s", self.ring, member, error)
                self._not_before[name] = now + self.retry_delay
                self._retry_later(None)
            return
        if sent is None:
            log.info("ring %s: holding the Lease of %s; moving its objects", self.ring, member)
            self._all = True  # its objects, decided before the hold, are decided again
        self._held[name] = now

    async def _forget(self, owning: set[str]) -> None:
        """Delete the Leases of members that are not live and own no object any more.
        Live is decided per Lease as the view sees it now, not as at the pass's start: a
        member that joined while the pass's label writes were awaited is live."""
        for lease in self.view.leases():
            meta = metadata_of(lease)
            member = (meta.get("labels") or {}).get(MEMBER_LABEL) or ""
            if not member or member in self.view.members() or member in owning:
                continue
            name = meta.get("name", "")
            options = {"preconditions": {"resourceVersion": meta.get("resourceVersion")}}
            try:
                await self._lease_request("DELETE", name, options)
            except APIError as error:
                if error.status not in (404, 409):
                    log.warning(
                        "ring %s: deleting the Lease of %s failed: %s", self.ring, member, error
                    )
                continue
            self._held.pop(name, None)
            log.info("ring %s: deleted the Lease of %s (gone, owns nothing)", self.ring, member)

    def _schedule_renewal(self) -> None:
        """Wake up when the first held Lease is due for renewal."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._held:
            due = min(self._held.values()) + self.lease_duration / 3
            loop = asyncio.get_running_loop()
            self._timer = loop.call_at(max(due, loop.time()), self._wake.set)

    def _rejoining(self, name: str, lease: Obj) -> bool:
        """Whether ``name``, this replica's own membership Lease, expired (not released) less
        than a Lease duration ago: the replica stopped its sharded controllers at its renew
        deadline and is taking its Lease again, keeping its objects, so the sharder leaves
        it alone until then (and looks again then). Held first, the replica could rejoin
        only once every object of its share had moved away, and each change to them waited
        for that (3.9 s after an API server restart in the chaos test). A Lease released
        (a graceful stop) or past that grace is held as any member's."""
        if (lease.get("spec") or {}).get("holderIdentity") != self.identity:
            return False
        until = self.view.lapses_at(name) + self.lease_duration
        if _now() >= until:
            return False
        self._not_before[name] = until  # no hold attempt before then
        self._retry_at(until + LAPSE_SLACK)
        return True

    async def _lease_request(self, method: str, name: str, body: Any) -> None:
        await send(
            self.api,
            method,
            version=LEASE.api_version,
            namespace=self.view.namespace,
            url=f"{LEASE.plural}/{name}" if name else LEASE.plural,
            body=body,
            target=Target(LEASE.ref_kind, self.view.namespace, name or None),
            retry=False,
        )

    def _decide(
        self,
        key: _Key,
        obj: Obj,
        members: frozenset[str],
        candidates: list[str],
    ) -> Callable[[], Awaitable[None]] | None:
        labels = metadata_of(obj).get("labels") or {}
        current = labels.get(self.label) or None
        draining = self.drain in labels
        desired = ring.owner(ring.object_key(key[1], key[2]), candidates)
        if current is not None and current in members:
            if current not in candidates:
                return None  # leaving: it hands its objects over itself
            if desired is None or desired == current:
                self._pending.pop(key, None)
                self._moving.discard(key)
                if draining:  # the move was called off: the owner keeps it
                    return self._writer(key, obj, {self.drain: None}, None)
                return None
            self._pending.setdefault(key, _now())
            if draining:
                return None  # waiting for the owner's acknowledgement
            self._moving.add(key)
            log.debug("ring %s: draining %s/%s from %s", self.ring, key[1], key[2], current)
            return self._writer(key, obj, {self.drain: "true"}, "drain")
        self._pending.setdefault(key, _now())
        if current is not None and not self._holds(current):
            return None  # moved once the sharder holds the member's Lease
        # unassigned, or its owner is gone and the sharder holds its Lease
        if desired is None:
            return None  # no member takes objects: wait for one
        moved = current is not None or key in self._moving
        labels = {self.label: desired, self.drain: None}
        return self._writer(key, obj, labels, "moved" if moved else "assigned", hold=current)

    def _writer(
        self,
        key: _Key,
        obj: Obj,
        labels: dict[str, str | None],
        what: str | None,
        hold: str | None = None,
    ) -> Callable[[], Awaitable[None]]:
        """The label write of ``key``; with ``hold``, a direct move from that member, sent
        only while the sharder still holds its Lease and it is not live again."""

        async def write() -> None:
            if hold is not None and (not self._holds(hold) or hold in self.view.members()):
                self._dirty.add(key)  # decided on a hold that lapsed: decide again
                self._wake.set()
                return
            info = self.infos[key[0]]
            meta = metadata_of(obj)
            body = {"metadata": {"resourceVersion": meta.get("resourceVersion"), "labels": labels}}
            route = info.route(key[1], key[2])
            try:
                await send(self.api, "PATCH", **route, body=body, content_type=MERGE_PATCH)
            except asyncio.CancelledError:
                raise
            except APIError as error:
                # never dropped: a 409 (changed since read) or 404 (gone) is decided again
                # from the cache after the object's backoff, as any failure is (a deleted
                # object has left the cache by then, an injected 409 brings no event)
                level = logging.DEBUG if error.status in (404, 409) else logging.WARNING
                log.log(level, "ring %s: labelling %s/%s failed: %s", self.ring, *key[1:], error)
                self._retry_later(key)
                return
            except Exception as error:
                log.warning("ring %s: labelling %s/%s failed: %s", self.ring, *key[1:], error)
                self._retry_later(key)
                return
            self._failures.pop(key, None)
            if what == "drain":
                self.metrics.drain_started(self.ring)
            elif what is not None:
                since = self._pending.pop(key, _now())
                self._moving.discard(key)
                self.metrics.assigned(self.ring, _now() - since, what == "moved")

        return write

    def _retry_at(self, when: float) -> None:
        """Look at everything again at loop time ``when``."""

        def again() -> None:
            self._all = True
            self._wake.set()

        loop = asyncio.get_running_loop()
        loop.call_at(max(when, loop.time()), again)

    def _retry_later(self, key: _Key | None) -> None:
        """Look at ``key`` again after its backoff (see ``retry_delay``); None: look at
        everything again after ``retry_delay`` seconds."""

        if key is None:
            self._retry_at(_now() + self.retry_delay)
            return

        def again() -> None:
            self._dirty.add(key)
            self._wake.set()

        failures = self._failures[key] = self._failures.get(key, 0) + 1
        delay = min(self.retry_delay, FIRST_RETRY * 2 ** (failures - 1))
        asyncio.get_running_loop().call_later(delay, again)


def _now() -> float:
    return asyncio.get_running_loop().time()
