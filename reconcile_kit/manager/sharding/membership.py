"""Ring membership: one Lease per replica, and every replica's view of the live members.

As timebertt/kubernetes-controller-sharding: a replica is a member of a ring while it
holds its own ``coordination.k8s.io/v1`` Lease ``<ring>-<identity>`` (labelled
``reconcile-kit.io/ring: <ring>`` and ``reconcile-kit.io/member: <identity>``), acquired,
renewed and released as client-go's leader election does: it is a
:class:`~reconcile_kit.manager.leaderelection.LeaderElection` on a Lease nobody else
campaigns for, so a previous process of the same identity is waited out. A member that
cannot renew within ``renew_deadline`` stops its sharded controllers, before others can
see its Lease expire.

:class:`RingView` watches the ring's Leases and judges expiry as leader election does, on
the local clock only: a member is live while ``holderIdentity`` names it and fewer than
``leaseDurationSeconds`` have passed since this process saw the record last change.
Before it moves the objects of a member that is not live, the sharder holds that
member's Lease (``holderIdentity`` ``sharder:<its identity>``, as timebertt's sharder
acquires a dead shard's Lease; see :mod:`.assigner`), so that the member, should it come
back, cannot rejoin meanwhile. A member stopping gracefully annotates its Lease
``reconcile-kit.io/leaving`` (live, taking no new objects) and moves its objects to their
owners among the other members itself; then it stops its sharded controllers and
releases its Lease: it is gone, and what it did not move moves directly.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from kr8s.asyncio import Api
from kr8s.asyncio.objects import new_class

from ...client.errors import APIError
from ...meta.objects import metadata_of
from ...meta.shards import MEMBER_LABEL, RING_LABEL
from ...runtime.reflector import DELETED, Backoff, Reflector, ReflectorEvent
from ...runtime.resources import ResourceInfo
from ..leaderelection import LeaderElection
from .config import Sharding

__all__ = ["LEASE", "LEAVING_ANNOTATION", "RingView", "membership_election"]

log = logging.getLogger(__name__)

LEAVING_ANNOTATION = "reconcile-kit.io/leaving"
"""On a membership Lease: the member is stopping gracefully. It takes no new objects and
moves its objects to their new owners itself; the sharder leaves them to it (until its
Lease is released or expires)."""
_UNAVAILABLE = (502, 503, 504)
"""Statuses that mean the Lease API was not served (a load balancer or proxy with no
kube-apiserver behind it, kube-apiserver without etcd)."""
LEASE = ResourceInfo(
    "coordination.k8s.io/v1",
    "Lease",
    "leases",
    True,
    new_class("Lease", "coordination.k8s.io/v1", namespaced=True, plural="leases"),
)


def membership_election(sharding: Sharding) -> LeaderElection:
    """The LeaderElection holding this replica's membership Lease (not released on
    cancellation: a crash leaves it to expire; :class:`~reconcile_kit.manager.Manager`
    releases it on a graceful stop)."""
    election = sharding.election(
        sharding.member_lease, {RING_LABEL: sharding.ring, MEMBER_LABEL: sharding.identity}
    )
    election.annotations[LEAVING_ANNOTATION] = None  # a previous process's mark goes
    return election


class RingView:
    """The members of one ring, from a watch of its Leases.

    Args:
        api: a kr8s asyncio Api.
        ring: the ring's name.
        namespace: where its Leases live.
        clock: seconds of a monotonic clock (default: the running loop's ``time``).
        retry_period: the longest wait, in seconds, before the Lease watch is tried again
            after an error (default: the reflector's, client-go's 30 s). The manager passes
            the ring's ``retry_period``: members renew that often, and a view that lags
            their renewals after an API server outage judges them expired (the ring then
            has nobody to assign objects to).
        rejoin_grace: seconds (default 0) after the watch last found the API server
            unable to serve Leases (no answer: a refused or reset connection, a timeout;
            or 502, 503, 504: a proxy with no server behind it; the members could not
            renew either) during which a Lease not seen to change since then is not
            judged expired. Without it, the first member back after an outage
            longer than the Lease duration is the only live one, and the sharder moves
            every other member's objects to it while they are renewing (the manager
            passes :attr:`~.config.Sharding.rejoin_grace`). Costs a member that died
            during the outage at most this long.

    A Lease names its member in the label ``reconcile-kit.io/member``. The member is
    *live* while it holds the Lease (``holderIdentity`` equals the member's name) and the
    Lease has not expired; *expired* while it holds it but the Lease has expired (the
    sharder then holds the Lease before moving its objects); otherwise (released, or held
    by the sharder) it is *gone*. A Lease deleted, or changed to another holder or a
    shorter duration, other than by the member's release (client-go's form: no holder,
    ``leaseDurationSeconds: 1``) keeps its member live until the record it last held
    would have expired: the member may still be reconciling (it re-creates a deleted
    Lease at its next renewal), and fencing promises others take over only then.
    ``on_change`` is a list of plain functions called (without
    arguments) whenever one of these sets changes, including when a Lease expires.
    """

    def __init__(
        self,
        api: Api,
        ring: str,
        namespace: str,
        *,
        clock: Callable[[], float] | None = None,
        retry_period: float | None = None,
        rejoin_grace: float = 0.0,
    ) -> None:
        self.ring = ring
        self.namespace = namespace
        backoff = None
        if retry_period is not None:
            backoff = Backoff(initial=min(0.8, retry_period), maximum=retry_period)
        self.reflector = Reflector(
            api,
            LEASE,
            namespace=namespace,
            label_selector=f"{RING_LABEL}={ring}",
            compact=False,  # a few Leases, read on every renewal
            backoff=backoff,
        )
        self.reflector.on_error.append(self._on_error)
        self.on_change: list[Callable[[], None]] = []
        self.rejoin_grace = rejoin_grace
        self._unreachable_at: float | None = None  # the watch's last unanswered failure
        self._clock = clock
        self._observed: dict[str, tuple[dict[str, Any], float]] = {}  # lease -> spec, seen
        self._held: dict[str, tuple[str, float]] = {}  # lease -> member, its hold's expiry
        self._live: frozenset[str] = frozenset()
        self._candidates: frozenset[str] = frozenset()
        self._expired: dict[str, str] = {}  # member -> its Lease's name
        self._timer: asyncio.TimerHandle | None = None
        self._unsubscribe: Callable[[], None] | None = None

    def members(self) -> frozenset[str]:
        """The live members (leaving ones included)."""
        return self._live

    def candidates(self) -> frozenset[str]:
        """The live members that take objects (not leaving)."""
        return self._candidates

    def expired(self) -> dict[str, str]:
        """``{member: Lease name}`` of members holding an expired Lease."""
        return dict(self._expired)

    def leases(self) -> list[dict[str, Any]]:
        """The ring's Leases as last seen (read-only dicts)."""
        return self.reflector.store.list()

    def lease(self, name: str) -> dict[str, Any] | None:
        """The ring's Lease ``name`` as last seen, or None."""
        return self.reflector.store.get(self.namespace, name)

    def lapsed(self, name: str) -> bool:
        """Whether Lease ``name``'s record has not changed for its ``leaseDurationSeconds``
        (as observed here), whoever holds it; True for an unknown Lease."""
        return self.lapses_at(name) <= self._now()

    def lapses_at(self, name: str) -> float:
        """The time (this view's clock) at which Lease ``name`` lapses unless its record
        changes: when it was seen to change plus its ``leaseDurationSeconds`` (now for an
        unknown Lease)."""
        seen = self._observed.get(name)
        if seen is None:
            return self._now()
        spec, at = seen
        return at + float(spec.get("leaseDurationSeconds") or 0)

    async def start(self) -> None:
        """Start watching; returns once the Leases were listed."""
        self._unsubscribe = self.reflector.subscribe(self._on_event)
        self.reflector.start()
        await self.reflector.wait_synced()
        self._recompute()

    async def stop(self) -> None:
        """Stop watching (the view keeps what it last saw)."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        await self.reflector.stop()

    def _on_event(self, event: ReflectorEvent) -> None:
        meta = metadata_of(event.obj)
        name = meta.get("name", "")
        if event.type == DELETED:
            self._observed.pop(name, None)
        else:
            spec = dict(event.obj.get("spec") or {})
            seen = self._observed.get(name)
            if seen is None or seen[0] != spec:
                self._observed[name] = (spec, self._now())
            self._note_hold(name, (meta.get("labels") or {}).get(MEMBER_LABEL) or "", spec)
        if self.reflector.has_synced():
            self._recompute()

    def _note_hold(self, name: str, member: str, spec: dict[str, Any]) -> None:
        """Remember until when ``member`` holds Lease ``name`` by the records it wrote
        (never earlier than a record before: a shorter duration written by someone else
        does not cut it short); a release forgets it."""
        if not member:
            return
        holder = spec.get("holderIdentity") or ""
        if holder == member:
            expires = self._observed[name][1] + float(spec.get("leaseDurationSeconds") or 0)
            before = self._held.get(name)
            if before is not None and before[0] == member:
                expires = max(expires, before[1])
            self._held[name] = (member, expires)
        elif not holder and int(spec.get("leaseDurationSeconds") or 0) == 1:
            self._held.pop(name, None)  # released (client-go's form)

    def _on_error(self, error: Exception) -> None:
        """Note when the Lease watch found the API server unable to serve Leases (no answer,
        or 502/503/504 from it or a proxy in front of it): members could not renew then
        either. Other answers (a 500, a 409) are failures of one request."""
        status = error.status if isinstance(error, APIError) else None
        if not status or status in _UNAVAILABLE:
            self._unreachable_at = self._now()

    def _expiry(self, spec: dict[str, Any], seen: float) -> float:
        """When a Lease whose record ``spec`` was seen to change at ``seen`` expires: its
        duration later, and not before :attr:`rejoin_grace` after an outage that began
        since (its member could not renew during it)."""
        expires = seen + float(spec.get("leaseDurationSeconds") or 0)
        outage = self._unreachable_at
        if outage is not None and seen <= outage:
            expires = max(expires, outage + self.rejoin_grace)
        return expires

    def _recompute(self) -> None:
        now = self._now()
        live: set[str] = set()
        leaving: set[str] = set()
        expired: dict[str, str] = {}
        next_expiry: float | None = None
        for name in set(self._observed) | set(self._held):
            lease = self.reflector.store.get(self.namespace, name) or {}
            meta = metadata_of(lease)
            member = (meta.get("labels") or {}).get(MEMBER_LABEL) or ""
            spec, seen = self._observed.get(name) or ({}, now)
            held = self._held.get(name)
            if not member or (spec.get("holderIdentity") or "") != member:
                if held is None or held[1] <= now:
                    self._held.pop(name, None)
                    continue  # released, or taken over once its hold lapsed
                member, expires = held  # deleted or changed by someone else: not yet
            else:
                expires = self._expiry(spec, seen)
                if held is not None and held[0] == member:
                    expires = max(expires, held[1])
            if expires <= now:
                expired[member] = name
                continue
            live.add(member)
            next_expiry = expires if next_expiry is None else min(next_expiry, expires)
            if (meta.get("annotations") or {}).get(LEAVING_ANNOTATION):
                leaving.add(member)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if next_expiry is not None:
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(max(0.0, next_expiry - now) + 0.001, self._recompute)
        candidates = frozenset(live - leaving)
        if (frozenset(live), candidates, expired) == (self._live, self._candidates, self._expired):
            return
        for member in sorted(live - self._live):
            log.info("ring %s: member %s joined", self.ring, member)
        for member in sorted(set(expired) - set(self._expired)):
            log.info("ring %s: the Lease of member %s expired", self.ring, member)
        for member in sorted(self._live - live - set(expired)):
            log.info("ring %s: member %s left", self.ring, member)
        for member in sorted(live - candidates - (self._live - self._candidates)):
            log.info("ring %s: member %s is leaving (handing its objects over)", self.ring, member)
        self._live, self._candidates, self._expired = frozenset(live), candidates, expired
        for listener in list(self.on_change):
            try:
                listener()
            except Exception:
                log.exception("ring %s: membership listener failed", self.ring)

    def _now(self) -> float:
        return self._clock() if self._clock is not None else asyncio.get_running_loop().time()
