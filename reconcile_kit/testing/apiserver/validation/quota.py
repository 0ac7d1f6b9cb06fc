"""Validation of core/v1 ResourceQuotas and LimitRanges (kubernetes
pkg/apis/core/validation ValidateResourceQuota, ValidateResourceQuotaUpdate,
ValidateResourceQuotaStatusUpdate and ValidateLimitRange): quota resource names and
quantities, scopes and scope selectors (immutable scopes); limit types, resource names
and the order of min, max, defaults and ratios. Go ranges over maps (random order): the
resources are checked in name order here."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from ....meta.validation import qualified_name_errors
from ..gofmt import go_quote
from ..quantity import QuantityError, amount, canonical
from ..store import Obj
from .common import (
    Causes,
    Validator,
    Write,
    as_dict,
    as_list,
    duplicate,
    forbidden,
    invalid,
    required,
)
from .gorender import quantity
from .resources import STANDARD, container_name_causes, overcommit_allowed

_QUOTA_STANDARD = frozenset(STANDARD - {"storage"})
_INTEGER = frozenset(
    {"pods", "services", "replicationcontrollers", "resourcequotas", "secrets"}
    | {"configmaps", "persistentvolumeclaims", "services.nodeports", "services.loadbalancers"}
)
_SCOPES = (
    "Terminating",
    "NotTerminating",
    "BestEffort",
    "NotBestEffort",
    "PriorityClass",
    "CrossNamespacePodAffinity",
)
_POD_RESOURCES = frozenset(
    {"pods", "cpu", "memory", "limits.cpu", "limits.memory", "requests.cpu", "requests.memory"}
)
_CONFLICTS = (("BestEffort", "NotBestEffort"), ("Terminating", "NotTerminating"))
_EXISTS_ONLY = (
    "must be 'Exists' when scope is any of ResourceQuotaScopeTerminating,"
    " ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort,"
    " ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity"
)
_LIMIT_TYPES = ("Pod", "Container", "PersistentVolumeClaim")


def _amount(value: Any) -> Fraction | None:
    try:
        return amount(canonical(value, True))
    except QuantityError:
        return None


def _text(value: Any) -> str:
    return canonical(value, True)


def resource_name_causes(name: str, field: str) -> Causes:
    """validateResourceName: a qualified name, standard unless it has a domain."""
    causes = [invalid(field, name, m, rendered=True) for m in qualified_name_errors(name)]
    standard = name in STANDARD or name.startswith(("hugepages-", "requests.hugepages-"))
    if not causes and "/" not in name and not standard:
        detail = "must be a standard resource type or fully qualified"
        causes.append(invalid(field, name, detail, rendered=True))
    return causes


def _standard_quota(name: str) -> bool:
    return name in _QUOTA_STANDARD or name.startswith(("hugepages-", "requests.hugepages-"))


def _integer(name: str) -> bool:
    """helper.IsIntegerResourceName: the object counts and extended resources."""
    native = "/" not in name or "kubernetes.io/" in name
    extended = not native and not name.startswith("requests.")
    return name in _INTEGER or (extended and not qualified_name_errors(f"requests.{name}"))


def _quota_entry(name: str, value: Any, field: str) -> Causes:
    """ValidateResourceQuotaResourceName and ValidateResourceQuantityValue."""
    causes = resource_name_causes(name, field)
    if "/" not in name and not _standard_quota(name):
        causes.append(invalid(field, name, "must be a standard resource for quota", rendered=True))
    return causes + quantity_value_causes(name, value, field)


def quantity_value_causes(name: str, value: Any, field: str) -> Causes:
    """ValidateResourceQuantityValue: not negative, whole for integer resources."""
    number = _amount(value)
    causes: Causes = []
    if number is not None and number < 0:
        causes.append(invalid(field, _text(value), "must be greater than or equal to 0"))
    if number is not None and _integer(name) and math.ceil(number * 1000) % 1000:
        causes.append(invalid(field, quantity(value, True), "must be an integer", rendered=True))
    return causes


def _resources(values: Any, field: str) -> Causes:
    causes: Causes = []
    values = as_dict(values)
    for name in sorted(values):
        causes += _quota_entry(name, values[name], f"{field}[{name}]")
    return causes


def _valid_for(scope: str, name: str) -> bool:
    """IsResourceQuotaScopeValidForResource."""
    if scope == "BestEffort":
        return name == "pods"
    return scope not in _SCOPES or name in _POD_RESOURCES


def _misapplied(scope: str, hard: list[str]) -> int:
    return sum(1 for name in hard if _standard_quota(name) and not _valid_for(scope, name))


def _scopes_value(scopes: Any) -> str:
    if not isinstance(scopes, list):
        return "[]core.ResourceQuotaScope(nil)"
    return "[]core.ResourceQuotaScope{" + ", ".join(go_quote(str(s)) for s in scopes) + "}"


def _conflicts(scopes: set[str], field: str, shown: str) -> Causes:
    return [
        invalid(field, shown, "conflicting scopes", rendered=True)
        for pair in _CONFLICTS
        if set(pair) <= scopes
    ]


def _scopes(spec: Obj) -> Causes:
    """validateResourceQuotaScopes."""
    scopes = [str(s) for s in as_list(spec.get("scopes"))]
    shown, hard = _scopes_value(spec.get("scopes")), sorted(as_dict(spec.get("hard")))
    causes: Causes = []
    for scope in scopes:
        if scope not in _SCOPES:
            causes.append(invalid("spec.scopes", shown, "unsupported scope", rendered=True))
        detail = "unsupported scope applied to resource"
        causes += [invalid("spec.scopes", shown, detail, rendered=True)] * _misapplied(scope, hard)
    return causes + _conflicts(set(scopes), "spec.scopes", shown)


def _selector_value(selector: dict[str, Any]) -> str:
    """A core.ScopeSelector as Go's ``%#v`` prints it."""
    items = []
    for req in as_list(selector.get("matchExpressions")):
        req = as_dict(req)
        values = req.get("values")
        rendered = (
            "[]string{" + ", ".join(go_quote(str(v)) for v in values) + "}"
            if isinstance(values, list)
            else "[]string(nil)"
        )
        scope, operator = (
            go_quote(str(req.get("scopeName") or "")),
            go_quote(str(req.get("operator") or "")),
        )
        items.append(
            f"core.ScopedResourceSelectorRequirement{{ScopeName:{scope},"
            f" Operator:{operator}, Values:{rendered}}}"
        )
    inner = "[]core.ScopedResourceSelectorRequirement{" + ", ".join(items) + "}"
    if selector.get("matchExpressions") is None:
        inner = "[]core.ScopedResourceSelectorRequirement(nil)"
    return f"core.ScopeSelector{{MatchExpressions:{inner}}}"


