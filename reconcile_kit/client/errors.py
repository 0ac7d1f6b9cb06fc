"""Exceptions raised by reconcile_kit.

Every error about an object names it as ``Kind namespace/name`` (or ``Kind name`` for
cluster-scoped objects) so that logs point at the object and field at fault.
"""

from __future__ import annotations

__all__ = [
    "AlreadyOwnedError",
    "ConditionConflictError",
    "ConflictError",
    "ObjectError",
    "OwnerReferenceError",
    "PatchError",
    "ReconcileKitError",
    "describe",
]


def describe(kind: str, namespace: str | None, name: str | None) -> str:
    """``Kind namespace/name`` (``Kind name`` when cluster-scoped) for messages."""
    where = f"{namespace}/{name}" if namespace else f"{name}"
    return f"{kind} {where}"


class ReconcileKitError(Exception):
    """Base class of reconcile_kit's errors."""


class ObjectError(ReconcileKitError):
    """An error about one Kubernetes object.

    Attributes:
        kind: the object's kind (e.g. ``Deployment``).
        namespace: its namespace, or None when cluster-scoped.
        name: its name.
    """

    def __init__(self, message: str, *, kind: str, namespace: str | None, name: str | None) -> None:
        super().__init__(f"{describe(kind, namespace, name)}: {message}")
        self.kind = kind
        self.namespace = namespace
        self.name = name


class ConflictError(ObjectError):
    """The API server answered 409 Conflict: the object changed since it was read."""


class PatchError(ObjectError):
    """A patch could not be computed or was refused (names the field where it can)."""


class ConditionConflictError(PatchError):
    """A condition changed both by this reconcile and on the server since the snapshot."""


class AlreadyOwnedError(ObjectError):
    """The object already has a different controller owner reference."""


class OwnerReferenceError(ObjectError):
    """An owner reference that Kubernetes would not honour (scope or namespace mismatch)."""
