"""HorizontalPodAutoscaler's two served versions: kube-apiserver stores autoscaling/v2 and
serves autoscaling/v1 too, converting as k8s.io/kubernetes pkg/apis/autoscaling/v1
conversion.go does. The v1 form has one metric, ``targetCPUUtilizationPercentage`` (a
Resource cpu Utilization metric); the others, the current metrics, the behavior and the
conditions travel in the ``autoscaling.alpha.kubernetes.io/...`` annotations, which
the v2 form never has. Objects are stored as v2 (the internal form, which validation
checks, is v2's); :func:`served_form` and :func:`storage_form` convert.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

from .quantity import QuantityError, canonical
from .resources import ResourceType
from .store import Obj

GROUP = "autoscaling"
PLURAL = "horizontalpodautoscalers"
V1 = "autoscaling/v1"
V2 = "autoscaling/v2"
METRICS = "autoscaling.alpha.kubernetes.io/metrics"
CURRENT_METRICS = "autoscaling.alpha.kubernetes.io/current-metrics"
BEHAVIOR = "autoscaling.alpha.kubernetes.io/behavior"
CONDITIONS = "autoscaling.alpha.kubernetes.io/conditions"
_ROUND_TRIP = (METRICS, BEHAVIOR, CURRENT_METRICS, CONDITIONS)
_STATUS = (CURRENT_METRICS, CONDITIONS)
DEFAULT_CPU_UTILIZATION = 80
_SOURCES = ("object", "pods", "resource", "containerResource", "external")
"""A v1 MetricSpec's (and MetricStatus's) sources, in the Go struct's field order."""


class _Undecodable(ValueError):
    """An annotation json.Unmarshal refuses: conversion ignores the whole annotation."""


def handles(rt: ResourceType) -> bool:
    """Whether ``rt`` is a version of the HorizontalPodAutoscaler."""
    return rt.builtin and (rt.group, rt.plural) == (GROUP, PLURAL)


def converts(rt: ResourceType) -> bool:
    """Whether ``rt`` serves the HorizontalPodAutoscaler in a version it is not stored in."""
    return handles(rt) and rt.api_version == V1


def served_form(rt: ResourceType, obj: Obj) -> Obj:
    """A HorizontalPodAutoscaler (stored, or in either version) as ``rt`` serves it: a v1
    object goes through the internal (v2) form, as kube-apiserver's always does."""
    if rt.api_version == V1:
        return to_v1(to_v2(obj) if obj.get("apiVersion") == V1 else obj)
    if obj.get("apiVersion") == V1:
        return to_v2(obj)
    return obj if obj.get("apiVersion") == V2 else {**obj, "apiVersion": V2}


def storage_form(obj: Obj) -> Obj:
    """A HorizontalPodAutoscaler in either version as stored (v2); behavior that an
    annotation carried gets v2's read defaults, as the stored object has once read."""
    if obj.get("apiVersion") != V1:
        return obj
    stored = to_v2(obj)
    behavior = (stored.get("spec") or {}).get("behavior")
    if isinstance(behavior, dict):
        behavior["scaleUp"] = scaling_rules(behavior.get("scaleUp"), up=True)
        behavior["scaleDown"] = scaling_rules(behavior.get("scaleDown"), up=False)
    return stored


def scaling_rules(rules: Any, up: bool) -> Obj:
    """GenerateHPAScaleUpRules / GenerateHPAScaleDownRules: the defaults, overridden by
    what the given rules set."""
    policies = (
        [
            {"type": "Pods", "value": 4, "periodSeconds": 15},
            {"type": "Percent", "value": 100, "periodSeconds": 15},
        ]
        if up
        else [{"type": "Percent", "value": 100, "periodSeconds": 15}]
    )
    out: Obj = {"selectPolicy": "Max", "policies": policies}
    if up:
        out["stabilizationWindowSeconds"] = 0
    for key in ("selectPolicy", "stabilizationWindowSeconds", "policies"):
        if isinstance(rules, dict) and rules.get(key) is not None:
            out[key] = rules[key]
    return out


# --- v2 -> v1 ---------------------------------------------------------------------------------


