"""Manager: several controllers in one process with a shared client and caches.

As controller-runtime's manager: controllers share one reflector per kind and scope;
with leader election, leadership-gated controllers run only while this process leads
and are stopped before its lease can expire for others; ``/healthz`` and ``/readyz``
(see :meth:`Manager.ready`) and ``/metrics`` are served with aiohttp; events go through
one EventRecorder; SIGTERM/SIGINT stop it gracefully, at any point of :meth:`Manager.run`.

With ``sharding=`` (:class:`~reconcile_kit.manager.sharding.Sharding`), replicas run
active-active, as timebertt/kubernetes-controller-sharding: each joins a ring with a
membership Lease, one elected replica labels the objects of the sharded controllers with
their owner (rendezvous hashing), and each replica's sharded controllers watch and
reconcile only the objects labelled with its name (see :mod:`reconcile_kit.manager.sharding`).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import signal
import ssl
from collections.abc import Awaitable, Callable
from typing import Any

import kr8s
from aiohttp import web
from kr8s.asyncio import Api

from ..client.connect import api_error_of, connect
from ..client.ratelimit import checked_rate_limit, install_rate_limit
from ..client.transport import (
    acquire_transport,
    checked_transport,
    close_session,
    release_transport,
)
from ..runtime.action import awaitable_result
from ..runtime.config import ControllerConfig
from ..runtime.controller import Controller, ErrorPolicy, OnDelete, Reconcile
from ..runtime.events import EventRecorder
from ..runtime.sharding import ShardFilter
from ..runtime.sources import ReflectorPool
from ..webhooks.certs import Certificates
from ..webhooks.registration import register, unregister
from ..webhooks.server import WebhookServer
from .entries import (
    Entry,
    RunnableGroups,
    failure,
    fence_by,
    first,
    raise_failures,
    run_together,
    shutdown,
    start,
    stepping_down_timeout,
    warmed,
)
from .leaderelection import LeaderElection
from .metrics import Metrics
from .metricsauth import DelegatingAuth, SecureMetricsServer
from .sharding.config import Sharding
from .sharding.member import RingMember

__all__ = ["Manager"]

log = logging.getLogger(__name__)

StartHook = Callable[[Any], Awaitable[None]]


class Manager:
    """Runs controllers until SIGTERM/SIGINT or :meth:`stop`.

    Args:
        api: a kr8s asyncio Api; None means kr8s's default discovery (kubeconfig, then
            the in-cluster service account), resolved when :meth:`run` starts.
        namespace: the scope of controllers that did not choose one (None: all).
        leader_election: a :class:`~reconcile_kit.manager.leaderelection.LeaderElection`; then
            controllers added with ``needs_leader=True`` run only while leading.
        health_port: serve ``/healthz`` and ``/readyz`` on this port (0: any free port).
        metrics_port: serve ``/metrics`` on this port (may equal ``health_port`` only with
            ``metrics_secure=False``: the probes stay plain HTTP).
        metrics_secure: serve ``/metrics`` over HTTPS and answer only scrapes whose bearer
            token the API server authenticates (TokenReview; 401 otherwise) for a user
            allowed to ``get`` the non-resource URL ``/metrics`` (SubjectAccessReview; 403
            otherwise), as controller-runtime's ``filters.WithAuthenticationAndAuthorization``
            (:mod:`reconcile_kit.manager.metricsauth`); the api's user needs
            ``system:auth-delegator``. False: plain HTTP, no checks.
        metrics_certificates: the secure metrics server's certificate
            (:class:`~reconcile_kit.webhooks.CertificateFiles` for a mounted Secret, reloaded
            when renewed); None: a self-signed one generated at start.
        graceful_shutdown_timeout: seconds running reconciles get to finish at shutdown.
        name: the reporting controller name of events and the manager's name in logs.
        host: the address the probe and metrics servers bind.
        transport: ``"aiohttp"`` (default) or ``"httpx"``: how ``api`` sends requests
            (see :mod:`reconcile_kit.client.transport`).
        qps: client-side rate limit of ``api``'s requests, in requests per second: a token
            bucket every request waits on (:mod:`reconcile_kit.client.ratelimit`; client-go's
            ``rest.Config.QPS``). It covers the controllers, the event recorder and leader
            election alike, since they share the api (client-go gives leader election a
            client of its own): lease renewals queue behind the controllers' requests, so
            leave headroom. None (default): no limit, as controller-runtime since 0.21.
        burst: requests at once before ``qps`` applies (client-go's ``rest.Config.Burst``);
            None: 10 (client-go's default) when ``qps`` is set. Controllers added here
            take ``qps`` and ``burst`` from the manager.
        handle_signals: stop gracefully on SIGTERM/SIGINT while :meth:`run` runs (from its
            first step, so on_start hooks are covered); False when the caller handles
            signals and calls :meth:`stop` itself (``reconcile-kit run`` does).
        webhooks: a :class:`~reconcile_kit.webhooks.WebhookServer` with admission and
            conversion handlers: started with the probe servers (every replica serves,
            leader or not), counted in ``/readyz`` until it listens, stopped last; with its
            ``register_host``, its configurations and the CRDs' conversion are registered
            after the on_start hooks (which may install those CRDs), before the
            controllers start, and removed at stop.
        sharding: a :class:`~reconcile_kit.manager.sharding.Sharding`: this replica joins
            its ring and the controllers added with ``sharded`` left at None (or True) run
            active-active on every member, each on its share of the objects (see
            :meth:`add`); None: no sharding.

    What :meth:`run` opens it closes when it returns: the probe servers, the recorder, the
    aiohttp connections of the api (once no controller uses them) and, when it created the
    api (``api=None``), the api's client.

    Raises:
        ValueError: an unknown ``transport``; ``qps <= 0``, ``burst < 1``, or a ``burst``
            without ``qps``. :meth:`run` raises it for ``metrics_port == health_port`` with
            ``metrics_secure``.
    """

    def __init__(
        self,
        api: Api | None = None,
        *,
        namespace: str | None = None,
        leader_election: LeaderElection | None = None,
        health_port: int | None = None,
        metrics_port: int | None = None,
        graceful_shutdown_timeout: float = 30.0,
        name: str = "reconcile-kit",
        host: str = "0.0.0.0",
        transport: str = "aiohttp",
        handle_signals: bool = True,
        qps: float | None = None,
        burst: int | None = None,
        webhooks: WebhookServer | None = None,
        sharding: Sharding | None = None,
        metrics_secure: bool = True,
        metrics_certificates: Certificates | None = None,
    ) -> None:
        self.transport = checked_transport(transport)
        self.qps, self.burst = checked_rate_limit(qps, burst)
        self.api = api
        self.namespace = namespace
        self.pool = ReflectorPool()
        self.leader_election = leader_election
        self.health_port = health_port
        self.ports: dict[str, int] = {}
        self.metrics_port = metrics_port
        self.metrics = Metrics()
        self.metrics_secure = metrics_secure
        self.metrics_certificates = metrics_certificates
        self._metrics_server: SecureMetricsServer | None = None
        self.graceful_shutdown_timeout = graceful_shutdown_timeout
        self.name = name
        self.recorder: EventRecorder | None = None
        self.host = host
        self.handle_signals = handle_signals
        self.webhooks = webhooks
        self.sharding = sharding
        self._entries: list[Entry] = []
        self._start_hooks: list[StartHook] = []
        self.extra_rules: list[dict[str, Any]] = []
        self._stop: asyncio.Event | None = None  # the running run()'s
        self._stop_requested = False  # stop() came, maybe before run() created _stop
        self._started = False  # run() got past its on_start hooks
        self._leading = False  # leader-only controllers run
        self.ring_member: RingMember | None = None
        """With ``sharding``: this replica's part in its ring while :meth:`run` runs."""
        self._own_api: Api | None = None
        self._runners: list[web.AppRunner] = []
        self._registered = False

    @property
    def controllers(self) -> list[Controller]:
        """The controllers added (:meth:`add`), in order."""
        return [entry.controller for entry in self._entries]

    def add(
        self,
        controller: Controller,
        reconcile: Reconcile,
        *,
        error_policy: ErrorPolicy | None = None,
        data: Any = None,  # Any: the user's, handed back as ctx.data as they typed it
        on_delete: OnDelete | None = None,
        needs_leader: bool = True,
        sharded: bool | None = None,
    ) -> Controller:
        """Register ``controller`` to run ``reconcile`` (see :meth:`Controller.run`).

        ``needs_leader=False`` runs it on every replica, leader or not.

        ``sharded`` (with the manager's ``sharding``): None (default) or True runs it on
        every member of the ring, each replica reconciling the objects assigned to it
        (``needs_leader`` is then ignored); False keeps it out of the ring (leader election
        or ``needs_leader`` decide where it runs). Without ``sharding`` it is ignored.
        """
        self._entries.append(
            Entry(controller, reconcile, error_policy, data, on_delete, needs_leader, sharded)
        )
        return controller

    def add_rbac_rule(
        self,
        api_groups: list[str],
        resources: list[str],
        verbs: list[str],
        *,
        namespaced: bool = True,
    ) -> None:
        """Declare permissions the runtime cannot infer (e.g. patching a watched kind, or
        what an ``on_start`` hook does); ``reconcile-kit rbac`` includes them.
        ``namespaced=False`` for cluster-scoped resources (they go to the ClusterRole)."""
        self.extra_rules.append(
            {
                "apiGroups": list(api_groups),
                "resources": list(resources),
                "verbs": sorted(verbs),
                "namespaced": namespaced,
            }
        )

    def on_start(self, hook: StartHook) -> StartHook:
        """Register ``await hook(api)`` to run before controllers start (e.g. install CRDs).
        A hook's kr8s request error (``kr8s.ServerError``, ``kr8s.APITimeoutError``) fails
        :meth:`run` as the toolkit's :class:`~reconcile_kit.client.errors.APIError`."""
        self._start_hooks.append(hook)
        return hook

    def stop(self) -> None:
        """Ask :meth:`run` to shut down gracefully; idempotent, and effective at any point:
        called before :meth:`run`, that run returns at once; during on_start hooks, the
        running hook is cancelled and no controller starts; while campaigning for the
        lease, the campaign ends; while controllers run, they drain and stop."""
        self._stop_requested = True
        if self._stop is not None:
            self._stop.set()

    def ready(self) -> bool:
        """Whether this replica is ready (``/readyz``).

        Ready means: :meth:`run` got past its on_start hooks and is not stopping, and every
        controller that runs in this replica has started and synced its caches. Those
        added with ``needs_leader=False`` always run; leader-only ones count only while this
        replica leads (the leader is not ready again until their caches sync). A standby
        is thus ready once its always-on controllers synced, or once started when it has
        none: it is healthy, waiting for the lease. With ``sharding``, a replica is ready
        only while it is a member of the ring (holds its membership Lease), and its sharded
        controllers count like the others.
        """
        return not self._not_ready()

    def _not_ready(self) -> list[str]:
        """Why this replica is not ready (empty: ready)."""
        if self._stop is None or not self._started:
            return ["starting"]
        if self._stop.is_set():
            return ["stopping"]
        if self.webhooks is not None and not self.webhooks.serving:
            return ["webhook server not serving"]
        if self.sharding is not None and not self._member():
            return [f"not a member of ring {self.sharding.ring}"]
        groups = self._groups()
        here = groups.every_replica + (groups.leader_only if self._leading else [])
        here += groups.sharded if self._member() else []
        return [
            f"controller {entry.controller.name}: caches not synced"
            for entry in self._entries
            if entry in here
            and (entry.task is None or entry.task.done() or not entry.controller.synced)
        ]

    def _member(self) -> bool:
        return self.ring_member is not None and self.ring_member.member

    @property
    def membership(self) -> LeaderElection | None:
        """With ``sharding``: the election of this replica's membership Lease while
        :meth:`run` runs (``membership.is_leader``: a member)."""
        return self.ring_member.membership if self.ring_member is not None else None

    # --- running ---------------------------------------------------------------------------

    async def run(self) -> None:
        """Run until SIGTERM/SIGINT or :meth:`stop`.

        In order: signal handlers, the api (kr8s discovery when None), the probe and
        metrics servers, the webhook server (listening), the on_start hooks, the webhook
        registration (with its ``register_host``: configurations and CRD conversion), then
        the controllers (leader-only ones while leading).

        Raises:
            RuntimeError: the manager is already running, or a controller failed (from
                its error).
            KubeconfigError: no api and no usable kubeconfig (:func:`.connect`).
            OSError: a port cannot be bound; its ``strerror`` names the attribute and
                port: ``health_port 8081: address already in use`` (``health_port``,
                ``metrics_port`` or ``webhooks port``).
            APIError: the API server refused a start-up request or could not be reached
                (an on_start hook's kr8s error mapped: InvalidError for a 422...).
        """
        if self._stop is not None:
            raise RuntimeError(f"manager {self.name} is already running")
        stop = self._stop = asyncio.Event()
        if self._stop_requested:
            stop.set()
        restore = self._install_signal_handlers() if self.handle_signals else _nothing
        acquired: list[Api] = []
        try:
            if not stop.is_set() and await self._unless_stopped(self._prepare(acquired)):
                self._started = True
                await self._run_controllers()
        finally:
            try:
                await self._close(acquired)
            finally:
                restore()
                self._started = False
                self._stop = None
                self._stop_requested = False

    async def _prepare(self, acquired: list[Api]) -> None:
        """Everything before the controllers start."""
        self.recorder = None
        if self.api is None:
            self.api = self._own_api = await connect()
        await acquire_transport(self.api, self.transport)
        acquired.append(self.api)
        install_rate_limit(self.api, self.qps, self.burst)
        self.metrics.instrument(self.api)
        await self._start_servers()  # /healthz answers while hooks run, /readyz says no
        await self._serve_webhooks()  # a hook's writes may call them
        for hook in self._start_hooks:
            await _run_hook(hook, self.api, f"manager {self.name}")
        await self._register_webhooks()  # after the hooks: they may install the CRDs
        self.recorder = EventRecorder(self.api, reporting_controller=self.name)
        await self.recorder.start()
        self._bind_controllers()

    async def _unless_stopped(self, work: Awaitable[None]) -> bool:
        """Await ``work`` unless :meth:`stop` comes first (then cancel it): True when it
        finished."""
        assert self._stop is not None
        task = asyncio.ensure_future(work)
        stopped = asyncio.ensure_future(self._stop.wait())
        try:
            await asyncio.wait([task, stopped], return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopped.cancel()
            if not task.done():
                task.cancel()
            await asyncio.gather(task, stopped, return_exceptions=True)
        if task.cancelled():
            if self._stop.is_set():
                log.info("%s: stopped while starting", self.name)
                return False
            raise asyncio.CancelledError
        task.result()
        return not self._stop.is_set()

    async def _close(self, acquired: list[Api]) -> None:
        """Close what :meth:`run` opened, each step even if an earlier one failed."""
        try:
            if self.recorder is not None:
                await self.recorder.stop()
        finally:
            try:
                await self._stop_webhooks()
                for runner in self._runners:
                    await runner.cleanup()
                self._runners.clear()
                if self._metrics_server is not None:
                    await self._metrics_server.stop()
                    self._metrics_server = None
            finally:
                for api in acquired:
                    await release_transport(api)
                if self._own_api is not None and self._own_api is self.api:
                    await close_session(self._own_api)

    def controller_config(self) -> ControllerConfig:
        """The options every controller of this manager runs with: the manager's transport
        and rate limit (one api is shared), its reflector pool, event recorder and metrics."""
        return ControllerConfig(
            transport=self.transport,
            qps=self.qps,
            burst=self.burst,
            pool=self.pool,
            recorder=self.recorder,
            metrics=self.metrics,
        )

    def _bind_controllers(self) -> None:
        sharded = self._groups().sharded
        config = self.controller_config()
        for entry in self._entries:
            controller = entry.controller
            controller.api = self.api
            controller.config = config
            if controller.namespace is None:
                controller.namespace = self.namespace
            sharding = self.sharding
            controller.shard = (
                ShardFilter(sharding.ring, sharding.identity)
                if sharding is not None and entry in sharded
                else None
            )

    async def _run_controllers(self) -> None:
        assert self._stop is not None
        groups = self._groups()
        start(groups.every_replica)
        try:
            parts: list[Awaitable[None]] = []
            if self.leader_election is not None:
                parts.append(self._lead_and_run(self.leader_election, groups.leader_only))
            else:
                parts.append(self._until_stopped_or_failed(groups.every_replica))
            if self.sharding is not None:
                assert self.api is not None
                self.ring_member = RingMember(
                    self.sharding,
                    groups.sharded,
                    api=self.api,
                    stop=self._stop,
                    metrics=self.metrics,
                    name=self.name,
                    graceful_shutdown_timeout=self.graceful_shutdown_timeout,
                )
                parts.append(self.ring_member.run())
            await run_together(parts, self._stop)
        finally:
            # ordered stop: the leader-only and sharded groups are down; now the rest
            await shutdown(groups.every_replica, self.graceful_shutdown_timeout)

    def _groups(self) -> RunnableGroups:
        return RunnableGroups.of(
            self._entries, self.leader_election is not None, self.sharding is not None
        )

    async def _lead_and_run(self, election: LeaderElection, gated: list[Entry]) -> None:
        assert self._stop is not None and self.api is not None
        stop = self._stop
        gauge = self.metrics.leader.labels(election.name)
        election.on_status_change.append(lambda leading: gauge.set(1 if leading else 0))
        fence_by(gated, election, f"leadership Lease {election.name}")
        stepping_down = stepping_down_timeout(self.graceful_shutdown_timeout, election)
        async with warmed(gated), election.campaign(self.api, graceful=stop.is_set):
            try:
                while not stop.is_set():
                    if not await first(election.leading(), stop.wait()):
                        break
                    log.info("%s: leading (%s); starting controllers", self.name, election.identity)
                    self._leading = True
                    start(gated)
                    stopped = await first(stop.wait(), election.lost(), failure(gated))
                    timeout = self.graceful_shutdown_timeout if stopped else stepping_down
                    await shutdown(gated, timeout)
                    self._leading = False
                    raise_failures(gated)
            finally:
                await shutdown(gated, stepping_down)
                self._leading = False

    async def _until_stopped_or_failed(self, entries: list[Entry]) -> None:
        assert self._stop is not None
        await first(self._stop.wait(), failure(entries))
        raise_failures(entries)

    # --- probes and metrics ----------------------------------------------------------------

    async def _start_servers(self) -> None:
        routes: dict[int, list[tuple[str, Callable[[web.Request], Awaitable[web.Response]]]]] = {}
        if self.health_port is not None:
            routes.setdefault(self.health_port, []).extend(
                [("/healthz", self._healthz), ("/readyz", self._readyz)]
            )
        if self.metrics_port is not None and self.metrics_secure:
            if self.metrics_port == self.health_port and self.health_port != 0:
                raise ValueError(
                    f"metrics_port {self.metrics_port} is the probes' port: secure metrics"
                    " (HTTPS) need a port of their own (or metrics_secure=False)"
                )
            assert self.api is not None  # run() resolved it before the servers
            self._metrics_server = SecureMetricsServer(
                self._metrics,
                DelegatingAuth(self.api),
                host=self.host,
                port=self.metrics_port,
                certificates=self.metrics_certificates,
            )
            await _listening("metrics_port", self.metrics_port, self._metrics_server.start())
            assert self._metrics_server.port is not None
            self.ports["/metrics"] = self._metrics_server.port
        elif self.metrics_port is not None:
            routes.setdefault(self.metrics_port, []).append(("/metrics", self._metrics))
        for port, handlers in routes.items():
            app = web.Application()
            for path, handler in handlers:
                app.router.add_get(path, handler)
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            site = web.TCPSite(runner, self.host, port)
            self._runners.append(runner)  # cleaned up at stop, also when the bind fails
            attribute = "health_port" if port == self.health_port else "metrics_port"
            await _listening(attribute, port, site.start())
            server = site._server
            sockets = getattr(server, "sockets", None) or []
            bound = sockets[0].getsockname()[1] if sockets else port
            for path, _ in handlers:
                self.ports[path] = bound

    async def _serve_webhooks(self) -> None:
        """Start the webhook server (it listens from before the on_start hooks on)."""
        if self.webhooks is not None:
            port = self.webhooks.requested_port
            await _listening("webhooks port", port, self.webhooks.start())

    async def _register_webhooks(self) -> None:
        """With ``register_host``: register the webhook configurations and the CRDs'
        conversion (after the on_start hooks, which may install those CRDs)."""
        if self.webhooks is None or self.webhooks.register_host is None:
            return
        assert self.api is not None
        self._registered = True  # a registration that fails half-way is undone at stop
        await register(self.api, self.webhooks, self.webhooks.url)

    async def _stop_webhooks(self) -> None:
        if self.webhooks is None:
            return
        try:
            if self._registered:
                assert self.api is not None
                self._registered = False
                await unregister(self.api, self.webhooks)
        finally:
            await self.webhooks.stop()

    async def _healthz(self, request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def _readyz(self, request: web.Request) -> web.Response:
        reasons = self._not_ready()
        if not reasons:
            return web.Response(text="ok")
        # 500 as Kubernetes' healthz handlers (and controller-runtime's) answer a failed check
        return web.Response(status=500, text="not ready: " + "; ".join(reasons))

    async def _metrics(self, request: web.Request) -> web.Response:
        if self.ring_member is not None:
            self.ring_member.observe()
        return web.Response(
            body=self.metrics.exposition(), headers={"Content-Type": "text/plain; version=0.0.4"}
        )

    # --- signals ---------------------------------------------------------------------------

    def _install_signal_handlers(self) -> Callable[[], None]:
        loop = asyncio.get_running_loop()
        installed = []
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, self._on_signal, sig)
                installed.append(sig)

        def restore() -> None:
            for sig in installed:
                loop.remove_signal_handler(sig)

        return restore

    def _on_signal(self, sig: signal.Signals) -> None:
        log.info("%s: %s received; stopping gracefully", self.name, sig.name)
        self.stop()


def _nothing() -> None:
    """No signal handlers to restore."""


async def _run_hook(hook: StartHook, api: Api, manager: str) -> None:
    """``await hook(api)``, a kr8s request error it raises as the toolkit's APIError (its
    subclass for the answer's status: InvalidError for a 422...); a TypeError naming
    ``manager`` and the hook, asking for ``async def``, when the hook is a plain def."""
    name = getattr(hook, "__qualname__", None) or repr(hook)
    try:
        await awaitable_result(hook(api), f"on_start hook {name}", manager)
    except (kr8s.ServerError, kr8s.APITimeoutError) as error:
        raise api_error_of(error) from error


async def _listening(attribute: str, port: int, start: Awaitable[object]) -> None:
    """Await ``start`` (a server binding ``port``); an OSError names ``attribute`` and
    ``port`` (``health_port 8081: address already in use``), its errno kept."""
    try:
        await start
    except OSError as error:
        if error.errno not in _BIND_ERRNOS or isinstance(error, ssl.SSLError):
            raise  # not the bind: a certificate file, say (it names itself)
        reason = os.strerror(error.errno).lower()
        raise OSError(error.errno, f"{attribute} {port}: {reason}") from error


# a port in use, an address not this host's, a port below 1024 without the privilege
_BIND_ERRNOS = (errno.EADDRINUSE, errno.EADDRNOTAVAIL, errno.EACCES)
