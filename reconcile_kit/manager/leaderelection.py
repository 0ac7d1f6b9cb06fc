"""Leader election on a ``coordination.k8s.io/v1`` Lease, with client-go's semantics.

The algorithm is client-go's ``tools/leaderelection`` (``leaderelection.go``) over its
``resourcelock/leaselock.go``:

* **Acquire** (``tryAcquireOrRenew``): GET the Lease; on 404 POST one naming this
  candidate (``holderIdentity``, ``leaseDurationSeconds``, ``acquireTime``, ``renewTime``,
  ``leaseTransitions`` 0). A lease held by someone else is left alone until it expires;
  an expired or released one is taken over by a PUT with ``leaseTransitions + 1``.
* **Expiry** is judged on the local clock only: a candidate remembers the record it last
  saw and *when it first saw it change* (the whole record is compared, timestamps are
  never interpreted), and the lease expires ``leaseDurationSeconds`` after that moment.
  Clock skew between machines therefore does not matter, only clock rates.
* **Renew**: the leader PUTs the lease every ``retry_period`` with the resourceVersion of
  the Lease it last read or wrote (client-go's optimistic fast path); when that fails (409
  or any error) it GETs the Lease and tries again from what it read.
* **Release** (graceful shutdown): a PUT with an empty ``holderIdentity``,
  ``leaseDurationSeconds`` 1 and ``leaseTransitions`` kept, so a standby takes over at its
  next retry instead of waiting for expiry.

Timestamps are written as MicroTime (``2006-01-02T15:04:05.000000Z``, UTC, wall clock);
each candidate's stamps strictly increase, so every renewal changes the record.

Safety (never two leaders reconciling): a leader steps down as soon as ``renew_deadline``
seconds have passed since it *sent* its last successful renewal. Others cannot take the
lease before ``lease_duration`` seconds after they saw that renewal, and they cannot have
seen it before it was sent; every write carries a resourceVersion, so of two candidates
taking over at once only one succeeds. Stepping down cancels the ``on_started_leading``
task and awaits ``on_stopped_leading`` before anything else happens, so leadership-gated
work must stop within the ``lease_duration - renew_deadline`` margin (5 s by default).

Differences from client-go, all deliberate:

* After losing the lease, :meth:`LeaderElection.run` does not return (client-go's Run
  returns, and its users usually exit the process): it steps down, then campaigns again.
  If its renewals merely failed and nobody took over, the record still names it and it
  may win again (``leaseTransitions`` unchanged, as client-go does for its own record).
* While the lease is validly held by someone else, a candidate checks it every
  ``retry_period`` exactly, and at the instant it expires (by its own observation) rather
  than at the next jittered retry: a dead leader is replaced within
  ``lease_duration + retry_period`` of its last renewal. Retries in every other case
  (free lease, errors, lost races) are jittered as client-go's ``wait.JitterUntil``:
  ``retry_period * (1 + random() * 1.2)``.
* ``leaseDurationSeconds`` is ``lease_duration`` rounded *up* to whole seconds (client-go
  truncates), so others never wait less than this candidate assumes.
* ``on_stopped_leading`` is called only after leading (client-go calls it whenever Run
  returns), and ``on_new_leader`` is not called for a released (holderless) lease.
* After :meth:`LeaderElection.release` the candidate holds off for ``lease_duration``
  seconds before campaigning again, so that a standby gets the lease.
* A record is this candidate's only when it names its identity *and* carries a
  ``renewTime`` this candidate sent (client-go compares the holder only). Another
  process given the same identity, or this replica's previous run after a crash, wrote
  the record the candidate finds: it waits as a standby until that record expires (two
  processes of one identity would otherwise both renew it and both lead).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import math
import random
import socket
import uuid
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from kr8s.asyncio import Api

from ..client.errors import APIError, NotFoundError, ReconcileKitError
from ..client.request import Reply, Target, send
from ..meta.objects import metadata_of
from ..meta.time import format_micro_time, parse_time

__all__ = ["LeaderElection", "LeaseError"]

log = logging.getLogger(__name__)

JITTER_FACTOR = 1.2
"""client-go's ``leaderelection.JitterFactor``: acquire retries wait up to 2.2 periods."""
LEASE_API_VERSION = "coordination.k8s.io/v1"

