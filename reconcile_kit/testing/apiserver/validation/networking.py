"""Validation of networking.k8s.io Ingresses, IngressClasses and NetworkPolicies
(kubernetes pkg/apis/networking/validation ValidateIngressCreate/Update,
ValidateIngressClass/Update, ValidateNetworkPolicy)."""

from __future__ import annotations

import re
from typing import Any

from ....meta.validation import (
    dns1035_label_errors,
    dns1123_label_errors,
    dns1123_subdomain_errors,
    path_segment_errors,
)
from ..gofmt import go_quote
from ..store import Obj
from .common import (
    Causes,
    GoText,
    Validator,
    Write,
    forbidden,
    immutable,
    invalid,
    invalids,
    not_supported,
    required,
    too_long,
)
from .rules import (
    cidr_causes,
    is_ip,
    label_selector_causes,
    parse_cidr,
    port_name_errors,
    port_num_errors,
    wildcard_subdomain_errors,
)
from .statuses import load_balancer_ingress

GROUP = "networking.k8s.io"
_PATH_TYPES = ("Exact", "ImplementationSpecific", "Prefix")
_BAD_SEQUENCES = ("//", "/./", "/../", "%2f", "%2F")
_BAD_SUFFIXES = ("/..", "/.")
_CLASS_ANNOTATION = "kubernetes.io/ingress.class"


def _host_errors(host: str) -> list[str]:
    return wildcard_subdomain_errors(host) if "*" in host else dns1123_subdomain_errors(host)


def _service_backend(service: Obj, path: str) -> Causes:
    causes: Causes = []
    name = str(service.get("name") or "")
    if not name:
        causes.append(required(f"{path}.service.name"))
    else:
        causes += invalids(f"{path}.service.name", name, dns1035_label_errors(name))
    port = service.get("port") or {}
    port_name, number = str(port.get("name") or ""), port.get("number") or 0
    if port_name and number:
        causes.append(invalid(path, "", "cannot set both port name & port number"))
    elif port_name:
        causes += invalids(f"{path}.service.port.name", port_name, port_name_errors(port_name))
    elif number:
        causes += invalids(f"{path}.service.port.number", number, port_num_errors(number))
    else:
        causes.append(required(path, "port name or number is required"))
    return causes


def _resource_backend(ref: Obj, path: str) -> Causes:
    """validateIngressTypedLocalObjectReference."""
    causes: Causes = []
    group = ref.get("apiGroup")
    if group is not None:
        causes += invalids(f"{path}.apiGroup", group, dns1123_subdomain_errors(str(group)))
    for field in ("kind", "name"):
        value = str(ref.get(field) or "")
        if not value:
            causes.append(required(f"{path}.{field}", f"{field} is required"))
        else:
            causes += invalids(f"{path}.{field}", value, path_segment_errors(value))
    return causes


def _backend(backend: Any, path: str) -> Causes:
    """validateIngressBackend: a resource or a service (with a port name or number)."""
    backend = backend or {}
    resource, service = backend.get("resource"), backend.get("service")
    if resource is not None and service is not None:
        return [invalid(path, "", "cannot set both resource and service backends")]
    if resource is not None:
        return _resource_backend(resource, f"{path}.resource")
    if service is not None:
        return _service_backend(service, path)
    return [invalid(path, "", "resource or service backend is required")]


def _http_path(item: Obj, path: str) -> Causes:
    """validateHTTPIngressPath."""
    kind = item.get("pathType")
    if kind is None:
        return [required(f"{path}.pathType", "pathType must be specified")]
    value = str(item.get("path") or "")
    causes: Causes = []
    if kind in ("Exact", "Prefix"):
        if not value.startswith("/"):
            causes.append(invalid(f"{path}.path", value, "must be an absolute path"))
        if value:
            causes += [
                invalid(f"{path}.path", value, f"must not contain '{seq}'")
                for seq in _BAD_SEQUENCES
                if seq in value
            ]
            causes += [
                invalid(f"{path}.path", value, f"cannot end with '{suffix}'")
                for suffix in _BAD_SUFFIXES
                if value.endswith(suffix)
            ]
    elif kind == "ImplementationSpecific":
        if value and not value.startswith("/"):
            causes.append(invalid(f"{path}.path", value, "must be an absolute path"))
    else:
        causes.append(not_supported(f"{path}.pathType", kind, _PATH_TYPES))
    return causes + _backend(item.get("backend"), f"{path}.backend")


def _rules(rules: list[Obj], lax_wildcards: bool) -> Causes:
    """validateIngressRules."""
    causes: Causes = []
    for i, rule in enumerate(rules):
        path = f"spec.rules[{i}]"
        host = str(rule.get("host") or "")
        if host and is_ip(host):
            causes.append(invalid(f"{path}.host", host, "must be a DNS name, not an IP address"))
        causes += invalids(f"{path}.host", host, _host_errors(host)) if host else []
        if "*" in host and lax_wildcards:
            continue
        http = rule.get("http")
        if http is not None:
            paths = http.get("paths") or []
            if not paths:
                causes.append(required(f"{path}.http.paths"))
            for j, item in enumerate(paths):
                causes += _http_path(item, f"{path}.http.paths[{j}]")
    return causes


