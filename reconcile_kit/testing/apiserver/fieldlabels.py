"""Field selectors of the built-in kinds whose registry defines its own field labels, as
kube-apiserver 1.32 checks and matches them.

Two steps, as in kube-apiserver: the kind's field label conversion function
(``AddFieldLabelConversionFunc`` in pkg/apis/<group>/<version>/conversion.go) accepts a
label, possibly renaming it (a Pod's ``spec.host`` is ``spec.nodeName``, events.k8s.io's
``regarding.kind`` is ``involvedObject.kind``), or refuses it (400 "field label not
supported: <label>", even ``metadata.namespace`` for Nodes, Namespaces and
CertificateSigningRequests); then the selector is matched against the object's field set,
the registry's ``ToSelectableFields`` (pkg/registry/.../strategy.go), where numbers and
booleans are text (a Job's ``status.successful`` is ``status.succeeded``, "0" when unset; a
Pod's ``spec.hostNetwork`` is "false" when unset; an Event's ``source`` is
``source.component`` or else ``reportingComponent``) and a label the conversion accepts
but the set lacks (a Pod's ``status.podIPs``) reads as "".

Kinds not listed here use the default conversion (``metadata.name``,
``metadata.namespace``) and their object's own fields.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from . import errors
from .resources import ResourceType

__all__ = ["FieldLabels", "field_labels_of"]

Obj = dict[str, Any]


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _int_text(value: Any) -> str:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else "0"


def _bool_text(value: Any) -> str:
    return "true" if value is True else "false"


def _part(obj: Obj, *path: str) -> Any:
    current: Any = obj
    for key in path:
        if not isinstance(current, dict):
            return None
        current = current.get(key)
    return current


def _meta(obj: Obj, namespaced: bool) -> dict[str, str]:
    """generic.ObjectMetaFieldsSet."""
    meta = obj.get("metadata") or {}
    fields = {"metadata.name": _text(meta.get("name"))}
    if namespaced:
        fields["metadata.namespace"] = _text(meta.get("namespace"))
    return fields


def _pod(obj: Obj) -> dict[str, str]:
    """pod.ToSelectableFields: status.podIP is the first of status.podIPs (a v1 Pod's
    podIP when it has none)."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    ips = status.get("podIPs") or []
    first = ips[0].get("ip") if ips and isinstance(ips[0], dict) else status.get("podIP")
    return {
        **_meta(obj, True),
        "spec.nodeName": _text(spec.get("nodeName")),
        "spec.restartPolicy": _text(spec.get("restartPolicy")),
        "spec.schedulerName": _text(spec.get("schedulerName")),
        "spec.serviceAccountName": _text(spec.get("serviceAccountName")),
        "spec.hostNetwork": _bool_text(spec.get("hostNetwork")),
        "status.phase": _text(status.get("phase")),
        "status.podIP": _text(first),
        "status.nominatedNodeName": _text(status.get("nominatedNodeName")),
    }


_INVOLVED = ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")


def _event(involved: Any, reporting: Any, source: Any, obj: Obj) -> dict[str, str]:
    """event.ToSelectableFields (on the internal Event both versions convert to)."""
    involved = involved if isinstance(involved, dict) else {}
    fields = {f"involvedObject.{key}": _text(involved.get(key)) for key in _INVOLVED}
    return {
        **fields,
        "reason": _text(obj.get("reason")),
        "reportingComponent": _text(reporting),
        "source": _text(source) or _text(reporting),
        "type": _text(obj.get("type")),
        **_meta(obj, True),
    }


def _core_event(obj: Obj) -> dict[str, str]:
    return _event(
        obj.get("involvedObject"),
        obj.get("reportingComponent"),
        _part(obj, "source", "component"),
        obj,
    )


