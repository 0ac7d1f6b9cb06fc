"""Deletion, finalizers, propagation and garbage collection on the embedded API server."""

from __future__ import annotations

from typing import Any

import kr8s

from reconcile_kit.testing import APIServer

from ..kubehttp import call

CM = "/api/v1/namespaces/default/configmaps"
MERGE = "application/merge-patch+json"


def owned(name: str, owner: dict[str, Any], block: bool = False) -> dict[str, Any]:
    ref = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": block,
    }
    return {"metadata": {"name": name, "ownerReferences": [ref]}}


async def test_delete_without_finalizers(kube: kr8s.asyncio.Api) -> None:
    _, created = await call(kube, "POST", CM, {"metadata": {"name": "a"}})
    status, body = await call(kube, "DELETE", f"{CM}/a")
    assert status == 200
    assert body["kind"] == "Status" and body["status"] == "Success"
    assert body["details"] == {"name": "a", "kind": "configmaps", "uid": created["metadata"]["uid"]}
    status, _ = await call(kube, "GET", f"{CM}/a")
    assert status == 404
    status, body = await call(kube, "DELETE", f"{CM}/a")
    assert (status, body["reason"]) == (404, "NotFound")


async def test_delete_returns_object_for_pods(kube: kr8s.asyncio.Api) -> None:
    pods = "/api/v1/namespaces/default/pods"
    await call(
        kube,
        "POST",
        pods,
        {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "x"}]}},
    )
    status, body = await call(kube, "DELETE", f"{pods}/p")
    assert status == 200 and body["kind"] == "Pod"


async def test_delete_with_finalizer_waits_for_its_removal(kube: kr8s.asyncio.Api) -> None:
    _, created = await call(
        kube, "POST", CM, {"metadata": {"name": "a", "finalizers": ["example.com/x"]}}
    )
    status, body = await call(kube, "DELETE", f"{CM}/a")
    assert status == 200 and body["kind"] == "ConfigMap"
    meta = body["metadata"]
    assert meta["deletionTimestamp"] and meta["deletionGracePeriodSeconds"] == 0
    status, again = await call(kube, "DELETE", f"{CM}/a")
    assert again["metadata"]["resourceVersion"] == meta["resourceVersion"]  # nothing changed
    status, body = await call(
        kube,
        "PATCH",
        f"{CM}/a",
        {"metadata": {"finalizers": ["example.com/x", "example.com/y"]}},
        MERGE,
    )
    assert status == 422 and "no new finalizers can be added" in body["message"]
    status, body = await call(kube, "PATCH", f"{CM}/a", {"metadata": {"finalizers": None}}, MERGE)
    assert status == 200
    status, _ = await call(kube, "GET", f"{CM}/a")
    assert status == 404


async def test_deletion_bumps_generation(kube: kr8s.asyncio.Api) -> None:
    deploy = "/apis/apps/v1/namespaces/default/deployments"
    await call(
        kube,
        "POST",
        deploy,
        {
            "metadata": {"name": "d", "finalizers": ["x.io/y"]},
            "spec": {
                "selector": {"matchLabels": {"a": "b"}},
                "template": {
                    "metadata": {"labels": {"a": "b"}},
                    "spec": {"containers": [{"name": "c", "image": "busybox"}]},
                },
            },
        },
    )
    status, body = await call(kube, "DELETE", f"{deploy}/d")
    assert body["metadata"]["generation"] == 2


async def test_delete_preconditions(kube: kr8s.asyncio.Api) -> None:
    await call(kube, "POST", CM, {"metadata": {"name": "a"}})
    status, body = await call(
        kube, "DELETE", f"{CM}/a", {"preconditions": {"resourceVersion": "1"}}
    )
    assert (status, body["reason"]) == (409, "Conflict")
    status, body = await call(kube, "DELETE", f"{CM}/a", {"preconditions": {"uid": "nope"}})
    assert status == 409 and "the UID in the precondition (nope) does not match" in body["message"]


