"""Fields kube-apiserver always writes (issue 28, point 2): what Go's encoding/json writes
for a field without ``omitempty`` (``""``, 0, ``null``), a struct (never omitted: a zero
Time is ``null``), and what it leaves out (empty ``omitempty`` fields), as the embedded
server derives it from the k8s.io/api struct tags in kubetypes.
"""

from __future__ import annotations

from typing import Any

from reconcile_kit.testing.backends import Backend

from .kube import APPLY, Widgets, ok

LABELS = {"app": "web"}
TEMPLATE = {
    "metadata": {"labels": LABELS},
    "spec": {"containers": [{"name": "web", "image": "nginx"}]},
}


def _workload(kind: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {"name": "w"},
        "spec": {"selector": {"matchLabels": LABELS}, "template": TEMPLATE, **spec},
    }


async def test_a_workload_template_has_a_null_creation_timestamp(backend: Backend) -> None:
    base = f"/apis/apps/v1/namespaces/{backend.namespace}"
    for plural, body in (
        ("deployments", _workload("Deployment")),
        ("statefulsets", _workload("StatefulSet", serviceName="w")),
        ("daemonsets", _workload("DaemonSet")),
        ("replicasets", _workload("ReplicaSet")),
    ):
        created = await ok(backend, "POST", f"{base}/{plural}", body)
        assert created["spec"]["template"]["metadata"] == {
            "creationTimestamp": None,
            "labels": LABELS,
        }
        container = created["spec"]["template"]["spec"]["containers"][0]
        assert container["resources"] == {}, plural  # a struct: never omitted
        read = await ok(backend, "GET", f"{base}/{plural}/w")
        assert read["spec"]["template"]["metadata"]["creationTimestamp"] is None


async def test_a_job_template_too(backend: Backend) -> None:
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j"},
        "spec": {"template": {"spec": {"restartPolicy": "Never", **TEMPLATE["spec"]}}},
    }
    created = await ok(backend, "POST", f"/apis/batch/v1/namespaces/{backend.namespace}/jobs", job)
    assert created["spec"]["template"]["metadata"]["creationTimestamp"] is None


async def test_a_core_event_writes_its_empty_fields(backend: Backend) -> None:
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "e"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": backend.namespace},
        "reason": "Started",
        "message": "started",
    }
    created = await ok(backend, "POST", f"/api/v1/namespaces/{backend.namespace}/events", event)
    expected = {
        "eventTime": None,
        "firstTimestamp": None,
        "lastTimestamp": None,
        "reportingComponent": "",
        "reportingInstance": "",
        "source": {},
    }
    assert {k: created.get(k, "<absent>") for k in expected} == expected
    assert "count" not in created and "type" not in created  # omitempty


async def test_condition_times_are_null(backend: Backend) -> None:
    path = f"/apis/apps/v1/namespaces/{backend.namespace}/deployments"
    await ok(backend, "POST", path, _workload("Deployment"))
    status = {"conditions": [{"type": "Available", "status": "True", "reason": "R"}]}
    patched = await ok(
        backend,
        "PATCH",
        f"{path}/w/status",
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "w"},
            "status": status,
        },
        content_type=APPLY,
        params={"fieldManager": "test", "force": "true"},
    )
    (condition,) = patched["status"]["conditions"]
    assert condition == {
        "type": "Available",
        "status": "True",
        "reason": "R",
        "lastUpdateTime": None,
        "lastTransitionTime": None,
    }


async def test_fields_without_omitempty_are_written_and_empty_ones_with_it_are_not(
    backend: Backend,
) -> None:
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": "r", "labels": {}, "annotations": {}},
        "rules": [],
    }
    path = f"/apis/rbac.authorization.k8s.io/v1/namespaces/{backend.namespace}/roles"
    created = await ok(backend, "POST", path, role)
    assert created["rules"] is None  # no omitempty: an empty slice comes back nil
    assert "labels" not in created["metadata"] and "annotations" not in created["metadata"]
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "s"},
        "spec": {"ports": [{"port": 80}]},
    }
    created = await ok(backend, "POST", f"/api/v1/namespaces/{backend.namespace}/services", service)
    assert created["status"] == {"loadBalancer": {}}


async def test_custom_resources_are_left_as_written(backend: Backend, widgets: Widgets) -> None:
    created = await ok(backend, "POST", widgets.path, widgets.widget("w1"))
    assert "status" not in created
    assert None not in created["spec"].values()


async def test_custom_resource_lists_carry_an_empty_continue(
    backend: Backend, widgets: Widgets
) -> None:
    await ok(backend, "POST", widgets.path, widgets.widget("w1"))
    listed = await ok(backend, "GET", widgets.path)
    assert listed["metadata"]["continue"] == ""
    deleted = await ok(backend, "DELETE", widgets.path)
    assert deleted["metadata"]["continue"] == ""
    assert [i["metadata"]["name"] for i in deleted["items"]] == ["w1"]
    configmaps = f"/api/v1/namespaces/{backend.namespace}/configmaps"
    assert "continue" not in (await ok(backend, "DELETE", configmaps))["metadata"]
