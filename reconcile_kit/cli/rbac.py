"""The RBAC rules a manager's controllers need, as ClusterRole / Role YAML.

Derived from what the runtime does, request by request: reflectors get/list/watch every
watched kind; the PatchHelper patches primaries (and GETs them for conditions) and their
``/status``, ``ctx.update_status`` updates ``/status``; ``ctx.apply`` gets, creates and
patches owned children; the event recorder creates and patches events.k8s.io Events;
leader election gets, creates and updates its Lease (client-go's leaselock).
"""

from __future__ import annotations

from typing import Any

import yaml

from ..manager.manager import Manager
from ..runtime.controller import Controller
from ..runtime.resources import ResourceInfo, info_from_class

__all__ = ["render", "required_grants"]


def _offline_info(kind: Any) -> ResourceInfo:
    """Resolve a kind without an API server (kr8s classes, and kinds kr8s knows by name)."""
    if not isinstance(kind, str):
        return info_from_class(kind)
    from kr8s.asyncio.objects import get_class

    name, _, version = kind.partition("/")
    base, _, group = name.partition(".")
    try:
        cls = get_class(base, f"{group}/{version}" if group and version else (group or None))
    except KeyError as error:
        raise ValueError(
            f"cannot resolve kind {kind!r} without an API server: pass a kr8s "
            "class (kr8s.asyncio.objects.new_class for custom resources)"
        ) from error
    return info_from_class(cls)


def _has_status(info: ResourceInfo) -> bool:
    """Whether ``info``'s kind has a /status subresource: known for built-in kinds (the
    embedded server's table mirrors kube-apiserver's); assumed for custom resources."""
    from ..testing.apiserver.resources import builtin_types

    for rt in builtin_types():
        if (rt.group, rt.plural) == (info.group, info.plural):
            return rt.status
    return True


def _info(controller: Controller, kind: Any) -> ResourceInfo:
    if kind is controller.kind and controller.info is not None:
        return controller.info
    for source in controller.sources:
        if source.kind is kind and source.info is not None:
            return source.info
    return _offline_info(kind)


Grants = dict[tuple[str, str, bool], set[str]]
"""``{(apiGroup, resource, namespaced): verbs}``."""


def _grant(
    grants: Grants, info: ResourceInfo | tuple[str, str], *verbs: str, subresource: str = ""
) -> None:
    if isinstance(info, ResourceInfo):
        key = (info.group, info.plural + subresource, info.namespaced)
    else:
        key = (info[0], info[1], True)
    grants.setdefault(key, set()).update(verbs)


def required_grants(manager: Manager) -> Grants:
    """``{(apiGroup, resource, namespaced): verbs}`` the manager's controllers need."""
    grants: Grants = {}
    for controller in manager.controllers:
        primary = _info(controller, controller.kind)
        _grant(grants, primary, "get", "list", "watch", "patch")
        if _has_status(primary):
            _grant(grants, primary, "patch", "update", subresource="/status")
        for source in controller.sources:
            info = _info(controller, source.kind)
            _grant(grants, info, "list", "watch")
            if source.mapper is None:  # owned children: ctx.apply reads, creates, patches
                _grant(grants, info, "get", "create", "patch")
                # set_controller_reference sets blockOwnerDeletion, which the
                # OwnerReferencesPermissionEnforcement admission plugin (on in OpenShift)
                # allows only to who may update the owner's finalizers (as kubebuilder grants)
                _grant(grants, primary, "update", subresource="/finalizers")
    if manager.controllers:
        _grant(grants, ("events.k8s.io", "events"), "create", "patch")
    if manager.leader_election is not None:
        _grant(grants, ("coordination.k8s.io", "leases"), "get", "create", "update")
    for rule in manager.extra_rules:
        for group in rule["apiGroups"]:
            for resource in rule["resources"]:
                grants.setdefault((group, resource, rule.get("namespaced", True)), set()).update(
                    rule["verbs"]
                )
    return grants


def _rules(grants: Grants) -> list[dict[str, Any]]:
    return [
        {"apiGroups": [group], "resources": [resource], "verbs": sorted(verbs)}
        for (group, resource, _), verbs in sorted(grants.items())
    ]


def _role(kind: str, name: str, namespace: str | None, grants: Grants) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": kind,
        "metadata": metadata,
        "rules": _rules(grants),
    }


def render(manager: Manager, name: str | None = None) -> str:
    """ClusterRole YAML; for a namespaced manager a Role in its namespace, plus a
    ClusterRole for any cluster-scoped kinds it watches."""
    role_name = name or manager.name
    grants = required_grants(manager)
    if manager.namespace is None:
        docs = [_role("ClusterRole", role_name, None, grants)]
    else:
        namespaced = {k: v for k, v in grants.items() if k[2]}
        cluster = {k: v for k, v in grants.items() if not k[2]}
        docs = [_role("Role", role_name, manager.namespace, namespaced)]
        if cluster:
            docs.append(_role("ClusterRole", role_name, None, cluster))
    return yaml.safe_dump_all(docs, sort_keys=False)
