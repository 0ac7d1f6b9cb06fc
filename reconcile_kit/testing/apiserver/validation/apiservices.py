"""Validation of APIServices (k8s.io/kube-aggregator pkg/apis/apiregistration/validation
ValidateAPIService, and ValidateAPIServiceStatus on the status subresource).

The name's own rule (a path segment, then ``version.group``) is checked here, after the
generic metadata causes, where kube-apiserver reports it with them (the order differs only
when both kinds of cause come together); a generateName is not held to ``version.group``."""

from __future__ import annotations

import base64
import binascii

from ....meta.validation import dns1035_label_errors, dns1123_subdomain_errors, path_segment_errors
from ..gofmt import go_quote
from ..store import Obj
from .common import Causes, Validator, Write, as_dict, as_list, invalid, invalids, not_supported
from .common import required as required_cause

_CONDITION_STATUSES = ("True", "False", "Unknown")


def _name(obj: Obj, spec: Obj) -> Causes:
    name = str(as_dict(obj.get("metadata")).get("name") or "")
    wanted = f"{spec.get('version') or ''}.{spec.get('group') or ''}"
    if path_segment_errors(name) or name == wanted:
        return []  # the generic name check reported it
    detail = f'must be `spec.version+"."+spec.group`: {go_quote(wanted)}'
    return [invalid("metadata.name", name, detail)]


def _priority(spec: Obj, key: str, most: int) -> Causes:
    value = spec.get(key)
    number = value if isinstance(value, int) and not isinstance(value, bool) else 0
    if 0 < number <= most:
        return []
    return [invalid(f"spec.{key}", number, f"must be positive and less than {most}")]


def _ca_bundle_size(spec: Obj) -> int:
    try:
        return len(base64.b64decode(str(spec.get("caBundle") or ""), validate=True))
    except (binascii.Error, ValueError):
        return 0  # refused as undecodable before validation


def _service(spec: Obj) -> Causes:
    service, skip = spec.get("service"), spec.get("insecureSkipTLSVerify") is True
    bundle = _ca_bundle_size(spec)
    causes: Causes = []
    if not isinstance(service, dict):
        if bundle:
            shown = go_quote(f"{bundle} bytes")
            detail = "local APIServices may not have a caBundle"
            causes.append(invalid("spec.caBundle", shown, detail, rendered=True))
        if skip:
            detail = "local APIServices may not have insecureSkipTLSVerify"
            causes.append(invalid("spec.insecureSkipTLSVerify", True, detail))
        return causes
    for key in ("namespace", "name"):
        if not service.get(key):
            causes.append(required_cause(f"spec.service.{key}"))
    port = service.get("port")
    if isinstance(port, int) and not 1 <= port <= 65535:
        detail = "port is not valid: must be between 1 and 65535, inclusive"
        causes.append(invalid("spec.service.port", port, detail))
    if skip and bundle:
        detail = "may not be true if caBundle is present"
        causes.append(invalid("spec.insecureSkipTLSVerify", True, detail))
    return causes


def _spec_causes(obj: Obj) -> Causes:
    spec = as_dict(obj.get("spec"))
    group, version = str(spec.get("group") or ""), str(spec.get("version") or "")
    causes = _name(obj, spec)
    if not group and version != "v1":
        detail = "only v1 may have an empty group and it better be legacy kube"
        causes.append(required_cause("spec.group", detail))
    if group:
        causes += invalids("spec.group", group, dns1123_subdomain_errors(group))
    causes += invalids("spec.version", version, dns1035_label_errors(version))
    causes += _priority(spec, "groupPriorityMinimum", 20000)
    causes += _priority(spec, "versionPriority", 1000)
    return causes + _service(spec)


def _status_causes(obj: Obj) -> Causes:
    causes: Causes = []
    for i, condition in enumerate(as_list(as_dict(obj.get("status")).get("conditions"))):
        status = as_dict(condition).get("status")
        if status not in _CONDITION_STATUSES:
            field = f"status.conditions[{i}].status"
            causes.append(not_supported(field, str(status or ""), _CONDITION_STATUSES))
    return causes


def _api_service(write: Write) -> Causes:
    if write.subresource == "status":
        return _status_causes(write.obj)
    return _spec_causes(write.obj)


def service_reference_defaults(obj: Obj) -> None:
    """SetDefaults_ServiceReference (apiregistration/v1): a service's port is 443."""
    service = as_dict(obj.get("spec")).get("service")
    if isinstance(service, dict) and service.get("port") is None:
        service["port"] = 443


VALIDATORS: dict[tuple[str, str], Validator] = {
    ("apiregistration.k8s.io", "apiservices"): _api_service,
}
