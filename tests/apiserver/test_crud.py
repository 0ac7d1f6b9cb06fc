"""CRUD semantics of the embedded API server, over the wire with kr8s."""

from __future__ import annotations

import kr8s
import pytest
from kr8s.asyncio.objects import ConfigMap, Deployment, Namespace, Pod

from reconcile_kit.testing import APIServer

from ..kubehttp import call

CM = "/api/v1/namespaces/default/configmaps"
DEPLOY = "/apis/apps/v1/namespaces/default/deployments"
MERGE = "application/merge-patch+json"


def deployment(name: str = "web", image: str = "nginx:1") -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "a", "image": image}]},
            },
        },
    }


async def test_create_sets_server_metadata(kube: kr8s.asyncio.Api) -> None:
    cm = await ConfigMap(
        {
            "metadata": {"name": "a", "uid": "mine", "creationTimestamp": "2000-01-01T00:00:00Z"},
            "data": {"k": "v"},
        },
        api=kube,
    )
    await cm.create()
    meta = cm.raw["metadata"]
    assert meta["uid"] != "mine" and len(meta["uid"]) == 36
    assert meta["creationTimestamp"] != "2000-01-01T00:00:00Z"
    assert int(meta["resourceVersion"]) > 0
    assert "generation" not in meta  # ConfigMaps have no generation
    fetched = await ConfigMap.get("a", namespace="default", api=kube)
    assert fetched.raw == cm.raw


async def test_resource_version_is_one_cluster_wide_counter(kube: kr8s.asyncio.Api) -> None:
    cm = await ConfigMap({"metadata": {"name": "a"}}, api=kube)
    await cm.create()
    deploy = await Deployment(deployment(), api=kube)
    await deploy.create()
    rv_cm = int(cm.raw["metadata"]["resourceVersion"])
    rv_deploy = int(deploy.raw["metadata"]["resourceVersion"])
    assert rv_deploy == rv_cm + 1
    status, listed = await call(kube, "GET", CM)
    assert status == 200 and int(listed["metadata"]["resourceVersion"]) == rv_deploy


async def test_create_errors(kube: kr8s.asyncio.Api) -> None:
    status, body = await call(kube, "POST", CM, {"metadata": {"name": "a"}})
    assert status == 201
    status, body = await call(kube, "POST", CM, {"metadata": {"name": "a"}})
    assert (status, body["reason"]) == (409, "AlreadyExists")
    assert body["message"] == 'configmaps "a" already exists'
    assert body["details"] == {"name": "a", "kind": "configmaps"}
    status, body = await call(kube, "POST", CM, {"metadata": {}})
    assert (status, body["reason"]) == (422, "Invalid")
    assert "name or generateName is required" in body["message"]
    status, body = await call(kube, "POST", CM, {"metadata": {"name": "Bad_Name"}})
    assert status == 422 and body["details"]["causes"][0]["field"] == "metadata.name"
    status, body = await call(
        kube, "POST", "/api/v1/namespaces/nope/configmaps", {"metadata": {"name": "a"}}
    )
    assert (status, body["message"]) == (404, 'namespaces "nope" not found')
    status, body = await call(kube, "POST", CM, {"metadata": {"name": "b", "namespace": "x"}})
    assert status == 400 and "does not match the namespace" in body["message"]
    status, body = await call(kube, "POST", CM, raw=b"{not json")
    assert (status, body["reason"]) == (400, "BadRequest")
    status, body = await call(
        kube, "POST", CM, {"metadata": {"name": "c"}}, content_type="text/plain"
    )
    assert (status, body["reason"]) == (415, "UnsupportedMediaType")
    status, body = await call(
        kube,
        "POST",
        CM,
        raw=b'{"metadata":{"name":"big"},"data":{"x":"' + b"x" * (3 * 1024 * 1024) + b'"}}',
    )
    assert (status, body["reason"]) == (413, "RequestEntityTooLarge")
    status, body = await call(kube, "GET", "/api/v1/nothings")  # a Status, as kube-apiserver
    assert status == 404 and body["message"] == "the server could not find the requested resource"


