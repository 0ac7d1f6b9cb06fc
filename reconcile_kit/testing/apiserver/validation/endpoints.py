"""Validation of core/v1 Endpoints (kubernetes pkg/apis/core/validation ValidateEndpoints:
subsets with addresses, endpoint IPs, hostnames, node names and ports) and of
discovery.k8s.io/v1 EndpointSlices (pkg/apis/discovery/validation ValidateEndpointSlice:
addresses of the slice's type, node names, hostnames, port names and protocols; the
address type required, supported and immutable).

Left out: the Endpoints' last-change-trigger-time annotation, the slices' count limits."""

from __future__ import annotations

import ipaddress
from typing import Any

from ....meta.validation import (
    dns1123_label_errors,
    dns1123_subdomain_errors,
    qualified_name_errors,
)
from ..store import Obj
from .common import (
    Causes,
    Validator,
    Write,
    as_dict,
    as_list,
    duplicate,
    go_value,
    immutable,
    invalid,
    invalids,
    not_supported,
    required,
)
from .ports import port_number_causes
from .rules import ip_causes

_PROTOCOLS = ("SCTP", "TCP", "UDP")
_ADDRESS_TYPES = ("FQDN", "IPv4", "IPv6")
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def parse_ip(value: str) -> IPAddress | None:
    """netutils.ParseIPSloppy (leading zeros allowed in IPv4), an IPv4-mapped IPv6
    address read as its IPv4 address (as Go's net.IP does)."""
    text = value
    if "." in value and ":" not in value and all(p.isdigit() for p in value.split(".")):
        text = ".".join(str(int(p)) for p in value.split("."))
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        return None
    mapped = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) else None
    return mapped or ip


def _link_local_multicast(ip: IPAddress) -> bool:
    if isinstance(ip, ipaddress.IPv4Address):
        return ip in ipaddress.ip_network("224.0.0.0/24")
    return ip.packed[0] == 0xFF and ip.packed[1] & 0x0F == 0x02


def endpoint_ip_causes(value: str, field: str) -> Causes:
    """ValidateEndpointIP: an IP, not unspecified, loopback or link-local."""
    ip = parse_ip(value)
    if ip is None:
        return [invalid(field, value, "must be a valid IP address")]
    checks = (
        (ip.is_unspecified, f"may not be unspecified ({value})"),
        (ip.is_loopback, "may not be in the loopback range (127.0.0.0/8, ::1/128)"),
        (ip.is_link_local, "may not be in the link-local range (169.254.0.0/16, fe80::/10)"),
        (
            _link_local_multicast(ip),
            "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)",
        ),
    )
    return [invalid(field, value, detail) for failed, detail in checks if failed]


def _label(value: str, field: str) -> Causes:
    return invalids(field, value, dns1123_label_errors(value))


def _address(address: dict[str, Any], field: str) -> Causes:
    """validateEndpointAddress."""
    ip = str(address.get("ip") or "")
    causes = ip_causes(f"{field}.ip", ip)
    if address.get("hostname"):
        causes += _label(str(address["hostname"]), f"{field}.hostname")
    if address.get("nodeName") is not None:
        name = str(address["nodeName"])
        causes += invalids(f"{field}.nodeName", name, dns1123_subdomain_errors(name))
    return causes + endpoint_ip_causes(ip, f"{field}.ip")


def _endpoint_port(port: dict[str, Any], named: bool, field: str) -> Causes:
    """validateEndpointPort."""
    name = str(port.get("name") or "")
    causes: Causes = []
    if named and not name:
        causes.append(required(f"{field}.name"))
    elif name:
        causes += _label(name, f"{field}.name")
    number = port.get("port")
    causes += port_number_causes(number if isinstance(number, int) else 0, f"{field}.port")
    causes += _protocol(port, field)
    if port.get("appProtocol") is not None:
        app = str(port["appProtocol"])
        causes += invalids(f"{field}.appProtocol", app, qualified_name_errors(app))
    return causes


def _protocol(port: dict[str, Any], field: str) -> Causes:
    protocol = str(port.get("protocol") or "")
    if not protocol:
        return [required(f"{field}.protocol")]
    if protocol not in _PROTOCOLS:
        return [not_supported(f"{field}.protocol", protocol, _PROTOCOLS)]
    return []


