"""RBAC authorization of the embedded server (``APIServer(authorization="RBAC")``), as
kube-apiserver's RBAC authorizer (k8s.io/kubernetes plugin/pkg/auth/authorizer/rbac):
the rules of the ClusterRoles bound cluster-wide to the user, and of the Roles and
ClusterRoles bound in the request's namespace, matched by verb, API group, resource
(``res/sub``, ``*``, ``*/sub``), resourceNames and nonResourceURLs (``/path``,
``/prefix/*``).

Bootstrap policy kept in code rather than as objects: ``system:masters`` may do anything
(cluster-admin), and every authenticated user may read discovery, version and health
paths (``system:discovery``, ``system:public-info-viewer``). Deliberate differences:
aggregated ClusterRoles (``aggregationRule``) and the privilege escalation checks on
writing Roles and bindings are not implemented.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from .authn import User
from .errors import APIError, _details, qualified

__all__ = ["Attributes", "Authorizer", "forbidden"]

RBAC_GROUP = "rbac.authorization.k8s.io"
_DISCOVERY = (
    "/api",
    "/api/*",
    "/apis",
    "/apis/*",
    "/openapi",
    "/openapi/*",
    "/version",
    "/version/",
    "/healthz",
    "/livez",
    "/readyz",
)


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


class Authorizer:
    """Decides from the RBAC objects in the store; ``objects(resource, namespace)`` yields
    the stored ``roles``, ``rolebindings``, ``clusterroles`` and ``clusterrolebindings``."""

    def __init__(self, objects: Any) -> None:
        self._objects = objects

    def allowed(self, attributes: Attributes) -> bool:
        if attributes.user.is_master:
            return True
        if not attributes.resource_request and _url_matches(_DISCOVERY, attributes.path):
            return True
        return any(_rule_allows(rule, attributes) for rule in self._rules(attributes))

    def _rules(self, attributes: Attributes) -> Iterator[dict[str, Any]]:
        user = attributes.user
        for binding in self._objects("clusterrolebindings", ""):
            if _binds(binding, user):
                yield from self._role_rules(binding.get("roleRef") or {}, "")
        if attributes.namespace:
            for binding in self._objects("rolebindings", attributes.namespace):
                if _binds(binding, user):
                    yield from self._role_rules(binding.get("roleRef") or {}, attributes.namespace)

    def _role_rules(self, ref: dict[str, Any], namespace: str) -> Iterable[dict[str, Any]]:
        kind, name = ref.get("kind"), ref.get("name")
        plural, where = ("roles", namespace) if kind == "Role" else ("clusterroles", "")
        for role in self._objects(plural, where):
            if role.get("metadata", {}).get("name") == name:
                return list(role.get("rules") or [])
        return []


def _binds(binding: dict[str, Any], user: User) -> bool:
    namespace = binding.get("metadata", {}).get("namespace", "")
    for subject in binding.get("subjects") or []:
        kind, name = subject.get("kind"), subject.get("name")
        if kind == "User" and name == user.name:
            return True
        if kind == "Group" and name in user.groups:
            return True
        if kind == "ServiceAccount":
            account = f"system:serviceaccount:{subject.get('namespace') or namespace}:{name}"
            if account == user.name:
                return True
    return False


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
    subject = qualified(attributes.group, attributes.resource)
    named = f'{subject} "{attributes.name}"' if attributes.name else subject
    details = _details(attributes.group, attributes.resource, attributes.name)
    return APIError(403, "Forbidden", f"{named} is forbidden: {message}", details)
