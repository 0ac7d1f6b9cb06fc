"""Label selectors in workload specs: their validation (apimachinery
pkg/apis/meta/v1/validation ValidateLabelSelector) and whether they select a set of labels
(metav1.LabelSelectorAsSelector, then Matches)."""

from __future__ import annotations

from typing import Any

from ....meta.validation import label_value_errors, qualified_name_errors
from ..meta import label_causes
from .common import Causes, as_dict, as_list, forbidden, invalid, required

_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def _requirement_causes(req: dict[str, Any], field: str) -> Causes:
    """ValidateLabelSelectorRequirement: values as the operator needs them, a qualified key,
    label values."""
    operator, values = req.get("operator") or "", as_list(req.get("values"))
    causes: Causes = []
    if operator in ("In", "NotIn") and not values:
        detail = "must be specified when `operator` is 'In' or 'NotIn'"
        causes.append(required(f"{field}.values", detail))
    elif operator in ("Exists", "DoesNotExist") and values:
        detail = "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
        causes.append(forbidden(f"{field}.values", detail))
    elif operator not in _OPERATORS:
        causes.append(invalid(f"{field}.operator", operator, "not a valid selector operator"))
    key = str(req.get("key") or "")
    causes += [invalid(f"{field}.key", key, m) for m in qualified_name_errors(key)]
    for i, value in enumerate(values):
        text = str(value)
        causes += [invalid(f"{field}.values[{i}]", text, m) for m in label_value_errors(text)]
    return causes


def selector_causes(selector: Any, field: str) -> Causes:
    """ValidateLabelSelector (strict label values): matchLabels as labels, every
    matchExpressions requirement."""
    if not isinstance(selector, dict):
        return []
    causes = [
        {**cause, "field": f"{field}.matchLabels"}
        for cause in label_causes(selector.get("matchLabels"))
    ]
    for i, req in enumerate(as_list(selector.get("matchExpressions"))):
        causes += _requirement_causes(as_dict(req), f"{field}.matchExpressions[{i}]")
    return causes


def is_empty(selector: Any) -> bool:
    """No matchLabels and no matchExpressions (an ``{}`` selector selects everything)."""
    selector = as_dict(selector)
    return not selector.get("matchLabels") and not selector.get("matchExpressions")


def convertible(selector: Any) -> bool:
    """LabelSelectorAsSelector succeeds: every operator is known, In/NotIn have values."""
    for req in as_list(as_dict(selector).get("matchExpressions")):
        req = as_dict(req)
        operator = req.get("operator")
        if operator not in _OPERATORS:
            return False
        if operator in ("In", "NotIn") and not req.get("values"):
            return False
    return True


def _requirement_matches(req: dict[str, Any], labels: dict[str, Any]) -> bool:
    key, operator = req.get("key"), req.get("operator")
    values = as_list(req.get("values"))
    if operator == "In":
        return key in labels and labels[key] in values
    if operator == "NotIn":
        return key not in labels or labels[key] not in values
    if operator == "Exists":
        return key in labels
    return key not in labels


def matches(selector: Any, labels: Any) -> bool:
    """Whether ``selector`` selects ``labels``; a missing selector selects nothing
    (labels.Nothing), an empty one everything."""
    if not isinstance(selector, dict):
        return False
    labels = as_dict(labels)
    wanted = as_dict(selector.get("matchLabels"))
    if any(labels.get(k) != v for k, v in wanted.items()):
        return False
    expressions = as_list(selector.get("matchExpressions"))
    return all(_requirement_matches(as_dict(req), labels) for req in expressions)
