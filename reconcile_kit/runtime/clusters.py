"""What a reconcile sees of other clusters: ``ctx.cluster`` and ``ctx.clusters``.

A controller run by a :class:`~reconcile_kit.multicluster.MultiClusterManager` for one
engaged cluster (a *uniform* reconciler) has ``ctx.cluster`` set to that cluster's name;
``ctx.api``, ``ctx.cache`` and ``ctx.apply`` then act on that cluster. A *multi-cluster
aware* controller (primary objects in the management cluster) gets ``ctx.clusters``: a
read-only mapping of the engaged clusters' names to :class:`ClusterHandle` objects, through
which it reads its children's caches and writes them in the workload clusters. Single
cluster, ``ctx.cluster`` is ``""`` and ``ctx.clusters`` is empty.

The names follow sigs.k8s.io/multicluster-runtime, whose ``mcreconcile.Request`` carries a
``ClusterName`` beside the object's key and whose reconcilers get the cluster from the
manager (``mgr.GetCluster(ctx, req.ClusterName)``).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Protocol

from kr8s.asyncio import Api

from .applier import Writable
from .resources import KindLike
from .store import Store

__all__ = ["NO_CLUSTERS", "ClusterHandle"]


class ClusterHandle(Protocol):
    """One engaged workload cluster, as a multi-cluster aware reconcile sees it
    (``ctx.clusters[name]``)."""

    @property
    def name(self) -> str:
        """The cluster's name (as its provider engaged it)."""
        ...

    @property
    def labels(self) -> Mapping[str, str]:
        """The cluster's labels (from its provider)."""
        ...

    @property
    def api(self) -> Api:
        """A kr8s asyncio Api bound to the cluster."""
        ...

    @property
    def synced(self) -> bool:
        """Whether every cache watched in this cluster has listed once."""
        ...

    def store_for(self, kind: KindLike) -> Store:
        """The read-only cache of ``kind`` in this cluster (a kind watched there).

        Raises:
            KeyError: ``kind`` is not watched in the clusters.
        """
        ...

    async def apply(
        self, obj: Writable, *, field_manager: str | None = None, force: bool = True
    ) -> Writable:
        """Server-side apply ``obj`` in this cluster (as ``ctx.apply``; nothing is sent
        while the intent is unchanged and the cache holds the child).

        Raises:
            APIError: the server refused it (see ``ctx.apply``).
        """
        ...


NO_CLUSTERS: Mapping[str, ClusterHandle] = MappingProxyType({})
"""``ctx.clusters`` of a controller that is not multi-cluster aware."""
