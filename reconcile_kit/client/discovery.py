"""API discovery of one group/version: the resources it serves, which have a status
subresource (cached), and a group's preferred version.

The PatchHelper sends status to ``/status`` only where the server has that subresource
(built-in kinds vary; a CRD has it only with ``subresources.status``). Discovery of one
group/version is fetched once per Api and refreshed when a resource is not in it (a CRD
installed later) or the entry is older than ``MAX_AGE`` seconds.
"""

from __future__ import annotations

import time
import weakref
from typing import Any

from kr8s.asyncio import Api

from .request import send

__all__ = ["group_resources", "has_status_subresource", "preferred_version", "resource_names"]

MAX_AGE = 300.0

_cache: weakref.WeakKeyDictionary[Any, dict[str, tuple[float, frozenset[str]]]] = (
    weakref.WeakKeyDictionary()
)


def _discovery_path(api_version: str) -> tuple[str, str]:
    return ("/apis", api_version) if "/" in api_version else ("/api", api_version)


async def group_resources(api: Api, api_version: str) -> list[dict[str, Any]]:
    """The APIResource entries (``name``, ``kind``, ``namespaced``, ``singularName``...)
    served at ``api_version`` (``group/version``, or ``v1`` for the core group): one
    discovery GET, whose names :func:`resource_names` then holds.

    Raises :class:`~reconcile_kit.client.errors.APIError` when discovery fails
    (NotFoundError when the server does not serve that group/version).
    """
    base, version = _discovery_path(api_version)
    resources: list[dict[str, Any]] = (
        (await send(api, "GET", version=version, base=base)).json().get("resources", [])
    )
    names = frozenset(r["name"] for r in resources)
    _cache.setdefault(api, {})[api_version] = (time.monotonic(), names)
    return resources


async def preferred_version(api: Api, group: str) -> str | None:
    """The preferred version of API ``group`` (``apps`` -> ``v1``; a GET of
    ``/apis/<group>``, as kubectl's discovery), or None when the server names none.

    Raises :class:`~reconcile_kit.client.errors.APIError` when discovery fails
    (NotFoundError when the server does not serve the group).
    """
    document = (await send(api, "GET", version=group, base="/apis")).json()
    version: str | None = (document.get("preferredVersion") or {}).get("version")
    return version


async def resource_names(api: Api, api_version: str, plural: str) -> frozenset[str]:
    """Resource names (``deployments``, ``deployments/status``...) served at ``api_version``.

    Raises :class:`~reconcile_kit.client.errors.APIError` when discovery fails.
    """
    cached = _cache.setdefault(api, {}).get(api_version)
    if cached is None or plural not in cached[1] or time.monotonic() - cached[0] > MAX_AGE:
        await group_resources(api, api_version)  # which caches its names
        cached = _cache[api][api_version]
    return cached[1]


async def has_status_subresource(api: Api, api_version: str, plural: str) -> bool:
    """Whether ``plural`` at ``api_version`` has a ``/status`` subresource."""
    return f"{plural}/status" in await resource_names(api, api_version, plural)
