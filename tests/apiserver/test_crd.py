"""CustomResourceDefinitions and custom resources on the embedded API server."""

from __future__ import annotations

import kr8s

from reconcile_kit.testing import APIServer, eventually

from ..crds import WIDGETS, install_crd, widget, widget_crd
from ..kubehttp import call

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
MERGE = "application/merge-patch+json"


async def install(api: kr8s.asyncio.Api, **kwargs: bool) -> dict:
    """The Widget CRD, once its resources are served; returns it as then stored."""
    crd = widget_crd(**kwargs)
    await install_crd(api, crd)
    status, body = await call(api, "GET", f"{CRDS}/{crd['metadata']['name']}")
    assert status == 200, body
    return body


async def test_crd_is_established_asynchronously(kube: kr8s.asyncio.Api) -> None:
    """As kube-apiserver: the create answer has no conditions yet and the resources answer
    404 until the CRD is established (tens of milliseconds)."""
    status, created = await call(kube, "POST", CRDS, widget_crd())
    assert status == 201
    assert created["status"] == {
        "conditions": None,
        "acceptedNames": {"plural": "", "kind": ""},
        "storedVersions": ["v1"],
    }
    assert "finalizers" not in created["metadata"]
    assert (await call(kube, "GET", WIDGETS))[0] == 404

    async def established() -> bool:
        return (await call(kube, "GET", WIDGETS))[0] == 200

    await eventually(established, 5, interval=0.01, what="widgets served")
    status, crd = await call(kube, "GET", f"{CRDS}/widgets.example.com")
    assert "finalizers" not in crd["metadata"]  # the first DELETE adds it


async def test_crd_is_established_and_discoverable(kube: kr8s.asyncio.Api) -> None:
    status, _ = await call(kube, "GET", WIDGETS)
    assert status == 404
    crd = await install(kube)
    conditions = {c["type"]: (c["status"], c["reason"]) for c in crd["status"]["conditions"]}
    assert conditions == {
        "NamesAccepted": ("True", "NoConflicts"),
        "Established": ("True", "InitialNamesAccepted"),
    }
    assert crd["status"]["acceptedNames"]["listKind"] == "WidgetList"
    assert crd["status"]["storedVersions"] == ["v1"]
    status, groups = await call(kube, "GET", "/apis")
    assert "example.com" in [g["name"] for g in groups["groups"]]
    status, resources = await call(kube, "GET", "/apis/example.com/v1")
    by_name = {r["name"]: r for r in resources["resources"]}
    assert by_name["widgets"]["singularName"] == "widget"
    assert by_name["widgets"]["shortNames"] == ["wd"]
    assert by_name["widgets"]["namespaced"] is True
    assert by_name["widgets/status"]["verbs"] == ["get", "patch", "update"]
    assert by_name["widgets/scale"]["kind"] == "Scale"
    status, listed = await call(kube, "GET", WIDGETS)
    assert (status, listed["kind"], listed["items"]) == (200, "WidgetList", [])


async def test_crd_validation(kube: kr8s.asyncio.Api) -> None:
    bad = widget_crd()
    bad["metadata"]["name"] = "wrong.example.com"
    status, body = await call(kube, "POST", CRDS, bad)
    assert status == 422 and "must be spec.names.plural" in body["message"]
    bad = widget_crd()
    del bad["spec"]["versions"][0]["schema"]
    status, body = await call(kube, "POST", CRDS, bad)
    assert status == 422 and "schemas are required" in body["message"]


async def test_custom_resource_validation_pruning_defaults(kube: kr8s.asyncio.Api) -> None:
    await install(kube)
    status, body = await call(kube, "POST", WIDGETS, widget(size="big"))  # type: ignore[arg-type]
    assert (status, body["reason"]) == (422, "Invalid")
    assert body["message"] == (
        'Widget.example.com "w1" is invalid: spec.size: Invalid value: "string": spec.size in'
        ' body must be of type integer: "string"'
    )
    assert body["details"]["causes"][0]["field"] == "spec.size"
    status, body = await call(kube, "POST", WIDGETS, widget(size=0, color="green"))
    assert status == 422
    fields = {c["field"] for c in body["details"]["causes"]}
    assert fields == {"spec.size", "spec.color"}
    status, body = await call(kube, "POST", WIDGETS, {**widget(), "spec": {}})
    assert status == 422 and body["details"]["causes"][0]["message"] == "Required value"

    status, body = await call(
        kube, "POST", WIDGETS, widget(unknown=1, extra={"anything": {"goes": 1}})
    )
    assert status == 201
    assert body["spec"] == {"size": 1, "replicas": 1, "extra": {"anything": {"goes": 1}}}
    assert body["metadata"]["generation"] == 1
    status, body = await call(
        kube, "POST", WIDGETS, widget("w2", junk=1), params={"fieldValidation": "Strict"}
    )
    assert status == 400 and 'unknown field "spec.junk"' in body["message"]