def _tls(tls: list[Obj], lax_secret_names: bool) -> Causes:
    causes: Causes = []
    for i, item in enumerate(tls):
        for j, host in enumerate(item.get("hosts") or []):
            causes += invalids(f"spec.tls[{i}].hosts[{j}]", host, _host_errors(host))
        secret = str(item.get("secretName") or "")
        if secret and not lax_secret_names:
            causes += invalids(
                f"spec.tls[{i}].secretName", secret, dns1123_subdomain_errors(secret)
            )
    return causes


def validate_ingress_spec(spec: Obj, old_spec: Obj | None) -> Causes:
    """ValidateIngressSpec; an update tolerates what the stored Ingress already had
    (invalid TLS secret names, invalid rules under wildcard hosts)."""
    causes: Causes = []
    rules = spec.get("rules")
    if not rules and spec.get("defaultBackend") is None:
        shown = GoText(
            "[]networking.IngressRule(nil)" if rules is None else "[]networking.IngressRule{}"
        )
        causes.append(
            invalid("spec", shown, "either `defaultBackend` or `rules` must be specified")
        )
    if spec.get("defaultBackend") is not None:
        causes += _backend(spec["defaultBackend"], "spec.defaultBackend")
    old_tls, old_rules = (old_spec or {}).get("tls") or [], (old_spec or {}).get("rules") or []
    lax_secrets = any(_tls([{"secretName": t.get("secretName")}], False) for t in old_tls)
    lax_wildcards = any("*" in str(r.get("host") or "") and _rules([r], False) for r in old_rules)
    causes += _rules(rules or [], lax_wildcards)
    causes += _tls(spec.get("tls") or [], lax_secrets)
    class_name = spec.get("ingressClassName")
    if class_name is not None:
        causes += invalids(
            "spec.ingressClassName", class_name, dns1123_subdomain_errors(str(class_name))
        )
    return causes


def _ingress(write: Write) -> Causes:
    if write.subresource == "status":  # ValidateIngressStatusUpdate
        status = write.obj.get("status") or {}
        points = (status.get("loadBalancer") or {}).get("ingress") or []
        return load_balancer_ingress(points, "status.loadBalancer.ingress", ip_mode=False)
    if write.subresource:
        return []
    spec = write.obj.get("spec") or {}
    old_spec = None if write.old is None else (write.old.get("spec") or {})
    causes = validate_ingress_spec(spec, old_spec)
    annotation = (write.obj["metadata"].get("annotations") or {}).get(_CLASS_ANNOTATION)
    class_name = spec.get("ingressClassName")
    both = annotation is not None and class_name is not None
    if write.old is None and both and annotation != class_name:
        why = "must match `ingressClassName` when both are specified"
        causes.append(invalid(f"annotations.{_CLASS_ANNOTATION}", annotation, why))
    return causes


def _np_port(port: Obj, path: str) -> Causes:
    """ValidateNetworkPolicyPort."""
    causes: Causes = []
    protocol = port.get("protocol")
    if protocol is not None and protocol not in ("TCP", "UDP", "SCTP"):
        causes.append(not_supported(f"{path}.protocol", protocol, ("TCP", "UDP", "SCTP")))
    number, end = port.get("port"), port.get("endPort")
    if number is None:
        if end is not None:
            why = "may not be specified when `port` is not specified"
            causes.append(invalid(f"{path}.endPort", end, why))
    elif isinstance(number, int):
        causes += invalids(f"{path}.port", number, port_num_errors(number))
        if end is not None:
            if end < number:
                why = "must be greater than or equal to `port`"
                causes.append(invalid(f"{path}.endPort", number, why))
            causes += invalids(f"{path}.endPort", end, port_num_errors(end))
    else:
        if end is not None:
            why = "may not be specified when `port` is non-numeric"
            causes.append(invalid(f"{path}.endPort", end, why))
        causes += invalids(f"{path}.port", number, port_name_errors(str(number)))
    return causes


def _ip_block(block: Obj, path: str) -> Causes:
    """ValidateIPBlock."""
    cidr = str(block.get("cidr") or "")
    if not cidr:
        return [required(f"{path}.cidr")]
    causes = cidr_causes(f"{path}.cidr", cidr)
    network = parse_cidr(cidr)
    if network is None:
        return causes
    for i, text in enumerate(block.get("except") or []):
        causes += cidr_causes(f"{path}.except[{i}]", text)
        excepted = parse_cidr(text)
        if excepted is None:
            continue
        inside = excepted.version == network.version and excepted.network_address in network
        if not inside or network.prefixlen >= excepted.prefixlen:
            causes.append(invalid(f"{path}.except[{i}]", text, "must be a strict subset of `cidr`"))
    return causes


