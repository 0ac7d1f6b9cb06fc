"""The real control plane's own surface (runs with --backend real or both)."""

from __future__ import annotations

import shutil
import ssl
from pathlib import Path

import httpx
import pytest
import yaml

from reconcile_kit.testing import ControlPlane
from reconcile_kit.testing.backends import Backend

from .kube import kubectl, ok

pytestmark = pytest.mark.backends("real", reason="tests ControlPlane itself")


async def test_kubeconfig_authenticates_the_admin(backend: Backend) -> None:
    plane = backend.server
    assert isinstance(plane, ControlPlane)
    assert plane.url.startswith("https://127.0.0.1:")
    config = yaml.safe_load(Path(plane.kubeconfig).read_text())
    assert config["users"][0]["user"]["token"] == plane.token
    review = await ok(
        backend,
        "POST",
        "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
    )
    user = review["status"]["userInfo"]
    assert user["username"] == "admin"
    assert "system:masters" in user["groups"]


async def test_unauthenticated_requests_are_refused(backend: Backend) -> None:
    plane = backend.server
    assert isinstance(plane, ControlPlane)
    context = ssl.create_default_context(cadata=plane._ca_pem.decode())
    async with httpx.AsyncClient(verify=context) as client:
        anonymous = await client.get(f"{plane.url}/api/v1/namespaces")
        wrong = await client.get(
            f"{plane.url}/api/v1/namespaces", headers={"Authorization": "Bearer wrong"}
        )
        public = await client.get(f"{plane.url}/readyz")
    # Anonymous requests are system:anonymous (RBAC: forbidden); a bad token is 401.
    assert (anonymous.status_code, wrong.status_code, public.status_code) == (403, 401, 200)


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="no kubectl on PATH")
async def test_kubectl_uses_the_kubeconfig(backend: Backend, tmp_path: Path) -> None:
    code, out, err = await kubectl(
        backend, tmp_path, "get", "namespace", backend.namespace, "-o", "name"
    )
    assert (code, out.strip()) == (0, f"namespace/{backend.namespace}"), err


async def test_a_second_control_plane_starts_and_stops_cleanly(backend: Backend) -> None:
    async with ControlPlane() as plane:
        assert plane.url != backend.server.url
        workdir = plane.workdir
        assert workdir is not None and (workdir / "etcd").is_dir()
        api = await plane.api()
        assert (await api.version())["gitVersion"] == "v1.32.5"
        await api._session.aclose()
        processes = [plane._etcd, plane._apiserver]
    assert not workdir.exists()
    assert all(p is not None and p.popen.poll() is not None for p in processes)
