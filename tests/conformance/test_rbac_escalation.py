"""RBAC privilege escalation prevention (issue 15): a user may write a Role or ClusterRole
only with rules it holds itself, unless it may ``escalate`` them, and a binding only to a
role whose rules it holds, unless it may ``bind`` it; an ``aggregationRule`` needs
cluster-admin's rules. kube-apiserver: pkg/registry/rbac/{role,clusterrole,rolebinding,
clusterrolebinding}/policybased, ``ConfirmNoEscalation`` (pkg/registry/rbac/validation).

Aggregated ClusterRoles get their rules from kube-controller-manager's
clusterrole-aggregation controller; the suite's control plane has none, so on both backends
an aggregated ClusterRole keeps the rules it was written with (the embedded server runs the
controller unless ``APIServer(cluster_role_aggregation=False)``, as the backend fixture
builds it: tests/apiserver/test_cluster_role_aggregation.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest_asyncio

from reconcile_kit.testing.backends import Backend

from .kube import MERGE, ok, req, status_body, token_request
from .test_authorization import RBAC, service_account_token

RBAC_GROUP = "rbac.authorization.k8s.io"
WRITE = ["create", "update", "patch", "get"]


def granter_rules(*resources: str, extra: list[dict[str, Any]] | None = None) -> list[Any]:
    """May write ``resources`` of the RBAC group and read ConfigMaps."""
    return [
        {"apiGroups": [RBAC_GROUP], "resources": list(resources), "verbs": WRITE},
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]},
        *(extra or []),
    ]


async def as_token(
    backend: Backend, token: str, method: str, path: str, body: Any = None
) -> httpx.Response:
    """One request authenticated with ``token`` (PATCH: a JSON merge patch)."""
    content_type = MERGE if method == "PATCH" else "application/json"
    async with httpx.AsyncClient(verify=False) as client:  # loopback to the test's server
        return await client.request(
            method,
            backend.server.url + path,
            json=body,
            headers={"Authorization": f"Bearer {token}", "Content-Type": content_type},
        )


def user_of(backend: Backend, name: str) -> str:
    return f"system:serviceaccount:{backend.namespace}:{name}"


def escalation(backend: Backend, name: str, missing: list[str]) -> str:
    """``ConfirmNoEscalation``'s words (missing rules: ``CompactString``s, sorted)."""
    ns = backend.namespace
    groups = f'["system:serviceaccounts" "system:serviceaccounts:{ns}" "system:authenticated"]'
    return (
        f'user "{user_of(backend, name)}" (groups={groups}) is attempting to grant RBAC'
        " permissions not currently held:\n" + "\n".join(missing)
    )


def forbidden(plural: str, name: str, why: str) -> dict[str, Any]:
    details = {"name": name, "group": RBAC_GROUP, "kind": plural}
    return status_body(
        403, "Forbidden", f'{plural}.{RBAC_GROUP} "{name}" is forbidden: {why}', details
    )


def role(name: str, rules: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, **extra}, "rules": rules}


CONFIGMAPS_GET = {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}
MORE = [
    {"apiGroups": [""], "resources": ["configmaps", "secrets"], "verbs": ["get", "delete"]},
    {"nonResourceURLs": ["/metrics"], "verbs": ["get"]},
]
MORE_MISSING = [
    '{APIGroups:[""], Resources:["configmaps"], Verbs:["delete"]}',
    '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "delete"]}',
    '{NonResourceURLs:["/metrics"], Verbs:["get"]}',
]


async def test_a_role_grants_only_what_its_writer_holds(backend: Backend) -> None:
    """The check comes before validation: MORE's nonResourceURLs rule, invalid in a Role
    (422 for whoever may escalate), is reported as not held."""
    token = await service_account_token(backend, "granter", granter_rules("roles"))
    roles = f"{RBAC}/namespaces/{backend.namespace}/roles"
    held = await as_token(backend, token, "POST", roles, role("held", [CONFIGMAPS_GET]))
    assert held.status_code == 201, held.text
    more = await as_token(backend, token, "POST", roles, role("more", MORE))
    assert (more.status_code, more.json()) == (
        403,
        forbidden("roles", "more", escalation(backend, "granter", MORE_MISSING)),
    )
    grown = {**held.json(), "rules": [CONFIGMAPS_GET, MORE[1]]}
    updated = await as_token(backend, token, "PUT", f"{roles}/held", grown)
    missing = ['{NonResourceURLs:["/metrics"], Verbs:["get"]}']
    assert (updated.status_code, updated.json()) == (
        403,
        forbidden("roles", "held", escalation(backend, "granter", missing)),
    )
    # A Role written by an admin with rules the writer lacks: any change but ownerReferences
    # and finalizers is an escalation too.
    await ok(backend, "POST", roles, role("admins", MORE[:1]))
    labelled = await as_token(
        backend, token, "PATCH", f"{roles}/admins", {"metadata": {"labels": {"a": "b"}}}
    )
    assert labelled.status_code == 403, labelled.text
    finalized = await as_token(
        backend, token, "PATCH", f"{roles}/admins", {"metadata": {"finalizers": ["x.io/y"]}}
    )
    assert finalized.status_code == 200, finalized.text
    cleared = {"metadata": {"finalizers": None}}
    await ok(backend, "PATCH", f"{roles}/admins", cleared, content_type=MERGE)


