"""Discovery of the kinds kube-apiserver 1.32.5 serves beyond the toolkit's usual ones
(issue 28, point 5): their groups, in kube-apiserver's order, and their APIResource
entries as read off the real server; and that they are served (CRUD, the bindings
subresource of pods).
"""

from __future__ import annotations

from typing import Any

import pytest

from reconcile_kit.testing.backends import Backend

from .kube import ok, req

EXPECTED: dict[str, list[dict[str, Any]]] = {
    "v1": [
        {
            "name": "bindings",
            "singularName": "binding",
            "namespaced": True,
            "kind": "Binding",
            "verbs": ["create"],
        },
        {
            "name": "componentstatuses",
            "singularName": "componentstatus",
            "namespaced": False,
            "kind": "ComponentStatus",
            "verbs": ["get", "list"],
            "shortNames": ["cs"],
        },
        {
            "name": "limitranges",
            "singularName": "limitrange",
            "namespaced": True,
            "kind": "LimitRange",
            "verbs": [
                "create",
                "delete",
                "deletecollection",
                "get",
                "list",
                "patch",
                "update",
                "watch",
            ],
            "shortNames": ["limits"],
        },
        {
            "name": "podtemplates",
            "singularName": "podtemplate",
            "namespaced": True,
            "kind": "PodTemplate",
            "verbs": [
                "create",
                "delete",
                "deletecollection",
                "get",
                "list",
                "patch",
                "update",
                "watch",
            ],
        },
        {
            "name": "replicationcontrollers",
            "singularName": "replicationcontroller",
            "namespaced": True,
            "kind": "ReplicationController",
            "verbs": [
                "create",
                "delete",
                "deletecollection",
                "get",
                "list",
                "patch",
                "update",
                "watch",
            ],
            "shortNames": ["rc"],
            "categories": ["all"],
        },
        {
            "name": "replicationcontrollers/scale",
            "singularName": "",
            "namespaced": True,
            "group": "autoscaling",
            "version": "v1",
            "kind": "Scale",
            "verbs": ["get", "patch", "update"],
        },
        {
            "name": "replicationcontrollers/status",
            "singularName": "",
            "namespaced": True,
            "kind": "ReplicationController",
            "verbs": ["get", "patch", "update"],
        },
        {
            "name": "resourcequotas",
            "singularName": "resourcequota",
            "namespaced": True,
            "kind": "ResourceQuota",
            "verbs": [
                "create",
                "delete",
                "deletecollection",
                "get",
                "list",
                "patch",
                "update",
                "watch",
            ],
            "shortNames": ["quota"],
        },
        {
            "name": "resourcequotas/status",
            "singularName": "",
            "namespaced": True,
            "kind": "ResourceQuota",
            "verbs": ["get", "patch", "update"],
        },
        {
            "name": "serviceaccounts/token",
            "singularName": "",
            "namespaced": True,
            "group": "authentication.k8s.io",
            "version": "v1",
            "kind": "TokenRequest",
            "verbs": ["create"],
        },
    ],
    "apiregistration.k8s.io/v1": [
        {
            "name": "apiservices",
            "singularName": "apiservice",
            "namespaced": False,
            "kind": "APIService",
            "verbs": [
                "create",
                "delete",
                "deletecollection",
                "get",
                "list",
                "patch",
                "update",
                "watch",
            ],
            "categories": ["api-extensions"],
        },
        {
            "name": "apiservices/status",
            "singularName": "",
            "namespaced": False,
            "kind": "APIService",
            "verbs": ["get", "patch", "update"],
        },
    ],
    "storage.k8s.io/v1": [
        {
            "name": "csidrivers",
            "singularName": "csidriver",
            "namespaced": False,
            "kind": "CSIDriver",
            "verbs": [
                "create",
                "delete",
                "deletecollection",
                "get",
                "list",
                "patch",
                "update",
                "watch",
            ],
        },
        {
            "name": "csinodes",
            "singularName": "csinode",
            "namespaced": False,
            "kind": "CSINode",
            "verbs": [
                "create",
                "delete",
                "deletecollection",
                "get",
                "list",
                "patch",
                "update",
                "watch",
            ],
        },
        {
            "name": "volumeattachments",
            "singularName": "volumeattachment",
            "namespaced": False,
            "kind": "VolumeAttachment",
            "verbs": [
                "create",
                "delete",
                "deletecollection",
                "get",
                "list",
                "patch",
                "update",
                "watch",
            ],
        },
        {
            "name": "volumeattachments/status",
            "singularName": "",
            "namespaced": False,
            "kind": "VolumeAttachment",
            "verbs": ["get", "patch", "update"],
        },
    ],
    "admissionregistration.k8s.io/v1": [
        {
            "name": "validatingadmissionpolicies",
            "singularName": "validatingadmissionpolicy",
            "namespaced": False,
            "kind": "ValidatingAdmissionPolicy",
            "verbs": [
                "create",
                "delete",
                "deletecollection",
                "get",
                "list",
                "patch",
                "update",
                "watch",
            ],
            "categories": ["api-extensions"],
        },
        {
            "name": "validatingadmissionpolicies/status",
            "singularName": "",
            "namespaced": False,
            "kind": "ValidatingAdmissionPolicy",
            "verbs": ["get", "patch", "update"],
        },
        {
            "name": "validatingadmissionpolicybindings",
            "singularName": "validatingadmissionpolicybinding",
            "namespaced": False,
            "kind": "ValidatingAdmissionPolicyBinding",
            "verbs": [
                "create",
                "delete",
                "deletecollection",
                "get",
                "list",
                "patch",
                "update",
                "watch",
            ],
            "categories": ["api-extensions"],
        },
    ],
    "node.k8s.io/v1": [
        {
            "name": "runtimeclasses",
            "singularName": "runtimeclass",
            "namespaced": False,
            "kind": "RuntimeClass",
            "verbs": [
                "create",
                "delete",
                "deletecollection",
                "get",
                "list",
                "patch",
                "update",
                "watch",
            ],
        },
    ],
    "flowcontrol.apiserver.k8s.io/v1": [
        {
            "name": "flowschemas",
            "singularName": "flowschema",
            "namespaced": False,
            "kind": "FlowSchema",
            "verbs": [
                "create",
                "delete",
                "deletecollection",
                "get",
                "list",
                "patch",
                "update",
                "watch",
            ],
        },
        {
            "name": "flowschemas/status",
            "singularName": "",
            "namespaced": False,
            "kind": "FlowSchema",
            "verbs": ["get", "patch", "update"],
        },
        {
            "name": "prioritylevelconfigurations",
            "singularName": "prioritylevelconfiguration",
            "namespaced": False,
            "kind": "PriorityLevelConfiguration",
            "verbs": [
                "create",
                "delete",
                "deletecollection",
                "get",
                "list",
                "patch",
                "update",
                "watch",
            ],
        },
        {
            "name": "prioritylevelconfigurations/status",
            "singularName": "",
            "namespaced": False,
            "kind": "PriorityLevelConfiguration",
            "verbs": ["get", "patch", "update"],
        },
    ],
}

