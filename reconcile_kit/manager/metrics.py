"""Prometheus metrics, named as controller-runtime names them so dashboards work as-is.

controller_runtime_reconcile_total{controller,result} (result: success, error,
requeue_after), controller_runtime_reconcile_errors_total{controller},
controller_runtime_reconcile_time_seconds{controller},
controller_runtime_active_workers{controller}, workqueue_depth{name},
workqueue_adds_total{name}, workqueue_queue_duration_seconds{name},
workqueue_work_duration_seconds{name}, workqueue_retries_total{name},
leader_election_master_status{name}, rest_client_requests_total{code,method}.
Sources: controller-runtime pkg/internal/controller/metrics, pkg/metrics/workqueue.go,
pkg/metrics/client_go_adapter.go and client-go's leaderelection metrics.

Every request the manager's api sends is counted, over either route (the toolkit's direct
aiohttp route and kr8s's httpx ``call_api``), once per attempt, as client-go counts them:
rest_client_requests_total{code,method} (code ``<error>`` when no answer came), and
client-go's rest_client_request_duration_seconds{verb},
rest_client_rate_limiter_duration_seconds{verb} and
rest_client_request_retries_total{code,verb}
(k8s.io/component-base/metrics/prometheus/restclient), fed by one request observer
(:func:`reconcile_kit.client.request.add_request_observer`).

Sharding (``Manager(sharding=...)``; no controller-runtime equivalent, the names follow
timebertt/kubernetes-controller-sharding's ``controller_sharding_*`` where one exists):
reconcile_kit_shard_member{ring,shard} (1 while this replica is a member),
reconcile_kit_shard_objects{ring,shard,controller} (objects in this replica's share),
reconcile_kit_shard_drains_acknowledged_total{ring,shard}; from the replica running the
ring's sharder: reconcile_kit_shard_ring_members{ring,state} (state: live, taking),
reconcile_kit_shard_assignments_total{ring}, reconcile_kit_shard_movements_total{ring},
reconcile_kit_shard_drains_total{ring}, reconcile_kit_shard_unowned_objects{ring} and
reconcile_kit_shard_assignment_latency_seconds{ring} (from the sharder seeing that an
object needs an owner to its label being written, drains included).
"""

from __future__ import annotations

from kr8s.asyncio import Api
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from ..client.request import RequestObservation, add_request_observer
from ..runtime.queue import QueueMetrics
from .sharding.assigner import AssignerMetrics

__all__ = ["Metrics"]

_RECONCILE_BUCKETS = (
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.15,
    0.2,
    0.25,
    0.3,
    0.35,
    0.4,
    0.45,
    0.5,
    0.6,
    0.7,
    0.8,
    0.9,
    1.0,
    1.25,
    1.5,
    1.75,
    2.0,
    2.5,
    3.0,
    3.5,
    4.0,
    4.5,
    5,
    6,
    7,
    8,
    9,
    10,
    15,
    20,
    25,
    30,
    40,
    50,
    60,
)
_QUEUE_BUCKETS = tuple(10.0**e for e in range(-8, 2))
_REQUEST_BUCKETS = (0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0)
"""client-go's rest_client_request_duration_seconds and rate limiter buckets."""


# Label names, one tuple per set (the same set reads the same everywhere).
_BY_CODE_METHOD = ("code", "method")
_BY_CODE_VERB = ("code", "verb")
_BY_CONTROLLER = ("controller",)
_BY_CONTROLLER_RESULT = ("controller", "result")
_BY_NAME = ("name",)
_BY_RING = ("ring",)
_BY_RING_SHARD = ("ring", "shard")
_BY_RING_SHARD_CONTROLLER = ("ring", "shard", "controller")
_BY_RING_STATE = ("ring", "state")
_BY_VERB = ("verb",)


