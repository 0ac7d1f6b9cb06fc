"""Resource quantities are stored in their canonical form, as kube-apiserver stores them
(apimachinery's resource.Quantity): ``1000m`` reads back as ``1``, ``1.5Gi`` as ``1536Mi``
(issue 15: a test comparing what it wrote with what it reads must see the same on both)."""

from __future__ import annotations

from typing import Any

from reconcile_kit.meta.time import now_time
from reconcile_kit.testing import eventually
from reconcile_kit.testing.backends import Backend

from .kube import APPLY, STRATEGIC, ok, req

CPU = [
    "1000m",
    "1500m",
    "0.5",
    "1000",
    "1500",
    "1e3",
    "12e4",
    "1000e-3",
    "0.1",
    "1n",
    "0.0000000001",
    "+5",
    "5.",
    ".5",
    1,
    0.25,
    "0",
    "2",
    "1.0",
    "3000000000",
    "250m",
]
MEMORY = [
    "1.5Gi",
    "2048Ki",
    "1000Ki",
    "0.5Ki",
    "100Mi",
    "128974848",
    "129e6",
    "129M",
    "1024",
    "1025Ki",
    "0Gi",
    "1E",
    "64Mi",
]


def pod(name: str, requests: list[dict[str, Any]]) -> dict[str, Any]:
    containers = [
        {"name": f"c{i}", "image": "pause", "resources": {"requests": r}}
        for i, r in enumerate(requests)
    ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": containers},
    }


async def test_quantities_are_stored_canonical(backend: Backend) -> None:
    path = f"/api/v1/namespaces/{backend.namespace}/pods"
    requests = [{"cpu": value} for value in CPU] + [{"memory": value} for value in MEMORY]
    created = await ok(backend, "POST", path, pod("q", requests))
    stored = [c["resources"]["requests"] for c in created["spec"]["containers"]]
    # kept as written when ParseQuantity's fast path finds it canonical ("+5", "5."); a
    # ResourceList value rounded up to milli units ("1n": core/v1 SetDefaults_ResourceList)
    cpu = [
        "1",
        "1500m",
        "500m",
        "1k",
        "1500",
        "1e3",
        "120e3",
        "1",
        "100m",
        "1m",
        "1m",
        "+5",
        "5.",
        "500m",
        "1",
        "250m",
        "0",
        "2",
        "1",
        "3G",
        "250m",
    ]
    memory = [
        "1536Mi",
        "2Mi",
        "1000Ki",
        "512",
        "100Mi",
        "128974848",
        "129e6",
        "129M",
        "1024",
        "1025Ki",
        "0",
        "1E",
        "64Mi",
    ]
    assert stored == [{"cpu": v} for v in cpu] + [{"memory": v} for v in memory]
    again = await ok(backend, "GET", f"{path}/q")
    assert again["spec"]["containers"] == created["spec"]["containers"]


def deployment(name: str, memory: Any) -> dict[str, Any]:
    container = {"name": "c", "image": "pause", "resources": {"requests": {"memory": memory}}}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [container]},
            },
        },
    }


def requests_of(obj: dict[str, Any]) -> Any:
    return obj["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]


async def test_patched_quantities_and_invalid_ones(backend: Backend) -> None:
    path = f"/apis/apps/v1/namespaces/{backend.namespace}/deployments"
    created = await ok(backend, "POST", path, deployment("web", "1024Mi"))
    assert requests_of(created) == {"memory": "1Gi"}
    containers = [{"name": "c", "resources": {"requests": {"memory": "2048Mi"}}}]
    patch = {"spec": {"template": {"spec": {"containers": containers}}}}
    patched = await ok(backend, "PATCH", f"{path}/web", patch, content_type=STRATEGIC)
    assert requests_of(patched) == {"memory": "2Gi"}
    refused = await req(backend, "POST", path, deployment("bad", "1x"))
    assert (refused.status, refused.body["reason"]) == (400, "BadRequest"), refused.body
    assert refused.body["message"] == (
        'Deployment in version "v1" cannot be handled as a Deployment: quantities must match '
        "the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )
    containers[0]["resources"]["requests"]["memory"] = "2e"
    refused_patch = await req(backend, "PATCH", f"{path}/web", patch, content_type=STRATEGIC)
    assert refused_patch.status == 422, refused_patch.body
    value = (
        '"map[spec:map[template:map[spec:map[containers:[map[name:c resources:map[requests:'
        'map[memory:2e]]]]]]]]"'
    )
    why = f"Invalid value: {value}: unable to parse quantity's suffix"
    assert refused_patch.body["message"] == f' "" is invalid: patch: {why}'
    assert refused_patch.body["details"] == {
        "causes": [{"reason": "FieldValueInvalid", "message": why, "field": "patch"}]
    }


async def test_an_apply_that_differs_in_form_only_is_a_no_op(backend: Backend) -> None:
    """An apply of ``1024Mi`` over the stored ``1Gi`` in a later second: kube-apiserver's
    field manager times it (the merged object differs as text), then finds the object
    unchanged but for that time and keeps the old one (IgnoreManagedFieldsTimestamps-
    Transformer): the same resourceVersion and managedFields."""
    path = f"/apis/apps/v1/namespaces/{backend.namespace}/deployments/form"
    params = {"fieldManager": "former"}
    body = deployment("form", "1024Mi")
    first = await ok(backend, "PATCH", path, body, content_type=APPLY, params=params)
    written = [e["time"] for e in first["metadata"]["managedFields"]]
    await eventually(lambda: now_time() not in written, 5.0, what="the clock's next second")
    again = await ok(backend, "PATCH", path, body, content_type=APPLY, params=params)
    assert again["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    assert again["metadata"]["managedFields"] == first["metadata"]["managedFields"]
    # a real change is timed anew
    changed = await ok(
        backend, "PATCH", path, deployment("form", "2Gi"), content_type=APPLY, params=params
    )
    assert changed["metadata"]["resourceVersion"] != first["metadata"]["resourceVersion"]
    mine = [e for e in changed["metadata"]["managedFields"] if e["manager"] == "former"]
    assert [e["time"] for e in mine] != written[:1] and requests_of(changed) == {"memory": "2Gi"}