async def test_escalate_allows_any_rules(backend: Backend) -> None:
    escalate = {"apiGroups": [RBAC_GROUP], "resources": ["roles"], "verbs": ["escalate"]}
    token = await service_account_token(
        backend, "escalator", granter_rules("roles", extra=[escalate])
    )
    roles = f"{RBAC}/namespaces/{backend.namespace}/roles"
    more = await as_token(backend, token, "POST", roles, role("more", MORE[:1]))
    assert more.status_code == 201, more.text


@pytest_asyncio.fixture
async def secrets_reader(backend: Backend) -> AsyncIterator[str]:
    """A ClusterRole reading Secrets (removed afterwards: the real control plane is shared)."""
    name = f"{backend.namespace}-secrets-reader"
    rules = [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]
    await ok(backend, "POST", f"{RBAC}/clusterroles", role(name, rules))
    yield name
    await req(backend, "DELETE", f"{RBAC}/clusterroles/{name}")


def binding(name: str, kind: str, role_name: str, backend: Backend) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "roleRef": {"apiGroup": RBAC_GROUP, "kind": kind, "name": role_name},
        "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": backend.namespace}],
    }


async def test_a_binding_needs_the_roles_rules_or_bind(
    backend: Backend, secrets_reader: str
) -> None:
    ns = backend.namespace
    bind = {
        "apiGroups": [RBAC_GROUP],
        "resources": ["clusterroles"],
        "verbs": ["bind"],
        "resourceNames": [secrets_reader],
    }
    token = await service_account_token(backend, "binder", granter_rules("rolebindings"))
    await ok(backend, "POST", f"{RBAC}/namespaces/{ns}/roles", role("reads", [CONFIGMAPS_GET]))
    bindings = f"{RBAC}/namespaces/{ns}/rolebindings"
    held = await as_token(
        backend, token, "POST", bindings, binding("held", "Role", "reads", backend)
    )
    assert held.status_code == 201, held.text
    body = binding("secrets", "ClusterRole", secrets_reader, backend)
    refused = await as_token(backend, token, "POST", bindings, body)
    missing = ['{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}']
    assert (refused.status_code, refused.json()) == (
        403,
        forbidden("rolebindings", "secrets", escalation(backend, "binder", missing)),
    )
    absent = await as_token(
        backend, token, "POST", bindings, binding("to-absent", "Role", "absent", backend)
    )
    assert (absent.status_code, absent.json()) == (
        404,
        status_body(
            404,
            "NotFound",
            f'rolebindings.{RBAC_GROUP} "absent" not found',  # the role's name
            {"name": "absent", "group": RBAC_GROUP, "kind": "rolebindings"},
        ),
    )
    await ok(backend, "POST", f"{RBAC}/namespaces/{ns}/roles", role("binds", [bind]))
    await ok(
        backend,
        "POST",
        bindings,
        binding("binds", "Role", "binds", backend)
        | {"subjects": [{"kind": "ServiceAccount", "name": "binder", "namespace": ns}]},
    )
    allowed = await as_token(backend, token, "POST", bindings, body)
    assert allowed.status_code == 201, allowed.text


async def test_an_aggregation_rule_needs_cluster_admin(backend: Backend) -> None:
    ns = backend.namespace
    name = f"{ns}-writer"
    await ok(
        backend,
        "POST",
        f"/api/v1/namespaces/{ns}/serviceaccounts",
        {"metadata": {"name": "writer"}},
    )
    await ok(backend, "POST", f"{RBAC}/clusterroles", role(name, granter_rules("clusterroles")))
    cluster_binding = binding(name, "ClusterRole", name, backend)
    cluster_binding["subjects"][0]["name"] = "writer"
    await ok(backend, "POST", f"{RBAC}/clusterrolebindings", cluster_binding)
    created: list[str] = []
    try:
        token = (await token_request(backend, ns, "writer"))["status"]["token"]
        aggregated = {
            **role(f"{ns}-aggregated", []),
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"x": ns}}]},
        }
        refused = await as_token(backend, token, "POST", f"{RBAC}/clusterroles", aggregated)
        assert (refused.status_code, refused.json()) == (
            403,
            forbidden(
                "clusterroles",
                f"{ns}-aggregated",
                "must have cluster-admin privileges to use the aggregationRule",
            ),
        )
        plain = await as_token(
            backend, token, "POST", f"{RBAC}/clusterroles", role(f"{ns}-plain", [CONFIGMAPS_GET])
        )
        assert plain.status_code == 201, plain.text
        created.append(f"{ns}-plain")
    finally:
        for cleanup in (*created, name):
            await req(backend, "DELETE", f"{RBAC}/clusterroles/{cleanup}")
        await req(backend, "DELETE", f"{RBAC}/clusterrolebindings/{name}")


