"""The embedded API server's semantics, independent of HTTP.

:class:`Cluster` implements create/get/list/update/patch/delete on raw objects with
kube-apiserver's rules (k8s.io/apiserver pkg/registry/generic/registry/store.go and
pkg/endpoints/handlers): preconditions, no-op writes, the status subresource, graceful
deletion with finalizers, CRD registration and custom resource validation.

It is built by concern, each module on the ones before it: :mod:`.writes` (a write's
options and result), :mod:`.decoding` (body decoding and validation), :mod:`.reads`
(storage state, GET, LIST, the Scale view), :mod:`.crdlifecycle` (CRD status and
registration), :mod:`.admitting` (the admission steps of a write), :mod:`.writing`
(create, update, patch, apply), :mod:`.deletion` (DELETE, finalizers, collections),
:mod:`.scaling` (``/scale`` writes); this module adds the bootstrap objects and the
built-in controllers' writes, and keeps the names other modules import from here.
"""

from __future__ import annotations

from . import bootstrap, errors
from .admission import Steps, run_sync
from .crd import CRD_FINALIZER, CRD_KEY
from .registry import Registry
from .resources import RBAC_GROUP
from .scaling import ScaleWrites
from .store import Obj, Store
from .writes import CONTROLLER_WRITE, Result, WriteOptions, clone

__all__ = [
    "BOOTSTRAP_NAMESPACES",
    "BOOTSTRAP_PRIORITY_CLASSES",
    "CRD_FINALIZER",
    "CRD_KEY",
    "Cluster",
    "Result",
    "Steps",
    "WriteOptions",
    "clone",
]

BOOTSTRAP_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")

BOOTSTRAP_PRIORITY_CLASSES = {
    "system-cluster-critical": (
        2000000000,
        "Used for system critical pods that must run in the cluster, but can be moved to"
        " another node if necessary.",
    ),
    "system-node-critical": (
        2000001000,
        "Used for system critical pods that must not be moved from their current node.",
    ),
}
"""kube-apiserver's bootstrap priority classes (pkg/apis/scheduling SystemPriorityClasses)."""


class Cluster(ScaleWrites):
    """State and semantics of the embedded API server.

    Args:
        store: object storage (with history and optional persistence).
        registry: served resource types; CRDs found in ``store`` are registered again.
        crd_establish_delay: seconds between a CRD's create and its Established condition
            (and its resources being served); 0: at once.
    """

    def __init__(self, store: Store, registry: Registry, crd_establish_delay: float = 0.0) -> None:
        super().__init__(store, registry, crd_establish_delay)
        for stored_crd in store.items(CRD_KEY):
            if (stored_crd.get("status") or {}).get("conditions") is None:
                self._establish(stored_crd["metadata"]["name"])  # stored before it was
            else:
                self._register_crd(stored_crd)
        for ns in BOOTSTRAP_NAMESPACES:
            if store.get("/namespaces", "", ns) is None:
                rt = self._rt("", "namespaces")
                self.create(
                    rt,
                    None,
                    {"metadata": {"name": ns}},
                    WriteOptions(field_manager="kube-apiserver"),
                )
        for name, (value, description) in BOOTSTRAP_PRIORITY_CLASSES.items():
            if store.get("scheduling.k8s.io/priorityclasses", "", name) is None:
                self.create(
                    self._rt("scheduling.k8s.io", "priorityclasses"),
                    None,
                    {"metadata": {"name": name}, "value": value, "description": description},
                    WriteOptions(field_manager="kube-apiserver"),
                )

        for name in bootstrap.CLUSTER_ROLES:
            if store.get(f"{RBAC_GROUP}/clusterroles", "", name) is None:
                self.create(
                    self._rt(RBAC_GROUP, "clusterroles"),
                    None,
                    bootstrap.cluster_role(name),
                    WriteOptions(field_manager="kube-apiserver"),
                )

    def ensure_kubernetes_service(self, port: int) -> None:
        """Create ``default/kubernetes`` for a server on ``port`` unless it exists, as
        kube-apiserver's endpoint reconciler does when it starts."""
        if self.store.get("/services", "default", "kubernetes") is None:
            self.create(
                self._rt("", "services"),
                "default",
                bootstrap.kubernetes_service(port),
                WriteOptions(field_manager="kube-apiserver"),
            )

    def replace(self, storage_key: str, obj: Obj, subresource: str = "") -> Result:
        """Write ``obj`` over the stored object of the same name, without preconditions."""
        rt = self.registry.storage_type(storage_key)
        meta = obj["metadata"]
        old = self.store.get(storage_key, meta.get("namespace") or "", meta["name"])
        if rt is None or old is None:
            raise errors.not_found("", storage_key, meta["name"])
        return run_sync(self._write_update(rt, obj, old, CONTROLLER_WRITE, subresource))

    def remove(
        self, storage_key: str, namespace: str, name: str, policy: str = "Background"
    ) -> None:
        """DELETE an object as a controller would (finalizers respected); gone is fine."""
        rt = self.registry.storage_type(storage_key)
        if rt is None or self.store.get(storage_key, namespace, name) is None:
            return
        self.delete(rt, namespace or None, name, {"propagationPolicy": policy}, CONTROLLER_WRITE)
