"""resourceVersion and generation rules (k8s-semantics.md items 9, 10, 19)."""

from __future__ import annotations

from typing import Any

from reconcile_kit.testing.backends import Backend

from ..crds import deployment
from .kube import MERGE, Widgets, ok, req, status_body


def rv(obj: dict[str, Any]) -> int:
    return int(obj["metadata"]["resourceVersion"])


async def test_one_increasing_counter_across_kinds(backend: Backend, widgets: Widgets) -> None:
    ns = backend.namespace
    seen = [
        rv(
            await ok(
                backend, "POST", f"/api/v1/namespaces/{ns}/configmaps", {"metadata": {"name": "a"}}
            )
        )
    ]
    seen.append(rv(await ok(backend, "POST", widgets.path, widgets.widget())))
    seen.append(
        rv(
            await ok(
                backend, "POST", f"/api/v1/namespaces/{ns}/secrets", {"metadata": {"name": "s"}}
            )
        )
    )
    seen.append(
        rv(
            await ok(
                backend,
                "PATCH",
                f"/api/v1/namespaces/{ns}/configmaps/a",
                {"data": {"k": "v"}},
                content_type=MERGE,
            )
        )
    )
    assert seen == sorted(seen)
    assert len(set(seen)) == len(seen)
    listing = await ok(backend, "GET", f"/api/v1/namespaces/{ns}/configmaps")
    assert int(listing["metadata"]["resourceVersion"]) >= seen[-1]


async def test_a_write_that_changes_nothing_is_a_no_op(backend: Backend, widgets: Widgets) -> None:
    path = f"/api/v1/namespaces/{backend.namespace}/configmaps"
    created = await ok(
        backend, "POST", path, {"metadata": {"name": "a", "labels": {"x": "1"}}, "data": {"k": "v"}}
    )
    same_put = await ok(backend, "PUT", f"{path}/a", created)
    assert rv(same_put) == rv(created)
    same_patch = await ok(backend, "PATCH", f"{path}/a", {"data": {"k": "v"}}, content_type=MERGE)
    assert rv(same_patch) == rv(created)
    widget = await ok(backend, "POST", widgets.path, widgets.widget())
    assert rv(await ok(backend, "PUT", f"{widgets.path}/w1", widget)) == rv(widget)
    status = {"status": {"ready": True}}
    first = await ok(backend, "PATCH", f"{widgets.path}/w1/status", status, content_type=MERGE)
    assert rv(first) > rv(widget)
    assert rv(
        await ok(backend, "PATCH", f"{widgets.path}/w1/status", status, content_type=MERGE)
    ) == rv(first)


async def test_custom_resource_generation(backend: Backend, widgets: Widgets) -> None:
    body = widgets.widget()
    body["metadata"]["generation"] = 7
    created = await ok(backend, "POST", widgets.path, body)
    assert created["metadata"]["generation"] == 1
    url = f"{widgets.path}/w1"
    labelled = await ok(
        backend, "PATCH", url, {"metadata": {"labels": {"a": "b"}}}, content_type=MERGE
    )
    assert labelled["metadata"]["generation"] == 1
    annotated = await ok(
        backend, "PATCH", url, {"metadata": {"annotations": {"a": "b"}}}, content_type=MERGE
    )
    assert annotated["metadata"]["generation"] == 1
    status = await ok(
        backend, "PATCH", f"{url}/status", {"status": {"ready": True}}, content_type=MERGE
    )
    assert status["metadata"]["generation"] == 1
    spec = await ok(backend, "PATCH", url, {"spec": {"size": 2}}, content_type=MERGE)
    assert spec["metadata"]["generation"] == 2
    forged = await ok(backend, "PATCH", url, {"metadata": {"generation": 40}}, content_type=MERGE)
    assert forged["metadata"]["generation"] == 2


async def test_status_is_spec_like_without_the_subresource(
    backend: Backend, plain_widgets: Widgets
) -> None:
    await ok(backend, "POST", plain_widgets.path, plain_widgets.widget())
    url = f"{plain_widgets.path}/w1"
    changed = await ok(backend, "PATCH", url, {"status": {"ready": True}}, content_type=MERGE)
    assert changed["status"] == {"ready": True}
    assert changed["metadata"]["generation"] == 2
    missing = await req(
        backend, "PATCH", f"{url}/status", {"status": {"ready": False}}, content_type=MERGE
    )
    # apiextensions-apiserver answers for an unserved subresource as for a missing object.
    assert (missing.status, missing.body) == (
        404,
        status_body(
            404,
            "NotFound",
            f'widgets.{plain_widgets.group} "w1" not found',
            {"name": "w1", "group": plain_widgets.group, "kind": "widgets"},
        ),
    )


async def test_deployment_generation(backend: Backend) -> None:
    path = f"/apis/apps/v1/namespaces/{backend.namespace}/deployments"
    created = await ok(backend, "POST", path, deployment())
    assert created["metadata"]["generation"] == 1
    url = f"{path}/web"
    labelled = await ok(
        backend, "PATCH", url, {"metadata": {"labels": {"a": "b"}}}, content_type=MERGE
    )
    assert labelled["metadata"]["generation"] == 1
    annotated = await ok(
        backend, "PATCH", url, {"metadata": {"annotations": {"a": "b"}}}, content_type=MERGE
    )
    assert annotated["metadata"]["generation"] == 2
    scaled = await ok(backend, "PATCH", url, {"spec": {"replicas": 3}}, content_type=MERGE)
    assert scaled["metadata"]["generation"] == 3
    status = await ok(
        backend, "PATCH", f"{url}/status", {"status": {"replicas": 3}}, content_type=MERGE
    )
    assert status["metadata"]["generation"] == 3


async def test_kinds_without_generation(backend: Backend) -> None:
    lease = await ok(
        backend,
        "POST",
        f"/apis/coordination.k8s.io/v1/namespaces/{backend.namespace}/leases",
        {"metadata": {"name": "l"}, "spec": {"holderIdentity": "a"}},
    )
    assert "generation" not in lease["metadata"]
    updated = await ok(
        backend,
        "PATCH",
        f"/apis/coordination.k8s.io/v1/namespaces/{backend.namespace}/leases/l",
        {"spec": {"holderIdentity": "b"}},
        content_type=MERGE,
    )
    assert "generation" not in updated["metadata"]
