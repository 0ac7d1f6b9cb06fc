"""Discovery: /version, /api, /apis, resource lists (k8s-semantics.md items 1-4, 16)."""

from __future__ import annotations

from typing import Any

from reconcile_kit.testing import eventually
from reconcile_kit.testing.backends import Backend

from .kube import Widgets, ok, req, status_body


def resource(resources: dict[str, Any], name: str) -> dict[str, Any]:
    [entry] = [r for r in resources["resources"] if r["name"] == name]
    return entry


async def test_version(backend: Backend) -> None:
    version = await ok(backend, "GET", "/version")
    assert {
        "major",
        "minor",
        "gitVersion",
        "gitCommit",
        "gitTreeState",
        "buildDate",
        "goVersion",
        "compiler",
        "platform",
    } <= set(version)
    assert (version["major"], version["minor"]) == ("1", "32")
    assert version["gitVersion"].startswith("v1.32.")


async def test_core_and_group_lists(backend: Backend) -> None:
    core = await ok(backend, "GET", "/api")
    assert core["kind"] == "APIVersions"
    assert core["versions"] == ["v1"]
    assert "serverAddressByClientCIDRs" in core
    groups = await ok(backend, "GET", "/apis")
    assert groups["kind"] == "APIGroupList"
    by_name = {g["name"]: g for g in groups["groups"]}
    for name in ("apps", "coordination.k8s.io", "apiextensions.k8s.io", "events.k8s.io"):
        assert by_name[name]["preferredVersion"]["groupVersion"] == f"{name}/v1"
        assert {"groupVersion": f"{name}/v1", "version": "v1"} in by_name[name]["versions"]
    apps = await ok(backend, "GET", "/apis/apps")
    assert apps["kind"] == "APIGroup"
    assert apps["name"] == "apps"
    assert apps["preferredVersion"] == {"groupVersion": "apps/v1", "version": "v1"}


async def test_every_listed_group_version_answers(backend: Backend) -> None:
    groups = await ok(backend, "GET", "/apis")
    for group in groups["groups"]:
        for version in group["versions"]:
            reply = await req(backend, "GET", f"/apis/{version['groupVersion']}")
            if reply.status == 404:
                # a CRD another test just deleted (the real backend is shared): its group
                # leaves /apis a moment after its resources stop being served
                await eventually(
                    lambda name=group["name"]: _unlisted(backend, name),
                    10,
                    what=f"group {group['name']} gone from /apis",
                )
                continue
            listing = reply.body
            assert listing["kind"] == "APIResourceList"
            assert listing["groupVersion"] == version["groupVersion"]


async def _unlisted(backend: Backend, name: str) -> bool:
    groups = await ok(backend, "GET", "/apis")
    return name not in [g["name"] for g in groups["groups"]]


async def test_resource_entries(backend: Backend) -> None:
    core = await ok(backend, "GET", "/api/v1")
    assert core["kind"] == "APIResourceList"
    assert core["groupVersion"] == "v1"
    configmaps = resource(core, "configmaps")
    assert configmaps["singularName"] == "configmap"
    assert configmaps["namespaced"] is True
    assert configmaps["kind"] == "ConfigMap"
    assert configmaps["shortNames"] == ["cm"]
    assert configmaps["verbs"] == [
        "create",
        "delete",
        "deletecollection",
        "get",
        "list",
        "patch",
        "update",
        "watch",
    ]
    assert resource(core, "namespaces")["namespaced"] is False
    apps = await ok(backend, "GET", "/apis/apps/v1")
    deployments = resource(apps, "deployments")
    assert deployments["shortNames"] == ["deploy"]
    assert deployments["categories"] == ["all"]
    status = resource(apps, "deployments/status")
    assert (status["kind"], sorted(status["verbs"])) == ("Deployment", ["get", "patch", "update"])
    scale = resource(apps, "deployments/scale")
    assert (scale["group"], scale["version"], scale["kind"]) == ("autoscaling", "v1", "Scale")
    leases = resource(await ok(backend, "GET", "/apis/coordination.k8s.io/v1"), "leases")
    assert (leases["singularName"], leases["kind"]) == ("lease", "Lease")


async def test_custom_resource_discovery(backend: Backend, widgets: Widgets) -> None:
    listing = await ok(backend, "GET", f"/apis/{widgets.group}/v1")
    entry = resource(listing, "widgets")
    assert (entry["singularName"], entry["kind"], entry["namespaced"]) == ("widget", "Widget", True)
    assert entry["shortNames"] == ["wd"]
    # apiextensions-apiserver's own order, not sorted.
    assert entry["verbs"] == [
        "delete",
        "deletecollection",
        "get",
        "list",
        "patch",
        "create",
        "update",
        "watch",
    ]
    assert sorted(resource(listing, "widgets/status")["verbs"]) == ["get", "patch", "update"]
    scale = resource(listing, "widgets/scale")
    assert (scale["group"], scale["version"], scale["kind"]) == ("autoscaling", "v1", "Scale")
    groups = await ok(backend, "GET", "/apis")
    [group] = [g for g in groups["groups"] if g["name"] == widgets.group]
    assert group["preferredVersion"] == {"groupVersion": f"{widgets.group}/v1", "version": "v1"}


async def test_unknown_paths(backend: Backend) -> None:
    for path in ("/nonsense", "/apis/nonsense.example.com/v1", "/apis/nonsense.example.com"):
        reply = await req(backend, "GET", path)
        assert (reply.status, reply.body) == (404, "404 page not found\n"), path
    # An unknown resource of a served group/version gets a Status.
    for path in (
        f"/api/v1/namespaces/{backend.namespace}/nonsense",
        "/apis/apps/v1/nonsense",
        f"/apis/apps/v1/namespaces/{backend.namespace}/deployments/x/nonsense",
    ):
        reply = await req(backend, "GET", path)
        assert (reply.status, reply.body) == (
            404,
            status_body(404, "NotFound", "the server could not find the requested resource", {}),
        ), path