def _peer(peer: Obj, path: str, lax: bool) -> Causes:
    """ValidateNetworkPolicyPeer: one kind of peer, or selectors without an ipBlock."""
    causes: Causes = []
    count = 0
    for field in ("podSelector", "namespaceSelector"):
        if peer.get(field) is not None:
            count += 1
            causes += label_selector_causes(f"{path}.{field}", peer[field], lax)
    if peer.get("ipBlock") is not None:
        count += 1
        causes += _ip_block(peer["ipBlock"], f"{path}.ipBlock")
    if count == 0:
        causes.append(required(path, "must specify a peer"))
    elif count > 1 and peer.get("ipBlock") is not None:
        causes.append(forbidden(path, "may not specify both ipBlock and another peer"))
    return causes


def validate_network_policy_spec(spec: Obj, lax: bool) -> Causes:
    """ValidateNetworkPolicySpec."""
    causes = label_selector_causes("spec.podSelector", spec.get("podSelector") or {}, lax)
    for direction, peers in (("ingress", "from"), ("egress", "to")):
        for i, rule in enumerate(spec.get(direction) or []):
            path = f"spec.{direction}[{i}]"
            for j, port in enumerate(rule.get("ports") or []):
                causes += _np_port(port, f"{path}.ports[{j}]")
            for j, peer in enumerate(rule.get(peers) or []):
                causes += _peer(peer, f"{path}.{peers}[{j}]", lax)
    types = spec.get("policyTypes") or []
    if len(types) > 2:
        shown = ", ".join(f'"{t}"' for t in types)
        why = "may not specify more than two policyTypes"
        shown_types = GoText(f"[]networking.PolicyType{{{shown}}}")
        return [*causes, invalid("spec.policyTypes", shown_types, why)]
    for i, kind in enumerate(types):
        if kind not in ("Ingress", "Egress"):
            causes.append(not_supported(f"spec.policyTypes[{i}]", kind, ("Ingress", "Egress")))
    return causes


def _network_policy(write: Write) -> Causes:
    """Invalid label values stay allowed on an update whose stored pod selector has them."""
    old_selector = ((write.old or {}).get("spec") or {}).get("podSelector") or {}
    lax = write.old is not None and bool(label_selector_causes("", old_selector))
    return validate_network_policy_spec(write.obj.get("spec") or {}, lax)


_MAX_CONTROLLER = 250
_HTTP_PATH = "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+"
_SCOPES = ("Cluster", "Namespace")


def domain_prefixed_path(path: str, value: str) -> Causes:
    """apimachinery IsDomainPrefixedPath."""
    if not value:
        return [required(path)]
    host, slash, rest = value.partition("/")
    if not (slash and host and rest):
        return [invalid(path, value, 'must be a domain-prefixed path (such as "acme.io/foo")')]
    causes = invalids(path, host, dns1123_subdomain_errors(host))
    if not re.fullmatch(_HTTP_PATH, rest):
        why = f"Invalid path (regex used for validation is '{_HTTP_PATH}')"
        causes.append(invalid(path, rest, why))
    return causes


def _class_parameters(params: Any, path: str) -> Causes:
    """validateIngressClassParametersReference (v1 defaults a missing scope to Cluster)."""
    if not isinstance(params, dict):
        return []
    causes = _resource_backend(params, path)
    scope = params.get("scope")
    namespace = params.get("namespace")
    if scope is None:
        return [*causes, required(f"{path}.scope")]
    if scope not in _SCOPES:
        return [*causes, not_supported(f"{path}.scope", scope, _SCOPES)]
    if scope == "Namespace" and namespace is None:
        causes.append(required(f"{path}.namespace", "`parameters.scope` is set to 'Namespace'"))
    elif scope == "Namespace":
        causes += invalids(f"{path}.namespace", namespace, dns1123_label_errors(str(namespace)))
    if scope == "Cluster" and namespace is not None:
        causes.append(forbidden(f"{path}.namespace", "`parameters.scope` is set to 'Cluster'"))
    return causes


def _ingress_class(write: Write) -> Causes:
    """ValidateIngressClass; on an update the controller is immutable (checked first)."""
    spec = write.obj.get("spec") or {}
    controller = str(spec.get("controller") or "")
    causes: Causes = []
    if write.old is not None:
        old = str((write.old.get("spec") or {}).get("controller") or "")
        causes += immutable("spec.controller", controller, old, go_quote(controller))
    if len(controller) > _MAX_CONTROLLER:
        causes.append(too_long("spec.controller", _MAX_CONTROLLER))
    causes += domain_prefixed_path("spec.controller", controller)
    return causes + _class_parameters(spec.get("parameters"), "spec.parameters")


VALIDATORS: dict[tuple[str, str], Validator] = {
    (GROUP, "ingresses"): _ingress,
    (GROUP, "ingressclasses"): _ingress_class,
    (GROUP, "networkpolicies"): _network_policy,
}
