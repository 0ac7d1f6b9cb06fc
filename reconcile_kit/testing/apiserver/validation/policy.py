"""Validation of policy/v1 PodDisruptionBudgets (kubernetes pkg/apis/policy/validation
ValidatePodDisruptionBudget; the strategy's options allow invalid label values in the
selector on an update when the stored one has them)."""

from __future__ import annotations

from typing import Any

from ..store import Obj
from .common import Causes, GoText, Validator, Write, invalid, not_supported
from .rules import label_selector_causes, percent_errors
from .statuses import conditions, nonnegative

_EVICTION_POLICIES = ("AlwaysAllow", "IfHealthyBudget")


def int_or_string(value: Any) -> GoText:
    """The ``%#v`` of an intstr.IntOrString."""
    if isinstance(value, str):
        return GoText(f'intstr.IntOrString{{Type:1, IntVal:0, StrVal:"{value}"}}')
    return GoText(f'intstr.IntOrString{{Type:0, IntVal:{value}, StrVal:""}}')


def positive_int_or_percent(value: Any, path: str) -> Causes:
    """apps validation ValidatePositiveIntOrPercent and IsNotMoreThan100Percent."""
    if isinstance(value, str):
        causes = [invalid(path, int_or_string(value), m) for m in percent_errors(value)]
        if not causes and int(value[:-1]) > 100:
            causes.append(invalid(path, int_or_string(value), "must not be greater than 100%"))
        return causes
    if isinstance(value, int) and value < 0:
        return [invalid(path, value, "must be greater than or equal to 0")]
    return []


def _spec_text(spec: Obj) -> GoText:
    """The ``%#v`` of the PodDisruptionBudgetSpec (pointers print as addresses)."""
    return GoText(
        "policy.PodDisruptionBudgetSpec{MinAvailable:(*intstr.IntOrString)(0x),"
        " Selector:"
        + (
            "(*v1.LabelSelector)(0x)"
            if spec.get("selector") is not None
            else "(*v1.LabelSelector)(nil)"
        )
        + ", MaxUnavailable:(*intstr.IntOrString)(0x), UnhealthyPodEvictionPolicy:"
        + (
            "(*policy.UnhealthyPodEvictionPolicyType)(0x)}"
            if spec.get("unhealthyPodEvictionPolicy") is not None
            else "(*policy.UnhealthyPodEvictionPolicyType)(nil)}"
        )
    )


def _pdb(write: Write) -> Causes:
    if write.subresource == "status":  # ValidatePodDisruptionBudgetStatusUpdate (policy/v1)
        status = write.obj.get("status") or {}
        counts = ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods")
        return conditions(status.get("conditions") or [], "status.conditions") + nonnegative(
            status, "status", counts
        )
    if write.subresource:
        return []
    spec = write.obj.get("spec") or {}
    causes: Causes = []
    low, high = spec.get("minAvailable"), spec.get("maxUnavailable")
    if low is not None and high is not None:
        causes.append(
            invalid("spec", _spec_text(spec), "minAvailable and maxUnavailable cannot be both set")
        )
    if low is not None:
        causes += positive_int_or_percent(low, "spec.minAvailable")
    if high is not None:
        causes += positive_int_or_percent(high, "spec.maxUnavailable")
    old_selector = ((write.old or {}).get("spec") or {}).get("selector")
    lax = write.old is not None and bool(label_selector_causes("", old_selector))
    causes += label_selector_causes("spec.selector", spec.get("selector"), lax)
    policy = spec.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in _EVICTION_POLICIES:
        causes.append(not_supported("spec.unhealthyPodEvictionPolicy", policy, _EVICTION_POLICIES))
    return causes


VALIDATORS: dict[tuple[str, str], Validator] = {
    ("policy", "poddisruptionbudgets"): _pdb,
}

__all__ = ["VALIDATORS", "int_or_string", "positive_int_or_percent"]