def _requirement(req: dict[str, Any], hard: list[str], selector: str, field: str) -> Causes:
    scope, operator = str(req.get("scopeName") or ""), str(req.get("operator") or "")
    values = as_list(req.get("values"))
    causes: Causes = []
    if scope not in _SCOPES:
        causes.append(invalid(f"{field}.scopeName", scope, "unsupported scope"))
    detail = "unsupported scope applied to resource"
    causes += [invalid(field, selector, detail, rendered=True)] * _misapplied(scope, hard)
    if scope in _SCOPES and scope != "PriorityClass" and operator != "Exists":
        causes.append(invalid(f"{field}.operator", operator, _EXISTS_ONLY))
    if operator in ("In", "NotIn") and not values:
        detail = "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"
        causes.append(required(f"{field}.values", detail))
    elif operator in ("Exists", "DoesNotExist") and values:
        detail = "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"
        shown = "[]string{" + ", ".join(go_quote(str(v)) for v in values) + "}"
        causes.append(invalid(f"{field}.values", shown, detail, rendered=True))
    elif operator not in ("In", "NotIn", "Exists", "DoesNotExist"):
        causes.append(invalid(f"{field}.operator", operator, "not a valid selector operator"))
    return causes


def _scope_selector(spec: Obj) -> Causes:
    """validateScopeSelector."""
    selector = spec.get("scopeSelector")
    if not isinstance(selector, dict):
        return []
    field, hard = "spec.scopeSelector.matchExpressions", sorted(as_dict(spec.get("hard")))
    shown, causes, scopes = _selector_value(selector), [], set()
    for req in as_list(selector.get("matchExpressions")):
        causes += _requirement(as_dict(req), hard, shown, field)
        scopes.add(str(as_dict(req).get("scopeName") or ""))
    return causes + _conflicts(scopes, field, _scopes_value(spec.get("scopes")))


def _quota(write: Write) -> Causes:
    if write.subresource == "status":
        status = as_dict(write.obj.get("status"))
        hard = _resources(status.get("hard"), "status.hard")
        return hard + _resources(status.get("used"), "status.used")
    if write.subresource:
        return []
    spec = as_dict(write.obj.get("spec"))
    causes = _resources(spec.get("hard"), "spec.hard") + _scopes(spec) + _scope_selector(spec)
    if write.old is None:
        return causes
    old = sorted(str(s) for s in as_list(as_dict(write.old.get("spec")).get("scopes")))
    if sorted(set(str(s) for s in as_list(spec.get("scopes")))) != sorted(set(old)):
        shown = _scopes_value(spec.get("scopes"))
        causes.append(invalid("spec.scopes", shown, "field is immutable", rendered=True))
    return causes


def _limit_type(kind: str, field: str) -> Causes:
    """validateLimitRangeTypeName."""
    causes = [invalid(field, kind, m) for m in qualified_name_errors(kind)]
    if not causes and "/" not in kind and kind not in _LIMIT_TYPES:
        causes.append(invalid(field, kind, "must be a standard limit type or fully qualified"))
    return causes


