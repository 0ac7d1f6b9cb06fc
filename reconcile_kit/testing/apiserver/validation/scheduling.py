"""A pod spec's scheduling constraints (kubernetes pkg/apis/core/validation
ValidateTolerations, validateAffinity and the node selector rules they call)."""

from __future__ import annotations

from typing import Any

from ....meta.validation import label_value_errors, qualified_name_errors
from .common import (
    Causes,
    as_dict,
    as_list,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
)
from .selectors import selector_causes

_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def _key_causes(key: str, field: str) -> Causes:
    return [invalid(field, key, message) for message in qualified_name_errors(key)]


def _toleration_causes(toleration: dict[str, Any], field: str) -> Causes:
    key, operator = str(toleration.get("key") or ""), str(toleration.get("operator") or "")
    value, effect = str(toleration.get("value") or ""), str(toleration.get("effect") or "")
    causes = _key_causes(key, f"{field}.key") if key else []
    if not key and operator != "Exists":
        detail = (
            'operator must be Exists when `key` is empty, which means "match all values and'
            ' all keys"'
        )
        causes.append(invalid(f"{field}.operator", operator, detail))
    if toleration.get("tolerationSeconds") is not None and effect != "NoExecute":
        detail = "effect must be 'NoExecute' when `tolerationSeconds` is set"
        causes.append(invalid(f"{field}.effect", effect, detail))
    if operator in ("Equal", ""):
        errs = label_value_errors(value)
        if errs:
            causes.append(invalid(f"{field}.operator", value, ";".join(errs)))
    elif operator == "Exists":
        if value:
            detail = "value must be empty when `operator` is 'Exists'"
            causes.append(invalid(f"{field}.operator", value, detail))
    else:
        causes.append(not_supported(f"{field}.operator", operator, ("Equal", "Exists")))
    if effect and effect not in _EFFECTS:
        causes.append(not_supported(f"{field}.effect", effect, _EFFECTS))
    return causes


def tolerations_causes(tolerations: list[Any], field: str) -> Causes:
    """ValidateTolerations: keys, operators, values and effects that go together."""
    causes: Causes = []
    for i, toleration in enumerate(tolerations):
        causes += _toleration_causes(as_dict(toleration), f"{field}[{i}]")
    return causes


def _node_requirement_causes(req: dict[str, Any], field: str) -> Causes:
    """ValidateNodeSelectorRequirement (label values not checked: required node affinity
    allows invalid ones)."""
    operator, values = str(req.get("operator") or ""), as_list(req.get("values"))
    causes: Causes = []
    if operator in ("In", "NotIn") and not values:
        detail = "must be specified when `operator` is 'In' or 'NotIn'"
        causes.append(required(f"{field}.values", detail))
    elif operator in ("Exists", "DoesNotExist") and values:
        detail = "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
        causes.append(forbidden(f"{field}.values", detail))
    elif operator in ("Gt", "Lt") and len(values) != 1:
        detail = "must be specified single value when `operator` is 'Lt' or 'Gt'"
        causes.append(required(f"{field}.values", detail))
    elif operator not in ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"):
        causes.append(invalid(f"{field}.operator", operator, "not a valid selector operator"))
    return causes + _key_causes(str(req.get("key") or ""), f"{field}.key")


def _term_causes(term: dict[str, Any], field: str) -> Causes:
    causes: Causes = []
    for j, req in enumerate(as_list(term.get("matchExpressions"))):
        causes += _node_requirement_causes(as_dict(req), f"{field}.matchExpressions[{j}]")
    return causes


def node_selector_causes(selector: Any, field: str) -> Causes:
    """ValidateNodeSelector: at least one term, each term's requirements."""
    path = f"{field}.nodeSelectorTerms"
    terms = as_list(as_dict(selector).get("nodeSelectorTerms"))
    causes: Causes = []
    if not terms:
        causes.append(required(path, "must have at least one node selector term"))
    for i, term in enumerate(terms):
        causes += _term_causes(as_dict(term), f"{path}[{i}]")
    return causes


def _node_affinity_causes(affinity: dict[str, Any], field: str) -> Causes:
    causes: Causes = []
    required_terms = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if required_terms is not None:
        path = f"{field}.requiredDuringSchedulingIgnoredDuringExecution"
        causes += node_selector_causes(required_terms, path)
    preferred = as_list(affinity.get("preferredDuringSchedulingIgnoredDuringExecution"))
    for i, item in enumerate(preferred):
        item, path = as_dict(item), f"{field}.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
        weight = item.get("weight", 0)
        if isinstance(weight, int) and not 0 < weight <= 100:
            causes.append(invalid(f"{path}.weight", weight, "must be in the range 1-100"))
        causes += _term_causes(as_dict(item.get("preference")), f"{path}.preference")
    return causes


