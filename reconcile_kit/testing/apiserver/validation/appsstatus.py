"""Status updates of apps/v1 workloads (kubernetes pkg/apis/apps/validation
ValidateDeploymentStatusUpdate, ValidateReplicaSetStatus, ValidateDaemonSetStatusUpdate,
ValidateStatefulSetStatusUpdate): counts non-negative, subset counts within the total, the
collision count never decremented."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .common import Causes, invalid, nonnegative

_TOTAL = "cannot be greater than status.replicas"


def _count(status: dict[str, Any], key: str) -> int:
    value = status.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _counts(status: dict[str, Any], keys: tuple[str, ...]) -> Causes:
    causes: Causes = []
    for key in keys:
        causes += nonnegative(f"status.{key}", status.get(key))
    return causes


def _above(status: dict[str, Any], key: str, limit: str, detail: str) -> Causes:
    if _count(status, key) > _count(status, limit):
        return [invalid(f"status.{key}", _count(status, key), detail)]
    return []


def _collisions(status: dict[str, Any], old: dict[str, Any]) -> Causes:
    """IsDecremented: a collision count lowered (or removed)."""
    before = old.get("collisionCount")
    after = status.get("collisionCount")
    if isinstance(before, int) and (not isinstance(after, int) or after < before):
        value = after if isinstance(after, int) else 0
        return [invalid("status.collisionCount", value, "cannot be decremented")]
    return []


def _deployment(status: dict[str, Any], old: dict[str, Any]) -> Causes:
    keys = (
        "observedGeneration",
        "replicas",
        "updatedReplicas",
        "readyReplicas",
        "availableReplicas",
        "unavailableReplicas",
        "collisionCount",
    )
    causes = _counts(status, keys)
    for key in ("updatedReplicas", "readyReplicas", "availableReplicas"):
        causes += _above(status, key, "replicas", _TOTAL)
    causes += _above(
        status, "availableReplicas", "readyReplicas", "cannot be greater than readyReplicas"
    )
    return causes + _collisions(status, old)


def _replicaset(status: dict[str, Any], old: dict[str, Any]) -> Causes:
    keys = (
        "replicas",
        "fullyLabeledReplicas",
        "readyReplicas",
        "availableReplicas",
        "observedGeneration",
    )
    causes = _counts(status, keys)
    for key in ("fullyLabeledReplicas", "readyReplicas", "availableReplicas"):
        causes += _above(status, key, "replicas", _TOTAL)
    return causes + _above(
        status, "availableReplicas", "readyReplicas", "cannot be greater than readyReplicas"
    )


def _daemonset(status: dict[str, Any], old: dict[str, Any]) -> Causes:
    keys = (
        "currentNumberScheduled",
        "numberMisscheduled",
        "desiredNumberScheduled",
        "numberReady",
        "observedGeneration",
        "updatedNumberScheduled",
        "numberAvailable",
        "numberUnavailable",
        "collisionCount",
    )
    return _counts(status, keys) + _collisions(status, old)


def _statefulset(status: dict[str, Any], old: dict[str, Any]) -> Causes:
    keys = (
        "replicas",
        "readyReplicas",
        "currentReplicas",
        "updatedReplicas",
        "availableReplicas",
        "observedGeneration",
        "collisionCount",
    )
    causes = _counts(status, keys)
    for key in ("readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas"):
        causes += _above(status, key, "replicas", _TOTAL)
    detail = "cannot be greater than status.readyReplicas"
    causes += _above(status, "availableReplicas", "readyReplicas", detail)
    return causes + _collisions(status, old)


STATUS_RULES: dict[str, Callable[[dict[str, Any], dict[str, Any]], Causes]] = {
    "deployments": _deployment,
    "replicasets": _replicaset,
    "daemonsets": _daemonset,
    "statefulsets": _statefulset,
}