Callback = Callable[[], Awaitable[None] | None]
IdentityCallback = Callable[[str], Awaitable[None] | None]
StatusListener = Callable[[bool], None]

_EXPIRY_STEP = 0.001  # seconds past the observed expiry at which a standby tries to take over


class LeaseError(ReconcileKitError):
    """The Lease was used in a way the election does not allow (updated before it was
    read), or cannot be created because its namespace does not exist. Other refused
    requests raise :class:`~reconcile_kit.client.errors.APIError`."""


_SENT_KEPT = 64
"""renewTimes a candidate remembers having sent (a few seconds of renewals and retries)."""


@dataclass(frozen=True)
class _Record:
    """client-go's LeaderElectionRecord: the Lease spec fields the election uses."""

    holder: str = ""
    duration: int = 0
    acquire_time: str | None = None
    renew_time: str | None = None
    transitions: int = 0

    @classmethod
    def from_spec(cls, spec: dict[str, Any]) -> _Record:
        return cls(
            holder=spec.get("holderIdentity") or "",
            duration=int(spec.get("leaseDurationSeconds") or 0),
            acquire_time=spec.get("acquireTime"),
            renew_time=spec.get("renewTime"),
            transitions=int(spec.get("leaseTransitions") or 0),
        )

    def to_spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = {
            "holderIdentity": self.holder,
            "leaseDurationSeconds": self.duration,
            "leaseTransitions": self.transitions,
        }
        if self.acquire_time is not None:
            spec["acquireTime"] = self.acquire_time
        if self.renew_time is not None:
            spec["renewTime"] = self.renew_time
        return spec


class _LeaseLock:
    """GET, POST and PUT of one Lease (client-go's LeaseLock), caching the last one seen.

    PUT sends the cached object, so its ``metadata.resourceVersion`` makes the write
    conditional: a lease changed by someone else since answers 409.
    """

    def __init__(
        self,
        api: Api,
        namespace: str,
        name: str,
        labels: dict[str, str] | None = None,
        annotations: dict[str, str | None] | None = None,
    ) -> None:
        self.api = api
        self.namespace = namespace
        self.name = name
        self.labels = labels if labels is not None else {}
        self.annotations = annotations if annotations is not None else {}
        self.lease: dict[str, Any] | None = None

    def _metadata(self, metadata: dict[str, Any]) -> dict[str, Any]:
        """``metadata`` with the lock's labels and annotations written over it."""
        metadata = dict(metadata)
        for field, values in (("labels", self.labels), ("annotations", self.annotations)):
            if values or field in metadata:
                merged = {**(metadata.get(field) or {}), **values}
                metadata[field] = {k: v for k, v in merged.items() if v is not None}
        return metadata

    def describe(self) -> str:
        return f"{self.namespace}/{self.name}"

    async def get(self) -> _Record | None:
        """The lease's record, or None when it does not exist (LeaseError otherwise)."""
        reply = await self._send("GET", f"leases/{self.name}")
        if reply.status == 404:
            return None
        self.lease = reply.json()
        return _Record.from_spec(self.lease.get("spec") or {})

    async def create(self, record: _Record) -> None:
        """POST the Lease holding ``record``.

        Raises:
            LeaseError: its namespace does not exist (named, with what to do).
            APIError: any other refusal.
        """
        metadata = self._metadata({"name": self.name, "namespace": self.namespace})
        body = {
            "apiVersion": LEASE_API_VERSION,
            "kind": "Lease",
            "metadata": metadata,
            "spec": record.to_spec(),
        }
        try:
            self.lease = (await self._send("POST", "leases", body)).json()
        except NotFoundError as error:
            if not error.server_message.startswith("namespaces "):
                raise
            raise LeaseError(
                f"namespace {self.namespace!r} does not exist, so lease {self.describe()} cannot"
                f" be created: create it (kubectl create namespace {self.namespace}) or give"
                " a namespace that exists"
            ) from error

    async def update(self, record: _Record) -> None:
        if self.lease is None:
            raise LeaseError(f"lease {self.describe()} not read yet: get or create it first")
        metadata = self._metadata(metadata_of(self.lease))
        reply = await self._send(
            "PUT",
            f"leases/{self.name}",
            {**self.lease, "metadata": metadata, "spec": record.to_spec()},
        )
        self.lease = reply.json()

    async def _send(self, method: str, url: str, body: Any = None) -> Reply:
        """One request about the lease; a 404 answers, other errors raise APIError."""
        return await send(
            self.api,
            method,
            version=LEASE_API_VERSION,
            namespace=self.namespace,
            url=url,
            body=body,
            target=Target("Lease", self.namespace, self.name),
            accept=(404,) if method == "GET" else (),
            retry=False,  # the election's own timing decides when to try again
        )


