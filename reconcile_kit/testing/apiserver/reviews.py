"""The create-only reviews of authentication.k8s.io/v1 and authorization.k8s.io/v1, as
kube-apiserver answers them: SelfSubjectReview (``kubectl auth whoami``), TokenReview,
SelfSubjectAccessReview (``kubectl auth can-i``), SubjectAccessReview,
LocalSubjectAccessReview and SelfSubjectRulesReview (``kubectl auth can-i --list``).
Decided by the server's authorizer (:mod:`.rbac`; everything is allowed without one)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from . import errors
from .authn import Authenticator, User
from .gofmt import go_quote
from .rbac import Attributes, Authorizer, aggregate

__all__ = ["answer_review"]


def answer_review(
    kind: str,
    body: Any,
    namespace: str,
    user: User,
    authenticator: Authenticator,
    authorizer: Authorizer | None,
    audience: str,
) -> dict[str, Any]:
    """The answer to a review of ``kind`` sent by ``user``; APIError 400 for a body that
    is not one."""
    if not isinstance(body, dict):
        raise errors.bad_request("the body of the request must be a JSON object")
    answer: dict[str, Any] = {"kind": kind, "apiVersion": body.get("apiVersion", "")}
    spec: dict[str, Any] = body["spec"] if isinstance(body.get("spec"), dict) else {}
    if kind == "SelfSubjectReview":
        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return {
            **answer,
            "metadata": {"creationTimestamp": stamp},
            "status": {"userInfo": user.info()},
        }
    sent = body["metadata"] if isinstance(body.get("metadata"), dict) else {}
    answer["metadata"] = {**sent, "creationTimestamp": None}
    answer["spec"] = spec
    if kind == "TokenReview":
        answer["status"] = _token_status(str(spec.get("token", "")), authenticator, audience)
    elif kind == "SelfSubjectRulesReview":
        if not spec.get("namespace"):  # selfsubjectrulesreview REST.Create
            raise errors.bad_request("no namespace on request")
        # its REST answers with a new object holding only the status
        answer.update(metadata={"creationTimestamp": None}, spec={})
        answer["status"] = _rules_status(user, str(spec.get("namespace", "")), authorizer)
    else:
        causes = _access_review_causes(kind, spec, namespace)
        if causes:  # the internal object's Kind is empty: ".authorization.k8s.io"
            raise errors.invalid("", "authorization.k8s.io", "", causes)
        subject = user if kind == "SelfSubjectAccessReview" else _subject(spec)
        answer["status"] = _access_status(subject, spec, namespace, authorizer)
    return answer


def _invalid(field: str, value: str, detail: str) -> dict[str, str]:
    return errors.cause("FieldValueInvalid", field, f"Invalid value: {value}: {detail}")


def _access_review_causes(kind: str, spec: dict[str, Any], namespace: str) -> errors.Causes:
    """ValidateSubjectAccessReview, ValidateSelfSubjectAccessReview and
    ValidateLocalSubjectAccessReview (pkg/apis/authorization/validation): the spec's
    attributes, one kind of them; a subject; a local review's namespace."""
    resource, other = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    shown = "null"
    if isinstance(other, dict):  # the struct as %#v prints it
        path, verb = go_quote(str(other.get("path", ""))), go_quote(str(other.get("verb", "")))
        shown = f"authorization.NonResourceAttributes{{Path:{path}, Verb:{verb}}}"
    causes = []
    if resource is not None and other is not None:
        causes.append(
            _invalid(
                "spec.nonResourceAttributes",
                shown,
                "cannot be specified in combination with resourceAttributes",
            )
        )
    if resource is None and other is None:
        causes.append(
            _invalid(
                "spec.resourceAttributes",
                '"null"',
                "exactly one of nonResourceAttributes or resourceAttributes must be specified",
            )
        )
    if kind != "SelfSubjectAccessReview" and not spec.get("user") and not spec.get("groups"):
        user = go_quote(str(spec.get("user") or ""))
        causes.append(
            _invalid("spec.user", user, "at least one of user or group must be specified")
        )
    if kind == "LocalSubjectAccessReview":
        if isinstance(resource, dict) and (resource.get("namespace") or "") != namespace:
            value = go_quote(str(resource.get("namespace") or ""))
            causes.append(
                _invalid(
                    "spec.resourceAttributes.namespace", value, "must match metadata.namespace"
                )
            )
        if other is not None:
            causes.append(
                _invalid("spec.nonResourceAttributes", shown, "disallowed on this kind of request")
            )
    return causes


def _token_status(token: str, authenticator: Authenticator, audience: str) -> dict[str, Any]:
    found = authenticator.review(token)
    if found is None:
        return {"user": {}, "error": "invalid bearer token"}
    return {"authenticated": True, "user": found.info(), "audiences": [audience]}


def _subject(spec: dict[str, Any]) -> User:
    groups = tuple(spec.get("groups") or ())
    return User(str(spec.get("user", "")), groups, str(spec.get("uid", "")))


def _access_status(
    user: User, spec: dict[str, Any], namespace: str, authorizer: Authorizer | None
) -> dict[str, Any]:
    resource = spec.get("resourceAttributes")
    if isinstance(resource, dict):
        attributes = Attributes(
            user,
            str(resource.get("verb", "")),
            True,
            str(resource.get("group", "")),
            str(resource.get("resource", "")),
            str(resource.get("subresource", "")),
            namespace or str(resource.get("namespace", "")),
            str(resource.get("name", "")),
        )
    else:
        other = spec.get("nonResourceAttributes") or {}
        attributes = Attributes(
            user, str(other.get("verb", "")), False, path=str(other.get("path", ""))
        )
    if authorizer is None:
        return {"allowed": True}
    allowed, reason = authorizer.decide(attributes)
    status: dict[str, Any] = {"allowed": allowed}
    if reason:
        status["reason"] = reason
    return status


def _rules_status(user: User, namespace: str, authorizer: Authorizer | None) -> dict[str, Any]:
    if authorizer is None or user.is_master:
        return {
            "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
            "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
            "incomplete": False,
        }
    rules, problems = authorizer.rules_and_errors(user, namespace)
    resource_rules, non_resource_rules = [], []
    for rule in rules:
        if rule.get("nonResourceURLs"):
            non_resource_rules.append(
                {"verbs": rule.get("verbs", []), "nonResourceURLs": rule["nonResourceURLs"]}
            )
        else:
            entry = {
                k: rule[k]
                for k in ("verbs", "apiGroups", "resources", "resourceNames")
                if rule.get(k)
            }
            resource_rules.append(entry)
    status: dict[str, Any] = {
        "resourceRules": resource_rules,
        "nonResourceRules": non_resource_rules,
        "incomplete": False,
    }
    if problems:
        status["evaluationError"] = aggregate(problems)
    return status
