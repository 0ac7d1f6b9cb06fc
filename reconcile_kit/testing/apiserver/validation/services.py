"""Validation of core/v1 Services (kubernetes pkg/apis/core/validation ValidateService,
ValidateServiceUpdate), run on the object as the service registry leaves it: defaulted,
its allocations (cluster IPs, node ports) made or kept from the stored one."""

from __future__ import annotations

from typing import Any

from ....meta.validation import dns1123_label_errors, qualified_name_errors
from ..store import Obj
from .common import (
    Causes,
    GoText,
    Validator,
    Write,
    duplicate,
    forbidden,
    invalid,
    invalids,
    not_supported,
    required,
)
from .endpoints import endpoint_ip_causes
from .rules import (
    cidr_causes,
    ip_causes,
    labels_causes,
    port_num_errors,
    port_num_or_name,
    subdomain_causes,
)
from .statuses import load_balancer_ingress

_TYPES = ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")
_PROTOCOLS = ("SCTP", "TCP", "UDP")
_AFFINITIES = ("ClientIP", "None")
_FAMILIES = ("IPv4", "IPv6")
_POLICIES = ("PreferDualStack", "RequireDualStack", "SingleStack")
_KUBELET_PORT = 10250
_MAX_AFFINITY_SECONDS = 86400
_SOURCE_RANGES = "service.beta.kubernetes.io/load-balancer-source-ranges"


def _headless(spec: Obj) -> bool:
    """isHeadlessService: clusterIPs is exactly ["None"]."""
    return (spec.get("clusterIPs") or []) == ["None"]


def _by_type(spec: Obj) -> Causes:
    """The rules of ValidateService that depend on ``spec.type``."""
    kind = spec.get("type")
    ports = spec.get("ports") or []
    causes: Causes = []
    if kind == "LoadBalancer":
        for i, port in enumerate(ports):
            if port.get("port") == _KUBELET_PORT:
                causes.append(
                    invalid(
                        f"spec.ports[{i}]",
                        _KUBELET_PORT,
                        f"may not expose port {_KUBELET_PORT} externally since it is used by"
                        " kubelet",
                    )
                )
    if kind in ("LoadBalancer", "NodePort") and _headless(spec):
        causes.append(
            invalid("spec.clusterIPs[0]", "None", f"may not be set to 'None' for {kind} services")
        )
    if kind == "ExternalName":
        causes += _external_name(spec)
    return causes


def _external_name(spec: Obj) -> Causes:
    causes: Causes = []
    for field in ("clusterIPs", "ipFamilies"):
        if spec.get(field):
            causes.append(forbidden(f"spec.{field}", "may not be set for ExternalName services"))
    if spec.get("ipFamilyPolicy") is not None:
        causes.append(forbidden("spec.ipFamilyPolicy", "may not be set for ExternalName services"))
    cname = str(spec.get("externalName") or "").removesuffix(".")
    if cname:
        causes += subdomain_causes("spec.externalName", cname)
    else:
        causes.append(required("spec.externalName"))
    return causes


def _port(port: Obj, path: str, require_name: bool, names: set[str]) -> Causes:
    """validateServicePort."""
    causes: Causes = []
    name = str(port.get("name") or "")
    if require_name and not name:
        causes.append(required(f"{path}.name"))
    elif name:
        causes += invalids(f"{path}.name", name, dns1123_label_errors(name))
        if name in names:
            causes.append(duplicate(f"{path}.name", name))
        names.add(name)
    causes += invalids(f"{path}.port", port.get("port", 0), port_num_errors(port.get("port", 0)))
    protocol = port.get("protocol") or ""
    if not protocol:
        causes.append(required(f"{path}.protocol"))
    elif protocol not in _PROTOCOLS:
        causes.append(not_supported(f"{path}.protocol", protocol, _PROTOCOLS))
    causes += port_num_or_name(f"{path}.targetPort", port.get("targetPort", 0))
    if port.get("appProtocol") is not None:
        app = str(port["appProtocol"])
        causes += invalids(f"{path}.appProtocol", app, qualified_name_errors(app))
    return causes


def _ports(spec: Obj) -> Causes:
    ports = spec.get("ports") or []
    names: set[str] = set()
    causes: Causes = []
    for i, port in enumerate(ports):
        causes += _port(port, f"spec.ports[{i}]", len(ports) > 1, names)
    return causes