class LeaderElection:
    """Campaign for, hold and give up one Lease, as client-go's LeaderElector.

    Args:
        name: the Lease's name.
        namespace: the Lease's namespace.
        identity: this candidate's ``holderIdentity`` (default: hostname, ``_``, a uuid4).
        lease_duration: seconds a standby waits, from when it saw the lease last change,
            before taking it over (client-go LeaseDuration, default 15).
        renew_deadline: seconds after its last successful renewal was sent at which a
            leader that could not renew steps down (RenewDeadline, default 10).
        retry_period: seconds between acquire attempts and between renewals
            (RetryPeriod, default 2).
        release_on_cancel: release the lease when :meth:`stop` is called or :meth:`run`
            is cancelled while leading (ReleaseOnCancel). Only set it once the
            leadership-gated work has stopped by then, which :meth:`stop` ensures.
        on_started_leading: called in a task of its own when this candidate starts
            leading, so it may run the leadership-gated work itself; if still running when
            leadership ends, the task is cancelled and awaited (for at most
            ``lease_duration - renew_deadline`` seconds, after which an error is logged).
        on_stopped_leading: called, and awaited, when this candidate stops leading: after
            the ``on_started_leading`` task has ended, before the lease is released.
        on_new_leader: called, and awaited, with the holder's identity whenever a new
            holder is observed (this candidate included; the first holder seen too).
        clock: seconds of a monotonic clock (default: the running loop's ``time``).
        labels: labels every write of the Lease carries (e.g. the ring of a sharding
            membership Lease); None: none added.

    :attr:`annotations` (a dict, initially empty) are written with every write of the
    Lease; a value of None removes that annotation. Change it, then :meth:`renew_now` to
    write it at once.

    Callbacks may be plain functions or coroutine functions; their exceptions are logged.
    Those that are awaited should return promptly: they run in the election's own task.
    Order on winning: ``on_new_leader(identity)``, :attr:`is_leader` becomes True,
    ``on_started_leading``; on losing: :attr:`is_leader` becomes False, the
    ``on_started_leading`` task ends, ``on_stopped_leading``.
    ``on_status_change`` is a list of ``f(is_leader)`` functions called synchronously
    whenever :attr:`is_leader` changes (e.g. for the ``leader_election_master_status``
    gauge).

    Raises:
        ValueError: unless ``lease_duration > renew_deadline > retry_period * 1.2 > 0``
            (client-go's checks), or when ``name`` is empty.
    """

    def __init__(
        self,
        name: str,
        *,
        namespace: str = "default",
        identity: str | None = None,
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        release_on_cancel: bool = True,
        on_started_leading: Callback | None = None,
        on_stopped_leading: Callback | None = None,
        on_new_leader: IdentityCallback | None = None,
        clock: Callable[[], float] | None = None,
        labels: dict[str, str] | None = None,
    ) -> None:
        _validate(name, lease_duration, renew_deadline, retry_period)
        self.labels: dict[str, str] = dict(labels or {})
        self.annotations: dict[str, str | None] = {}
        self.name = name
        self.namespace = namespace
        self.identity = identity or f"{socket.gethostname()}_{uuid.uuid4()}"
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self._clock = clock
        self.release_on_cancel = release_on_cancel
        self.on_status_change: list[StatusListener] = []
        self.on_started_leading = on_started_leading
        self.on_stopped_leading = on_stopped_leading
        self.on_new_leader = on_new_leader
        self._lock: _LeaseLock | None = None
        self._record: _Record | None = None
        self._observed_at = 0.0
        self._renewed_at = 0.0
        self._hold_off_until = -math.inf
        self._reported: str | None = None
        self._last_failure: str | None = None  # the last failure logged (once while it lasts)
        self._last_stamp: datetime | None = None
        # the renewTimes this process sent lately, answered or not (a PUT whose answer was
        # lost may have landed): a record carrying one of them is this process's
        self._sent_renewals: deque[datetime] = deque(maxlen=_SENT_KEPT)
        self._leading = False
        self._leading_event = asyncio.Event()
        self._not_leading_event = asyncio.Event()
        self._not_leading_event.set()
        self._mutex = asyncio.Lock()
        self._started: asyncio.Task[None] | None = None
        self._stepping: asyncio.Task[None] | None = None
        self._campaign: asyncio.Task[None] | None = None
        self._running = False
        self._stopping = False
        self._done = asyncio.Event()

    @property
    def is_leader(self) -> bool:
        """True while this candidate leads (and leadership-gated work may run)."""
        return self._leading

    def holds_lease(self) -> bool:
        """Whether this candidate leads and its last successful renewal began less than
        ``renew_deadline`` seconds ago, by its own monotonic clock: the write fence of the
        work it gates (:mod:`reconcile_kit.client.fencing`). Checked, unlike
        :attr:`is_leader`, without waiting for the renewal loop to run: a process that was
        paused past its deadline sees False first thing after it resumes, before its
        renewal loop steps down. Others take over only after a whole ``lease_duration``
        without a renewal, so ``lease_duration - renew_deadline`` seconds separate the two.
        """
        return self._leading and self._now() < self._renewed_at + self.renew_deadline

    @property
    def leader(self) -> str | None:
        """The holder of the lease as last observed (None: unknown or released)."""
        return (self._record.holder or None) if self._record is not None else None

    async def run(self, api: Api) -> None:
        """Campaign until :meth:`stop`: acquire the lease, renew it until lost, repeat.

        ``api`` is a kr8s asyncio Api. Returns after :meth:`stop` (at once if it was
        called before). Cancelling it steps down and, with ``release_on_cancel``,
        releases the lease, then re-raises CancelledError.

        Raises:
            RuntimeError: when this instance is already running.
        """
        if self._running:
            raise RuntimeError(f"leader election {self.name}: run() is already campaigning")
        if self._stopping:
            return
        self._lock = _LeaseLock(
            api,
            self.namespace,
            self.name,
            self.labels,
            self.annotations,
        )
        self._running = True
        self._done.clear()
        self._campaign = asyncio.create_task(
            self._campaign_forever(), name=f"leader election {self.name}"
        )
        try:
            await self._campaign
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if not self._stopping or (current is not None and current.cancelling()):
                raise
        finally:
            try:
                await self._shutdown()
            finally:
                self._running = False
                self._done.set()

    @contextlib.asynccontextmanager
    async def campaign(self, api: Api, graceful: Callable[[], bool]) -> AsyncIterator[None]:
        """Campaign (:meth:`run`) in the background while the ``async with`` block runs;
        at its end stop campaigning: on a graceful stop (``graceful()`` true then; the work
        the lease gates is already down) release the lease so that a standby takes over at
        once (client-go's ``ReleaseOnCancel``), then :meth:`stop`; otherwise cancel the
        campaign (a lost lease, a failure: others take over when it expires). Returns once
        the campaign has ended. The one ending of every campaign a manager runs (its
        leadership, a ring's membership and its sharder).

        Args:
            api: a kr8s asyncio Api.
            graceful: called once the block ends: whether it ended by a graceful stop.
        """
        task = asyncio.create_task(self.run(api))
        try:
            yield
        finally:
            if graceful():
                await self.release()
                await self.stop()
            else:
                task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def leading(self) -> None:
        """Wait until this candidate leads (returns at once if it does)."""
        await self._leading_event.wait()

    async def lost(self) -> None:
        """Wait until this candidate does not lead (at once if it never did)."""
        await self._not_leading_event.wait()

    async def release(self) -> None:
        """Give the lease up now: step down, then PUT it without a holder.

        Does nothing to the lease unless this candidate is its last observed holder. A
        running :meth:`run` keeps campaigning but only after ``lease_duration`` seconds, so
        a standby takes over. A server error (5xx, no answer) is retried every quarter of
        ``retry_period`` for up to ``renew_deadline`` seconds; failures are logged, not
        raised (the lease then expires for others ``lease_duration`` seconds after its last
        renewal).
        """
        await self._step_down()
        await self._release_if_held()

    async def renew_now(self) -> bool:
        """While leading, renew the Lease now (writing :attr:`annotations`) instead of at
        the next retry period. Returns whether this candidate leads and the write
        succeeded; failures are logged, not raised (the regular renewals go on)."""
        if not self._leading or self._lock is None:
            return False
        return await self._attempt()

    async def stop(self) -> None:
        """Stop campaigning for good: step down and, with ``release_on_cancel``, release.

        Returns when :meth:`run` has returned.
        """
        self._stopping = True
        if not self._running:
            await self._shutdown()
            return
        if self._campaign is not None:
            self._campaign.cancel()
        await self._done.wait()

    # -- the campaign --------------------------------------------------------------------

    async def _campaign_forever(self) -> None:
        while True:
            await self._acquire()
            self._become_leader()
            await self._renew()
            await self._step_down()

    async def _acquire(self) -> None:
        """client-go's acquire: try at once, then after each retry delay, until it leads."""
        log.info("attempting to acquire leader lease %s", self._describe())
        while not await self._attempt():
            await asyncio.sleep(self._retry_delay())
        log.info("successfully acquired lease %s as %s", self._describe(), self.identity)

    async def _renew(self) -> None:
        """Renew every retry period until a renewal misses the deadline or we step down."""
        while self._leading:
            await asyncio.sleep(self.retry_period)
            if not await self._renew_until_deadline():
                return

    async def _renew_until_deadline(self) -> bool:
        deadline = self._renewed_at + self.renew_deadline
        try:
            async with asyncio.timeout(max(0.0, deadline - self._now())):
                while self._leading:
                    if await self._attempt():
                        return True
                    await asyncio.sleep(self.retry_period)
        except TimeoutError:
            log.warning(
                "failed to renew lease %s within %ss: stepping down",
                self._describe(),
                self.renew_deadline,
            )
        return False

    def _retry_delay(self) -> float:
        """Seconds before the next acquire attempt (see the module docstring)."""
        record = self._record
        if record is not None and record.holder and not self._holds() and self._valid():
            remaining = self._observed_at + record.duration - self._now()
            return min(self.retry_period, remaining + _EXPIRY_STEP)
        return self.retry_period * (1 + random.random() * JITTER_FACTOR)

    async def _attempt(self) -> bool:
        """One tryAcquireOrRenew under the lock; errors are logged and count as failure."""
        try:
            async with self._mutex:
                if self._now() < self._hold_off_until:
                    return False
                async with asyncio.timeout(self.renew_deadline):
                    succeeded = await self._try_acquire_or_renew()
        except Exception as error:
            self._log_failure(error)
            succeeded = False
        else:
            self._last_failure = None  # answered: a failure again is news
        await self._report_transition()
        return succeeded

    def _log_failure(self, error: Exception) -> None:
        """A WARNING for an attempt that failed with ``error``; DEBUG while the same
        failure repeats (every retry period, until an attempt is answered)."""
        line = f"leader election {self._describe()}: {error}"
        if line == self._last_failure:
            log.debug("%s (again)", line)
            return
        self._last_failure = line
        log.warning("%s; retrying (said again only when the error changes)", line)

    async def _try_acquire_or_renew(self) -> bool:
        assert self._lock is not None
        started = self._now()
        stamp = self._stamp()
        self._sent_renewals.append(parse_time(stamp))
        mine = _Record(self.identity, math.ceil(self.lease_duration), stamp, stamp)
        if self._holds() and self._valid() and await self._fast_renew(mine):
            self._renewed_at = started
            return True
        current = await self._lock.get()
        if current is None:
            await self._lock.create(mine)
            return self._wrote(mine, started)
        if current != self._record:
            self._observe(current)
        if current.holder and self._valid() and not self._holds():
            return False
        if self._holds():
            mine = replace(mine, acquire_time=current.acquire_time, transitions=current.transitions)
        else:
            mine = replace(mine, transitions=current.transitions + 1)
        await self._lock.update(mine)
        return self._wrote(mine, started)

    async def _fast_renew(self, mine: _Record) -> bool:
        """Renew from the cached lease without a GET; False (logged) when that fails."""
        assert self._lock is not None and self._record is not None
        mine = replace(
            mine, acquire_time=self._record.acquire_time, transitions=self._record.transitions
        )
        try:
            await self._lock.update(mine)
        except Exception as error:
            log.info(
                "optimistic renewal of %s failed, reading it again: %s", self._describe(), error
            )
            return False
        self._observe(mine)
        return True

    def _wrote(self, record: _Record, started: float) -> bool:
        self._observe(record)
        self._renewed_at = started
        return True

    # -- leading and stepping down -------------------------------------------------------

    def _become_leader(self) -> None:
        self._stepping = None
        self._set_leading(True)
        if self.on_started_leading is not None:
            self._started = asyncio.create_task(
                self._call("on_started_leading", self.on_started_leading),
                name=f"leader election {self.name}: leading",
            )

    async def _step_down(self) -> None:
        """Stop leading: flags first, then end the leading task, then on_stopped_leading.

        Concurrent callers all wait until on_stopped_leading has returned.
        """
        current = asyncio.current_task()
        if self._leading:
            self._set_leading(False)
            spared = current if current is self._started else None
            self._stepping = asyncio.create_task(self._end_term(spared))
        stepping = self._stepping
        if stepping is not None and stepping is not current:
            await asyncio.shield(stepping)

    async def _end_term(self, spared: asyncio.Task[Any] | None) -> None:
        started, self._started = self._started, None
        if started is not None and started is not spared and not started.done():
            started.cancel()
            margin = self.lease_duration - self.renew_deadline
            done, _ = await asyncio.wait([started], timeout=margin)
            if not done:
                log.error(
                    "on_started_leading of %s ignored cancellation for %ss: another"
                    " leader may start while it runs",
                    self._describe(),
                    margin,
                )
        await self._call("on_stopped_leading", self.on_stopped_leading)

    async def _shutdown(self) -> None:
        await self._step_down()
        if self.release_on_cancel:
            await self._release_if_held()

    async def _release_if_held(self) -> None:
        """client-go's release: PUT an empty holder, duration 1 s, transitions kept."""
        async with self._mutex:
            if self._lock is None or self._record is None or not self._holds():
                return
            stamp = self._stamp()
            record = _Record("", 1, stamp, stamp, self._record.transitions)
            try:
                async with asyncio.timeout(self.renew_deadline):
                    await self._update_retrying(record)
            except Exception as error:
                log.error("failed to release lease %s: %s", self._describe(), error)
                return
            self._observe(record)
            self._hold_off_until = self._now() + self.lease_duration
            log.info("released lease %s", self._describe())
        await self._report_transition()

    async def _update_retrying(self, record: _Record) -> None:
        """PUT ``record``, sent again after ``retry_period / 4`` seconds while the server
        fails (5xx, no answer): the PUT is conditional on the resourceVersion read, so a
        repeat of one that took effect answers 409 (raised)."""
        assert self._lock is not None
        while True:
            try:
                await self._lock.update(record)
                return
            except APIError as error:
                if error.status and error.status < 500:
                    raise
                log.warning("releasing lease %s: %s; trying again", self._describe(), error)
            await asyncio.sleep(self.retry_period / 4)

    def _set_leading(self, value: bool) -> None:
        self._leading = value
        for event, state in ((self._leading_event, value), (self._not_leading_event, not value)):
            if state:
                event.set()
            else:
                event.clear()
        for listener in list(self.on_status_change):
            try:
                listener(value)
            except Exception:
                log.exception("leader election %s: status listener failed", self.name)

    # -- observations ----------------------------------------------------------------------

    def _observe(self, record: _Record) -> None:
        self._record = record
        self._observed_at = self._now()

    def _holds(self) -> bool:
        """Whether the observed record is this process's: its identity, and a renewTime
        this process sent (answered or not: a renewal whose answer was lost may have
        landed). A record under this identity that another process wrote
        (another replica given the same identity, or this one's previous run) is someone
        else's: waited for as a standby, as any other holder (client-go would renew it,
        and two processes would lead)."""
        record = self._record
        if record is None or record.holder != self.identity or record.renew_time is None:
            return False
        try:
            return parse_time(record.renew_time) in self._sent_renewals
        except ValueError:
            return False

    def _valid(self) -> bool:
        """The observed record has not expired (observed time + its own duration)."""
        record = self._record
        return record is not None and self._observed_at + record.duration > self._now()

    async def _report_transition(self) -> None:
        holder = self.leader
        if holder == self._reported:
            return
        self._reported = holder
        if holder is not None:
            await self._call("on_new_leader", self.on_new_leader, holder)

    async def _call(self, what: str, callback: Callable[..., Any] | None, *args: Any) -> None:
        if callback is None:
            return
        try:
            result = callback(*args)
            if inspect.isawaitable(result):
                await result
        except Exception:
            log.exception("leader election %s: %s failed", self.name, what)

    def _now(self) -> float:
        return self._clock() if self._clock is not None else asyncio.get_running_loop().time()

    def _stamp(self) -> str:
        """Now as MicroTime, strictly after this candidate's previous stamp."""
        now = datetime.now(UTC)
        if self._last_stamp is not None and now <= self._last_stamp:
            now = self._last_stamp + timedelta(microseconds=1)
        self._last_stamp = now
        return format_micro_time(now)

    def _describe(self) -> str:
        return f"{self.namespace}/{self.name}"


def _validate(name: str, lease_duration: float, renew_deadline: float, retry_period: float) -> None:
    if not name:
        raise ValueError("the lease name must not be empty")
    if min(lease_duration, renew_deadline, retry_period) <= 0:
        raise ValueError("lease_duration, renew_deadline and retry_period must be positive")
    if lease_duration <= renew_deadline:
        raise ValueError("lease_duration must be greater than renew_deadline")
    if renew_deadline <= JITTER_FACTOR * retry_period:
        raise ValueError("renew_deadline must be greater than retry_period * 1.2")
