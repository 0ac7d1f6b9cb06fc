"""Active-active sharding of a manager's controllers over a ring of replicas.

The design is timebertt/kubernetes-controller-sharding's, with Kubernetes itself as the
coordinator (Leases and labels, no other store):

- :mod:`.config`: :class:`Sharding`, the manager's ``sharding=`` setting;
- :mod:`.ring`: rendezvous hashing (Thaler & Ravishankar), pure functions;
- :mod:`.membership`: one membership Lease per replica, and the view of live members;
- :mod:`.assigner`: the ring's sharder (one elected replica) labelling objects;
- the shard side (filtered watches, drain acknowledgement) is
  :mod:`reconcile_kit.runtime.sharding`, the labels :mod:`reconcile_kit.meta.shards`.
"""

from __future__ import annotations

from .config import Sharding

__all__ = ["Sharding"]
