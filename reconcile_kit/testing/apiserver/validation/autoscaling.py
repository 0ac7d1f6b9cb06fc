"""Validation of autoscaling HorizontalPodAutoscalers (kubernetes
pkg/apis/autoscaling/validation ValidateHorizontalPodAutoscaler and its update), on the
autoscaling/v2 form the embedded server stores."""

from __future__ import annotations

from typing import Any

from ....meta.validation import path_segment_errors
from ..hpaversions import V1, to_v2
from ..quantity import QuantityError, amount
from ..store import Obj
from .common import (
    Causes,
    Validator,
    Write,
    forbidden,
    invalid,
    invalids,
    not_supported,
    required,
)
from .statuses import nonnegative

_SOURCES = ("ContainerResource", "External", "Object", "Pods", "Resource")
_SOURCE_FIELDS = {  # in the order validateMetricSpec looks at them
    "Object": "object",
    "External": "external",
    "Pods": "pods",
    "Resource": "resource",
    "ContainerResource": "containerResource",
}
_SELECT_POLICIES = ("Disabled", "Max", "Min")
_POLICY_TYPES = ("Percent", "Pods")
_MAX_PERIOD = 1800
_MAX_WINDOW = 3600


def _reference(ref: Any, path: str) -> Causes:
    """ValidateCrossVersionObjectReference: kind and name, path segment names."""
    ref = ref or {}
    causes: Causes = []
    for field in ("kind", "name"):
        value = str(ref.get(field) or "")
        if not value:
            causes.append(required(f"{path}.{field}"))
        else:
            causes += invalids(f"{path}.{field}", value, path_segment_errors(value))
    return causes


def _positive(value: Any) -> bool:
    try:
        return amount(value) > 0
    except QuantityError:
        return True


def _target(target: Any, path: str) -> Causes:
    """validateMetricTarget."""
    target = target or {}
    kind = target.get("type") or ""
    causes: Causes = []
    if not kind:
        causes.append(required(f"{path}.type", "must specify a metric target type"))
    if kind not in ("Utilization", "Value", "AverageValue"):
        causes.append(
            invalid(f"{path}.type", kind, "must be either Utilization, Value, or AverageValue")
        )
    for field in ("value", "averageValue"):
        if target.get(field) is not None and not _positive(target[field]):
            causes.append(invalid(f"{path}.{field}", str(target[field]), "must be positive"))
    utilization = target.get("averageUtilization")
    if utilization is not None and utilization < 1:
        causes.append(invalid(f"{path}.averageUtilization", utilization, "must be greater than 0"))
    return causes


def _identifier(metric: Any, path: str) -> Causes:
    name = str((metric or {}).get("name") or "")
    if not name:
        return [required(f"{path}.name", "must specify a metric name")]
    return invalids(f"{path}.name", name, path_segment_errors(name))


def _resource_source(src: Obj, path: str) -> Causes:
    """validateResourceSource (and the shared part of validateContainerResourceSource)."""
    causes: Causes = []
    if not src.get("name"):
        causes.append(required(f"{path}.name", "must specify a resource name"))
    if "container" in src and not src.get("container"):
        causes.append(required(f"{path}.container", "must specify a container"))
    target = src.get("target") or {}
    causes += _target(target, f"{path}.target")
    utilization, average = target.get("averageUtilization"), target.get("averageValue")
    if utilization is None and average is None:
        causes.append(
            required(
                f"{path}.target.averageUtilization",
                "must set either a target raw value or a target utilization",
            )
        )
    if utilization is not None and average is not None:
        causes.append(
            forbidden(
                f"{path}.target.averageValue",
                "may not set both a target raw value and a target utilization",
            )
        )
    return causes


def _metric_source(kind: str, src: Obj, path: str) -> Causes:
    """validateObjectSource, validateExternalSource, validatePodsSource, ..."""
    if kind in ("resource", "containerResource"):
        return _resource_source(src, path)
    causes: Causes = []
    if kind == "object":
        causes += _reference(src.get("describedObject"), f"{path}.describedObject")
    causes += _identifier(src.get("metric"), f"{path}.metric")
    target = src.get("target") or {}
    causes += _target(target, f"{path}.target")
    value, average = target.get("value"), target.get("averageValue")
    if kind == "object" and value is None and average is None:
        causes.append(
            required(
                f"{path}.target.averageValue", "must set either a target value or averageValue"
            )
        )
    if kind == "external" and value is None and average is None:
        causes.append(
            required(
                f"{path}.target.averageValue",
                "must set either a target value for metric or a per-pod target",
            )
        )
    if kind == "external" and value is not None and average is not None:
        causes.append(
            forbidden(
                f"{path}.target.value",
                "may not set both a target value for metric and a per-pod target",
            )
        )
    if kind == "pods" and average is None:
        causes.append(
            required(f"{path}.target.averageValue", "must specify a positive target averageValue")
        )
    return causes


