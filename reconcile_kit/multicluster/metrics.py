"""Prometheus metrics of a fleet, with a ``cluster`` label: reconciles, workers and work
queues of the controllers run per cluster, and the clusters' state.

Registered on the management manager's registry (one ``/metrics``): controller-runtime's
metric names prefixed ``multicluster_`` (so that the management controllers' own series
keep their label set), plus ``multicluster_engaged_clusters`` and
``multicluster_cluster_engagements_total``. multicluster-runtime adds no cluster label to
controller-runtime's metrics yet; a separate family is the additive choice here.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from ..runtime.queue import QueueMetrics

__all__ = ["ClusterMetrics", "FleetMetrics"]

_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


# Label names, one tuple per set (the same set reads the same everywhere).
_BY_CLUSTER = ("cluster",)
_BY_CLUSTER_EVENT = ("cluster", "event")
_BY_CONTROLLER_CLUSTER = ("controller", "cluster")
_BY_CONTROLLER_CLUSTER_RESULT = ("controller", "cluster", "result")
_BY_NAME_CLUSTER = ("name", "cluster")


class FleetMetrics:
    """The fleet's metric families on ``registry``.

    Args:
        registry: the manager's registry (``manager.metrics.registry``).
    """

    def __init__(self, registry: CollectorRegistry) -> None:
        self.engaged = Gauge(
            "multicluster_engaged_clusters",
            "Number of clusters engaged in this replica",
            registry=registry,
        )
        self.reconcile_total = Counter(
            "multicluster_reconcile_total",
            "Total number of reconciliations per controller and cluster",
            _BY_CONTROLLER_CLUSTER_RESULT,
            registry=registry,
        )
        self.reconcile_time = Histogram(
            "multicluster_reconcile_time_seconds",
            "Length of time per reconciliation per controller and cluster",
            _BY_CONTROLLER_CLUSTER,
            buckets=_BUCKETS,
            registry=registry,
        )
        self.active_workers = Gauge(
            "multicluster_active_workers",
            "Number of currently used workers per controller and cluster",
            _BY_CONTROLLER_CLUSTER,
            registry=registry,
        )
        self.queue_depth = Gauge(
            "multicluster_workqueue_depth",
            "Current depth of the workqueue per controller and cluster",
            _BY_NAME_CLUSTER,
            registry=registry,
        )
        self.queue_adds = Counter(
            "multicluster_workqueue_adds_total",
            "Total number of adds handled by the workqueue per controller and cluster",
            _BY_NAME_CLUSTER,
            registry=registry,
        )
        self.queue_retries = Counter(
            "multicluster_workqueue_retries_total",
            "Total number of retries handled by the workqueue per controller and cluster",
            _BY_NAME_CLUSTER,
            registry=registry,
        )
        self.synced = Gauge(
            "multicluster_cluster_synced",
            "1 while every controller of the cluster has synced its caches, else 0",
            _BY_CLUSTER,
            registry=registry,
        )
        self.engagements = Counter(
            "multicluster_cluster_engagements_total",
            "Clusters engaged, disengaged and failed (event), per cluster",
            _BY_CLUSTER_EVENT,
            registry=registry,
        )

    def for_cluster(self, cluster: str) -> ClusterMetrics:
        """What the controllers of ``cluster`` report to."""
        return ClusterMetrics(self, cluster)

    def forget(self, cluster: str) -> None:
        """Drop the gauges of a disengaged ``cluster`` (counters stay, as Prometheus wants)."""
        for gauge in (self.active_workers, self.queue_depth):
            for labels in list(gauge._metrics):  # the series of this cluster
                if cluster in labels[1:2]:
                    gauge.remove(*labels)
        if (cluster,) in self.synced._metrics:
            self.synced.remove(cluster)


class ClusterMetrics(QueueMetrics):
    """One cluster's view of :class:`FleetMetrics`: the
    :class:`~reconcile_kit.runtime.config.ControllerMetrics` of its controllers and the
    :class:`~reconcile_kit.runtime.queue.QueueMetrics` of their queues.

    Args:
        fleet: the fleet's metrics.
        cluster: the cluster's name (the ``cluster`` label).
    """

    def __init__(self, fleet: FleetMetrics, cluster: str) -> None:
        self.fleet = fleet
        self.cluster = cluster

    @property
    def queue(self) -> QueueMetrics:
        """The work queues' callbacks (this object)."""
        return self

    def observe_reconcile(self, controller: str, result: str, seconds: float) -> None:
        """Count one reconcile of ``controller`` in this cluster ending with ``result``
        after ``seconds``."""
        self.fleet.reconcile_total.labels(controller, self.cluster, result).inc()
        self.fleet.reconcile_time.labels(controller, self.cluster).observe(seconds)

    def set_active_workers(self, controller: str, count: int) -> None:
        """``count`` reconciles of ``controller`` run in this cluster now."""
        self.fleet.active_workers.labels(controller, self.cluster).set(count)

    def adds(self, name: str) -> None:
        """A key was queued for ``name`` in this cluster."""
        self.fleet.queue_adds.labels(name, self.cluster).inc()

    def depth(self, name: str, depth: int) -> None:
        """``depth`` keys wait in ``name``'s queue in this cluster."""
        self.fleet.queue_depth.labels(name, self.cluster).set(depth)

    def retries(self, name: str) -> None:
        """A retry was scheduled by ``name``'s queue in this cluster."""
        self.fleet.queue_retries.labels(name, self.cluster).inc()
