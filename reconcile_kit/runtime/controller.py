"""Controller: watch events -> keyed work queue -> workers -> ``reconcile(obj, ctx)``.

Level-based, as controller-runtime and kube-rs: a reconcile gets the current object (built
from the reflector's cache), never a diff, and must be idempotent. Events of the primary
kind, of owned children (``owns``: their controller owner reference) and of anything with
a custom mapping (``watches``) enqueue keys; the queue coalesces them, keeps one worker
per key, and retries failures with the controller's
:class:`~reconcile_kit.runtime.queue.RetryPolicy`.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

from kr8s.asyncio import Api
from kr8s.asyncio.objects import APIObject

from ..client.connect import connect
from ..client.errors import (
    APIError,
    InvalidObjectError,
    LeaseExpiredError,
    ReconcileKitError,
)
from ..client.fencehook import install_fence_check
from ..client.fencing import WriteFence, current_fence, fenced
from ..client.ratelimit import install_rate_limit
from ..client.transport import (
    acquire_transport,
    close_session,
    release_transport,
)
from ..meta.objects import ObjectRef, raw_of
from ..meta.validation import qualified_name_errors
from ..patch.snapshot import held_document
from .action import Action, awaitable_result, checked_action, require_sync
from .apply import AppliedIntents
from .clusters import NO_CLUSTERS, ClusterHandle
from .config import ControllerConfig
from .context import Context
from .events import EventRecorder
from .ownwrites import OwnWrites
from .queue import (
    DEFAULT_RETRY_RATE_LIMIT,
    QueueShutDown,
    RetryPolicy,
    RetryPolicyLike,
    WorkQueue,
)
from .reasons import ReconcileReason
from .reflector import ADDED, DELETED, MODIFIED, Reflector, ReflectorEvent
from .resources import KindLike, ResourceInfo, resolve_kind
from .sharding import ShardFilter, ShardSide
from .sources import CacheView, MapScope, Source, owner_keys
from .store import Entry, Obj, Store
from .tracing import traced
from .typed import ModelSide, is_model_class
from .waits import first

if TYPE_CHECKING:
    from ..typed.resource import CustomResource
    from ..typed.reuse import ModelCache

__all__ = [
    "Action",
    "Controller",
    "ErrorPolicy",
    "Mapper",
    "OnDelete",
    "Predicate",
    "Reconcile",
    "ReconcileReason",
    "RunOptions",
    "Stats",
]

log = logging.getLogger(__name__)

Predicate = Callable[[ReflectorEvent], bool]
Reconcile = Callable[[Any, Context], Awaitable["Action | None"]]
RECONCILE = "reconcile"  # the user's function, as messages name it
ErrorPolicy = Callable[[Any, BaseException, Context], "Action | Awaitable[Action]"]
OnDelete = Callable[[Any, Context], Awaitable[None]]


class RunOptions(TypedDict, total=False):
    """:meth:`Controller.run`'s options, for what runs a controller on a user's behalf
    (e.g. ``MultiClusterManager.add``)."""

    error_policy: ErrorPolicy | None
    data: Any  # Any: the user's, handed back as ctx.data as they typed it
    on_delete: OnDelete | None


Mapper = Callable[[Obj], Iterable["ObjectRef | tuple[str, str]"]]

WORKER_TURN = 0.001
"""Seconds a worker may run reconciles back to back without yielding to the event loop:
reconciles that send nothing (no-ops after a restart) never suspend, and a queue of
100,000 keys would otherwise hold the loop for seconds (issue 19)."""
FENCED_RETRY = 1.0
"""Seconds before a key is looked at again when the replica's Lease was not valid (the
manager stops the controller meanwhile, or the Lease is renewed)."""


@dataclass
class Stats:
    """Counters of one controller in this process (``controller.stats``), for tests, logs
    and benchmarks. The Prometheus metrics are reported apart, as they happen, through
    ``ControllerConfig.metrics`` (a manager's :class:`~reconcile_kit.manager.metrics.Metrics`);
    only ``drains`` feeds one (the shard handover counter, at each scrape)."""

    reconciles: int = 0
    errors: int = 0
    requeues: int = 0
    mapper_errors: int = 0
    active: int = 0
    lost_ownership: int = 0
    """Reconciles that found their object moved to another replica at the server (a
    fenced write refused): not retried here."""
    drains: int = 0
    """Objects handed to another replica (sharded controllers: drains acknowledged, and
    objects moved by :meth:`Controller.hand_over`)."""
    results: dict[str, int] = field(default_factory=dict)


class _Turn:
    """A worker's turn on the event loop: over once it ran :data:`WORKER_TURN` seconds
    without the loop running anything else. A callback scheduled at the turn's start
    tells whether the worker was suspended meanwhile (a reconcile that awaited a request:
    no ``sleep(0)`` needed, and none taken)."""

    __slots__ = ("_loop", "_started", "_yielded")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self.start()

    def start(self) -> None:
        """Start a new turn (after the worker yielded)."""
        self._started = self._loop.time()
        self._yielded = False
        self._loop.call_soon(self._mark)

    def _mark(self) -> None:
        self._yielded = True

    def over(self) -> bool:
        """Whether the worker must yield now: its turn lasted :data:`WORKER_TURN` and the
        loop ran nothing else meanwhile (a turn in which it was suspended starts over)."""
        if self._loop.time() - self._started <= WORKER_TURN:
            return False
        if self._yielded:
            self.start()
            return False
        return True


class Controller:
    """Runs a reconcile function for every object of ``kind`` that changes.

    Args:
        kind: a kr8s APIObject class or a kind string the API server knows
            (``"ConfigMap"``, ``"Widget.example.com"``).
        api: a kr8s asyncio Api; None means the manager's when added to one, else kr8s's
            default discovery (kubeconfig, then in-cluster) when the controller runs.
        namespace: only this namespace (None: all).
        label_selector: server-side filter of the primary watch (label selector syntax).
        field_selector: server-side filter of the primary watch (field selector syntax).
        concurrency: reconciles running at once (never two for the same key).
        retry: the retry policy for failed reconciles (a RetryPolicy, seconds, a list of
            seconds, or ``(attempt, ctx, error) -> seconds``); default client-go's
            exponential 5 ms -> 1000 s.
        retry_rate_limit: ``(qps, burst)`` of the token bucket all retries of failed
            reconciles share (retries per second, retries at once): a retry runs after the
            later of its key's ``retry`` delay and its token. Default ``(10.0, 100)``, as
            client-go's ``DefaultTypedControllerRateLimiter``; None: per-key delays only.
            A reconcile's ``Action.requeue`` is not limited (controller-runtime's
            ``RequeueAfter``); an ``error_policy``'s is a retry, and is.
        predicates: ``(event) -> bool`` filters of primary events (see
            :mod:`reconcile_kit.runtime.predicates`); all must pass. Plain functions: they
            are called for each watch event, synchronously.
        name: the controller's name in logs and metrics (default: the kind in lower case).
        resync: reconcile every cached object this often, in seconds (None: never).
        config: how the controller reaches the API server and where it reports
            (transport, ``qps``/``burst`` rate limit, reflector pool, event recorder,
            metrics: :class:`~reconcile_kit.runtime.config.ControllerConfig`); default
            ``ControllerConfig()``. A Manager replaces it with its own for the controllers
            it runs.
        on_invalid: for a typed ``kind``: ``(obj, error, ctx)`` (plain or async) called
            with the kr8s object and its
            :class:`~reconcile_kit.client.errors.InvalidObjectError` when a cached object
            does not fit the model (e.g. to mark it Stalled). Such an object is never
            handed to the reconcile: the error is logged (naming kind/namespace/name and
            the field), counted (result ``invalid``) and recorded as a Warning Event
            ``InvalidObject``; it is looked at again when it changes.
        reuse_models: for a typed ``kind``: how many models (the most recently
            reconciled objects) are kept to hand again to the next reconcile of an object
            whose cached state did not change, when the reconcile left the model as read
            (mutations are tracked: ``reconcile_kit.typed.tracking``); such a reconcile
            skips validation and its PatchHelper sends nothing without serializing the
            model. 0: validate for every reconcile.

    ``shard`` (an attribute, set by a :class:`~reconcile_kit.manager.Manager` with
    ``sharding=``; None: not sharded) is a
    :class:`~reconcile_kit.runtime.sharding.ShardFilter`: the controller then watches only
    its replica's share of the primary kind and of the kinds it ``owns()``, and
    acknowledges drains instead of reconciling (see :mod:`reconcile_kit.runtime.sharding`).

    Whoever opens a resource closes it: when :meth:`run` ends (shutdown or error) the
    controller closes the aiohttp connections it opened (unless another user of the api,
    such as its manager, still runs), the recorder it created, and the api's client if
    it created the api.

    ``kind`` may be a typed resource (a :class:`~reconcile_kit.typed.CustomResource`
    subclass): the reconcile then gets an instance of it, read from the cache.

    Raises:
        ValueError: ``concurrency < 1``, a negative ``reuse_models``, or (from ``config``)
            an unknown transport or an invalid rate limit.
        TypeError: a predicate is an ``async def`` (its coroutine, always true, would let
            every event through), naming it.
    """

    def __init__(
        self,
        kind: KindLike,
        *,
        api: Api | None = None,
        concurrency: int = 1,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        retry: RetryPolicyLike | None = None,
        predicates: Iterable[Predicate] = (),
        name: str | None = None,
        resync: float | None = None,
        config: ControllerConfig | None = None,
        retry_rate_limit: tuple[float, int] | None = DEFAULT_RETRY_RATE_LIMIT,
        on_invalid: Callable[[Any, InvalidObjectError, Context], Any] | None = None,
        reuse_models: int = 256,
    ) -> None:
        self.typed: ModelSide | None = None
        """The typed side when ``kind`` is a CustomResource class (None otherwise)."""
        if is_model_class(kind):
            self.typed = ModelSide(kind, on_invalid, reuse_models)
            kind = kind.kr8s_class()  # the typed kind's kr8s class: watched as any other
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency}")
        self.config = config if config is not None else ControllerConfig()
        self.api = api
        self.kind = kind
        self.namespace = namespace
        self.retry_policy = RetryPolicy.coerce(retry)
        self.label_selector = label_selector
        self.field_selector = field_selector
        self.concurrency = concurrency
        self.predicates = tuple(predicates)
        for predicate in self.predicates:
            require_sync(predicate, "predicate", "(event) -> bool")
        self.name = name or (kind if isinstance(kind, str) else kind.kind).lower()
        self.resync = resync
        self.stats = Stats()
        self.recorder: EventRecorder | None = self.config.recorder
        """The recorder behind ``ctx.recorder`` while the controller runs (the config's, or
        one of its own)."""
        self.intents = AppliedIntents()
        """What ctx.apply last applied to each child (see runtime/apply.py)."""
        self.shard: ShardFilter | None = None
        self.lease: Callable[[], bool] | None = None
        """Set by a Manager for controllers gated by leader election or sharded: whether
        the Lease entitling this replica to reconcile is still valid by its own clock
        (e.g. ``LeaderElection.holds_lease``). While it is not, no reconcile starts and
        no write is sent (see :mod:`reconcile_kit.client.fencing`)."""
        self.lease_holder = ""
        """What ``lease`` stands for, in messages (``"leadership of cmgen"``)."""
        self.cluster = ""
        """The cluster this controller reconciles in, set by a
        :class:`~reconcile_kit.multicluster.MultiClusterManager` (``ctx.cluster``, and a
        ``cluster`` field on its reconciles' log records); ``""``: single-cluster."""
        self.clusters: Mapping[str, ClusterHandle] = NO_CLUSTERS
        """The engaged workload clusters a multi-cluster aware controller reaches
        (``ctx.clusters``), set by a :class:`~reconcile_kit.multicluster.MultiClusterManager`."""
        self._shard: ShardSide | None = None  # this run's shard side (``shard`` set)
        self._own_recorder: EventRecorder | None = None
        self._own_api: Api | None = None
        self._transport_users: list[Api] = []
        self._held: list[Reflector] = []  # acquired from the pool by the current run
        self.retry_rate_limit = retry_rate_limit
        self.queue: WorkQueue[ObjectRef] = WorkQueue(
            name=self.name, retry_rate_limit=retry_rate_limit
        )
        self.info: ResourceInfo | None = None
        self.reflector: Reflector | None = None
        self.sources: list[Source] = []
        self._triggers: list[AsyncIterator[Any]] = []
        self._background: list[Callable[[Controller], Awaitable[None]]] = []
        self._deleted: dict[ObjectRef, Obj] = {}
        # keys a stopped run left work for (WorkQueue.unfinished): the next run queues
        # them at normal priority, not behind its first look at every cached object
        self._carried: set[ObjectRef] = set()
        self._written: OwnWrites | None = None  # this run's (see runtime/ownwrites.py)
        self._tasks: list[asyncio.Task[Any]] = []
        self._workers: list[asyncio.Task[None]] = []
        self._unsubscribe: list[Callable[[], None]] = []
        self._stopped = asyncio.Event()
        self._reconciled: list[asyncio.Future[None]] = []
        self._view: tuple[Store, tuple[Source, ...], CacheView] | None = None
        self._completed = 0
        self._running = False
        self._synced = False

    @property
    def model(self) -> type[CustomResource] | None:
        """The CustomResource class given as ``kind`` (None: a kr8s class or a kind name)."""
        return self.typed.model if self.typed is not None else None

    @property
    def models(self) -> ModelCache[CustomResource] | None:
        """The typed side's model cache (:mod:`reconcile_kit.typed.reuse`; None: untyped)."""
        return self.typed.models if self.typed is not None else None

    @property
    def transport(self) -> str:
        """The transport in effect (:attr:`config`'s)."""
        return self.config.transport

    @property
    def qps(self) -> float | None:
        """The client-side rate limit in effect, requests per second (:attr:`config`'s)."""
        return self.config.qps

    @property
    def burst(self) -> int | None:
        """Requests at once before :attr:`qps` applies (:attr:`config`'s)."""
        return self.config.burst

    @property
    def running(self) -> bool:
        """Whether :meth:`run` has started and not finished."""
        return self._running

    @property
    def synced(self) -> bool:
        """Whether :meth:`run` has started and every cache it watches has synced (the
        workers are reconciling); False again once it stops."""
        return self._synced

    # --- configuration ---------------------------------------------------------------------

    def owns(
        self,
        child_kind: KindLike,
        *,
        all_owners: bool = False,
        namespace: str | None = None,
        label_selector: str | None = None,
    ) -> Controller:
        """Reconcile the owner when a child of ``child_kind`` changes (children are watched in
        the controller's namespace unless ``namespace`` is given).

        Only the child's controller reference (controller=true) counts, unless
        ``all_owners``; references are matched by the primary kind and API group.
        """
        self.sources.append(
            Source(
                child_kind,
                None,
                namespace,
                label_selector,
                ReconcileReason.CHILD,
                all_owners=all_owners,
            )
        )
        return self

    def watches(self, kind: KindLike, mapper: Mapper, **scope: Unpack[MapScope]) -> Controller:
        """Reconcile what ``mapper(obj)`` returns when an object of ``kind`` changes, watched
        in ``scope`` (``namespace``, ``label_selector``: see :class:`MapScope`).

        ``mapper`` gets the raw object (a read-only dict) and returns ObjectRefs or
        ``(namespace, name)`` pairs of primary objects; on updates it is called with the
        old state as well, so both the previous and the new targets are reconciled. A mapper
        that raises is logged and counted; the controller goes on.

        Raises:
            TypeError: ``mapper`` is an ``async def`` (it is called for each watch event,
                synchronously), naming it.
        """
        require_sync(mapper, "mapper", "(obj) -> refs")

        def map_event(event: ReflectorEvent) -> Iterable[ObjectRef]:
            # the old state too: an object that moved from A to B must wake A as well
            refs = {self._as_ref(ref): None for ref in mapper(event.obj)}
            if event.old is not None and event.old is not event.obj:
                refs.update({self._as_ref(ref): None for ref in mapper(event.old)})
            return list(refs)

        self.sources.append(Source.mapped(kind, map_event, scope))
        return self

    def reconcile_all_on(self, trigger: AsyncIterator[Any]) -> Controller:
        """Reconcile every cached object whenever ``trigger`` yields (kube-rs)."""
        self._triggers.append(trigger)
        return self

    def background(self, task: Callable[[Controller], Awaitable[None]]) -> Controller:
        """Run ``task(controller)`` for the controller's lifetime; cancelled at shutdown."""
        self._background.append(task)
        return self

    # --- running ---------------------------------------------------------------------------

    async def run(
        self,
        reconcile: Reconcile,
        *,
        error_policy: ErrorPolicy | None = None,
        data: Any = None,  # Any: the user's, handed back as ctx.data as they typed it
        on_delete: OnDelete | None = None,
    ) -> None:
        """Watch, queue and reconcile until :meth:`shutdown`.

        ``reconcile(obj, ctx)`` gets a kr8s object and returns an :class:`Action` or None.
        ``error_policy(obj, error, ctx) -> Action`` replaces the retry policy for failures.
        ``on_delete(last_known_obj, ctx)`` runs (best effort) once an object is gone.
        ``data`` is handed to reconciles as ``ctx.data``.

        Raises:
            RuntimeError: the controller is already running.
            ValueError: a kind given by name (a str) that the API server does not serve. A
                class whose resource is not served (a CRD not installed yet) is not an
                error: the LIST is tried again with a backoff (a WARNING naming the
                resource each time) until it is served or :meth:`shutdown`.
        """
        if self._running:
            raise RuntimeError(f"controller {self.name} is already running")
        self._running = True
        self._reset()
        reconcile = traced(reconcile, self.name)  # a span per reconcile when tracing is on
        try:
            if self.api is None:
                self.api = self._own_api = await connect()
            await self._start_recorder()
            if not await self._start_sources():
                return  # shut down before its caches synced (e.g. a kind not served yet)
            self._synced = True
            self._carried = set()  # each was queued by its ADDED event (or is gone)
            for _ in range(self.concurrency):
                self._workers.append(
                    asyncio.create_task(self._work(reconcile, error_policy, data, on_delete))
                )
            self._start_tasks()
            await self._stopped.wait()
        finally:
            await self._stop_everything()

    def _reset(self) -> None:
        """Fresh queue and task lists, so a controller can run again after a shutdown
        (a manager restarts its controllers when it regains leadership)."""
        self.queue = WorkQueue(
            name=self.name,
            metrics=self.config.metrics.queue if self.config.metrics else None,
            retry_rate_limit=self.retry_rate_limit,
        )
        self._stopped = asyncio.Event()
        self._workers, self._tasks, self._unsubscribe = [], [], []
        self._deleted.clear()
        self._written = None
        self._shard = ShardSide(self.shard, self) if self.shard is not None else None
        self.intents.clear()  # a restart (leadership regained) applies each child once

    async def _start_recorder(self) -> None:
        if self.config.recorder is not None:
            self.recorder = self.config.recorder  # its owner starts and stops it
            return
        name = self.name if not qualified_name_errors(self.name) else "reconcile-kit"
        assert self.api is not None
        self.recorder = self._own_recorder = EventRecorder(self.api, reporting_controller=name)
        await self.recorder.start()

    async def _start_sources(self) -> bool:
        """Acquire and subscribe to the reflectors, then wait for their caches; False when
        :meth:`shutdown` came first."""
        assert self.api is not None
        await acquire_transport(self.api, self.config.transport)
        self._transport_users.append(self.api)
        install_rate_limit(self.api, self.config.qps, self.config.burst)
        install_fence_check(self.api)  # kr8s's own writes in a reconcile are fenced too
        relists: list[asyncio.Future[None]] = []
        primary, *others = await self._acquire_reflectors(relists)
        self._held += [primary, *others]
        # subscribed first: what the kept cache holds is queued at low priority, and what
        # the LIST finds changed is promoted ahead of it (a change made while this replica
        # was out of the ring waits behind no first reconcile)
        self._unsubscribe.append(primary.subscribe(self._on_primary))
        for source in self.sources:
            assert source.reflector is not None
            self._unsubscribe.append(source.reflector.subscribe(self._source_handler(source)))
        if relists:
            log.info(
                "%s: listing its share again (its cache was kept since a run before)", self._named
            )
            relisted = asyncio.gather(*relists)
            if not await self._until_stopped(relisted, "its share was listed again"):
                return False
        return await self._wait_synced()

    async def _acquire_reflectors(
        self, relists: list[asyncio.Future[None]] | None = None
    ) -> list[Reflector]:
        """Acquire from the pool the reflectors of the primary kind and of every source (a
        reflector already running for the same query is shared); sets ``info`` and
        ``reflector``, and each source's. Returns them, primary first.

        With ``relists`` (a sharded controller's run), each reflector of the share (the
        shard label in its selector) that listed before it was acquired (kept warm while
        the replica was out of its ring, or shared) lists again
        (:meth:`~reconcile_kit.runtime.reflector.Reflector.relist`, its future added to
        ``relists``): objects may have moved to other replicas meanwhile, and a store
        kept across a broken watch can still hold them (reconciled here beside their
        owner's reconcile). A reflector acquired fresh lists anyway."""
        assert self.api is not None
        self.info = await resolve_kind(self.api, self.kind)
        shard = self.shard
        self.reflector = self.config.reflector_pool.acquire(
            self.api,
            self.info,
            namespace=self.namespace,
            label_selector=shard.selector(self.label_selector) if shard else self.label_selector,
            field_selector=self.field_selector,
        )
        self._relist_if_kept(self.reflector, relists)
        self._written = OwnWrites(self.reflector.store, self.reflector.transform)
        acquired = [self.reflector]
        for source in self.sources:
            source.info = await resolve_kind(self.api, source.kind)
            source.reflector = self.config.reflector_pool.acquire(
                self.api,
                source.info,
                namespace=self.namespace if source.namespace is None else source.namespace,
                label_selector=(
                    shard.selector(source.label_selector)
                    if shard is not None and source.mapper is None  # owns(): children follow
                    else source.label_selector
                ),
            )
            if source.mapper is None:
                self._relist_if_kept(source.reflector, relists)
            acquired.append(source.reflector)
        return acquired

    def _relist_if_kept(
        self, reflector: Reflector, relists: list[asyncio.Future[None]] | None
    ) -> None:
        if relists is not None and self.shard is not None and reflector.lists_started > 0:
            relists.append(reflector.relist())

    async def _until_stopped(self, work: Awaitable[object], doing: str) -> bool:
        """Await ``work`` unless :meth:`shutdown` comes first (then cancel it, log that it
        stopped before ``doing``, and return False)."""
        if await first(work, self._stopped.wait()):
            return True
        log.info("%s: stopped before %s", self._named, doing)
        return False

    async def warm(self) -> Callable[[], Awaitable[None]]:
        """List and watch what :meth:`run` will (the primary kind and every source) without
        reconciling, so that a run starting later finds its caches synced: a standby
        replica's controllers under leader election are warm, as controller-runtime's
        (``NeedWarmUp``, kubernetes-sigs/controller-runtime#3192), and take over as soon as
        they lead. Needs ``api`` set. Returns the coroutine function releasing what it
        holds (call it once, when the controller will not run again).
        """
        assert self.api is not None
        api = self.api
        await acquire_transport(api, self.config.transport)
        held = await self._acquire_reflectors()

        async def cool() -> None:
            for reflector in held:
                await self.config.reflector_pool.release(reflector)
            await release_transport(api)

        return cool

    @property
    def _named(self) -> str:
        """The controller as its log lines name it: its name, and its cluster in a
        multi-cluster manager."""
        return f"{self.name} in cluster {self.cluster}" if self.cluster else self.name

    def reflectors(self) -> list[Reflector]:
        """The reflectors this controller reads: its primary's and its sources' (those
        started so far)."""
        return [r for r in [self.reflector, *(s.reflector for s in self.sources)] if r]

    async def _wait_synced(self) -> bool:
        """Wait for every cache, saying so: syncing, then synced with counts and seconds.
        False when :meth:`shutdown` came first: a cache that cannot sync (its kind is not
        served: a CRD not installed) must not keep the controller, or its manager, from
        stopping."""
        reflectors = self.reflectors()
        kinds = ", ".join(r.info.ref_kind for r in reflectors)
        log.info("%s: waiting for caches to sync (%s)", self._named, kinds)
        started = time.monotonic()
        synced = asyncio.gather(*(r.wait_synced() for r in reflectors))
        if not await self._until_stopped(synced, f"its caches synced ({kinds})"):
            return False
        counts = ", ".join(f"{len(r.store)} {r.info.ref_kind}" for r in reflectors)
        seconds = time.monotonic() - started
        log.info("%s: caches synced in %.2f s (%s); starting workers", self._named, seconds, counts)
        return True

    def _start_tasks(self) -> None:
        for trigger in self._triggers:
            self._tasks.append(asyncio.create_task(self._follow(trigger)))
        for task in self._background:
            self._tasks.append(asyncio.create_task(self._guard(task, task(self))))
        if self.resync:
            self._tasks.append(asyncio.create_task(self._resync_every(self.resync)))

    async def hand_over(
        self, owner: Callable[[ObjectRef], str | None], movers: int | None = None
    ) -> None:
        """Sharded controllers (``shard`` set): move every object of this replica's share
        to the member ``owner(key)`` names, then return once the share is empty. A
        graceful stop of a :class:`~reconcile_kit.manager.Manager` with ``sharding=``
        calls it, bounded by ``Sharding.drain_timeout``.

        ``movers`` tasks take the objects one by one from the work queue as a worker
        would (:meth:`~reconcile_kit.runtime.queue.WorkQueue.claim`: never while a
        reconcile of the object runs; one that runs moves the object through its worker
        once it ends) and send one merge patch each, setting the shard label to the new
        owner and removing a drain label, conditional on the resourceVersion (a 409 waits
        for the object's next event, which is queued whatever the predicates say). Until
        its turn, an object is reconciled here as before (by the controller's own
        workers, ``concurrency`` unchanged), so a change made meanwhile is served by one
        replica or the other without waiting for the whole share to move. Objects that
        enter the share meanwhile move too; an object ``owner`` returns None for stays
        (the caller's timeout ends the wait). Once moved, an object is not reconciled
        here again, until the controller runs again.

        Args:
            owner: ``ObjectRef -> member name or None``, e.g. rendezvous hashing over the
                ring's other members.
            movers: label writes at once (None: ``concurrency``, so that the new owners,
                running the same controller, absorb the moved objects as they arrive).
        """
        if self._shard is not None:
            count = self.concurrency if movers is None else movers
            await self._shard.hand_over(owner, count)

    async def shutdown(self, timeout: float = 30.0) -> None:
        """Stop: no new reconciles; wait up to ``timeout`` seconds for running ones, then
        cancel them. Returns once :meth:`run` has finished its cleanup."""
        self.queue.shutdown()
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe.clear()
        if self._workers:
            _, pending = await asyncio.wait(self._workers, timeout=timeout)
            for worker in pending:
                log.warning(
                    "%s: cancelling a reconcile still running after %.1f s", self._named, timeout
                )
                worker.cancel()
            await asyncio.gather(*self._workers, return_exceptions=True)
        self._stopped.set()

    async def _stop_everything(self) -> None:
        self._synced = False
        self._carried |= self.queue.unfinished()  # a run stopped before its sync: both
        try:
            self.queue.shutdown()
            for task in self._tasks:
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            for worker in self._workers:
                worker.cancel()
            await asyncio.gather(*self._workers, return_exceptions=True)
            for unsubscribe in self._unsubscribe:
                unsubscribe()
            while self._held:  # only what this run acquired (not a previous run's)
                await self.config.reflector_pool.release(self._held.pop())
            if self._own_recorder is not None:
                recorder, self._own_recorder = self._own_recorder, None
                if self.recorder is recorder:
                    self.recorder = None
                await recorder.stop()  # writes what is queued: before the connections close
        finally:
            if self.typed is not None:
                self.typed.models.clear()  # the models it kept stop being tracked
            await self._close_what_it_opened()
            self._running = False
            log.info("%s: stopped", self._named)

    async def _close_what_it_opened(self) -> None:
        """Release the transport it acquired and close the api's client if it created the
        api (the manager does the same for its own)."""
        while self._transport_users:
            await release_transport(self._transport_users.pop())
        if self._own_api is not None and self._own_api is self.api:
            await close_session(self._own_api)  # a next run reuses it: kr8s reopens

    # --- event handlers --------------------------------------------------------------------

    def _on_primary(self, event: ReflectorEvent) -> None:
        assert self.info is not None and self.reflector is not None
        if event.type == DELETED:
            self.intents.forget_object(event.obj)  # what apply_status remembered for it
            if self.typed is not None:
                self.typed.models.forget(self.info.ref(event.obj))
        key = self.info.ref(event.obj)
        if self._written:
            self._written.observe(key, event)
        if self._shard is not None and self._shard.on_primary(key, event):
            return
        for predicate in self.predicates:  # a loop: no generator per event
            if not predicate(event):
                return
        if event.type == DELETED:
            self._deleted[key] = event.obj
            self.queue.add(key, ReconcileReason.DELETED)
        else:
            reason = ReconcileReason.UPDATED if event.type == MODIFIED else ReconcileReason.CREATED
            # an object that just arrived (the initial list, moved in from another replica)
            # waits behind changes to objects already reconciled (controller-runtime 0.20),
            # unless a stopped run of this controller left work for it
            low = event.type == ADDED and not (self._carried and key in self._carried)
            self.queue.add(key, reason, low_priority=low)
            # its reconcile reads the event's state without decoding the cached bytes
            self.reflector.keep_decoded(key.namespace, key.name, event.obj)

    def _source_handler(self, source: Source) -> Callable[[ReflectorEvent], None]:
        def handle(event: ReflectorEvent) -> None:
            if event.type == DELETED:
                self.intents.forget_object(event.obj)  # a deleted child: its intents go
            try:
                refs = (source.mapper or self._owners(source))(event)
                for ref in refs:
                    self.queue.add(ref, source.reason)
            except Exception:
                self.stats.mapper_errors += 1
                meta = event.obj.get("metadata", {})
                log.exception(
                    "%s: mapping %s %s/%s failed",
                    self.name,
                    event.obj.get("kind"),
                    meta.get("namespace", ""),
                    meta.get("name", ""),
                )

        return handle

    def _owners(self, source: Source) -> Callable[[ReflectorEvent], Iterable[ObjectRef]]:
        def owners(event: ReflectorEvent) -> Iterable[ObjectRef]:
            assert self.info is not None
            refs: dict[ObjectRef, None] = {}
            for obj in (event.obj, event.old):
                for ref in owner_keys(obj, self.info, source.all_owners):
                    refs[ref] = None
            return refs

        return owners

    def _as_ref(self, ref: ObjectRef | tuple[str, str]) -> ObjectRef:
        if isinstance(ref, ObjectRef):
            return ref
        assert self.info is not None
        namespace, name = ref
        return ObjectRef(self.info.ref_kind, namespace or "", name)

    async def _follow(self, trigger: AsyncIterator[Any]) -> None:
        async for _ in trigger:
            self._enqueue_all(ReconcileReason.RESYNC)

    async def _resync_every(self, seconds: float) -> None:
        while True:
            await asyncio.sleep(seconds)
            self._enqueue_all(ReconcileReason.RESYNC)

    def _enqueue_all(self, reason: str) -> None:
        assert self.info is not None and self.reflector is not None
        for namespace, name in self.reflector.store.list_keys():
            self.queue.add(ObjectRef(self.info.ref_kind, namespace, name), reason)

    async def _guard(self, task: object, pending: object) -> None:
        """Await ``pending``, what the background ``task`` returned; what fails is logged
        (a ``task`` that is a plain def: one line asking for ``async def``)."""
        try:
            work = awaitable_result(pending, f"background task {_qualname(task)}", self._named)
        except TypeError as error:
            log.error("%s", error)
            return
        try:
            await work
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("%s: background task failed", self._named)

    # --- workers ---------------------------------------------------------------------------

    async def _work(
        self,
        reconcile: Reconcile,
        error_policy: ErrorPolicy | None,
        data: Any,
        on_delete: OnDelete | None,
    ) -> None:
        loop = asyncio.get_running_loop()
        turn = _Turn(loop)
        while True:
            if turn.over():
                await asyncio.sleep(0)  # let watches, probes and lease renewals run
                turn.start()
            try:
                key, reasons = await self.queue.get()
            except QueueShutDown:
                return
            self._set_active(+1)
            try:
                await self._process(key, reasons, reconcile, error_policy, data, on_delete)
            finally:
                self._set_active(-1)
                self.queue.done(key)
                self._complete_one()

    def _set_active(self, delta: int) -> None:
        self.stats.active += delta
        if self.config.metrics is not None:
            self.config.metrics.set_active_workers(self.name, self.stats.active)

    def _context(self, key: ObjectRef, reasons: frozenset[str], data: Any) -> Context:
        assert self.reflector is not None and self.api is not None
        attempt = self.queue.attempts(key) + 1
        extra: dict[str, object] = {"controller": self.name, "key": str(key), "attempt": attempt}
        if self.cluster:
            extra["cluster"] = self.cluster
        return Context(
            controller_name=self.name,
            cache=self._cache_view(),
            api=self.api,
            key=key,
            attempt=attempt,
            reasons=reasons,  # type: ignore[arg-type]  # queued as its members
            store=self.reflector.store,
            data=data,
            log=logging.LoggerAdapter(log, extra),
            recorder=self.recorder,
            intents=self.intents,
            cluster=self.cluster,
            clusters=self.clusters,
        )

    def _cache_view(self) -> CacheView:
        """The caches' read-only view reconciles get: made once (it holds no state of a
        reconcile), again when the primary store or the sources are others."""
        assert self.reflector is not None
        store, sources = self.reflector.store, tuple(self.sources)
        if self._view is None or self._view[0] is not store or self._view[1] != sources:
            view = CacheView(self.name, store, sources, self.kind, self.info)
            self._view = (store, sources, view)
        return self._view[2]

    async def _process(
        self,
        key: ObjectRef,
        reasons: frozenset[str],
        reconcile: Reconcile,
        error_policy: ErrorPolicy | None,
        data: Any,
        on_delete: OnDelete | None,
    ) -> None:
        assert self.reflector is not None and self.info is not None
        if self.lease is not None and not self.lease():
            # paused or cut off past the renew deadline: start nothing (the manager stops
            # this controller once its election notices; the key waits for a valid Lease)
            self.queue.add_after(key, FENCED_RETRY, min(reasons, default=None))
            return
        ctx = self._context(key, reasons, data)
        read = self.reflector.read(key.namespace, key.name)
        raw = self._latest(key, read.obj)
        last_known = self._deleted.pop(key, None)
        if raw is None:
            self.queue.forget(key)
            if last_known is not None and on_delete is not None:
                if self._shard is not None and not await self._deleted_here(key, last_known, ctx):
                    return
                with fenced(self._fence(None, None)):
                    await self._on_delete(on_delete, key, last_known, ctx)
            return
        if self._shard is not None and await self._shard.intercept(key, raw, ctx):
            return
        self.stats.reconciles += 1
        obj: Any = None
        started = time.monotonic()
        if log.isEnabledFor(logging.DEBUG):
            ctx.log.debug("reconciling (reasons: %s)", ", ".join(sorted(reasons)))
        if raw is read.obj:  # the watch event of a write finds the state it replaces decoded
            self.reflector.note_decoded((key.namespace, key.name), read)
        fence = self._fence(key, raw)
        try:
            obj = self.info.build(raw, self.api)
            if self.typed is None and fence is None and current_fence() is None:
                # unfenced already: nothing to set
                action = await awaitable_result(reconcile(obj, ctx), RECONCILE, key)
            elif self.typed is None:
                with fenced(fence):
                    action = await awaitable_result(reconcile(obj, ctx), RECONCILE, key)
            else:
                typed = await self.typed.build(key, obj, raw, ctx, ctx.log, self._report_invalid)
                if typed is None:
                    self.reflector.forget_decoded((key.namespace, key.name))
                    self.queue.forget(key)
                    self._observe("invalid", started)
                    return
                try:
                    with fenced(fence):
                        action = await awaitable_result(reconcile(typed, ctx), RECONCILE, key)
                finally:
                    self.typed.models.release(key, typed)
            action = checked_action(action, RECONCILE, key)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            if fence is not None and await self._fenced_out(key, error, fence, ctx):
                self._observe("fenced", started)
                return
            self._observe("error", started)
            self._remember(key, obj, raw, read)
            await self._failed(key, obj, error, ctx, error_policy)
            return
        self._remember(key, obj, raw, read)
        self.queue.forget(key)
        if action is not None and action.requeue_after is not None:
            self._observe("requeue_after", started)
            self.stats.requeues += 1
            self.queue.add_after(key, action.requeue_after, ReconcileReason.REQUEUE)
        else:
            self._observe("success", started)

    def _fence(self, key: ObjectRef | None, raw: Obj | None) -> WriteFence | None:
        """The write fence of a reconcile of ``key`` (read as ``raw``): the Lease check,
        and for a sharded controller the object's precondition; None when unfenced."""
        if self._shard is not None and key is not None and raw is not None:
            return self._shard.fence(key, raw)
        if self.lease is None:
            return None
        return WriteFence(self.lease, self.lease_holder)

    async def _fenced_out(
        self, key: ObjectRef, error: Exception, fence: WriteFence, ctx: Context
    ) -> bool:
        """Whether a failed reconcile failed because this replica lost the right to write
        (handled here: no retry, one INFO line) rather than for a reason to retry."""
        if isinstance(error, LeaseExpiredError):
            ctx.log.info("not reconciled: %s", error)
            self.queue.add_after(key, FENCED_RETRY, ReconcileReason.REQUEUE)
            return True
        return self._shard is not None and await self._shard.lost(key, error, fence, ctx)

    async def _deleted_here(self, key: ObjectRef, last_known: Obj, ctx: Context) -> bool:
        """Sharded: whether an object that left the watch was deleted, not moved (a failed
        check retries the key)."""
        assert self._shard is not None
        try:
            return await self._shard.deleted(key, ctx)
        except Exception as error:
            self._deleted[key] = last_known
            self.queue.retry(key, self.retry_policy, ctx, error)
            return False

    def _report_invalid(self, obj: APIObject, error: InvalidObjectError) -> None:
        """A Warning Event ``InvalidObject`` on an object that does not fit the model."""
        if self.recorder is not None:
            self.recorder.event(obj, "Warning", "InvalidObject", str(error.problems[0]))

    def _latest(self, key: ObjectRef, cached: Obj | None) -> Obj | None:
        """The cached object, or this controller's own later write of it (read your
        writes: :mod:`reconcile_kit.runtime.ownwrites`)."""
        return cached if self._written is None else self._written.latest(key, cached)

    def _remember(self, key: ObjectRef, obj: Any, built_from: Obj, read: Entry) -> None:
        """Keep ``obj``'s state when a reconcile wrote it and the cache does not hold that
        write yet (``read``: the cache's entry when the reconcile started)."""
        assert self.reflector is not None
        wrote, cached = False, None
        if obj is not None and self._written is not None:
            written: Any = raw_of(obj)
            answer = held_document(written)  # the write's answer, untouched since
            cached = None if answer is None else self.reflector.as_cached(answer)
            wrote = self._written.remember(key, written, built_from, read, cached)
        if wrote and cached is not None:  # the write's watch event is not decoded again
            self.reflector.expect(cached)
        elif not wrote and built_from is read.obj:  # noted when read: no event to take it
            self.reflector.forget_decoded((key.namespace, key.name))

    async def _failed(
        self,
        key: ObjectRef,
        obj: Any,
        error: Exception,
        ctx: Context,
        error_policy: ErrorPolicy | None,
    ) -> None:
        self.stats.errors += 1
        _log_failure(ctx, error)
        not_before = _retry_after(error)
        if error_policy is None:
            self.queue.retry(key, self.retry_policy, ctx, error, not_before=not_before)
            return
        try:
            chosen = error_policy(obj, error, ctx)
            chosen = await chosen if inspect.isawaitable(chosen) else chosen
            action = checked_action(chosen, "error_policy", key)
        except Exception:
            ctx.log.exception("error_policy failed; using the retry policy")
            self.queue.retry(key, self.retry_policy, ctx, error, not_before=not_before)
            return
        if action is not None and action.requeue_after is not None:
            policy = RetryPolicy(action.requeue_after)
            self.queue.retry(key, policy, ctx, error, not_before=not_before)
        else:
            self.queue.forget(key)

    async def _on_delete(
        self, on_delete: OnDelete, key: ObjectRef, last_known: Obj, ctx: Context
    ) -> None:
        """Run ``on_delete`` for ``key``, gone; what fails is logged (a plain def: one line
        naming the object and asking for ``async def``)."""
        assert self.info is not None
        try:
            pending = on_delete(self.info.build(last_known, self.api), ctx)
            try:
                work = awaitable_result(pending, "on_delete", key)
            except TypeError as error:
                ctx.log.error("on_delete failed: %s", error)
                return
            await work
        except Exception:
            ctx.log.exception("on_delete failed")

    def _observe(self, result: str, started: float) -> None:
        self.stats.results[result] = self.stats.results.get(result, 0) + 1
        if self.config.metrics is not None:
            self.config.metrics.observe_reconcile(self.name, result, time.monotonic() - started)

    def _complete_one(self) -> None:
        """Count a completed reconcile and wake :meth:`_next_reconcile`'s waiters (a list
        of futures rather than a Condition: a reconcile with nobody waiting, the common
        case, takes no lock)."""
        self._completed += 1
        if self._reconciled:
            waiters, self._reconciled = self._reconciled, []
            for waiter in waiters:
                if not waiter.done():
                    waiter.set_result(None)

    async def _next_reconcile(self, seen: int) -> None:
        """Wait until more than ``seen`` reconciles have completed."""
        while self._completed == seen:
            waiter = asyncio.get_running_loop().create_future()
            self._reconciled.append(waiter)
            await waiter

    async def wait_reconciled(
        self, condition: Callable[[], bool | Awaitable[bool]], timeout: float
    ) -> bool:
        """Await ``condition()`` holding, checked after every reconcile; False on timeout."""

        async def check() -> bool:
            result = condition()
            return bool(await result if inspect.isawaitable(result) else result)

        try:
            async with asyncio.timeout(timeout):
                while True:
                    seen = self._completed
                    if await check():
                        return True
                    await self._next_reconcile(seen)
        except TimeoutError:
            return bool(await check())


def _qualname(function: object) -> str:
    """``function``'s qualified name (its repr when it has none), for messages."""
    return str(getattr(function, "__qualname__", None) or repr(function))


def _log_failure(ctx: Context, error: Exception) -> None:
    """One ERROR line naming the error's class and message (an APIError's message carries
    the request, status, reason and the server's words); the traceback only for errors
    reconcile_kit does not raise itself, or at DEBUG."""
    expected = isinstance(error, ReconcileKitError)
    traceback = not expected or ctx.log.isEnabledFor(logging.DEBUG)
    ctx.log.error(
        "reconcile failed (attempt %d): %s: %s",
        ctx.attempt,
        type(error).__name__,
        error,
        exc_info=error if traceback else None,
    )


def _retry_after(error: BaseException) -> float:
    """The server's Retry-After in seconds when it sent one (429, 503), else 0."""
    retry_after = error.retry_after if isinstance(error, APIError) else None
    return retry_after or 0.0
