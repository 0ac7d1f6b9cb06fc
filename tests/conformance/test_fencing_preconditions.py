"""The preconditions a fenced write carries (reconcile_kit.client.fencing), judged by
kube-apiserver: a stale ``metadata.resourceVersion`` in a merge patch, a server-side apply
body and a PUT, a stale ``preconditions.resourceVersion`` on DELETE, and a JSON patch whose
leading ``test`` of a label fails: the write is refused and nothing lands."""

from __future__ import annotations

from reconcile_kit.testing.backends import Backend

from .kube import APPLY, JSON_PATCH, MERGE, ok, req

LABEL = "shard.reconcile-kit.io/ring"


async def relabelled(backend: Backend, name: str) -> tuple[str, str]:
    """Create ConfigMap ``name`` labelled for r1, then relabel it for r2 (the sharder's
    move); returns the path and the resourceVersion r1 read."""
    path = f"/api/v1/namespaces/{backend.namespace}/configmaps"
    body = {"metadata": {"name": name, "labels": {LABEL: "r1"}}, "data": {"v": "0"}}
    created = await ok(backend, "POST", path, body)
    moved = {"metadata": {"labels": {LABEL: "r2"}}}
    await ok(backend, "PATCH", f"{path}/{name}", moved, content_type=MERGE)
    return f"{path}/{name}", created["metadata"]["resourceVersion"]


async def unchanged(backend: Backend, path: str) -> None:
    current = await ok(backend, "GET", path)
    assert current["data"] == {"v": "0"}
    assert current["metadata"]["labels"] == {LABEL: "r2"}


async def test_stale_resource_version_refuses_merge_patch_apply_and_put(
    backend: Backend,
) -> None:
    path, stale = await relabelled(backend, "fenced")
    merge = {"metadata": {"resourceVersion": stale}, "data": {"v": "old"}}
    reply = await req(backend, "PATCH", path, merge, content_type=MERGE)
    assert (reply.status, reply.body["reason"]) == (409, "Conflict")
    applied = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "fenced", "resourceVersion": stale},
        "data": {"v": "old"},
    }
    reply = await req(
        backend, "PATCH", path, applied, content_type=APPLY, params={"fieldManager": "r1"}
    )
    assert (reply.status, reply.body["reason"]) == (409, "Conflict")
    put = {**applied, "metadata": {**applied["metadata"], "labels": {LABEL: "r1"}}}
    reply = await req(backend, "PUT", path, put)
    assert (reply.status, reply.body["reason"]) == (409, "Conflict")
    await unchanged(backend, path)


async def test_failed_label_test_refuses_json_patch_and_stale_delete(backend: Backend) -> None:
    path, stale = await relabelled(backend, "tested")
    ops = [
        {"op": "test", "path": "/metadata/labels/shard.reconcile-kit.io~1ring", "value": "r1"},
        {"op": "replace", "path": "/data/v", "value": "old"},
    ]
    reply = await req(backend, "PATCH", path, ops, content_type=JSON_PATCH)
    assert reply.status == 422, reply.body
    assert reply.body["reason"] == "Invalid"
    # kube-apiserver names no cause: the generic 422 (apimachinery NewGenericServerResponse)
    assert reply.body["message"] == "the server rejected our request due to an error in our request"
    reply = await req(backend, "DELETE", path, {"preconditions": {"resourceVersion": stale}})
    assert (reply.status, reply.body["reason"]) == (409, "Conflict")
    await unchanged(backend, path)
