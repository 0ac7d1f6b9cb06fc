"""RBAC authorization and ServiceAccount tokens (issues 15 and 18): a ServiceAccount's
TokenRequest token authenticates it; what its Roles and ClusterRoles grant is allowed,
the rest is refused with kube-apiserver's words; discovery is open to every authenticated
user; OwnerReferencesPermissionEnforcement guards blockOwnerDeletion. The embedded server
does this in ``APIServer(authorization="RBAC")`` mode (the backend fixture turns it on)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from reconcile_kit.testing.backends import Backend

from .kube import ok, token_request

RBAC = "/apis/rbac.authorization.k8s.io/v1"


async def service_account_token(backend: Backend, name: str, rules: list[dict[str, Any]]) -> str:
    """A ServiceAccount ``name`` in the test's namespace, a Role with ``rules`` bound to it,
    and a TokenRequest token for it."""
    ns = backend.namespace
    await ok(
        backend, "POST", f"/api/v1/namespaces/{ns}/serviceaccounts", {"metadata": {"name": name}}
    )
    role = {"metadata": {"name": name}, "rules": rules}
    await ok(backend, "POST", f"{RBAC}/namespaces/{ns}/roles", role)
    binding = {
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
        "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": ns}],
    }
    await ok(backend, "POST", f"{RBAC}/namespaces/{ns}/rolebindings", binding)
    token = await token_request(backend, ns, name)
    assert token["kind"] == "TokenRequest"
    assert token["spec"]["expirationSeconds"] == 3600
    assert token["status"]["token"] and token["status"]["expirationTimestamp"]
    value: str = token["status"]["token"]
    return value


async def as_token(
    backend: Backend, token: str, method: str, path: str, body: Any = None
) -> httpx.Response:
    server = backend.server
    async with httpx.AsyncClient(verify=False) as client:  # loopback to the test's server
        return await client.request(
            method,
            server.url + path,
            json=body,
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )


async def test_service_account_rbac_allows_what_is_granted_and_words_refusals(
    backend: Backend,
) -> None:
    ns = backend.namespace
    token = await service_account_token(
        backend,
        "reader",
        [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"], "resourceNames": []}],
    )
    await ok(backend, "POST", f"/api/v1/namespaces/{ns}/configmaps", {"metadata": {"name": "c"}})
    user = f"system:serviceaccount:{ns}:reader"

    got = await as_token(backend, token, "GET", f"/api/v1/namespaces/{ns}/configmaps/c")
    assert got.status_code == 200, got.text
    listed = await as_token(backend, token, "GET", f"/api/v1/namespaces/{ns}/configmaps")
    assert listed.status_code == 403
    assert listed.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'configmaps is forbidden: User "{user}" cannot list resource "configmaps" '
        f'in API group "" in the namespace "{ns}"',
        "reason": "Forbidden",
        "details": {"kind": "configmaps"},
        "code": 403,
    }
    patched = await as_token(
        backend,
        token,
        "PATCH",
        f"/apis/apps/v1/namespaces/{ns}/deployments/d/status",
        {"status": {}},
    )
    assert patched.status_code == 403
    assert patched.json()["message"] == (
        f'deployments.apps "d" is forbidden: User "{user}" cannot patch resource '
        f'"deployments/status" in API group "apps" in the namespace "{ns}"'
    )
    assert patched.json()["details"] == {"name": "d", "group": "apps", "kind": "deployments"}
    cluster = await as_token(backend, token, "GET", "/api/v1/namespaces")
    assert cluster.json()["message"] == (
        f'namespaces is forbidden: User "{user}" cannot list resource "namespaces" in API '
        'group "" at the cluster scope'
    )
    for path in ("/api", "/apis", "/apis/apps/v1", "/version"):
        discovered = await as_token(backend, token, "GET", path)
        assert discovered.status_code == 200, (path, discovered.text)
    metrics = await as_token(backend, token, "GET", "/metrics")
    assert metrics.status_code == 403
    assert metrics.json()["message"] == f'forbidden: User "{user}" cannot get path "/metrics"'
    unknown = await as_token(backend, "not-a-token", "GET", "/api")
    assert unknown.status_code == 401


async def test_resource_names_and_wildcards(backend: Backend) -> None:
    ns = backend.namespace
    token = await service_account_token(
        backend,
        "named",
        [
            {
                "apiGroups": [""],
                "resources": ["configmaps"],
                "verbs": ["get", "update"],
                "resourceNames": ["mine"],
            },
            {"apiGroups": ["*"], "resources": ["*/status"], "verbs": ["get"]},
        ],
    )
    for name in ("mine", "other"):
        await ok(
            backend, "POST", f"/api/v1/namespaces/{ns}/configmaps", {"metadata": {"name": name}}
        )
    base = f"/api/v1/namespaces/{ns}/configmaps"
    assert (await as_token(backend, token, "GET", f"{base}/mine")).status_code == 200
    assert (await as_token(backend, token, "GET", f"{base}/other")).status_code == 403
    status = await as_token(
        backend, token, "GET", f"/apis/apps/v1/namespaces/{ns}/deployments/x/status"
    )
    assert status.status_code == 404  # allowed, not found
    deployment = await as_token(
        backend, token, "GET", f"/apis/apps/v1/namespaces/{ns}/deployments/x"
    )
    assert deployment.status_code == 403


async def test_block_owner_deletion_needs_update_on_the_owners_finalizers(
    backend: Backend,
) -> None:
    ns = backend.namespace
    rules = [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create"]}]
    token = await service_account_token(backend, "owner", rules)
    owner = await ok(
        backend, "POST", f"/api/v1/namespaces/{ns}/secrets", {"metadata": {"name": "o"}}
    )
    child = {
        "metadata": {
            "name": "child",
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Secret",
                    "name": "o",
                    "uid": owner["metadata"]["uid"],
                    "blockOwnerDeletion": True,
                }
            ],
        }
    }
    refused = await as_token(backend, token, "POST", f"/api/v1/namespaces/{ns}/configmaps", child)
    assert refused.status_code == 403, refused.text
    assert refused.json()["message"] == (
        'configmaps "child" is forbidden: cannot set blockOwnerDeletion if an ownerReference '
        "refers to a resource you can't set finalizers on: , <nil>"
    )
    child["metadata"]["ownerReferences"][0]["blockOwnerDeletion"] = False
    allowed = await as_token(backend, token, "POST", f"/api/v1/namespaces/{ns}/configmaps", child)
    assert allowed.status_code == 201, allowed.text


pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
