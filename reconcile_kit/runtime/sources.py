"""Where a controller's events come from: the reflectors it shares and how their events
map to keys of the primary kind.

A controller watches its primary kind and, as controller-runtime's ``Owns`` and
``Watches``, secondary kinds whose events map to primary keys: through the child's
controller owner reference (``owns``) or a user mapper (``watches``). Reflectors are shared
through a :class:`ReflectorPool`, so two controllers watching Secrets hold one cache.
Reconciles read those caches through a :class:`CacheView`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypedDict, Unpack

from kr8s.asyncio import Api

from ..meta.objects import ObjectRef, metadata_of
from .reasons import ReconcileReason
from .reflector import Reflector, ReflectorEvent, WatchScope, drop_managed_fields
from .resources import KindLike, ResourceInfo
from .store import Obj, Store
from .typed import is_model_class

__all__ = ["CacheView", "MapScope", "ReflectorPool", "Source", "owner_keys"]

EventMapper = Callable[[ReflectorEvent], Iterable[ObjectRef]]


class MapScope(TypedDict, total=False):
    """Where a mapped watch looks (``Controller.watches``, ``watches_in_clusters``): a
    namespace (None: the controller's) and a server-side label selector."""

    namespace: str | None
    label_selector: str | None


@dataclass
class Source:
    """A secondary watch: a kind, its scope, and how its events map to primary keys.

    Attributes:
        kind: a kr8s class or kind string.
        mapper: maps an event to primary keys; None maps through owner references.
        namespace: the namespace watched (None: the controller's).
        label_selector: server-side filter of the watch.
        reason: the :class:`~reconcile_kit.runtime.controller.ReconcileReason` its events
            are queued with.
        info: the resolved kind, once the controller runs.
        reflector: the shared reflector, once the controller runs.
        all_owners: for owner mapping, every owner reference counts, not only the
            controller reference.
    """

    kind: KindLike
    mapper: EventMapper | None
    namespace: str | None
    label_selector: str | None
    reason: str
    info: ResourceInfo | None = None
    reflector: Reflector | None = None
    all_owners: bool = False

    @classmethod
    def mapped(cls, kind: KindLike, mapper: EventMapper | None, scope: MapScope) -> Source:
        """A watch of ``kind`` in ``scope`` whose events ``mapper`` maps to primary keys
        (queued with reason ``mapped``)."""
        namespace, selector = scope.get("namespace"), scope.get("label_selector")
        return cls(kind, mapper, namespace, selector, ReconcileReason.MAPPED)


def owner_keys(child: Obj | None, owner: ResourceInfo, all_owners: bool) -> Iterable[ObjectRef]:
    """Keys of ``owner``-kind objects that ``child`` names in its ownerReferences: only its
    controller reference (controller=true) unless ``all_owners``; matched by kind and API
    group, as controller-runtime's ``EnqueueRequestForOwner``."""
    if child is None:
        return
    meta = metadata_of(child)
    namespace = meta.get("namespace", "") if owner.namespaced else ""
    for ref in meta.get("ownerReferences") or ():
        if not (all_owners or ref.get("controller")):
            continue
        group = str(ref.get("apiVersion", "")).rpartition("/")[0]
        if ref.get("kind") == owner.kind and group == owner.group:
            yield ObjectRef(owner.ref_kind, namespace, ref.get("name", ""))


class CacheView:
    """Read-only access to a controller's caches: its primary store and the stores of the
    kinds it owns or watches.

    Args:
        name: the controller's name (for error messages).
        primary: the primary kind's store.
        sources: the controller's sources (their reflectors, once running).
        kind: the primary kind as given (so that naming it finds the primary store).
        info: the primary kind as resolved (so that naming it finds the primary store).
    """

    def __init__(
        self,
        name: str,
        primary: Store,
        sources: Iterable[Source],
        kind: KindLike | None = None,
        info: ResourceInfo | None = None,
    ) -> None:
        self.name = name
        self.primary = primary
        self._sources = tuple(sources)
        self._kind = kind
        self._info = info

    def store_for(self, kind: KindLike | None = None) -> Store:
        """The store of ``kind`` (a kr8s class, a kind, ``Kind.group`` or plural), or the
        primary store when None or the primary kind. A typed model class (a
        CustomResource) names its kind; a kr8s class matches its kind and apiVersion, however
        the controller was given the kind (``owns("Secret")`` is ``Secret``'s).

        Raises:
            KeyError: the controller does not watch ``kind``: the message names it and the
                kinds the controller watches.
        """
        if kind is None or kind is self._kind:
            return self.primary
        if is_model_class(kind):
            resource = kind.resource
            return self.store_for(f"{resource.kind}.{resource.group}")
        if self._info is not None and _is_kind(kind, self._info):
            return self.primary
        for source in self._sources:
            info = source.info
            if (
                info is not None
                and source.reflector is not None
                and (kind is source.kind or _is_kind(kind, info) or kind == info.plural)
            ):
                return source.reflector.store
        raise KeyError(self._not_watched(kind))

    def _not_watched(self, kind: KindLike) -> str:
        """The KeyError message of :meth:`store_for`: ``kind`` and the watched kinds."""
        name = kind if isinstance(kind, str) else getattr(kind, "kind", None) or repr(kind)
        watched = [info.ref_kind for info in (self._info, *self.kinds()) if info is not None]
        return (
            f"controller {self.name} does not watch {name}: its caches hold "
            f"{', '.join(dict.fromkeys(watched)) or 'its primary kind'}; "
            "owns() or watches() a kind to read it from the cache"
        )

    def kinds(self) -> list[ResourceInfo]:
        """The resolved kinds of the sources (owned and watched), in order."""
        return [source.info for source in self._sources if source.info is not None]


def _is_kind(kind: KindLike, info: ResourceInfo) -> bool:
    """Whether ``kind`` (a kind string or a kr8s class) names ``info``'s kind."""
    if isinstance(kind, str):
        return kind in (info.kind, info.ref_kind)
    return (getattr(kind, "kind", None), getattr(kind, "version", None)) == (
        info.kind,
        info.api_version,
    )


class ReflectorPool:
    """One reflector per (kind, namespace, selectors, transform), shared by controllers.

    ``acquire`` starts the reflector on first use; ``release`` stops it after the last.
    ``cluster``: the cluster its reflectors watch (a multi-cluster manager's), named in
    their log lines.
    """

    def __init__(self, cluster: str | None = None) -> None:
        self.cluster = cluster
        self._reflectors: dict[tuple[Any, ...], Reflector] = {}
        self._users: dict[tuple[Any, ...], int] = {}

    def acquire(self, api: Api, info: ResourceInfo, **scope: Unpack[WatchScope]) -> Reflector:
        """The started reflector of ``info`` in ``scope`` (created on first use, shared
        after), one more user counted; give it back with :meth:`release`. ``scope``:
        :class:`~reconcile_kit.runtime.reflector.Reflector`'s arguments of the same names
        (``transform`` defaults to dropping managedFields, as there)."""
        scope.setdefault("transform", drop_managed_fields)
        namespace = scope.get("namespace")
        key = (
            id(api),
            info.api_version,
            info.plural,
            namespace if info.namespaced else None,
            scope.get("label_selector") or "",
            scope.get("field_selector") or "",
            scope["transform"],
        )
        reflector = self._reflectors.get(key)
        if reflector is None:
            reflector = Reflector(api, info, **scope)
            reflector.cluster = self.cluster
            self._reflectors[key] = reflector
        self._users[key] = self._users.get(key, 0) + 1
        reflector.start()
        return reflector

    async def release(self, reflector: Reflector) -> None:
        """One user fewer of ``reflector``; the last one stops it and drops its cache."""
        for key, known in list(self._reflectors.items()):
            if known is reflector:
                self._users[key] -= 1
                if self._users[key] <= 0:
                    del self._reflectors[key], self._users[key]
                    await reflector.stop()
                return

    def __len__(self) -> int:
        return len(self._reflectors)