async def test_generate_name(kube: kr8s.asyncio.Api) -> None:
    status, body = await call(kube, "POST", CM, {"metadata": {"generateName": "x" * 70}})
    assert status == 201
    name = body["metadata"]["name"]
    assert name.startswith("x" * 58) and len(name) == 63


async def test_get_not_found_status(kube: kr8s.asyncio.Api) -> None:
    status, body = await call(kube, "GET", "/apis/apps/v1/namespaces/default/deployments/x")
    assert status == 404
    assert body == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'deployments.apps "x" not found',
        "reason": "NotFound",
        "details": {"name": "x", "group": "apps", "kind": "deployments"},
        "code": 404,
    }


async def test_list_label_selectors(kube: kr8s.asyncio.Api) -> None:
    labels = [{"app": "a", "tier": "1"}, {"app": "b", "tier": "2"}, {"app": "c"}, {}]
    for i, lab in enumerate(labels):
        await (await ConfigMap({"metadata": {"name": f"cm{i}", "labels": lab}}, api=kube)).create()

    async def names(selector: str) -> list[str]:
        return [
            c.name
            async for c in kube.get("configmaps", namespace="default", label_selector=selector)
        ]

    assert await names("app=a") == ["cm0"]
    assert await names("app!=a") == ["cm1", "cm2", "cm3"]
    assert await names("app in (a,b)") == ["cm0", "cm1"]
    assert await names("app notin (a,b)") == ["cm2", "cm3"]
    assert await names("tier") == ["cm0", "cm1"]
    assert await names("!tier") == ["cm2", "cm3"]
    assert await names("tier>1") == ["cm1"]
    assert await names("app,tier=2") == ["cm1"]
    status, body = await call(kube, "GET", CM, params={"labelSelector": "app in (a"})
    assert (status, body["reason"]) == (400, "BadRequest")


async def test_list_field_selectors(kube: kr8s.asyncio.Api) -> None:
    for name in ("a", "b"):
        await (await ConfigMap({"metadata": {"name": name}}, api=kube)).create()
    status, body = await call(
        kube, "GET", "/api/v1/configmaps", params={"fieldSelector": "metadata.name=b"}
    )
    assert [i["metadata"]["name"] for i in body["items"]] == ["b"]
    status, body = await call(kube, "GET", CM, params={"fieldSelector": "metadata.name!=b"})
    assert [i["metadata"]["name"] for i in body["items"]] == ["a"]
    status, body = await call(kube, "GET", CM, params={"fieldSelector": "data.x=1"})
    assert status == 400 and body["message"] == (
        '"data.x" is not a known field selector: only "metadata.name", "metadata.namespace"'
    )
    pod = await Pod(
        {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}},
        api=kube,
    )
    await pod.create()
    status, body = await call(
        kube, "GET", "/api/v1/pods", params={"fieldSelector": "status.phase=Pending"}
    )
    assert [i["metadata"]["name"] for i in body["items"]] == ["p"]


async def test_list_items_carry_no_kind_for_builtins(kube: kr8s.asyncio.Api) -> None:
    await (await ConfigMap({"metadata": {"name": "a"}}, api=kube)).create()
    status, body = await call(kube, "GET", CM)
    assert body["kind"] == "ConfigMapList" and body["apiVersion"] == "v1"
    assert "kind" not in body["items"][0]


