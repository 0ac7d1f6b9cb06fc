"""Deletion, finalizers and propagation policies (k8s-semantics.md items 28-30)."""

from __future__ import annotations

from reconcile_kit.testing.backends import Backend

from .kube import MERGE, Widgets, collect, ok, req, watch_events


async def test_delete_without_finalizers_returns_status(backend: Backend, widgets: Widgets) -> None:
    created = await ok(backend, "POST", widgets.path, widgets.widget())
    reply = await req(backend, "DELETE", f"{widgets.path}/w1")
    assert reply.status == 200
    assert reply.body == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": {
            "name": "w1",
            "group": widgets.group,
            "kind": "widgets",
            "uid": created["metadata"]["uid"],
        },
    }


async def test_finalizers_hold_deletion_until_removed(backend: Backend, widgets: Widgets) -> None:
    body = widgets.widget()
    body["metadata"]["finalizers"] = ["example.com/a", "example.com/b"]
    created = await ok(backend, "POST", widgets.path, body)
    url = f"{widgets.path}/w1"
    events = watch_events(
        backend, widgets.path, {"resourceVersion": created["metadata"]["resourceVersion"]}
    )
    deleting = await req(backend, "DELETE", url)
    assert deleting.status == 200
    meta = deleting.body["metadata"]
    assert meta["deletionTimestamp"]
    assert meta["deletionGracePeriodSeconds"] == 0
    assert meta["generation"] == 2
    again = await ok(backend, "DELETE", url)
    assert again["metadata"]["resourceVersion"] == meta["resourceVersion"]
    assert again["metadata"]["deletionTimestamp"] == meta["deletionTimestamp"]
    added = await req(
        backend,
        "PATCH",
        url,
        {"metadata": {"finalizers": ["example.com/a", "example.com/b", "example.com/c"]}},
        content_type=MERGE,
    )
    assert (added.status, added.body["reason"]) == (422, "Invalid")
    assert added.body["details"]["causes"][0]["field"] == "metadata.finalizers"
    assert (
        "no new finalizers can be added if the object is being deleted" in (added.body["message"])
    )
    one_left = await ok(
        backend, "PATCH", url, {"metadata": {"finalizers": ["example.com/b"]}}, content_type=MERGE
    )
    assert one_left["metadata"]["generation"] == 2
    gone = await req(backend, "PATCH", url, {"metadata": {"finalizers": None}}, content_type=MERGE)
    assert gone.status == 200
    assert (await req(backend, "GET", url)).status == 404
    # deletionTimestamp set; one finalizer removed; then the write that empties the list
    # is not stored: the object is deleted as it was (store.Update's deleteObj path).
    seen = await collect(events, 3)
    assert [e["type"] for e in seen] == ["MODIFIED", "MODIFIED", "DELETED"]
    assert seen[-1]["object"]["metadata"]["finalizers"] == ["example.com/b"]
    assert int(seen[-1]["object"]["metadata"]["resourceVersion"]) > int(
        one_left["metadata"]["resourceVersion"]
    )


async def test_propagation_policies_add_finalizers(backend: Backend) -> None:
    path = f"/api/v1/namespaces/{backend.namespace}/configmaps"
    for name, policy, finalizer in (
        ("o", "Orphan", "orphan"),
        ("f", "Foreground", "foregroundDeletion"),
    ):
        await ok(backend, "POST", path, {"metadata": {"name": name}})
        reply = await req(
            backend,
            "DELETE",
            f"{path}/{name}",
            {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": policy},
        )
        assert reply.status == 200, reply.body
        assert reply.body["metadata"]["finalizers"] == [finalizer]
        assert reply.body["metadata"]["deletionTimestamp"]
        # Nothing removes these finalizers without kube-controller-manager's collector.
        assert (await ok(backend, "GET", f"{path}/{name}"))["metadata"]["finalizers"] == [finalizer]
    await ok(backend, "POST", path, {"metadata": {"name": "b"}})
    background = await req(
        backend,
        "DELETE",
        f"{path}/b",
        {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": "Background"},
    )
    assert (background.status, background.body["status"]) == (200, "Success")
