"""Validation of FlowSchemas and PriorityLevelConfigurations (kubernetes
pkg/apis/flowcontrol/validation ValidateFlowSchema, ValidatePriorityLevelConfiguration
and their status updates) and their v1 defaults (pkg/apis/flowcontrol/v1 defaults.go).

Left out: the mandatory objects' fixed specs (``exempt``, ``catch-all``: kube-apiserver
creates and keeps them; the embedded server has none) and the v1beta3 round-trip
annotation."""

from __future__ import annotations

import math
from typing import Any

from ....meta.validation import dns1123_label_errors, dns1123_subdomain_errors
from ..gofmt import go_quote
from ..store import Obj
from .common import (
    Causes,
    Validator,
    Write,
    as_dict,
    as_list,
    duplicate,
    forbidden,
    invalid,
    invalids,
    not_supported,
    required,
)
from .gorender import strings

GROUP = "flowcontrol.apiserver.k8s.io"
_MAX_PRECEDENCE = 10000
_MAX_QUEUES = 10_000_000
_MAX_HASH_BITS = 60
_VERBS: tuple[str, ...] = (
    *("create", "delete", "deletecollection", "get", "list", "patch", "proxy", "update"),
    "watch",
)
_SUBJECT_KINDS = ("Group", "ServiceAccount", "User")
_DISTINGUISHERS = ("ByNamespace", "ByUser")
_NS_INTRO = "each member of this list must be '*' or a DNS-1123 label; "


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _wildcard_list(values: list[str], field: str, what: str) -> Causes:
    if len(values) > 1 and "*" in values:
        detail = f"if '*' is present, must not specify other {what}"
        return [invalid(field, strings(values), detail, rendered=True)]
    return []


def _verbs(rule: Obj, field: str) -> Causes:
    verbs = [str(v) for v in as_list(rule.get("verbs"))]
    if not verbs:
        return [required(f"{field}.verbs", "verbs must contain at least one value")]
    if "*" in verbs:
        return _wildcard_list(verbs, f"{field}.verbs", "verbs")
    if any(v not in _VERBS for v in verbs):
        return [not_supported(f"{field}.verbs", strings(verbs), _VERBS, rendered=True)]
    return []


def _url_detail(path: str) -> str | None:
    """ValidateNonResourceURLPath's complaint about ``path`` (None: valid)."""
    if not path:
        return "must not be empty"
    if path == "/":
        return None
    if not path.startswith("/"):
        return "must start with slash"
    if " " in path:
        return "must not contain white-space"
    if "//" in path:
        return "must not contain double slash"
    stars = path.count("*")
    if stars > 1 or (stars == 1 and path[-2:] != "/*"):
        return "wildcard can only do suffix matching"
    return None


def _non_resource_rule(rule: Obj, field: str) -> Causes:
    causes = _verbs(rule, field)
    urls = [str(u) for u in as_list(rule.get("nonResourceURLs"))]
    if not urls:
        detail = "nonResourceURLs must contain at least one value"
        return [*causes, required(f"{field}.nonResourceURLs", detail)]
    if "*" in urls:
        return causes + _wildcard_list(urls, f"{field}.nonResourceURLs", "non-resource URLs")
    for i, url in enumerate(urls):
        complaint = _url_detail(url)
        if complaint is not None:
            causes.append(invalid(f"{field}.nonResourceURLs[{i}]", url, complaint))
    return causes


def _resource_rule(rule: Obj, field: str) -> Causes:
    causes = _verbs(rule, field)
    for key, what in (("apiGroups", "api group"), ("resources", "resource")):
        values = [str(v) for v in as_list(rule.get(key))]
        if not values:
            detail = f"resource rules must supply at least one {what}"
            causes.append(required(f"{field}.{key}", detail))
        else:
            causes += _wildcard_list(values, f"{field}.{key}", f"{what}s")
    namespaces = [str(v) for v in as_list(rule.get("namespaces"))]
    if not namespaces and rule.get("clusterScope") is not True:
        detail = "resource rules that are not cluster scoped must supply at least one namespace"
        causes.append(required(f"{field}.namespaces", detail))
    elif "*" in namespaces:
        causes += _wildcard_list(namespaces, f"{field}.namespaces", "namespaces")
    else:
        for i, namespace in enumerate(namespaces):
            details = [_NS_INTRO + m for m in dns1123_label_errors(namespace)]
            causes += invalids(f"{field}.namespaces[{i}]", namespace, details)
    return causes


def _named_subject(value: Any, field: str, kind: str) -> Causes:
    if not isinstance(value, dict):
        return [required(field, f"{kind.lower()} is required when subject kind is '{kind}'")]
    return [] if value.get("name") else [required(f"{field}.name")]


def _service_account(value: Any, field: str) -> Causes:
    if not isinstance(value, dict):
        detail = "serviceAccount is required when subject kind is 'ServiceAccount'"
        return [required(field, detail)]
    name, namespace = str(value.get("name") or ""), str(value.get("namespace") or "")
    causes = [] if name else [required(f"{field}.name")]
    if name and name != "*":
        causes += invalids(f"{field}.name", name, dns1123_subdomain_errors(name))
    if namespace:
        causes += invalids(f"{field}.namespace", namespace, dns1123_label_errors(namespace))
    else:
        detail = "must specify namespace for service account"
        causes.append(required(f"{field}.namespace", detail))
    return causes


