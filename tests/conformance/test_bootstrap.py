"""What kube-apiserver has at start and how it treats bad credentials and a nameless
container (gaps found by kr8s's own test suite, tests/kr8s_suite): the bootstrap
ClusterRoles clients bind to, the ``default/kubernetes`` Service, 401 for a token that
authenticates no one on the public paths too, 422 for a container without a name."""

from __future__ import annotations

import httpx

from reconcile_kit.testing.backends import Backend

from .kube import ok, req, status_body
from .test_authorization import RBAC, as_token, service_account_token

AUTHN = "/apis/authentication.k8s.io/v1"


async def test_bootstrap_cluster_roles(backend: Backend) -> None:
    delegator = await ok(backend, "GET", f"{RBAC}/clusterroles/system:auth-delegator")
    assert delegator["metadata"]["labels"] == {"kubernetes.io/bootstrapping": "rbac-defaults"}
    assert delegator["metadata"]["annotations"] == {
        "rbac.authorization.kubernetes.io/autoupdate": "true"
    }
    assert delegator["rules"] == [
        {
            "verbs": ["create"],
            "apiGroups": ["authentication.k8s.io"],
            "resources": ["tokenreviews"],
        },
        {
            "verbs": ["create"],
            "apiGroups": ["authorization.k8s.io"],
            "resources": ["subjectaccessreviews"],
        },
    ]
    admin = await ok(backend, "GET", f"{RBAC}/clusterroles/cluster-admin")
    assert admin["rules"] == [
        {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},
        {"verbs": ["*"], "nonResourceURLs": ["*"]},
    ]
    assert [m["manager"] for m in delegator["metadata"]["managedFields"]] == ["kube-apiserver"]


async def test_binding_system_auth_delegator_allows_token_reviews(backend: Backend) -> None:
    token = await service_account_token(backend, "delegate", [])
    binding = {
        "metadata": {"name": backend.unique("delegate")},
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": "system:auth-delegator",
        },
        "subjects": [
            {"kind": "ServiceAccount", "name": "delegate", "namespace": backend.namespace}
        ],
    }
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview"}
    review["spec"] = {"token": token}
    refused = await as_token(backend, token, "POST", f"{AUTHN}/tokenreviews", review)
    assert refused.status_code == 403
    await ok(backend, "POST", f"{RBAC}/clusterrolebindings", binding)
    try:
        answer = await as_token(backend, token, "POST", f"{AUTHN}/tokenreviews", review)
        assert answer.status_code == 201, answer.text
        assert answer.json()["status"]["authenticated"] is True
    finally:
        name = binding["metadata"]["name"]
        await req(backend, "DELETE", f"{RBAC}/clusterrolebindings/{name}")


async def test_kubernetes_service(backend: Backend) -> None:
    service = await ok(backend, "GET", "/api/v1/namespaces/default/services/kubernetes")
    port = int(backend.server.url.rsplit(":", 1)[1])
    assert service["metadata"]["labels"] == {"component": "apiserver", "provider": "kubernetes"}
    assert service["spec"] == {
        "ports": [{"name": "https", "protocol": "TCP", "port": 443, "targetPort": port}],
        "clusterIP": "10.0.0.1",
        "clusterIPs": ["10.0.0.1"],
        "type": "ClusterIP",
        "sessionAffinity": "None",
        "ipFamilies": ["IPv4"],
        "ipFamilyPolicy": "SingleStack",
        "internalTrafficPolicy": "Cluster",
    }
    assert [m["manager"] for m in service["metadata"]["managedFields"]] == ["kube-apiserver"]


async def test_a_token_that_authenticates_no_one_is_401_on_public_paths_too(
    backend: Backend,
) -> None:
    unauthorized = status_body(401, "Unauthorized", "Unauthorized", None)
    for path in ("/version", "/healthz", "/api"):
        answer = await as_token(backend, "abc123", "GET", path)
        assert (answer.status_code, answer.json()) == (401, unauthorized), path
    async with httpx.AsyncClient(verify=False) as client:  # loopback to the test's server
        anonymous = await client.get(backend.server.url + "/version")
    assert anonymous.status_code == 200
    assert anonymous.json()["major"] == "1"


async def test_a_container_without_a_name_is_invalid(backend: Backend) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "nameless"},
        "spec": {"containers": [{"name1": "pause", "image": "registry.k8s.io/pause:3.10"}]},
    }
    answer = await req(backend, "POST", f"/api/v1/namespaces/{backend.namespace}/pods", pod)
    unknown = '299 - "unknown field \\"spec.containers[0].name1\\""'
    assert answer.headers.get_list("warning") == [unknown]
    field = "spec.containers[0].name"
    cause = {"reason": "FieldValueRequired", "message": "Required value", "field": field}
    details = {"name": "nameless", "kind": "Pod", "causes": [cause]}
    message = f'Pod "nameless" is invalid: {field}: Required value'
    assert (answer.status, answer.body) == (422, status_body(422, "Invalid", message, details))


async def test_rbac_names_are_path_segments(backend: Backend) -> None:
    name = backend.unique("system:kr8s:Role_1")
    created = await req(backend, "POST", f"{RBAC}/clusterroles", {"metadata": {"name": name}})
    assert created.status == 201, created.body
    await req(backend, "DELETE", f"{RBAC}/clusterroles/{name}")
    bad = await req(backend, "POST", f"{RBAC}/clusterroles", {"metadata": {"name": "a%b"}})
    invalid = "Invalid value: \"a%b\": may not contain '%'"
    cause = {"reason": "FieldValueInvalid", "message": invalid, "field": "metadata.name"}
    message = f'ClusterRole.rbac.authorization.k8s.io "a%b" is invalid: metadata.name: {invalid}'
    details = {"name": "a%b", "group": "rbac.authorization.k8s.io", "kind": "ClusterRole"}
    details["causes"] = [cause]
    assert (bad.status, bad.body) == (422, status_body(422, "Invalid", message, details))
