"""The RBAC rules a manager's controllers need, as ClusterRole / Role and binding YAML.

Derived from what the runtime does, request by request: reflectors get/list/watch every
watched kind; the PatchHelper patches primaries (and GETs them for conditions) and their
``/status``, ``ctx.update_status`` updates ``/status``; ``ctx.apply`` server-side applies
owned children (patch, and create when it creates them); the event recorder creates and
patches events.k8s.io Events; leader election gets, creates and updates its Lease
(client-go's leaselock).
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable
from typing import Any, TypedDict, Unpack

import yaml

from ..manager.manager import Manager
from ..runtime.controller import Controller
from ..runtime.resources import ResourceInfo, info_from_class

__all__ = [
    "METRICS_READER_RULES",
    "RbacOptions",
    "manifests",
    "metrics_rbac",
    "render",
    "required_grants",
]


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


def _controller_grants(manager: Manager) -> Grants:
    """What the controllers, the event recorder and ``add_rbac_rule`` need (no Lease)."""
    grants: Grants = {}
    for controller in manager.controllers:
        primary = _info(controller, controller.kind)
        _grant(grants, primary, "get", "list", "watch", "patch")
        if _has_status(primary):
            _grant(grants, primary, "patch", "update", subresource="/status")
        for source in controller.sources:
            info = _info(controller, source.kind)
            _grant(grants, info, "list", "watch")
            if source.mapper is None:
                # owned children: ctx.apply is a PATCH, which kube-apiserver authorizes as
                # create when it creates the child (API concepts, "Patch and apply"); it
                # and ctx.create_or_patch GET a child the cache does not hold yet (who
                # controls it?)
                _grant(grants, info, "create", "get", "patch")
                # set_controller_reference sets blockOwnerDeletion, which the
                # OwnerReferencesPermissionEnforcement admission plugin (on in OpenShift)
                # allows only to who may update the owner's finalizers (as kubebuilder grants)
                _grant(grants, primary, "update", subresource="/finalizers")
    if manager.controllers:
        _grant(grants, ("events.k8s.io", "events"), "create", "patch")
    for rule in manager.extra_rules:
        for group in rule["apiGroups"]:
            for resource in rule["resources"]:
                grants.setdefault((group, resource, rule.get("namespaced", True)), set()).update(
                    rule["verbs"]
                )
    return grants


LEASE_VERBS = ("create", "get", "update")
"""What leader election does to its Lease (client-go's leaselock: GET, POST, PUT)."""
SHARDING_LEASE_VERBS = ("create", "delete", "get", "list", "update", "watch")
"""What sharding does to the ring's Leases: its membership and sharder elections, the
watch of the ring, and the sharder's takeover and deletion of gone members' Leases."""


def required_grants(manager: Manager) -> Grants:
    """``{(apiGroup, resource, namespaced): verbs}`` the manager needs: its controllers,
    its event recorder, its ``add_rbac_rule`` rules, with leader election its Lease, and
    what webhook self-registration changes."""
    grants = _controller_grants(manager)
    if manager.leader_election is not None:
        _grant(grants, ("coordination.k8s.io", "leases"), *LEASE_VERBS)
    if manager.sharding is not None:
        _grant(grants, ("coordination.k8s.io", "leases"), *SHARDING_LEASE_VERBS)
    _registration_grants(grants, manager)
    return grants


def _registration_grants(grants: Grants, manager: Manager) -> None:
    """What webhook self-registration does (``WebhookServer(register_host=...)``): apply
    and delete its configurations, patch the converted CRDs' ``spec.conversion``."""
    webhooks = manager.webhooks
    if webhooks is None or webhooks.register_host is None:
        return
    group = "admissionregistration.k8s.io"
    for plural in ("mutatingwebhookconfigurations", "validatingwebhookconfigurations"):
        grants.setdefault((group, plural, False), set()).update({"create", "delete", "patch"})
    if webhooks.converters.models():
        crds = ("apiextensions.k8s.io", "customresourcedefinitions", False)
        grants.setdefault(crds, set()).add("patch")


def _rules(grants: Grants) -> list[dict[str, Any]]:
    return [
        {"apiGroups": [group], "resources": [resource], "verbs": sorted(verbs)}
        for (group, resource, _), verbs in sorted(grants.items())
    ]


RBAC_API_VERSION = "rbac.authorization.k8s.io/v1"


def _metadata(name: str, namespace: str | None) -> dict[str, Any]:
    return {"name": name} if namespace is None else {"name": name, "namespace": namespace}


def _role(kind: str, name: str, namespace: str | None, grants: Grants) -> dict[str, Any]:
    return {
        "apiVersion": RBAC_API_VERSION,
        "kind": kind,
        "metadata": _metadata(name, namespace),
        "rules": _rules(grants),
    }


def _binding(role: dict[str, Any], subject: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": RBAC_API_VERSION,
        "kind": role["kind"] + "Binding",
        "metadata": dict(role["metadata"]),
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": role["kind"],
            "name": role["metadata"]["name"],
        },
        "subjects": [subject],
    }


