"""A pod's DNS configuration (kubernetes pkg/apis/core/validation validatePodDNSConfig):
nameservers with dnsPolicy None, at most 3 nameservers that are IPs, at most 32 search
domains of 2048 characters that are DNS subdomains, named options."""

from __future__ import annotations

import ipaddress
from typing import Any

from ....meta.validation import dns1123_subdomain_errors
from .common import Causes, as_dict, as_list, invalid, required
from .gorender import strings

_MAX_NAMESERVERS, _MAX_SEARCHES, _MAX_SEARCH_CHARS = 3, 32, 2048
_IP_ERROR = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _nameserver_causes(nameservers: list[Any], field: str) -> Causes:
    causes: Causes = []
    if len(nameservers) > _MAX_NAMESERVERS:
        detail = f"must not have more than {_MAX_NAMESERVERS} nameservers"
        causes.append(invalid(field, strings(nameservers), detail, rendered=True))
    for i, server in enumerate(nameservers):
        if not _is_ip(str(server)):
            causes.append(invalid(f"{field}[{i}]", str(server), _IP_ERROR))
    return causes


def _search_causes(searches: list[Any], field: str) -> Causes:
    causes: Causes = []
    if len(searches) > _MAX_SEARCHES:
        detail = f"must not have more than {_MAX_SEARCHES} search paths"
        causes.append(invalid(field, strings(searches), detail, rendered=True))
    if len(" ".join(map(str, searches))) > _MAX_SEARCH_CHARS:
        detail = (
            f"must not have more than {_MAX_SEARCH_CHARS} characters (including spaces) in"
            " the search list"
        )
        causes.append(invalid(field, strings(searches), detail, rendered=True))
    for i, search in enumerate(searches):
        domain = str(search).removesuffix(".")
        causes += [invalid(f"{field}[{i}]", domain, m) for m in dns1123_subdomain_errors(domain)]
    return causes


def dns_config_causes(config: Any, policy: Any, field: str) -> Causes:
    """validatePodDNSConfig."""
    if policy == "None":
        if config is None:
            return [required(field, "must provide `dnsConfig` when `dnsPolicy` is None")]
        if not as_list(as_dict(config).get("nameservers")):
            detail = "must provide at least one DNS nameserver when `dnsPolicy` is None"
            return [required(f"{field}.nameservers", detail)]
    if config is None:
        return []
    config = as_dict(config)
    causes = _nameserver_causes(as_list(config.get("nameservers")), f"{field}.nameservers")
    causes += _search_causes(as_list(config.get("searches")), f"{field}.searches")
    for i, option in enumerate(as_list(config.get("options"))):
        if not as_dict(option).get("name"):
            causes.append(required(f"{field}.options[{i}]", "must not be empty"))
    return causes
