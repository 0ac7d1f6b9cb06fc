"""User impersonation (kubectl ``--as``/``--as-group``/``--as-uid``): the Impersonate-*
headers as k8s.io/apiserver endpoints/filters/impersonation.go applies them. The request
runs as the impersonated user (groups implied as kube-apiserver implies them), the
requester needs ``impersonate`` on each thing it asks for, and groups, extras or a uid
without a user are a plain-text 500."""

from __future__ import annotations

from typing import Any

import httpx

from reconcile_kit.testing.backends import Backend

from .test_authorization import service_account_token

REVIEWS = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
REVIEW = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}


async def send(
    backend: Backend,
    method: str,
    path: str,
    headers: list[tuple[str, str]],
    token: str | None = None,
    body: Any = None,
) -> httpx.Response:
    """One request as ``token`` (default: the tests' admin) with extra ``headers``."""
    bearer = token or backend.server.token
    auth = [("Authorization", f"Bearer {bearer}")] if bearer else []
    async with httpx.AsyncClient(verify=False, timeout=10) as client:  # loopback
        return await client.request(
            method, backend.server.url + path, json=body, headers=[*auth, *headers]
        )


async def who(backend: Backend, headers: list[tuple[str, str]]) -> Any:
    answer = await send(backend, "POST", REVIEWS, headers, body=REVIEW)
    assert answer.status_code == 201, answer.text
    return answer.json()["status"]["userInfo"]


async def test_the_request_runs_as_the_impersonated_user(backend: Backend) -> None:
    ns = backend.namespace
    account = f"system:serviceaccount:{ns}:robot"
    groups = ["system:serviceaccounts", f"system:serviceaccounts:{ns}", "system:authenticated"]
    assert await who(backend, [("Impersonate-User", account)]) == {
        "username": account,
        "groups": groups,
    }
    bob = [
        ("Impersonate-User", "bob"),
        ("Impersonate-Group", "g1"),
        ("Impersonate-Group", "g2"),
        ("Impersonate-Uid", "u-1"),
        ("Impersonate-Extra-Scopes", "b"),
        ("Impersonate-Extra-Scopes", "a"),
    ]
    assert await who(backend, bob) == {
        "username": "bob",
        "uid": "u-1",
        "groups": ["g1", "g2", "system:authenticated"],
        "extra": {"scopes": ["b", "a"]},
    }
    anonymous = [("Impersonate-User", "system:anonymous")]
    refused = await send(backend, "POST", REVIEWS, anonymous, body=REVIEW)
    assert (refused.status_code, refused.json()["message"]) == (
        403,
        'selfsubjectreviews.authentication.k8s.io is forbidden: User "system:anonymous" '
        'cannot create resource "selfsubjectreviews" in API group "authentication.k8s.io" '
        "at the cluster scope",
    )
    given = await who(backend, [("Impersonate-User", account), ("Impersonate-Group", "x")])
    assert given == {"username": account, "groups": ["x", "system:authenticated"]}


async def test_the_impersonated_user_is_authorized(backend: Backend) -> None:
    ns = backend.namespace
    await service_account_token(
        backend, "reader", [{"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]}]
    )
    account = [("Impersonate-User", f"system:serviceaccount:{ns}:reader")]
    pods = await send(backend, "GET", f"/api/v1/namespaces/{ns}/pods", account)
    assert pods.status_code == 200, pods.text
    refused = await send(backend, "GET", f"/api/v1/namespaces/{ns}/configmaps", account)
    assert refused.status_code == 403
    assert refused.json()["message"] == (
        f'configmaps is forbidden: User "system:serviceaccount:{ns}:reader" cannot list '
        f'resource "configmaps" in API group "" in the namespace "{ns}"'
    )
    masters = [("Impersonate-User", "bob"), ("Impersonate-Group", "system:masters")]
    assert (await send(backend, "GET", f"/api/v1/namespaces/{ns}/configmaps", masters)).is_success


async def test_the_requester_needs_impersonate_on_each_ask(backend: Backend) -> None:
    ns = backend.namespace
    rule = {"apiGroups": [""], "resources": ["serviceaccounts"], "verbs": ["impersonate"]}
    token = await service_account_token(backend, "proxy", [rule])
    user = f"system:serviceaccount:{ns}:proxy"
    target = [("Impersonate-User", f"system:serviceaccount:{ns}:other")]
    allowed = await send(backend, "POST", REVIEWS, target, token, REVIEW)
    assert allowed.status_code == 201, allowed.text
    assert allowed.json()["status"]["userInfo"]["username"] == f"system:serviceaccount:{ns}:other"
    cases = [
        (
            [("Impersonate-User", "bob")],
            f'users "bob" is forbidden: User "{user}" cannot impersonate resource "users" '
            'in API group "" at the cluster scope',
        ),
        (
            [*target, ("Impersonate-Group", "g1")],
            f'groups "g1" is forbidden: User "{user}" cannot impersonate resource "groups" '
            'in API group "" at the cluster scope',
        ),
        (
            [*target, ("Impersonate-Extra-Scopes", "v")],
            f'userextras.authentication.k8s.io "v" is forbidden: User "{user}" cannot '
            'impersonate resource "userextras/scopes" in API group "authentication.k8s.io" '
            "at the cluster scope",
        ),
        (
            [*target, ("Impersonate-Uid", "u-1")],
            f'uids.authentication.k8s.io "u-1" is forbidden: User "{user}" cannot '
            'impersonate resource "uids" in API group "authentication.k8s.io" at the '
            "cluster scope",
        ),
    ]
    for headers, message in cases:
        refused = await send(backend, "GET", f"/api/v1/namespaces/{ns}/pods", headers, token)
        assert (refused.status_code, refused.json()["message"]) == (403, message)


async def test_groups_without_a_user_are_an_internal_error(backend: Backend) -> None:
    answer = await send(backend, "GET", "/api/v1/namespaces?limit=1", [("Impersonate-Group", "g1")])
    assert answer.status_code == 500
    assert answer.text == (
        'Internal Server Error: "/api/v1/namespaces?limit=1": requested [{Group  g1    }] '
        "without impersonating a user\n"
    )
    assert answer.headers["content-type"] == "text/plain; charset=utf-8"
    uid = await send(backend, "GET", "/version", [("Impersonate-Uid", "u")])
    assert uid.text == (
        'Internal Server Error: "/version": requested '
        "[{UID  u  authentication.k8s.io/v1  }] without impersonating a user\n"
    )
