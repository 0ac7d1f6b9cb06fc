"""Containers of a pod spec (kubernetes pkg/apis/core/validation validateContainers,
validateInitContainers, validateContainerCommon and the checks they call: names, image,
ports, env, volume mounts, pull policy, resources, probes, security context)."""

from __future__ import annotations

from typing import Any

from ....meta.validation import dns1123_label_errors
from .common import (
    Causes,
    as_dict,
    as_list,
    duplicate,
    forbidden,
    invalid,
    not_found,
    not_supported,
    required,
)
from .env import env_causes, env_from_causes
from .filepaths import descending_path_causes
from .handlers import lifecycle_causes, probe_causes
from .ports import host_port_conflict_causes, ports_causes
from .resources import requirements_causes

_PULL_POLICIES = ("Always", "IfNotPresent", "Never")
_MESSAGE_POLICIES = ("File", "FallbackToLogsOnError")
_INIT_ONLY_ALWAYS = "may not be set for init containers without restartPolicy=Always"
_INT32_MAX = 2**31 - 1


def name_causes(name: str, field: str) -> Causes:
    """A container's (or volume's) name: required, a DNS-1123 label (ValidateDNS1123Label)."""
    if not name:
        return [required(field)]
    return [invalid(field, name, message) for message in dns1123_label_errors(name)]


def _sub_path_causes(mount: dict[str, Any], path: str, field: str) -> Causes:
    """subPath and subPathExpr: relative, without ``..``, not both (kubernetes reports
    their path errors under the list's path, ``volumeMounts.subPath``)."""
    sub_path, expr = str(mount.get("subPath") or ""), str(mount.get("subPathExpr") or "")
    causes = descending_path_causes(sub_path, f"{field}.subPath") if sub_path else []
    if expr:
        if sub_path:
            detail = "subPathExpr and subPath are mutually exclusive"
            causes.append(invalid(f"{path}.subPathExpr", expr, detail))
        causes += descending_path_causes(expr, f"{field}.subPathExpr")
    return causes


def mounts_causes(mounts: list[Any], volumes: set[str], field: str) -> Causes:
    """ValidateVolumeMounts: a named mount of a pod volume, a unique mountPath, subPath and
    subPathExpr not both."""
    causes: Causes = []
    paths: set[str] = set()
    for i, mount in enumerate(mounts):
        mount, path = as_dict(mount), f"{field}[{i}]"
        name, mount_path = str(mount.get("name") or ""), str(mount.get("mountPath") or "")
        if not name:
            causes.append(required(f"{path}.name"))
        if name not in volumes:
            causes.append(not_found(f"{path}.name", name))
        if not mount_path:
            causes.append(required(f"{path}.mountPath"))
        if mount_path in paths:
            causes.append(invalid(f"{path}.mountPath", mount_path, "must be unique"))
        paths.add(mount_path)
        causes += _sub_path_causes(mount, path, field)
    return causes


def _enum_causes(value: object, field: str, supported: tuple[str, ...]) -> Causes:
    if not value:
        return [required(field)]
    if value not in supported:
        return [not_supported(field, value, supported)]
    return []


def _security_context_causes(context: Any, field: str) -> Causes:
    """ValidateSecurityContext basics: user and group ids in range."""
    context, causes = as_dict(context), []
    for key in ("runAsUser", "runAsGroup"):
        value = context.get(key)
        if isinstance(value, int) and not 0 <= value <= _INT32_MAX:
            detail = f"must be between 0 and {_INT32_MAX}, inclusive"
            causes.append(invalid(f"{field}.{key}", value, detail))
    return causes


def common_causes(ctr: dict[str, Any], volumes: set[str], field: str) -> Causes:
    """validateContainerCommon: name, image, termination message policy, ports, env,
    volume mounts, pull policy, resources, security context."""
    causes = name_causes(str(ctr.get("name") or ""), f"{field}.name")
    if not ctr.get("image"):
        causes.append(required(f"{field}.image"))
    policy = ctr.get("terminationMessagePolicy")
    causes += _enum_causes(policy, f"{field}.terminationMessagePolicy", _MESSAGE_POLICIES)
    causes += ports_causes(as_list(ctr.get("ports")), f"{field}.ports")
    causes += env_causes(as_list(ctr.get("env")), f"{field}.env")
    causes += env_from_causes(as_list(ctr.get("envFrom")), f"{field}.envFrom")
    causes += mounts_causes(as_list(ctr.get("volumeMounts")), volumes, f"{field}.volumeMounts")
    pull = ctr.get("imagePullPolicy")
    causes += _enum_causes(pull, f"{field}.imagePullPolicy", _PULL_POLICIES)
    causes += requirements_causes(as_dict(ctr.get("resources")), f"{field}.resources")
    causes += _security_context_causes(ctr.get("securityContext"), f"{field}.securityContext")
    return causes


