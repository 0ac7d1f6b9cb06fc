"""Server-side apply of a value whose type its schema refuses (issue 28): kube-apiserver
1.32.5 answers 500 "failed to create typed patch object", with structured-merge-diff's
typed validation message (``expected string, got &value.valueUnstructured{Value:2}``);
values the schema leaves untyped (quantities, int-or-string) are applied.

One refused field per request: with several, kube-apiserver lists them in Go's random
map order.
"""

from __future__ import annotations

from typing import Any

import pytest

from reconcile_kit.testing.backends import Backend

from .kube import APPLY, install_crd, ok, req, schema_crd

GADGET_SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "s": {"type": "string"},
                "n": {"type": "integer"},
                "b": {"type": "boolean"},
                "ios": {"x-kubernetes-int-or-string": True},
                "m": {"type": "object", "additionalProperties": {"type": "string"}},
                "l": {"type": "array", "items": {"type": "string"}},
            },
        }
    },
}


async def apply(backend: Backend, path: str, body: Any) -> Any:
    return await req(backend, "PATCH", path, body, content_type=APPLY, params={"fieldManager": "m"})


def refused(where: str, problem: str) -> str:
    return f"failed to create typed patch object ({where}): {problem}"


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ({"a": 2}, ".data.a: expected string, got &value.valueUnstructured{Value:2}"),
        ({"a": 1e21}, ".data.a: expected string, got &value.valueUnstructured{Value:1e+21}"),
        ({"a": 2.5}, ".data.a: expected string, got &value.valueUnstructured{Value:2.5}"),
        ({"a": True}, ".data.a: expected string, got &value.valueUnstructured{Value:true}"),
        (
            {"a": {"k": [1, None, "s"]}},
            '.data.a: expected string, got &value.valueUnstructured{Value:map[string]interface {}{"k":[]interface {}{1, interface {}(nil), "s"}}}',  # noqa: E501
        ),
        ("x", ".data: expected map, got &{x}"),
        (["x", 1], ".data: expected map, got &{[x 1]}"),
    ],
)
async def test_a_configmap_value_of_another_type(backend: Backend, data: Any, problem: str) -> None:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c1"}, "data": data}
    reply = await apply(backend, f"/api/v1/namespaces/{backend.namespace}/configmaps/c1", body)
    assert (reply.status, reply.body.get("message")) == (
        500,
        refused("/c1; /v1, Kind=ConfigMap", problem),
    )
    missing = await req(backend, "GET", f"/api/v1/namespaces/{backend.namespace}/configmaps/c1")
    assert missing.status == 404


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"replicas": "3"}, ".spec.replicas: expected numeric (int or float), got string"),
        ({"replicas": [3]}, ".spec.replicas: expected numeric (int or float), got []interface {}"),
        ({"paused": "no"}, ".spec.paused: expected boolean, got &{no}"),
        ({"paused": {"a": 1}}, ".spec.paused: expected boolean, got &{map[a:1]}"),
        (
            {"template": {"spec": {"containers": {"name": "c"}}}},
            ".spec.template.spec.containers: expected list, got &{map[name:c]}",
        ),
    ],
)
async def test_a_deployment_value_of_another_type(
    backend: Backend, change: dict[str, Any], problem: str
) -> None:
    spec = {
        "selector": {"matchLabels": {"a": "b"}},
        "template": {
            "metadata": {"labels": {"a": "b"}},
            "spec": {"containers": [{"name": "c", "image": "i"}]},
        },
        **change,
    }
    body = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d1"}}
    path = f"/apis/apps/v1/namespaces/{backend.namespace}/deployments/d1"
    reply = await apply(backend, path, {**body, "spec": spec})
    assert (reply.status, reply.body.get("message")) == (
        500,
        refused("/d1; apps/v1, Kind=Deployment", problem),
    )


async def test_untyped_scalars_take_any_scalar(backend: Backend) -> None:
    """A Quantity and an IntOrString take numbers as strings."""
    container = {
        "name": "c",
        "image": "i",
        "resources": {"limits": {"cpu": 1, "memory": "1Gi"}},
        "ports": [{"containerPort": 80}],
    }
    body = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d2"},
        "spec": {
            "selector": {"matchLabels": {"a": "b"}},
            "strategy": {"rollingUpdate": {"maxSurge": 1, "maxUnavailable": "10%"}},
            "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [container]}},
        },
    }
    path = f"/apis/apps/v1/namespaces/{backend.namespace}/deployments/d2"
    reply = await apply(backend, path, body)
    assert reply.status == 201, reply.body
    limits = reply.body["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
    assert limits == {"cpu": "1", "memory": "1Gi"}


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ({"s": 1}, ".spec.s: expected string, got &value.valueUnstructured{Value:1}"),
        ({"n": "x"}, ".spec.n: expected numeric (int or float), got string"),
        ({"b": "yes"}, ".spec.b: expected boolean, got &{yes}"),
        ({"l": ["a", 3]}, ".spec.l[1]: expected string, got &value.valueUnstructured{Value:3}"),
        ({"m": {"k": 2}}, ".spec.m.k: expected string, got &value.valueUnstructured{Value:2}"),
        (
            {"ios": [1], "s": False},
            ".spec.s: expected string, got &value.valueUnstructured{Value:false}",
        ),
    ],
)
async def test_a_custom_resource_value_of_another_type(
    backend: Backend, spec: dict[str, Any], problem: str
) -> None:
    group = f"{backend.namespace}.types.example.com"
    await install_crd(backend, schema_crd(group, "Gadget", GADGET_SCHEMA))
    try:
        body = {"apiVersion": f"{group}/v1", "kind": "Gadget", "metadata": {"name": "g1"}}
        path = f"/apis/{group}/v1/namespaces/{backend.namespace}/gadgets/g1"
        reply = await apply(backend, path, {**body, "spec": spec})
        assert (reply.status, reply.body.get("message")) == (
            500,
            refused(f"/g1; {group}/v1, Kind=Gadget", problem),
        )
    finally:
        await ok(
            backend,
            "DELETE",
            f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.{group}",
        )
