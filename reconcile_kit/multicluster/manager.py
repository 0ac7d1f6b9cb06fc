"""MultiClusterManager: one manager, many clusters.

The design is sigs.k8s.io/multicluster-runtime's (an extension of controller-runtime:
"move cluster-specific code out of the manager"): a :class:`~.provider.Provider` discovers
clusters and engages or disengages them while the manager runs; *uniform* reconcilers run
unchanged in every engaged cluster (each reconcile knows its cluster: ``ctx.cluster``,
multicluster-runtime's ``mcreconcile.Request.ClusterName``); *multi-cluster aware*
reconcilers run in the management cluster and reach the workload clusters through
``ctx.clusters`` (multicluster-runtime's ``mgr.GetCluster``), with watches on their
children there mapped back to the owner (``mcsource.Kind`` with a cluster-aware handler).

Each engaged cluster gets its own api, reflector pool, event recorder and one
:class:`~reconcile_kit.runtime.controller.Controller` per uniform template (its own work
queue, retries and caches), so clusters are isolated from each other:

* a cluster that disappears (its Secret deleted, its context removed) is disengaged: its
  controllers stop (their queued keys are dropped), its caches stop and its api closes;
  the other clusters are not touched;
* a cluster that cannot be reached keeps its own reflectors backing off and its keys
  retrying in its own queue; it never holds the manager's readiness (``/readyz`` counts
  the management cluster's controllers only); a cluster whose client cannot even be made
  (or whose controllers fail) is engaged again after a per-cluster exponential backoff;
* reconciles log a ``cluster`` field and the fleet's metrics carry a ``cluster`` label
  (:mod:`.metrics`);
* leader election and sharding stay in the management cluster: with leader election the
  clusters are engaged while this replica leads; with ``sharding=`` (and
  ``shard_clusters``), every member engages the clusters that rendezvous hashing over the
  ring's members gives it, as the objects of sharded controllers are spread.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import signal
import types
import weakref
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Unpack

from kr8s.asyncio import Api

from ..manager.manager import Manager
from ..manager.sharding.membership import RingView
from ..manager.sharding.ring import owner
from ..meta.objects import ObjectRef
from ..runtime.controller import Controller, Reconcile, RunOptions
from ..runtime.events import EventRecorder
from ..runtime.reflector import Backoff, Reflector, ReflectorEvent
from ..runtime.resources import KindLike, resolve_kind
from ..runtime.sources import MapScope, Source
from ..runtime.store import Obj
from .cluster import Cluster, ClusterSource
from .metrics import FleetMetrics
from .provider import Provider, SecretProvider

__all__ = ["AwareController", "ClusterMapper", "MultiClusterManager", "fleet_of"]

log = logging.getLogger(__name__)

SYNCED_PERIOD = 0.5
"""Seconds between two looks at a cluster's caches for ``multicluster_cluster_synced``
until they have synced."""
SYNCED_RECHECK = 10.0
"""Seconds between two looks at a synced cluster's caches when no reflector changed
whether it fails (a synced cluster wakes on those changes)."""

ClusterMapper = Callable[[str, Obj], Iterable["ObjectRef | tuple[str, str]"]]
"""``(cluster name, object) -> keys`` of primary objects in the management cluster."""

ControllerTemplate = Controller | Callable[[], Controller]


@dataclass
class _Template:
    controller: ControllerTemplate
    reconcile: Reconcile
    options: RunOptions


@dataclass
class _Watch:
    source: Source
    mapper: ClusterMapper


@dataclass
class _Engagement:
    """One cluster engaged in this replica: its task and, while connected, its Cluster."""

    name: str
    source: ClusterSource
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None
    cluster: Cluster | None = None
    controllers: list[Controller] = field(default_factory=list)
    failures: int = 0


class _FleetChanges:
    """An async iterator yielding once per batch of fleet changes (a cluster engaged or
    disengaged): the trigger that reconciles every object of an aware controller. Not a
    generator, so that a cancelled iteration (the controller stopping) leaves it usable."""

    def __init__(self) -> None:
        self._changed = asyncio.Event()

    def notify(self) -> None:
        self._changed.set()

    def __aiter__(self) -> _FleetChanges:
        return self

    async def __anext__(self) -> None:
        await self._changed.wait()
        self._changed.clear()


class AwareController:
    """A multi-cluster aware controller (:meth:`MultiClusterManager.add_aware`): its
    primary objects live in the management cluster, ``ctx.clusters`` reaches the engaged
    workload clusters, and :meth:`watches_in_clusters` maps events there back to it.

    Args:
        fleet: the manager it was added to.
        controller: the management cluster's controller.
    """

    def __init__(self, fleet: MultiClusterManager, controller: Controller) -> None:
        self.fleet = fleet
        self.controller = controller
        self.watches: list[_Watch] = []

    def watches_in_clusters(
        self, kind: KindLike, mapper: ClusterMapper, **scope: Unpack[MapScope]
    ) -> AwareController:
        """Watch ``kind`` in every engaged cluster, in ``scope`` (``namespace``,
        ``label_selector``: see :class:`~reconcile_kit.runtime.sources.MapScope`; its cache is
        ``ctx.clusters[name].store_for(kind)``) and reconcile what ``mapper(cluster, obj)``
        returns (ObjectRefs or ``(namespace, name)`` of primary objects; the old state of
        an update is mapped too). A mapper that raises is logged; the watch goes on.
        Returns self (chainable)."""
        source = Source.mapped(kind, None, scope)
        self.watches.append(_Watch(source, mapper))
        return self

    def enqueue(self, cluster: str, watch: _Watch, event: ReflectorEvent) -> None:
        """Queue the primary keys ``watch``'s mapper gives for ``event`` in ``cluster``."""
        info = self.controller.info
        if info is None or not self.controller.running:
            return  # not running here (a standby): its first list covers it later
        try:
            refs: dict[ObjectRef, None] = {}
            for obj in (event.obj, event.old):
                if obj is None:
                    continue
                for ref in watch.mapper(cluster, obj):
                    if not isinstance(ref, ObjectRef):
                        ref = ObjectRef(info.ref_kind, ref[0] or "", ref[1])
                    refs[ref] = None
            for ref in refs:
                self.controller.queue.add(ref, watch.source.reason)
        except Exception:
            self.controller.stats.mapper_errors += 1
            log.exception(
                "%s: mapping an event of cluster %s failed", self.controller.name, cluster
            )


