"""Kind-specific validation of built-in objects (the parts clients depend on).

Sources: kubernetes pkg/apis/core/validation (Event), pkg/apis/events/validation,
pkg/apis/apps/validation (Deployment status).
"""

from __future__ import annotations

from collections.abc import Callable

from . import errors
from .resources import ResourceType
from .store import Obj

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


_VALIDATORS: dict[tuple[str, str], Callable[[Obj], Causes]] = {
    ("apps", "deployments"): _deployment,
    ("", "events"): _core_event,
    ("events.k8s.io", "events"): _events_v1,
    ("coordination.k8s.io", "leases"): _lease,
}


def kind_causes(rt: ResourceType, obj: Obj) -> Causes:
    """Field causes of kind-specific validation (empty for kinds without rules)."""
    validator = _VALIDATORS.get((rt.group, rt.plural))
    return validator(obj) if validator else []