def _pod_term_causes(term: dict[str, Any], field: str) -> Causes:
    causes = selector_causes(term.get("labelSelector"), f"{field}.labelSelector")
    topology = str(term.get("topologyKey") or "")
    if not topology:
        causes.append(required(f"{field}.topologyKey", "can not be empty"))
    return causes + _key_causes(topology, f"{field}.topologyKey")


def _pod_affinity_causes(affinity: dict[str, Any], field: str) -> Causes:
    causes: Causes = []
    path = f"{field}.requiredDuringSchedulingIgnoredDuringExecution"
    for i, term in enumerate(
        as_list(affinity.get("requiredDuringSchedulingIgnoredDuringExecution"))
    ):
        causes += _pod_term_causes(as_dict(term), f"{path}[{i}]")
    path = f"{field}.preferredDuringSchedulingIgnoredDuringExecution"
    for i, item in enumerate(
        as_list(affinity.get("preferredDuringSchedulingIgnoredDuringExecution"))
    ):
        item = as_dict(item)
        weight = item.get("weight", 0)
        if isinstance(weight, int) and not 0 < weight <= 100:
            causes.append(invalid(f"{path}[{i}].weight", weight, "must be in the range 1-100"))
        causes += _pod_term_causes(
            as_dict(item.get("podAffinityTerm")), f"{path}[{i}].podAffinityTerm"
        )
    return causes


def affinity_causes(affinity: Any, field: str) -> Causes:
    """validateAffinity: node affinity terms, pod (anti-)affinity terms."""
    affinity = as_dict(affinity)
    causes: Causes = []
    if affinity.get("nodeAffinity") is not None:
        causes += _node_affinity_causes(as_dict(affinity["nodeAffinity"]), f"{field}.nodeAffinity")
    for kind in ("podAffinity", "podAntiAffinity"):
        if affinity.get(kind) is not None:
            causes += _pod_affinity_causes(as_dict(affinity[kind]), f"{field}.{kind}")
    return causes


_WHEN_UNSATISFIABLE = ("DoNotSchedule", "ScheduleAnyway")
_NODE_POLICIES = ("Honor", "Ignore")


def _spread_causes(constraint: dict[str, Any], rest: list[Any], field: str) -> Causes:
    skew, key = constraint.get("maxSkew") or 0, str(constraint.get("topologyKey") or "")
    action = str(constraint.get("whenUnsatisfiable") or "")
    causes: Causes = []
    if isinstance(skew, int) and skew <= 0:
        causes.append(invalid(f"{field}.maxSkew", skew, "must be greater than zero"))
    if not key:
        causes.append(required(f"{field}.topologyKey", "can not be empty"))
    if action not in _WHEN_UNSATISFIABLE:
        causes.append(not_supported(f"{field}.whenUnsatisfiable", action, _WHEN_UNSATISFIABLE))
    if any(
        as_dict(other).get("topologyKey") == key
        and str(as_dict(other).get("whenUnsatisfiable") or "") == action
        for other in rest
    ):
        path = f"{field}.{{topologyKey, whenUnsatisfiable}}"
        causes.append(duplicate(path, f"{{{key}, {action}}}"))
    causes += _min_domains_causes(constraint.get("minDomains"), action, f"{field}.minDomains")
    for policy_key in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
        policy = constraint.get(policy_key)
        if policy is not None and policy not in _NODE_POLICIES:
            causes.append(not_supported(f"{field}.{policy_key}", policy, _NODE_POLICIES))
    return causes + selector_causes(constraint.get("labelSelector"), f"{field}.labelSelector")


def _min_domains_causes(min_domains: Any, action: str, field: str) -> Causes:
    if not isinstance(min_domains, int):
        return []
    causes: Causes = []
    if min_domains <= 0:
        causes.append(invalid(field, min_domains, "must be greater than zero"))
    if action != "DoNotSchedule":
        detail = f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {action}"
        causes.append(invalid(field, min_domains, detail))
    return causes


def spread_causes(constraints: list[Any], field: str) -> Causes:
    """validateTopologySpreadConstraints: a positive maxSkew, a topology key, a supported
    action, no two constraints on the same key and action, minDomains, node policies, the
    label selector (matchLabelKeys not checked)."""
    causes: Causes = []
    for i, constraint in enumerate(constraints):
        causes += _spread_causes(as_dict(constraint), constraints[i + 1 :], f"{field}[{i}]")
    return causes
