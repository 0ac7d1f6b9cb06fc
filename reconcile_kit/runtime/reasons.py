"""Why a reconcile runs: the reasons a key was queued since its previous run."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["ReconcileReason"]


class ReconcileReason(StrEnum):
    """Why a key was queued; ``ctx.reasons`` holds those since the key's previous run.

    Members are strings (``ReconcileReason.CHILD == "child"``), so they log and compare
    as their values.
    """

    CREATED = "created"
    """The primary object appeared in the cache."""
    UPDATED = "updated"
    """The primary object changed."""
    DELETED = "deleted"
    """The primary object is gone (``on_delete`` runs)."""
    CHILD = "child"
    """An owned child changed (``owns``)."""
    MAPPED = "mapped"
    """A watched object mapped to this key changed (``watches``)."""
    REQUEUE = "requeue"
    """The previous reconcile returned ``Action.requeue``."""
    RETRY = "retry"
    """The previous reconcile failed."""
    HANDOVER = "handover"
    """The replica hands its objects over to other members of its ring (sharding)."""
    RESYNC = "resync"
    """A periodic resync or ``reconcile_all_on`` trigger."""