async def test_aggregated_rules_are_not_filled_without_a_controller_manager(
    backend: Backend,
) -> None:
    ns = backend.namespace
    labelled = role(f"{ns}-part", [CONFIGMAPS_GET], labels={"x": ns})
    aggregated = {
        **role(f"{ns}-aggregated", []),
        "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"x": ns}}]},
    }
    try:
        await ok(backend, "POST", f"{RBAC}/clusterroles", labelled)
        written = await ok(backend, "POST", f"{RBAC}/clusterroles", aggregated)
        assert written["rules"] is None
        assert written["aggregationRule"] == aggregated["aggregationRule"]
    finally:
        for name in (f"{ns}-part", f"{ns}-aggregated"):
            await req(backend, "DELETE", f"{RBAC}/clusterroles/{name}")


async def test_cluster_scoped_writes_count_only_cluster_wide_grants(
    backend: Backend, secrets_reader: str
) -> None:
    """A ClusterRole or ClusterRoleBinding is checked against the rules the writer holds
    cluster-wide: what its RoleBindings grant in a namespace does not count."""
    ns = backend.namespace
    name = f"{ns}-cluster-writer"
    writes = [
        {
            "apiGroups": [RBAC_GROUP],
            "resources": ["clusterroles", "clusterrolebindings"],
            "verbs": ["create"],
        },
    ]
    token = await service_account_token(backend, "cluster-writer", granter_rules("roles"))
    await ok(backend, "POST", f"{RBAC}/clusterroles", role(name, writes))
    cluster_binding = binding(name, "ClusterRole", name, backend)
    cluster_binding["subjects"][0]["name"] = "cluster-writer"
    await ok(backend, "POST", f"{RBAC}/clusterrolebindings", cluster_binding)
    created: list[str] = []
    try:
        reads = role(f"{ns}-reads", [CONFIGMAPS_GET])  # held in the namespace only
        refused = await as_token(backend, token, "POST", f"{RBAC}/clusterroles", reads)
        missing = ['{APIGroups:[""], Resources:["configmaps"], Verbs:["get"]}']
        assert (refused.status_code, refused.json()) == (
            403,
            forbidden(
                "clusterroles", f"{ns}-reads", escalation(backend, "cluster-writer", missing)
            ),
        )
        body = binding(f"{ns}-secrets", "ClusterRole", secrets_reader, backend)
        refused = await as_token(backend, token, "POST", f"{RBAC}/clusterrolebindings", body)
        missing = ['{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}']
        assert (refused.status_code, refused.json()) == (
            403,
            forbidden(
                "clusterrolebindings",
                f"{ns}-secrets",
                escalation(backend, "cluster-writer", missing),
            ),
        )
        bind = {"apiGroups": [RBAC_GROUP], "resources": ["clusterroles"], "verbs": ["bind"]}
        grown = role(name, [*writes, bind])
        current = await ok(backend, "GET", f"{RBAC}/clusterroles/{name}")
        grown["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
        await ok(backend, "PUT", f"{RBAC}/clusterroles/{name}", grown)
        allowed = await as_token(backend, token, "POST", f"{RBAC}/clusterrolebindings", body)
        assert allowed.status_code == 201, allowed.text
        created.append(f"{ns}-secrets")
    finally:
        for cleanup in (*created, name):
            await req(backend, "DELETE", f"{RBAC}/clusterrolebindings/{cleanup}")
        await req(backend, "DELETE", f"{RBAC}/clusterroles/{name}")


async def test_a_refusal_names_the_writers_bindings_to_missing_roles(backend: Backend) -> None:
    """The rule resolver's errors end the message (``ConfirmNoEscalation``'s "resolution
    errors"; the role getter says ``roles`` for a missing ClusterRole too)."""
    ns = backend.namespace
    token = await service_account_token(backend, "dangling", granter_rules("roles"))
    for name, kind in (("to-missing-role", "Role"), ("to-missing-cluster-role", "ClusterRole")):
        dangling = binding(name, kind, f"missing-{kind.lower()}", backend)
        dangling["subjects"][0]["name"] = "dangling"
        await ok(backend, "POST", f"{RBAC}/namespaces/{ns}/rolebindings", dangling)
    secrets = [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]
    refused = await as_token(
        backend, token, "POST", f"{RBAC}/namespaces/{ns}/roles", role("x", secrets)
    )
    missing = ['{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}']
    errors = (
        f'[[roles.{RBAC_GROUP} "missing-clusterrole" not found,'  # by binding name
        f' roles.{RBAC_GROUP} "missing-role" not found]]'
    )
    why = escalation(backend, "dangling", missing) + f"; resolution errors: {errors}"
    assert (refused.status_code, refused.json()) == (403, forbidden("roles", "x", why))