def _affinity(spec: Obj) -> Causes:
    """sessionAffinity and validateClientIPAffinityConfig."""
    affinity = spec.get("sessionAffinity") or ""
    config = spec.get("sessionAffinityConfig")
    if not affinity:
        return [required("spec.sessionAffinity")]
    if affinity not in _AFFINITIES:
        return [not_supported("spec.sessionAffinity", affinity, _AFFINITIES)]
    path = "spec.sessionAffinityConfig"
    if affinity == "None":
        return [forbidden(path, "must not be set when session affinity is None")] if config else []
    when = "when session affinity type is ClientIP"
    if config is None:
        return [required(path, when)]
    if config.get("clientIP") is None:
        return [required(f"{path}.clientIP", when)]
    timeout = config["clientIP"].get("timeoutSeconds")
    if timeout is None:
        return [required(f"{path}.clientIP.timeoutSeconds", when)]
    if timeout <= 0 or timeout > _MAX_AFFINITY_SECONDS:
        return [
            invalid(
                f"{path}.clientIP.timeoutSeconds",
                timeout,
                f"must be greater than 0 and less than {_MAX_AFFINITY_SECONDS}",
            )
        ]
    return []


def _cluster_ips(spec: Obj) -> Causes:
    """ValidateServiceClusterIPsRelatedFields (without the dual-stack pairing checks)."""
    if spec.get("type") == "ExternalName":
        return []
    causes: Causes = []
    ip, ips = spec.get("clusterIP") or "", list(spec.get("clusterIPs") or [])
    if ip and not ips:
        causes.append(required("spec.clusterIPs"))
    elif ip and ips[0] != ip:
        causes.append(invalid("spec.clusterIPs", ips, "first value must match `clusterIP`"))
    elif not ip and ips:
        causes.append(
            invalid("spec.clusterIPs", ips, "must be empty when `clusterIP` is not specified")
        )
    seen: set[str] = set()
    for i, family in enumerate(spec.get("ipFamilies") or []):
        if family not in _FAMILIES:
            causes.append(not_supported(f"spec.ipFamilies[{i}]", family, _FAMILIES))
        if family in seen:
            causes.append(duplicate(f"spec.ipFamilies[{i}]", family))
        seen.add(family)
    policy = spec.get("ipFamilyPolicy")
    if policy is not None and policy not in _POLICIES:
        causes.append(not_supported("spec.ipFamilyPolicy", policy, _POLICIES))
    for i, address in enumerate(ips):
        if i == 0 and address == "None":
            if len(ips) > 1:
                causes.append(
                    invalid("spec.clusterIPs", ips, "'None' must be the first and only value")
                )
            continue
        causes += ip_causes(f"spec.clusterIPs[{i}]", address)
    if len(ips) > 2:
        causes.append(invalid("spec.clusterIPs", ips, "may only hold up to 2 values"))
    return causes


def _external_ips(spec: Obj) -> Causes:
    causes: Causes = []
    for i, address in enumerate(spec.get("externalIPs") or []):
        # IsValidIP, else ValidateNonSpecialIP (not unspecified, loopback or link-local)
        field = f"spec.externalIPs[{i}]"
        causes += ip_causes(field, address) or endpoint_ip_causes(address, field)
    return causes


def _type(spec: Obj) -> Causes:
    kind = spec.get("type") or ""
    if not kind:
        return [required("spec.type")]
    if kind not in _TYPES:
        return [not_supported("spec.type", kind, _TYPES)]
    return []


def _node_ports(spec: Obj) -> Causes:
    """No nodePort on a ClusterIP Service; no (protocol, nodePort) or (protocol, port)
    twice."""
    causes: Causes = []
    ports = spec.get("ports") or []
    if spec.get("type") == "ClusterIP":
        causes += [
            forbidden(f"spec.ports[{i}].nodePort", "may not be used when `type` is 'ClusterIP'")
            for i, port in enumerate(ports)
            if port.get("nodePort")
        ]
    node_ports: set[tuple[str, int]] = set()
    for i, port in enumerate(ports):
        if not port.get("nodePort"):
            continue
        key = (str(port.get("protocol") or ""), int(port["nodePort"]))
        if key in node_ports:
            causes.append(duplicate(f"spec.ports[{i}].nodePort", port["nodePort"]))
        node_ports.add(key)
    seen: set[tuple[str, Any]] = set()
    for i, port in enumerate(ports):
        pair = (str(port.get("protocol") or ""), port.get("port", 0))
        if pair in seen:
            causes.append(duplicate(f"spec.ports[{i}]", _port_key(*pair)))
        seen.add(pair)
    return causes


