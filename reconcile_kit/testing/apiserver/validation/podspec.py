"""A pod spec, in a Pod or a workload's template (kubernetes pkg/apis/core/validation
ValidatePodSpec and ValidatePodTemplateSpec)."""

from __future__ import annotations

from typing import Any

from ....meta.validation import dns1123_label_errors, dns1123_subdomain_errors
from ..meta import annotation_causes, label_causes
from .common import Causes, as_dict, as_list, forbidden, invalid, not_supported, required
from .containers import containers_causes, ephemeral_causes, init_containers_causes
from .dnsconfig import dns_config_causes
from .gates import readiness_gates_causes, scheduling_gates_causes
from .ports import host_network_causes
from .scheduling import affinity_causes, spread_causes, tolerations_causes
from .volumes import volumes_causes

_RESTART_POLICIES = ("Always", "OnFailure", "Never")
_DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
_INT32_MAX = 2**31 - 1


def _enum_causes(value: Any, field: str, supported: tuple[str, ...]) -> Causes:
    if not value:
        return [required(field)]
    return [] if value in supported else [not_supported(field, value, supported)]


def _id_causes(value: Any, field: str) -> Causes:
    if isinstance(value, int) and not 0 <= value <= _INT32_MAX:
        return [invalid(field, value, f"must be between 0 and {_INT32_MAX}, inclusive")]
    return []


def _security_context_causes(context: Any, field: str) -> Causes:
    """validatePodSpecSecurityContext: fsGroup, user, group and supplemental group ids."""
    context = as_dict(context)
    causes: Causes = []
    for key in ("fsGroup", "runAsUser", "runAsGroup"):
        causes += _id_causes(context.get(key), f"{field}.{key}")
    for i, gid in enumerate(as_list(context.get("supplementalGroups"))):
        causes += _id_causes(gid, f"{field}.supplementalGroups[{i}]")
    return causes


def _label_causes(value: Any, field: str) -> Causes:
    return [{**cause, "field": field} for cause in label_causes(value)]


def _subdomain_causes(spec: dict[str, Any], key: str, field: str) -> Causes:
    """ValidateServiceAccountName and ValidateNodeName: DNS subdomains."""
    value = str(spec.get(key) or "")
    return [invalid(field, value, m) for m in dns1123_subdomain_errors(value)] if value else []


def _dns_label_causes(spec: dict[str, Any], key: str, field: str) -> Causes:
    value = str(spec.get(key) or "")
    return [invalid(field, value, m) for m in dns1123_label_errors(value)] if value else []


def pod_spec_causes(spec: dict[str, Any], field: str, pod: bool = False) -> Causes:
    """ValidatePodSpec's rules, in its order (the ones ported; see the module docstring of
    validation/pods.py for what is left out)."""
    causes: Causes = []
    if spec.get("terminationGracePeriodSeconds") is None:
        causes.append(required(f"{field}.terminationGracePeriodSeconds"))
    volumes, found = volumes_causes(as_list(spec.get("volumes")), f"{field}.volumes")
    containers = as_list(spec.get("containers"))
    causes += found
    grace = spec.get("terminationGracePeriodSeconds")
    causes += containers_causes(containers, volumes, f"{field}.containers", grace)
    inits = as_list(spec.get("initContainers"))
    path = f"{field}.initContainers"
    causes += init_containers_causes(inits, containers, volumes, path, grace)
    ephemerals = as_list(spec.get("ephemeralContainers"))
    path = f"{field}.ephemeralContainers"
    causes += ephemeral_causes(ephemerals, containers + inits, volumes, path)
    causes += host_network_causes(spec, field, pod)
    causes += _enum_causes(spec.get("restartPolicy"), f"{field}.restartPolicy", _RESTART_POLICIES)
    causes += _enum_causes(spec.get("dnsPolicy"), f"{field}.dnsPolicy", _DNS_POLICIES)
    causes += _label_causes(spec.get("nodeSelector"), f"{field}.nodeSelector")
    causes += _security_context_causes(spec.get("securityContext"), f"{field}.securityContext")
    causes += affinity_causes(spec.get("affinity"), f"{field}.affinity")
    causes += dns_config_causes(spec.get("dnsConfig"), spec.get("dnsPolicy"), f"{field}.dnsConfig")
    causes += readiness_gates_causes(spec.get("readinessGates"), f"{field}.readinessGates")
    causes += scheduling_gates_causes(spec.get("schedulingGates"), f"{field}.schedulingGates")
    spreads = as_list(spec.get("topologySpreadConstraints"))
    causes += spread_causes(spreads, f"{field}.topologySpreadConstraints")
    causes += _subdomain_causes(spec, "serviceAccountName", f"{field}.serviceAccountName")
    causes += _subdomain_causes(spec, "nodeName", f"{field}.nodeName")
    deadline = spec.get("activeDeadlineSeconds")
    if isinstance(deadline, int) and not 1 <= deadline <= _INT32_MAX:
        detail = f"must be between 1 and {_INT32_MAX}, inclusive"
        causes.append(invalid(f"{field}.activeDeadlineSeconds", deadline, detail))
    causes += _dns_label_causes(spec, "hostname", f"{field}.hostname")
    causes += _dns_label_causes(spec, "subdomain", f"{field}.subdomain")
    causes += tolerations_causes(as_list(spec.get("tolerations")), f"{field}.tolerations")
    return causes


def template_causes(template: Any, field: str) -> Causes:
    """ValidatePodTemplateSpec: labels, annotations, the pod spec, no ephemeral containers."""
    template = as_dict(template)
    meta, spec = as_dict(template.get("metadata")), as_dict(template.get("spec"))
    causes = _label_causes(meta.get("labels"), f"{field}.labels")
    causes += annotation_causes(meta.get("annotations"), f"{field}.annotations")
    causes += pod_spec_causes(spec, f"{field}.spec")
    if spec.get("ephemeralContainers"):
        detail = "ephemeral containers not allowed in pod template"
        causes.append(forbidden(f"{field}.spec.ephemeralContainers", detail))
    return causes
