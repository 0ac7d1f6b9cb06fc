"""Validation of apps/v1 kinds (kubernetes pkg/apis/apps/validation, with the registry
strategies of pkg/registry/apps): Deployments, ReplicaSets, DaemonSets and StatefulSets on
create, update (immutable selector, the StatefulSet's forbidden spec changes) and status
update.

Left out: the DaemonSet's templateGeneration rules (a field apps/v1 does not serve), the
StatefulSet's ordinals and maxUnavailable feature checks, volumeClaimTemplates' PVC rules,
pod annotations' rules, a Deployment's rollbackTo.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import gorender, selectors
from .appsstatus import STATUS_RULES
from .common import (
    Causes,
    Validator,
    Write,
    as_dict,
    forbidden,
    invalid,
    nonnegative,
    not_supported,
    required,
    semantic,
)
from .podspec import template_causes
from .rollout import daemonset_strategy, deployment_strategy, statefulset_strategy
from .selectors import selector_causes as label_selector_causes
from .workloads import (
    always_restart,
    replicaset_template,
    selector_causes,
    selector_unchanged,
    statefulset_template,
    template_matches,
)


def _revision_limit(spec: dict[str, Any]) -> Causes:
    return nonnegative("spec.revisionHistoryLimit", spec.get("revisionHistoryLimit"))


def _deployment(spec: dict[str, Any]) -> Causes:
    """ValidateDeploymentSpec."""
    causes = nonnegative("spec.replicas", spec.get("replicas"))
    causes += selector_causes(spec, "deployment")
    causes += replicaset_template(spec)
    causes += deployment_strategy(spec.get("strategy"), "spec.strategy")
    min_ready = spec.get("minReadySeconds") or 0
    causes += nonnegative("spec.minReadySeconds", min_ready)
    causes += _revision_limit(spec)
    deadline = spec.get("progressDeadlineSeconds")
    if isinstance(deadline, int):
        causes += nonnegative("spec.progressDeadlineSeconds", deadline)
        if isinstance(min_ready, int) and deadline <= min_ready:
            detail = "must be greater than minReadySeconds"
            causes.append(invalid("spec.progressDeadlineSeconds", deadline, detail))
    return causes


def _replicaset(spec: dict[str, Any]) -> Causes:
    """ValidateReplicaSetSpec."""
    causes = nonnegative("spec.replicas", spec.get("replicas"))
    causes += nonnegative("spec.minReadySeconds", spec.get("minReadySeconds"))
    causes += selector_causes(spec, "deployment")
    return causes + replicaset_template(spec)


def _daemonset(spec: dict[str, Any]) -> Causes:
    """ValidateDaemonSetSpec (no selector is required: none selects nothing)."""
    selector = spec.get("selector")
    causes = label_selector_causes(selector, "spec.selector")
    template = as_dict(spec.get("template"))
    if selectors.convertible(selector):
        causes += template_matches(spec, "spec.template")
    if selector is not None and selectors.is_empty(selector):
        rendered = gorender.label_selector(selector)
        detail = "empty selector is invalid for daemonset"
        causes.append(invalid("spec.selector", rendered, detail, rendered=True))
    causes += template_causes(template, "spec.template")
    causes += always_restart(template, "spec.template", "DaemonSet")
    causes += nonnegative("spec.minReadySeconds", spec.get("minReadySeconds"))
    causes += daemonset_strategy(spec.get("updateStrategy"), "spec.updateStrategy")
    return causes + _revision_limit(spec)


_RETENTION = ("Retain", "Delete")


def _statefulset(spec: dict[str, Any]) -> Causes:
    """ValidateStatefulSetSpec."""
    causes: Causes = []
    policy = spec.get("podManagementPolicy") or ""
    if not policy:
        causes.append(required("spec.podManagementPolicy"))
    elif policy not in ("OrderedReady", "Parallel"):
        detail = "must be 'OrderedReady' or 'Parallel'"
        causes.append(invalid("spec.podManagementPolicy", policy, detail))
    causes += statefulset_strategy(spec.get("updateStrategy"), "spec.updateStrategy")
    retention = spec.get("persistentVolumeClaimRetentionPolicy")
    if isinstance(retention, dict):
        for key in ("whenDeleted", "whenScaled"):
            value = retention.get(key) or ""
            if value not in _RETENTION:
                field = f"spec.persistentVolumeClaimRetentionPolicy.{key}"
                causes.append(not_supported(field, value, _RETENTION))
    causes += nonnegative("spec.replicas", spec.get("replicas"))
    causes += nonnegative("spec.minReadySeconds", spec.get("minReadySeconds"))
    causes += nonnegative("spec.ordinals.start", as_dict(spec.get("ordinals")).get("start"))
    causes += selector_causes(spec, "statefulset")
    causes += statefulset_template(spec)
    return causes + always_restart(as_dict(spec.get("template")), "spec.template", "StatefulSet")


# ValidateStatefulSetUpdate: what an update may change in a StatefulSet's spec.
_STATEFULSET_MUTABLE = (
    "replicas",
    "template",
    "updateStrategy",
    "minReadySeconds",
    "ordinals",
    "persistentVolumeClaimRetentionPolicy",
)
_STATEFULSET_FORBIDDEN = (
    "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template',"
    " 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are"
    " forbidden"
)


def _statefulset_update(spec: dict[str, Any], old: dict[str, Any]) -> Causes:
    def fixed(value: dict[str, Any]) -> Any:
        return semantic({k: v for k, v in value.items() if k not in _STATEFULSET_MUTABLE})

    return [] if fixed(spec) == fixed(old) else [forbidden("spec", _STATEFULSET_FORBIDDEN)]


_SPEC_RULES: dict[str, Callable[[dict[str, Any]], Causes]] = {
    "deployments": _deployment,
    "replicasets": _replicaset,
    "daemonsets": _daemonset,
    "statefulsets": _statefulset,
}


def _validator(plural: str) -> Validator:
    """The kind's rules for a write: spec on create and update (plus the immutable selector,
    or the StatefulSet's fixed fields), status on a status update."""
    spec_rule, status_rule = _SPEC_RULES[plural], STATUS_RULES[plural]

    def validate(write: Write) -> Causes:
        if write.subresource == "status" and write.old is not None:
            return status_rule(as_dict(write.obj.get("status")), as_dict(write.old.get("status")))
        if write.subresource:
            return []
        spec = as_dict(write.obj.get("spec"))
        causes = spec_rule(spec)
        if write.old is None:
            return causes
        old = as_dict(write.old.get("spec"))
        if plural == "statefulsets":
            return causes + _statefulset_update(spec, old)
        return causes + selector_unchanged(spec, old)

    return validate


VALIDATORS: dict[tuple[str, str], Validator] = {
    ("apps", plural): _validator(plural) for plural in _SPEC_RULES
}
