"""Port numbers and names of containers and probe handlers (apimachinery
pkg/util/validation IsValidPortNum and IsValidPortName; kubernetes
pkg/apis/core/validation validateContainerPorts and ValidatePortNumOrName)."""

from __future__ import annotations

from typing import Any

from .common import Causes, as_dict, as_list, duplicate, invalid, not_supported, required
from .rules import port_name_errors

_PROTOCOLS = ("SCTP", "TCP", "UDP")
_RANGE = "must be between 1 and 65535, inclusive"


def port_number_causes(number: object, field: str) -> Causes:
    """IsValidPortNum: 1 to 65535."""
    if isinstance(number, int) and not 1 <= number <= 65535:
        return [invalid(field, number, _RANGE)]
    return []


def port_num_or_name_causes(port: Any, field: str) -> Causes:
    """ValidatePortNumOrName: a port number in range, or a valid port name (absent: 0)."""
    if isinstance(port, str):
        return [invalid(field, port, message) for message in port_name_errors(port)]
    return port_number_causes(port if isinstance(port, int) else 0, field)


def _port_causes(port: dict[str, Any], path: str, names: set[str]) -> Causes:
    causes: Causes = []
    name = str(port.get("name") or "")
    if name:
        errs = port_name_errors(name)
        causes += [invalid(f"{path}.name", name, m) for m in errs]
        if not errs and name in names:
            causes.append(duplicate(f"{path}.name", name))
        names.add(name)
    if not port.get("containerPort"):
        causes.append(required(f"{path}.containerPort"))
    else:
        causes += port_number_causes(port["containerPort"], f"{path}.containerPort")
    if port.get("hostPort"):
        causes += port_number_causes(port["hostPort"], f"{path}.hostPort")
    protocol = str(port.get("protocol") or "")
    if not protocol:
        causes.append(required(f"{path}.protocol"))
    elif protocol not in _PROTOCOLS:
        causes.append(not_supported(f"{path}.protocol", protocol, _PROTOCOLS))
    return causes


def ports_causes(ports: list[Any], field: str) -> Causes:
    """validateContainerPorts: port names valid and unique, containerPort set and in range,
    hostPort in range, a supported protocol."""
    causes: Causes = []
    names: set[str] = set()
    for i, port in enumerate(ports):
        causes += _port_causes(as_dict(port), f"{field}[{i}]", names)
    return causes


def host_port_conflict_causes(containers: list[Any], field: str) -> Causes:
    """checkHostPortConflicts: no two ports take the same protocol, host IP and host port."""
    causes: Causes = []
    seen: set[str] = set()
    for i, ctr in enumerate(containers):
        for j, port in enumerate(as_list(as_dict(ctr).get("ports"))):
            port = as_dict(port)
            host_port = port.get("hostPort") or 0
            if not host_port:
                continue
            key = f"{port.get('protocol') or ''}/{port.get('hostIP') or ''}/{host_port}"
            if key in seen:
                causes.append(duplicate(f"{field}[{i}].ports[{j}].hostPort", key))
            seen.add(key)
    return causes


def host_network_causes(spec: dict[str, Any], field: str, pod: bool) -> Causes:
    """validatePodHostNetworkDeps: with hostNetwork, a host port is the container port (in
    a template it may also be left unset)."""
    if not spec.get("hostNetwork"):
        return []
    causes: Causes = []
    for i, ctr in enumerate(as_list(spec.get("containers"))):
        for j, port in enumerate(as_list(as_dict(ctr).get("ports"))):
            port = as_dict(port)
            host, container = port.get("hostPort") or 0, port.get("containerPort") or 0
            if (pod or host != 0) and host != container:
                path = f"{field}.containers[{i}].ports[{j}].hostPort"
                detail = "must match `containerPort` when `hostNetwork` is true"
                causes.append(invalid(path, host, detail))
    return causes
