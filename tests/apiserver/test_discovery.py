"""Discovery documents of the embedded API server."""

from __future__ import annotations

import kr8s

from ..kubehttp import call


async def test_version(kube: kr8s.asyncio.Api) -> None:
    version = await kube.version()
    assert set(version) >= {
        "major",
        "minor",
        "gitVersion",
        "gitCommit",
        "gitTreeState",
        "buildDate",
        "goVersion",
        "compiler",
        "platform",
    }
    assert version["gitVersion"].startswith("v1.")


async def test_core_and_groups(kube: kr8s.asyncio.Api) -> None:
    status, body = await call(kube, "GET", "/api/")
    assert body["kind"] == "APIVersions" and body["versions"] == ["v1"]
    status, body = await call(kube, "GET", "/apis/")
    groups = {g["name"]: g for g in body["groups"]}
    assert {"apps", "batch", "coordination.k8s.io", "events.k8s.io", "apiextensions.k8s.io"} <= set(
        groups
    )
    assert groups["apps"]["preferredVersion"] == {"groupVersion": "apps/v1", "version": "v1"}
    status, body = await call(kube, "GET", "/apis/apps")
    assert body["kind"] == "APIGroup" and body["name"] == "apps"


async def test_every_listed_group_version_answers(kube: kr8s.asyncio.Api) -> None:
    status, groups = await call(kube, "GET", "/apis")
    paths = ["/api/v1"] + [
        f"/apis/{v['groupVersion']}" for g in groups["groups"] for v in g["versions"]
    ]
    for path in paths:
        status, body = await call(kube, "GET", path)
        assert status == 200 and body["kind"] == "APIResourceList", path
        for resource in body["resources"]:
            assert "singularName" in resource and resource["verbs"] == sorted(resource["verbs"])


async def test_resource_entries(kube: kr8s.asyncio.Api) -> None:
    status, body = await call(kube, "GET", "/apis/apps/v1")
    by_name = {r["name"]: r for r in body["resources"]}
    deploy = by_name["deployments"]
    assert (deploy["singularName"], deploy["kind"], deploy["namespaced"]) == (
        "deployment",
        "Deployment",
        True,
    )
    assert deploy["shortNames"] == ["deploy"]
    assert by_name["deployments/status"]["verbs"] == ["get", "patch", "update"]
    scale = by_name["deployments/scale"]
    assert (scale["group"], scale["version"], scale["kind"]) == ("autoscaling", "v1", "Scale")
    status, body = await call(kube, "GET", "/api/v1")
    core = {r["name"]: r for r in body["resources"]}
    assert {
        "namespaces",
        "configmaps",
        "secrets",
        "pods",
        "pods/status",
        "services",
        "serviceaccounts",
        "events",
    } <= set(core)
    assert core["namespaces"]["namespaced"] is False


async def test_unknown_paths_404(kube: kr8s.asyncio.Api) -> None:
    for path in ("/apis/nope.io/v1", "/apis/apps/v9", "/api/v2"):
        status, text = await call(kube, "GET", path)
        assert status == 404 and text == "404 page not found\n"