def manifests(
    manager: Manager,
    name: str | None = None,
    *,
    service_account: str | None = None,
    service_account_namespace: str | None = None,
    metrics_secure: bool | None = None,
) -> list[tuple[str, dict[str, Any]]]:
    """The RBAC objects ``manager`` needs, each with a comment saying why it exists.

    * A manager of all namespaces (``manager.namespace`` None): a ClusterRole and its
      ClusterRoleBinding.
    * A namespaced manager: a Role and RoleBinding in its namespace for the namespaced
      kinds, plus a ClusterRole and ClusterRoleBinding for the cluster-scoped kinds it
      watches (a Role cannot grant those), if any.
    * With leader election: a Role and RoleBinding ``<name>-leader-election`` in the Lease's
      namespace (get/create/update on leases), as kubebuilder's ``leader_election_role``.
    * With sharding: a Role and RoleBinding ``<name>-sharding`` in the ring's namespace
      (create/delete/get/list/update/watch on leases). The sharded kinds' labels are
      written with ``patch``, which every controller's primary kind is granted anyway.
    * With secure metrics (``metrics_secure``, default ``manager.metrics_secure``): a
      ClusterRoleBinding ``<name>-auth-delegator`` to ``system:auth-delegator`` (the
      operator reviews each scrape: TokenReview, SubjectAccessReview) and the ClusterRole
      ``<name>-metrics-reader`` (``get`` on the non-resource URL ``/metrics``) for the
      scraper, left unbound: bind Prometheus's ServiceAccount to it. As kubebuilder's
      ``metrics_auth_role`` and ``metrics_reader_role``.

    Every binding names the ServiceAccount ``service_account`` (default: the manager's name)
    in ``service_account_namespace`` (default: the manager's namespace, else ``default``).
    """
    role_name = name or manager.name
    subject = {
        "kind": "ServiceAccount",
        "name": service_account or manager.name,
        "namespace": service_account_namespace or manager.namespace or "default",
    }
    grants = _controller_grants(manager)
    docs: list[tuple[str, dict[str, Any]]] = []

    def add(comment: str, role: dict[str, Any]) -> None:
        docs.append((comment, role))
        docs.append(("", _binding(role, subject)))

    if manager.namespace is None:
        add(
            f"What {manager.name} needs in every namespace.",
            _role("ClusterRole", role_name, None, grants),
        )
    else:
        namespaced = {k: v for k, v in grants.items() if k[2]}
        cluster = {k: v for k, v in grants.items() if not k[2]}
        if namespaced:
            add(
                f"What {manager.name} needs in namespace {manager.namespace}.",
                _role("Role", role_name, manager.namespace, namespaced),
            )
        if cluster:
            resources = ", ".join(sorted({f"{r}.{g}" if g else r for g, r, _ in cluster}))
            add(
                f"Cluster-scoped kinds ({resources}): a Role cannot grant them, so even a"
                f" manager of namespace {manager.namespace} needs this ClusterRole.",
                _role("ClusterRole", role_name, None, cluster),
            )
    election = manager.leader_election
    if election is not None:
        add(
            f"Leader election on the Lease {election.namespace}/{election.name}.",
            _lease_role(f"{role_name}-leader-election", election.namespace, LEASE_VERBS),
        )
    ring = manager.sharding
    if ring is not None:
        add(
            f"Sharding: the Leases of ring {ring.ring} in namespace {ring.namespace}.",
            _lease_role(f"{role_name}-sharding", ring.namespace, SHARDING_LEASE_VERBS),
        )
    if manager.metrics_secure if metrics_secure is None else metrics_secure:
        docs.extend(metrics_rbac(role_name, subject))
    return docs


def _lease_role(name: str, namespace: str, verbs: Iterable[str]) -> dict[str, Any]:
    """A Role ``name`` in ``namespace`` granting ``verbs`` on Leases."""
    return _role("Role", name, namespace, {("coordination.k8s.io", "leases", True): set(verbs)})


METRICS_READER_RULES = [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]
"""What a scraper of the secure metrics needs (kubebuilder's ``metrics-reader``)."""


def metrics_rbac(name: str, subject: dict[str, str]) -> list[tuple[str, dict[str, Any]]]:
    """The RBAC of secure metrics, each with its comment: ``subject`` (the operator's
    ServiceAccount) bound to ``system:auth-delegator`` as ``<name>-auth-delegator``, and the
    unbound ClusterRole ``<name>-metrics-reader`` a scraper is bound to."""
    delegator = {
        "apiVersion": RBAC_API_VERSION,
        "kind": "ClusterRoleBinding",
        "metadata": {"name": f"{name}-auth-delegator"},
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": "system:auth-delegator",
        },
        "subjects": [subject],
    }
    reader = {
        "apiVersion": RBAC_API_VERSION,
        "kind": "ClusterRole",
        "metadata": {"name": f"{name}-metrics-reader"},
        "rules": [dict(rule) for rule in METRICS_READER_RULES],
    }
    return [
        (
            "Secure metrics: the operator asks the API server about each scrape (TokenReview"
            " of its bearer token, SubjectAccessReview of get /metrics): system:auth-delegator.",
            delegator,
        ),
        (
            "Secure metrics: bind the scraper (e.g. Prometheus's ServiceAccount) to this"
            " ClusterRole; a token without it is answered 403.",
            reader,
        ),
    ]


class RbacOptions(TypedDict, total=False):
    """:func:`manifests`' keyword arguments (:func:`render` takes them too)."""

    service_account: str | None
    service_account_namespace: str | None
    metrics_secure: bool | None


def render(manager: Manager, name: str | None = None, **options: Unpack[RbacOptions]) -> str:
    """:func:`manifests` as one YAML stream, each role preceded by its comment."""
    parts = []
    for comment, doc in manifests(manager, name, **options):
        header = "".join(f"# {line}\n" for line in _wrap(comment))
        parts.append(header + yaml.safe_dump(doc, sort_keys=False))
    return "---\n".join(parts)


def _wrap(text: str, width: int = 86) -> list[str]:
    return textwrap.wrap(text, width) if text else []
