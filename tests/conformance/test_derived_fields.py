"""Fields kube-apiserver derives or defaults at a given moment of an object's life
(issue 28, point 3): the Node not-ready taint on create only, a Pod's ``podIPs`` from
``podIP``, a DaemonSet's template generation annotation, a TokenRequest's audiences,
what deleting a Namespace or a CRD sets, and the status writer of a new CRD.
"""

from __future__ import annotations

import asyncio
from typing import Any

from reconcile_kit.testing.backends import Backend

from .kube import MERGE, crd_document, install_crd, ok, req

NOT_READY = {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}
GENERATION = "deprecated.daemonset.template.generation"


async def test_the_not_ready_taint_is_added_on_create_only(backend: Backend) -> None:
    name = backend.unique("node")
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}
    created = await ok(backend, "POST", "/api/v1/nodes", node)
    try:
        assert created["spec"]["taints"] == [NOT_READY]
        node["metadata"]["labels"] = {"a": "b"}
        updated = await ok(backend, "PUT", f"/api/v1/nodes/{name}", node)
        assert "taints" not in updated["spec"]
        patched = await ok(
            backend,
            "PATCH",
            f"/api/v1/nodes/{name}",
            {"metadata": {"labels": {"c": "d"}}},
            content_type=MERGE,
        )
        assert "taints" not in patched["spec"]
    finally:
        await req(backend, "DELETE", f"/api/v1/nodes/{name}")


async def test_a_pod_ip_in_a_status_patch_becomes_pod_ips(backend: Backend) -> None:
    path = f"/api/v1/namespaces/{backend.namespace}/pods"
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "a", "image": "nginx"}]},
    }
    await ok(backend, "POST", path, pod)
    patched = await ok(
        backend, "PATCH", f"{path}/p/status", {"status": {"podIP": "10.0.0.5"}}, content_type=MERGE
    )
    assert (patched["status"]["podIP"], patched["status"]["podIPs"]) == (
        "10.0.0.5",
        [{"ip": "10.0.0.5"}],
    )
    patched = await ok(
        backend,
        "PATCH",
        f"{path}/p/status",
        {"status": {"podIP": None, "podIPs": [{"ip": "10.0.0.7"}]}},
        content_type=MERGE,
    )
    assert (patched["status"]["podIP"], patched["status"]["podIPs"]) == (
        "10.0.0.7",
        [{"ip": "10.0.0.7"}],
    )


def _daemonset(image: str) -> dict[str, Any]:
    labels = {"app": "d"}
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "d"},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "a", "image": image}]},
            },
        },
    }


async def test_a_daemonset_carries_its_template_generation(backend: Backend) -> None:
    path = f"/apis/apps/v1/namespaces/{backend.namespace}/daemonsets"
    created = await ok(backend, "POST", path, _daemonset("nginx:1"))
    assert created["metadata"]["annotations"] == {GENERATION: "1"}
    spec_only = await ok(
        backend, "PATCH", f"{path}/d", {"spec": {"minReadySeconds": 5}}, content_type=MERGE
    )
    assert (spec_only["metadata"]["generation"], spec_only["metadata"]["annotations"]) == (
        2,
        {GENERATION: "1"},
    )
    template = {"spec": {"template": {"spec": {"containers": [{"name": "a", "image": "nginx:2"}]}}}}
    changed = await ok(backend, "PATCH", f"{path}/d", template, content_type=MERGE)
    assert (changed["metadata"]["generation"], changed["metadata"]["annotations"]) == (
        3,
        {GENERATION: "2"},
    )
    put = {**changed, "metadata": {**changed["metadata"], "annotations": {}}}
    replaced = await ok(backend, "PUT", f"{path}/d", put)
    assert replaced["metadata"]["annotations"] == {GENERATION: "2"}


async def test_a_token_request_keeps_its_audiences(backend: Backend) -> None:
    path = f"/api/v1/namespaces/{backend.namespace}/serviceaccounts"
    await ok(
        backend,
        "POST",
        path,
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa"}},
    )
    body = {
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenRequest",
        "spec": {"audiences": ["aud-a", "aud-b"], "expirationSeconds": 3600},
    }
    answer = await ok(backend, "POST", f"{path}/sa/token", body)
    assert answer["spec"]["audiences"] == ["aud-a", "aud-b"]


async def test_deleting_a_namespace_sets_no_grace_period(backend: Backend) -> None:
    name = backend.unique("ns")
    await ok(
        backend,
        "POST",
        "/api/v1/namespaces",
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}},
    )
    deleted = await ok(backend, "DELETE", f"/api/v1/namespaces/{name}")
    assert deleted["metadata"]["deletionTimestamp"]
    assert "deletionGracePeriodSeconds" not in deleted["metadata"]
    assert deleted["status"] == {"phase": "Terminating"}


async def _status_writer(backend: Backend, name: str) -> dict[str, Any]:
    path = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}"
    for _ in range(100):
        crd = await ok(backend, "GET", path)
        writers = [m for m in crd["metadata"]["managedFields"] if m["manager"] == "kube-apiserver"]
        if writers:
            return dict(writers[0])
        await asyncio.sleep(0.05)  # the controllers' write: no event to wait for on real
    raise AssertionError(f"no status writer on {name}")


def _condition(kind: str) -> tuple[str, dict[str, Any]]:
    fields = {
        ".": {},
        **{f"f:{f}": {} for f in ("lastTransitionTime", "message", "reason", "status", "type")},
    }
    return f'k:{{"type":"{kind}"}}', fields


async def test_a_new_crd_has_its_status_writer_and_its_deletion_no_grace_period(
    backend: Backend,
) -> None:
    group = f"{backend.namespace}.derived.example.com"
    crd = crd_document(group)
    await install_crd(backend, crd)
    name = crd["metadata"]["name"]
    writer = await _status_writer(backend, name)
    del writer["time"]
    path = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}"
    accepted = sorted((await ok(backend, "GET", path))["status"]["acceptedNames"])
    assert writer == {
        "manager": "kube-apiserver",
        "operation": "Update",
        "apiVersion": "apiextensions.k8s.io/v1",
        "fieldsType": "FieldsV1",
        "fieldsV1": {
            "f:status": {
                "f:acceptedNames": {f"f:{k}": {} for k in accepted},
                "f:conditions": dict(_condition(t) for t in ("Established", "NamesAccepted")),
            }
        },
        "subresource": "status",
    }
    deleted = await ok(
        backend, "DELETE", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}"
    )
    assert "deletionGracePeriodSeconds" not in deleted["metadata"]
    assert deleted["metadata"]["generation"] == 1
    terminating = [c for c in deleted["status"]["conditions"] if c["type"] == "Terminating"]
    assert [(c["reason"], c["message"]) for c in terminating] == [
        (
            "InstanceDeletionPending",
            "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
        )
    ]