def _port_key(protocol: str, port: Any) -> GoText:
    """The ``%#v`` of the core.ServicePort key the duplicate check builds."""
    return GoText(
        f'core.ServicePort{{Name:"", Protocol:"{protocol}", AppProtocol:(*string)(nil),'
        f' Port:{port}, TargetPort:intstr.IntOrString{{Type:0, IntVal:0, StrVal:""}},'
        " NodePort:0}"
    )


def _load_balancer(obj: Obj, spec: Obj) -> Causes:
    """loadBalancerSourceRanges (or its annotation) and allocateLoadBalancerNodePorts only
    on LoadBalancer Services."""
    causes: Causes = []
    balanced = spec.get("type") == "LoadBalancer"
    only = "may only be used when `type` is 'LoadBalancer'"
    ranges = spec.get("loadBalancerSourceRanges") or []
    annotations = obj["metadata"].get("annotations") or {}
    if ranges:
        if not balanced:
            causes.append(forbidden("spec.LoadBalancerSourceRanges", only))
        for i, value in enumerate(ranges):
            causes += cidr_causes(f"spec.LoadBalancerSourceRanges[{i}]", str(value).strip())
    elif _SOURCE_RANGES in annotations:
        path = f"metadata.annotations[{_SOURCE_RANGES}]"
        if not balanced:
            causes.append(forbidden(path, only))
        value = annotations[_SOURCE_RANGES].strip()
        for cidr in value.split(",") if value else []:
            causes += cidr_causes(path, cidr.strip())
    if spec.get("allocateLoadBalancerNodePorts") is not None and not balanced:
        causes.append(forbidden("spec.allocateLoadBalancerNodePorts", only))
    if balanced and spec.get("allocateLoadBalancerNodePorts") is None:
        causes.append(required("allocateLoadBalancerNodePorts"))
    return causes


def _externally_accessible(spec: Obj) -> bool:
    """apiservice.ExternallyAccessible."""
    kind = spec.get("type")
    return kind in ("LoadBalancer", "NodePort") or (
        kind == "ClusterIP" and bool(spec.get("externalIPs"))
    )


def _needs_health_check(spec: Obj) -> bool:
    return spec.get("type") == "LoadBalancer" and spec.get("externalTrafficPolicy") == "Local"


def _traffic(spec: Obj) -> Causes:
    """validateServiceExternalTrafficPolicy, validateServiceInternalTrafficFieldsValue,
    validateServiceTrafficDistribution."""
    causes: Causes = []
    external = spec.get("externalTrafficPolicy") or ""
    if not _externally_accessible(spec):
        if external:
            causes.append(
                invalid(
                    "spec.externalTrafficPolicy",
                    external,
                    "may only be set for externally-accessible services",
                )
            )
    elif not external:
        causes.append(required("spec.externalTrafficPolicy"))
    elif external not in ("Cluster", "Local"):
        causes.append(not_supported("spec.externalTrafficPolicy", external, ("Cluster", "Local")))
    health = spec.get("healthCheckNodePort") or 0
    if not _needs_health_check(spec):
        if health:
            causes.append(
                invalid(
                    "spec.healthCheckNodePort",
                    health,
                    "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy`"
                    " is 'Local'",
                )
            )
    elif health:
        causes += invalids("spec.healthCheckNodePort", health, port_num_errors(health))
    internal = spec.get("internalTrafficPolicy")
    if internal is None and spec.get("type") in ("NodePort", "LoadBalancer", "ClusterIP"):
        causes.append(required("spec.internalTrafficPolicy"))
    if internal is not None and internal not in ("Cluster", "Local"):
        causes.append(not_supported("spec.internalTrafficPolicy", internal, ("Cluster", "Local")))
    distribution = spec.get("trafficDistribution")
    if distribution is not None and distribution != "PreferClose":
        causes.append(not_supported("spec.trafficDistribution", distribution, ("PreferClose",)))
    return causes


