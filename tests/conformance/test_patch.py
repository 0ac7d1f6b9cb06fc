"""Patch types: merge (RFC 7386), JSON (RFC 6902), strategic, apply (items 18, 21-24)."""

from __future__ import annotations

from typing import Any

from reconcile_kit.testing.backends import Backend

from .kube import APPLY, JSON_PATCH, MERGE, STRATEGIC, Widgets, ok, req, status_body
from .test_versions import deployment


def configmaps(backend: Backend) -> str:
    return f"/api/v1/namespaces/{backend.namespace}/configmaps"


async def test_merge_patch_nulls_delete_and_lists_are_replaced(
    backend: Backend, widgets: Widgets
) -> None:
    body = widgets.widget(extra={"keep": 1, "drop": 2, "list": [1, 2, 3]})
    body["metadata"]["labels"] = {"a": "1", "b": "2"}
    await ok(backend, "POST", widgets.path, body)
    patched = await ok(
        backend,
        "PATCH",
        f"{widgets.path}/w1",
        {
            "metadata": {"labels": {"b": None, "c": "3"}},
            "spec": {"extra": {"drop": None, "list": [9]}},
        },
        content_type=MERGE,
    )
    assert patched["metadata"]["labels"] == {"a": "1", "c": "3"}
    assert patched["spec"]["extra"] == {"keep": 1, "list": [9]}


async def test_patch_is_conditional_only_with_a_resource_version(backend: Backend) -> None:
    path = configmaps(backend)
    created = await ok(backend, "POST", path, {"metadata": {"name": "a"}})
    await ok(backend, "PATCH", f"{path}/a", {"data": {"x": "1"}}, content_type=MERGE)
    # No resourceVersion in the patch: applied to whatever is stored now.
    await ok(backend, "PATCH", f"{path}/a", {"data": {"y": "1"}}, content_type=MERGE)
    stale = await req(
        backend,
        "PATCH",
        f"{path}/a",
        {
            "metadata": {"resourceVersion": created["metadata"]["resourceVersion"]},
            "data": {"z": "1"},
        },
        content_type=MERGE,
    )
    assert (stale.status, stale.body["reason"]) == (409, "Conflict")
    assert stale.body["message"] == (
        'Operation cannot be fulfilled on configmaps "a": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )


async def test_json_patch(backend: Backend) -> None:
    path = configmaps(backend)
    created = await ok(backend, "POST", path, {"metadata": {"name": "a"}, "data": {"x": "1"}})
    url = f"{path}/a"
    rv = created["metadata"]["resourceVersion"]
    patched = await ok(
        backend,
        "PATCH",
        url,
        [
            {"op": "test", "path": "/metadata/resourceVersion", "value": rv},
            {"op": "add", "path": "/data/y", "value": "2"},
            {"op": "remove", "path": "/data/x"},
        ],
        content_type=JSON_PATCH,
    )
    assert patched["data"] == {"y": "2"}
    failed_test = await req(
        backend,
        "PATCH",
        url,
        [
            {"op": "test", "path": "/metadata/resourceVersion", "value": rv},
            {"op": "add", "path": "/data/z", "value": "3"},
        ],
        content_type=JSON_PATCH,
    )
    assert (failed_test.status, failed_test.body["reason"]) == (422, "Invalid")
    bad_path = await req(
        backend, "PATCH", url, [{"op": "remove", "path": "/data/nope"}], content_type=JSON_PATCH
    )
    assert (bad_path.status, bad_path.body["reason"]) == (422, "Invalid")
    undecodable = await req(backend, "PATCH", url, raw=b"{not json", content_type=JSON_PATCH)
    assert (undecodable.status, undecodable.body["reason"]) == (400, "BadRequest")
    assert (await ok(backend, "GET", url))["data"] == {"y": "2"}


async def test_strategic_merge_on_built_ins_only(backend: Backend, widgets: Widgets) -> None:
    path = f"/apis/apps/v1/namespaces/{backend.namespace}/deployments"
    body = deployment()
    body["spec"]["template"]["spec"]["containers"].append({"name": "b", "image": "busybox"})
    await ok(backend, "POST", path, body)
    patched = await ok(
        backend,
        "PATCH",
        f"{path}/web",
        {"spec": {"template": {"spec": {"containers": [{"name": "b", "image": "busybox:2"}]}}}},
        content_type=STRATEGIC,
    )
    images = [(c["name"], c["image"]) for c in patched["spec"]["template"]["spec"]["containers"]]
    assert images == [("a", "nginx:1"), ("b", "busybox:2")]  # merged by name
    removed = await ok(
        backend,
        "PATCH",
        f"{path}/web",
        {"spec": {"template": {"spec": {"containers": [{"name": "a", "$patch": "delete"}]}}}},
        content_type=STRATEGIC,
    )
    assert [c["name"] for c in removed["spec"]["template"]["spec"]["containers"]] == ["b"]
    await ok(backend, "POST", widgets.path, widgets.widget())
    refused = await req(
        backend, "PATCH", f"{widgets.path}/w1", {"spec": {"size": 2}}, content_type=STRATEGIC
    )
    assert refused.status == 415
    assert refused.body["reason"] == "UnsupportedMediaType"
    assert refused.body["message"] == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, "
        "application/apply-patch+yaml"
    )