def _subset(subset: dict[str, Any], field: str) -> Causes:
    causes: Causes = []
    ready, not_ready = as_list(subset.get("addresses")), as_list(subset.get("notReadyAddresses"))
    if not ready and not not_ready:
        causes.append(required(field, "must specify `addresses` or `notReadyAddresses`"))
    for i, address in enumerate(ready):
        causes += _address(as_dict(address), f"{field}.addresses[{i}]")
    for i, address in enumerate(not_ready):
        causes += _address(as_dict(address), f"{field}.notReadyAddresses[{i}]")
    ports = as_list(subset.get("ports"))
    for i, port in enumerate(ports):
        causes += _endpoint_port(as_dict(port), len(ports) > 1, f"{field}.ports[{i}]")
    return causes


def _endpoints(write: Write) -> Causes:
    """validateEndpointSubsets."""
    causes: Causes = []
    for i, subset in enumerate(as_list(write.obj.get("subsets"))):
        causes += _subset(as_dict(subset), f"subsets[{i}]")
    return causes


def _fqdn_causes(value: str, field: str) -> Causes:
    """IsFullyQualifiedDomainName."""
    if not value:
        return [required(field)]
    name = value.removesuffix(".")
    errors = dns1123_subdomain_errors(name)
    if errors:
        return [invalid(field, name, ",".join(errors))]
    if len(name.split(".")) < 2:
        detail = "should be a domain with at least two segments separated by dots"
        return [invalid(field, name, detail)]
    for label in name.split("."):
        if dns1123_label_errors(label):
            return [invalid(field, label, ",".join(dns1123_label_errors(label)))]
    return []


def _slice_address(value: str, kind: Any, field: str) -> Causes:
    """An address of the slice's type (an unknown type's addresses are not checked)."""
    if kind == "FQDN":
        return _fqdn_causes(value, field)
    if kind not in ("IPv4", "IPv6"):
        return []
    ip = parse_ip(value)
    causes: Causes = []
    if ip is None or ip.version != (4 if kind == "IPv4" else 6):
        causes.append(invalid(field, value, f"must be a valid {kind} address"))
    return causes + endpoint_ip_causes(value, field)


def _slice_endpoint(endpoint: dict[str, Any], kind: Any, field: str) -> Causes:
    path = f"{field}.addresses"
    addresses = as_list(endpoint.get("addresses"))
    causes = [] if addresses else [required(path, "must contain at least 1 address")]
    for i, address in enumerate(addresses):
        causes += _slice_address(str(address), kind, f"{path}[{i}]")
    if endpoint.get("nodeName") is not None:
        name = str(endpoint["nodeName"])
        causes += invalids(f"{field}.nodeName", name, dns1123_subdomain_errors(name))
    if endpoint.get("hostname") is not None:
        causes += _label(str(endpoint["hostname"]), f"{field}.hostname")
    return causes


def _slice_ports(ports: list[Any]) -> Causes:
    causes: Causes = []
    names: set[str] = set()
    for i, port in enumerate(ports):
        port, field = as_dict(port), f"ports[{i}]"
        name = str(port.get("name") or "")
        if name:
            causes += _label(name, f"{field}.name")
        if name in names:
            causes.append(duplicate(f"{field}.name", name))
        names.add(name)
        causes += _protocol(port, field)
        if port.get("appProtocol") is not None:
            app = str(port["appProtocol"])
            causes += invalids(f"{field}.appProtocol", app, qualified_name_errors(app))
    return causes


def _address_type(obj: Obj) -> Causes:
    kind = obj.get("addressType") or ""
    if not kind:
        return [required("addressType")]
    return [] if kind in _ADDRESS_TYPES else [not_supported("addressType", kind, _ADDRESS_TYPES)]


def _endpoint_slice(write: Write) -> Causes:
    """ValidateEndpointSliceCreate / ValidateEndpointSliceUpdate."""
    obj, causes = write.obj, []
    kind = obj.get("addressType")
    for i, endpoint in enumerate(as_list(obj.get("endpoints"))):
        causes += _slice_endpoint(as_dict(endpoint), kind, f"endpoints[{i}]")
    causes += _slice_ports(as_list(obj.get("ports")))
    if write.old is None:
        return causes + _address_type(obj)
    old_kind = write.old.get("addressType")
    return causes + immutable("addressType", kind, old_kind, go_value(kind))


VALIDATORS: dict[tuple[str, str], Validator] = {
    ("", "endpoints"): _endpoints,
    ("discovery.k8s.io", "endpointslices"): _endpoint_slice,
}