GROUP_ORDER = [
    "apiregistration.k8s.io",
    "apps",
    "events.k8s.io",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "networking.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "storage.k8s.io",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "scheduling.k8s.io",
    "coordination.k8s.io",
    "node.k8s.io",
    "discovery.k8s.io",
    "flowcontrol.apiserver.k8s.io",
]


async def test_groups_come_in_kube_apiservers_order(backend: Backend) -> None:
    groups = [g["name"] for g in (await ok(backend, "GET", "/apis"))["groups"]]
    assert [g for g in groups if g in GROUP_ORDER] == GROUP_ORDER


@pytest.mark.parametrize("group_version", sorted(EXPECTED))
async def test_resource_entries(backend: Backend, group_version: str) -> None:
    path = "/api/v1" if group_version == "v1" else f"/apis/{group_version}"
    served = {e["name"]: e for e in (await ok(backend, "GET", path))["resources"]}
    for entry in EXPECTED[group_version]:
        got = {k: v for k, v in served.get(entry["name"], {}).items() if k != "storageVersionHash"}
        assert got == entry


CLUSTER_OBJECTS = [
    ("/apis/node.k8s.io/v1/runtimeclasses", {"kind": "RuntimeClass", "handler": "runc"}),
    ("/apis/storage.k8s.io/v1/csidrivers", {"kind": "CSIDriver", "spec": {}}),
    (
        "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations",
        {
            "kind": "PriorityLevelConfiguration",
            "spec": {
                "type": "Limited",
                "limited": {"nominalConcurrencyShares": 1, "limitResponse": {"type": "Reject"}},
            },
        },
    ),
]