@dataclass(frozen=True)
class FieldLabels:
    """A kind's field label conversion (accepted label: name in the field set) and its
    field set."""

    labels: Mapping[str, str]
    field_set: Callable[[Obj], Mapping[str, str]]
    refusal: str = "field label not supported: {label}"

    def check(self, label: str) -> None:
        """400, in the conversion function's words, for a label it refuses."""
        if label not in self.labels:
            raise errors.bad_request(self.refusal.format(label=label))

    def values(self, obj: Obj) -> dict[str, str]:
        """The object's field set keyed by the labels a selector may name."""
        fields = self.field_set(obj)
        return {label: fields.get(name, "") for label, name in self.labels.items()}


def _same(*labels: str) -> dict[str, str]:
    return {label: label for label in labels}


_NAME, _NAMESPACE = "metadata.name", "metadata.namespace"

_EVENT_LABELS = _same(
    *(f"involvedObject.{key}" for key in _INVOLVED),
    "reason",
    "reportingComponent",
    "source",
    "type",
    _NAMESPACE,
    _NAME,
)

_EVENTS_V1_LABELS = {
    "reason": "reason",
    **{f"regarding.{key}": f"involvedObject.{key}" for key in _INVOLVED},
    "reportingController": "reportingComponent",
    "type": "type",
    _NAMESPACE: _NAMESPACE,
    _NAME: _NAME,
}

_KINDS: dict[str, FieldLabels] = {
    "/pods": FieldLabels(
        {
            **_same(
                _NAME,
                _NAMESPACE,
                "spec.nodeName",
                "spec.restartPolicy",
                "spec.schedulerName",
                "spec.serviceAccountName",
                "spec.hostNetwork",
                "status.phase",
                "status.podIP",
                "status.podIPs",
                "status.nominatedNodeName",
            ),
            "spec.host": "spec.nodeName",
        },
        _pod,
    ),
    "/nodes": FieldLabels(
        _same(_NAME, "spec.unschedulable"),
        lambda obj: {
            **_meta(obj, False),
            "spec.unschedulable": _bool_text(_part(obj, "spec", "unschedulable")),
        },
    ),
    "/replicationcontrollers": FieldLabels(
        _same(_NAME, _NAMESPACE, "status.replicas"),
        lambda obj: {
            **_meta(obj, True),
            "status.replicas": _int_text(_part(obj, "status", "replicas")),
        },
    ),
    "/events": FieldLabels(_EVENT_LABELS, _core_event),
    # the events.k8s.io/v1 labels, matched on the stored (core/v1) Event
    "events.k8s.io/events": FieldLabels(_EVENTS_V1_LABELS, _core_event),
    "/namespaces": FieldLabels(
        _same("status.phase", _NAME),
        lambda obj: {**_meta(obj, False), "status.phase": _text(_part(obj, "status", "phase"))},
    ),
    "/secrets": FieldLabels(
        _same("type", _NAMESPACE, _NAME),
        lambda obj: {**_meta(obj, True), "type": _text(obj.get("type"))},
    ),
    "/services": FieldLabels(
        _same(_NAMESPACE, _NAME, "spec.clusterIP", "spec.type"),
        lambda obj: {
            **_meta(obj, True),
            "spec.clusterIP": _text(_part(obj, "spec", "clusterIP")),
            "spec.type": _text(_part(obj, "spec", "type")),
        },
    ),
    "batch/jobs": FieldLabels(
        _same(_NAME, _NAMESPACE, "status.successful"),
        lambda obj: {
            **_meta(obj, True),
            "status.successful": _int_text(_part(obj, "status", "succeeded")),
        },
        'field label "{label}" not supported for Job',
    ),
    "certificates.k8s.io/certificatesigningrequests": FieldLabels(
        _same(_NAME, "spec.signerName"),
        lambda obj: {
            **_meta(obj, False),
            "spec.signerName": _text(_part(obj, "spec", "signerName")),
        },
    ),
}


def field_labels_of(rt: ResourceType) -> FieldLabels | None:
    """The field labels of a built-in kind that defines its own (None: the default
    conversion and the object's own fields)."""
    return _KINDS.get(f"{rt.group}/{rt.plural}") if rt.builtin else None