def _go_json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _ref_v1(ref: Any) -> Obj:
    """A CrossVersionObjectReference: kind and name always, apiVersion when set."""
    ref = ref if isinstance(ref, dict) else {}
    out: Obj = {"kind": ref.get("kind") or "", "name": ref.get("name") or ""}
    if ref.get("apiVersion"):
        out["apiVersion"] = ref["apiVersion"]
    return out


def _selector(selector: Any) -> Obj | None:
    """A LabelSelector as Go encodes it (matchLabels' keys sorted)."""
    if not isinstance(selector, dict):
        return None
    out: Obj = {}
    if selector.get("matchLabels"):
        out["matchLabels"] = dict(sorted(selector["matchLabels"].items()))
    if selector.get("matchExpressions"):
        out["matchExpressions"] = [
            {
                "key": e.get("key") or "",
                "operator": e.get("operator") or "",
                **({"values": e["values"]} if e.get("values") else {}),
            }
            for e in selector["matchExpressions"]
        ]
    return out


def _put(out: Obj, key: str, value: Any) -> None:
    if value is not None:
        out[key] = value


def _metric_v1(metric: Obj) -> Obj:
    """Convert_autoscaling_MetricSpec_To_v1_MetricSpec."""
    out: Obj = {"type": metric.get("type") or ""}
    source = metric.get("object")
    if isinstance(source, dict):
        target, ident = source.get("target") or {}, source.get("metric") or {}
        item: Obj = {
            "target": _ref_v1(source.get("describedObject")),
            "metricName": ident.get("name") or "",
            "targetValue": target.get("value") or "0",
        }
        _put(item, "selector", _selector(ident.get("selector")))
        _put(item, "averageValue", target.get("averageValue"))
        out["object"] = item
    source = metric.get("pods")
    if isinstance(source, dict):
        target, ident = source.get("target") or {}, source.get("metric") or {}
        item = {
            "metricName": ident.get("name") or "",
            "targetAverageValue": target.get("averageValue") or "0",
        }
        _put(item, "selector", _selector(ident.get("selector")))
        out["pods"] = item
    for key in ("resource", "containerResource"):
        source = metric.get(key)
        if isinstance(source, dict):
            target = source.get("target") or {}
            item = {"name": source.get("name") or ""}
            _put(item, "targetAverageUtilization", target.get("averageUtilization"))
            _put(item, "targetAverageValue", target.get("averageValue"))
            if key == "containerResource":
                item["container"] = source.get("container") or ""
            out[key] = item
    source = metric.get("external")
    if isinstance(source, dict):
        target, ident = source.get("target") or {}, source.get("metric") or {}
        item = {"metricName": ident.get("name") or ""}
        _put(item, "metricSelector", _selector(ident.get("selector")))
        _put(item, "targetValue", target.get("value"))
        _put(item, "targetAverageValue", target.get("averageValue"))
        out["external"] = item
    return out


def _status_v1(metric: Obj) -> Obj:
    """Convert_autoscaling_MetricStatus_To_v1_MetricStatus."""
    out: Obj = {"type": metric.get("type") or ""}
    source = metric.get("object")
    if isinstance(source, dict):
        current, ident = source.get("current") or {}, source.get("metric") or {}
        item: Obj = {
            "target": _ref_v1(source.get("describedObject")),
            "metricName": ident.get("name") or "",
            "currentValue": current.get("value") or "0",
        }
        _put(item, "selector", _selector(ident.get("selector")))
        _put(item, "averageValue", current.get("averageValue"))
        out["object"] = item
    source = metric.get("pods")
    if isinstance(source, dict):
        current, ident = source.get("current") or {}, source.get("metric") or {}
        item = {
            "metricName": ident.get("name") or "",
            "currentAverageValue": current.get("averageValue") or "0",
        }
        _put(item, "selector", _selector(ident.get("selector")))
        out["pods"] = item
    for key in ("resource", "containerResource"):
        source = metric.get(key)
        if isinstance(source, dict):
            current = source.get("current") or {}
            item = {"name": source.get("name") or ""}
            _put(item, "currentAverageUtilization", current.get("averageUtilization"))
            item["currentAverageValue"] = current.get("averageValue") or "0"
            if key == "containerResource":
                item["container"] = source.get("container") or ""
            out[key] = item
    source = metric.get("external")
    if isinstance(source, dict):
        current, ident = source.get("current") or {}, source.get("metric") or {}
        item = {"metricName": ident.get("name") or ""}
        _put(item, "metricSelector", _selector(ident.get("selector")))
        item["currentValue"] = current.get("value") or "0"
        _put(item, "currentAverageValue", current.get("averageValue"))
        out["external"] = item
    return out


