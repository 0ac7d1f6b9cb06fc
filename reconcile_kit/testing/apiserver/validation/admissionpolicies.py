"""Validation of ValidatingAdmissionPolicies and their bindings (kubernetes
pkg/apis/admissionregistration/validation ValidateValidatingAdmissionPolicy and
ValidateValidatingAdmissionPolicyBinding) and the v1 defaults of a policy's spec and match
resources.

CEL expressions are checked for syntax and undeclared references only (kube-apiserver also
type-checks them and estimates their cost); the status subresource is not validated."""

from __future__ import annotations

import re
from typing import Any

from ....meta.cel import compile_error
from ....meta.validation import (
    dns1035_label_errors,
    dns1123_subdomain_errors,
    path_segment_errors,
    qualified_name_errors,
)
from ..gofmt import go_quote
from ..store import Obj
from ..webhookconfig import match_condition_causes, rule_causes, selector_causes
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

GROUP = "admissionregistration.k8s.io"
_FAILURE_POLICIES = ("Fail", "Ignore")
_MATCH_POLICIES = ("Equivalent", "Exact")
_REASONS = ("Forbidden", "Invalid", "RequestEntityTooLarge")
_ACTIONS = ("Audit", "Deny", "Warn")
_MAX_AUDIT_ANNOTATIONS = 20
_MAX_VALUE_EXPRESSION = 5 * 1024
_IDENTIFIER = re.compile(r"^[_a-zA-Z][_a-zA-Z0-9]*$")
_RESERVED = frozenset(
    {
        *("true", "false", "null", "in", "as", "break", "const", "continue", "else", "for"),
        *("function", "if", "import", "let", "loop", "package", "namespace", "return"),
        *("var", "void", "while"),
    }
)
_BASE = frozenset({"object", "oldObject", "request", "namespaceObject"})
_DENY_AND_WARN = (
    "must not contain both Deny and Warn (repeating the same validation failure "
    "information in the API response and headers serves no purpose)"
)


def _expression(expression: str, field: str, declared: frozenset[str]) -> Causes:
    report = compile_error(expression, declared)
    return [] if report is None else [invalid(field, expression, f"compilation failed: {report}")]


def _param_kind(kind: Obj) -> Causes:
    field = "spec.paramKind"
    api_version, name = str(kind.get("apiVersion") or ""), str(kind.get("kind") or "")
    causes: Causes = []
    if not api_version:
        causes.append(required(f"{field}.apiVersion"))
    elif api_version.count("/") > 1:
        detail = f"unexpected GroupVersion string: {api_version}"
        causes.append(invalid(f"{field}.apiVersion", api_version, detail))
    elif api_version != "/":
        group, _, version = api_version.rpartition("/")
        if group and (errors := dns1123_subdomain_errors(group)):
            causes.append(invalid(f"{field}.apiVersion", group, ",".join(errors)))
        if not version:
            detail = "version must be specified"
            causes.append(invalid(f"{field}.apiVersion", api_version, detail))
        elif errors := dns1035_label_errors(version):
            causes.append(invalid(f"{field}.apiVersion", version, ",".join(errors)))
    if not name:
        causes.append(required(f"{field}.kind"))
    elif errors := dns1035_label_errors(name.lower()):
        detail = "may have mixed case, but should otherwise match: " + ",".join(errors)
        causes.append(invalid(f"{field}.kind", name, detail))
    return causes


def _named_rules(rules: list[Any], field: str) -> Causes:
    causes: Causes = []
    for i, rule in enumerate(rules):
        path, names = f"{field}[{i}]", set()
        for j, name in enumerate(str(n) for n in as_list(as_dict(rule).get("resourceNames"))):
            causes += invalids(f"{path}.resourceNames[{j}]", name, path_segment_errors(name))
            if name in names:
                causes.append(duplicate(f"{path}.resourceNames[{j}]", name))
            names.add(name)
        causes += rule_causes(path, rule)
    return causes


def match_resources_causes(match: Any, field: str) -> Causes:
    """validateMatchResources (after the v1 defaults)."""
    if not isinstance(match, dict):
        return []
    policy = match.get("matchPolicy")
    causes = [] if policy else [required(f"{field}.matchPolicy")]
    if policy and policy not in _MATCH_POLICIES:
        causes.append(not_supported(f"{field}.matchPolicy", str(policy), _MATCH_POLICIES))
    for key in ("namespaceSelector", "objectSelector"):
        if match.get(key) is None:
            causes.append(required(f"{field}.{key}"))
        else:
            causes += selector_causes(f"{field}.{key}", match[key])
    causes += _named_rules(as_list(match.get("resourceRules")), f"{field}.resourceRules")
    excluded = as_list(match.get("excludeResourceRules"))
    return causes + _named_rules(excluded, f"{field}.excludeResourceRules")


