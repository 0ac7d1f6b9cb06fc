"""Who am I and what may I do (issue 15): SelfSubjectReview (`kubectl auth whoami`),
SelfSubjectAccessReview (`kubectl auth can-i`) and TokenReview, as kube-apiserver answers
them with RBAC authorization."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from reconcile_kit.testing.backends import Backend

from .kube import ok, token_kubeconfig
from .test_authorization import as_token, service_account_token

KUBECTL = shutil.which("kubectl")
AUTHN = "/apis/authentication.k8s.io/v1"
AUTHZ = "/apis/authorization.k8s.io/v1"
ADMIN = {"username": "admin", "uid": "admin", "groups": ["system:masters", "system:authenticated"]}


def access_review(**attributes: Any) -> dict[str, Any]:
    key = "nonResourceAttributes" if "path" in attributes else "resourceAttributes"
    return {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {key: attributes},
    }


async def test_self_subject_review_names_the_caller(backend: Backend) -> None:
    body = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    review = await ok(backend, "POST", f"{AUTHN}/selfsubjectreviews", body)
    assert review == {
        "kind": "SelfSubjectReview",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {"creationTimestamp": review["metadata"]["creationTimestamp"]},
        "status": {"userInfo": ADMIN},
    }
    assert review["metadata"]["creationTimestamp"]  # kube-apiserver stamps the answer
    token = await service_account_token(backend, "who", [])
    reply = await as_token(backend, token, "POST", f"{AUTHN}/selfsubjectreviews", body)
    assert reply.status_code == 201, reply.text
    user = reply.json()["status"]["userInfo"]
    ns = backend.namespace
    assert user["username"] == f"system:serviceaccount:{ns}:who"
    assert user["groups"] == [
        "system:serviceaccounts",
        f"system:serviceaccounts:{ns}",
        "system:authenticated",
    ]


async def test_self_subject_access_review(backend: Backend) -> None:
    ns = backend.namespace
    allowed = await ok(
        backend,
        "POST",
        f"{AUTHZ}/selfsubjectaccessreviews",
        access_review(namespace=ns, verb="delete", resource="pods"),
    )
    assert allowed["status"] == {"allowed": True}  # system:masters: no RBAC reason
    assert allowed["spec"] == {
        "resourceAttributes": {"namespace": ns, "verb": "delete", "resource": "pods"}
    }
    rules = [{"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get", "list"]}]
    token = await service_account_token(backend, "asker", rules)
    path = f"{AUTHZ}/selfsubjectaccessreviews"
    may = await as_token(
        backend,
        token,
        "POST",
        path,
        access_review(namespace=ns, verb="list", group="apps", resource="deployments"),
    )
    assert may.status_code == 201, may.text
    assert may.json()["status"] == {
        "allowed": True,
        "reason": f'RBAC: allowed by RoleBinding "asker/{ns}" of Role "asker" to ServiceAccount '
        f'"asker/{ns}"',
    }
    may_not = await as_token(
        backend, token, "POST", path, access_review(namespace=ns, verb="delete", resource="pods")
    )
    assert may_not.json()["status"] == {"allowed": False}
    discovery = await as_token(
        backend, token, "POST", path, access_review(path="/apis", verb="get")
    )
    assert discovery.json()["status"] == {
        "allowed": True,
        "reason": 'RBAC: allowed by ClusterRoleBinding "system:discovery" of ClusterRole '
        '"system:discovery" to Group "system:authenticated"',
    }


async def test_token_review(backend: Backend) -> None:
    token = await service_account_token(backend, "reviewed", [])
    body = {
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenReview",
        "spec": {"token": token},
    }
    review = await ok(backend, "POST", f"{AUTHN}/tokenreviews", body)
    status = review["status"]
    assert status["authenticated"] is True
    assert status["user"]["username"] == f"system:serviceaccount:{backend.namespace}:reviewed"
    bad = await ok(backend, "POST", f"{AUTHN}/tokenreviews", {**body, "spec": {"token": "nope"}})
    assert bad["status"] == {"user": {}, "error": "invalid bearer token"}
    assert status["audiences"] and status["user"]["uid"]
    assert list(status["user"]["extra"]) == ["authentication.kubernetes.io/credential-id"]


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not on PATH")
async def test_kubectl_auth_can_i_and_whoami(backend: Backend, tmp_path: Path) -> None:
    rules = [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]
    token = await service_account_token(backend, "cli", rules)
    config = token_kubeconfig(backend, token, backend.namespace)
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(config))

    async def kubectl(*args: str) -> tuple[int, str]:
        assert KUBECTL is not None
        proc = await asyncio.create_subprocess_exec(
            KUBECTL,
            "--cache-dir",
            str(tmp_path / "cache"),
            *args,
            env={**os.environ, "KUBECONFIG": str(path)},
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        out, _ = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode is not None
        return proc.returncode, out.decode()

    assert await kubectl("auth", "can-i", "get", "configmaps") == (0, "yes\n")
    code, out = await kubectl("auth", "can-i", "delete", "configmaps")
    assert (code, out) == (1, "no\n")
    code, out = await kubectl("auth", "whoami", "-o", "jsonpath={.status.userInfo.username}")
    assert code == 0, out
    assert out == f"system:serviceaccount:{backend.namespace}:cli"
