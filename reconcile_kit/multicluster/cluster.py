"""Clusters of a fleet: how to reach one (:class:`Kubeconfig`) and one engaged cluster
(:class:`Cluster`: its api, its reflector pool and caches).

As sigs.k8s.io/multicluster-runtime's ``cluster.Cluster`` (a client, a cache and the
informers of one cluster), engaged and disengaged by a provider while the manager runs.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import kr8s.asyncio
from kr8s.asyncio import Api

from ..client.transport import close_session
from ..meta.objects import ObjectRef
from ..runtime.applier import Applier, Writable
from ..runtime.apply import AppliedIntents
from ..runtime.reflector import Reflector
from ..runtime.resources import KindLike, ResourceInfo
from ..runtime.sources import CacheView, ReflectorPool, Source
from ..runtime.store import Store

__all__ = ["Cluster", "ClusterSource", "Kubeconfig", "KubeconfigDocument"]

log = logging.getLogger(__name__)

KubeconfigDocument = Mapping[str, object]
"""A kubeconfig as a parsed YAML document (``apiVersion: v1``, ``kind: Config``)."""


class ClusterSource(Protocol):
    """How to reach a cluster: what a provider hands to ``fleet.engage``. Two sources
    that compare equal reach the same cluster the same way (engaging a cluster again
    with an equal source changes nothing; with another, the cluster is re-engaged)."""

    @property
    def labels(self) -> Mapping[str, str]:
        """The cluster's labels (what a cluster label selector matches)."""
        ...

    async def connect(self) -> Api:
        """A new kr8s asyncio Api bound to the cluster (no request is sent yet).

        Raises:
            Exception: the source cannot make a client (e.g. a kubeconfig without the
                context).
        """
        ...


@dataclass(frozen=True, eq=True)
class Kubeconfig:
    """A cluster reached through a kubeconfig.

    Attributes:
        config: a kubeconfig file's path, or its parsed document (a dict, as a kubeconfig
            Secret holds it).
        context: the context to use (None: the kubeconfig's current context).
        labels: the cluster's labels (a cluster label selector matches them).
    """

    config: str | Path | KubeconfigDocument
    context: str | None = None
    labels: Mapping[str, str] = field(default_factory=dict)

    async def connect(self) -> Api:
        """A new kr8s asyncio Api (not kr8s's cached one) for :attr:`config` and
        :attr:`context`; reading the kubeconfig sends no request.

        Raises:
            ValueError: the kubeconfig has no such context (from kr8s).
        """
        config = str(self.config) if isinstance(self.config, Path) else self.config
        api: Api = await kr8s.asyncio.Api(
            kubeconfig=config if isinstance(config, str) else dict(config),
            context=self.context,
            bypass_factory=True,
        )
        return api


class Cluster:
    """One engaged cluster: its api, its reflector pool (the caches of every controller
    running there) and the caches multi-cluster aware controllers watch in it. It is what
    ``ctx.clusters[name]`` is (a :class:`~reconcile_kit.runtime.clusters.ClusterHandle`).

    Args:
        name: the cluster's name in the fleet.
        source: how it was reached.
        api: its kr8s asyncio Api (closed by :meth:`close`).
    """

    def __init__(self, name: str, source: ClusterSource, api: Api) -> None:
        self._name = name
        self.source = source
        self._kube = api
        self.pool = ReflectorPool(cluster=name)
        """The cluster's reflectors: its controllers' and the aware watches' caches."""
        self.watches: list[Source] = []
        """The aware controllers' watches running in this cluster (reflector set)."""
        self.intents = AppliedIntents()
        """What aware controllers last applied here (an unchanged apply sends nothing)."""

    @property
    def api(self) -> Api:
        """Its kr8s asyncio Api."""
        return self._kube

    @property
    def labels(self) -> Mapping[str, str]:
        """Its labels (its source's)."""
        return self.source.labels

    @property
    def synced(self) -> bool:
        """Whether every aware watch in this cluster has listed once."""
        return all(s.reflector is not None and s.reflector.has_synced() for s in self.watches)

    @property
    def name(self) -> str:
        """The cluster's name in the fleet."""
        return self._name

    def add_watch(self, source: Source, info: ResourceInfo) -> Reflector:
        """Start an aware controller's watch of ``source`` (resolved as ``info``) here."""
        reflector = self.pool.acquire(
            self.api, info, namespace=source.namespace, label_selector=source.label_selector
        )
        self.watches.append(
            Source(
                source.kind,
                None,
                source.namespace,
                source.label_selector,
                source.reason,
                info,
                reflector,
            )
        )
        return reflector

    def store_for(self, kind: KindLike) -> Store:
        """The read-only cache of ``kind`` in this cluster (watched by an aware controller).

        Raises:
            KeyError: no aware controller watches ``kind`` in the clusters.
        """
        return self._view().store_for(kind)

    def _view(self) -> CacheView:
        if not self.watches or self.watches[0].reflector is None:
            raise KeyError(f"nothing is watched in cluster {self.name}")
        primary = self.watches[0].reflector.store
        return CacheView(
            f"cluster {self.name}",
            primary,
            self.watches[1:],
            self.watches[0].kind,
            self.watches[0].info,
        )

    async def apply(
        self, obj: Writable, *, field_manager: str | None = None, force: bool = True
    ) -> Writable:
        """Server-side apply ``obj`` in this cluster, as ``ctx.apply`` does (field manager:
        ``field_manager``, default ``reconcile-kit``): nothing is sent while the intent is
        unchanged and the cache of a watched kind holds the child.

        Raises:
            KeyError: nothing is watched in this cluster (an aware controller applies the
                kinds it watches with ``watches_in_clusters``).
            APIError: the server refused it (see
                :meth:`~reconcile_kit.runtime.applier.Applier.apply`).
        """
        view = self._view()
        applier = Applier(
            field_manager or "reconcile-kit", self.api, ObjectRef("", "", ""), view, self.intents
        )
        return await applier.apply(obj, field_manager=field_manager, force=force)

    async def close(self) -> None:
        """Stop the aware watches' caches and close the api's connections (its
        controllers, stopped before, released theirs)."""
        while self.watches:
            reflector = self.watches.pop().reflector
            if reflector is not None:
                await self.pool.release(reflector)
        if len(self.pool):
            log.warning("cluster %s: %d caches still running at close", self.name, len(self.pool))
        await close_session(self.api)

    def __repr__(self) -> str:
        return f"Cluster({self.name!r})"
