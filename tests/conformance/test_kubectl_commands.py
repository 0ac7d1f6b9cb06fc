"""kubectl commands of issue 15's acceptance that no other test runs through kubectl
itself: ``create token``, ``create clusterrole`` and ``get nodes`` answer on the embedded
server as on kube-apiserver (the same exit codes and output; a token's form differs, a
deliberate difference listed in the README: the embedded server's tokens are opaque)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from reconcile_kit.testing.backends import Backend

from .kube import kubectl, ok

pytestmark = pytest.mark.skipif(shutil.which("kubectl") is None, reason="no kubectl on PATH")


async def test_create_token_for_a_service_account(backend: Backend, tmp_path: Path) -> None:
    path = f"/api/v1/namespaces/{backend.namespace}/serviceaccounts"
    await ok(backend, "POST", path, {"metadata": {"name": "robot"}})
    code, out, err = await kubectl(
        backend, tmp_path, "create", "token", "robot", "-n", backend.namespace
    )
    assert code == 0, err
    token = out.strip()
    assert token and "\n" not in token
    review = await ok(
        backend,
        "POST",
        "/apis/authentication.k8s.io/v1/tokenreviews",
        {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}},
    )
    user = review["status"]["user"]["username"]
    assert user == f"system:serviceaccount:{backend.namespace}:robot"
    code, _, err = await kubectl(
        backend, tmp_path, "create", "token", "nobody", "-n", backend.namespace
    )
    assert code == 1
    assert err.strip() == 'error: failed to create token: serviceaccounts "nobody" not found'


async def test_create_clusterrole_then_get_it(backend: Backend, tmp_path: Path) -> None:
    name = f"{backend.namespace}-reader"
    args = ("create", "clusterrole", name, "--verb=get,list", "--resource=pods")
    code, out, err = await kubectl(backend, tmp_path, *args)
    try:
        assert (code, out) == (0, f"clusterrole.rbac.authorization.k8s.io/{name} created\n"), err
        code, out, err = await kubectl(
            backend, tmp_path, "get", "clusterrole", name, "-o", "jsonpath={.rules}"
        )
        assert code == 0, err
        assert out == '[{"apiGroups":[""],"resources":["pods"],"verbs":["get","list"]}]'
        code, _, err = await kubectl(backend, tmp_path, *args)
        assert code == 1
        assert f'clusterroles.rbac.authorization.k8s.io "{name}" already exists' in err
    finally:
        await kubectl(backend, tmp_path, "delete", "clusterrole", name, "--ignore-not-found")


async def test_get_nodes_on_a_control_plane_without_kubelets(
    backend: Backend, tmp_path: Path
) -> None:
    code, out, err = await kubectl(backend, tmp_path, "get", "nodes")
    assert (code, out, err) == (0, "", "No resources found\n")
