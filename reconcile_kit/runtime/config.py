"""How a controller reaches the API server and where it reports: one
:class:`ControllerConfig`, which a :class:`~reconcile_kit.manager.Manager` fills for every
controller it runs (one api client, transport, rate limit, reflector pool, metrics and
event recorder), as kube-rs's ``Controller::new`` takes a ``Config``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ..client.ratelimit import checked_rate_limit
from ..client.transport import checked_transport
from .events import EventRecorder
from .queue import QueueMetrics
from .sources import ReflectorPool

__all__ = ["DEFAULT_POOL", "ControllerConfig", "ControllerMetrics"]

DEFAULT_POOL = ReflectorPool()
"""The reflector pool of controllers run without a manager (one per process)."""


class ControllerMetrics(Protocol):
    """What a controller reports to (the manager's Prometheus metrics implement it)."""

    @property
    def queue(self) -> QueueMetrics:
        """Where the controller's work queue reports (client-go's workqueue metrics)."""
        ...

    def observe_reconcile(self, controller: str, result: str, seconds: float) -> None:
        """Count one reconcile of ``controller`` ending with ``result`` (``success``,
        ``error``, ``requeue``...) after ``seconds``."""
        ...

    def set_active_workers(self, controller: str, count: int) -> None:
        """``count`` reconciles of ``controller`` are running now."""
        ...


@dataclass(kw_only=True)
class ControllerConfig:
    """How a controller talks to the API server and where it reports. A Manager replaces
    it with its own for every controller it runs: its api is shared, so its ``transport``,
    ``qps`` and ``burst`` govern, its reflector pool shares caches, its metrics and its
    recorder serve every controller.

    Attributes:
        transport: ``"aiohttp"`` (default) sends the api's requests over aiohttp under
            kr8s's httpx client, about 1.7 times the requests per CPU second (see
            :mod:`reconcile_kit.client.transport`); ``"httpx"`` leaves the api as it is.
        qps: client-side rate limit of the api's requests, in requests per second (a token
            bucket in front of every request, client-go's ``rest.Config.QPS``); None
            (default): no limit, as controller-runtime since 0.21. See
            :mod:`reconcile_kit.client.ratelimit`.
        burst: requests at once before ``qps`` applies (client-go's ``rest.Config.Burst``);
            None: 10 (client-go's default) when ``qps`` is set.
        pool: where reflectors (caches) are shared; None: one pool per process
            (:data:`DEFAULT_POOL`).
        recorder: the :class:`~reconcile_kit.runtime.events.EventRecorder` behind
            ``ctx.recorder`` (started and stopped by whoever made it). None: one the
            controller creates for its api when it runs (reporting as the controller's
            name) and stops, flushed, when the run ends.
        metrics: where reconciles and the work queue are reported (None: nowhere).

    Raises:
        ValueError: an unknown ``transport``; ``qps <= 0``, ``burst < 1``, or a ``burst``
            without ``qps``.
    """

    pool: ReflectorPool | None = None
    recorder: EventRecorder | None = None
    transport: str = "aiohttp"
    qps: float | None = None
    burst: int | None = None
    metrics: ControllerMetrics | None = None

    def __post_init__(self) -> None:
        self.transport = checked_transport(self.transport)
        self.qps, self.burst = checked_rate_limit(self.qps, self.burst)

    @property
    def reflector_pool(self) -> ReflectorPool:
        """:attr:`pool`, or the process's :data:`DEFAULT_POOL`."""
        return self.pool if self.pool is not None else DEFAULT_POOL