class MultiClusterManager:
    """Runs controllers across a fleet of clusters discovered by ``provider``, beside a
    :class:`~reconcile_kit.manager.Manager` of the management cluster (leader election,
    sharding, probes, metrics, events and the management cluster's own controllers).

    Args:
        provider: discovers and engages the clusters (:class:`~.provider.StaticProvider`,
            :class:`~.provider.KubeconfigProvider`, :class:`~.provider.SecretProvider`, or
            your own :class:`~.provider.Provider`).
        manager: the management cluster's manager (None: ``Manager()``: kubeconfig, then
            in-cluster). Its ``transport``, ``qps``, ``burst`` and ``namespace`` apply to
            the clusters' controllers too; its signal handling is taken over.
        backoff: the per-cluster backoff after a cluster failed (its client could not be
            made, e.g. it does not answer; a controller of it failed): default 1 s doubling to
            30 s with jitter (a function returning a new
            :class:`~reconcile_kit.runtime.reflector.Backoff` per cluster).
        shard_clusters: with the manager's ``sharding``: spread the clusters over the
            ring's members (rendezvous hashing of their names); False: every replica
            engages every cluster.
        cluster_shutdown_timeout: seconds a disengaged cluster's running reconciles get
            to finish (None: the manager's ``graceful_shutdown_timeout``).

    ``run()`` runs the manager and the fleet until SIGTERM/SIGINT or :meth:`stop`.
    """

    def __init__(
        self,
        provider: Provider,
        manager: Manager | None = None,
        *,
        backoff: Callable[[], Backoff] | None = None,
        shard_clusters: bool = True,
        cluster_shutdown_timeout: float | None = None,
    ) -> None:
        self.provider = provider
        self.manager = manager if manager is not None else Manager()
        self._backoff = backoff or (lambda: Backoff(initial=1.0, maximum=30.0))
        self.shard_clusters = shard_clusters
        self.cluster_shutdown_timeout = cluster_shutdown_timeout
        self.metrics = FleetMetrics(self.manager.metrics.registry)
        self._templates: list[_Template] = []
        self._aware: list[AwareController] = []
        self._changes: list[_FleetChanges] = []
        self._desired: dict[str, ClusterSource] = {}
        self._engaged: dict[str, _Engagement] = {}
        self._retiring: set[asyncio.Task[None]] = set()
        self._clusters: dict[str, Cluster] = {}
        self.clusters: Mapping[str, Cluster] = types.MappingProxyType(self._clusters)
        """The engaged clusters whose client is made, by name (read-only; it is what aware
        controllers get as ``ctx.clusters``)."""
        self._active = False
        self._view: RingView | None = None
        self._stopping: asyncio.Event | None = None
        self._stop_requested = False
        self.on_change: list[Callable[[str, str], object]] = []
        """Plain functions called with ``(cluster, event)`` (``"engaged"``,
        ``"disengaged"``, ``"failed"``) as the fleet changes (tests, logs)."""
        _FLEETS[self.manager] = self
        if isinstance(provider, SecretProvider):  # `reconcile-kit rbac`: what it reads
            self.manager.add_rbac_rule([""], ["secrets"], ["get", "list", "watch"])

    # --- configuration ---------------------------------------------------------------------

    def add(
        self, controller: ControllerTemplate, reconcile: Reconcile, **options: Unpack[RunOptions]
    ) -> None:
        """Run ``reconcile`` in every engaged cluster (a uniform reconciler): one
        controller per cluster, made from ``controller``, run with ``options``
        (``error_policy``, ``data``, ``on_delete``: see :meth:`Controller.run`).

        ``controller`` is a template (a :class:`Controller`, never run itself: each
        cluster gets a copy with its kind, scope, selectors, ``owns`` children,
        concurrency, retry policy, predicates, name, resync and background tasks), or a
        function returning a new Controller (needed for ``watches`` mappers and
        ``reconcile_all_on`` triggers, which belong to one controller).

        Raises:
            ValueError: a template with ``watches`` or ``reconcile_all_on`` (give a
                function instead).
        """
        if isinstance(controller, Controller) and (
            controller._triggers or any(s.mapper is not None for s in controller.sources)
        ):
            raise ValueError(
                f"controller {controller.name}: a template with watches() or "
                "reconcile_all_on() cannot be copied per cluster; give a function "
                "returning a new Controller"
            )
        self._templates.append(_Template(controller, reconcile, options))

    def add_aware(
        self,
        controller: Controller,
        reconcile: Reconcile,
        *,
        needs_leader: bool = True,
        sharded: bool | None = False,
        **options: Unpack[RunOptions],
    ) -> AwareController:
        """Run ``reconcile`` in the management cluster (added to the manager with these
        arguments, see :meth:`Manager.add <reconcile_kit.manager.Manager.add>`) as a
        multi-cluster aware reconciler: ``ctx.clusters`` holds the engaged clusters, and
        every object is reconciled again whenever a cluster is engaged or disengaged.
        Returns the :class:`AwareController` (``.watches_in_clusters(kind, mapper)``)."""
        self.manager.add(
            controller, reconcile, needs_leader=needs_leader, sharded=sharded, **options
        )
        controller.clusters = self.clusters
        changes = _FleetChanges()
        self._changes.append(changes)
        controller.reconcile_all_on(changes)
        aware = AwareController(self, controller)
        self._aware.append(aware)
        return aware

    @property
    def api(self) -> Api:
        """The management cluster's Api (the manager's, once :meth:`run` made it).

        Raises:
            RuntimeError: :meth:`run` has not made the api yet.
        """
        if self.manager.api is None:
            raise RuntimeError("the management cluster's api is not made before run()")
        return self.manager.api

    def controllers_of(self, cluster: str) -> list[Controller]:
        """The controllers running (or starting) in ``cluster`` in this replica."""
        engagement = self._engaged.get(cluster)
        return list(engagement.controllers) if engagement is not None else []

    def engaged(self) -> list[str]:
        """The names of the clusters engaged in this replica (connected or not), sorted."""
        return sorted(self._engaged)

    # --- the Fleet protocol (what providers call) --------------------------------------------

    def engage(self, name: str, source: ClusterSource) -> None:
        """Engage cluster ``name`` (see :class:`~.provider.Fleet`)."""
        self._desired[name] = source
        self._sync(name)

    def disengage(self, name: str) -> None:
        """Disengage cluster ``name`` (see :class:`~.provider.Fleet`)."""
        self._desired.pop(name, None)
        self._sync(name)

    def _owned(self, name: str) -> bool:
        if self._view is None:
            return True
        sharding = self.manager.sharding
        assert sharding is not None
        return owner(name, self._view.candidates()) == sharding.identity

    def _sync(self, name: str) -> None:
        """Start or stop cluster ``name`` so that it runs here exactly when wanted."""
        source = self._desired.get(name)
        wanted = self._active and source is not None and self._owned(name)
        current = self._engaged.get(name)
        if current is not None and (not wanted or current.source != source):
            self._retire(current)
            current = None
        if wanted and current is None:
            assert source is not None
            engagement = _Engagement(name, source)
            self._engaged[name] = engagement
            engagement.task = asyncio.create_task(self._serve(engagement), name=f"cluster {name}")
            self.metrics.engaged.set(len(self._engaged))

    def _sync_all(self) -> None:
        for name in set(self._desired) | set(self._engaged):
            self._sync(name)

    def _retire(self, engagement: _Engagement) -> None:
        if self._engaged.get(engagement.name) is engagement:
            del self._engaged[engagement.name]
        # gone from every reconcile's ctx.clusters at once, as from engaged(): a reconcile
        # starting before the engagement's task stops must not write to it any more
        if engagement.cluster is not None and self._clusters.get(engagement.name) is (
            engagement.cluster
        ):
            del self._clusters[engagement.name]
        self.metrics.engaged.set(len(self._engaged))
        engagement.stop.set()
        if engagement.task is not None:
            self._retiring.add(engagement.task)
            engagement.task.add_done_callback(self._retiring.discard)

    # --- running ---------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop gracefully: the clusters are disengaged, then the manager stops;
        idempotent, at any point (before :meth:`run`, that run returns at once)."""
        self._stop_requested = True
        if self._stopping is not None:
            self._stopping.set()
        self.manager.stop()

    async def run(self) -> None:
        """Run the manager and the fleet until SIGTERM/SIGINT or :meth:`stop`.

        Raises:
            RuntimeError: already running, or the manager failed (from its error).
        """
        if self._stopping is not None:
            raise RuntimeError("the multi-cluster manager is already running")
        stopping = self._stopping = asyncio.Event()
        if self._stop_requested:
            stopping.set()
            self.manager.stop()
        signals = self.manager.handle_signals
        self.manager.handle_signals = False
        restore = self._install_signal_handlers() if signals else (lambda: None)
        api_ready = asyncio.Event()

        async def ready(api: object) -> None:
            api_ready.set()

        self.manager.on_start(ready)  # after the user's hooks (CRDs installed first)
        manager_task = asyncio.create_task(self.manager.run())
        fleet: asyncio.Task[None] | None = None
        try:
            await _first_of(api_ready.wait(), stopping.wait(), task=manager_task)
            if api_ready.is_set() and not stopping.is_set() and not manager_task.done():
                fleet = asyncio.create_task(self._run_fleet())
                await _first_of(stopping.wait(), task=manager_task, other=fleet)
        finally:
            stopping.set()
            if fleet is not None:
                fleet.cancel()
                await asyncio.gather(fleet, return_exceptions=True)
            await self._disengage_all()
            self.manager.stop()
            try:
                await manager_task
            finally:
                self.manager._start_hooks.remove(ready)
                self.manager.handle_signals = signals
                restore()
                self._stopping = None
                self._stop_requested = False

    async def _run_fleet(self) -> None:
        """Engage the provider's clusters while this replica should (leading, or always),
        and the share of them the ring gives it with sharding."""
        manager = self.manager
        election = manager.leader_election
        sharding = manager.sharding if self.shard_clusters else None
        if sharding is not None:
            self._view = RingView(
                self.api,
                sharding.ring,
                sharding.namespace,
                retry_period=sharding.retry_period,
                rejoin_grace=sharding.rejoin_grace,
            )
            self._view.on_change.append(self._sync_all)
            await self._view.start()
            election = None  # every member reconciles its share
        try:
            while True:
                if election is not None:
                    await election.leading()
                provider = asyncio.create_task(self._run_provider())
                self._active = True
                self._sync_all()
                try:
                    if election is not None:
                        await election.lost()
                    else:
                        await asyncio.Event().wait()
                finally:
                    self._active = False
                    provider.cancel()
                    await asyncio.gather(provider, return_exceptions=True)
                    self._desired.clear()  # the provider's next run engages afresh
                    await self._disengage_all()
        finally:
            if self._view is not None:
                await self._view.stop()
                self._view = None

    async def _run_provider(self) -> None:
        backoff = self._backoff()
        while True:
            try:
                await self.provider.run(self)
                return
            except asyncio.CancelledError:
                raise
            except Exception:
                delay = backoff.next()
                log.exception("cluster provider failed; running it again in %.1f s", delay)
                await asyncio.sleep(delay)

    async def _disengage_all(self) -> None:
        for engagement in list(self._engaged.values()):
            self._retire(engagement)
        while self._retiring:
            await asyncio.gather(*list(self._retiring), return_exceptions=True)

    # --- one cluster -----------------------------------------------------------------------

    async def _serve(self, engagement: _Engagement) -> None:
        """Run cluster ``engagement`` until disengaged; after a failure, wait the cluster's
        backoff and start it again."""
        backoff = self._backoff()
        name = engagement.name
        while not engagement.stop.is_set():
            try:
                await self._run_cluster(engagement)
                backoff.reset()
            except asyncio.CancelledError:
                raise
            except Exception as error:
                engagement.failures += 1
                self.metrics.engagements.labels(name, "failed").inc()
                self._notify(name, "failed")
                delay = backoff.next()
                log.warning(
                    "cluster %s failed (%s: %s); engaging it again in %.1f s",
                    name,
                    type(error).__name__,
                    error,
                    delay,
                    extra={"cluster": name},
                )
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(engagement.stop.wait(), delay)
        self.metrics.forget(name)

    async def _run_cluster(self, engagement: _Engagement) -> None:
        """Connect, start the cluster's controllers and aware watches, and run them until
        the cluster is disengaged (returns) or one fails (raises)."""
        name, manager = engagement.name, self.manager
        self.metrics.synced.labels(name).set(0)  # engaged: a series even before it answers
        api = await engagement.source.connect()
        cluster = Cluster(name, engagement.source, api)
        recorder = EventRecorder(api, reporting_controller=manager.name)
        metrics = self.metrics.for_cluster(name)
        # the manager's transport and rate limit; the cluster's own pool, events and metrics
        config = dataclasses.replace(
            manager.controller_config(), pool=cluster.pool, recorder=recorder, metrics=metrics
        )
        unsubscribe: list[Callable[[], None]] = []
        tasks: list[asyncio.Task[None]] = []
        engagement.cluster = cluster
        try:
            await recorder.start()
            for aware in self._aware:
                for watch in aware.watches:
                    info = await resolve_kind(api, watch.source.kind)
                    reflector = cluster.add_watch(watch.source, info)
                    unsubscribe.append(
                        reflector.subscribe(_handler(aware, name, watch), replay=True)
                    )
            for template in self._templates:
                controller = _instantiate(template.controller)
                controller.api = api
                controller.config = config
                controller.cluster = name
                self._fence(controller)
                if controller.namespace is None:
                    controller.namespace = manager.namespace
                engagement.controllers.append(controller)
                tasks.append(
                    asyncio.create_task(
                        controller.run(template.reconcile, **template.options),
                        name=f"{controller.name} in cluster {name}",
                    )
                )
            self._clusters[name] = cluster
            self.metrics.engagements.labels(name, "engaged").inc()
            log.info("cluster %s engaged", name, extra={"cluster": name})
            self._notify(name, "engaged")
            watcher = asyncio.create_task(self._watch_synced(name, engagement.controllers))
            tasks.append(watcher)
            await _first_of(engagement.stop.wait(), *[_quietly(t) for t in tasks])
            for task in tasks:
                if task.done() and not task.cancelled() and task.exception() is not None:
                    raise RuntimeError(f"{task.get_name()} failed") from task.exception()
        finally:
            if self._clusters.get(name) is cluster:
                del self._clusters[name]
            timeout = self.cluster_shutdown_timeout
            if timeout is None:
                timeout = manager.graceful_shutdown_timeout
            for controller in engagement.controllers:
                if controller.running:
                    await controller.shutdown(timeout)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            engagement.controllers.clear()
            for stop_watching in unsubscribe:
                stop_watching()
            with contextlib.suppress(Exception, TimeoutError):
                await asyncio.wait_for(recorder.stop(), 5.0)  # an unreachable cluster
            await cluster.close()
            engagement.cluster = None
            if engagement.stop.is_set():
                self.metrics.engagements.labels(name, "disengaged").inc()
                log.info("cluster %s disengaged", name, extra={"cluster": name})
                self._notify(name, "disengaged")

    def _fence(self, controller: Controller) -> None:
        """Fence a cluster's controller by the Lease that entitles this replica to the
        cluster (:mod:`reconcile_kit.client.fencing`): its membership Lease with cluster
        sharding, else the leadership Lease with leader election; no reconcile starts and
        no write is sent once it was not renewed within its renew deadline."""
        manager = self.manager
        if self._view is not None:

            def member() -> bool:
                membership = manager.membership
                return membership is not None and membership.holds_lease()

            controller.lease = member
            controller.lease_holder = "membership of the ring"
        elif manager.leader_election is not None:
            controller.lease = manager.leader_election.holds_lease
            controller.lease_holder = f"leadership Lease {manager.leader_election.name}"

    async def _watch_synced(self, name: str, controllers: list[Controller]) -> None:
        """Report the cluster's ``multicluster_cluster_synced`` until cancelled: 1 while
        every controller of the cluster has synced its caches and none of their LISTs or
        WATCHes is failing (a cluster that stopped answering goes back to 0, one
        unreachable at start syncs once it answers). Looked at every
        :data:`SYNCED_PERIOD` seconds until the caches have synced, then each time a
        reflector starts or stops failing (:attr:`Reflector.on_failing`) and every
        :data:`SYNCED_RECHECK` seconds (a controller that stopped, a source started
        since)."""
        gauge = self.metrics.synced.labels(name)
        changed = asyncio.Event()
        heard: set[Reflector] = set()
        synced = False
        while True:
            changed.clear()
            reflectors = [r for c in controllers for r in c.reflectors()]
            for reflector in set(reflectors) - heard:
                reflector.on_failing.append(lambda _failing: changed.set())
                heard.add(reflector)
            caches = all(c.synced for c in controllers)
            now = caches and not any(r.failing for r in reflectors)
            if now != synced:
                synced = now
                gauge.set(1 if now else 0)
                what = "caches synced" if now else "not answering: its caches may be stale"
                log.info("cluster %s: %s", name, what, extra={"cluster": name})
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), SYNCED_RECHECK if caches else SYNCED_PERIOD)

    def _notify(self, name: str, event: str) -> None:
        for changes in self._changes:
            changes.notify()
        for callback in self.on_change:
            try:
                callback(name, event)
            except Exception:
                log.exception("on_change callback failed")

    # --- signals ---------------------------------------------------------------------------

    def _install_signal_handlers(self) -> Callable[[], None]:
        loop = asyncio.get_running_loop()
        installed = []
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, self.stop)
                installed.append(sig)

        def restore() -> None:
            for sig in installed:
                loop.remove_signal_handler(sig)

        return restore


_FLEETS: weakref.WeakKeyDictionary[Manager, MultiClusterManager] = weakref.WeakKeyDictionary()


def fleet_of(manager: Manager) -> MultiClusterManager | None:
    """The MultiClusterManager ``manager`` is the management side of (``reconcile-kit
    run`` then runs that), or None."""
    return _FLEETS.get(manager)


def _handler(
    aware: AwareController, cluster: str, watch: _Watch
) -> Callable[[ReflectorEvent], None]:
    def handle(event: ReflectorEvent) -> None:
        aware.enqueue(cluster, watch, event)

    return handle


def _instantiate(template: ControllerTemplate) -> Controller:
    """A new controller from ``template`` (a Controller copied, or a function's)."""
    if not isinstance(template, Controller):
        return template()
    typed = template.typed
    copy = Controller(
        template.model if template.model is not None else template.kind,
        namespace=template.namespace,
        label_selector=template.label_selector,
        field_selector=template.field_selector,
        concurrency=template.concurrency,
        retry=template.retry_policy,
        on_invalid=typed.on_invalid if typed is not None else None,
        predicates=template.predicates,
        name=template.name,
        resync=template.resync,
        reuse_models=typed.models.size if typed is not None else 256,
        retry_rate_limit=template.retry_rate_limit,
    )
    copy.sources = [dataclasses.replace(s, info=None, reflector=None) for s in template.sources]
    copy._background = list(template._background)
    return copy


async def _quietly(task: asyncio.Task[None]) -> None:
    """Wait for ``task`` without raising its error (read it from the task)."""
    await asyncio.gather(task, return_exceptions=True)


async def _first_of(
    *waits: Awaitable[object],
    task: asyncio.Task[None] | None = None,
    other: asyncio.Task[None] | None = None,
) -> None:
    """Return when the first of ``waits`` (cancelled then), ``task`` or ``other`` (both
    left running) finishes."""
    futures = [asyncio.ensure_future(w) for w in waits]
    watched = [t for t in (task, other) if t is not None]
    try:
        await asyncio.wait([*futures, *watched], return_when=asyncio.FIRST_COMPLETED)
    finally:
        for future in futures:
            future.cancel()
        await asyncio.gather(*futures, return_exceptions=True)