def _metric(metric: Obj, path: str) -> Causes:
    """validateMetricSpec."""
    kind = metric.get("type") or ""
    causes: Causes = []
    if not kind:
        causes.append(required(f"{path}.type", "must specify a metric source type"))
    if kind not in _SOURCES:
        causes.append(not_supported(f"{path}.type", kind, _SOURCES))
    present = [f for f in _SOURCE_FIELDS.values() if metric.get(f) is not None]
    if present:
        causes += _metric_source(present[0], metric[present[0]], f"{path}.{present[0]}")
    expected = _SOURCE_FIELDS.get(kind)
    if expected is not None and metric.get(expected) is None:
        causes.append(
            required(f"{path}.{expected}", "must populate information for the given metric source")
        )
    if expected is None:
        causes.append(not_supported(f"{path}.type", kind, _SOURCES))
    if len(present) != 1:
        causes += [
            forbidden(f"{path}.{f}", "must populate the given metric source only")
            for f in present
            if f != expected
        ]
    return causes


def _rules(rules: Any, path: str) -> Causes:
    """validateScalingRules and validateScalingPolicy."""
    if not isinstance(rules, dict):
        return []
    causes: Causes = []
    window = rules.get("stabilizationWindowSeconds")
    if window is not None and window < 0:
        causes.append(
            invalid(
                f"{path}.stabilizationWindowSeconds",
                window,
                "must be greater than or equal to zero",
            )
        )
    if window is not None and window > _MAX_WINDOW:
        causes.append(
            invalid(
                f"{path}.stabilizationWindowSeconds",
                window,
                f"must be less than or equal to {_MAX_WINDOW}",
            )
        )
    select = rules.get("selectPolicy")
    if select is not None and select not in _SELECT_POLICIES:
        causes.append(not_supported(f"{path}.selectPolicy", select, _SELECT_POLICIES))
    policies = rules.get("policies") or []
    if not policies:
        causes.append(required(f"{path}.policies", "must specify at least one Policy"))
    for i, policy in enumerate(policies):
        causes += _policy(policy, f"{path}.policies[{i}]")
    return causes


def _policy(policy: Obj, path: str) -> Causes:
    causes: Causes = []
    kind = policy.get("type") or ""
    if kind not in _POLICY_TYPES:
        causes.append(not_supported(f"{path}.type", kind, _POLICY_TYPES))
    value, period = policy.get("value") or 0, policy.get("periodSeconds") or 0
    if value <= 0:
        causes.append(invalid(f"{path}.value", value, "must be greater than zero"))
    if period <= 0:
        causes.append(invalid(f"{path}.periodSeconds", period, "must be greater than zero"))
    if period > _MAX_PERIOD:
        causes.append(
            invalid(f"{path}.periodSeconds", period, f"must be less than or equal to {_MAX_PERIOD}")
        )
    return causes


def validate_hpa_spec(spec: Obj, min_bound: int) -> Causes:
    """validateHorizontalPodAutoscalerSpec."""
    causes: Causes = []
    low, high = spec.get("minReplicas"), spec.get("maxReplicas") or 0
    if low is not None and low < min_bound:
        causes.append(
            invalid("spec.minReplicas", low, f"must be greater than or equal to {min_bound}")
        )
    if high < 1:
        causes.append(invalid("spec.maxReplicas", high, "must be greater than 0"))
    if low is not None and high < low:
        causes.append(
            invalid("spec.maxReplicas", high, "must be greater than or equal to `minReplicas`")
        )
    causes += _reference(spec.get("scaleTargetRef"), "spec.scaleTargetRef")
    metrics = spec.get("metrics") or []
    for i, metric in enumerate(metrics):
        causes += _metric(metric, f"spec.metrics[{i}]")
    if low == 0 and not any(m.get("type") in ("Object", "External") for m in metrics):
        why = "must specify at least one Object or External metric to support scaling to zero"
        causes.append(forbidden("spec.metrics", why + " replicas"))
    behavior = spec.get("behavior") or {}
    causes += _rules(behavior.get("scaleUp"), "spec.behavior.scaleUp")
    causes += _rules(behavior.get("scaleDown"), "spec.behavior.scaleDown")
    return causes


def _hpa(write: Write) -> Causes:
    """HPAScaleToZero is off: minReplicas >= 1, unless the stored object has 0."""
    if write.obj.get("apiVersion") == V1:  # validated in the internal (v2) form
        old = None if write.old is None else to_v2(write.old)
        write = Write(to_v2(write.obj), old, write.subresource)
    if write.subresource == "status":  # ValidateHorizontalPodAutoscalerStatusUpdate
        status = write.obj.get("status") or {}
        return nonnegative(status, "status", ("currentReplicas", "desiredReplicas"))
    if write.subresource:
        return []
    stored_min = ((write.old or {}).get("spec") or {}).get("minReplicas")
    return validate_hpa_spec(write.obj.get("spec") or {}, 0 if stored_min == 0 else 1)


VALIDATORS: dict[tuple[str, str], Validator] = {
    ("autoscaling", "horizontalpodautoscalers"): _hpa,
}