def validate_service(obj: Obj) -> Causes:
    """ValidateService (the spec; metadata is checked for every kind)."""
    spec = obj.get("spec") or {}
    causes: Causes = []
    if not spec.get("ports") and not _headless(spec) and spec.get("type") != "ExternalName":
        causes.append(required("spec.ports"))
    causes += _by_type(spec)
    causes += _ports(spec)
    if spec.get("selector") is not None:
        causes += labels_causes("spec.selector", spec["selector"])
    causes += _affinity(spec)
    causes += _external_ips(spec)
    causes += _type(spec)
    causes += _node_ports(spec)
    causes += _load_balancer(obj, spec)
    causes += _traffic(spec)
    return causes


def _status(obj: Obj) -> Causes:
    """ValidateServiceStatusUpdate: load balancer ingress points only on a LoadBalancer
    Service (AllowServiceLBStatusOnNonLB is locked off in 1.32)."""
    points = ((obj.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
    path = "status.loadBalancer.ingress"
    if (obj.get("spec") or {}).get("type") != "LoadBalancer" and points:
        return [forbidden(path, "may only be used when `spec.type` is 'LoadBalancer'")]
    return load_balancer_ingress(points, path, ip_mode=True)


def _cluster_ips_update(new: Obj, old: Obj) -> Causes:
    """validateUpgradeDowngradeClusterIPs: the cluster IPs may not change once set
    (unless to, from or on an ExternalName Service)."""
    if "ExternalName" in (new.get("type"), old.get("type")):
        return []
    if _headless(new) and _headless(old):
        return []
    ips, old_ips = list(new.get("clusterIPs") or []), list(old.get("clusterIPs") or [])
    causes: Causes = []
    if len(old_ips) == len(ips):
        causes += [
            invalid(f"spec.clusterIPs[{i}]", ips, "may not change once set")
            for i, address in enumerate(old_ips)
            if address != ips[i]
        ]
    elif len(old_ips) > len(ips):
        if not ips:
            causes.append(invalid("spec.clusterIPs[0]", ips, "primary clusterIP can not be unset"))
        elif old_ips and ips[0] != old_ips[0]:
            causes.append(invalid("spec.clusterIPs[0]", ips, "may not change once set"))
        if len(ips) == 1 and new.get("ipFamilyPolicy") != "SingleStack":
            causes.append(
                invalid(
                    "spec.ipFamilyPolicy",
                    new.get("ipFamilyPolicy"),
                    "must be set to 'SingleStack' when releasing the secondary clusterIP",
                )
            )
    elif old_ips and ips[0] != old_ips[0]:
        causes.append(invalid("spec.clusterIPs[0]", ips, "may not change once set"))
    return causes


def _service_write(write: Write) -> Causes:
    """ValidateServiceCreate / ValidateServiceUpdate (a status write: none of these)."""
    if write.subresource == "status":
        return _status(write.obj)
    if write.subresource:
        return []
    early = _cluster_ips(write.obj.get("spec") or {})
    if early:  # the allocator's pre-check answers alone (alloc.go initIPFamilyFields)
        return early
    causes: Causes = []
    if write.old is not None:
        new, old = write.obj.get("spec") or {}, write.old.get("spec") or {}
        causes += _cluster_ips_update(new, old)
        both = _needs_health_check(old) and _needs_health_check(new)
        if both and new.get("healthCheckNodePort") != old.get("healthCheckNodePort"):
            causes.append(forbidden("spec.healthCheckNodePort", "field is immutable"))
    causes += validate_service(write.obj)
    return causes or _node_port_range(write.obj, write.old)


_NODE_PORT_RANGE = (30000, 32767)  # kube-apiserver's --service-node-port-range default


def _node_port_range(obj: Obj, old: Obj | None) -> Causes:
    """The node port allocator's answer to a requested port out of its range (checked
    after validation; a port the stored Service holds is kept, not allocated)."""
    held = {p.get("nodePort") for p in ((old or {}).get("spec") or {}).get("ports") or []}
    low, high = _NODE_PORT_RANGE
    for i, port in enumerate((obj.get("spec") or {}).get("ports") or []):
        number = port.get("nodePort")
        if isinstance(number, int) and number and number not in held and not low <= number <= high:
            why = "provided port is not in the valid range. The range of valid ports is"
            return [invalid(f"spec.ports[{i}].nodePort", number, f"{why} {low}-{high}")]
    return []


VALIDATORS: dict[tuple[str, str], Validator] = {("", "services"): _service_write}

__all__ = ["VALIDATORS", "validate_service"]