def _variable(variable: Obj, field: str, declared: frozenset[str]) -> Causes:
    name, expression = str(variable.get("name") or ""), str(variable.get("expression") or "")
    causes: Causes = []
    if not name.strip():
        causes.append(required(f"{field}.name", "name is not specified"))
    elif not _IDENTIFIER.match(name) or name in _RESERVED:
        causes.append(invalid(f"{field}.name", name, "name is not a valid CEL identifier"))
    if not expression.strip():
        causes.append(required(f"{field}.expression", "expression is not specified"))
    else:
        causes += _expression(expression, f"{field}.expression", declared)
    return causes


def _validation(validation: Obj, field: str, declared: frozenset[str]) -> Causes:
    expression = str(validation.get("expression") or "")
    message = str(validation.get("message") or "")
    message_expression = str(validation.get("messageExpression") or "")
    causes: Causes = []
    if not expression.strip():
        causes.append(required(f"{field}.expression", "expression is not specified"))
    else:
        causes += _expression(expression, f"{field}.expression", declared)
    if message_expression and not message_expression.strip():
        detail = "must be non-empty if specified"
        causes.append(invalid(f"{field}.messageExpression", message_expression, detail))
    elif message_expression.strip():
        without_authorizer = declared - {"authorizer"}
        causes += _expression(message_expression, f"{field}.messageExpression", without_authorizer)
    if message and not message.strip():
        detail = "message must be non-empty if specified"
        causes.append(invalid(f"{field}.message", message, detail))
    elif "\n" in message.strip() or "\r" in message.strip():
        causes.append(invalid(f"{field}.message", message, "message must not contain line breaks"))
    reason = validation.get("reason")
    if reason is not None and reason not in _REASONS:
        causes.append(not_supported(f"{field}.reason", str(reason), _REASONS))
    return causes


def _audit_annotation(annotation: Obj, field: str, policy: str, declared: frozenset[str]) -> Causes:
    key, value = str(annotation.get("key") or ""), str(annotation.get("valueExpression") or "")
    if policy:
        qualified = f"{policy}/{key}"
        causes = invalids(f"{field}.key", qualified, qualified_name_errors(qualified))
    else:
        causes = [invalid(f"{field}.key", key, "requires metadata.name be non-empty")]
    trimmed = value.strip()
    if not trimmed:
        causes.append(required(f"{field}.valueExpression", "valueExpression is not specified"))
    elif len(trimmed.encode()) > _MAX_VALUE_EXPRESSION:
        detail = f"must not exceed {_MAX_VALUE_EXPRESSION} bytes in length"
        causes.append(required(f"{field}.valueExpression", detail))
    else:
        report = compile_error(trimmed, declared)
        if report is not None:
            detail = f"compilation failed: {report}"
            causes.append(invalid(f"{field}.valueExpression", value, detail))
    return causes


def _declared(spec: Obj) -> frozenset[str]:
    extra = {"authorizer"}
    if spec.get("paramKind") is not None:
        extra.add("params")
    if as_list(spec.get("variables")):
        extra.add("variables")
    return _BASE | extra


def _checks(spec: Obj, policy: str) -> Causes:
    """The validations and audit annotations (at least one of them)."""
    validations, annotations = as_list(spec.get("validations")), spec.get("auditAnnotations")
    if not validations and not as_list(annotations):
        detail = "validations or auditAnnotations must contain at least one item"
        return [required("spec.validations", detail), required("spec.auditAnnotations", detail)]
    declared = _declared(spec)
    causes: Causes = []
    for i, validation in enumerate(validations):
        causes += _validation(as_dict(validation), f"spec.validations[{i}]", declared)
    if not isinstance(annotations, list):
        return causes
    if len(annotations) > _MAX_AUDIT_ANNOTATIONS:
        detail = f"must not have more than {_MAX_AUDIT_ANNOTATIONS} auditAnnotations"
        causes.append(invalid("spec.auditAnnotations", f"{len(annotations)} items", detail))
    keys: set[str] = set()
    for i, annotation in enumerate(as_dict(a) for a in annotations):
        field = f"spec.auditAnnotations[{i}]"
        causes += _audit_annotation(annotation, field, policy, declared)
        key = str(annotation.get("key") or "")
        if key in keys:
            causes.append(duplicate(f"{field}.key", key))
        keys.add(key)
    return causes


