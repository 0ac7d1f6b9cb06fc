"""RBAC decisions worded as kube-apiserver's: a refusal names the bindings' roles that do
not exist (RBACAuthorizer.Authorize's reason, in the 403, a SubjectAccessReview's reason
and a SelfSubjectRulesReview's evaluationError), the bootstrap policy's non-resource rules
a ServiceAccount has, the authorized subresource of a proxy path, and the access reviews'
validation."""

from __future__ import annotations

import json
from typing import Any

from reconcile_kit.testing.backends import Backend

from .kube import ok, req
from .test_authorization import RBAC, as_token, service_account_token

REVIEWS = "/apis/authorization.k8s.io/v1"
REF = {"apiGroup": "rbac.authorization.k8s.io"}


async def test_refusals_name_the_missing_roles(backend: Backend) -> None:
    ns = backend.namespace
    rules = [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list"]}]
    token = await service_account_token(backend, "sa", rules)
    subjects = [{"kind": "ServiceAccount", "name": "sa", "namespace": ns}]
    missing_cluster_role = backend.unique("missing")
    binding = {
        "metadata": {"name": missing_cluster_role},
        "roleRef": {**REF, "kind": "ClusterRole", "name": missing_cluster_role},
        "subjects": subjects,
    }
    await ok(backend, "POST", f"{RBAC}/clusterrolebindings", binding)
    role_binding = {
        "metadata": {"name": "to-missing"},
        "roleRef": {**REF, "kind": "Role", "name": "missing"},
        "subjects": subjects,
    }
    await ok(backend, "POST", f"{RBAC}/namespaces/{ns}/rolebindings", role_binding)
    user = f"system:serviceaccount:{ns}:sa"
    errors = (
        f'[clusterrole.rbac.authorization.k8s.io "{missing_cluster_role}" not found,'
        ' role.rbac.authorization.k8s.io "missing" not found]'
    )
    allowed = await as_token(backend, token, "GET", f"/api/v1/namespaces/{ns}/configmaps")
    assert allowed.status_code == 200  # what is granted: no errors
    refused = await as_token(backend, token, "GET", f"/api/v1/namespaces/{ns}/secrets")
    assert refused.status_code == 403
    assert refused.json()["message"] == (
        f'secrets is forbidden: User "{user}" cannot list resource "secrets" in API group ""'
        f' in the namespace "{ns}": RBAC: {errors}'
    )
    path = await as_token(backend, token, "GET", "/metrics")
    assert path.json()["message"] == (
        f'forbidden: User "{user}" cannot get path "/metrics": RBAC: clusterrole.rbac'
        f'.authorization.k8s.io "{missing_cluster_role}" not found'  # no namespace: no Role
    )
    groups = ["system:serviceaccounts", f"system:serviceaccounts:{ns}", "system:authenticated"]
    review = {
        "spec": {
            "user": user,
            "groups": groups,
            "resourceAttributes": {"namespace": ns, "verb": "get", "resource": "secrets"},
        }
    }
    answer = await ok(backend, "POST", f"{REVIEWS}/subjectaccessreviews", review)
    assert answer["status"] == {"allowed": False, "reason": f"RBAC: {errors}"}
    rules_review = {"spec": {"namespace": ns}}
    rules = await as_token(
        backend, token, "POST", f"{REVIEWS}/selfsubjectrulesreviews", rules_review
    )
    assert rules.json()["status"]["evaluationError"] == errors
    no_namespace = await as_token(
        backend, token, "POST", f"{REVIEWS}/selfsubjectrulesreviews", {"spec": {}}
    )
    assert (no_namespace.status_code, no_namespace.json()["message"]) == (
        400,
        "no namespace on request",
    )


async def test_a_service_accounts_bootstrap_non_resource_rules(backend: Backend) -> None:
    token = await service_account_token(backend, "plain", [])
    rules = await as_token(
        backend,
        token,
        "POST",
        f"{REVIEWS}/selfsubjectrulesreviews",
        {"spec": {"namespace": backend.namespace}},
    )
    found = sorted(json.dumps(rule) for rule in rules.json()["status"]["nonResourceRules"])
    bootstrap = [
        [
            "/.well-known/openid-configuration",
            "/.well-known/openid-configuration/",
            "/openid/v1/jwks",
            "/openid/v1/jwks/",
        ],
        ["/healthz", "/livez", "/readyz", "/version", "/version/"],
        [
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
        ],
    ]
    expected = [json.dumps({"verbs": ["get"], "nonResourceURLs": urls}) for urls in bootstrap]
    assert found == sorted(expected)
    issuer = await req(
        backend, "POST", f"{REVIEWS}/subjectaccessreviews", _review("/openid/v1/jwks")
    )
    assert issuer.body["status"]["allowed"] is True


def _review(path: str) -> dict[str, Any]:
    groups = ["system:serviceaccounts", "system:authenticated"]
    attributes = {"verb": "get", "path": path}
    return {
        "spec": {
            "user": "system:serviceaccount:x:y",
            "groups": groups,
            "nonResourceAttributes": attributes,
        }
    }


async def test_a_proxy_paths_subresource_is_its_next_part(backend: Backend) -> None:
    ns = backend.namespace
    token = await service_account_token(backend, "proxy", [])
    refused = await as_token(
        backend, token, "GET", f"/api/v1/namespaces/{ns}/services/web:80/proxy/a/b"
    )
    assert refused.status_code == 403
    assert 'cannot get resource "services/proxy" in API group ""' in refused.json()["message"]


async def test_access_review_specs_are_validated(backend: Backend) -> None:
    ns = backend.namespace
    both = {
        "user": "u",
        "resourceAttributes": {"namespace": "other", "verb": "get", "resource": "pods"},
        "nonResourceAttributes": {"verb": "get", "path": "/x"},
    }
    shown = 'authorization.NonResourceAttributes{Path:"/x", Verb:"get"}'
    cases: list[tuple[str, dict[str, Any], list[tuple[str, str]]]] = [
        (
            "subjectaccessreviews",
            both,
            [
                (
                    "spec.nonResourceAttributes",
                    f"{shown}: cannot be specified in combination with resourceAttributes",
                )
            ],
        ),
        (
            "subjectaccessreviews",
            {},
            [
                (
                    "spec.resourceAttributes",
                    '"null": exactly one of nonResourceAttributes or resourceAttributes must be'
                    " specified",
                ),
                ("spec.user", '"": at least one of user or group must be specified'),
            ],
        ),
        (
            f"namespaces/{ns}/localsubjectaccessreviews",
            both,
            [
                (
                    "spec.nonResourceAttributes",
                    f"{shown}: cannot be specified in combination with resourceAttributes",
                ),
                ("spec.resourceAttributes.namespace", '"other": must match metadata.namespace'),
                ("spec.nonResourceAttributes", f"{shown}: disallowed on this kind of request"),
            ],
        ),
        (
            "selfsubjectaccessreviews",
            {},
            [
                (
                    "spec.resourceAttributes",
                    '"null": exactly one of nonResourceAttributes or resourceAttributes must be'
                    " specified",
                )
            ],
        ),
    ]
    for path, spec, expected in cases:
        reply = await req(backend, "POST", f"{REVIEWS}/{path}", {"spec": spec})
        assert reply.status == 422, (path, reply.body)
        causes = [
            {"reason": "FieldValueInvalid", "message": f"Invalid value: {text}", "field": field}
            for field, text in expected
        ]
        texts = [f"{c['field']}: {c['message']}" for c in causes]
        summary = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
        assert reply.body == {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": f'.authorization.k8s.io "" is invalid: {summary}',
            "reason": "Invalid",
            "details": {"group": "authorization.k8s.io", "causes": causes},
            "code": 422,
        }, path
