"""What a write of the embedded API server is given and answers, and the object helpers
its steps share: :class:`WriteOptions` (the request's query options and the requester),
:class:`Result` (HTTP code, body, warnings), deep copies, paths into objects, the Scale
replicas check and the managedFields a write records (kube-apiserver's field manager,
k8s.io/apiserver pkg/endpoints/handlers/fieldmanager).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from . import errors
from . import managedfields as mf
from .gozero import fill_go_zero
from .kubetypes import KINDS
from .managedfields import manager_name
from .resources import ResourceType
from .store import Obj
from .structured import StructuredError

__all__ = [
    "CONTROLLER_WRITE",
    "Result",
    "WriteOptions",
    "check_replicas",
    "clone",
    "get_path",
    "record_manager",
    "set_path",
    "without_managed_fields",
]


@dataclass
class WriteOptions:
    """Query options of a write: ``dryRun=All``, ``fieldValidation``, ``fieldManager``."""

    dry_run: bool = False
    field_validation: str = "Warn"
    field_manager: str | None = None
    user_agent: str = ""
    operation: str = "Update"
    force: bool = False
    """Server-side apply's ``force=true``: take fields other managers own."""
    managed: list[Obj] | None = None
    """managedFields already worked out (by server-side apply) for this write."""
    query: dict[str, str] = field(default_factory=dict)
    """The request's query (the ``options`` of an AdmissionReview)."""
    decode_warnings: list[str] = field(default_factory=list)
    """Warnings of the decoding before a mutating webhook changed the object."""
    user_info: Obj | None = None
    """The requester as AdmissionReviews name it (None: the admin)."""
    guard: Callable[[ResourceType, Obj, Obj | None], None] | None = None
    """The REST storage's own check of the requester's write (``(rt, new, old)``, raising
    APIError), after the mutating admission and before validation: RBAC's escalation
    prevention in RBAC mode."""
    admit: Callable[[ResourceType, Obj, Obj | None, str], None] | None = None
    """Validating admission of the requester (``(rt, new, old, subresource)``, raising
    APIError), called after validation and before the validating webhooks (kube-apiserver's
    plugin order): OwnerReferencesPermissionEnforcement in RBAC mode."""

    @property
    def manager(self) -> str:
        return manager_name(self.field_manager, self.user_agent)


@dataclass
class Result:
    """What a handler answers: HTTP code, body, and ``Warning`` header texts."""

    code: int
    body: Obj
    warnings: list[str] = field(default_factory=list)


CONTROLLER_WRITE = WriteOptions(field_manager="kube-controller-manager")

"""The options of the built-in controllers' writes (:meth:`Cluster.replace`,
:meth:`Cluster.remove`)."""


def without_managed_fields(obj: Obj) -> Obj:
    """``obj`` without ``metadata.managedFields`` (a shallow copy)."""
    meta = {k: v for k, v in obj.get("metadata", {}).items() if k != "managedFields"}
    return {**obj, "metadata": meta}


def clone(obj: Obj) -> Obj:
    """A deep copy (an orjson round trip: several times faster than copy.deepcopy)."""
    result: Obj = orjson.loads(orjson.dumps(obj))
    return result


def get_path(obj: Obj, path: str) -> Any:
    """The value at dotted ``path`` (``.spec.replicas``) in ``obj``, None when absent."""
    value: Any = obj
    for part in path.strip(".").split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def set_path(obj: Obj, path: str, value: Any) -> None:
    """Set the value at dotted ``path`` in ``obj``, creating the objects on the way."""
    parts = path.strip(".").split(".")
    for part in parts[:-1]:
        obj = obj.setdefault(part, {})
    obj[parts[-1]] = value


def check_replicas(name: str, replicas: Any) -> None:
    """A Scale's ``spec.replicas`` (ValidateScale)."""
    if not isinstance(replicas, int) or replicas < 0:
        raise errors.invalid(
            "Scale",
            "autoscaling",
            name,
            [
                errors.cause(
                    "FieldValueInvalid",
                    "spec.replicas",
                    f"Invalid value: {replicas}: must be greater than or equal to 0",
                )
            ],
        )


