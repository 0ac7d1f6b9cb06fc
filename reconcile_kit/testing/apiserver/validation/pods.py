"""Validation of Pods (kubernetes pkg/apis/core/validation ValidatePodCreate,
ValidatePodUpdate, ValidatePodStatusUpdate).

The pod spec rules are podspec.py's (containers.py, env.py, ports.py, handlers.py,
resources.py, volumes.py, filepaths.py, scheduling.py, dnsconfig.py, gates.py). Left out
of the port: the rules of volume sources other than secret, configMap,
persistentVolumeClaim, hostPath and emptyDir; downward API field paths, volume devices,
resize policies, resource claims and pod-level resources, image pull secrets,
matchLabelKeys, hostAliases, priority class and runtime class names, overhead,
OS-specific and Windows checks, container security contexts beyond user and group ids,
pod annotations (seccomp, AppArmor, tolerations), sysctls, the scheduling-gated pod's
node selector and affinity updates, and the status rules beyond condition types, nodeName
and qosClass (container state transitions, IPs, users).
"""

from __future__ import annotations

import copy
from typing import Any

from ....meta.validation import qualified_name_errors
from .common import (
    Causes,
    Validator,
    Write,
    as_dict,
    as_list,
    forbidden,
    invalid,
    required,
    semantic,
)
from .gorender import spec_diff
from .podspec import pod_spec_causes
from .scheduling import tolerations_causes

_UPDATABLE = (
    "`spec.containers[*].image`",
    "`spec.initContainers[*].image`",
    "`spec.activeDeadlineSeconds`",
    "`spec.tolerations` (only additions to existing tolerations)",
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
)
_INT32_MAX = 2**31 - 1


def _create(pod: dict[str, Any]) -> Causes:
    """ValidatePodCreate: the pod spec, no ephemeral containers, no node name while
    scheduling gates remain."""
    spec = as_dict(pod.get("spec"))
    causes = pod_spec_causes(spec, "spec", pod=True)
    if spec.get("ephemeralContainers"):
        causes.append(forbidden("spec.ephemeralContainers", "cannot be set on create"))
    if spec.get("nodeName") and spec.get("schedulingGates"):
        detail = "cannot be set until all schedulingGates have been cleared"
        causes.append(forbidden("spec.nodeName", detail))
    return causes


def _container_updates(new: list[Any], old: list[Any], field: str) -> tuple[Causes, bool]:
    """ValidateContainerUpdates: as many containers as before (else stop), images set and
    without surrounding blanks."""
    if len(new) != len(old):
        return [forbidden(field, "pod updates may not add or remove containers")], True
    causes: Causes = []
    for i, ctr in enumerate(new):
        image = str(as_dict(ctr).get("image") or "")
        if not image:
            causes.append(required(f"{field}[{i}].image"))
        if image.strip() != image:
            detail = "must not have leading or trailing whitespace"
            causes.append(invalid(f"{field}[{i}].image", image, detail))
    return causes, False


def _deadline_causes(new: Any, old: Any) -> tuple[Causes, bool]:
    """activeDeadlineSeconds may be set, or lowered; not raised nor removed."""
    field = "spec.activeDeadlineSeconds"
    if isinstance(new, int):
        if not 0 <= new <= _INT32_MAX:
            detail = f"must be between 0 and {_INT32_MAX}, inclusive"
            return [invalid(field, new, detail)], True
        if isinstance(old, int) and old < new:
            return [invalid(field, new, "must be less than or equal to previous value")], True
        return [], False
    if old is not None:
        detail = "must not update from a positive integer to nil value"
        return [invalid(field, "null", detail, rendered=True)], False
    return [], False


def _tolerations_causes(new: list[Any], old: list[Any]) -> Causes:
    """validateOnlyAddedTolerations: every old toleration is still there (its
    tolerationSeconds may change)."""
    kept = [semantic({**as_dict(t), "tolerationSeconds": None}) for t in new]
    for toleration in old:
        if semantic({**as_dict(toleration), "tolerationSeconds": None}) not in kept:
            detail = "existing toleration can not be modified except its tolerationSeconds"
            return [forbidden("spec.tolerations", detail)]
    return tolerations_causes(new, "spec.tolerations")


def _munged(new: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
    """The new spec with what may change taken from the old one."""
    munged: dict[str, Any] = copy.deepcopy(new)
    for kind in ("containers", "initContainers"):
        for ctr, before in zip(as_list(munged.get(kind)), as_list(old.get(kind)), strict=False):
            if isinstance(ctr, dict):
                ctr["image"] = as_dict(before).get("image")
    for key in ("activeDeadlineSeconds", "schedulingGates", "tolerations"):
        munged[key] = old.get(key)
    grace = munged.get("terminationGracePeriodSeconds")
    old_grace = old.get("terminationGracePeriodSeconds")
    if isinstance(old_grace, int) and old_grace < 0 and grace == 1:
        munged["terminationGracePeriodSeconds"] = old_grace
    return munged


def _update(pod: dict[str, Any], old_pod: dict[str, Any]) -> Causes:
    """ValidatePodUpdate: the new spec valid, then only images, a lower deadline, added
    tolerations (and a negative grace period set to 1) changed."""
    new, old = as_dict(pod.get("spec")), as_dict(old_pod.get("spec"))
    causes = pod_spec_causes(new, "spec", pod=True)
    for kind in ("containers", "initContainers"):
        found, stop = _container_updates(
            as_list(new.get(kind)), as_list(old.get(kind)), f"spec.{kind}"
        )
        causes += found
        if stop:
            return causes
    found, stop = _deadline_causes(
        new.get("activeDeadlineSeconds"), old.get("activeDeadlineSeconds")
    )
    causes += found
    if stop:
        return causes
    causes += _tolerations_causes(as_list(new.get("tolerations")), as_list(old.get("tolerations")))
    munged = _munged(new, old)
    if semantic(munged) != semantic(old):
        detail = "pod updates may not change fields other than " + ",".join(_UPDATABLE)
        causes.append(
            forbidden("spec", detail + "\n" + spec_diff("PodSpec", semantic(old), semantic(munged)))
        )
    return causes


def _status_update(pod: dict[str, Any], old_pod: dict[str, Any]) -> Causes:
    """ValidatePodStatusUpdate: custom condition types are qualified names (reported under
    metadata, as Go does), the QoS class is immutable."""
    status, old_status = as_dict(pod.get("status")), as_dict(old_pod.get("status"))
    causes: Causes = []
    system = ("PodScheduled", "Ready", "Initialized")
    for i, condition in enumerate(as_list(status.get("conditions"))):
        kind = str(as_dict(condition).get("type") or "")
        if kind not in system:
            field = f"metadata.conditions[{i}].Type"
            causes += [invalid(field, kind, m) for m in qualified_name_errors(kind)]
    if as_dict(pod.get("spec")).get("nodeName") != as_dict(old_pod.get("spec")).get("nodeName"):
        causes.append(forbidden("status.nodeName", "may not be changed directly"))
    qos, old_qos = status.get("qosClass") or "", old_status.get("qosClass") or ""
    if qos != old_qos:
        causes.append(invalid("status.qosClass", qos, "field is immutable"))
    return causes


def _pod(write: Write) -> Causes:
    if write.old is None:
        return _create(write.obj)
    if write.subresource == "status":
        return _status_update(write.obj, write.old)
    if write.subresource:
        return []
    return _update(write.obj, write.old)


VALIDATORS: dict[tuple[str, str], Validator] = {
    ("", "pods"): _pod,
}
