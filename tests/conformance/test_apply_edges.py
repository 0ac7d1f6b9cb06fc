"""Server-side apply and patch options at their edges (issue 28, point 7), as
kube-apiserver 1.32.5 answers them: a missing object's /status, preconditions in the
applied body, the PatchOptions validation, the applied object's type and schema.
"""

from __future__ import annotations

from typing import Any

import pytest

from reconcile_kit.testing.backends import Backend

from .kube import APPLY, MERGE, Widgets, ok, req, status_body

LONG_MANAGER = "m" * 129


def configmap(name: str, **data: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


def deployment(name: str, labels: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "app", "image": "nginx"}]},
            },
        },
    }


async def apply(backend: Backend, path: str, body: Any, manager: str = "m", **params: str) -> Any:
    return await req(
        backend, "PATCH", path, body, content_type=APPLY, params={"fieldManager": manager, **params}
    )


def cm_path(backend: Backend, name: str) -> str:
    return f"/api/v1/namespaces/{backend.namespace}/configmaps/{name}"


def options_invalid(causes: list[dict[str, str]], summary: str) -> dict[str, Any]:
    return status_body(
        422,
        "Invalid",
        f'PatchOptions.meta.k8s.io "" is invalid: {summary}',
        {"group": "meta.k8s.io", "kind": "PatchOptions", "causes": causes},
    )


async def test_apply_to_the_status_of_a_missing_object_is_not_found(backend: Backend) -> None:
    path = f"/apis/apps/v1/namespaces/{backend.namespace}/deployments/nope/status"
    body = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "nope"}}
    body["status"] = {"replicas": 1}
    reply = await apply(backend, path, body)
    assert reply.status == 404
    assert reply.body == status_body(
        404,
        "NotFound",
        'deployments.apps "nope" not found',
        {"name": "nope", "group": "apps", "kind": "deployments"},
    )


async def test_apply_with_a_stale_resource_version_conflicts(backend: Backend) -> None:
    created = await apply(backend, cm_path(backend, "c1"), configmap("c1", a="1"))
    assert created.status == 201
    stale = configmap("c1", a="2")
    stale["metadata"]["resourceVersion"] = "1"
    reply = await apply(backend, cm_path(backend, "c1"), stale)
    assert reply.status == 409
    assert reply.body["reason"] == "Conflict"
    assert reply.body["message"] == (
        'Operation cannot be fulfilled on configmaps "c1": the object has been modified;'
        " please apply your changes to the latest version and try again"
    )


@pytest.mark.parametrize("content_type", [APPLY, MERGE])
async def test_a_patch_changing_the_uid_is_invalid(backend: Backend, content_type: str) -> None:
    await ok(backend, "POST", f"/api/v1/namespaces/{backend.namespace}/configmaps", configmap("c1"))
    uid = "6f0c2f55-0000-0000-0000-000000000000"
    body = configmap("c1", a="2")
    body["metadata"]["uid"] = uid
    params = {"fieldManager": "m"}
    reply = await req(
        backend, "PATCH", cm_path(backend, "c1"), body, content_type=content_type, params=params
    )
    cause = {
        "reason": "FieldValueInvalid",
        "message": f'Invalid value: "{uid}": field is immutable',
        "field": "metadata.uid",
    }
    assert reply.body == status_body(
        422,
        "Invalid",
        f'ConfigMap "c1" is invalid: metadata.uid: Invalid value: "{uid}": field is immutable',
        {"name": "c1", "kind": "ConfigMap", "causes": [cause, cause]},
    )


@pytest.mark.parametrize("force", ["true", "false"])
async def test_force_on_a_merge_patch_is_invalid(backend: Backend, force: str) -> None:
    await ok(backend, "POST", f"/api/v1/namespaces/{backend.namespace}/configmaps", configmap("c1"))
    reply = await req(
        backend,
        "PATCH",
        cm_path(backend, "c1"),
        {"data": {"a": "3"}},
        content_type=MERGE,
        params={"force": force},
    )
    message = "Forbidden: may not be specified for non-apply patch"
    cause = {"reason": "FieldValueForbidden", "message": message, "field": "force"}
    assert reply.body == options_invalid([cause], f"force: {message}")


async def test_patch_options_are_validated_together(backend: Backend) -> None:
    manager = LONG_MANAGER + "\a"
    reply = await req(
        backend,
        "PATCH",
        cm_path(backend, "c1"),
        {"data": {"a": "3"}},
        content_type=MERGE,
        params={"force": "false", "fieldManager": manager, "dryRun": "x"},
    )
    shown = f'"{LONG_MANAGER}\\a"'
    texts = [
        ("FieldValueForbidden", "force", "Forbidden: may not be specified for non-apply patch"),
        ("FieldValueTooLong", "fieldManager", "Too long: may not be more than 128 bytes"),
        (
            "FieldValueInvalid",
            "fieldManager",
            f"Invalid value: {shown}: invalid character U+0007 (at position 129)",
        ),
        (
            "FieldValueNotSupported",
            "dryRun",
            'Unsupported value: []string{"x"}: supported values: "All"',
        ),
    ]
    causes = [{"reason": r, "message": m, "field": f} for r, f, m in texts]
    summary = "[" + ", ".join(f"{f}: {m}" for _, f, m in texts) + "]"
    assert reply.body == options_invalid(causes, summary)


