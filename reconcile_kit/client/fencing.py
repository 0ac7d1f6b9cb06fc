"""Write fences: a reconcile writes only while its replica still holds the right to.

A controller run under leader election or in a sharded ring sets a :class:`WriteFence`
around each reconcile (:func:`fenced`, a context variable, so tasks the reconcile starts
carry it too). :func:`~reconcile_kit.client.request.send` consults it before every write
(POST, PUT, PATCH, DELETE):

- **the Lease, by this process's own monotonic clock**: once the Lease that entitles the
  replica (leadership, or its ring membership) was not renewed within its renew deadline,
  every write is refused before it is sent (:class:`~.errors.LeaseExpiredError`). Other
  replicas take over only once they saw the Lease unrenewed for a whole Lease duration,
  so a write checked in time reaches the server before they act unless it spends more
  than ``lease_duration - renew_deadline`` seconds between the check and the server
  (a process paused right there, a request stuck in the network). No Kubernetes
  primitive closes that window for writes to other objects (children, external systems):
  the server cannot know that the writer lost a Lease. client-go's leader election has
  the same window and no check at all.
- **the reconciled object, at the server** (sharded controllers): a write to the object
  being reconciled carries a precondition the API server checks atomically: the
  ``resourceVersion`` this reconcile last saw of it while it carried this replica's shard
  label (merge, strategic-merge and apply patches, PUT, DELETE), or for a JSON patch a
  leading ``test`` of the shard label. When the ring's sharder relabels the object, the
  stale write gets 409 (or 422 for a failed ``test``) and nothing lands. Any answer about
  the object showing another owner marks the fence lost: later writes to it are refused
  with :class:`~.errors.OwnershipLostError` before they are sent.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable
from typing import Any

import orjson

from .contenttypes import APPLY_PATCH, JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH
from .errors import LeaseExpiredError, OwnershipLostError

__all__ = ["WriteFence", "current_fence", "fenced"]

WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_current: contextvars.ContextVar[WriteFence | None] = contextvars.ContextVar(
    "reconcile_kit_write_fence", default=None
)


class WriteFence:
    """What a reconcile may write.

    Args:
        lease: ``() -> bool``: whether the replica's Lease is still valid by its own clock
            (e.g. :meth:`~reconcile_kit.manager.leaderelection.LeaderElection.holds_lease`);
            None: no Lease guards these writes.
        holder: what the Lease stands for, for messages (``"leadership of cmgen"``).
        kind: the reconciled object's kind as its ``kind`` field (``Deployment``, no
            group), for a sharded controller; else None.
        namespace: the reconciled object's namespace (None: cluster-scoped, or unfenced).
        name: the reconciled object's name (None: no object is fenced).
        label: the shard label's key.
        member: this replica's value of the shard label.
        resource_version: the resourceVersion of the copy the reconcile started from (it
            carries the label ``label: member``).
    """

    def __init__(
        self,
        lease: Callable[[], bool] | None = None,
        holder: str = "",
        *,
        kind: str | None = None,
        namespace: str | None = None,
        name: str | None = None,
        label: str | None = None,
        member: str | None = None,
        resource_version: str | None = None,
    ) -> None:
        self.lost = False
        self.lease = lease
        self.holder = holder
        self.owner: str | None = member  # the owner last seen at the server
        self.kind = kind
        self.namespace = namespace or None
        self.name = name
        self.label = label
        self.member = member
        self.resource_version = resource_version

    def guards(self, kind: str | None, namespace: str | None, name: str | None) -> bool:
        """Whether a request about ``kind namespace/name`` is about the fenced object."""
        return (
            self.label is not None
            and name == self.name
            and (namespace or None) == self.namespace
            and (kind or "").split(".", 1)[0] == self.kind
        )

    def check(self, method: str, kind: str | None, namespace: str | None, name: str | None) -> None:
        """Raise when a ``method`` request about that object must not be sent.

        Raises:
            LeaseExpiredError: the Lease was not renewed within its renew deadline.
            OwnershipLostError: a write to the fenced object after another owner was seen.
        """
        if method not in WRITES:
            return
        if self.lease is not None and not self.lease():
            raise LeaseExpiredError(
                f"{method} refused before sending: the {self.holder or 'Lease'} was not"
                " renewed within its renew deadline",
                kind=kind,
                namespace=namespace,
                name=name,
            )
        if self.lost and self.guards(kind, namespace, name):
            raise self.lost_error()

    def lost_error(self) -> OwnershipLostError:
        """The error of a write to the object after it moved to ``owner``."""
        return OwnershipLostError(
            f"not this replica's ({self.member}) any more: labelled"
            f" {self.label}={self.owner or '<none>'} at the server; the write was not sent",
            kind=self.kind,
            namespace=self.namespace,
            name=self.name,
            owner=self.owner,
        )

    def precondition(self, method: str, content_type: str, body: object) -> object:
        """``body`` of a write to the fenced object with this fence's precondition added
        (bytes stay bytes; a body that already carries one is left as it is)."""
        if method not in WRITES or method == "POST":
            return body
        raw = isinstance(body, bytes)
        document: Any = orjson.loads(body) if isinstance(body, bytes) and body else body
        if method == "DELETE":
            document = dict(document or {})
            if not (document.get("preconditions") or {}).get("resourceVersion"):
                document["preconditions"] = {
                    **(document.get("preconditions") or {}),
                    "resourceVersion": self.resource_version,
                }
        elif content_type == JSON_PATCH and isinstance(document, list):
            if not (document and document[0].get("op") == "test"):
                path = "/metadata/labels/" + (self.label or "").replace("~", "~0").replace(
                    "/", "~1"
                )
                document = [{"op": "test", "path": path, "value": self.member}, *document]
        elif isinstance(document, dict) and (
            method == "PUT" or content_type in (MERGE_PATCH, STRATEGIC_MERGE_PATCH, APPLY_PATCH)
        ):
            meta = document.get("metadata") or {}
            if not meta.get("resourceVersion"):
                meta = {**meta, "resourceVersion": self.resource_version}
                document = {**document, "metadata": meta}
        return orjson.dumps(document) if raw else document

    def observe(self, obj: object) -> None:
        """Learn from an answer about the fenced object: its resourceVersion while it still
        carries this replica's label, or that another owner has it."""
        if not isinstance(obj, dict) or obj.get("kind") != self.kind:
            return  # a Status, a subresource's own kind (Scale)
        meta = obj.get("metadata") or {}
        owner = (meta.get("labels") or {}).get(self.label or "")
        self.owner = owner
        if owner != self.member:
            self.lost = True
        elif not self.lost and meta.get("resourceVersion"):
            self.resource_version = str(meta["resourceVersion"])


def current_fence() -> WriteFence | None:
    """The fence of the running reconcile, or None outside a fenced one."""
    return _current.get()


def fenced(fence: WriteFence | None) -> contextlib.AbstractContextManager[WriteFence | None]:
    """Run the block (and the tasks it starts) under ``fence`` (None: unfenced)."""
    return _Fenced(fence)


class _Fenced(contextlib.AbstractContextManager["WriteFence | None"]):
    """:func:`fenced`'s context manager (a class: a generator's costs ~3x as much, once
    per reconcile)."""

    __slots__ = ("_fence", "_token")

    def __init__(self, fence: WriteFence | None) -> None:
        self._fence = fence

    def __enter__(self) -> WriteFence | None:
        self._token = _current.set(self._fence)
        return self._fence

    def __exit__(self, *exc: object) -> None:
        _current.reset(self._token)