def _names(kind: str, values: dict[str, Any], field: str) -> Causes:
    """validateLimitRangeResourceName of each resource."""
    check = container_name_causes if kind in ("Pod", "Container") else resource_name_causes
    causes: Causes = []
    for name in sorted(values):
        causes += check(name, f"{field}[{name}]")
    return causes


_REQ = "defaultRequest"
_ORDER: tuple[tuple[str, str, str, str, str], ...] = (
    # (lower bound, upper bound, the field reported, the value shown, the message)
    ("min", "max", "min", "min", "min value {0} is greater than max value {1}"),
    ("min", _REQ, _REQ, _REQ, "min value {0} is greater than default request value {1}"),
    (_REQ, "max", _REQ, _REQ, "default request value {0} is greater than max value {1}"),
    (
        _REQ,
        "default",
        _REQ,
        _REQ,
        "default request value {0} is greater than default limit value {1}",
    ),
    ("min", "default", "default", "min", "min value {0} is greater than default value {1}"),
    ("default", "max", "default", "max", "default value {0} is greater than max value {1}"),
)


def _bounds(item: dict[str, dict[str, Any]], name: str, field: str) -> Causes:
    causes: Causes = []
    for lower, upper, at, shown, message in _ORDER:
        low, high = item[lower].get(name), item[upper].get(name)
        if low is None or high is None or (_amount(low) or 0) <= (_amount(high) or 0):
            continue
        value = quantity(item[shown][name], True)
        detail = message.format(_text(low), _text(high))
        causes.append(invalid(f"{field}.{at}[{name}]", value, detail, rendered=True))
    return causes


def _ratio(item: dict[str, dict[str, Any]], name: str, field: str) -> Causes:
    ratio = item["maxLimitRequestRatio"].get(name)
    if ratio is None:
        return []
    path, shown, value = f"{field}.maxLimitRequestRatio[{name}]", _text(ratio), _amount(ratio)
    causes: Causes = []
    if value is not None and value < 1:
        detail = f"ratio {shown} is less than 1"
        causes.append(invalid(path, quantity(ratio, True), detail, rendered=True))
    low, high = _amount(item["min"].get(name)), _amount(item["max"].get(name))
    if value is not None and low and high is not None:
        limit = math.ceil(high * 1000) / math.ceil(low * 1000)
        if math.ceil(value * 1000) / 1000 > limit:
            detail = f"ratio {shown} is greater than max/min = {limit:f}"
            causes.append(invalid(path, quantity(ratio, True), detail, rendered=True))
    return causes


def _overcommit(item: dict[str, dict[str, Any]], name: str, field: str) -> Causes:
    default, request = item["default"].get(name), item["defaultRequest"].get(name)
    if overcommit_allowed(name) or default is None or request is None:
        return []
    if _amount(default) == _amount(request):
        return []
    detail = (
        f"default value {_text(default)} must equal to defaultRequest value {_text(request)}"
        f" in {name}"
    )
    shown = quantity(request, True)
    return [invalid(f"{field}.defaultRequest[{name}]", shown, detail, rendered=True)]


_KEYS = ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio")


def _limit(limit: dict[str, Any], field: str, kinds: set[str]) -> Causes:
    kind = str(limit.get("type") or "")
    causes = _limit_type(kind, f"{field}.type")
    if kind in kinds:
        causes.append(duplicate(f"{field}.type", kind))
    kinds.add(kind)
    item = {key: as_dict(limit.get(key)) for key in _KEYS}
    causes += _names(kind, item["max"], f"{field}.max") + _names(kind, item["min"], f"{field}.min")
    if kind == "Pod":
        why = "may not be specified when `type` is 'Pod'"
        causes += [forbidden(f"{field}.{key}", why) for key in _KEYS[2:4] if item[key]]
        item["default"], item["defaultRequest"] = {}, {}
    causes += _names(kind, item["default"], f"{field}.default")
    causes += _names(kind, item["defaultRequest"], f"{field}.defaultRequest")
    if kind == "PersistentVolumeClaim" and "storage" not in item["min"] | item["max"]:
        why = "either minimum or maximum storage value is required, but neither was provided"
        causes.append(required(f"{field}.limits", why))
    causes += _names(kind, item["maxLimitRequestRatio"], f"{field}.maxLimitRequestRatio")
    for name in sorted(set().union(*item.values())):
        causes += _bounds(item, name, field) + _ratio(item, name, field)
        causes += _overcommit(item, name, field)
    return causes


def _limit_range(write: Write) -> Causes:
    """ValidateLimitRange (on create and update)."""
    causes: Causes = []
    kinds: set[str] = set()
    for i, limit in enumerate(as_list(as_dict(write.obj.get("spec")).get("limits"))):
        causes += _limit(as_dict(limit), f"spec.limits[{i}]", kinds)
    return causes


VALIDATORS: dict[tuple[str, str], Validator] = {
    ("", "resourcequotas"): _quota,
    ("", "limitranges"): _limit_range,
}
