"""DELETE in the embedded API server: preconditions, admission (in storage, after the
preconditions: rest.AdmissionToValidateObjectDeleteFunc), propagation policies as the
garbage collector's finalizers (``orphan``, ``foregroundDeletion``), the CRD cleanup
finalizer, graceful deletion while finalizers remain (``deletionTimestamp``; a namespace
is always marked Terminating first), and DELETE of a collection
(k8s.io/apiserver pkg/registry/generic/registry/store.go Delete, DeleteCollection).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

from ...meta.time import format_time, now_time
from . import crd as crds
from . import errors
from .admission import Mutate, Steps, Validate, options_for, run_sync
from .admission import wanted as admission_wanted
from .crd import CRD_FINALIZER, CRD_KEY
from .errors import APIError
from .resources import ResourceType
from .store import Obj
from .watch import Filter
from .writes import Result, WriteOptions, clone
from .writing import Writes


def _check_delete_preconditions(rt: ResourceType, preconditions: Obj, old: Obj) -> None:
    """DeleteOptions.preconditions, checked by storage.Preconditions.Check, whose Conflict
    names the kind (``ConfigMap``, ``Deployment.apps``) rather than the resource."""
    meta = old["metadata"]
    uid, rv = preconditions.get("uid"), preconditions.get("resourceVersion")
    why = ""
    if uid and uid != meta["uid"]:
        why = (
            f"the UID in the precondition ({uid}) does not match the UID in record "
            f"({meta['uid']}). The object might have been deleted and then recreated"
        )
    elif rv and rv != meta["resourceVersion"]:
        why = (
            f"the ResourceVersion in the precondition ({rv}) does not match the "
            f"ResourceVersion in record ({meta['resourceVersion']}). The object might have "
            "been modified"
        )
    if why:
        name = meta["name"]
        qualified_kind = f"{rt.kind}.{rt.group}" if rt.group else rt.kind
        details = {"name": name, **({"group": rt.group} if rt.group else {}), "kind": rt.kind}
        raise APIError(
            409,
            "Conflict",
            f'Operation cannot be fulfilled on {qualified_kind} "{name}": {why}',
            details,
        )


class Deletion(Writes):
    """:class:`~.writing.Writes` and deletion."""

    def delete(
        self, rt: ResourceType, namespace: str | None, name: str, options: Obj, opts: WriteOptions
    ) -> Result:
        """DELETE without admission webhooks."""
        return run_sync(self.delete_steps(rt, namespace, name, options, opts))

    def delete_steps(
        self,
        rt: ResourceType,
        namespace: str | None,
        name: str,
        options: Obj,
        opts: WriteOptions,
        collection: bool = False,
    ) -> Steps:
        """DELETE: remove at once, or mark deleting while finalizers remain. Admission runs
        in storage, after the preconditions (rest.AdmissionToValidateObjectDeleteFunc:
        mutating, then validating webhooks, both given the stored object as oldObject);
        for an item of a DELETE of a collection the review names no object."""
        old = self.store.get(rt.storage_key, namespace or "", name)
        if old is None:
            raise errors.not_found(rt.group, rt.plural, name)
        _check_delete_preconditions(rt, options.get("preconditions") or {}, old)
        review_options = options_for("DELETE", opts.query, options)
        for mutating, step in ((True, Mutate), (False, Validate)):
            if admission_wanted(self, rt, "", mutating=mutating):
                attrs = self._attrs(rt, "DELETE", None, old, opts, "", review_options)
                if collection:
                    attrs.name = ""
                yield step(attrs, self._guard(rt, old))
        obj = clone(old)
        meta = obj["metadata"]
        finalizers = list(meta.get("finalizers") or [])
        policy = options.get("propagationPolicy")
        if policy is None and options.get("orphanDependents") is not None:
            policy = "Orphan" if options["orphanDependents"] else "Background"
        for wanted, finalizer in (("Orphan", "orphan"), ("Foreground", "foregroundDeletion")):
            if policy == wanted and finalizer not in finalizers:
                finalizers.append(finalizer)
        first_crd_delete = rt.storage_key == CRD_KEY and not meta.get("deletionTimestamp")
        if first_crd_delete and CRD_FINALIZER not in finalizers:
            # the CRD REST delete: "upon first request to delete, add our finalizer"
            finalizers.append(CRD_FINALIZER)
        if finalizers:
            meta["finalizers"] = finalizers
        if (rt.group, rt.plural) == ("", "pods"):
            graceful = self._delete_pod_gracefully(rt, obj, old, options, opts)
            if graceful is not None:
                return graceful
        if not self._finalized(obj) or (rt.plural == "namespaces" and not rt.group):
            return self._mark_deleting(rt, obj, old, options, opts)
        if not opts.dry_run:
            gone = self.store.delete(rt.storage_key, namespace or "", name)
            self._after_delete(rt, old)
        else:
            gone = old
        if rt.delete_returns_object:
            return Result(200, self.present(rt, gone))
        details = {"name": name}  # metav1.StatusDetails's field order
        if rt.group:
            details["group"] = rt.group
        details.update(kind=rt.plural, uid=meta["uid"])
        return Result(
            200,
            {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Success",
                "details": details,
            },
        )

    def _delete_pod_gracefully(
        self, rt: ResourceType, obj: Obj, old: Obj, options: Obj, opts: WriteOptions
    ) -> Result | None:
        """A Pod's graceful deletion (rest.BeforeDelete with the pod strategy's
        CheckGracefulDelete, the generic store's updateForGracefulDeletionAndFinalizers): the
        grace period asked for, else ``spec.terminationGracePeriodSeconds``, 0 for a Pod on
        no node or one that has finished; the Pod is written with its deletionTimestamp
        (now + the period) and deletionGracePeriodSeconds, and stays while the period is
        over 0 (a kubelet would delete it) or finalizers remain, else is deleted. A Pod
        already deleting keeps its period unless a shorter one is asked for. None: delete
        as any object (already deleting with no period left)."""
        meta = obj["metadata"]
        asked = options.get("gracePeriodSeconds")
        if isinstance(asked, int) and asked < 0:
            asked = 1
        if meta.get("deletionTimestamp"):
            current = meta.get("deletionGracePeriodSeconds")
            if not current:
                return None
            if not isinstance(asked, int) or asked >= current:
                return Result(200, self.present(rt, old))  # graceful deletion is pending
            shifted = _parse_time(meta["deletionTimestamp"]) - current + asked
            meta["deletionTimestamp"] = _format_seconds(shifted)
            period = asked
        else:
            spec, phase = obj.get("spec") or {}, (obj.get("status") or {}).get("phase")
            default = spec.get("terminationGracePeriodSeconds")
            period = asked if isinstance(asked, int) else default if isinstance(default, int) else 0
            if not spec.get("nodeName"):
                period = 0
            if phase in ("Failed", "Succeeded"):
                period = 0
            period = 1 if period < 0 else period
            meta["deletionTimestamp"] = _format_seconds(time.time() + period)
            if meta.get("generation"):
                meta["generation"] += 1
        meta["deletionGracePeriodSeconds"] = period
        if opts.dry_run:
            return Result(200, self.present(rt, obj))
        stored = self.store.update(rt.storage_key, obj)
        if period > 0 or not self._finalized(obj):
            return Result(200, self.present(rt, stored))
        gone = self.store.delete(rt.storage_key, meta.get("namespace") or "", meta["name"])
        self._after_delete(rt, stored)
        return Result(200, self.present(rt, gone))

    def _mark_deleting(
        self, rt: ResourceType, obj: Obj, old: Obj, options: Obj, opts: WriteOptions
    ) -> Result:
        meta = obj["metadata"]
        own_delete = (rt.plural == "namespaces" and not rt.group) or rt.storage_key == CRD_KEY
        if not meta.get("deletionTimestamp"):
            meta["deletionTimestamp"] = now_time()
            if not own_delete:
                # the generic store's markAsDeleting; a Namespace's and a CRD's own REST
                # Delete set the timestamp alone
                meta["deletionGracePeriodSeconds"] = 0
                if meta.get("generation"):
                    meta["generation"] += 1
        if rt.plural == "namespaces" and not rt.group:
            obj.setdefault("status", {})["phase"] = "Terminating"
        if rt.storage_key == CRD_KEY:
            crds.set_terminating(obj)
        stored = obj if opts.dry_run else self.store.update(rt.storage_key, obj)
        code = 202 if options.get("orphanDependents") is False else 200
        return Result(code, self.present(rt, stored))

    def delete_collection(
        self, rt: ResourceType, selection: Filter, options: Obj, opts: WriteOptions
    ) -> Result:
        """DELETE of a collection without admission webhooks."""
        return run_sync(self.delete_collection_steps(rt, selection, options, opts))

    def delete_collection_steps(
        self, rt: ResourceType, selection: Filter, options: Obj, opts: WriteOptions
    ) -> Steps:
        self.check_field_selector(rt, selection.fields)
        deleted = []
        for obj in list(self.store.items(rt.storage_key, selection.namespace)):
            if selection.matches(obj):
                meta = obj["metadata"]
                if (
                    self.store.get(rt.storage_key, meta.get("namespace") or "", meta["name"])
                    is None
                ):
                    continue  # deleted while webhooks ran for an earlier item
                result = yield from self.delete_steps(
                    rt, meta.get("namespace"), meta["name"], options, opts, collection=True
                )
                deleted.append(result.body if result.body.get("kind") != "Status" else obj)
        body = {
            "kind": rt.list_kind,
            "apiVersion": rt.api_version,
            "metadata": {
                "resourceVersion": str(self.store.rv),
                # custom resources: an UnstructuredList, which always carries continue
                **({"continue": ""} if rt.crd_name is not None else {}),
            },
            "items": [self._list_item(rt, o) for o in deleted],
        }
        return Result(200, body)


def _format_seconds(stamp: float) -> str:
    """metav1.Time of a Unix time (whole seconds)."""
    return format_time(datetime.fromtimestamp(int(stamp), UTC))


def _parse_time(text: str) -> float:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()
