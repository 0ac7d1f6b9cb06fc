"""Kind-specific validation of built-in objects (the parts clients depend on).

Sources: kubernetes pkg/apis/core/validation (Event, container names),
pkg/apis/events/validation, pkg/apis/apps/validation (Deployment status),
pkg/apis/storage/validation (CSIStorageCapacity), pkg/apis/certificates/validation (see
certificates.py), pkg/apis/rbac/validation (rules, role references and subjects; not the
roleRef immutability of updates).
"""

from __future__ import annotations

from collections.abc import Callable

from ...meta.validation import dns1123_subdomain_errors
from . import certificates, errors
from .resources import ADMISSION_GROUP, RBAC_GROUP, ResourceType
from .store import Obj
from .webhookconfig import MUTATING, VALIDATING, configuration_causes

Causes = list[dict[str, str]]


def _core_event(obj: Obj) -> Causes:
    involved = obj.get("involvedObject") or {}
    ns = obj["metadata"].get("namespace", "")
    involved_ns = involved.get("namespace") or ""
    if involved_ns and involved_ns != ns:
        return [
            errors.cause(
                "FieldValueInvalid",
                "involvedObject.namespace",
                f'Invalid value: "{involved_ns}": does not match event.namespace',
            )
        ]
    return []


def _events_v1(obj: Obj) -> Causes:
    causes = [
        errors.cause("FieldValueRequired", field, "Required value")
        for field in ("eventTime", "reportingController", "reportingInstance", "action", "reason")
        if not obj.get(field)
    ]
    if obj.get("type") not in ("Normal", "Warning"):
        causes.append(
            errors.cause(
                "FieldValueNotSupported",
                "type",
                f'Unsupported value: "{obj.get("type", "")}": supported values:'
                ' "Normal", "Warning"',
            )
        )
    regarding_ns = (obj.get("regarding") or {}).get("namespace") or ""
    if regarding_ns and regarding_ns != obj["metadata"].get("namespace", ""):
        causes.append(
            errors.cause(
                "FieldValueInvalid",
                "regarding.namespace",
                f'Invalid value: "{regarding_ns}": does not match event.namespace',
            )
        )
    return causes


def _lease(obj: Obj) -> Causes:
    spec = obj.get("spec") or {}
    duration = spec.get("leaseDurationSeconds")
    if duration is not None and (not isinstance(duration, int) or duration <= 0):
        return [
            errors.cause(
                "FieldValueInvalid",
                "spec.leaseDurationSeconds",
                f"Invalid value: {duration}: must be greater than 0",
            )
        ]
    return []


_DEPLOYMENT_COUNTS = (
    "observedGeneration",
    "replicas",
    "updatedReplicas",
    "readyReplicas",
    "availableReplicas",
    "unavailableReplicas",
    "collisionCount",
)


def _deployment(obj: Obj) -> Causes:
    """ValidateDeploymentStatus (kubernetes pkg/apis/apps/validation): counts are
    non-negative and no subset count exceeds ``replicas`` (nor available exceed ready)."""
    status = obj.get("status") or {}
    count = {k: v if isinstance(v := status.get(k), int) else 0 for k in _DEPLOYMENT_COUNTS}
    causes = [
        errors.cause(
            "FieldValueInvalid",
            f"status.{k}",
            f"Invalid value: {v}: must be greater than or equal to 0",
        )
        for k, v in count.items()
        if isinstance(v, int) and v < 0
    ]
    for field in ("updatedReplicas", "readyReplicas", "availableReplicas"):
        if count[field] > count["replicas"]:
            causes.append(
                errors.cause(
                    "FieldValueInvalid",
                    f"status.{field}",
                    f"Invalid value: {count[field]}: cannot be greater than status.replicas",
                )
            )
    if count["availableReplicas"] > count["readyReplicas"]:
        causes.append(
            errors.cause(
                "FieldValueInvalid",
                "status.availableReplicas",
                f"Invalid value: {count['availableReplicas']}: cannot be greater than"
                " readyReplicas",
            )
        )
    return causes