@pytest.mark.parametrize(("path", "body"), CLUSTER_OBJECTS)
async def test_new_kinds_are_served(backend: Backend, path: str, body: dict[str, Any]) -> None:
    name = backend.unique("obj")
    group_version = path.split("/")[2] + "/" + path.split("/")[3]
    doc = {"apiVersion": group_version, "metadata": {"name": name}, **body}
    created = await ok(backend, "POST", path, doc)
    assert created["kind"] == body["kind"]
    listed = await ok(backend, "GET", path)
    assert name in [i["metadata"]["name"] for i in listed["items"]]
    await ok(backend, "DELETE", f"{path}/{name}")


async def test_namespaced_kinds_are_served(backend: Backend) -> None:
    base = f"/api/v1/namespaces/{backend.namespace}"
    limit = {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": {"name": "l"},
        "spec": {"limits": [{"type": "Container", "max": {"cpu": "1"}}]},
    }
    created = await ok(backend, "POST", f"{base}/limitranges", limit)
    assert created["spec"]["limits"][0]["max"] == {"cpu": "1"}
    template = {
        "apiVersion": "v1",
        "kind": "PodTemplate",
        "metadata": {"name": "t"},
        "template": {"spec": {"containers": [{"name": "a", "image": "nginx"}]}},
    }
    created = await ok(backend, "POST", f"{base}/podtemplates", template)
    assert created["template"]["metadata"] == {"creationTimestamp": None}


async def test_a_binding_assigns_a_pod(backend: Backend) -> None:
    base = f"/api/v1/namespaces/{backend.namespace}"
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "a", "image": "nginx"}]},
    }
    await ok(backend, "POST", f"{base}/pods", pod)
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "p"},
        "target": {"kind": "Node", "name": "n1"},
    }
    reply = await req(backend, "POST", f"{base}/bindings", binding)
    assert (reply.status, reply.body) == (
        201,
        {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201},
    )
    bound = await ok(backend, "GET", f"{base}/pods/p")
    assert bound["spec"]["nodeName"] == "n1"
    scheduled = [c for c in bound["status"]["conditions"] if c["type"] == "PodScheduled"]
    assert [c["status"] for c in scheduled] == ["True"]
    again = await req(backend, "POST", f"{base}/bindings", binding)
    assert again.status == 409
    assert again.body["message"] == (
        'Operation cannot be fulfilled on pods/binding "p": pod p is already assigned to node "n1"'
    )
    assert again.body["details"] == {"name": "p", "kind": "pods/binding"}
    listed = await req(backend, "GET", f"{base}/bindings")
    assert listed.status == 405
    assert listed.body["details"] == {}


async def test_a_replication_controller_scales(backend: Backend) -> None:
    base = f"/api/v1/namespaces/{backend.namespace}/replicationcontrollers"
    rc = {
        "apiVersion": "v1",
        "kind": "ReplicationController",
        "metadata": {"name": "rc"},
        "spec": {
            "replicas": 1,
            "selector": {"app": "rc"},
            "template": {
                "metadata": {"labels": {"app": "rc"}},
                "spec": {"containers": [{"name": "a", "image": "nginx"}]},
            },
        },
    }
    await ok(backend, "POST", base, rc)
    scale = await ok(backend, "GET", f"{base}/rc/scale")
    assert (scale["spec"], scale["status"]) == (
        {"replicas": 1},
        {"replicas": 0, "selector": "app=rc"},
    )
    scale["spec"]["replicas"] = 3
    await ok(backend, "PUT", f"{base}/rc/scale", scale)
    assert (await ok(backend, "GET", f"{base}/rc"))["spec"]["replicas"] == 3
