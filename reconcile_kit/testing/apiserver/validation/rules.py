"""Value checks kube-apiserver's kind validation shares (apimachinery pkg/util/validation
and pkg/apis/meta/v1/validation): config keys, port names and numbers, IP addresses and
CIDRs, percentages, label maps and label selectors."""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from ....meta.validation import (
    DNS1123_SUBDOMAIN_FMT,
    dns1123_subdomain_errors,
    label_value_errors,
    qualified_name_errors,
)
from .common import Causes, forbidden, invalid, invalids, required

_CONFIG_KEY_FMT = "[-._a-zA-Z0-9]+"
_WILDCARD_FMT = "\\*\\." + DNS1123_SUBDOMAIN_FMT


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    shown = " or ".join(f"'{example}', " for example in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def config_key_errors(key: str) -> list[str]:
    """IsConfigMapKey: a ConfigMap's or Secret's data key."""
    errs = ["must be no more than 253 characters"] if len(key.encode()) > 253 else []
    if not re.fullmatch(_CONFIG_KEY_FMT, key):
        errs.append(
            _regex_error(
                "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
                _CONFIG_KEY_FMT,
                "key.name",
                "KEY_NAME",
                "key-name",
            )
        )
    if key == ".":
        errs.append("must not be '.'")
    elif key == "..":
        errs.append("must not be '..'")
    elif key.startswith(".."):
        errs.append("must not start with '..'")
    return errs


def wildcard_subdomain_errors(value: str) -> list[str]:
    """IsWildcardDNS1123Subdomain: ``*.`` then a DNS subdomain."""
    errs = ["must be no more than 253 characters"] if len(value.encode()) > 253 else []
    if not re.fullmatch(_WILDCARD_FMT, value):
        errs.append(
            _regex_error(
                "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS"
                " subdomain, which must consist of lower case alphanumeric characters, '-' or"
                " '.' and end with an alphanumeric character",
                _WILDCARD_FMT,
                "*.example.com",
            )
        )
    return errs


def port_num_errors(port: object) -> list[str]:
    """IsValidPortNum: 1-65535."""
    ok = isinstance(port, int) and 1 <= port <= 65535
    return [] if ok else ["must be between 1 and 65535, inclusive"]


def port_name_errors(name: str) -> list[str]:
    """IsValidPortName: an IANA service name."""
    errs = ["must be no more than 15 characters"] if len(name) > 15 else []
    if not re.fullmatch("[-a-z0-9]+", name):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not re.search("[a-z]", name):
        errs.append("must contain at least one letter (a-z)")
    if "--" in name:
        errs.append("must not contain consecutive hyphens")
    if name and (name[0] == "-" or name[-1] == "-"):
        errs.append("must not begin or end with a hyphen")
    return errs


def port_num_or_name(field: str, port: Any) -> Causes:
    """pkg/apis/core/validation ValidatePortNumOrName (an int-or-string port)."""
    if isinstance(port, str):
        return invalids(field, port, port_name_errors(port))
    return invalids(field, port, port_num_errors(port))


def is_ip(value: str) -> bool:
    """netutils.ParseIPSloppy accepts the address (leading zeros allowed)."""
    try:
        ipaddress.ip_address(_unzero(value))
    except ValueError:
        return False
    return True


def _unzero(value: str) -> str:
    if "." in value and ":" not in value:
        parts = value.split(".")
        if all(p.isdigit() for p in parts):
            return ".".join(str(int(p)) for p in parts)
    return value


def ip_causes(field: str, value: str) -> Causes:
    """IsValidIP."""
    if is_ip(value):
        return []
    return [invalid(field, value, "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)")]


def parse_cidr(value: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    """netutils.ParseCIDRSloppy: the network of ``addr/bits`` (host bits allowed)."""
    addr, slash, bits = value.partition("/")
    if not slash or not bits.isdigit():
        return None
    try:
        return ipaddress.ip_network(f"{_unzero(addr)}/{bits}", strict=False)
    except ValueError:
        return None


def cidr_causes(field: str, value: str) -> Causes:
    """IsValidCIDR."""
    if parse_cidr(value) is not None:
        return []
    return [
        invalid(field, value, "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)")
    ]


def percent_errors(value: str) -> list[str]:
    """IsValidPercent."""
    if re.fullmatch("[0-9]+%", value):
        return []
    return [
        _regex_error(
            "a valid percent string must be a numeric string followed by an ending '%'",
            "[0-9]+%",
            "1%",
            "93%",
        )
    ]


def labels_causes(field: str, labels: Any) -> Causes:
    """ValidateLabels: each key a qualified name, each value a label value, reported at
    the map's path."""
    causes: Causes = []
    for key, value in (labels or {}).items():
        causes += invalids(field, key, qualified_name_errors(key))
        causes += invalids(field, value, label_value_errors(str(value)))
    return causes


def label_selector_causes(field: str, selector: Any, allow_invalid_values: bool = False) -> Causes:
    """ValidateLabelSelector: matchLabels and each matchExpressions requirement."""
    if not isinstance(selector, dict):
        return []
    causes = labels_causes(f"{field}.matchLabels", selector.get("matchLabels"))
    for i, expr in enumerate(selector.get("matchExpressions") or []):
        path = f"{field}.matchExpressions[{i}]"
        operator, values = expr.get("operator", ""), expr.get("values") or []
        if operator in ("In", "NotIn"):
            if not values:
                why = "must be specified when `operator` is 'In' or 'NotIn'"
                causes.append(required(f"{path}.values", why))
        elif operator in ("Exists", "DoesNotExist"):
            if values:
                causes.append(
                    forbidden(
                        f"{path}.values",
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    )
                )
        else:
            causes.append(invalid(f"{path}.operator", operator, "not a valid selector operator"))
        key = str(expr.get("key", ""))
        causes += invalids(f"{path}.key", key, qualified_name_errors(key))
        if not allow_invalid_values:
            for j, value in enumerate(values):
                causes += invalids(f"{path}.values[{j}]", value, label_value_errors(str(value)))
    return causes


def subdomain_causes(field: str, value: str) -> Causes:
    """IsDNS1123Subdomain, one field.Invalid per message."""
    return invalids(field, value, dns1123_subdomain_errors(value))