async def test_custom_resource_status_and_generation(kube: kr8s.asyncio.Api) -> None:
    await install(kube)
    status, created = await call(kube, "POST", WIDGETS, {**widget(), "status": {"ready": True}})
    assert "status" not in created
    url = f"{WIDGETS}/w1"
    status, body = await call(kube, "PATCH", url, {"metadata": {"labels": {"a": "b"}}}, MERGE)
    assert body["metadata"]["generation"] == 1
    status, body = await call(
        kube, "PATCH", url, {"spec": {"size": 2}, "status": {"ready": True}}, MERGE
    )
    assert body["metadata"]["generation"] == 2 and "status" not in body
    status, body = await call(
        kube,
        "PATCH",
        f"{url}/status",
        {"status": {"ready": True}, "metadata": {"labels": {"c": "d"}}, "spec": {"size": 9}},
        MERGE,
    )
    assert status == 200 and body["status"] == {"ready": True}
    assert body["spec"]["size"] == 2 and body["metadata"]["labels"] == {"a": "b"}
    assert body["metadata"]["generation"] == 2
    status, body = await call(kube, "PATCH", f"{url}/status", {"status": {"ready": "yes"}}, MERGE)
    assert status == 422
    status, body = await call(
        kube, "PATCH", url, {"spec": {"size": 3}}, "application/strategic-merge-patch+json"
    )
    assert status == 415 and body["reason"] == "UnsupportedMediaType"
    assert "application/merge-patch+json" in body["message"]
    no_rv = {**widget(), "metadata": {"name": "w1"}}
    status, body = await call(kube, "PUT", url, no_rv)
    assert status == 422 and "must be specified for an update" in body["message"]


async def test_crd_without_status_subresource(kube: kr8s.asyncio.Api) -> None:
    await install(kube, status=False, scale=False)
    status, created = await call(kube, "POST", WIDGETS, {**widget(), "status": {"ready": True}})
    assert created["status"] == {"ready": True}
    status, body = await call(kube, "PATCH", f"{WIDGETS}/w1", {"status": {"ready": False}}, MERGE)
    assert body["status"] == {"ready": False} and body["metadata"]["generation"] == 2
    status, body = await call(kube, "GET", f"{WIDGETS}/w1/status")
    assert status == 404


async def test_custom_resource_scale(kube: kr8s.asyncio.Api) -> None:
    await install(kube)
    await call(kube, "POST", WIDGETS, widget(replicas=2))
    await call(
        kube,
        "PATCH",
        f"{WIDGETS}/w1/status",
        {"status": {"replicas": 2, "selector": "app=w"}},
        MERGE,
    )
    status, scale = await call(kube, "GET", f"{WIDGETS}/w1/scale")
    assert scale["spec"] == {"replicas": 2}
    assert scale["status"] == {"replicas": 2, "selector": "app=w"}
    status, scale = await call(
        kube, "PUT", f"{WIDGETS}/w1/scale", {**scale, "spec": {"replicas": 5}}
    )
    assert status == 200 and scale["spec"]["replicas"] == 5
    status, body = await call(kube, "GET", f"{WIDGETS}/w1")
    assert body["spec"]["replicas"] == 5


async def test_deleting_crd_removes_resources(kube: kr8s.asyncio.Api, apiserver: APIServer) -> None:
    await install(kube)
    await call(kube, "POST", WIDGETS, widget())
    status, body = await call(kube, "DELETE", f"{CRDS}/widgets.example.com")
    assert status == 200
    await apiserver.settled()
    status, _ = await call(kube, "GET", f"{CRDS}/widgets.example.com")
    assert status == 404
    status, _ = await call(kube, "GET", WIDGETS)
    assert status == 404
    assert apiserver.cluster.store.count("example.com/widgets") == 0


async def test_kr8s_custom_resource(kube: kr8s.asyncio.Api) -> None:
    await install(kube)
    from kr8s.asyncio.objects import new_class

    Widget = new_class("Widget", "example.com/v1", namespaced=True)
    obj = await Widget(widget(), api=kube)
    await obj.create()
    await obj.patch({"status": {"ready": True}}, subresource="status")
    fetched = await Widget.get("w1", namespace="default", api=kube)
    assert fetched.raw["status"] == {"ready": True}
    names = [w.name async for w in kube.get("widgets", namespace="default")]
    assert names == ["w1"]


async def test_unknown_fields_warn_by_default(kube: kr8s.asyncio.Api) -> None:
    await install(kube)
    async with kube.call_api(
        "POST",
        version="example.com/v1",
        base="/apis",
        url="namespaces/default/widgets",
        content='{"apiVersion":"example.com/v1","kind":"Widget",'
        '"metadata":{"name":"w"},"spec":{"size":1,"junk":1}}',
        raise_for_status=False,
    ) as response:
        assert response.status_code == 201
        assert response.headers["Warning"] == '299 - "unknown field \\"spec.junk\\""'
        assert "junk" not in response.json()["spec"]


async def test_pattern_anchors_behave_as_go_regexps(kube: kr8s.asyncio.Api) -> None:
    crd = widget_crd()
    props = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    props["properties"]["code"] = {"type": "string", "pattern": "^[A-Z]+$"}
    await install_crd(kube, crd)
    status, body = await call(kube, "POST", WIDGETS, widget(code="ABC\n"))
    assert status == 422
    assert body["details"]["causes"][0]["message"].endswith("should match '^[A-Z]+$'")
    status, _ = await call(kube, "POST", WIDGETS, widget(code="ABC"))
    assert status == 201