def _rules_internal(rules: Any) -> Obj | None:
    """autoscaling.HPAScalingRules as json.Marshal writes the internal type (no tags)."""
    if not isinstance(rules, dict):
        return None
    policies = rules.get("policies")
    return {
        "StabilizationWindowSeconds": rules.get("stabilizationWindowSeconds"),
        "SelectPolicy": rules.get("selectPolicy"),
        "Policies": None
        if policies is None
        else [
            {
                "Type": p.get("type") or "",
                "Value": p.get("value") or 0,
                "PeriodSeconds": p.get("periodSeconds") or 0,
            }
            for p in policies
        ],
    }


def _condition_v1(condition: Obj) -> Obj:
    out: Obj = {
        "type": condition.get("type") or "",
        "status": condition.get("status") or "",
        "lastTransitionTime": condition.get("lastTransitionTime"),
    }
    for key in ("reason", "message"):
        if condition.get(key):
            out[key] = condition[key]
    return out


def _is_cpu_utilization(metric: Any, field: str) -> bool:
    if not isinstance(metric, dict) or metric.get("type") != "Resource":
        return False
    source = metric.get("resource")
    return (
        isinstance(source, dict)
        and source.get("name") == "cpu"
        and (source.get(field) or {}).get("averageUtilization") is not None
    )


def to_v1(obj: Obj) -> Obj:
    """Convert_autoscaling_HorizontalPodAutoscaler_To_v1_HorizontalPodAutoscaler."""
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    meta = copy.deepcopy(obj.get("metadata") or {})
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k not in _ROUND_TRIP}
    metrics = [m for m in spec.get("metrics") or [] if isinstance(m, dict)]
    others = [_metric_v1(m) for m in metrics if not _is_cpu_utilization(m, "target")]
    current = [m for m in status.get("currentMetrics") or [] if isinstance(m, dict)]
    conditions = [c for c in status.get("conditions") or [] if isinstance(c, dict)]
    if others:
        annotations[METRICS] = _go_json(others)
    if current:
        annotations[CURRENT_METRICS] = _go_json([_status_v1(m) for m in current])
    behavior = spec.get("behavior")
    if isinstance(behavior, dict):
        annotations[BEHAVIOR] = _go_json(
            {
                "ScaleUp": _rules_internal(behavior.get("scaleUp")),
                "ScaleDown": _rules_internal(behavior.get("scaleDown")),
            }
        )
    if conditions:
        annotations[CONDITIONS] = _go_json([_condition_v1(c) for c in conditions])
    if annotations:
        meta["annotations"] = annotations
    else:
        meta.pop("annotations", None)
    spec_v1: Obj = {"scaleTargetRef": copy.deepcopy(spec.get("scaleTargetRef") or {})}
    _put(spec_v1, "minReplicas", spec.get("minReplicas"))
    spec_v1["maxReplicas"] = spec.get("maxReplicas") or 0
    cpu = next((m for m in metrics if _is_cpu_utilization(m, "target")), None)
    if cpu is not None:
        spec_v1["targetCPUUtilizationPercentage"] = cpu["resource"]["target"]["averageUtilization"]
    status_v1: Obj = {}
    _put(status_v1, "observedGeneration", status.get("observedGeneration"))
    _put(status_v1, "lastScaleTime", status.get("lastScaleTime"))
    status_v1["currentReplicas"] = status.get("currentReplicas") or 0
    status_v1["desiredReplicas"] = status.get("desiredReplicas") or 0
    for metric in current:  # the last CPU utilization wins
        if _is_cpu_utilization(metric, "current"):
            status_v1["currentCPUUtilizationPercentage"] = metric["resource"]["current"][
                "averageUtilization"
            ]
    out: Obj = {"kind": obj.get("kind") or "HorizontalPodAutoscaler", "apiVersion": V1}
    out["metadata"] = meta
    out["spec"] = spec_v1
    out["status"] = status_v1
    return out


# --- v1 -> v2 ---------------------------------------------------------------------------------


