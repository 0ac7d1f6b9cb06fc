"""admissionregistration.k8s.io/v1 webhook configurations: defaults and validation.

As kube-apiserver 1.32 (k8s.io/kubernetes pkg/apis/admissionregistration/v1/defaults.go and
pkg/apis/admissionregistration/validation/validation.go); messages checked against
kube-apiserver in tests/conformance/test_admission_webhooks.py. ``matchConditions``: names,
duplicates, syntax and undeclared variables are checked, not the expressions' types.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from ...meta.selectors import SelectorError, label_selector_from_dict
from ...meta.validation import (
    dns1035_label_errors,
    dns1123_label_errors,
    dns1123_subdomain_errors,
    qualified_name_errors,
)
from . import errors
from .cel import compile_error
from .store import Obj

Causes = list[dict[str, str]]

VALIDATING = "validatingwebhookconfigurations"
MUTATING = "mutatingwebhookconfigurations"
ACCEPTED_REVIEW_VERSIONS = ("v1", "v1beta1")
_OPERATIONS = ("*", "CONNECT", "CREATE", "DELETE", "UPDATE")
_SCOPES = ("*", "Cluster", "Namespaced")
_FORM = "; desired format: https://host[/path]"


def configuration_defaults(obj: Obj, mutating: bool) -> None:
    """SetDefaults_ValidatingWebhook / _MutatingWebhook / _Rule / _ServiceReference."""
    for hook in obj.get("webhooks") or []:
        if not isinstance(hook, dict):
            continue
        hook.setdefault("failurePolicy", "Fail")
        hook.setdefault("matchPolicy", "Equivalent")
        if hook.get("namespaceSelector") is None:
            hook["namespaceSelector"] = {}
        if hook.get("objectSelector") is None:
            hook["objectSelector"] = {}
        hook.setdefault("timeoutSeconds", 10)
        if mutating:
            hook.setdefault("reinvocationPolicy", "Never")
        for rule in hook.get("rules") or []:
            if isinstance(rule, dict):
                rule.setdefault("scope", "*")
        service = (hook.get("clientConfig") or {}).get("service")
        if isinstance(service, dict):
            service.setdefault("port", 443)


def _go_list(values: list[Any], go_type: str = "[]string") -> str:
    return go_type + "{" + ", ".join(f'"{v}"' for v in values) + "}"


def _quoted(values: tuple[str, ...]) -> str:
    return ", ".join(f'"{v}"' for v in values)


def _required(field: str, detail: str = "") -> dict[str, str]:
    message = f"Required value: {detail}" if detail else "Required value"
    return errors.cause("FieldValueRequired", field, message)


def _invalid(field: str, value: str, detail: str) -> dict[str, str]:
    return errors.cause("FieldValueInvalid", field, f"Invalid value: {value}: {detail}")


def _not_supported(field: str, value: Any, supported: tuple[str, ...]) -> dict[str, str]:
    return errors.cause(
        "FieldValueNotSupported",
        field,
        f'Unsupported value: "{value}": supported values: {_quoted(supported)}',
    )


def _fully_qualified(path: str, name: Any) -> Causes:
    """utilvalidation.IsFullyQualifiedName."""
    if not name:
        return [_required(path)]
    name = str(name).removesuffix(".")
    errs = dns1123_subdomain_errors(name)
    if errs:
        return [_invalid(path, f'"{name}"', ",".join(errs))]
    labels = name.split(".")
    if len(labels) < 3:
        return [
            _invalid(
                path,
                f'"{name}"',
                "should be a domain with at least three segments separated by dots",
            )
        ]
    for label in labels:
        errs = dns1123_label_errors(label)
        if errs:
            return [_invalid(path, f'"{label}"', ",".join(errs))]
    return []


def _resources(path: str, resources: list[Any]) -> Causes:
    causes: Causes = []
    if not resources:
        causes.append(_required(path))
    wildcard_sub: set[str] = set()
    wildcard_res: set[str] = set()
    double = single = plain = False
    for i, item in enumerate(resources):
        if not item:
            causes.append(_required(f"{path}[{i}]"))
            continue
        double = double or item == "*/*"
        single = single or item == "*"
        res, slash, sub = str(item).partition("/")
        if not slash:
            plain = item != "*"
            continue
        if res in wildcard_sub:
            causes.append(
                _invalid(
                    f"{path}[{i}]", f'"{item}"', f"if '{res}/*' is present, must not specify {item}"
                )
            )
        if sub in wildcard_res:
            causes.append(
                _invalid(
                    f"{path}[{i}]", f'"{item}"', f"if '*/{sub}' is present, must not specify {item}"
                )
            )
        if sub == "*":
            wildcard_sub.add(res)
        if res == "*":
            wildcard_res.add(sub)
    if len(resources) > 1 and double:
        causes.append(
            _invalid(
                path, _go_list(resources), "if '*/*' is present, must not specify other resources"
            )
        )
    if single and plain:
        causes.append(
            _invalid(
                path,
                _go_list(resources),
                "if '*' is present, must not specify other resources without subresources",
            )
        )
    return causes


def rule_causes(path: str, rule: Any) -> Causes:
    """validateRuleWithOperations."""
    if not isinstance(rule, dict):
        return []
    causes: Causes = []
    operations = rule.get("operations") or []
    if not operations:
        causes.append(_required(f"{path}.operations"))
    if len(operations) > 1 and "*" in operations:
        causes.append(
            _invalid(
                f"{path}.operations",
                _go_list(operations, "[]admissionregistration.OperationType"),
                "if '*' is present, must not specify other operations",
            )
        )
    for i, op in enumerate(operations):
        if op not in _OPERATIONS:
            causes.append(_not_supported(f"{path}.operations[{i}]", op, _OPERATIONS))
    groups = rule.get("apiGroups") or []
    if not groups:
        causes.append(_required(f"{path}.apiGroups"))
    if len(groups) > 1 and "*" in groups:
        causes.append(
            _invalid(
                f"{path}.apiGroups",
                _go_list(groups),
                "if '*' is present, must not specify other API groups",
            )
        )
    versions = rule.get("apiVersions") or []
    if not versions:
        causes.append(_required(f"{path}.apiVersions"))
    if len(versions) > 1 and "*" in versions:
        causes.append(
            _invalid(
                f"{path}.apiVersions",
                _go_list(versions),
                "if '*' is present, must not specify other API versions",
            )
        )
    for i, version in enumerate(versions):
        if not version:
            causes.append(_required(f"{path}.apiVersions[{i}]"))
    causes += _resources(f"{path}.resources", rule.get("resources") or [])
    scope = rule.get("scope")
    if scope is not None and scope not in _SCOPES:
        causes.append(_not_supported(f"{path}.scope", scope, _SCOPES))
    return causes


def selector_causes(path: str, selector: Any) -> Causes:
    """ValidateLabelSelector (strict)."""
    if not isinstance(selector, dict):
        return []
    causes: Causes = []
    for i, expr in enumerate(selector.get("matchExpressions") or []):
        if not isinstance(expr, dict):
            continue
        where = f"{path}.matchExpressions[{i}]"
        operator = expr.get("operator")
        values = expr.get("values") or []
        if operator in ("In", "NotIn") and not values:
            causes.append(
                _required(f"{where}.values", "must be specified when `operator` is 'In' or 'NotIn'")
            )
        elif operator in ("Exists", "DoesNotExist") and values:
            causes.append(
                errors.cause(
                    "FieldValueForbidden",
                    f"{where}.values",
                    "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                )
            )
        elif operator not in ("In", "NotIn", "Exists", "DoesNotExist"):
            causes.append(
                _invalid(f"{where}.operator", f'"{operator}"', "not a valid selector operator")
            )
    if not causes:
        try:
            label_selector_from_dict(selector)
        except SelectorError as exc:
            causes.append(_invalid(path, "selector", str(exc)))
    return causes


def _url(path: str, url: str) -> Causes:
    """webhook.ValidateWebhookURL with forceHttps."""
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        return [_required(path, f"url must be a valid URL: {exc}{_FORM}")]
    causes: Causes = []
    if parts.scheme != "https":
        causes.append(
            _invalid(path, f'"{parts.scheme}"', "'https' is the only allowed URL scheme" + _FORM)
        )
    if not parts.netloc:
        causes.append(_invalid(path, '""', "host must be specified" + _FORM))
    if "@" in parts.netloc:
        user = parts.netloc.rpartition("@")[0]
        causes.append(_invalid(path, f'"{user}"', "user information is not permitted in the URL"))
    if parts.fragment:
        causes.append(
            _invalid(path, f'"{parts.fragment}"', "fragments are not permitted in the URL")
        )
    if parts.query:
        causes.append(
            _invalid(path, f'"{parts.query}"', "query parameters are not permitted in the URL")
        )
    return causes


def _service(path: str, service: Obj) -> Causes:
    """webhook.ValidateWebhookService."""
    causes: Causes = []
    if not service.get("name"):
        causes.append(_required(f"{path}.name", "service name is required"))
    if not service.get("namespace"):
        causes.append(_required(f"{path}.namespace", "service namespace is required"))
    port = service.get("port", 443)
    if not isinstance(port, int) or not 1 <= port <= 65535:
        causes.append(
            _invalid(
                f"{path}.port",
                str(port),
                "port is not valid: must be between 1 and 65535, inclusive",
            )
        )
    url_path = service.get("path")
    if url_path is None or url_path in ("", "/"):
        return causes
    where = f"{path}.path"
    if url_path == "//":
        return [*causes, _invalid(where, f'"{url_path}"', "segment[0] may not be empty")]
    if not url_path.startswith("/"):
        causes.append(_invalid(where, f'"{url_path}"', "must start with a '/'"))
    check = url_path[1:].removesuffix("/")
    for i, step in enumerate(check.split("/")):
        if not step:
            causes.append(_invalid(where, f'"{url_path}"', f"segment[{i}] may not be empty"))
            continue
        for failure in dns1123_subdomain_errors(step):
            causes.append(_invalid(where, f'"{url_path}"', f"segment[{i}]: {failure}"))
    return causes


_CONDITION_VARIABLES = frozenset({"object", "oldObject", "request", "authorizer"})


def match_condition_causes(
    path: str, conditions: list[Any], variables: frozenset[str] = _CONDITION_VARIABLES
) -> Causes:
    """validateMatchConditions: names (qualified, unique), expressions that compile with
    ``variables`` declared, at most 64."""
    causes: Causes = []
    names: set[str] = set()
    for i, condition in enumerate(conditions):
        if not isinstance(condition, dict):
            continue
        where = f"{path}[{i}]"
        name = condition.get("name") or ""
        if not name:
            causes.append(_required(f"{where}.name"))
        else:
            for failure in qualified_name_errors(name):
                causes.append(_invalid(f"{where}.name", f'"{name}"', failure))
            if name in names:
                causes.append(
                    errors.cause(
                        "FieldValueDuplicate", f"{where}.name", f'Duplicate value: "{name}"'
                    )
                )
            names.add(name)
        expression = condition.get("expression") or ""
        if not expression:
            causes.append(_required(f"{where}.expression"))
            continue
        report = compile_error(expression, variables)
        if report is not None:
            causes.append(
                _invalid(f"{where}.expression", f'"{expression}"', f"compilation failed: {report}")
            )
    if len(conditions) > 64:
        causes.append(
            errors.cause(
                "FieldValueTooMany",
                path,
                f"Too many: {len(conditions)}: must have at most 64 items",
            )
        )
    return causes


def _review_versions(path: str, versions: list[Any]) -> Causes:
    if not versions:
        return [_required(path, "must specify one of " + ", ".join(ACCEPTED_REVIEW_VERSIONS))]
    causes: Causes = []
    seen: set[str] = set()
    accepted = False
    for i, version in enumerate(versions):
        if version in seen:
            causes.append(_invalid(f"{path}[{i}]", f'"{version}"', "duplicate version"))
            continue
        seen.add(version)
        for failure in dns1035_label_errors(str(version)):
            causes.append(_invalid(f"{path}[{i}]", f'"{version}"', failure))
        accepted = accepted or version in ACCEPTED_REVIEW_VERSIONS
    if not accepted:
        causes.append(
            _invalid(
                path,
                _go_list(versions),
                "must include at least one of " + ", ".join(ACCEPTED_REVIEW_VERSIONS),
            )
        )
    return causes


def _webhook(path: str, hook: Obj, mutating: bool) -> Causes:
    causes = _fully_qualified(f"{path}.name", hook.get("name"))
    for i, rule in enumerate(hook.get("rules") or []):
        causes += rule_causes(f"{path}.rules[{i}]", rule)
    policy = hook.get("failurePolicy")
    if policy is not None and policy not in ("Fail", "Ignore"):
        causes.append(_not_supported(f"{path}.failurePolicy", policy, ("Fail", "Ignore")))
    match = hook.get("matchPolicy")
    if match is not None and match not in ("Equivalent", "Exact"):
        causes.append(_not_supported(f"{path}.matchPolicy", match, ("Equivalent", "Exact")))
    effects = hook.get("sideEffects")
    if effects is None:
        causes.append(_required(f"{path}.sideEffects", "must specify one of None, NoneOnDryRun"))
    elif effects not in ("None", "NoneOnDryRun"):
        causes.append(_not_supported(f"{path}.sideEffects", effects, ("None", "NoneOnDryRun")))
    timeout = hook.get("timeoutSeconds")
    if isinstance(timeout, int) and not 1 <= timeout <= 30:
        causes.append(
            _invalid(
                f"{path}.timeoutSeconds",
                str(timeout),
                "the timeout value must be between 1 and 30 seconds",
            )
        )
    causes += selector_causes(f"{path}.namespaceSelector", hook.get("namespaceSelector"))
    causes += selector_causes(f"{path}.objectSelector", hook.get("objectSelector"))
    if mutating:
        again = hook.get("reinvocationPolicy")
        if again is not None and again not in ("IfNeeded", "Never"):
            causes.append(
                _not_supported(f"{path}.reinvocationPolicy", again, ("IfNeeded", "Never"))
            )
    config = hook.get("clientConfig") or {}
    url, service = config.get("url"), config.get("service")
    if (url is None) == (service is None):
        causes.append(
            _required(f"{path}.clientConfig", "exactly one of url or service is required")
        )
    elif url is not None:
        causes += _url(f"{path}.clientConfig.url", str(url))
    elif isinstance(service, dict):
        causes += _service(f"{path}.clientConfig.service", service)
    causes += match_condition_causes(f"{path}.matchConditions", hook.get("matchConditions") or [])
    return causes


def configuration_causes(obj: Obj, mutating: bool) -> Causes:
    """validateValidatingWebhookConfiguration / validateMutatingWebhookConfiguration."""
    causes: Causes = []
    names: set[str] = set()
    for i, hook in enumerate(obj.get("webhooks") or []):
        if not isinstance(hook, dict):
            continue
        path = f"webhooks[{i}]"
        causes += _webhook(path, hook, mutating)
        causes += _review_versions(
            f"{path}.admissionReviewVersions", hook.get("admissionReviewVersions") or []
        )
        name = hook.get("name")
        if name:
            if name in names:
                causes.append(
                    errors.cause(
                        "FieldValueDuplicate", f"{path}.name", f'Duplicate value: "{name}"'
                    )
                )
            names.add(name)
    return causes