_SUBJECT_FIELDS = (("ServiceAccount", "serviceAccount"), ("User", "user"), ("Group", "group"))


def _subject(subject: Obj, field: str) -> Causes:
    kind = subject.get("kind")
    if kind not in _SUBJECT_KINDS:
        return [not_supported(f"{field}.kind", str(kind or ""), _SUBJECT_KINDS)]
    key = dict(_SUBJECT_FIELDS)[kind]
    if kind == "ServiceAccount":
        causes = _service_account(subject.get(key), f"{field}.{key}")
    else:
        causes = _named_subject(subject.get(key), f"{field}.{key}", kind)
    for other_kind, other in _SUBJECT_FIELDS:  # in Go's order for each kind
        if other_kind != kind and subject.get(other) is not None:
            detail = f"{other} is forbidden when subject kind is not '{other_kind}'"
            causes.append(forbidden(f"{field}.{other}", detail))
    return causes


def _rule(rule: Obj, field: str) -> Causes:
    subjects = as_list(rule.get("subjects"))
    causes: Causes = []
    for i, subject in enumerate(subjects):
        causes += _subject(as_dict(subject), f"{field}.subjects[{i}]")
    if not subjects:
        detail = "subjects must contain at least one value"
        causes.append(required(f"{field}.subjects", detail))
    resource, non_resource = (
        as_list(rule.get("resourceRules")),
        as_list(rule.get("nonResourceRules")),
    )
    if not resource and not non_resource:
        detail = "at least one of resourceRules and nonResourceRules has to be non-empty"
        causes.append(required(field, detail))
    for i, item in enumerate(resource):
        causes += _resource_rule(as_dict(item), f"{field}.resourceRules[{i}]")
    for i, item in enumerate(non_resource):
        causes += _non_resource_rule(as_dict(item), f"{field}.nonResourceRules[{i}]")
    return causes


def _flow_schema_spec(name: str, spec: Obj) -> Causes:
    precedence, field = _int(spec.get("matchingPrecedence")), "spec.matchingPrecedence"
    causes = [] if precedence > 0 else [invalid(field, precedence, "must be a positive value")]
    if precedence > _MAX_PRECEDENCE:
        causes.append(invalid(field, precedence, f"must not be greater than {_MAX_PRECEDENCE}"))
    if precedence == 1 and name != "exempt":
        detail = "only the schema named 'exempt' may have matchingPrecedence 1"
        causes.append(invalid(field, precedence, detail))
    method = spec.get("distinguisherMethod")
    if isinstance(method, dict) and method.get("type") not in _DISTINGUISHERS:
        shown = (
            f"flowcontrol.FlowDistinguisherMethod{{Type:{go_quote(str(method.get('type') or ''))}}}"
        )
        causes.append(
            not_supported("spec.distinguisherMethod.type", shown, _DISTINGUISHERS, rendered=True)
        )
    level = str(as_dict(spec.get("priorityLevelConfiguration")).get("name") or "")
    field = "spec.priorityLevelConfiguration.name"
    if level:
        causes += invalids(field, level, dns1123_subdomain_errors(level))
    else:
        causes.append(required(field, "must reference a priority level"))
    for i, rule in enumerate(as_list(spec.get("rules"))):
        causes += _rule(as_dict(rule), f"spec.rules[{i}]")
    return causes


def _conditions(obj: Obj) -> Causes:
    """The status's conditions: a type each, none twice."""
    causes: Causes = []
    seen: set[str] = set()
    for i, condition in enumerate(as_list(as_dict(obj.get("status")).get("conditions"))):
        kind = str(as_dict(condition).get("type") or "")
        field = f"status.conditions[{i}].type"
        if kind in seen:
            causes.append(duplicate(field, kind))
        seen.add(kind)
        if not kind:
            causes.append(required(field, "must not be empty"))
    return causes


def _flow_schema(write: Write) -> Causes:
    if write.subresource == "status":
        return _conditions(write.obj)
    name = str(as_dict(write.obj.get("metadata")).get("name") or "")
    return _flow_schema_spec(name, as_dict(write.obj.get("spec"))) + _conditions(write.obj)


def _queuing(queuing: Obj, field: str) -> Causes:
    length, queues, hand = (
        _int(queuing.get(k)) for k in ("queueLengthLimit", "queues", "handSize")
    )
    causes = (
        [] if length > 0 else [invalid(f"{field}.queueLengthLimit", length, "must be positive")]
    )
    if queues <= 0:
        causes.append(invalid(f"{field}.queues", queues, "must be positive"))
    elif queues > _MAX_QUEUES:
        causes.append(invalid(f"{field}.queues", queues, f"must not be greater than {_MAX_QUEUES}"))
    if hand <= 0:
        causes.append(invalid(f"{field}.handSize", hand, "must be positive"))
    elif hand > queues:
        detail = f"should not be greater than queues ({queues})"
        causes.append(invalid(f"{field}.handSize", hand, detail))
    elif math.ceil(math.log2(queues) * hand) > _MAX_HASH_BITS:
        detail = (
            f"required entropy bits of deckSize {queues} and handSize {hand} should not be"
            f" greater than {_MAX_HASH_BITS}"
        )
        causes.append(invalid(f"{field}.handSize", hand, detail))
    return causes