async def test_a_field_manager_over_128_bytes_is_invalid(backend: Backend) -> None:
    reply = await apply(backend, cm_path(backend, "c1"), configmap("c1"), manager=LONG_MANAGER)
    message = "Too long: may not be more than 128 bytes"
    cause = {"reason": "FieldValueTooLong", "message": message, "field": "fieldManager"}
    assert reply.body == options_invalid([cause], f"fieldManager: {message}")


async def test_create_options_refuse_an_unprintable_field_manager(backend: Backend) -> None:
    reply = await req(
        backend,
        "POST",
        f"/api/v1/namespaces/{backend.namespace}/configmaps",
        configmap("c1"),
        params={"fieldManager": "a\tb"},
    )
    message = 'Invalid value: "a\\tb": invalid character U+0009 (at position 1)'
    cause = {"reason": "FieldValueInvalid", "message": message, "field": "fieldManager"}
    assert reply.body == status_body(
        422,
        "Invalid",
        f'CreateOptions.meta.k8s.io "" is invalid: fieldManager: {message}',
        {"group": "meta.k8s.io", "kind": "CreateOptions", "causes": [cause]},
    )


@pytest.mark.parametrize(
    ("type_meta", "shown"),
    [
        ({}, "/, Kind="),
        ({"apiVersion": "v1", "kind": "Secret"}, "/v1, Kind=Secret"),
        ({"apiVersion": "v2", "kind": "ConfigMap"}, "/v2, Kind=ConfigMap"),
    ],
)
async def test_an_applied_object_of_another_type_is_a_bad_request(
    backend: Backend, type_meta: dict[str, str], shown: str
) -> None:
    for exists in (False, True):
        body = {**type_meta, "metadata": {"name": "c1"}, "data": {"a": "1"}}
        reply = await apply(backend, cm_path(backend, "c1"), body)
        assert reply.body == status_body(400, "BadRequest", f"invalid object type: {shown}", None)
        if not exists:
            await ok(
                backend,
                "POST",
                f"/api/v1/namespaces/{backend.namespace}/configmaps",
                configmap("c1"),
            )


async def test_an_applied_null_string_is_stored_empty(backend: Backend) -> None:
    body = configmap("c4", x=None, y="1")
    body["metadata"]["labels"] = {"a": None}
    reply = await apply(backend, cm_path(backend, "c4"), body)
    assert reply.status == 201, reply.body
    assert reply.body["data"] == {"x": "", "y": "1"}
    assert reply.body["metadata"]["labels"] == {"a": ""}
    created = await ok(
        backend,
        "POST",
        f"/api/v1/namespaces/{backend.namespace}/configmaps",
        configmap("c5", z=None),
    )
    assert created["data"] == {"z": ""}


@pytest.mark.parametrize("exists", [False, True])
async def test_an_applied_unknown_field_is_a_server_error(backend: Backend, exists: bool) -> None:
    if exists:
        await ok(
            backend, "POST", f"/api/v1/namespaces/{backend.namespace}/configmaps", configmap("c1")
        )
    body = {**configmap("c1", a="2"), "bogus": 1}
    reply = await apply(backend, cm_path(backend, "c1"), body)
    expected = status_body(
        500,
        "",
        "failed to create typed patch object (/c1; /v1, Kind=ConfigMap):"
        " .bogus: field not declared in schema",
        None,
    )
    del expected["reason"]  # an internal error without a reason
    assert reply.body == expected


async def test_an_applied_unknown_nested_field_names_its_path(backend: Backend) -> None:
    path = f"/apis/apps/v1/namespaces/{backend.namespace}/deployments/d1"
    body = deployment("d1", {"app": "x"})
    body["metadata"]["namespace"] = backend.namespace
    container = body["spec"]["template"]["spec"]["containers"][0]
    container["ports"] = [{"containerPort": 80, "bogus": 1}]
    reply = await apply(backend, path, body)
    assert reply.status == 500
    assert reply.body["message"] == (
        f"failed to create typed patch object ({backend.namespace}/d1; apps/v1, Kind=Deployment):"
        ' .spec.template.spec.containers[name="app"].ports[containerPort=80,protocol="TCP"].bogus:'
        " field not declared in schema"
    )


async def test_an_applied_unknown_field_of_a_custom_resource(
    backend: Backend, widgets: Widgets
) -> None:
    body = {**widgets.widget("w1"), "bogus": 1}
    reply = await apply(backend, f"{widgets.path}/w1", body)
    assert reply.status == 500
    assert reply.body["message"] == (
        f"failed to create typed patch object (/w1; {widgets.group}/v1, Kind=Widget):"
        " .bogus: field not declared in schema"
    )


async def test_force_applying_another_deployment_selector_is_invalid(backend: Backend) -> None:
    path = f"/apis/apps/v1/namespaces/{backend.namespace}/deployments/d1"
    created = await apply(backend, path, deployment("d1", {"app": "x"}))
    assert created.status == 201, created.body
    reply = await apply(backend, path, deployment("d1", {"app": "y"}), force="true")
    assert reply.status == 422, reply.body
    assert reply.body["message"] == (
        'Deployment.apps "d1" is invalid: spec.selector: Invalid value:'
        ' v1.LabelSelector{MatchLabels:map[string]string{"app":"y"}, MatchExpressions:[]v1.'
        "LabelSelectorRequirement(nil)}: field is immutable"
    )
