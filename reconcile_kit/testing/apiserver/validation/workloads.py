"""What the workload specs of apps/v1 share (kubernetes pkg/apis/apps/validation): the
selector and its template (ValidatePodTemplateSpecForReplicaSet and ForStatefulSet) and
the immutable selector of an update (the registry strategies' ValidateImmutableField)."""

from __future__ import annotations

from typing import Any

from ..meta import annotation_causes, label_causes
from . import gorender, selectors
from .common import (
    Causes,
    as_dict,
    forbidden,
    immutable,
    invalid,
    not_supported,
    required,
    semantic,
)
from .podspec import template_causes


def _mismatch(template: dict[str, Any], field: str) -> Causes:
    labels = as_dict(template.get("metadata")).get("labels")
    detail = "`selector` does not match template `labels`"
    return [invalid(f"{field}.metadata.labels", gorender.string_map(labels), detail, rendered=True)]


def selector_causes(spec: dict[str, Any], kind: str) -> Causes:
    """The selector a Deployment, ReplicaSet or StatefulSet needs: present, valid, not
    empty."""
    selector = spec.get("selector")
    if selector is None:
        return [required("spec.selector")]
    causes = selectors.selector_causes(selector, "spec.selector")
    if selectors.is_empty(selector):
        rendered = gorender.label_selector(selector)
        detail = f"empty selector is invalid for {kind}"
        causes.append(invalid("spec.selector", rendered, detail, rendered=True))
    return causes


def template_matches(spec: dict[str, Any], field: str) -> Causes:
    """The template's labels are selected (unless the selector selects everything)."""
    selector, template = spec.get("selector"), as_dict(spec.get("template"))
    labels = as_dict(template.get("metadata")).get("labels")
    if isinstance(selector, dict) and selectors.is_empty(selector):
        return []
    return [] if selectors.matches(selector, labels) else _mismatch(template, field)


def always_restart(template: dict[str, Any], field: str, kind: str) -> Causes:
    """A controller's pods restart Always and have no active deadline."""
    spec = as_dict(template.get("spec"))
    causes: Causes = []
    policy = spec.get("restartPolicy") or ""
    if policy != "Always":
        causes.append(not_supported(f"{field}.spec.restartPolicy", policy, ("Always",)))
    if spec.get("activeDeadlineSeconds") is not None:
        detail = f"activeDeadlineSeconds in {kind} is not Supported"
        causes.append(forbidden(f"{field}.spec.activeDeadlineSeconds", detail))
    return causes


def replicaset_template(spec: dict[str, Any]) -> Causes:
    """ValidatePodTemplateSpecForReplicaSet (Deployments use it too)."""
    field = "spec.template"
    if not selectors.convertible(spec.get("selector")):
        rendered = gorender.label_selector(spec.get("selector"))
        return [invalid("spec.selector", rendered, "invalid label selector", rendered=True)]
    template = as_dict(spec.get("template"))
    causes = template_matches(spec, field)
    causes += template_causes(template, field)
    return causes + always_restart(template, field, "ReplicaSet")


def statefulset_template(spec: dict[str, Any]) -> Causes:
    """ValidatePodTemplateSpecForStatefulSet: the selector matches, the template's labels
    are valid (its pod spec is not validated, a TODO in kubernetes)."""
    if not selectors.convertible(spec.get("selector")):
        rendered = gorender.label_selector(spec.get("selector"))
        return [invalid("spec.selector", rendered, "", rendered=True)]
    template = as_dict(spec.get("template"))
    labels = as_dict(template.get("metadata")).get("labels")
    causes = template_matches(spec, "spec.template")
    causes += [{**c, "field": "spec.template.labels"} for c in label_causes(labels)]
    annotations = as_dict(template.get("metadata")).get("annotations")
    return causes + annotation_causes(annotations, "spec.template.annotations")


def selector_unchanged(spec: dict[str, Any], old: dict[str, Any]) -> Causes:
    """spec.selector is immutable in apps/v1."""
    new_selector, old_selector = spec.get("selector"), old.get("selector")
    rendered = gorender.label_selector(new_selector)
    return immutable("spec.selector", semantic(new_selector), semantic(old_selector), rendered)