_JOB_LABELS = (
    "batch.kubernetes.io/controller-uid",
    "batch.kubernetes.io/job-name",
    "controller-uid",
    "job-name",
)
SET_AFTER_FIELD_MANAGER: dict[tuple[str, str], tuple[tuple[str, ...], ...]] = {
    ("", "pods"): (("spec", "priority"), ("spec", "preemptionPolicy"), ("spec", "tolerations")),
    ("", "services"): (
        ("spec", "clusterIP"),
        ("spec", "clusterIPs"),
        ("spec", "ipFamilies"),
        ("spec", "ipFamilyPolicy"),
        ("spec", "healthCheckNodePort"),
        ("spec", "ports", "*", "nodePort"),
    ),
    ("", "namespaces"): (("spec", "finalizers"),),
    ("", "persistentvolumeclaims"): (
        ("metadata", "finalizers", "=kubernetes.io/pvc-protection"),
        ("spec", "dataSource"),  # NormalizeDataSources
        ("spec", "dataSourceRef"),
    ),
    ("", "persistentvolumes"): (("metadata", "finalizers", "=kubernetes.io/pv-protection"),),
    ("", "nodes"): (("spec", "taints"),),  # TaintNodesByCondition's not-ready taint
    ("batch", "jobs"): (
        ("spec", "selector"),
        *(("metadata", "labels", label) for label in _JOB_LABELS),
        *(("spec", "template", "metadata", "labels", label) for label in _JOB_LABELS),
    ),
}
"""Fields a create's strategy (PrepareForCreate) or admission plugins set, after
kube-apiserver's field manager recorded the request (defaulted by the scheme only): the
Priority and DefaultTolerationSeconds plugins, a Service's allocations, a Namespace's
finalizer, the StorageObjectInUseProtection plugin's, a Job's generated selector and labels.
Nobody owns them unless the request had them."""


_DROPPED_AFTER_FIELD_MANAGER = {
    ("coordination.k8s.io", "leases"): (("spec", "strategy"), ("spec", "preferredHolder")),
    ("", "persistentvolumeclaims"): (("spec", "dataSource"), ("spec", "dataSourceRef")),
}
"""Fields a create's strategy drops (disabled feature gates) after the field manager
recorded them: their writer owns them though the object lacks them."""

_RESTORED_BY_UPDATE = {("", "namespaces"): (("spec", "finalizers"),)}
"""Fields an update's strategy puts back from the old object after the field manager
recorded the request's (namespaceStrategy.PrepareForUpdate: spec.finalizers)."""

_DROPPED_BY_UPDATE = {
    ("", "services"): (
        ("spec", "allocateLoadBalancerNodePorts"),
        ("spec", "externalTrafficPolicy"),
        ("spec", "loadBalancerClass"),
    ),
}
"""Fields an update's strategy drops after the field manager recorded the request's, so
recorded as the request sent them (a Service's dropTypeDependentFields, once its type no
longer uses them)."""


def _as_requested(rt: ResourceType, new: Obj, requested: Obj | None) -> Obj:
    """``new`` with the fields the update's strategy restored or dropped as the request had
    them."""
    restored = _RESTORED_BY_UPDATE.get((rt.group, rt.plural), ())
    dropped = _DROPPED_BY_UPDATE.get((rt.group, rt.plural), ())
    if requested is None or not (restored or dropped):
        return new
    result = clone(new)
    for parent, key in (*restored, *dropped):
        asked = requested.get(parent)
        target = result.setdefault(parent, {})
        if isinstance(asked, dict) and key in asked:
            target[key] = asked[key]
        elif isinstance(target, dict) and (parent, key) in restored:
            target.pop(key, None)
    return result


_EMPTY_KEPT: dict[tuple[str, str], tuple[tuple[str, ...], ...]] = {
    ("rbac.authorization.k8s.io", "roles"): (("rules",),),
    ("rbac.authorization.k8s.io", "clusterroles"): (("rules",),),
    ("discovery.k8s.io", "endpointslices"): (("endpoints",),),
    ("", "limitranges"): (("spec", "limits"),),
    ("storage.k8s.io", "csinodes"): (("spec", "drivers"),),
}
"""Slices without ``omitempty`` that a request can send empty (their paths)."""


def _keep_empty(written: Obj, requested: Obj, path: tuple[str, ...]) -> None:
    """``written`` gets the empty slice at ``path`` that ``requested`` sent."""
    *parents, key = path
    asked: Any = requested
    target: Any = written
    for part in parents:
        asked, target = asked.get(part), target.get(part)
        if not isinstance(asked, dict) or not isinstance(target, dict):
            return
    if asked.get(key) == [] and target.get(key) is None:
        target[key] = []


