"""Controllers a real control plane runs beside the apiserver, for the embedded one.

- CRD finalization (apiextensions-apiserver's finalizing controller, always on): deleting a
  CRD deletes its custom resources, then the CRD.
- Namespace controller (kube-controller-manager): a Terminating namespace is emptied,
  then finalized.
- Garbage collector (kube-controller-manager): dependents whose owners are all gone are
  deleted; ``orphan`` and ``foregroundDeletion`` finalizers are honoured.

- ClusterRole aggregation (kube-controller-manager, :mod:`.aggregation`): aggregated
  ClusterRoles get the rules of the ClusterRoles they select.

The namespace controller and garbage collector run only with ``garbage_collection=True``
(envtest runs neither), the aggregation only with ``cluster_role_aggregation=True``.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from .aggregation import CLUSTER_ROLES_KEY, aggregate
from .cluster import CRD_FINALIZER, CRD_KEY, Cluster, clone
from .errors import APIError
from .store import ADDED, DELETED, Event, Obj

NAMESPACE_KEY = "/namespaces"
log = logging.getLogger(__name__)

Ident = tuple[str, str, str]  # storage key, namespace, name


def _ident(key: str, obj: Obj) -> Ident:
    meta = obj["metadata"]
    return (key, meta.get("namespace") or "", meta["name"])


class ControlLoops:
    """Event-driven background work of the embedded control plane."""

    def __init__(
        self, cluster: Cluster, garbage_collection: bool, cluster_role_aggregation: bool = False
    ) -> None:
        self.cluster = cluster
        self.gc = garbage_collection
        self.aggregation = cluster_role_aggregation
        self._live: dict[str, Ident] = {}
        self._dependents: dict[str, set[Ident]] = {}
        self._pending: dict[tuple[str, Any], None] = {}
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._task: asyncio.Task[None] | None = None
        for key in cluster.store.storage_keys():
            for obj in cluster.store.items(key):
                self._index(key, obj, None)
                self._react(Event(0, key, ADDED, obj, None))
        self._unsubscribe = cluster.store.subscribe(self._on_event)

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())
        if self._pending:
            self._wake.set()

    async def stop(self) -> None:
        self._unsubscribe()
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    async def settled(self) -> None:
        """Wait until no background work is pending."""
        await asyncio.sleep(0)
        await self._idle.wait()

    # --- indexes and triggers --------------------------------------------------------------

    def _index(self, key: str, obj: Obj, old: Obj | None) -> None:
        ident = _ident(key, obj)
        if old is not None:
            for ref in old["metadata"].get("ownerReferences") or []:
                self._dependents.get(ref.get("uid", ""), set()).discard(ident)
        self._live[obj["metadata"]["uid"]] = ident
        for ref in obj["metadata"].get("ownerReferences") or []:
            self._dependents.setdefault(ref.get("uid", ""), set()).add(ident)

    def _unindex(self, key: str, obj: Obj) -> None:
        ident = _ident(key, obj)
        self._live.pop(obj["metadata"]["uid"], None)
        for ref in obj["metadata"].get("ownerReferences") or []:
            self._dependents.get(ref.get("uid", ""), set()).discard(ident)

    def _on_event(self, event: Event) -> None:
        if event.type == DELETED:
            self._unindex(event.key, event.old or event.obj)
        else:
            self._index(event.key, event.obj, event.old)
        self._react(event)
        if self._pending:
            self._idle.clear()
            self._wake.set()

    def _push(self, item: tuple[str, Any]) -> None:
        self._pending[item] = None

    def _react(self, event: Event) -> None:
        obj, meta = event.obj, event.obj["metadata"]
        deleting = bool(meta.get("deletionTimestamp"))
        if event.key == CRD_KEY and deleting:
            self._push(("crd", meta["name"]))
        crd = self.cluster.registry.storage_type(event.key)
        if event.type == DELETED and crd is not None and crd.crd_name:
            self._push(("crd", crd.crd_name))
        if self.aggregation and event.key == CLUSTER_ROLES_KEY:
            self._push(("aggregate", ""))
        if not self.gc:
            return
        if event.key == NAMESPACE_KEY and deleting:
            self._push(("namespace", meta["name"]))
        if event.type == DELETED and meta.get("namespace"):
            self._push(("namespace", meta["namespace"]))
        if event.type == DELETED:
            for dependent in self._dependents.get(meta["uid"], ()):
                self._push(("dependent", dependent))
            for ref in meta.get("ownerReferences") or []:
                self._push(("owner", ref.get("uid", "")))
        else:
            if meta.get("ownerReferences"):
                self._push(("dependent", _ident(event.key, obj)))
            if deleting and {"orphan", "foregroundDeletion"} & set(meta.get("finalizers") or []):
                self._push(("owner", meta["uid"]))

    # --- the loop --------------------------------------------------------------------------

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._pending:
                item = next(iter(self._pending))
                del self._pending[item]
                try:
                    self._process(item)
                except APIError as err:
                    log.debug("control loop %s: %s", item, err.message)
                await asyncio.sleep(0)
            self._idle.set()

    def _process(self, item: tuple[str, Any]) -> None:
        kind, arg = item
        if kind == "crd":
            self._finalize_crd(arg)
        elif kind == "namespace":
            self._finalize_namespace(arg)
        elif kind == "dependent":
            self._collect_dependent(arg)
        elif kind == "owner":
            self._finalize_owner(arg)
        elif kind == "aggregate":
            aggregate(self.cluster)

    def _finalize_crd(self, name: str) -> None:
        store = self.cluster.store
        definition = store.get(CRD_KEY, "", name)
        if definition is None or not definition["metadata"].get("deletionTimestamp"):
            return
        key = f"{definition['spec']['group']}/{definition['spec']['names']['plural']}"
        remaining = store.items(key)
        for obj in remaining:
            if not obj["metadata"].get("deletionTimestamp"):
                self.cluster.remove(
                    key, obj["metadata"].get("namespace") or "", obj["metadata"]["name"]
                )
        if store.count(key) == 0:
            self._drop_finalizer(CRD_KEY, definition, CRD_FINALIZER)

    def _finalize_namespace(self, name: str) -> None:
        store = self.cluster.store
        namespace = store.get(NAMESPACE_KEY, "", name)
        if namespace is None or not namespace["metadata"].get("deletionTimestamp"):
            return
        for key in store.storage_keys():
            for obj in store.items(key, name):
                if not obj["metadata"].get("deletionTimestamp"):
                    self.cluster.remove(key, name, obj["metadata"]["name"])
        if any(store.items(key, name) for key in store.storage_keys()):
            return
        if not (namespace.get("spec") or {}).get("finalizers"):
            return
        finalized = clone(namespace)
        finalized["spec"]["finalizers"] = [
            f for f in finalized["spec"]["finalizers"] if f != "kubernetes"
        ]
        self.cluster.replace(NAMESPACE_KEY, finalized, "finalize")

    def _collect_dependent(self, ident: Ident) -> None:
        key, namespace, name = ident
        obj = self.cluster.store.get(key, namespace, name)
        refs = (obj or {}).get("metadata", {}).get("ownerReferences") or []
        if obj is None or not refs:
            return
        dangling = [r for r in refs if r.get("uid") not in self._live]
        if not dangling:
            return
        if len(dangling) == len(refs):
            if not obj["metadata"].get("deletionTimestamp"):
                self.cluster.remove(key, namespace, name)
            return
        updated = clone(obj)
        updated["metadata"]["ownerReferences"] = [r for r in refs if r not in dangling]
        self.cluster.replace(key, updated)

    def _finalize_owner(self, uid: str) -> None:
        ident = self._live.get(uid)
        owner = self.cluster.store.get(*ident) if ident else None
        if owner is None or ident is None:
            return
        finalizers = owner["metadata"].get("finalizers") or []
        dependents = [d for d in self._dependents.get(uid, set()) if self.cluster.store.get(*d)]
        if "orphan" in finalizers:
            for dependent in dependents:
                self._drop_owner_ref(dependent, uid)
            self._drop_finalizer(ident[0], owner, "orphan")
        elif "foregroundDeletion" in finalizers:
            blocking = 0
            for dependent in dependents:
                obj = self.cluster.store.get(*dependent)
                assert obj is not None
                if not obj["metadata"].get("deletionTimestamp"):
                    self.cluster.remove(*dependent, policy="Foreground")
                blocking += 1
            if not blocking:
                self._drop_finalizer(ident[0], owner, "foregroundDeletion")

    def _drop_owner_ref(self, ident: Ident, uid: str) -> None:
        obj = self.cluster.store.get(*ident)
        if obj is None:
            return
        updated = clone(obj)
        refs = [r for r in updated["metadata"].get("ownerReferences") or [] if r.get("uid") != uid]
        updated["metadata"]["ownerReferences"] = refs
        if not refs:
            del updated["metadata"]["ownerReferences"]
        self.cluster.replace(ident[0], updated)

    def _drop_finalizer(self, key: str, obj: Obj, finalizer: str) -> None:
        updated = clone(obj)
        updated["metadata"]["finalizers"] = [
            f for f in updated["metadata"].get("finalizers") or [] if f != finalizer
        ]
        self.cluster.replace(key, updated)
