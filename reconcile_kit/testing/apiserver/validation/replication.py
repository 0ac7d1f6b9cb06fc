"""Validation of core/v1 ReplicationControllers and PodTemplates (kubernetes
pkg/apis/core/validation ValidateReplicationController, ValidateReplicationControllerUpdate
and ValidateReplicationControllerStatusUpdate, ValidatePodTemplate and its update).

A ReplicationController's update is validated twice, as its strategy does (the object
alone, then the update): decoding.py's ``_VALIDATED_TWICE``."""

from __future__ import annotations

from typing import Any

from . import gorender
from .appsstatus import STATUS_RULES
from .common import Causes, Validator, Write, as_dict, invalid, nonnegative, required
from .podspec import template_causes
from .workloads import always_restart


def _selects(selector: dict[str, Any], labels: Any) -> bool:
    """labels.Set(selector).AsSelector().Matches(labels)."""
    labels = as_dict(labels)
    return all(key in labels and labels[key] == value for key, value in selector.items())


def _template(spec: dict[str, Any]) -> Causes:
    """ValidatePodTemplateSpecForRC: present, selected by the selector, a valid pod
    template whose pods restart Always."""
    field, template = "spec.template", spec.get("template")
    if not isinstance(template, dict):
        return [required(field)]
    selector = as_dict(spec.get("selector"))
    labels = as_dict(template.get("metadata")).get("labels")
    causes: Causes = []
    if selector and not _selects(selector, labels):
        detail = "`selector` does not match template `labels`"
        rendered = gorender.string_map(labels)
        causes.append(invalid(f"{field}.metadata.labels", rendered, detail, rendered=True))
    causes += template_causes(template, field)
    return causes + always_restart(template, field, "ReplicationController")


def _spec(spec: dict[str, Any]) -> Causes:
    """ValidateReplicationControllerSpec."""
    causes = nonnegative("spec.minReadySeconds", spec.get("minReadySeconds"))
    if not as_dict(spec.get("selector")):
        causes.append(required("spec.selector"))
    causes += nonnegative("spec.replicas", spec.get("replicas"))
    return causes + _template(spec)


def _replication_controller(write: Write) -> Causes:
    if write.subresource == "status" and write.old is not None:
        status, old = as_dict(write.obj.get("status")), as_dict(write.old.get("status"))
        return STATUS_RULES["replicasets"](status, old)
    if write.subresource:
        return []
    return _spec(as_dict(write.obj.get("spec")))


def _pod_template(write: Write) -> Causes:
    """ValidatePodTemplate / ValidatePodTemplateUpdate: the template as a pod template."""
    return template_causes(write.obj.get("template"), "template")


VALIDATORS: dict[tuple[str, str], Validator] = {
    ("", "replicationcontrollers"): _replication_controller,
    ("", "podtemplates"): _pod_template,
}
