"""The status and scale subresources (k8s-semantics.md items 25-27)."""

from __future__ import annotations

from reconcile_kit.testing.backends import Backend

from .kube import MERGE, Widgets, ok, req
from .test_versions import deployment


async def test_create_and_main_writes_keep_the_stored_status(
    backend: Backend, widgets: Widgets
) -> None:
    body = widgets.widget()
    body["status"] = {"ready": True}
    created = await ok(backend, "POST", widgets.path, body)
    assert "status" not in created
    url = f"{widgets.path}/w1"
    await ok(backend, "PATCH", f"{url}/status", {"status": {"ready": False}}, content_type=MERGE)
    patched = await ok(
        backend, "PATCH", url, {"spec": {"size": 3}, "status": {"ready": True}}, content_type=MERGE
    )
    assert patched["status"] == {"ready": False}
    assert patched["spec"]["size"] == 3
    put = await ok(backend, "PUT", url, {**patched, "status": {"ready": True}})
    assert put["status"] == {"ready": False}


async def test_status_writes_change_only_status(backend: Backend, widgets: Widgets) -> None:
    created = await ok(backend, "POST", widgets.path, widgets.widget())
    url = f"{widgets.path}/w1"
    written = await ok(
        backend,
        "PATCH",
        f"{url}/status",
        {
            "metadata": {"labels": {"sneaky": "yes"}, "finalizers": ["example.com/f"]},
            "spec": {"size": 9},
            "status": {"ready": True, "replicas": 2},
        },
        content_type=MERGE,
    )
    assert written["status"] == {"ready": True, "replicas": 2}
    assert written["spec"]["size"] == 1
    assert "labels" not in written["metadata"]
    assert "finalizers" not in written["metadata"]
    assert written["metadata"]["generation"] == 1
    stale = await req(backend, "PUT", f"{url}/status", {**created, "status": {"ready": False}})
    assert (stale.status, stale.body["reason"]) == (409, "Conflict")
    assert stale.body["message"].startswith("Operation cannot be fulfilled on widgets.")
    fresh = await ok(backend, "PUT", f"{url}/status", {**written, "status": {"ready": False}})
    assert fresh["status"] == {"ready": False}
    got = await ok(backend, "GET", f"{url}/status")
    assert got == fresh


async def test_deployment_status_keeps_spec(backend: Backend) -> None:
    path = f"/apis/apps/v1/namespaces/{backend.namespace}/deployments"
    await ok(backend, "POST", path, deployment())
    written = await ok(
        backend,
        "PATCH",
        f"{path}/web/status",
        {
            "spec": {"replicas": 5},
            "metadata": {"labels": {"x": "y"}},
            "status": {"replicas": 1, "readyReplicas": 1},
        },
        content_type=MERGE,
    )
    assert written["spec"]["replicas"] == 1
    assert written["status"]["replicas"] == 1
    assert "labels" not in written["metadata"]


async def test_scale_subresource(backend: Backend, widgets: Widgets) -> None:
    body = widgets.widget(replicas=2)
    created = await ok(backend, "POST", widgets.path, body)
    url = f"{widgets.path}/w1"
    await ok(
        backend,
        "PATCH",
        f"{url}/status",
        {"status": {"replicas": 1, "selector": "a=b"}},
        content_type=MERGE,
    )
    scale = await ok(backend, "GET", f"{url}/scale")
    assert (scale["kind"], scale["apiVersion"]) == ("Scale", "autoscaling/v1")
    assert scale["metadata"]["name"] == "w1"
    assert scale["metadata"]["uid"] == created["metadata"]["uid"]
    assert scale["spec"] == {"replicas": 2}
    assert scale["status"] == {"replicas": 1, "selector": "a=b"}
    scaled = await ok(
        backend, "PATCH", f"{url}/scale", {"spec": {"replicas": 4}}, content_type=MERGE
    )
    assert scaled["spec"] == {"replicas": 4}
    assert (await ok(backend, "GET", url))["spec"]["replicas"] == 4
    deployments = f"/apis/apps/v1/namespaces/{backend.namespace}/deployments"
    await ok(backend, "POST", deployments, deployment())
    dscale = await ok(backend, "GET", f"{deployments}/web/scale")
    assert dscale["spec"] == {"replicas": 1}
    assert dscale["status"]["selector"] == "app=web"