def _policy_spec(spec: Obj, policy: str) -> Causes:
    failure = spec.get("failurePolicy")
    causes = [] if failure else [required("spec.failurePolicy")]
    if failure and failure not in _FAILURE_POLICIES:
        causes.append(not_supported("spec.failurePolicy", str(failure), _FAILURE_POLICIES))
    if spec.get("paramKind") is not None:
        causes += _param_kind(as_dict(spec["paramKind"]))
    match = spec.get("matchConstraints")
    if not isinstance(match, dict):
        causes.append(required("spec.matchConstraints"))
    else:
        causes += match_resources_causes(match, "spec.matchConstraints")
        if not as_list(match.get("resourceRules")):
            causes.append(required("spec.matchConstraints.resourceRules"))
    conditions = as_list(spec.get("matchConditions"))
    variables = _BASE | {"authorizer"} | ({"params"} if spec.get("paramKind") else set())
    causes += match_condition_causes("spec.matchConditions", conditions, frozenset(variables))
    declared = _declared(spec)
    for i, variable in enumerate(as_list(spec.get("variables"))):
        causes += _variable(as_dict(variable), f"spec.variables[{i}]", declared)
    return causes + _checks(spec, policy)


def _policy(write: Write) -> Causes:
    if write.subresource:
        return []
    name = str(as_dict(write.obj.get("metadata")).get("name") or "")
    return _policy_spec(as_dict(write.obj.get("spec")), name)


def _param_ref(ref: Any) -> Causes:
    if not isinstance(ref, dict):
        return []
    field, name, selector = "spec.paramRef", str(ref.get("name") or ""), ref.get("selector")
    exclusive = "name and selector are mutually exclusive"
    causes: Causes = []
    if name:
        causes += invalids(f"{field}.name", name, path_segment_errors(name))
        if selector is not None:
            causes.append(forbidden(f"{field}.name", exclusive))
    if selector is not None:
        causes += selector_causes(f"{field}.selector", selector)
        if name:
            causes.append(forbidden(f"{field}.selector", exclusive))
    if not name and selector is None:
        causes.append(required(field, "one of name or selector must be specified"))
    action = ref.get("parameterNotFoundAction")
    if not action:
        causes.append(required(f"{field}.parameterNotFoundAction"))
    elif action not in ("Deny", "Allow"):
        causes.append(
            not_supported(f"{field}.parameterNotFoundAction", str(action), ("Deny", "Allow"))
        )
    return causes


def _actions(actions: list[Any]) -> Causes:
    field, seen = "spec.validationActions", set()
    causes: Causes = []
    for i, action in enumerate(str(a) for a in actions):
        if action not in _ACTIONS:
            causes.append(not_supported(f"{field}[{i}]", action, _ACTIONS))
        if action in seen:
            causes.append(duplicate(f"{field}[{i}]", action))
        seen.add(action)
    if {"Deny", "Warn"} <= seen:
        shown = "[]admissionregistration.ValidationAction{" + ", ".join(
            go_quote(str(a)) for a in actions
        )
        causes.append(invalid(field, shown + "}", _DENY_AND_WARN, rendered=True))
    if not seen:
        causes.append(required(field, "at least one validation action is required"))
    return causes


def _binding(write: Write) -> Causes:
    spec = as_dict(write.obj.get("spec"))
    policy = str(spec.get("policyName") or "")
    if policy:
        causes = invalids("spec.policyName", policy, dns1123_subdomain_errors(policy))
    else:
        causes = [required("spec.policyName")]
    causes += _param_ref(spec.get("paramRef"))
    causes += match_resources_causes(spec.get("matchResources"), "spec.matchResources")
    return causes + _actions(as_list(spec.get("validationActions")))


def _match_defaults(match: Any) -> None:
    if not isinstance(match, dict):
        return
    if match.get("matchPolicy") is None:
        match["matchPolicy"] = "Equivalent"
    for key in ("namespaceSelector", "objectSelector"):
        if match.get(key) is None:
            match[key] = {}
    for key in ("resourceRules", "excludeResourceRules"):
        for rule in as_list(match.get(key)):
            if isinstance(rule, dict) and rule.get("scope") is None:
                rule["scope"] = "*"


def policy_defaults(obj: Obj) -> None:
    """SetDefaults_ValidatingAdmissionPolicySpec, _MatchResources and _Rule."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    if spec.get("failurePolicy") is None:
        spec["failurePolicy"] = "Fail"
    _match_defaults(spec.get("matchConstraints"))


def binding_defaults(obj: Obj) -> None:
    """SetDefaults_MatchResources and _Rule of a binding's match resources."""
    _match_defaults(as_dict(obj.get("spec")).get("matchResources"))


VALIDATORS: dict[tuple[str, str], Validator] = {
    (GROUP, "validatingadmissionpolicies"): _policy,
    (GROUP, "validatingadmissionpolicybindings"): _binding,
}