async def test_garbage_collection_of_dependents(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    _, owner = await call(kube, "POST", CM, {"metadata": {"name": "owner"}})
    await call(kube, "POST", CM, owned("child", owner))
    await call(
        kube,
        "POST",
        CM,
        owned(
            "grandchild",
            {
                "metadata": {
                    "name": "child",
                    "uid": (await call(kube, "GET", f"{CM}/child"))[1]["metadata"]["uid"],
                }
            },
        ),
    )
    await call(kube, "DELETE", f"{CM}/owner")
    await apiserver.settled()
    status, listed = await call(kube, "GET", CM)
    assert listed["items"] == []


async def test_dependent_with_surviving_owner_loses_only_dangling_ref(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    _, a = await call(kube, "POST", CM, {"metadata": {"name": "a"}})
    _, b = await call(kube, "POST", CM, {"metadata": {"name": "b"}})
    child = owned("child", a)
    child["metadata"]["ownerReferences"].append(owned("x", b)["metadata"]["ownerReferences"][0])
    child["metadata"]["ownerReferences"][1]["controller"] = False
    await call(kube, "POST", CM, child)
    await call(kube, "DELETE", f"{CM}/a")
    await apiserver.settled()
    status, body = await call(kube, "GET", f"{CM}/child")
    assert status == 200
    assert [r["name"] for r in body["metadata"]["ownerReferences"]] == ["b"]


async def test_orphan_propagation(kube: kr8s.asyncio.Api, apiserver: APIServer) -> None:
    _, owner = await call(kube, "POST", CM, {"metadata": {"name": "owner"}})
    await call(kube, "POST", CM, owned("child", owner))
    status, body = await call(kube, "DELETE", f"{CM}/owner", {"propagationPolicy": "Orphan"})
    assert "orphan" in body["metadata"]["finalizers"]
    await apiserver.settled()
    status, _ = await call(kube, "GET", f"{CM}/owner")
    assert status == 404
    status, child = await call(kube, "GET", f"{CM}/child")
    assert status == 200 and "ownerReferences" not in child["metadata"]


async def test_foreground_propagation(kube: kr8s.asyncio.Api, apiserver: APIServer) -> None:
    _, owner = await call(kube, "POST", CM, {"metadata": {"name": "owner"}})
    child = owned("child", owner, block=True)
    child["metadata"]["finalizers"] = ["example.com/hold"]
    await call(kube, "POST", CM, child)
    status, body = await call(kube, "DELETE", f"{CM}/owner", {"propagationPolicy": "Foreground"})
    assert body["metadata"]["finalizers"] == ["foregroundDeletion"]
    await apiserver.settled()
    status, held = await call(kube, "GET", f"{CM}/child")
    assert held["metadata"]["deletionTimestamp"]
    status, _ = await call(kube, "GET", f"{CM}/owner")
    assert status == 200  # waits for the blocking dependent
    await call(kube, "PATCH", f"{CM}/child", {"metadata": {"finalizers": None}}, MERGE)
    await apiserver.settled()
    status, _ = await call(kube, "GET", f"{CM}/owner")
    assert status == 404


async def test_no_garbage_collection_like_envtest() -> None:
    async with APIServer(garbage_collection=False) as server:
        api = await server.api()
        _, owner = await call(api, "POST", CM, {"metadata": {"name": "owner"}})
        await call(api, "POST", CM, owned("child", owner))
        await call(api, "DELETE", f"{CM}/owner")
        await server.settled()
        status, _ = await call(api, "GET", f"{CM}/child")
        assert status == 200
        status, ns = await call(api, "DELETE", "/api/v1/namespaces/default")
        await server.settled()
        status, ns = await call(api, "GET", "/api/v1/namespaces/default")
        assert ns["status"]["phase"] == "Terminating"


async def test_namespace_deletion(kube: kr8s.asyncio.Api, apiserver: APIServer) -> None:
    await call(kube, "POST", "/api/v1/namespaces", {"metadata": {"name": "team"}})
    team = "/api/v1/namespaces/team/configmaps"
    await call(kube, "POST", team, {"metadata": {"name": "a"}})
    await call(kube, "POST", team, {"metadata": {"name": "held", "finalizers": ["x.io/y"]}})
    status, body = await call(kube, "DELETE", "/api/v1/namespaces/team")
    assert status == 200 and body["status"]["phase"] == "Terminating"
    assert body["spec"]["finalizers"] == ["kubernetes"]
    status, body = await call(kube, "POST", team, {"metadata": {"name": "new"}})
    assert (status, body["reason"]) == (403, "Forbidden")
    await apiserver.settled()
    status, _ = await call(kube, "GET", "/api/v1/namespaces/team")
    assert status == 200  # a finalizer still holds content
    await call(kube, "PATCH", f"{team}/held", {"metadata": {"finalizers": None}}, MERGE)
    await apiserver.settled()
    status, _ = await call(kube, "GET", "/api/v1/namespaces/team")
    assert status == 404


async def test_delete_collection(kube: kr8s.asyncio.Api) -> None:
    for name, team in (("a", "x"), ("b", "x"), ("c", "y")):
        await call(kube, "POST", CM, {"metadata": {"name": name, "labels": {"team": team}}})
    status, body = await call(kube, "DELETE", CM, params={"labelSelector": "team=x"})
    assert status == 200 and [i["metadata"]["name"] for i in body["items"]] == ["a", "b"]
    status, listed = await call(kube, "GET", CM)
    assert [i["metadata"]["name"] for i in listed["items"]] == ["c"]