def _required(field: str, detail: str = "") -> dict[str, str]:
    return errors.cause(
        "FieldValueRequired", field, f"Required value: {detail}" if detail else "Required value"
    )


def _pod(obj: Obj) -> Causes:
    """Every container names itself (pkg/apis/core/validation validateContainers; the rest
    of a pod's validation is not checked)."""
    spec = obj.get("spec") or {}
    return [
        _required(f"spec.{kind}[{index}].name")
        for kind in ("initContainers", "containers")
        for index, container in enumerate(spec.get(kind) or [])
        if isinstance(container, dict) and not container.get("name")
    ]


def _csi_storage_capacity(obj: Obj) -> Causes:
    """storageClassName is a DNS subdomain (pkg/apis/storage/validation
    ValidateCSIStorageCapacity; the rest is not checked)."""
    name = obj.get("storageClassName")
    value = name if isinstance(name, str) else ""
    return [
        errors.cause("FieldValueInvalid", "storageClassName", f'Invalid value: "{value}": {text}')
        for text in dns1123_subdomain_errors(value)
    ]


def _not_supported(field: str, value: object, supported: tuple[str, ...]) -> dict[str, str]:
    allowed = ", ".join(f'"{s}"' for s in supported)
    return errors.cause(
        "FieldValueNotSupported",
        field,
        f'Unsupported value: "{value}": supported values: {allowed}',
    )


def _rules(namespaced: bool) -> Callable[[Obj], Causes]:
    """ValidatePolicyRule for each of a Role's or ClusterRole's rules."""

    def validate(obj: Obj) -> Causes:
        causes: Causes = []
        for i, rule in enumerate(obj.get("rules") or []):
            path = f"rules[{i}]"
            if not rule.get("verbs"):
                causes.append(_required(f"{path}.verbs", "verbs must contain at least one value"))
            if rule.get("nonResourceURLs"):
                if namespaced:
                    causes.append(
                        errors.cause(
                            "FieldValueInvalid",
                            f"{path}.nonResourceURLs",
                            "Invalid value: namespaced rules cannot apply to non-resource URLs",
                        )
                    )
                continue
            if not rule.get("apiGroups"):
                causes.append(
                    _required(
                        f"{path}.apiGroups", "resource rules must supply at least one api group"
                    )
                )
            if not rule.get("resources"):
                causes.append(
                    _required(
                        f"{path}.resources", "resource rules must supply at least one resource"
                    )
                )
        return causes

    return validate


def _binding(namespaced: bool) -> Callable[[Obj], Causes]:
    """ValidateRoleBinding / ValidateClusterRoleBinding: the role reference and subjects."""
    kinds = ("Role", "ClusterRole") if namespaced else ("ClusterRole",)

    def validate(obj: Obj) -> Causes:
        causes: Causes = []
        ref = obj.get("roleRef") or {}
        if ref.get("apiGroup") != RBAC_GROUP:
            causes.append(
                _not_supported("roleRef.apiGroup", ref.get("apiGroup", ""), (RBAC_GROUP,))
            )
        if ref.get("kind") not in kinds:
            causes.append(_not_supported("roleRef.kind", ref.get("kind", ""), kinds))
        if not ref.get("name"):
            causes.append(_required("roleRef.name"))
        for i, subject in enumerate(obj.get("subjects") or []):
            path = f"subjects[{i}]"
            if not subject.get("name"):
                causes.append(_required(f"{path}.name"))
            kind, group = subject.get("kind"), subject.get("apiGroup", "")
            if kind == "ServiceAccount":
                if group:
                    causes.append(_not_supported(f"{path}.apiGroup", group, ("",)))
                if not namespaced and not subject.get("namespace"):
                    causes.append(_required(f"{path}.namespace"))
            elif kind in ("User", "Group"):
                if group != RBAC_GROUP:
                    causes.append(_not_supported(f"{path}.apiGroup", group, (RBAC_GROUP,)))
            else:
                causes.append(
                    _not_supported(f"{path}.kind", kind or "", ("ServiceAccount", "User", "Group"))
                )
        return causes

    return validate