async def test_pagination_is_one_snapshot(kube: kr8s.asyncio.Api, apiserver: APIServer) -> None:
    for i in range(5):
        await call(kube, "POST", CM, {"metadata": {"name": f"cm{i}"}})
    status, page1 = await call(kube, "GET", CM, params={"limit": "2"})
    token, list_rv = page1["metadata"]["continue"], page1["metadata"]["resourceVersion"]
    assert [i["metadata"]["name"] for i in page1["items"]] == ["cm0", "cm1"]
    # changes after the first page do not show in later pages
    await call(kube, "DELETE", f"{CM}/cm3")
    await call(kube, "POST", CM, {"metadata": {"name": "cm2a"}})
    await call(kube, "PATCH", f"{CM}/cm2", {"data": {"x": "1"}}, "application/merge-patch+json")
    status, page2 = await call(kube, "GET", CM, params={"limit": "2", "continue": token})
    assert [i["metadata"]["name"] for i in page2["items"]] == ["cm2", "cm3"]
    assert "data" not in page2["items"][0]
    assert page2["metadata"]["resourceVersion"] == list_rv
    status, page3 = await call(
        kube, "GET", CM, params={"limit": "2", "continue": page2["metadata"]["continue"]}
    )
    assert [i["metadata"]["name"] for i in page3["items"]] == ["cm4"]
    assert "continue" not in page3["metadata"]
    apiserver.compact()
    status, body = await call(kube, "GET", CM, params={"limit": "2", "continue": token})
    assert (status, body["reason"]) == (410, "Expired")


async def test_kr8s_paginated_list(kube: kr8s.asyncio.Api, apiserver: APIServer) -> None:
    for i in range(7):
        await call(kube, "POST", CM, {"metadata": {"name": f"cm{i}"}})
    names = [c.name async for c in kube.get("configmaps", namespace="default")]
    assert names == [f"cm{i}" for i in range(7)]


async def test_merge_patch(kube: kr8s.asyncio.Api) -> None:
    cm = await ConfigMap(
        {"metadata": {"name": "a", "labels": {"x": "1", "y": "2"}}, "data": {"k": "v", "j": "w"}},
        api=kube,
    )
    await cm.create()
    status, body = await call(
        kube,
        "PATCH",
        f"{CM}/a",
        {"metadata": {"labels": {"x": None, "z": "3"}}, "data": {"k": "v2"}},
        "application/merge-patch+json",
    )
    assert status == 200
    assert body["metadata"]["labels"] == {"y": "2", "z": "3"}
    assert body["data"] == {"k": "v2", "j": "w"}
    assert int(body["metadata"]["resourceVersion"]) > int(cm.raw["metadata"]["resourceVersion"])


async def test_json_patch_and_test_op(kube: kr8s.asyncio.Api) -> None:
    cm = await ConfigMap({"metadata": {"name": "a"}, "data": {"k": "v"}}, api=kube)
    await cm.create()
    rv = cm.raw["metadata"]["resourceVersion"]
    ops = [
        {"op": "test", "path": "/metadata/resourceVersion", "value": rv},
        {"op": "add", "path": "/data/n", "value": "1"},
    ]
    status, body = await call(kube, "PATCH", f"{CM}/a", ops, "application/json-patch+json")
    assert status == 200 and body["data"] == {"k": "v", "n": "1"}
    status, body = await call(kube, "PATCH", f"{CM}/a", ops, "application/json-patch+json")
    assert (status, body["reason"]) == (422, "Invalid")
    status, body = await call(
        kube, "PATCH", f"{CM}/a", {"op": "add"}, "application/json-patch+json"
    )
    assert status == 400
    fetched = await ConfigMap.get("a", namespace="default", api=kube)
    assert fetched.raw["data"] == {"k": "v", "n": "1"}


async def test_patch_with_stale_resource_version_conflicts(kube: kr8s.asyncio.Api) -> None:
    cm = await ConfigMap({"metadata": {"name": "a"}}, api=kube)
    await cm.create()
    stale = cm.raw["metadata"]["resourceVersion"]
    await cm.patch({"data": {"a": "1"}})
    status, body = await call(
        kube,
        "PATCH",
        f"{CM}/a",
        {"metadata": {"resourceVersion": stale}, "data": {"a": "2"}},
        "application/merge-patch+json",
    )
    assert (status, body["reason"]) == (409, "Conflict")
    assert body["message"] == (
        'Operation cannot be fulfilled on configmaps "a": the object has been modified;'
        " please apply your changes to the latest version and try again"
    )
    status, _ = await call(
        kube, "PATCH", f"{CM}/missing", {"data": {}}, "application/merge-patch+json"
    )
    assert status == 404