def _probes_causes(ctr: dict[str, Any], field: str, grace: Any) -> Causes:
    """Lifecycle hooks and probes, where a container may have them."""
    causes = lifecycle_causes(ctr.get("lifecycle"), f"{field}.lifecycle", grace)
    for kind in ("livenessProbe", "readinessProbe", "startupProbe"):
        causes += probe_causes(ctr.get(kind), f"{field}.{kind}", kind, grace)
    return causes


def containers_causes(
    containers: list[Any], volumes: set[str], field: str, grace: Any = None
) -> Causes:
    """validateContainers: at least one; each valid with a unique name and valid probes, no
    container restartPolicy."""
    if not containers:
        return [required(field)]
    causes: Causes = []
    names: set[str] = set()
    for i, ctr in enumerate(containers):
        ctr, path = as_dict(ctr), f"{field}[{i}]"
        causes += common_causes(ctr, volumes, path)
        name = str(ctr.get("name") or "")
        if name in names:
            causes.append(duplicate(f"{path}.name", name))
        names.add(name)
        causes += _probes_causes(ctr, path, grace)
        if ctr.get("restartPolicy") is not None:
            causes.append(
                forbidden(f"{path}.restartPolicy", "may not be set for non-init containers")
            )
    return causes + host_port_conflict_causes(containers, field)


def init_containers_causes(
    inits: list[Any], containers: list[Any], volumes: set[str], field: str, grace: Any = None
) -> Causes:
    """validateInitContainers: each valid, named apart from every container; probes only
    on a restartable (sidecar) init container."""
    names = {str(as_dict(c).get("name") or "") for c in containers}
    causes: Causes = []
    for i, ctr in enumerate(inits):
        ctr, path = as_dict(ctr), f"{field}[{i}]"
        causes += common_causes(ctr, volumes, path)
        policy = ctr.get("restartPolicy")
        if policy is not None and policy != "Always":
            causes.append(not_supported(f"{path}.restartPolicy", policy, ("Always",)))
        name = str(ctr.get("name") or "")
        if name in names:
            causes.append(duplicate(f"{path}.name", name))
        elif name:
            names.add(name)
        # Each alone (they run one by one), reported at index 0 as kubernetes does.
        causes += host_port_conflict_causes([ctr], field)
        if policy == "Always":
            causes += _probes_causes(ctr, path, grace)
            continue
        for kind in ("lifecycle", "livenessProbe", "readinessProbe", "startupProbe"):
            if ctr.get(kind) is not None:
                causes.append(forbidden(f"{path}.{kind}", _INIT_ONLY_ALWAYS))
    return causes


# EphemeralContainerCommon's fields an ephemeral container may not set, in struct order.
_NOT_EPHEMERAL = (
    "ports",
    "resources",
    "resizePolicy",
    "restartPolicy",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
)
_NOT_FOR_EPHEMERAL = "cannot be set for an Ephemeral Container"


def _ephemeral_only_causes(ctr: dict[str, Any], path: str) -> Causes:
    """validateFieldAllowList and the subPath rule: no ports, resources, probes, hooks or
    restart policy; no subPath in mounts."""
    causes = [
        forbidden(f"{path}.{key}", _NOT_FOR_EPHEMERAL) for key in _NOT_EPHEMERAL if ctr.get(key)
    ]
    for i, mount in enumerate(as_list(ctr.get("volumeMounts"))):
        for key in ("subPath", "subPathExpr"):
            if as_dict(mount).get(key):
                causes.append(forbidden(f"{path}.volumeMounts[{i}].{key}", _NOT_FOR_EPHEMERAL))
    return causes


def ephemeral_causes(
    ephemerals: list[Any], others: list[Any], volumes: set[str], field: str
) -> Causes:
    """validateEphemeralContainers: each valid as a container (an image without blanks
    around), named apart from every container, targeting a non-ephemeral container, with
    only the fields ephemeral containers may have."""
    targets = {str(as_dict(c).get("name") or "") for c in others}
    names = set(targets)
    causes: Causes = []
    for i, ctr in enumerate(ephemerals):
        ctr, path = as_dict(ctr), f"{field}[{i}]"
        causes += common_causes(ctr, volumes, path)
        image = str(ctr.get("image") or "")
        if image.strip() != image:
            detail = "must not have leading or trailing whitespace"
            causes.append(invalid(f"{path}.image", image, detail))
        name = str(ctr.get("name") or "")
        if name in names:
            causes.append(duplicate(f"{path}.name", name))
        names.add(name)
        target = str(ctr.get("targetContainerName") or "")
        if target and target not in targets:
            causes.append(not_found(f"{path}.targetContainerName", target))
        causes += _ephemeral_only_causes(ctr, path)
    return causes