def _limit_response(response: Obj, field: str) -> Causes:
    kind, queuing = response.get("type"), response.get("queuing")
    if kind == "Reject":
        if queuing is None:
            return []
        detail = "must be nil if limited.limitResponse.type is not Limited"
        return [forbidden(f"{field}.queuing", detail)]
    if kind == "Queue":
        if isinstance(queuing, dict):
            return _queuing(queuing, f"{field}.queuing")
        detail = "must not be empty if limited.limitResponse.type is Limited"
        return [required(f"{field}.queuing", detail)]
    return [not_supported(f"{field}.type", str(kind or ""), ("Queue", "Reject"))]


def _percent(value: Any, field: str) -> Causes:
    if isinstance(value, int) and not 0 <= value <= 100:
        return [invalid(field, value, "must be between 0 and 100, inclusive")]
    return []


def _shares(value: Any, field: str) -> Causes:
    if isinstance(value, int) and value < 0:
        return [invalid(field, value, "must be a non-negative integer")]
    return []


def _limited(limited: Obj, field: str) -> Causes:
    causes = _shares(limited.get("nominalConcurrencyShares"), f"{field}.nominalConcurrencyShares")
    causes += _limit_response(as_dict(limited.get("limitResponse")), f"{field}.limitResponse")
    causes += _percent(limited.get("lendablePercent"), f"{field}.lendablePercent")
    borrowing = limited.get("borrowingLimitPercent")
    if isinstance(borrowing, int) and borrowing < 0:
        detail = "if specified, must be a non-negative integer"
        causes.append(invalid(f"{field}.borrowingLimitPercent", borrowing, detail))
    return causes


def _priority_level_spec(name: str, spec: Obj) -> Causes:
    kind = spec.get("type")
    causes: Causes = []
    if (name == "exempt") != (kind == "Exempt"):
        detail = "type must be 'Exempt' if and only if name is 'exempt'"
        causes.append(invalid("spec.type", str(kind or ""), detail))
    if kind == "Exempt":
        if spec.get("limited") is not None:
            causes.append(forbidden("spec.limited", "must be nil if the type is not Limited"))
        exempt = spec.get("exempt")
        if isinstance(exempt, dict):
            field = "spec.exempt"
            causes += _shares(
                exempt.get("nominalConcurrencyShares"), f"{field}.nominalConcurrencyShares"
            )
            causes += _percent(exempt.get("lendablePercent"), f"{field}.lendablePercent")
    elif kind == "Limited":
        if spec.get("exempt") is not None:
            causes.append(forbidden("spec.exempt", "must be nil if the type is Limited"))
        limited = spec.get("limited")
        if isinstance(limited, dict):
            causes += _limited(limited, "spec.limited")
        else:
            causes.append(required("spec.limited", "must not be empty when type is Limited"))
    else:
        causes.append(not_supported("spec.type", str(kind or ""), ("Exempt", "Limited")))
    return causes


def _priority_level(write: Write) -> Causes:
    if write.subresource == "status":
        return _conditions(write.obj)
    name = str(as_dict(write.obj.get("metadata")).get("name") or "")
    return _priority_level_spec(name, as_dict(write.obj.get("spec"))) + _conditions(write.obj)


def flow_schema_defaults(obj: Obj) -> None:
    """SetDefaults_FlowSchemaSpec: matchingPrecedence 0 is 1000."""
    spec = obj.get("spec")
    if isinstance(spec, dict) and not spec.get("matchingPrecedence"):
        spec["matchingPrecedence"] = 1000


def priority_level_defaults(obj: Obj) -> None:
    """SetDefaults_{Exempt,Limited}PriorityLevelConfiguration and _QueuingConfiguration."""
    spec = as_dict(obj.get("spec"))
    exempt, limited = spec.get("exempt"), spec.get("limited")
    if isinstance(exempt, dict):
        for key in ("nominalConcurrencyShares", "lendablePercent"):
            if exempt.get(key) is None:
                exempt[key] = 0
    if not isinstance(limited, dict):
        return
    if limited.get("nominalConcurrencyShares") is None:
        limited["nominalConcurrencyShares"] = 30
    if limited.get("lendablePercent") is None:
        limited["lendablePercent"] = 0
    queuing = as_dict(limited.get("limitResponse")).get("queuing")
    if isinstance(queuing, dict):
        for key, value in (("handSize", 8), ("queues", 64), ("queueLengthLimit", 50)):
            if not queuing.get(key):
                queuing[key] = value


VALIDATORS: dict[tuple[str, str], Validator] = {
    (GROUP, "flowschemas"): _flow_schema,
    (GROUP, "prioritylevelconfigurations"): _priority_level,
}
