"""The context a reconcile gets: what triggered it, the cache, and write helpers.

``ctx.get`` and ``ctx.list`` read the controller's caches (read-only dicts, no request);
``ctx.apply`` / ``ctx.apply_status`` server-side apply a child or a status;
``ctx.create_or_patch`` creates or merge-patches; ``ctx.patch_status`` /
``ctx.update_status`` write the status subresource.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar, overload

import orjson
from kr8s.asyncio import Api
from kr8s.asyncio.objects import APIObject

from ..meta.objects import ObjectRef
from .applier import Applier, Writable
from .apply import AppliedIntents
from .clusters import NO_CLUSTERS, ClusterHandle
from .events import EventRecorder
from .reasons import ReconcileReason
from .resources import KindLike
from .sources import CacheView
from .store import Obj, Store
from .typed import is_model_class

if TYPE_CHECKING:
    from ..typed.resource import CustomResource

__all__ = ["Context"]

Model = TypeVar("Model", bound="CustomResource")


@dataclass
class Context:
    """Handed to every reconcile: what triggered it, the caches (read-only), and the
    write helpers (those of its :class:`~reconcile_kit.runtime.applier.Applier`).

    Attributes:
        controller_name: the running controller's name.
        cache: read-only view of the controller's caches (primary, owned, watched kinds).
        api: its kr8s Api.
        key: the ObjectRef being reconciled.
        attempt: 1 for a first try, n for the n-th try after failures.
        reasons: why this run happened since the key's previous run (see
            :class:`~reconcile_kit.runtime.reasons.ReconcileReason`).
        store: the primary kind's cache (read-only).
        data: the ``data`` object given to ``run`` (or ``Manager.add``).
        log: a logger adapter carrying the controller name, key and attempt.
        recorder: the controller's EventRecorder (``ctx.recorder.event(obj, type, reason,
            message)``): the manager's in a manager, else the controller's own.
        intents: what this controller last applied to each child (lets an unchanged
            :meth:`apply` send nothing); None: always send.
        cluster: the name of the cluster this reconcile acts on when a
            :class:`~reconcile_kit.multicluster.MultiClusterManager` runs the controller
            for each engaged cluster (``api``, ``cache`` and the writes are that
            cluster's); ``""`` single-cluster and in the management cluster.
        clusters: a multi-cluster aware controller's read-only view of the engaged
            workload clusters (name -> :class:`~reconcile_kit.runtime.clusters.ClusterHandle`);
            empty otherwise.
    """

    controller_name: str
    cache: CacheView
    api: Api
    key: ObjectRef
    attempt: int
    reasons: frozenset[ReconcileReason]
    store: Store
    # Any: whatever the user handed to run()/Manager.add(), read back as they typed it
    data: Any
    log: logging.LoggerAdapter[logging.Logger]
    recorder: EventRecorder | None = None
    intents: AppliedIntents | None = None
    _applier: Applier | None = field(default=None, init=False, repr=False)
    cluster: str = ""
    clusters: Mapping[str, ClusterHandle] = field(default_factory=lambda: NO_CLUSTERS, repr=False)

    @property
    def applier(self) -> Applier:
        """The writes of this reconcile (:meth:`apply` and the others call it), made on
        first use: a reconcile that writes nothing through ``ctx`` does not build one."""
        if self._applier is None:
            self._applier = Applier(
                self.controller_name, self.api, self.key, self.cache, self.intents
            )
        return self._applier

    # --- reading the caches ----------------------------------------------------------------

    @overload
    def get(
        self, name: str, namespace: str | None = None, *, kind: type[Model]
    ) -> Model | None: ...

    @overload
    def get(
        self, name: str, namespace: str | None = None, kind: str | type[APIObject] | None = None
    ) -> Obj | None: ...

    def get(
        self, name: str, namespace: str | None = None, kind: KindLike | None = None
    ) -> Obj | CustomResource | None:
        """A cached object of the primary kind or of an owned/watched ``kind``: a read-only
        dict, or, when ``kind`` is a typed model class (a CustomResource), that model (a
        copy bound to a kr8s object on the controller's api: ``PatchHelper`` takes it);
        None when the cache does not hold it. ``namespace`` defaults to the reconciled
        object's.

        Raises:
            KeyError: the controller does not watch ``kind``.
        """
        ns = self.key.namespace if namespace is None else namespace
        found = self.cache.store_for(kind).get(ns, name)
        if found is None or not is_model_class(kind):
            return found
        return self._model(kind, found)

    @overload
    def list(self, namespace: str | None = None, *, kind: type[Model]) -> list[Model]: ...

    @overload
    def list(
        self, namespace: str | None = None, kind: str | type[APIObject] | None = None
    ) -> list[Obj]: ...

    def list(
        self, namespace: str | None = None, kind: KindLike | None = None
    ) -> list[Any]:  # list[Obj] or list[Model], as the overloads say
        """Cached objects, optionally of one namespace: read-only dicts, or models of a
        typed ``kind`` (as :meth:`get`)."""
        found = self.cache.store_for(kind).list(namespace)
        if not is_model_class(kind):
            return found
        return [self._model(kind, raw) for raw in found]

    def _model(self, kind: type[Model], raw: Obj) -> Model:
        """The typed model of cached ``raw`` (a copy), bound to a kr8s object on the api."""
        state = orjson.loads(orjson.dumps(raw))
        return kind.from_raw(
            state, kind.kr8s_class()(orjson.loads(orjson.dumps(raw)), api=self.api)
        )

    # --- writing (the applier's) -------------------------------------------------------------

    async def apply(
        self, obj: Writable, *, field_manager: str | None = None, force: bool = True
    ) -> Writable:
        """Server-side apply ``obj``: :meth:`Applier.apply
        <reconcile_kit.runtime.applier.Applier.apply>` (its arguments and errors)."""
        return await self.applier.apply(obj, field_manager=field_manager, force=force)

    async def apply_status(
        self, obj: Writable, *, field_manager: str | None = None, force: bool = True
    ) -> Writable:
        """Server-side apply ``obj``'s status: :meth:`Applier.apply_status
        <reconcile_kit.runtime.applier.Applier.apply_status>`."""
        return await self.applier.apply_status(obj, field_manager=field_manager, force=force)

    async def create_or_patch(
        self, obj: Writable, mutate: Callable[[Writable], object] | None = None
    ) -> str:
        """Create or merge-patch ``obj``: :meth:`Applier.create_or_patch
        <reconcile_kit.runtime.applier.Applier.create_or_patch>`; returns ``"created"``,
        ``"updated"`` or ``"unchanged"``."""
        return await self.applier.create_or_patch(obj, mutate)

    async def patch_status(self, obj: Writable, status: dict[str, Any]) -> None:
        """Merge-patch ``status`` into ``obj``'s status (a kr8s object, a typed model or a
        dict with apiVersion and kind): :meth:`Applier.patch_status
        <reconcile_kit.runtime.applier.Applier.patch_status>`."""
        await self.applier.patch_status(obj, status)

    async def update_status(self, obj: Writable) -> None:
        """PUT ``obj``'s status (a kr8s object, a typed model or a dict with apiVersion and
        kind): :meth:`Applier.update_status
        <reconcile_kit.runtime.applier.Applier.update_status>`."""
        await self.applier.update_status(obj)