async def test_unknown_patch_type(backend: Backend) -> None:
    path = configmaps(backend)
    await ok(backend, "POST", path, {"metadata": {"name": "a"}})
    reply = await req(backend, "PATCH", f"{path}/a", {"data": {}}, content_type="application/json")
    assert (reply.status, reply.body["reason"]) == (415, "UnsupportedMediaType")


async def test_server_side_apply(backend: Backend) -> None:
    url = f"{configmaps(backend)}/a"
    doc = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"x": "1"}}
    no_manager = await req(backend, "PATCH", url, doc, content_type=APPLY)
    assert (no_manager.status, no_manager.body["reason"]) == (422, "Invalid")
    created = await req(
        backend, "PATCH", url, doc, content_type=APPLY, params={"fieldManager": "one"}
    )
    assert created.status == 201
    assert created.body["data"] == {"x": "1"}
    other = {**doc, "data": {"x": "2"}}
    conflict = await req(
        backend, "PATCH", url, other, content_type=APPLY, params={"fieldManager": "two"}
    )
    assert (conflict.status, conflict.body) == (
        409,
        status_body(
            409,
            "Conflict",
            'Apply failed with 1 conflict: conflict with "one": .data.x',
            {
                "causes": [
                    {
                        "reason": "FieldManagerConflict",
                        "message": 'conflict with "one"',
                        "field": ".data.x",
                    }
                ]
            },
        ),
    )
    await ok(
        backend,
        "PATCH",
        url,
        {"data": {"y": "1"}},
        content_type=MERGE,
        params={"fieldManager": "three"},
    )
    both = {**doc, "data": {"x": "2", "y": "2"}}
    conflicts = await req(
        backend, "PATCH", url, both, content_type=APPLY, params={"fieldManager": "two"}
    )
    assert conflicts.status == 409
    assert conflicts.body["message"] == (
        'Apply failed with 2 conflicts: conflicts with "one":\n- .data.x\n'
        'conflicts with "three" using v1:\n- .data.y'
    )
    causes: list[dict[str, Any]] = conflicts.body["details"]["causes"]
    # kube-apiserver lists the causes in no fixed order
    assert sorted((c["message"], c["field"]) for c in causes) == [
        ('conflict with "one"', ".data.x"),
        ('conflict with "three" using v1', ".data.y"),
    ]
    forced = await req(
        backend,
        "PATCH",
        url,
        other,
        content_type=APPLY,
        params={"fieldManager": "two", "force": "true"},
    )
    assert (forced.status, forced.body["data"]) == (200, {"x": "2", "y": "1"})
