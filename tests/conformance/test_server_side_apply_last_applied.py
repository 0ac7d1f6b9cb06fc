"""kubectl's move from client-side to server-side apply, as kube-apiserver's field manager
makes it (k8s.io/apimachinery managedfields ``lastAppliedUpdater`` and
``lastAppliedManager``): a server-side apply by the manager ``kubectl`` rewrites the
``kubectl.kubernetes.io/last-applied-configuration`` annotation of an object that has one
(so a later client-side ``kubectl apply`` diffs against it), and its conflicts on fields
that still hold what that annotation says are forced; with any other manager neither."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from reconcile_kit.testing.backends import Backend

from .kube import APPLY, MERGE, kubectl, ok, req

LAST = "kubectl.kubernetes.io/last-applied-configuration"
CSA = {"fieldManager": "kubectl-client-side-apply"}


def configmap(data: dict[str, str], **annotations: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "cm"}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}


async def created_by_client_side_apply(backend: Backend, data: dict[str, str]) -> str:
    """A ConfigMap as ``kubectl apply`` creates it: the annotation holds what was applied."""
    path = f"/api/v1/namespaces/{backend.namespace}/configmaps"
    last = json.dumps(configmap(data), separators=(",", ":")) + "\n"
    await ok(backend, "POST", path, configmap(data, **{LAST: last}), params=CSA)
    return f"{path}/cm"


async def apply(backend: Backend, path: str, body: dict[str, Any], manager: str) -> Any:
    return await req(
        backend, "PATCH", path, body, content_type=APPLY, params={"fieldManager": manager}
    )


async def test_kubectls_apply_rewrites_the_annotation_others_do_not(backend: Backend) -> None:
    path = await created_by_client_side_apply(backend, {"a": "1"})
    before = (await ok(backend, "GET", path))["metadata"]["annotations"][LAST]
    reply = await apply(backend, path, configmap({"a": "1"}, note="x"), "other")
    assert reply.status == 200, reply.body
    assert reply.body["metadata"]["annotations"][LAST] == before
    reply = await apply(backend, path, configmap({"a": "1", "b": "<&>"}, mine="y"), "kubectl")
    assert reply.status == 200, reply.body
    # the applied configuration without the annotation, as Go's encoding/json writes it
    assert reply.body["metadata"]["annotations"][LAST] == (
        '{"apiVersion":"v1","data":{"a":"1","b":"\\u003c\\u0026\\u003e"},"kind":"ConfigMap",'
        '"metadata":{"annotations":{"mine":"y"},"name":"cm"}}\n'
    )


async def test_no_annotation_is_added_by_kubectls_apply(backend: Backend) -> None:
    path = f"/api/v1/namespaces/{backend.namespace}/configmaps"
    reply = await apply(backend, f"{path}/cm", configmap({"a": "1"}), "kubectl")
    assert reply.status == 201, reply.body
    assert LAST not in (reply.body["metadata"].get("annotations") or {})


async def test_conflicts_on_fields_the_annotation_still_describes_are_forced(
    backend: Backend,
) -> None:
    path = await created_by_client_side_apply(backend, {"a": "1", "b": "1"})
    await ok(
        backend,
        "PATCH",
        path,
        {"data": {"b": "2"}},
        content_type=MERGE,
        params={"fieldManager": "other"},
    )
    # a: still what the annotation says (forced); b: changed since by "other" (a conflict)
    reply = await apply(backend, path, configmap({"a": "3", "b": "3"}), "kubectl")
    assert reply.status == 409, reply.body
    assert [c["field"] for c in reply.body["details"]["causes"]] == [".data.b"]
    assert reply.body["details"]["causes"][0]["message"] == 'conflict with "other" using v1'
    reply = await apply(backend, path, configmap({"a": "3", "b": "2"}), "kubectl")
    assert reply.status == 200, reply.body
    assert reply.body["data"] == {"a": "3", "b": "2"}
    managers = {m["manager"] for m in reply.body["metadata"]["managedFields"]}
    assert "kubectl" in managers
    reply = await apply(backend, path, configmap({"a": "4", "b": "2"}), "someone")
    assert reply.status == 409, reply.body
    assert [c["field"] for c in reply.body["details"]["causes"]] == [".data.a"]


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="no kubectl on PATH")
async def test_kubectl_apply_server_side_after_client_side(
    backend: Backend, tmp_path: Path
) -> None:
    """``kubectl apply`` then ``kubectl apply --server-side`` of a changed replica count: no
    conflict, and the Deployment's generation counts the annotation's change too."""
    manifest = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": backend.namespace},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }
    file = tmp_path / "web.json"
    file.write_text(json.dumps(manifest))
    cache = tmp_path / "cache"
    code, _, err = await kubectl(backend, cache, "apply", "-f", str(file))
    assert code == 0, err
    manifest["spec"]["replicas"] = 2
    file.write_text(json.dumps(manifest))
    code, out, err = await kubectl(backend, cache, "apply", "--server-side", "-f", str(file))
    assert (code, out) == (0, "deployment.apps/web serverside-applied\n"), err
    path = f"/apis/apps/v1/namespaces/{backend.namespace}/deployments/web"
    deployment = await ok(backend, "GET", path)
    assert deployment["spec"]["replicas"] == 2
    assert deployment["metadata"]["generation"] == 2
    assert json.loads(deployment["metadata"]["annotations"][LAST])["spec"]["replicas"] == 2
