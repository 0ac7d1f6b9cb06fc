"""Validation of ``/status`` writes shared by several kinds: load balancer ingress points
(kubernetes pkg/apis/core/validation ValidateLoadBalancerStatus, networking's
ValidateIngressLoadBalancerStatus), metav1 conditions (apimachinery ValidateConditions),
non-negative counts (ValidateNonnegativeField)."""

from __future__ import annotations

import re
from typing import Any

from ....meta.validation import dns1123_subdomain_errors, qualified_name_errors
from .common import (
    Causes,
    duplicate,
    forbidden,
    invalid,
    invalids,
    not_supported,
    required,
    too_long,
)
from .rules import ip_causes, is_ip

_REASON_FMT = "[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?"
_REASON_MSG = (
    "a condition reason must start with alphabetic character, optionally followed by a string"
    " of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'"
    " (e.g. 'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or"
    " 'ReasonA:ReasonB', regex used for validation is '" + _REASON_FMT + "')"
)


def load_balancer_ingress(points: list[Any], path: str, ip_mode: bool) -> Causes:
    """Each ingress point's ip, ipMode (core only: ``ip_mode``) and hostname."""
    causes: Causes = []
    for i, point in enumerate(points):
        where = f"{path}[{i}]"
        address, mode = str(point.get("ip") or ""), point.get("ipMode")
        if address:
            causes += ip_causes(f"{where}.ip", address)
        if ip_mode and mode is None and address:
            causes.append(required(f"{where}.ipMode", "must be specified when `ip` is set"))
        elif ip_mode and mode is not None and not address:
            causes.append(forbidden(f"{where}.ipMode", "may not be specified when `ip` is not set"))
        elif ip_mode and mode is not None and mode not in ("Proxy", "VIP"):
            causes.append(not_supported(f"{where}.ipMode", mode, ("Proxy", "VIP")))
        host = str(point.get("hostname") or "")
        if host:
            causes += invalids(f"{where}.hostname", host, dns1123_subdomain_errors(host))
            if is_ip(host):
                why = "must be a DNS name, not an IP address"
                causes.append(invalid(f"{where}.hostname", host, why))
    return causes


def nonnegative(status: dict[str, Any], path: str, fields: tuple[str, ...]) -> Causes:
    return [
        invalid(f"{path}.{f}", status[f], "must be greater than or equal to 0")
        for f in fields
        if isinstance(status.get(f), int) and status[f] < 0
    ]


def conditions(items: list[Any], path: str) -> Causes:
    """ValidateConditions: unique types, then each condition's fields."""
    causes: Causes = []
    seen: set[str] = set()
    for i, item in enumerate(items):
        where = f"{path}[{i}]"
        kind = str(item.get("type") or "")
        if kind in seen:
            causes.append(duplicate(f"{where}.type", kind))
        seen.add(kind)
        causes += invalids(f"{where}.type", kind, qualified_name_errors(kind))
        status = item.get("status") or ""
        if status not in ("False", "True", "Unknown"):
            causes.append(not_supported(f"{where}.status", status, ("False", "True", "Unknown")))
        generation = item.get("observedGeneration") or 0
        if generation < 0:
            why = "must be greater than or equal to zero"
            causes.append(invalid(f"{where}.observedGeneration", generation, why))
        if not item.get("lastTransitionTime"):
            causes.append(required(f"{where}.lastTransitionTime", "must be set"))
        causes += _reason(str(item.get("reason") or ""), f"{where}.reason")
        if len(str(item.get("message") or "").encode()) > 32 * 1024:
            causes.append(too_long(f"{where}.message", 32 * 1024))
    return causes


def _reason(reason: str, path: str) -> Causes:
    if not reason:
        return [required(path, "must be set")]
    causes = [] if re.fullmatch(_REASON_FMT, reason) else [invalid(path, reason, _REASON_MSG)]
    if len(reason.encode()) > 1024:
        causes.append(too_long(path, 1024))
    return causes
