"""RBAC authorization of the embedded server (``APIServer(authorization="RBAC")``), as
kube-apiserver's RBAC authorizer (k8s.io/kubernetes plugin/pkg/auth/authorizer/rbac):
the rules of the ClusterRoles bound cluster-wide to the user, and of the Roles and
ClusterRoles bound in the request's namespace, matched by verb, API group, resource
(``res/sub``, ``*``, ``*/sub``), resourceNames and nonResourceURLs (``/path``,
``/prefix/*``).

Bootstrap policy kept in code rather than as objects: ``system:masters`` may do anything
(cluster-admin), and every authenticated user may read discovery, version and health
paths (``system:discovery``, ``system:public-info-viewer``), every ServiceAccount the
issuer discovery paths (``system:service-account-issuer-discovery``). An aggregated ClusterRole's
rules are those stored (filled by :mod:`.aggregation` as kube-controller-manager does);
writes of Roles and bindings are checked by :mod:`.rbacescalation`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from . import errors
from .authn import User
from .errors import APIError, _details, qualified
from .gofmt import go_quote

__all__ = ["Attributes", "Authorizer", "forbidden"]

RBAC_GROUP = "rbac.authorization.k8s.io"
_DISCOVERY_URLS = [  # sorted, as the bootstrap policy's PolicyRuleBuilder stores them
    "/api",
    "/api/*",
    "/apis",
    "/apis/*",
    "/healthz",
    "/livez",
    "/openapi",
    "/openapi/*",
    "/readyz",
    "/version",
    "/version/",
]
_PUBLIC_INFO_URLS = ["/healthz", "/livez", "/readyz", "/version", "/version/"]
_ISSUER_DISCOVERY_URLS = [
    "/.well-known/openid-configuration",
    "/.well-known/openid-configuration/",
    "/openid/v1/jwks",
    "/openid/v1/jwks/",
]


@dataclass(frozen=True)
class Attributes:
    """What a request asks to do (k8s.io/apiserver authorizer.Attributes)."""

    user: User
    verb: str
    resource_request: bool
    group: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    path: str = ""


_BOOTSTRAP: tuple[tuple[str, dict[str, Any]], ...] = (
    (
        "system:basic-user",
        {
            "apiGroups": ["authorization.k8s.io"],
            "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
            "verbs": ["create"],
        },
    ),
    (
        "system:basic-user",
        {
            "apiGroups": ["authentication.k8s.io"],
            "resources": ["selfsubjectreviews"],
            "verbs": ["create"],
        },
    ),
    ("system:discovery", {"nonResourceURLs": _DISCOVERY_URLS, "verbs": ["get"]}),
    ("system:public-info-viewer", {"nonResourceURLs": _PUBLIC_INFO_URLS, "verbs": ["get"]}),
)
"""Bootstrap ClusterRoles bound to ``system:authenticated`` (kube-apiserver's bootstrap
policy; each binding is named after its role)."""

_SERVICE_ACCOUNTS_BOOTSTRAP: tuple[tuple[str, dict[str, Any]], ...] = (
    (
        "system:service-account-issuer-discovery",
        {"nonResourceURLs": _ISSUER_DISCOVERY_URLS, "verbs": ["get"]},
    ),
)
"""Bootstrap ClusterRoles bound to ``system:serviceaccounts``."""
_BOOTSTRAP_BY_GROUP = (
    ("system:authenticated", _BOOTSTRAP),
    ("system:serviceaccounts", _SERVICE_ACCOUNTS_BOOTSTRAP),
)
"""The bootstrap ClusterRoleBindings: the group each binds and the roles it grants."""


class Authorizer:
    """Decides from the RBAC objects in the store; ``objects(resource, namespace)`` yields
    the stored ``roles``, ``rolebindings``, ``clusterroles`` and ``clusterrolebindings``."""

    def __init__(self, objects: Any) -> None:
        self._objects = objects

    def allowed(self, attributes: Attributes) -> bool:
        return self.decide(attributes)[0]

    def decide(self, attributes: Attributes) -> tuple[bool, str]:
        """(allowed, reason) as a SubjectAccessReview reports them: ``system:masters`` is
        allowed with no reason (kube-apiserver's privileged-group authorizer), RBAC with
        ``RBAC: allowed by <binding> of <role> to <subject>``; a refusal's reason names the
        roles the user's bindings refer to that do not exist (``RBAC: <errors>``, the
        errors met before the refusal, as RBACAuthorizer.Authorize)."""
        if attributes.user.is_master:
            return True, ""
        problems: list[str] = []
        for found in self._visit(attributes.user, attributes.namespace):
            if isinstance(found, str):
                problems.append(found)
            elif _rule_allows(found[1], attributes):
                return True, f"RBAC: allowed by {found[0]}"
        return False, f"RBAC: {aggregate(problems)}" if problems else ""

    def rules_for(self, attributes: Attributes) -> Iterator[tuple[str, dict[str, Any]]]:
        """(source, rule) of every rule that applies to the user in the namespace."""
        for found in self._visit(attributes.user, attributes.namespace):
            if not isinstance(found, str):
                yield found

    def rules_and_errors(
        self, user: User, namespace: str
    ) -> tuple[list[dict[str, Any]], list[str]]:
        """The rules that apply to ``user`` in ``namespace`` and the errors met finding
        them (the rule resolver's RulesFor)."""
        rules, problems = [], []
        for found in self._visit(user, namespace):
            if isinstance(found, str):
                problems.append(found)
            else:
                rules.append(found[1])
        return rules, problems

    def _visit(self, user: User, namespace: str) -> Iterator[tuple[str, dict[str, Any]] | str]:
        """(source, rule) of each rule the user's bindings give in ``namespace`` (the
        ClusterRoleBindings', then the RoleBindings'), and an error for each binding whose
        role does not exist, worded as the RBAC authorizer's listers word it (as
        DefaultRuleResolver.VisitRulesFor)."""
        for group, bootstrap in _BOOTSTRAP_BY_GROUP:
            if group not in user.groups:
                continue
            for role, rule in bootstrap:
                where = _describe("ClusterRoleBinding", role, "ClusterRole", role, "Group", group)
                yield where, rule
        yield from self._bound_rules(user, "clusterrolebindings", "")
        if namespace:
            yield from self._bound_rules(user, "rolebindings", namespace)

    def _bound_rules(
        self, user: User, plural: str, namespace: str
    ) -> Iterator[tuple[str, dict[str, Any]] | str]:
        """(source, rule) of the roles the ``plural`` bindings in ``namespace`` give
        ``user`` ("": the ClusterRoleBindings), or the error of a missing role."""
        for binding in self._objects(plural, namespace):
            subject = _binds(binding, user)
            if subject is not None:
                ref = binding.get("roleRef") or {}
                kind, name = ref.get("kind", ""), ref.get("name", "")
                rules = self.role_rules(kind, name, namespace)
                if rules is None:
                    if kind in ("Role", "ClusterRole"):
                        yield f'{kind.lower()}.{RBAC_GROUP} "{name}" not found'
                    else:
                        yield f"unsupported role reference kind: {go_quote(kind)}"
                    continue
                source = _source(binding, ref, subject, namespace)
                for rule in rules:
                    yield source, rule

    def resolution_errors(self, user: User, namespace: str) -> list[str]:
        """The errors kube-apiserver's rule resolver meets for ``user`` in ``namespace``
        (its ClusterRoleBindings, then the RoleBindings there): one per binding naming a
        role that does not exist, worded as its role getter does (``roles`` for both
        kinds)."""
        found = []
        for plural, where in (("clusterrolebindings", ""), ("rolebindings", namespace)):
            if plural == "rolebindings" and not namespace:
                continue
            for binding in self._objects(plural, where):
                ref = binding.get("roleRef") or {}
                name = ref.get("name", "")
                missing = self.role_rules(ref.get("kind", ""), name, where) is None
                if _binds(binding, user) is not None and missing:
                    found.append(f'roles.{RBAC_GROUP} "{name}" not found')
        return found

    def role_rules(self, kind: str, name: str, namespace: str) -> list[dict[str, Any]] | None:
        """The rules of the Role (in ``namespace``) or ClusterRole ``name``; None: none."""
        plural, where = ("roles", namespace) if kind == "Role" else ("clusterroles", "")
        for role in self._objects(plural, where):
            if role.get("metadata", {}).get("name") == name:
                return list(role.get("rules") or [])
        return None


def aggregate(messages: list[str]) -> str:
    """utilerrors.NewAggregate(...).Error(): one message as it is, more in brackets, each
    once."""
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def _source(
    binding: dict[str, Any], ref: dict[str, Any], subject: dict[str, Any], namespace: str
) -> str:
    """The binding as kube-apiserver's RBAC authorizer describes it in a reason."""
    name = binding.get("metadata", {}).get("name", "")
    kind = "RoleBinding" if namespace else "ClusterRoleBinding"
    shown = f"{name}/{namespace}" if namespace else name
    subject_name = subject.get("name", "")
    if subject.get("kind") == "ServiceAccount":
        subject_name += "/" + (subject.get("namespace") or namespace)
    return _describe(
        kind, shown, ref.get("kind", ""), ref.get("name", ""), subject.get("kind", ""), subject_name
    )


def _describe(
    kind: str, name: str, role_kind: str, role: str, subject_kind: str, subject: str
) -> str:
    return f'{kind} "{name}" of {role_kind} "{role}" to {subject_kind} "{subject}"'


def _binds(binding: dict[str, Any], user: User) -> dict[str, Any] | None:
    """The subject of ``binding`` that names ``user``, if any."""
    namespace = binding.get("metadata", {}).get("namespace", "")
    for subject in binding.get("subjects") or []:
        kind, name = subject.get("kind"), subject.get("name")
        if kind == "User" and name == user.name:
            return dict(subject)
        if kind == "Group" and name in user.groups:
            return dict(subject)
        if kind == "ServiceAccount":
            account = f"system:serviceaccount:{subject.get('namespace') or namespace}:{name}"
            if account == user.name:
                return dict(subject)
    return None


def _rule_allows(rule: dict[str, Any], attributes: Attributes) -> bool:
    verbs = rule.get("verbs") or []
    if "*" not in verbs and attributes.verb not in verbs:
        return False
    if not attributes.resource_request:
        return _url_matches(rule.get("nonResourceURLs") or [], attributes.path)
    groups = rule.get("apiGroups") or []
    if "*" not in groups and attributes.group not in groups:
        return False
    combined = attributes.resource
    if attributes.subresource:
        combined += "/" + attributes.subresource
    resources = rule.get("resources") or []
    if not any(
        r == "*" or r == combined or (attributes.subresource and r == "*/" + attributes.subresource)
        for r in resources
    ):
        return False
    names = rule.get("resourceNames") or []
    return not names or attributes.name in names


def _url_matches(patterns: Iterable[str], path: str) -> bool:
    for pattern in patterns:
        if pattern == "*" or pattern == path:
            return True
        if pattern.endswith("*") and path.startswith(pattern[:-1]):
            return True
    return False


def forbidden(attributes: Attributes, reason: str = "") -> APIError:
    """kube-apiserver's 403 (k8s.io/apiserver endpoints/handlers/responsewriters
    forbiddenMessage + apierrors.NewForbidden)."""
    user = attributes.user.name
    if not attributes.resource_request:
        message = f'User "{user}" cannot {attributes.verb} path "{attributes.path}"'
        if reason:
            message += f": {reason}"
        return APIError(403, "Forbidden", f"forbidden: {message}", {})
    resource = attributes.resource
    if attributes.subresource:
        resource += "/" + attributes.subresource
    where = (
        f'in the namespace "{attributes.namespace}"'
        if attributes.namespace
        else "at the cluster scope"
    )
    message = (
        f'User "{user}" cannot {attributes.verb} resource "{resource}" in API group '
        f'"{attributes.group}" {where}'
    )
    if reason:
        message += f": {reason}"
    if attributes.name:
        return errors.forbidden(attributes.group, attributes.resource, attributes.name, message)
    subject = qualified(attributes.group, attributes.resource)
    details = _details(attributes.group, attributes.resource, "")
    return APIError(403, "Forbidden", f"{subject} is forbidden: {message}", details)
