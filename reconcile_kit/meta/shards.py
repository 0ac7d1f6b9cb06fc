"""The labels of active-active sharding: which replica of a ring owns an object.

The design is timebertt/kubernetes-controller-sharding's: a ring of replicas (one
membership Lease each) shares the objects of its sharded controllers; the ring's sharder
records each object's owner in the label ``shard.reconcile-kit.io/<ring>: <member>`` and
each replica watches only the objects labelled with its own name. Moving an object away
from a live member first adds ``drain.shard.reconcile-kit.io/<ring>``; the owner
acknowledges by removing both labels, after which the sharder labels it for the new owner.

Children written through the toolkit carry their controller's shard labels
(:func:`copy_shard_labels`, called by
:func:`~reconcile_kit.meta.owners.set_controller_reference`), so a sharded controller's
``owns()`` watch, filtered by the same label, sees its children.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .objects import ObjectLike, accepts_models, metadata_of, raw_of, view_of

__all__ = [
    "DRAIN_LABEL_PREFIX",
    "MEMBER_LABEL",
    "RING_LABEL",
    "SHARD_LABEL_PREFIX",
    "copy_shard_labels",
    "drain_label",
    "shard_label",
    "shard_of",
]

SHARD_LABEL_PREFIX = "shard.reconcile-kit.io/"
"""``shard.reconcile-kit.io/<ring>``: the member of ``<ring>`` that owns the object."""
DRAIN_LABEL_PREFIX = "drain.shard.reconcile-kit.io/"
"""``drain.shard.reconcile-kit.io/<ring>``: the object is moving away from its owner."""
RING_LABEL = "reconcile-kit.io/ring"
"""On a membership Lease: the ring it belongs to."""
MEMBER_LABEL = "reconcile-kit.io/member"
"""On a membership Lease: the member it belongs to."""


def shard_label(ring: str) -> str:
    """The label key naming ``ring``'s owner of an object."""
    return SHARD_LABEL_PREFIX + ring


def drain_label(ring: str) -> str:
    """The label key marking an object as draining away from its owner in ``ring``."""
    return DRAIN_LABEL_PREFIX + ring


def shard_of(obj: ObjectLike | Mapping[str, Any], ring: str) -> str | None:
    """The member of ``ring`` that ``obj`` (a kr8s object, a dict or a typed model) is
    assigned to, or None when it is unassigned."""
    raw = obj if isinstance(obj, Mapping) else view_of(obj)
    labels = metadata_of(raw).get("labels") or {}
    value = labels.get(shard_label(ring))
    return str(value) if value else None


@accepts_models
def copy_shard_labels(owner: ObjectLike, child: ObjectLike) -> None:
    """Give ``child`` the shard labels of ``owner`` (every ``shard.reconcile-kit.io/<ring>``
    label), so that the replica owning ``owner`` also sees ``child`` in its filtered watch.

    Labels of rings ``owner`` is not assigned in are left on ``child`` as they are; drain
    labels are not copied. Both arguments are kr8s objects or dicts; ``child`` is changed
    in place, and only when ``owner`` carries a shard label.
    """
    owner_labels = metadata_of(raw_of(owner)).get("labels") or {}
    shards = {
        key: value for key, value in owner_labels.items() if key.startswith(SHARD_LABEL_PREFIX)
    }
    if not shards:
        return
    raw = raw_of(child)
    if raw.get("metadata") is None:
        raw["metadata"] = {}
    metadata = raw["metadata"]  # read back: a kr8s Box stores a copy of what it is given
    metadata["labels"] = {**(metadata.get("labels") or {}), **shards}
