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


POD_SPEC = {"containers": [{"name": "c", "image": "x"}]}


def grace_of(event: dict[str, object]) -> tuple[object, ...]:
    obj = event["object"]
    assert isinstance(obj, dict)
    meta = obj["metadata"]
    return event["type"], meta["name"], meta.get("deletionGracePeriodSeconds")


async def test_pods_are_deleted_gracefully(backend: Backend) -> None:
    """A Pod's DELETE first writes its deletionTimestamp and grace period (MODIFIED): a Pod
    on a node keeps ``spec.terminationGracePeriodSeconds`` and stays for its kubelet, a
    shorter period may follow, 0 deletes it; a Pod on no node, or finished, goes at once
    (rest.BeforeDelete, the pod strategy's CheckGracefulDelete)."""
    pods = f"/api/v1/namespaces/{backend.namespace}/pods"
    start = (await ok(backend, "GET", pods))["metadata"]["resourceVersion"]
    events = watch_events(backend, pods, {"resourceVersion": start})
    await ok(backend, "POST", pods, {"metadata": {"name": "unscheduled"}, "spec": POD_SPEC})
    on_node = {"metadata": {"name": "on-node"}, "spec": {**POD_SPEC, "nodeName": "n"}}
    await ok(backend, "POST", pods, on_node)
    finished = {"metadata": {"name": "finished"}, "spec": {**POD_SPEC, "nodeName": "n"}}
    await ok(backend, "POST", pods, finished)
    status = {"status": {"phase": "Succeeded"}}
    await ok(backend, "PATCH", f"{pods}/finished/status", status, content_type=MERGE)
    assert len(await collect(events, 4)) == 4

    gone = await ok(backend, "DELETE", f"{pods}/unscheduled")
    assert gone["metadata"]["deletionGracePeriodSeconds"] == 0
    assert gone["metadata"]["deletionTimestamp"]
    assert [grace_of(e) for e in await collect(events, 2)] == [
        ("MODIFIED", "unscheduled", 0),
        ("DELETED", "unscheduled", 0),
    ]
    await ok(backend, "DELETE", f"{pods}/finished")
    assert [grace_of(e) for e in await collect(events, 2)] == [
        ("MODIFIED", "finished", 0),
        ("DELETED", "finished", 0),
    ]

    terminating = await ok(backend, "DELETE", f"{pods}/on-node")
    assert terminating["metadata"]["deletionGracePeriodSeconds"] == 30
    assert [grace_of(e) for e in await collect(events, 1)] == [("MODIFIED", "on-node", 30)]
    again = await ok(backend, "DELETE", f"{pods}/on-node")  # pending: nothing written
    assert again["metadata"]["resourceVersion"] == terminating["metadata"]["resourceVersion"]
    shorter = await ok(backend, "DELETE", f"{pods}/on-node", params={"gracePeriodSeconds": "10"})
    assert shorter["metadata"]["deletionGracePeriodSeconds"] == 10
    await ok(backend, "DELETE", f"{pods}/on-node", params={"gracePeriodSeconds": "0"})
    assert [grace_of(e) for e in await collect(events, 3)] == [
        ("MODIFIED", "on-node", 10),
        ("MODIFIED", "on-node", 0),
        ("DELETED", "on-node", 0),
    ]
    assert (await req(backend, "GET", f"{pods}/on-node")).status == 404
    await events.aclose()  # type: ignore[attr-defined]
