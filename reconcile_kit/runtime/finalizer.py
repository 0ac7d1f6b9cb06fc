"""Reconciling with a finalizer: the add / cleanup / remove flow around a reconcile.

As kube-rs's ``kube::runtime::finalizer``: the finalizer is added (and persisted) before the
reconcile acts, so a deletion always waits for ``cleanup``; it is removed only after
``cleanup`` succeeded.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

from kr8s.asyncio.objects import APIObject

from ..client.errors import describe
from ..meta.finalizers import add_finalizer, has_finalizer, remove_finalizer
from ..meta.objects import metadata_of, view_of
from ..patch.helper import PatchHelper, _refuse_mapping
from .action import awaitable_result

if TYPE_CHECKING:
    from ..typed.resource import CustomResource

Finalized = TypeVar("Finalized", bound="APIObject | CustomResource")
Result = TypeVar("Result")

__all__ = ["finalizer"]


async def finalizer(
    obj: Finalized,
    name: str,
    apply: Callable[[Finalized], Awaitable[Result]],
    cleanup: Callable[[Finalized], Awaitable[Result]],
) -> Result | None:
    """Reconcile with a finalizer, as kube-rs's ``finalizer()`` helper.

    While ``obj`` is not being deleted: make sure the finalizer ``name`` is on it (one
    guarded PATCH when missing), then return ``await apply(obj)``. Once it has a
    deletionTimestamp: if the finalizer is on it, ``await cleanup(obj)`` and then remove
    the finalizer (so Kubernetes can delete the object) and return what cleanup returned;
    without the finalizer, return None (nothing left to do). A cleanup that raises leaves
    the finalizer in place, so the controller retries it.

    Args:
        obj: the reconciled object: a kr8s object or a typed model (a
            :class:`~reconcile_kit.typed.CustomResource`, as a typed controller hands it);
            the finalizer is added and removed with a :class:`PatchHelper` on it.
        name: the finalizer, a qualified name such as ``example.com/cleanup``.
        apply: ``async (obj) -> Action | None``, the reconcile proper.
        cleanup: ``async (obj) -> Action | None``, run once the object is being deleted.

    Raises:
        ValueError: ``name`` is not a valid finalizer name (naming the object).
        TypeError: ``obj`` is a dict (a PatchHelper cannot patch it), naming it; ``apply``
            or ``cleanup`` is a plain ``def`` (naming the object, asking for ``async def``).
        APIError: the PATCH adding or removing the finalizer was refused (see
            :class:`PatchHelper`); whatever ``apply`` or ``cleanup`` raise.
    """
    _refuse_mapping(obj, "finalizer")
    deleting = bool(metadata_of(view_of(obj)).get("deletionTimestamp"))
    if deleting:
        if not has_finalizer(obj, name):
            return None
        result: Result = await awaitable_result(cleanup(obj), "finalizer cleanup", _named(obj))
        async with PatchHelper(obj, patch_on_error=False):
            remove_finalizer(obj, name)
        return result
    if not has_finalizer(obj, name):
        async with PatchHelper(obj, patch_on_error=False):
            add_finalizer(obj, name)
    applied: Result = await awaitable_result(apply(obj), "finalizer apply", _named(obj))
    return applied


def _named(obj: APIObject | CustomResource) -> str:
    """``Kind namespace/name`` of ``obj``, for messages."""
    view = view_of(obj)
    meta = metadata_of(view)
    return describe(str(view.get("kind", "?")), meta.get("namespace"), meta.get("name"))