def _prune(written: Any, requested: Any, path: tuple[str, ...]) -> None:
    """Drop from ``written`` what is at ``path`` and was not in ``requested``."""
    if not path or not isinstance(written, dict | list):
        return
    key, rest = path[0], path[1:]
    if key == "*":
        if isinstance(written, list):
            asked = requested if isinstance(requested, list) else []
            for i, item in enumerate(written):
                _prune(item, asked[i] if i < len(asked) else None, rest)
        return
    if not isinstance(written, dict):
        return
    if rest and rest[0].startswith("="):
        value, items = rest[0][1:], written.get(key)
        wanted = requested.get(key) if isinstance(requested, dict) else None
        if isinstance(items, list) and value in items and value not in (wanted or []):
            items.remove(value)
            if not items:
                del written[key]
        return
    if not rest:
        if key in written and not (isinstance(requested, dict) and key in requested):
            del written[key]
        return
    _prune(written.get(key), requested.get(key) if isinstance(requested, dict) else None, rest)


def _as_go_writes(
    rt: ResourceType, old: Obj | None, new: Obj, requested: Obj | None = None
) -> tuple[Obj | None, Obj]:
    """The live and new objects the field manager compares, as kube-apiserver's FieldManager
    sees them: a built-in object converted as Go encodes it (its zero ``omitempty`` fields
    left out), and on create the kind's zero object as the live one (``objectCreater.New``),
    so a field left at its Go zero value is nobody's."""
    written = without_managed_fields(new)
    live = None if old is None else without_managed_fields(old)
    if (rt.api_version, rt.kind) not in KINDS:
        return live, written
    written = clone(written)
    if requested is not None:
        for path in SET_AFTER_FIELD_MANAGER.get((rt.group, rt.plural), ()):
            _prune(written, requested, path)
        for parent, key in _DROPPED_AFTER_FIELD_MANAGER.get((rt.group, rt.plural), ()):
            asked = requested.get(parent)
            if isinstance(asked, dict) and asked.get(key) is not None:
                written.setdefault(parent, {})[key] = clone(asked[key])
    fill_go_zero(rt.api_version, rt.kind, written)
    if requested is not None:
        # an empty slice without omitempty is the request's (``rules: []``), though
        # protobuf storage gives it back nil
        for path in _EMPTY_KEPT.get((rt.group, rt.plural), ()):
            _keep_empty(written, requested, path)
    if live is None:
        live = {"apiVersion": rt.api_version, "kind": rt.kind, "metadata": {}}
    else:
        live = clone(live)
    fill_go_zero(rt.api_version, rt.kind, live)
    return live, written


def record_manager(
    rt: ResourceType,
    new: Obj,
    old: Obj | None,
    opts: WriteOptions,
    subresource: str,
    requested: Obj | None = None,
    updating: bool = False,
) -> None:
    """Set ``new``'s managedFields: worked out by apply, else an Update by the writer
    (``requested``: a create's object before its strategy and admission plugins)."""
    meta = new["metadata"]
    if (rt.group, rt.plural) in mf.UNTRACKED:
        meta.pop("managedFields", None)
        return
    if opts.managed is not None:
        managed = opts.managed
    else:
        managers = mf.live_or_new_managers(old, new, subresource)
        if managers is None:  # an existing object without managedFields: not tracked
            meta.pop("managedFields", None)
            return
        write = mf.Write(
            mf.object_type(rt),
            opts.manager,
            rt.api_version,
            subresource,
            mf.ignored_paths(rt, subresource, new),
            mf.group_of(rt),
        )
        if updating:
            # a Service's registry allocates (and keeps what the request left out) after
            # the field manager saw the request, on an update as on a create
            allocated = requested if (rt.group, rt.plural) == ("", "services") else None
            live, written = _as_go_writes(rt, old, _as_requested(rt, new, requested), allocated)
        else:
            live, written = _as_go_writes(rt, old, new, requested)
        try:
            updated = write.update(live, written, managers)
        except StructuredError:
            # As kube-apiserver's FieldManager.UpdateNoErrors: an object the field manager
            # cannot type (a list-map item without its key) loses its managedFields; the
            # kind's validation, later, refuses it.
            meta.pop("managedFields", None)
            return
        managed = mf.encode_managers(updated)
    if managed:
        meta["managedFields"] = managed
    else:
        meta.pop("managedFields", None)