async def test_put_rules(kube: kr8s.asyncio.Api) -> None:
    status, created = await call(kube, "POST", CM, {"metadata": {"name": "a"}})
    body = {**created, "data": {"k": "v"}}
    status, updated = await call(kube, "PUT", f"{CM}/a", body)
    assert status == 200 and updated["data"] == {"k": "v"}
    status, conflict = await call(kube, "PUT", f"{CM}/a", body)  # stale resourceVersion
    assert (status, conflict["reason"]) == (409, "Conflict")
    no_rv = {"metadata": {"name": "a"}, "data": {"k": "w"}}
    status, _ = await call(kube, "PUT", f"{CM}/a", no_rv)  # allowed for ConfigMaps
    assert status == 200
    status, body = await call(kube, "PUT", f"{CM}/b", {"metadata": {"name": "c"}})
    assert status == 400 and "does not match the name on the URL" in body["message"]
    status, _ = await call(kube, "PUT", f"{CM}/missing", {"metadata": {"name": "missing"}})
    assert status == 404
    lease = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
    status, body = await call(
        kube, "PUT", f"{lease}/l", {"metadata": {"name": "l"}, "spec": {"holderIdentity": "me"}}
    )
    assert status == 201  # Lease PUT creates
    status, body = await call(kube, "PUT", f"{lease}/l", {"metadata": {"name": "l"}})
    assert status == 422 and "must be specified for an update" in body["message"]


async def test_noop_write_changes_nothing(kube: kr8s.asyncio.Api, apiserver: APIServer) -> None:
    status, created = await call(kube, "POST", CM, {"metadata": {"name": "a"}, "data": {"k": "v"}})
    rv = created["metadata"]["resourceVersion"]
    status, body = await call(
        kube, "PATCH", f"{CM}/a", {"data": {"k": "v"}}, "application/merge-patch+json"
    )
    assert status == 200 and body["metadata"]["resourceVersion"] == rv
    status, body = await call(kube, "PUT", f"{CM}/a", created)
    assert body["metadata"]["resourceVersion"] == rv
    assert apiserver.cluster.store.rv == int(rv)


async def test_deployment_generation_rules(kube: kr8s.asyncio.Api) -> None:
    status, body = await call(kube, "POST", DEPLOY, deployment())
    assert body["metadata"]["generation"] == 1
    status, body = await call(
        kube,
        "PATCH",
        f"{DEPLOY}/web",
        {"metadata": {"labels": {"a": "b"}}},
        "application/merge-patch+json",
    )
    assert body["metadata"]["generation"] == 1  # labels do not bump
    status, body = await call(
        kube,
        "PATCH",
        f"{DEPLOY}/web",
        {"metadata": {"annotations": {"a": "b"}}},
        "application/merge-patch+json",
    )
    assert body["metadata"]["generation"] == 2  # annotations do, for Deployments
    status, body = await call(
        kube, "PATCH", f"{DEPLOY}/web", {"spec": {"replicas": 3}}, "application/merge-patch+json"
    )
    assert body["metadata"]["generation"] == 3
    status, body = await call(
        kube,
        "PATCH",
        f"{DEPLOY}/web",
        {"metadata": {"generation": 9}},
        "application/merge-patch+json",
    )
    assert body["metadata"]["generation"] == 3  # clients cannot set it