def _field(data: Obj, name: str) -> Any:
    """json.Unmarshal's field match: exact, else case-insensitive."""
    if name in data:
        return data[name]
    lowered = name.lower()
    for key, value in data.items():
        if key.lower() == lowered:
            return value
    return None


def _str(data: Obj, name: str) -> str:
    value = _field(data, name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _Undecodable(name)
    return value


def _int(data: Obj, name: str) -> int | None:
    value = _field(data, name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not -(2**31) <= value < 2**31:
        raise _Undecodable(name)
    return value


def _obj(data: Any, name: str) -> Obj | None:
    value = _field(data, name) if isinstance(data, dict) else None
    if value is None:
        return None
    if not isinstance(value, dict):
        raise _Undecodable(name)
    return value


def _quantity(data: Obj, name: str, zero: bool = False) -> str | None:
    value = _field(data, name)
    if value is None:
        return "0" if zero else None
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        raise _Undecodable(name)
    try:
        return canonical(value)
    except QuantityError:
        raise _Undecodable(name) from None


def _ident(name: str, selector: Obj | None) -> Obj:
    out: Obj = {"name": name}
    _put(out, "selector", _selector(selector))
    return out


def _ref_v2(data: Obj | None) -> Obj:
    data = data or {}
    return _ref_v1(
        {
            "kind": _str(data, "kind"),
            "name": _str(data, "name"),
            "apiVersion": _str(data, "apiVersion"),
        }
    )


def _metric_v2(metric: Any) -> Obj:
    """Convert_v1_MetricSpec_To_autoscaling_MetricSpec (of an annotation's item)."""
    if not isinstance(metric, dict):
        raise _Undecodable("metric")
    out: Obj = {"type": _str(metric, "type")}
    source = _obj(metric, "object")
    if source is not None:
        average = _quantity(source, "averageValue")
        target: Obj = {"type": "Value" if average is None else "AverageValue"}
        target["value"] = _quantity(source, "targetValue", zero=True)
        _put(target, "averageValue", average)
        out["object"] = {
            "describedObject": _ref_v2(_obj(source, "target")),
            "target": target,
            "metric": _ident(_str(source, "metricName"), _obj(source, "selector")),
        }
    source = _obj(metric, "pods")
    if source is not None:
        out["pods"] = {
            "metric": _ident(_str(source, "metricName"), _obj(source, "selector")),
            "target": {
                "type": "AverageValue",
                "averageValue": _quantity(source, "targetAverageValue", zero=True),
            },
        }
    for key in ("resource", "containerResource"):
        source = _obj(metric, key)
        if source is not None:
            utilization = _int(source, "targetAverageUtilization")
            target = {"type": "AverageValue" if utilization is None else "Utilization"}
            _put(target, "averageUtilization", utilization)
            _put(target, "averageValue", _quantity(source, "targetAverageValue"))
            item: Obj = {"name": _str(source, "name"), "target": target}
            if key == "containerResource":
                item["container"] = _str(source, "container")
            out[key] = item
    source = _obj(metric, "external")
    if source is not None:
        value = _quantity(source, "targetValue")
        target = {"type": "AverageValue" if value is None else "Value"}
        _put(target, "value", value)
        _put(target, "averageValue", _quantity(source, "targetAverageValue"))
        out["external"] = {
            "metric": _ident(_str(source, "metricName"), _obj(source, "metricSelector")),
            "target": target,
        }
    return out


def _status_v2(metric: Any) -> Obj:
    """Convert_v1_MetricStatus_To_autoscaling_MetricStatus (of an annotation's item)."""
    if not isinstance(metric, dict):
        raise _Undecodable("metric")
    out: Obj = {"type": _str(metric, "type")}
    source = _obj(metric, "object")
    if source is not None:
        current: Obj = {"value": _quantity(source, "currentValue", zero=True)}
        _put(current, "averageValue", _quantity(source, "averageValue"))
        out["object"] = {
            "metric": _ident(_str(source, "metricName"), _obj(source, "selector")),
            "current": current,
            "describedObject": _ref_v2(_obj(source, "target")),
        }
    source = _obj(metric, "pods")
    if source is not None:
        out["pods"] = {
            "metric": _ident(_str(source, "metricName"), _obj(source, "selector")),
            "current": {"averageValue": _quantity(source, "currentAverageValue", zero=True)},
        }
    for key in ("resource", "containerResource"):
        source = _obj(metric, key)
        if source is not None:
            current = {"averageValue": _quantity(source, "currentAverageValue", zero=True)}
            _put(current, "averageUtilization", _int(source, "currentAverageUtilization"))
            item: Obj = {"name": _str(source, "name"), "current": current}
            if key == "containerResource":
                item["container"] = _str(source, "container")
            out[key] = item
    source = _obj(metric, "external")
    if source is not None:
        current = {"value": _quantity(source, "currentValue", zero=True)}
        _put(current, "averageValue", _quantity(source, "currentAverageValue"))
        out["external"] = {
            "metric": _ident(_str(source, "metricName"), _obj(source, "metricSelector")),
            "current": current,
        }
    return out


def _rules_v2(rules: Any) -> Obj | None:
    if rules is None:
        return None
    if not isinstance(rules, dict):
        raise _Undecodable("rules")
    out: Obj = {}
    _put(out, "stabilizationWindowSeconds", _int(rules, "StabilizationWindowSeconds"))
    policy = _field(rules, "SelectPolicy")
    if policy is not None:
        if not isinstance(policy, str):
            raise _Undecodable("SelectPolicy")
        out["selectPolicy"] = policy
    policies = _field(rules, "Policies")
    if policies is not None:
        if not isinstance(policies, list) or not all(isinstance(p, dict) for p in policies):
            raise _Undecodable("Policies")
        out["policies"] = [
            {
                "type": _str(p, "Type"),
                "value": _int(p, "Value") or 0,
                "periodSeconds": _int(p, "PeriodSeconds") or 0,
            }
            for p in policies
        ]
    return out


def _condition_v2(condition: Any) -> Obj:
    if not isinstance(condition, dict):
        raise _Undecodable("condition")
    out: Obj = {"type": _str(condition, "type"), "status": _str(condition, "status")}
    when = _field(condition, "lastTransitionTime")
    if when is not None and not isinstance(when, str):
        raise _Undecodable("lastTransitionTime")
    out["lastTransitionTime"] = when or None
    for key in ("reason", "message"):
        value = _str(condition, key)
        if value:
            out[key] = value
    return out


def _decoded_list(annotations: Obj, key: str, convert: Callable[[Any], Obj]) -> list[Obj] | None:
    """The annotation ``key`` json.Unmarshal-ed into a list and converted; None when it is
    missing or does not decode (the conversion ignores it then)."""
    try:
        value = json.loads(annotations[key])
        if value is None:
            return []
        return [convert(item) for item in value] if isinstance(value, list) else None
    except (KeyError, TypeError, ValueError):  # _Undecodable is a ValueError
        return None


def to_v2(obj: Obj) -> Obj:
    """Convert_v1_HorizontalPodAutoscaler_To_autoscaling_HorizontalPodAutoscaler, then the
    internal object as v2 encodes it."""
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    meta = copy.deepcopy(obj.get("metadata") or {})
    annotations = meta.get("annotations") or {}
    metrics: list[Obj] = []
    if spec.get("targetCPUUtilizationPercentage") is not None:
        target = {
            "type": "Utilization",
            "averageUtilization": spec["targetCPUUtilizationPercentage"],
        }
        metrics = [{"type": "Resource", "resource": {"name": "cpu", "target": target}}]
    others = _decoded_list(annotations, METRICS, _metric_v2)
    if others is not None:
        metrics = others + metrics[:1]
    spec_v2: Obj = {"scaleTargetRef": copy.deepcopy(spec.get("scaleTargetRef") or {})}
    _put(spec_v2, "minReplicas", spec.get("minReplicas"))
    spec_v2["maxReplicas"] = spec.get("maxReplicas") or 0
    try:
        behavior = json.loads(annotations[BEHAVIOR])
        if isinstance(behavior, dict):
            up = _rules_v2(_field(behavior, "ScaleUp"))
            down = _rules_v2(_field(behavior, "ScaleDown"))
            if up is not None or down is not None:
                spec_v2["behavior"] = {
                    k: v for k, v in (("scaleUp", up), ("scaleDown", down)) if v is not None
                }
    except (KeyError, TypeError, ValueError):  # _Undecodable is a ValueError
        pass
    current: list[Obj] | None = None
    if status.get("currentCPUUtilizationPercentage") is not None:
        utilization = {"averageUtilization": status["currentCPUUtilizationPercentage"]}
        current = [{"type": "Resource", "resource": {"name": "cpu", "current": utilization}}]
    recorded = _decoded_list(annotations, CURRENT_METRICS, _status_v2)
    if recorded is not None:
        current = recorded
    if not metrics:
        target = {"type": "Utilization", "averageUtilization": DEFAULT_CPU_UTILIZATION}
        metrics = [{"type": "Resource", "resource": {"name": "cpu", "target": target}}]
    spec_v2["metrics"] = metrics
    conditions = _decoded_list(annotations, CONDITIONS, _condition_v2)
    status_v2: Obj = {}
    _put(status_v2, "observedGeneration", status.get("observedGeneration"))
    _put(status_v2, "lastScaleTime", status.get("lastScaleTime"))
    if status.get("currentReplicas"):
        status_v2["currentReplicas"] = status["currentReplicas"]
    status_v2["desiredReplicas"] = status.get("desiredReplicas") or 0
    status_v2["currentMetrics"] = current
    if conditions:
        status_v2["conditions"] = conditions
    kept = {k: v for k, v in annotations.items() if k not in _ROUND_TRIP}
    if kept:
        meta["annotations"] = kept
    else:
        meta.pop("annotations", None)
    out: Obj = {"kind": obj.get("kind") or "HorizontalPodAutoscaler", "apiVersion": V2}
    out["metadata"] = meta
    out["spec"] = spec_v2
    out["status"] = status_v2
    return out


# --- the v1 form of a write ---------------------------------------------------------------


def normalize(obj: Obj) -> None:
    """A decoded autoscaling/v1 object as kube-apiserver sees it once converted to the
    internal form (in place): the round-trip annotations, ``targetCPUUtilizationPercentage``
    (80 when no metric is given) and ``currentCPUUtilizationPercentage`` as converting it
    back gives them; the other fields (unknown ones included) are left for the decoder.
    The status annotations stay as sent: regenerated, they would be read again when the
    object is stored, and turn the status the write sets into another (a current CPU
    utilization would gain a zero average value)."""
    view = to_v1(to_v2(obj))
    meta = obj.setdefault("metadata", {})
    sent = meta.get("annotations") or {}
    annotations = {
        **{
            k: v for k, v in (view["metadata"].get("annotations") or {}).items() if k not in _STATUS
        },
        **{k: v for k, v in sent.items() if k in _STATUS},
    }
    _same(meta, {"annotations": annotations} if annotations else {}, "annotations")
    _same(obj.setdefault("spec", {}), view["spec"], "targetCPUUtilizationPercentage")
    if isinstance(obj.get("status"), dict) or "currentCPUUtilizationPercentage" in view["status"]:
        status = obj.setdefault("status", {})
        _same(status, view["status"], "currentCPUUtilizationPercentage")


def _same(target: Obj, source: Obj, key: str) -> None:
    if key in source:
        target[key] = source[key]
    else:
        target.pop(key, None)


def _keep_annotations(new: Obj, old: Obj, keys: tuple[str, ...]) -> None:
    """``new`` takes ``old``'s values of the annotations ``keys`` (a field the strategy
    resets, carried by them in the v1 form)."""
    if new.get("apiVersion") != V1:
        return
    meta = new.setdefault("metadata", {})
    annotations = dict(meta.get("annotations") or {})
    before = (old.get("metadata") or {}).get("annotations") or {}
    for key in keys:
        annotations.pop(key, None)
        if key in before:
            annotations[key] = before[key]
    if annotations:
        meta["annotations"] = annotations
    else:
        meta.pop("annotations", None)


def prepare_create(obj: Obj) -> None:
    """PrepareForCreate clears the status: in the v1 form its annotations too."""
    _keep_annotations(obj, {}, (CURRENT_METRICS, CONDITIONS))


def prepare_update(new: Obj, old: Obj) -> None:
    """PrepareForUpdate keeps the stored status: in the v1 form its annotations too."""
    _keep_annotations(new, old, (CURRENT_METRICS, CONDITIONS))


def prepare_status_update(new: Obj, old: Obj) -> None:
    """The status strategy keeps the stored spec: in the v1 form its annotations too."""
    _keep_annotations(new, old, (METRICS, BEHAVIOR))
