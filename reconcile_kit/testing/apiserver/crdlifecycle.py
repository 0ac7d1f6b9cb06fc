"""CustomResourceDefinitions in the embedded API server's storage: their status as
kube-apiserver's naming and establishing controllers set it (at once, or after
``crd_establish_delay``), their resources registered and removed, and no new custom
resources while their CRD is terminating (k8s.io/apiextensions-apiserver pkg/controller
establish and status, pkg/registry/customresource).
"""

from __future__ import annotations

import asyncio

from . import crd as crds
from . import managedfields as mf
from .crd import CRD_KEY
from .errors import APIError
from .reads import ClusterReads
from .resources import ResourceType
from .store import Obj
from .writes import clone, without_managed_fields


class CRDLifecycle(ClusterReads):
    """:class:`~.reads.ClusterReads` and the lifecycle of CRDs: the base of the writes."""

    def _prepare_crd(self, obj: Obj, old: Obj | None, established: bool = True) -> None:
        crds.crd_defaults(obj)
        if old is None and not established:
            obj["status"] = crds.pending_crd_status(obj)  # the controllers have not run yet
            return
        if obj["metadata"].get("deletionTimestamp"):
            return
        if old is not None and not established:
            return
        obj["status"] = crds.crd_status(obj, old)

    def _record_status_writer(self, rt: ResourceType, obj: Obj) -> None:
        """The managedFields entry of the controllers' status write (manager
        ``kube-apiserver``, subresource ``status``) on a CRD they have just established:
        what they changed from the pending status."""
        if not (obj.get("status") or {}).get("conditions"):
            return
        before = {**obj, "status": crds.pending_crd_status(obj)}
        write = mf.Write(
            mf.object_type(rt),
            "kube-apiserver",
            rt.api_version,
            "status",
            mf.ignored_paths(rt, "status", obj),
        )
        managers = mf.decode_managers(obj) or {}
        updated = write.update(
            without_managed_fields(before), without_managed_fields(obj), managers
        )
        obj["metadata"]["managedFields"] = mf.encode_managers(updated)

    def _establish_later(self) -> bool:
        if self.crd_establish_delay <= 0:
            return False
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return False
        return True

    def _schedule_establish(self, name: str) -> None:
        loop = asyncio.get_running_loop()
        loop.call_later(self.crd_establish_delay, self._establish, name)

    def _establish(self, name: str) -> None:
        """What kube-apiserver's naming and establishing controllers do to a new CRD:
        NamesAccepted and Established, its resources served."""
        crd = self.store.get(CRD_KEY, "", name)
        if crd is None or (crd.get("status") or {}).get("conditions") is not None:
            return
        if crd["metadata"].get("deletionTimestamp"):
            return
        established = clone(crd)
        self._prepare_crd(established, crd)
        rt = self.registry.lookup("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        if rt is not None:
            self._record_status_writer(rt, established)
        stored = self.store.update(CRD_KEY, established)
        self._register_crd(stored)

    def _register_crd(self, definition: Obj) -> None:
        self.registry.remove_crd(definition["metadata"]["name"])
        preferred = crds.preferred_version(definition)
        for rt in crds.resource_types(definition):
            self.registry.add(rt, preferred=rt.version == preferred)

    def _check_crd_active(self, rt: ResourceType) -> None:
        if rt.crd_name is None:
            return
        definition = self.store.get(CRD_KEY, "", rt.crd_name)
        if definition is not None and definition["metadata"].get("deletionTimestamp"):
            raise APIError(
                405,
                "MethodNotAllowed",
                "create not allowed while custom resource definition is terminating",
            )

    def _after_delete(self, rt: ResourceType, old: Obj) -> None:
        if rt.storage_key == CRD_KEY:
            self.registry.remove_crd(old["metadata"]["name"])
            for callback in self.on_crd_removed:
                callback(crds.storage_key_of(old))