async def test_status_subresource_on_builtin(kube: kr8s.asyncio.Api) -> None:
    status, body = await call(kube, "POST", DEPLOY, {**deployment(), "status": {"replicas": 5}})
    assert body["status"] == {}  # create drops status
    status, body = await call(
        kube, "PATCH", f"{DEPLOY}/web", {"status": {"replicas": 5}}, "application/merge-patch+json"
    )
    assert "replicas" not in body["status"]  # main resource keeps stored status
    status, body = await call(
        kube,
        "PATCH",
        f"{DEPLOY}/web/status",
        {"status": {"replicas": 5}, "spec": {"replicas": 9}},
        "application/merge-patch+json",
    )
    assert status == 200
    assert body["status"]["replicas"] == 5
    assert body["spec"]["replicas"] == 1  # /status ignores spec
    assert body["metadata"]["generation"] == 1
    stale = {**body, "metadata": {**body["metadata"], "resourceVersion": "1"}}
    status, body = await call(kube, "PUT", f"{DEPLOY}/web/status", stale)
    assert (status, body["reason"]) == (409, "Conflict")
    status, body = await call(kube, "GET", f"{DEPLOY}/web/status")
    assert status == 200 and body["status"]["replicas"] == 5
    status, body = await call(kube, "GET", "/api/v1/namespaces/default/configmaps/x/status")
    assert status == 404


async def test_scale_subresource(kube: kr8s.asyncio.Api) -> None:
    await call(kube, "POST", DEPLOY, deployment())
    status, scale = await call(kube, "GET", f"{DEPLOY}/web/scale")
    assert scale["kind"] == "Scale" and scale["apiVersion"] == "autoscaling/v1"
    assert scale["spec"] == {"replicas": 1} and scale["status"]["selector"] == "app=web"
    status, scale = await call(
        kube,
        "PATCH",
        f"{DEPLOY}/web/scale",
        {"spec": {"replicas": 4}},
        "application/merge-patch+json",
    )
    assert status == 200 and scale["spec"]["replicas"] == 4
    deploy = await Deployment.get("web", namespace="default", api=kube)
    assert deploy.raw["spec"]["replicas"] == 4 and deploy.raw["metadata"]["generation"] == 2


async def test_strategic_merge_on_builtin(kube: kr8s.asyncio.Api) -> None:
    dep = deployment()
    dep["spec"]["template"]["spec"]["containers"].append({"name": "b", "image": "redis:7"})
    await call(kube, "POST", DEPLOY, dep)
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "b", "image": "redis:8"}]}}}}
    status, body = await call(
        kube, "PATCH", f"{DEPLOY}/web", patch, "application/strategic-merge-patch+json"
    )
    assert status == 200
    images = [(c["name"], c["image"]) for c in body["spec"]["template"]["spec"]["containers"]]
    assert images == [("a", "nginx:1"), ("b", "redis:8")]


async def test_namespaces(kube: kr8s.asyncio.Api) -> None:
    names = [n.name async for n in kube.get("namespaces")]
    assert {"default", "kube-system", "kube-public"} <= set(names)
    ns = await Namespace({"metadata": {"name": "team-a"}}, api=kube)
    await ns.create()
    assert ns.raw["status"]["phase"] == "Active"
    status, body = await call(kube, "POST", "/api/v1/namespaces", {"metadata": {"name": "has.dot"}})
    assert status == 422  # namespaces are DNS labels
    await (await ConfigMap({"metadata": {"name": "x", "namespace": "team-a"}}, api=kube)).create()
    status, body = await call(kube, "GET", "/api/v1/configmaps")
    assert "team-a" in {i["metadata"]["namespace"] for i in body["items"]}


async def test_dry_run_persists_nothing(kube: kr8s.asyncio.Api, apiserver: APIServer) -> None:
    rv = apiserver.cluster.store.rv
    status, body = await call(
        kube, "POST", CM, {"metadata": {"name": "a"}}, params={"dryRun": "All"}
    )
    assert status == 201 and body["metadata"]["name"] == "a"
    assert apiserver.cluster.store.rv == rv
    status, _ = await call(kube, "GET", f"{CM}/a")
    assert status == 404


