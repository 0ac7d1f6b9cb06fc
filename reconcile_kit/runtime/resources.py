"""What the runtime knows of one kind: its API version, plural, scope and kr8s class.

Kinds are given as kr8s classes or as strings and resolved through API discovery, as
kubectl resolves ``kubectl get widgets.example.com``.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeAlias, cast

import kr8s
from kr8s.asyncio import Api
from kr8s.asyncio.objects import APIObject

from ..client import discovery
from ..client.connect import api_error_of
from ..client.errors import APIError
from ..client.request import Route, Target
from ..meta.objects import ObjectRef
from ..patch.snapshot import build_object
from .typed import is_model_class

if TYPE_CHECKING:
    from ..typed.resource import CustomResource

__all__ = ["KindLike", "ResourceInfo", "info_from_class", "info_of_model", "resolve_kind"]

KindLike: TypeAlias = "str | type[APIObject] | type[CustomResource]"
"""A kind as controllers, caches and webhooks take it: a kr8s APIObject class, a typed
model class (a :class:`~reconcile_kit.typed.CustomResource` subclass), or a string the
API server resolves (``"ConfigMap"``, ``"Widget.example.com"``, ``"widgets"``,
``"Widget.example.com/v1"``)."""


@dataclass(frozen=True)
class ResourceInfo:
    """What the runtime needs to list, watch and build objects of one kind.

    Attributes:
        api_version: ``v1``, ``apps/v1``, ``example.com/v1``.
        kind: ``Deployment``.
        plural: the resource name in URLs (``deployments``).
        namespaced: whether objects live in namespaces.
        cls: the kr8s APIObject class used to hand objects to reconcilers.
        model: the typed model class of the kind, when it was given as one (a
            :class:`~reconcile_kit.typed.CustomResource` subclass); None otherwise.
    """

    api_version: str
    kind: str
    plural: str
    namespaced: bool
    cls: type[APIObject]
    model: type[CustomResource] | None = None

    @cached_property
    def group(self) -> str:
        """The API group (``""`` for the core group)."""
        return self.api_version.rpartition("/")[0]

    @property
    def version(self) -> str:
        """The version within the group (``v1``)."""
        return self.api_version.rpartition("/")[2]

    @cached_property
    def ref_kind(self) -> str:
        """The kind as ObjectRefs name it: ``Kind`` for the core group, ``Kind.group`` else."""
        return f"{self.kind}.{self.group}" if self.group else self.kind

    def route(self, namespace: str | None, name: str) -> Route:
        """The :func:`~reconcile_kit.client.request.send` arguments addressing the object
        ``name`` of this kind (``namespace`` ignored when the kind is cluster-scoped)."""
        where = namespace if self.namespaced else None
        url, target = f"{self.plural}/{name}", Target(self.ref_kind, where, name)
        return Route(version=self.api_version, namespace=where, url=url, target=target)

    def ref(self, raw: MutableMapping[str, Any] | dict[str, Any]) -> ObjectRef:
        """The ObjectRef of ``raw``, an object of this kind."""
        meta = raw.get("metadata") or {}  # metadata_of, inline: a ref is taken per event
        return ObjectRef(self.ref_kind, meta.get("namespace") or "", meta.get("name", ""))

    def build(self, raw: dict[str, Any], api: Api | None) -> APIObject:
        """A kr8s object of this kind around ``raw``, shared (never mutated) through a
        copy-on-access :class:`~reconcile_kit.patch.snapshot.LazyBox`."""
        obj: APIObject = build_object(self.cls, raw, api)
        return obj


def info_from_class(cls: type[APIObject]) -> ResourceInfo:
    """ResourceInfo of a kr8s APIObject class (``kr8s.asyncio.objects.Deployment``...)."""
    return ResourceInfo(cls.version, cls.kind, cls.endpoint, bool(cls.namespaced), cls)


def info_of_model(model: type[CustomResource]) -> ResourceInfo:
    """ResourceInfo of a typed model class (its kr8s class, and the model itself)."""
    declared = model.resource
    return ResourceInfo(
        declared.api_version,
        declared.kind,
        declared.plural,
        declared.scope == "Namespaced",
        model.kr8s_class(),
        model,
    )


async def resolve_kind(api: Api, kind: KindLike) -> ResourceInfo:
    """Resolve a kr8s class, a typed model class (its kr8s class) or a kind string
    (``Deployment``, ``Widget.example.com``, ``widgets``, ``Widget.example.com/v1``; through
    API discovery, as kubectl resolves ``kubectl get widgets.example.com``).

    Raises:
        ValueError: the API server does not serve the kind (named).
        APIError: the discovery request failed (kr8s's error mapped).
    """
    if is_model_class(kind):
        return info_of_model(kind)
    if not isinstance(kind, str):
        return info_from_class(cast("type[APIObject]", kind))
    name, _, version = kind.partition("/")
    base, _, group = name.partition(".")
    found = await _in_group(api, base, group, version) if group else None
    if found is not None:
        return found
    for resource in await _api_resources(api):
        gv = resource["version"]
        if group and gv.rpartition("/")[0] != group:
            continue
        if version and gv.rpartition("/")[2] != version:
            continue
        if _serves(resource, base):
            return _info(gv, resource)
    raise ValueError(f"kind {kind!r} is not served by the API server")


async def _api_resources(api: Api) -> list[dict[str, Any]]:
    """kr8s's full discovery (``api.api_resources()``), its request errors as APIError."""
    try:
        return cast("list[dict[str, Any]]", await api.api_resources())
    except (kr8s.ServerError, kr8s.APITimeoutError) as error:
        raise api_error_of(error, method="GET", path="/apis") from error


async def _in_group(api: Api, base: str, group: str, version: str) -> ResourceInfo | None:
    """``base`` (kind, plural or singular name) in ``group`` at ``version`` (default: the
    group's preferred version), from that group's discovery alone: two GETs instead of
    every group's (about 25 on kube-apiserver 1.32). None when not found there: the full
    discovery decides."""
    try:
        version = version or await discovery.preferred_version(api, group) or ""
        resources = await discovery.group_resources(api, f"{group}/{version}") if version else []
    except APIError:
        return None
    for resource in resources:
        if _serves(resource, base):
            return _info(f"{group}/{version}", resource)
    return None


def _serves(resource: Mapping[str, Any], base: str) -> bool:
    """Whether discovery entry ``resource`` is ``base`` (its kind, plural or singular name),
    not one of its subresources (``widgets/status`` carries the kind too)."""
    names = (resource["kind"], resource["name"], resource.get("singularName"))
    return "/" not in resource["name"] and base in names


def _info(gv: str, resource: Mapping[str, Any]) -> ResourceInfo:
    """The ResourceInfo of a discovery entry (``resource``) served at ``gv``."""
    from kr8s.asyncio.objects import get_class, new_class

    try:
        cls = get_class(resource["kind"], gv)
    except KeyError:
        cls = new_class(
            resource["kind"], gv, namespaced=resource["namespaced"], plural=resource["name"]
        )
    return ResourceInfo(gv, resource["kind"], resource["name"], bool(resource["namespaced"]), cls)