class Metrics:
    """A registry with every metric; one per manager (``registry`` can be shared)."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        self.queue = _PrometheusQueueMetrics(r)
        self.shard = _ShardMetrics(r)
        self.reconcile_total = Counter(
            "controller_runtime_reconcile_total",
            "Total number of reconciliations per controller",
            _BY_CONTROLLER_RESULT,
            registry=r,
        )
        self.reconcile_errors = Counter(
            "controller_runtime_reconcile_errors_total",
            "Total number of reconciliation errors per controller",
            _BY_CONTROLLER,
            registry=r,
        )
        self.reconcile_time = Histogram(
            "controller_runtime_reconcile_time_seconds",
            "Length of time per reconciliation per controller",
            _BY_CONTROLLER,
            buckets=_RECONCILE_BUCKETS,
            registry=r,
        )
        self.active_workers = Gauge(
            "controller_runtime_active_workers",
            "Number of currently used workers per controller",
            _BY_CONTROLLER,
            registry=r,
        )
        self.leader = Gauge(
            "leader_election_master_status",
            "Gauge of if the reporting system is master of the relevant lease, 0"
            " indicates backup, 1 indicates master. 'name' is the string used to"
            " identify the lease.",
            _BY_NAME,
            registry=r,
        )
        self.requests = Counter(
            "rest_client_requests_total",
            "Number of HTTP requests, partitioned by status code and method.",
            _BY_CODE_METHOD,
            registry=r,
        )
        self.request_duration = Histogram(
            "rest_client_request_duration_seconds",
            "Request latency in seconds. Broken down by verb.",
            _BY_VERB,
            buckets=_REQUEST_BUCKETS,
            registry=r,
        )
        self.rate_limiter_duration = Histogram(
            "rest_client_rate_limiter_duration_seconds",
            "Client side rate limiter latency in seconds. Broken down by verb.",
            _BY_VERB,
            buckets=_REQUEST_BUCKETS,
            registry=r,
        )
        self.request_retries = Counter(
            "rest_client_request_retries_total",
            "Number of request retries, partitioned by status code and verb.",
            _BY_CODE_VERB,
            registry=r,
        )

    def observe_reconcile(self, controller: str, result: str, seconds: float) -> None:
        """Count one reconcile with ``result`` (success, error, requeue_after)."""
        self.reconcile_total.labels(controller, result).inc()
        if result == "error":
            self.reconcile_errors.labels(controller).inc()
        self.reconcile_time.labels(controller).observe(seconds)

    def set_active_workers(self, controller: str, count: int) -> None:
        """Set ``controller_runtime_active_workers`` of ``controller`` to ``count``."""
        self.active_workers.labels(controller).set(count)

    def instrument(self, api: Api) -> None:
        """Count every request ``api`` sends from now on (see the module docstring); once
        per api, however often called."""
        add_request_observer(api, self.observe_request)

    def observe_request(self, seen: RequestObservation) -> None:
        """Count one request (a :class:`~reconcile_kit.client.request.RequestObservation`)."""
        code = str(seen.status) if seen.status else "<error>"
        self.requests.labels(code, seen.method).inc()
        self.request_duration.labels(seen.method).observe(seen.seconds)
        self.rate_limiter_duration.labels(seen.method).observe(seen.rate_limit_wait)
        if seen.attempt > 1:
            self.request_retries.labels(code, seen.method).inc()

    def exposition(self) -> bytes:
        """The registry in Prometheus text format."""
        return generate_latest(self.registry)


class _PrometheusQueueMetrics(QueueMetrics):
    """Work queue measurements as workqueue_* metrics (label ``name``: the controller)."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self._depth = Gauge(
            "workqueue_depth", "Current depth of workqueue", _BY_NAME, registry=registry
        )
        self._adds = Counter(
            "workqueue_adds_total",
            "Total number of adds handled by workqueue",
            _BY_NAME,
            registry=registry,
        )
        self._queue = Histogram(
            "workqueue_queue_duration_seconds",
            "How long in seconds an item stays in workqueue before being requested",
            _BY_NAME,
            buckets=_QUEUE_BUCKETS,
            registry=registry,
        )
        self._work = Histogram(
            "workqueue_work_duration_seconds",
            "How long in seconds processing an item from workqueue takes",
            _BY_NAME,
            buckets=_QUEUE_BUCKETS,
            registry=registry,
        )
        self._retries = Counter(
            "workqueue_retries_total",
            "Total number of retries handled by workqueue",
            _BY_NAME,
            registry=registry,
        )

    def queue_duration(self, name: str, seconds: float) -> None:
        self._queue.labels(name).observe(seconds)

    def adds(self, name: str) -> None:
        self._adds.labels(name).inc()

    def depth(self, name: str, depth: int) -> None:
        self._depth.labels(name).set(depth)

    def work_duration(self, name: str, seconds: float) -> None:
        self._work.labels(name).observe(seconds)

    def retries(self, name: str) -> None:
        self._retries.labels(name).inc()


class _ShardMetrics(AssignerMetrics):
    """The reconcile_kit_shard_* metrics (see the module docstring)."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.member = Gauge(
            "reconcile_kit_shard_member",
            "1 while this replica is a member of the ring (holds its membership Lease)",
            _BY_RING_SHARD,
            registry=registry,
        )
        self.objects = Gauge(
            "reconcile_kit_shard_objects",
            "Objects of a sharded controller in this replica's share (its cache)",
            _BY_RING_SHARD_CONTROLLER,
            registry=registry,
        )
        self.acknowledged = Counter(
            "reconcile_kit_shard_drains_acknowledged_total",
            "Objects this replica handed over (drains acknowledged, moves of a graceful stop)",
            _BY_RING_SHARD,
            registry=registry,
        )
        self.ring_members = Gauge(
            "reconcile_kit_shard_ring_members",
            "Members of the ring seen by its sharder (live; taking: live and not leaving)",
            _BY_RING_STATE,
            registry=registry,
        )
        self.assignments = Counter(
            "reconcile_kit_shard_assignments_total",
            "Objects the sharder labelled with an owner (new, unassigned or moved)",
            _BY_RING,
            registry=registry,
        )
        self.movements = Counter(
            "reconcile_kit_shard_movements_total",
            "Objects the sharder moved from one member to another",
            _BY_RING,
            registry=registry,
        )
        self.drains = Counter(
            "reconcile_kit_shard_drains_total",
            "Objects the sharder marked draining (a move away from a live member)",
            _BY_RING,
            registry=registry,
        )
        self.unowned_objects = Gauge(
            "reconcile_kit_shard_unowned_objects",
            "Objects without a live owner (unlabelled, labelled for a member that is not"
            " live, or draining), as the sharder saw them after its last pass",
            _BY_RING,
            registry=registry,
        )
        self.latency = Histogram(
            "reconcile_kit_shard_assignment_latency_seconds",
            "Seconds from the sharder seeing that an object needs an owner to labelling it",
            _BY_RING,
            buckets=_RECONCILE_BUCKETS,
            registry=registry,
        )

    def assigned(self, ring: str, seconds: float, moved: bool) -> None:
        self.assignments.labels(ring).inc()
        if moved:
            self.movements.labels(ring).inc()
        self.latency.labels(ring).observe(seconds)

    def drain_started(self, ring: str) -> None:
        self.drains.labels(ring).inc()

    def members(self, ring: str, live: int, candidates: int) -> None:
        self.ring_members.labels(ring, "live").set(live)
        self.ring_members.labels(ring, "taking").set(candidates)

    def unowned(self, ring: str, count: int) -> None:
        self.unowned_objects.labels(ring).set(count)
