"""The context a reconcile gets: what triggered it, the cache, and write helpers.

``ctx.get`` and ``ctx.list`` read the controller's caches (read-only dicts, no request);
``ctx.apply`` creates or patches a child; ``ctx.patch_status`` / ``ctx.update_status``
write the status subresource.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import orjson

from ..client import discovery
from ..client.contenttypes import MERGE_PATCH
from ..client.request import Target, send
from ..meta.objects import ObjectRef, raw_of
from ..patch.mergepatch import apply_merge_patch, create_merge_patch
from ..patch.snapshot import set_raw
from .sources import CacheView
from .store import Obj, Store

__all__ = ["Context"]

_SERVER_FIELDS = (
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "managedFields",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
)


@dataclass
class Context:
    """Handed to every reconcile.

    Attributes:
        controller_name: the running controller's name.
        cache: read-only view of the controller's caches (primary, owned, watched kinds).
        api: its kr8s Api.
        key: the ObjectRef being reconciled.
        attempt: 1 for a first try, n for the n-th try after failures.
        reasons: why this run happened since the key's previous run (see
            :class:`~reconcile_kit.runtime.controller.ReconcileReason`).
        store: the primary kind's cache.
        data: the ``data`` object given to ``run`` (or ``Manager.add``).
        log: a logger adapter carrying the controller name, key and attempt.
        recorder: the controller's EventRecorder (``ctx.recorder.event(obj, type, reason,
            message)``): the manager's in a manager, else the controller's own.
    """

    controller_name: str
    cache: CacheView
    api: Any
    key: ObjectRef
    attempt: int
    reasons: frozenset[str]
    store: Store
    data: Any
    log: logging.LoggerAdapter[logging.Logger]
    recorder: Any = None

    # --- reading the caches ----------------------------------------------------------------

    def _store_for(self, kind: Any) -> Store:
        return self.cache.store_for(kind)

    def get(self, name: str, namespace: str | None = None, kind: Any = None) -> Obj | None:
        """A cached object (read-only dict) of the primary kind or of an owned/watched
        ``kind``; ``namespace`` defaults to the reconciled object's. KeyError for a kind the
        controller does not watch."""
        ns = self.key.namespace if namespace is None else namespace
        return self._store_for(kind).get(ns, name)

    def list(self, namespace: str | None = None, kind: Any = None) -> list[Obj]:
        """Cached objects (read-only dicts), optionally of one namespace."""
        return self._store_for(kind).list(namespace)

    # --- writing ---------------------------------------------------------------------------

    async def apply(self, child: Any) -> Any:
        """Create ``child`` (a kr8s object) or merge-patch the fields it sets onto the
        existing one. When the controller watches the child's kind (``owns``) and its cache
        already holds those fields, nothing is sent; otherwise one GET, then a POST or a
        PATCH if needed. Returns the child holding the latest known state.

        Raises :class:`~reconcile_kit.client.errors.APIError` (InvalidError, ForbiddenError,
        ConflictError...) when the server refuses, naming the child.
        """
        desired = _desired(raw_of(child))
        cached = self._cached(child)
        if cached is not None and not create_merge_patch(_restricted(cached, desired), desired)[0]:
            set_raw(child, cached)  # the cache already holds it: no request at all
            return child
        where = _where(child)
        url = f"{child.endpoint}/{child.name}"
        reply = await send(child.api, "GET", url=url, accept=(404,), **where)
        if reply.status == 404:
            created = await send(child.api, "POST", url=child.endpoint, body=desired, **where)
            set_raw(child, created.json())
            return child
        current = reply.json()
        patch, _ = create_merge_patch(_restricted(current, desired), desired)
        if patch and apply_merge_patch(current, patch) != current:
            patched = await send(
                child.api,
                "PATCH",
                url=url,
                body=patch,
                content_type=MERGE_PATCH,
                **where,
            )
            current = patched.json()
        set_raw(child, current)
        return child

    def _cached(self, child: Any) -> Obj | None:
        """The child as the controller's cache of its kind holds it (None: not watched)."""
        try:
            store = self._store_for(type(child))
        except KeyError:
            return None
        return store.get(child.namespace if child.namespaced else "", child.name)

    async def patch_status(self, obj: Any, status: dict[str, Any]) -> None:
        """Merge-patch ``status`` into ``obj``'s status (``/status`` where the kind has it).
        Raises APIError when refused."""
        separate = await discovery.has_status_subresource(obj.api, obj.version, obj.endpoint)
        url = f"{obj.endpoint}/{obj.name}" + ("/status" if separate else "")
        reply = await send(
            obj.api,
            "PATCH",
            url=url,
            body={"status": status},
            content_type=MERGE_PATCH,
            **_where(obj),
        )
        set_raw(obj, reply.json())

    async def update_status(self, obj: Any) -> None:
        """PUT ``obj`` to its ``/status`` with its resourceVersion (ConflictError on 409,
        another APIError when refused)."""
        reply = await send(
            obj.api,
            "PUT",
            url=f"{obj.endpoint}/{obj.name}/status",
            body=raw_of(obj),
            retry=False,  # a 409 means the object changed: the reconcile decides again
            **_where(obj),
        )
        set_raw(obj, reply.json())


def _where(obj: Any) -> dict[str, Any]:
    """``send`` arguments locating ``obj`` (a kr8s object): version, namespace, target."""
    namespace = obj.namespace if obj.namespaced else None
    return {
        "version": obj.version,
        "namespace": namespace,
        "target": Target.of(obj),
    }


def _desired(raw: Any) -> dict[str, Any]:
    desired: dict[str, Any] = orjson.loads(orjson.dumps(raw))
    meta = desired.get("metadata") or {}
    for key in _SERVER_FIELDS:
        meta.pop(key, None)
    desired.pop("status", None)
    return desired


def _restricted(current: Any, desired: dict[str, Any]) -> dict[str, Any]:
    """The parts of ``current`` that ``desired`` sets (keys it leaves out are not touched)."""
    result: dict[str, Any] = {}
    for key, value in desired.items():
        if key not in current:
            continue
        if isinstance(value, dict) and isinstance(current[key], dict):
            result[key] = _restricted(current[key], value)
        else:
            result[key] = current[key]
    return result
