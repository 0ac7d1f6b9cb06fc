"""One manager, many clusters (issue 32): providers engage and disengage clusters while a
:class:`MultiClusterManager` runs; uniform reconcilers run in every engaged cluster
(``ctx.cluster``), multi-cluster aware ones reach them through ``ctx.clusters``.

The design follows sigs.k8s.io/multicluster-runtime (Provider, engaged clusters,
cluster-aware requests); see :mod:`.manager` and docs/multicluster.md.
"""

from .cluster import Cluster, ClusterSource, Kubeconfig, KubeconfigDocument
from .manager import AwareController, ClusterMapper, MultiClusterManager, fleet_of
from .metrics import ClusterMetrics, FleetMetrics
from .provider import (
    CAPI_CLUSTER_NAME_LABEL,
    Fleet,
    KubeconfigProvider,
    Provider,
    SecretProvider,
    StaticProvider,
    contexts_of,
)

__all__ = [
    "CAPI_CLUSTER_NAME_LABEL",
    "AwareController",
    "Cluster",
    "ClusterMapper",
    "ClusterMetrics",
    "ClusterSource",
    "Fleet",
    "FleetMetrics",
    "Kubeconfig",
    "KubeconfigDocument",
    "KubeconfigProvider",
    "MultiClusterManager",
    "Provider",
    "SecretProvider",
    "StaticProvider",
    "contexts_of",
    "fleet_of",
]
