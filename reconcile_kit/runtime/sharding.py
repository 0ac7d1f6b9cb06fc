"""A controller's share of a sharded ring: the label filter of its watches and the drain
acknowledgement (as timebertt/kubernetes-controller-sharding's shard side).

A :class:`~reconcile_kit.manager.Manager` with ``sharding=`` gives each sharded
controller a :class:`ShardFilter` naming the ring and this replica's member name. The
controller then

* watches its primary kind and the kinds it ``owns()`` with the label selector
  ``shard.reconcile-kit.io/<ring>=<member>`` (added to its own ``label_selector``), so its
  caches hold only this replica's share;
* never reconciles an object that carries ``drain.shard.reconcile-kit.io/<ring>``: its
  worker, which the work queue never runs beside a reconcile of the same key, removes
  both labels instead (one merge patch with a resourceVersion precondition). That is the
  acknowledgement the ring's sharder waits for before labelling the object for its new
  owner; the object then leaves this replica's watch, without ``on_delete``. Any other
  object leaving the watch is looked up (GET) before ``on_delete`` runs: it runs only for
  an object that is gone, not for one another replica now owns;
* on a graceful stop of its replica, hands its objects over itself
  (:meth:`~reconcile_kit.runtime.controller.Controller.hand_over`, :class:`Handover`): a
  few at a time, each object is labelled for its new owner (one write per object) while
  no reconcile of it runs, and the others are still reconciled here until their turn.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..client.contenttypes import MERGE_PATCH
from ..client.request import Target, send
from ..meta.objects import ObjectRef
from ..meta.shards import drain_label, shard_label
from .resources import ResourceInfo
from .store import Obj

__all__ = ["Handover", "ShardFilter"]


@dataclass(frozen=True)
class ShardFilter:
    """This replica's share of ``ring``: objects labelled ``shard.reconcile-kit.io/<ring>``
    = ``member``.

    Attributes:
        ring: the ring's name (a label name: at most 63 characters).
        member: this replica's name in the ring (a label value).
    """

    ring: str
    member: str

    @property
    def label(self) -> str:
        """The shard label's key."""
        return shard_label(self.ring)

    @property
    def drain(self) -> str:
        """The drain label's key."""
        return drain_label(self.ring)

    def selector(self, base: str | None = None) -> str:
        """The label selector of this replica's share, after ``base`` (a user's selector)."""
        mine = f"{self.label}={self.member}"
        return f"{base},{mine}" if base else mine

    def draining(self, obj: Obj) -> bool:
        """Whether ``obj`` (a raw object) is marked to move away from its owner."""
        labels = (obj.get("metadata") or {}).get("labels") or {}
        return self.drain in labels

    async def acknowledge(
        self, api: Any, info: ResourceInfo, obj: Obj, *, to: str | None = None
    ) -> Obj:
        """Let go of ``obj``: remove the drain label and set the shard label to ``to`` (a
        member name; None removes it, acknowledging a drain so that the sharder assigns
        the object), conditional on its resourceVersion. Returns the object as written.

        Raises:
            ConflictError: the object changed since ``obj`` was read (its next event
                brings the current state).
            APIError: other refusals (NotFoundError when it is gone).
        """
        meta = obj.get("metadata") or {}
        namespace = meta.get("namespace") if info.namespaced else None
        patch = {
            "metadata": {
                "resourceVersion": meta.get("resourceVersion"),
                "labels": {self.label: to, self.drain: None},
            }
        }
        reply = await send(
            api,
            "PATCH",
            version=info.api_version,
            namespace=namespace,
            url=f"{info.plural}/{meta.get('name', '')}",
            body=patch,
            content_type=MERGE_PATCH,
            target=Target(info.ref_kind, namespace, meta.get("name")),
        )
        result: Obj = reply.json()
        return result


class Handover:
    """One controller's handover of its share on a graceful stop: the keys left to move,
    and those being moved (a reconcile of them runs no more here).

    Args:
        owner: ``ObjectRef -> member name or None``: the new owner of a key.
        keys: the share when the handover starts, moved in this order.
    """

    def __init__(self, owner: Callable[[ObjectRef], str | None], keys: Iterable[ObjectRef]) -> None:
        self.owner = owner
        self.moving: set[ObjectRef] = set()
        self._todo = deque(keys)

    def next(self) -> ObjectRef | None:
        """The next key to move (now counted as moving), or None when all were taken."""
        while self._todo:
            key = self._todo.popleft()
            if key not in self.moving:
                self.moving.add(key)
                return key
        return None

    def target(self, key: ObjectRef) -> str | None:
        """The member to move ``key`` to now, or None when it is not being moved or no
        member takes it (it is then reconciled here again)."""
        if key not in self.moving:
            return None
        to = self.owner(key)
        if to is None:
            self.moving.discard(key)
        return to
