"""RBAC privilege escalation prevention on writes of Roles, ClusterRoles and their bindings,
as kube-apiserver's RBAC REST storage does it (k8s.io/kubernetes pkg/registry/rbac/
{role,clusterrole,rolebinding,clusterrolebinding}/policybased, ``ConfirmNoEscalation`` and
``CompactRules`` in pkg/registry/rbac/validation, ``Covers`` in k8s.io/component-helpers
auth/rbac/validation).

* ``system:masters`` may write anything.
* A Role or ClusterRole: allowed to whoever may ``escalate`` it (verb ``escalate`` on the
  request's resource, name and namespace); else every rule must be covered by the rules
  the writer holds in the request's namespace. An ``aggregationRule`` (new or old) needs
  cluster-admin's rules (``*`` on ``*.*`` and on non-resource URLs).
* A RoleBinding or ClusterRoleBinding: allowed to whoever may ``bind`` the role (verb
  ``bind`` on ``roles``/``clusterroles`` named by ``roleRef``, in the binding's namespace);
  else the role must exist (404) and its rules be covered.
* An update changing only ownerReferences, finalizers or managedFields is not checked.

Checked before validation, as kube-apiserver's storage does (an invalid Role the writer may
not grant is refused with 403, not 422). A refusal ends with the "resolution errors" of the
writer's bindings that name missing roles, as kube-apiserver's does.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from . import errors
from .authn import User
from .rbac import RBAC_GROUP, Attributes, Authorizer
from .resources import ResourceType

Rule = dict[str, Any]
_ROLES = ("roles", "clusterroles")
_BINDINGS = {"rolebindings": "Role", "clusterrolebindings": "ClusterRole"}
_FULL_AUTHORITY: list[Rule] = [
    {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
    {"nonResourceURLs": ["*"], "verbs": ["*"]},
]
_GC_FIELDS = ("ownerReferences", "finalizers", "selfLink", "managedFields")


def check_write(
    authorizer: Authorizer,
    user: User,
    rt: ResourceType,
    new: dict[str, Any],
    old: dict[str, Any] | None,
    request_name: str,
) -> None:
    """Refuse (403, or 404 for a binding's missing role) a write of an RBAC object that
    would grant ``user`` more than it holds."""
    if rt.group != RBAC_GROUP or user.is_master:
        return
    if rt.plural not in _ROLES and rt.plural not in _BINDINGS:
        return
    if old is not None and _only_gc_fields(new, old):
        return
    namespace = new["metadata"].get("namespace") or ""
    if rt.plural in _ROLES:
        _check_role(authorizer, user, rt.plural, new, old, namespace, request_name)
    else:
        _check_binding(authorizer, user, rt.plural, new, namespace)


def _check_role(
    authorizer: Authorizer,
    user: User,
    plural: str,
    new: dict[str, Any],
    old: dict[str, Any] | None,
    namespace: str,
    request_name: str,
) -> None:
    escalate = Attributes(user, "escalate", True, RBAC_GROUP, plural, "", namespace, request_name)
    if authorizer.allowed(escalate):
        return
    name = new["metadata"].get("name", "")
    _confirm(authorizer, user, namespace, new.get("rules") or [], plural, name)
    aggregating = _aggregates(new) or (old is not None and _aggregates(old))
    if plural == "clusterroles" and aggregating and _missing(authorizer, user, "", _FULL_AUTHORITY):
        raise errors.forbidden(
            RBAC_GROUP,
            plural,
            name,
            "must have cluster-admin privileges to use the aggregationRule",
        )


def _check_binding(
    authorizer: Authorizer, user: User, plural: str, new: dict[str, Any], namespace: str
) -> None:
    ref = new.get("roleRef") or {}
    kind, role_name = ref.get("kind", ""), ref.get("name", "")
    role_plural = "roles" if kind == "Role" else "clusterroles"
    bind = Attributes(
        user, "bind", True, ref.get("apiGroup", ""), role_plural, "", namespace, role_name
    )
    if kind not in _BINDINGS.values() or authorizer.allowed(bind):
        return
    rules = authorizer.role_rules(kind, role_name, namespace)
    if rules is None:  # the role getter's NotFound, worded by the binding's storage
        raise errors.not_found(RBAC_GROUP, plural, role_name)
    _confirm(authorizer, user, namespace, rules, plural, new["metadata"].get("name", ""))


def _confirm(
    authorizer: Authorizer,
    user: User,
    namespace: str,
    rules: list[Rule],
    plural: str,
    name: str,
) -> None:
    """``ConfirmNoEscalation``: 403 naming the rules ``user`` does not hold."""
    missing = _missing(authorizer, user, namespace, rules)
    if not missing:
        return
    lines = sorted({_compact_string(rule) for rule in _compact(missing)})
    message = (
        f"user {_quote(user.name)} (groups={_quote_list(user.groups)}) is attempting to grant"
        " RBAC permissions not currently held:\n" + "\n".join(lines)
    )
    unresolved = authorizer.resolution_errors(user, namespace)
    if unresolved:  # fmt's %v of []error{utilerrors.NewAggregate(errs)}
        aggregate = unresolved[0] if len(unresolved) == 1 else f"[{', '.join(unresolved)}]"
        message += f"; resolution errors: [{aggregate}]"
    raise errors.forbidden(RBAC_GROUP, plural, name, message)


def _missing(authorizer: Authorizer, user: User, namespace: str, rules: list[Rule]) -> list[Rule]:
    """The broken-down rules no held rule covers (``validation.Covers``)."""
    scope = Attributes(user, "", True, namespace=namespace)
    held = [rule for _, rule in authorizer.rules_for(scope)]
    return [
        sub
        for rule in rules
        for sub in _breakdown(rule)
        if not any(_covers(owner, sub) for owner in held)
    ]


def _breakdown(rule: Rule) -> list[Rule]:
    """One rule per group, resource, verb (and resource name); per URL and verb."""
    out: list[Rule] = []
    names = rule.get("resourceNames") or []
    for group in rule.get("apiGroups") or []:
        for resource in rule.get("resources") or []:
            for verb in rule.get("verbs") or []:
                base = {"apiGroups": [group], "resources": [resource], "verbs": [verb]}
                out += [{**base, "resourceNames": [n]} for n in names] if names else [base]
    for url in rule.get("nonResourceURLs") or []:
        out += [{"nonResourceURLs": [url], "verbs": [verb]} for verb in rule.get("verbs") or []]
    return out


def _covers(owner: Rule, sub: Rule) -> bool:
    """``ruleCovers``: ``owner`` (any rule) covers ``sub`` (one broken-down rule)."""
    verbs, groups = owner.get("verbs") or [], owner.get("apiGroups") or []
    owner_names = owner.get("resourceNames") or []
    return (
        ("*" in verbs or set(sub.get("verbs") or []) <= set(verbs))
        and ("*" in groups or set(sub.get("apiGroups") or []) <= set(groups))
        and _resources_cover(owner.get("resources") or [], sub.get("resources") or [])
        and (not owner_names or set(sub.get("resourceNames") or [None]) <= set(owner_names))
        and all(
            any(_url_covers(pattern, url) for pattern in owner.get("nonResourceURLs") or [])
            for url in sub.get("nonResourceURLs") or []
        )
    )


def _resources_cover(owned: list[str], wanted: list[str]) -> bool:
    if "*" in owned:
        return True
    for resource in wanted:
        if resource in owned:
            continue
        if "/" not in resource or "*/" + resource.split("/", 1)[1] not in owned:
            return False
    return True


def _url_covers(pattern: str, path: str) -> bool:
    return pattern == path or (pattern.endswith("*") and path.startswith(pattern.rstrip("*")))


def _compact(rules: Iterable[Rule]) -> list[Rule]:
    """``CompactRules``: rules of one group and resource (and at most one name) that differ
    only by verb become one rule with the verbs in order."""
    compacted: list[Rule] = []
    simple: dict[tuple[str, str, tuple[str, ...]], Rule] = {}
    for rule in rules:
        if rule.get("nonResourceURLs"):
            compacted.append(rule)
            continue
        key = (rule["apiGroups"][0], rule["resources"][0], tuple(rule.get("resourceNames", ())))
        if key in simple:
            simple[key]["verbs"] = simple[key]["verbs"] + rule["verbs"]
        else:
            simple[key] = dict(rule)
    return compacted + list(simple.values())


def _compact_string(rule: Rule) -> str:
    """``rbacv1helpers.CompactString``: ``{APIGroups:[""], Resources:["secrets"], ...}``."""
    fields = (
        ("APIGroups", "apiGroups"),
        ("Resources", "resources"),
        ("NonResourceURLs", "nonResourceURLs"),
        ("ResourceNames", "resourceNames"),
        ("Verbs", "verbs"),
    )
    parts = [f"{label}:{_quote_list(rule[key])}" for label, key in fields if rule.get(key)]
    return "{" + ", ".join(parts) + "}"


def _quote(text: str) -> str:
    """Go's ``%q`` of a string (JSON's quoting for the ASCII names RBAC uses)."""
    return json.dumps(text)


def _quote_list(items: Iterable[str]) -> str:
    """Go's ``%q`` of a ``[]string``: ``["a" "b"]``."""
    return "[" + " ".join(_quote(item) for item in items) + "]"


def _aggregates(obj: dict[str, Any]) -> bool:
    return bool((obj.get("aggregationRule") or {}).get("clusterRoleSelectors"))


def _only_gc_fields(new: dict[str, Any], old: dict[str, Any]) -> bool:
    """``IsOnlyMutatingGCFields``: equal but for ownerReferences, finalizers, selfLink and
    managedFields (empty and missing values are equal, as with Go's semantic equality)."""
    return bool(_without_gc_fields(new) == _without_gc_fields(old))


def _without_gc_fields(obj: dict[str, Any]) -> Any:
    meta = {k: v for k, v in obj.get("metadata", {}).items() if k not in _GC_FIELDS}
    return _pruned({**obj, "metadata": meta})


def _pruned(value: Any) -> Any:
    if isinstance(value, dict):
        pruned = {k: _pruned(v) for k, v in value.items()}
        return {k: v for k, v in pruned.items() if v not in (None, {}, [], "")}
    if isinstance(value, list):
        return [_pruned(v) for v in value]
    return value