_TYPED_SECRET_KEYS = {
    "kubernetes.io/tls": ("tls.crt", "tls.key"),
    "kubernetes.io/dockerconfigjson": (".dockerconfigjson",),
    "kubernetes.io/dockercfg": (".dockercfg",),
    "kubernetes.io/ssh-auth": ("ssh-privatekey",),
}


def _secret(obj: Obj) -> Causes:
    """The data keys a typed Secret needs (pkg/apis/core/validation ValidateSecret)."""
    data = obj.get("data") or {}
    required = _TYPED_SECRET_KEYS.get(str(obj.get("type") or ""), ())
    return [
        errors.cause("FieldValueRequired", f"data[{key}]", "Required value")
        for key in required
        if key not in data
    ]


def _service(obj: Obj) -> Causes:
    """A Service's port names (pkg/apis/core/validation ``validateServicePort``): each is
    required when there is more than one port, and unique."""
    ports = (obj.get("spec") or {}).get("ports") or []
    causes: Causes = []
    seen: set[str] = set()
    for i, port in enumerate(ports):
        name = str((port or {}).get("name") or "")
        field = f"spec.ports[{i}].name"
        if not name:
            if len(ports) > 1:
                causes.append(errors.cause("FieldValueRequired", field, "Required value"))
            continue
        if name in seen:
            causes.append(errors.cause("FieldValueDuplicate", field, f'Duplicate value: "{name}"'))
        seen.add(name)
    return causes


def update_causes(rt: ResourceType, new: Obj, old: Obj) -> Causes:
    """Causes of kind-specific update validation: immutable ConfigMaps and Secrets, a
    Secret's type (pkg/apis/core/validation ValidateConfigMapUpdate/ValidateSecretUpdate)."""
    if rt.group != "" or rt.plural not in ("configmaps", "secrets"):
        return []
    causes: Causes = []
    if rt.plural == "secrets" and (new.get("type") or "Opaque") != (old.get("type") or "Opaque"):
        causes.append(
            errors.cause(
                "FieldValueInvalid",
                "type",
                f'Invalid value: "{new.get("type")}": field is immutable',
            )
        )
    if old.get("immutable") is True:
        forbidden = "Forbidden: field is immutable when `immutable` is set"
        for field in ("immutable", "data", "binaryData"):
            if new.get(field) != old.get(field):
                causes.append(errors.cause("FieldValueForbidden", field, forbidden))
    return causes


_VALIDATORS: dict[tuple[str, str], Callable[[Obj], Causes]] = {
    ("", "secrets"): _secret,
    ("", "services"): _service,
    ("", "pods"): _pod,
    ("storage.k8s.io", "csistoragecapacities"): _csi_storage_capacity,
    (certificates.GROUP, certificates.PLURAL): certificates.causes,
    ("apps", "deployments"): _deployment,
    ("", "events"): _core_event,
    ("events.k8s.io", "events"): _events_v1,
    ("coordination.k8s.io", "leases"): _lease,
    (RBAC_GROUP, "roles"): _rules(namespaced=True),
    (RBAC_GROUP, "clusterroles"): _rules(namespaced=False),
    (RBAC_GROUP, "rolebindings"): _binding(namespaced=True),
    (RBAC_GROUP, "clusterrolebindings"): _binding(namespaced=False),
    (ADMISSION_GROUP, VALIDATING): lambda obj: configuration_causes(obj, mutating=False),
    (ADMISSION_GROUP, MUTATING): lambda obj: configuration_causes(obj, mutating=True),
}


def kind_causes(rt: ResourceType, obj: Obj) -> Causes:
    """Field causes of kind-specific validation (empty for kinds without rules)."""
    validator = _VALIDATORS.get((rt.group, rt.plural))
    return validator(obj) if validator else []
