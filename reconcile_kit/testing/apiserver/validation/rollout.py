"""Update strategies of workloads (kubernetes pkg/apis/apps/validation
ValidateDeploymentStrategy, ValidateDaemonSetUpdateStrategy, the StatefulSet's update
strategy in ValidateStatefulSetSpec, and their int-or-percent fields)."""

from __future__ import annotations

import re
from typing import Any

from . import gorender
from .common import Causes, as_dict, forbidden, invalid, nonnegative, not_supported, required

_PERCENT = re.compile(r"[0-9]+%")
_PERCENT_MSG = (
    "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%', "
    " or '93%', regex used for validation is '[0-9]+%')"
)


def _int_value(value: Any) -> int:
    """getIntOrPercentValue: a valid percent's number, an integer, else 0."""
    if isinstance(value, str):
        if _PERCENT.fullmatch(value):
            return int(value[:-1])
        return int(value) if value.isdigit() else 0
    return value if isinstance(value, int) else 0


def positive_int_or_percent(value: Any, field: str) -> Causes:
    """ValidatePositiveIntOrPercent: a percent string, or an integer at least 0."""
    if isinstance(value, str):
        if _PERCENT.fullmatch(value):
            return []
        return [invalid(field, gorender.int_or_string(value), _PERCENT_MSG, rendered=True)]
    return nonnegative(field, value)


def _not_above_100(value: Any, field: str) -> Causes:
    if isinstance(value, str) and _PERCENT.fullmatch(value) and int(value[:-1]) > 100:
        rendered = gorender.int_or_string(value)
        return [invalid(field, rendered, "must not be greater than 100%", rendered=True)]
    return []


def _rolling_deployment(rolling: dict[str, Any], field: str) -> Causes:
    unavailable, surge = rolling.get("maxUnavailable"), rolling.get("maxSurge")
    causes = positive_int_or_percent(unavailable, f"{field}.maxUnavailable")
    causes += positive_int_or_percent(surge, f"{field}.maxSurge")
    if _int_value(unavailable) == 0 and _int_value(surge) == 0:
        rendered = gorender.int_or_string(unavailable)
        detail = "may not be 0 when `maxSurge` is 0"
        causes.append(invalid(f"{field}.maxUnavailable", rendered, detail, rendered=True))
    return causes + _not_above_100(unavailable, f"{field}.maxUnavailable")


def deployment_strategy(strategy: Any, field: str) -> Causes:
    """ValidateDeploymentStrategy: Recreate without rollingUpdate; RollingUpdate with
    valid maxUnavailable and maxSurge, not both 0."""
    strategy = as_dict(strategy)
    kind, rolling = strategy.get("type"), strategy.get("rollingUpdate")
    if kind == "Recreate":
        if rolling is not None:
            detail = "may not be specified when strategy `type` is 'Recreate'"
            return [forbidden(f"{field}.rollingUpdate", detail)]
        return []
    if kind == "RollingUpdate":
        if rolling is None:
            detail = "this should be defaulted and never be nil"
            return [required(f"{field}.rollingUpdate", detail)]
        return _rolling_deployment(as_dict(rolling), f"{field}.rollingUpdate")
    rendered = gorender.strategy("DeploymentStrategy", "RollingUpdateDeployment", strategy)
    return [not_supported(field, rendered, ("Recreate", "RollingUpdate"), rendered=True)]


def _rolling_daemonset(rolling: dict[str, Any], field: str) -> Causes:
    unavailable, surge = rolling.get("maxUnavailable"), rolling.get("maxSurge")
    causes = positive_int_or_percent(unavailable, f"{field}.maxUnavailable")
    causes += positive_int_or_percent(surge, f"{field}.maxSurge")
    causes += _not_above_100(unavailable, f"{field}.maxUnavailable")
    causes += _not_above_100(surge, f"{field}.maxSurge")
    has_unavailable, has_surge = _int_value(unavailable) != 0, _int_value(surge) != 0
    if has_unavailable and has_surge:
        rendered = gorender.int_or_string(surge)
        detail = "may not be set when maxUnavailable is non-zero"
        causes.append(invalid(f"{field}.maxSurge", rendered, detail, rendered=True))
    elif not has_unavailable and not has_surge:
        causes.append(required(f"{field}.maxUnavailable", "cannot be 0 when maxSurge is 0"))
    return causes


def daemonset_strategy(strategy: Any, field: str) -> Causes:
    """ValidateDaemonSetUpdateStrategy: OnDelete, or RollingUpdate with exactly one of
    maxUnavailable and maxSurge non-zero."""
    strategy = as_dict(strategy)
    kind = strategy.get("type")
    if kind == "OnDelete":
        return []
    if kind == "RollingUpdate":
        rolling = strategy.get("rollingUpdate")
        if rolling is None:
            return [required(f"{field}.rollingUpdate")]
        return _rolling_daemonset(as_dict(rolling), f"{field}.rollingUpdate")
    rendered = gorender.strategy("DaemonSetUpdateStrategy", "RollingUpdateDaemonSet", strategy)
    return [not_supported(field, rendered, ("RollingUpdate", "OnDelete"), rendered=True)]


def statefulset_strategy(strategy: Any, field: str) -> Causes:
    """The StatefulSet's updateStrategy: RollingUpdate (partition at least 0), or OnDelete
    without rollingUpdate."""
    strategy = as_dict(strategy)
    kind, rolling = strategy.get("type"), strategy.get("rollingUpdate")
    if not kind:
        return [required(field)]
    if kind == "OnDelete":
        if rolling is not None:
            # field.Invalid prints the pointer's struct (the internal type: partition int32)
            rolling = as_dict(rolling)
            partition = rolling.get("partition")
            max_unavailable = rolling.get("maxUnavailable")
            rendered = (
                "apps.RollingUpdateStatefulSetStrategy{"
                f"Partition:{partition if isinstance(partition, int) else 0},"
                f" MaxUnavailable:{gorender.go_value(max_unavailable, '*intstr.IntOrString')}}}"
            )
            detail = "only allowed for updateStrategy 'RollingUpdate'"
            return [invalid(f"{field}.rollingUpdate", rendered, detail, rendered=True)]
        return []
    if kind == "RollingUpdate":
        if rolling is None:
            return []
        return nonnegative(f"{field}.rollingUpdate.partition", as_dict(rolling).get("partition"))
    rendered = gorender.strategy(
        "StatefulSetUpdateStrategy", "RollingUpdateStatefulSetStrategy", strategy
    )
    detail = "must be 'RollingUpdate' or 'OnDelete'"
    return [invalid(field, rendered, detail, rendered=True)]
