"""Which resources have a status subresource, learned from API discovery and cached.

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

__all__ = ["has_status_subresource", "resource_names"]

MAX_AGE = 300.0

_cache: weakref.WeakKeyDictionary[Any, dict[str, tuple[float, frozenset[str]]]] = (
    weakref.WeakKeyDictionary()
)


def _discovery_path(api_version: str) -> tuple[str, str]:
    return ("/apis", api_version) if "/" in api_version else ("/api", api_version)


async def _fetch(api: Api, api_version: str) -> frozenset[str]:
    base, version = _discovery_path(api_version)
    doc = (await send(api, "GET", version=version, base=base)).json()
    return frozenset(r["name"] for r in doc.get("resources", []))


async def resource_names(api: Api, api_version: str, plural: str) -> frozenset[str]:
    """Resource names (``deployments``, ``deployments/status``...) served at ``api_version``.

    Raises :class:`~reconcile_kit.client.errors.APIError` when discovery fails.
    """
    per_api = _cache.setdefault(api, {})
    cached = per_api.get(api_version)
    if cached is None or plural not in cached[1] or time.monotonic() - cached[0] > MAX_AGE:
        cached = (time.monotonic(), await _fetch(api, api_version))
        per_api[api_version] = cached
    return cached[1]


async def has_status_subresource(api: Api, api_version: str, plural: str) -> bool:
    """Whether ``plural`` at ``api_version`` has a ``/status`` subresource."""
    return f"{plural}/status" in await resource_names(api, api_version, plural)
