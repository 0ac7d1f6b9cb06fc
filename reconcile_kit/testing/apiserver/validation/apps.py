"""Validation of apps/v1 kinds (kubernetes pkg/apis/apps/validation)."""

from __future__ import annotations

from .. import errors
from ..store import Obj
from .common import Causes, Validator, on_object

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


VALIDATORS: dict[tuple[str, str], Validator] = {
    ("apps", "deployments"): on_object(_deployment),
}
