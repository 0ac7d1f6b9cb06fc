"""A container's resource requirements (kubernetes pkg/apis/core/validation
validateResourceRequirements): resource names (validateContainerResourceName), quantities
non-negative, integer resources whole, requests within limits, extended resources' requests
equal to their limits."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from ....meta.validation import qualified_name_errors
from .. import quantity
from .common import Causes, as_dict, invalid, required

_INTEGER_PREFIX = "hugepages-"
STANDARD = frozenset(
    {"cpu", "memory", "ephemeral-storage", "pods", "resourcequotas", "services"}
    | {"replicationcontrollers", "secrets", "configmaps", "persistentvolumeclaims"}
    | {"storage", "requests.storage", "services.nodeports", "services.loadbalancers"}
    | {f"{kind}.{name}" for kind in ("requests", "limits") for name in ("cpu", "memory")}
    | {"requests.ephemeral-storage", "limits.ephemeral-storage"}
)
"""helper.IsStandardResourceName's set (hugepages prefixes aside)."""
_CONTAINER = frozenset({"cpu", "memory", "ephemeral-storage"})


def container_name_causes(name: str, field: str) -> Causes:
    """validateContainerResourceName: a qualified name; without a domain, a standard
    resource and one a container can request; with one, native or an extended resource."""
    causes = [invalid(field, name, m, rendered=True) for m in qualified_name_errors(name)]
    standard = name in STANDARD or name.startswith(("hugepages-", "requests.hugepages-"))
    if not causes and "/" not in name and not standard:
        causes.append(
            invalid(
                field, name, "must be a standard resource type or fully qualified", rendered=True
            )
        )
    if "/" not in name:
        if name not in _CONTAINER and not name.startswith(_INTEGER_PREFIX):
            detail = "must be a standard resource for containers"
            causes.append(invalid(field, name, detail, rendered=True))
    elif "kubernetes.io/" not in name and not _extended(name):
        detail = "doesn't follow extended resource name standard"
        causes.append(invalid(field, name, detail, rendered=True))
    return causes


def _extended(name: str) -> bool:
    """helper.IsExtendedResourceName (for a name with a domain outside kubernetes.io)."""
    return not name.startswith("requests.") and not qualified_name_errors(f"requests.{name}")


def overcommit_allowed(name: str) -> bool:
    """helper.IsOvercommitAllowed: a native resource (no domain, or kubernetes.io/) that is
    not hugepages."""
    native = "/" not in name or "kubernetes.io/" in name
    return native and not name.startswith(_INTEGER_PREFIX)


def _value(raw: Any) -> tuple[Fraction, str] | None:
    """(amount, canonical text) of a quantity; None when it does not parse (decoding
    already refused such an object)."""
    try:
        return quantity.amount(raw), quantity.canonical(raw, resource_list=True)
    except quantity.QuantityError:
        return None


def _quantity_causes(name: str, raw: Any, field: str) -> Causes:
    """ValidateResourceQuantityValue: not negative; a whole number for extended resources."""
    parsed = _value(raw)
    if parsed is None:
        return []
    value, text = parsed
    if value < 0:
        return [invalid(field, text, "must be greater than or equal to 0")]
    return []


def requirements_causes(resources: dict[str, Any], field: str) -> Causes:
    """Limits and requests of one container, resources in name order (Go ranges over a
    map: its order is random)."""
    limits, requests = as_dict(resources.get("limits")), as_dict(resources.get("requests"))
    causes: Causes = []
    for name in sorted(limits):
        causes += container_name_causes(name, f"{field}.limits[{name}]")
        causes += _quantity_causes(name, limits[name], f"{field}.limits[{name}]")
    for name in sorted(requests):
        causes += container_name_causes(name, f"{field}.requests[{name}]")
        causes += _quantity_causes(name, requests[name], f"{field}.requests[{name}]")
        causes += _within_limit(name, requests[name], limits, field)
    return causes


def _within_limit(name: str, raw: Any, limits: dict[str, Any], field: str) -> Causes:
    request = _value(raw)
    if name not in limits:
        if overcommit_allowed(name):
            return []
        detail = "Limit must be set for non overcommitable resources"
        return [required(f"{field}.limits", detail)]
    limit = _value(limits[name])
    if request is None or limit is None:
        return []
    if request[0] != limit[0] and not overcommit_allowed(name):
        detail = f"must be equal to {name} limit of {limit[1]}"
        return [invalid(f"{field}.requests", request[1], detail)]
    if request[0] > limit[0]:
        detail = f"must be less than or equal to {name} limit of {limit[1]}"
        return [invalid(f"{field}.requests", request[1], detail)]
    return []