async def test_request_log_records_calls(kube: kr8s.asyncio.Api, apiserver: APIServer) -> None:
    apiserver.requests.clear()
    cm = await ConfigMap({"metadata": {"name": "a"}}, api=kube)
    await cm.create()
    await cm.patch({"data": {"k": "v"}})
    writes = apiserver.requests.writes()
    assert [(r.verb, r.resource, r.name, r.status) for r in writes] == [
        ("create", "configmaps", "", 201),
        ("patch", "configmaps", "a", 200),
    ]
    patch = writes[1]
    assert patch.content_type == "application/merge-patch+json"
    assert patch.body == {"data": {"k": "v"}}
    assert patch.path == "/api/v1/namespaces/default/configmaps/a"
    assert apiserver.requests.count(verb="patch") == 1


@pytest.mark.parametrize("token", ["s3cret"])
async def test_token_authentication(token: str) -> None:
    async with APIServer(token=token) as server:
        api = await server.api()
        status, _ = await call(api, "GET", CM)
        assert status == 200
        assert server.kubeconfig_dict()["users"][0]["user"] == {"token": token}
        import aiohttp

        async with aiohttp.ClientSession() as session:
            async with session.get(server.url + CM) as response:
                assert response.status == 401
            async with session.get(server.url + "/version") as response:
                assert response.status == 200


async def test_tls() -> None:
    async with APIServer(tls=True) as server:
        assert server.url.startswith("https://")
        api = await server.api()
        status, body = await call(api, "GET", CM)
        assert status == 200 and body["kind"] == "ConfigMapList"


async def test_managed_fields(kube: kr8s.asyncio.Api) -> None:
    status, created = await call(
        kube,
        "POST",
        CM,
        {"metadata": {"name": "a", "labels": {"x": "1"}}, "data": {"k": "v"}},
        params={"fieldManager": "first"},
    )
    [entry] = created["metadata"]["managedFields"]
    assert (entry["manager"], entry["operation"], entry["fieldsType"]) == (
        "first",
        "Update",
        "FieldsV1",
    )
    # maps the Update added are members too ("."), as kube-apiserver records them
    assert entry["fieldsV1"] == {
        "f:data": {".": {}, "f:k": {}},
        "f:metadata": {"f:labels": {".": {}, "f:x": {}}},
    }
    status, body = await call(kube, "PATCH", f"{CM}/a", {"data": {"k": "w", "j": "1"}}, MERGE)
    by_manager = {e["manager"]: e["fieldsV1"] for e in body["metadata"]["managedFields"]}
    assert by_manager == {
        "first": {"f:data": {}, "f:metadata": {"f:labels": {".": {}, "f:x": {}}}},
        "kr8s": {"f:data": {"f:j": {}, "f:k": {}}},
    }
    rv = body["metadata"]["resourceVersion"]
    status, body = await call(
        kube, "PATCH", f"{CM}/a", {"data": {"k": "w"}}, MERGE, params={"fieldManager": "third"}
    )
    assert body["metadata"]["resourceVersion"] == rv  # a no-op changes no managedFields
    assert len(body["metadata"]["managedFields"]) == 2


async def test_owner_references_are_validated(kube: kr8s.asyncio.Api) -> None:
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "u1", "controller": True}
    status, body = await call(
        kube,
        "POST",
        CM,
        {"metadata": {"name": "a", "ownerReferences": [ref, {**ref, "name": "p", "uid": "u2"}]}},
    )
    assert (
        status == 422 and "Only one reference can have Controller set to true" in (body["message"])
    )
    status, body = await call(
        kube, "POST", CM, {"metadata": {"name": "a", "ownerReferences": [{**ref, "uid": ""}]}}
    )
    assert status == 422 and body["details"]["causes"][0]["field"] == "metadata.ownerReferences.uid"


async def test_empty_maps_are_omitted_as_go_does(kube: kr8s.asyncio.Api) -> None:
    status, created = await call(
        kube, "POST", CM, {"metadata": {"name": "a", "labels": {}}, "data": {}}
    )
    assert "labels" not in created["metadata"] and "data" not in created
    rv = created["metadata"]["resourceVersion"]
    status, body = await call(kube, "PATCH", f"{CM}/a", {"metadata": {"labels": {}}}, MERGE)
    assert body["metadata"]["resourceVersion"] == rv and "labels" not in body["metadata"]
