"""HorizontalPodAutoscalers in autoscaling/v1 as well as v2, as kube-apiserver 1.32 serves
them: stored as v2 and converted (k8s.io/kubernetes pkg/apis/autoscaling/v1
conversion.go), ``targetCPUUtilizationPercentage`` standing for a Resource cpu Utilization
metric and the rest kept in ``autoscaling.alpha.kubernetes.io/...`` annotations of the v1
form; v1's defaults and the internal form's validation; discovery, ``kubectl autoscale``
(a v1 POST), Tables and watches in v1."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from reconcile_kit.testing.backends import Backend

from ..kubehttp import send
from .kube import MERGE, collect, kubectl, ok, req, watch_events

V1 = "autoscaling/v1"
V2 = "autoscaling/v2"
REF = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
METRICS = [
    {
        "type": "Resource",
        "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}},
    },
    {
        "type": "Resource",
        "resource": {
            "name": "memory",
            "target": {"type": "AverageValue", "averageValue": "100Mi"},
        },
    },
    {
        "type": "Pods",
        "pods": {
            "metric": {"name": "qps", "selector": {"matchLabels": {"b": "2", "a": "1"}}},
            "target": {"type": "AverageValue", "averageValue": "1k"},
        },
    },
    {
        "type": "Object",
        "object": {
            "describedObject": {"kind": "Service", "name": "s", "apiVersion": "v1"},
            "metric": {"name": "hits"},
            "target": {"type": "Value", "value": "10"},
        },
    },
    {
        "type": "External",
        "external": {
            "metric": {"name": "queue"},
            "target": {"type": "AverageValue", "averageValue": "30"},
        },
    },
    {
        "type": "ContainerResource",
        "containerResource": {
            "name": "cpu",
            "container": "app",
            "target": {"type": "Utilization", "averageUtilization": 70},
        },
    },
]
STATUS = {
    "currentReplicas": 2,
    "desiredReplicas": 3,
    "lastScaleTime": "2024-01-01T00:00:00Z",
    "observedGeneration": 1,
    "currentMetrics": [
        {
            "type": "Resource",
            "resource": {
                "name": "cpu",
                "current": {"averageUtilization": 55, "averageValue": "200m"},
            },
        },
        {"type": "Pods", "pods": {"metric": {"name": "qps"}, "current": {"averageValue": "2"}}},
        {
            "type": "External",
            "external": {"metric": {"name": "queue"}, "current": {"value": "3"}},
        },
    ],
    "conditions": [
        {
            "type": "AbleToScale",
            "status": "True",
            "lastTransitionTime": "2024-01-01T00:00:00Z",
            "reason": "R",
            "message": "m",
        }
    ],
}


def path(backend: Backend, version: str, name: str = "") -> str:
    base = f"/apis/{version}/namespaces/{backend.namespace}/horizontalpodautoscalers"
    return f"{base}/{name}" if name else base


def hpa(version: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    body = {"scaleTargetRef": REF, "maxReplicas": 3, **spec}
    return {
        "apiVersion": version,
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name},
        "spec": body,
    }


def content(obj: dict[str, Any]) -> dict[str, Any]:
    """An object but its server-set metadata."""
    meta = {
        k: v
        for k, v in obj["metadata"].items()
        if k not in ("uid", "resourceVersion", "creationTimestamp", "managedFields", "namespace")
    }
    return {**obj, "metadata": meta}


async def test_a_v1_write_is_read_in_v2(backend: Backend) -> None:
    body = hpa(V1, "a", {"targetCPUUtilizationPercentage": 50})
    body["metadata"]["annotations"] = {"x": "y"}
    created = await ok(backend, "POST", path(backend, V1), body)
    assert content(created) == {
        "kind": "HorizontalPodAutoscaler",
        "apiVersion": V1,
        "metadata": {"name": "a", "annotations": {"x": "y"}},
        "spec": {**body["spec"], "minReplicas": 1},
        "status": {"currentReplicas": 0, "desiredReplicas": 0},
    }
    assert created["metadata"]["managedFields"][0]["apiVersion"] == V1
    got = await ok(backend, "GET", path(backend, V2, "a"))
    assert got["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    cpu = {"type": "Utilization", "averageUtilization": 50}
    assert (got["spec"], got["status"]) == (
        {
            "scaleTargetRef": REF,
            "minReplicas": 1,
            "maxReplicas": 3,
            "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": cpu}}],
        },
        {"desiredReplicas": 0, "currentMetrics": None},
    )
    # no CPU target: v1's conversion gives the 80% one
    created = await ok(backend, "POST", path(backend, V1), hpa(V1, "b", {}))
    assert created["spec"]["targetCPUUtilizationPercentage"] == 80
    got = await ok(backend, "GET", path(backend, V2, "b"))
    assert got["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] == 80


async def test_a_v2_write_is_read_in_v1_with_the_round_trip_annotations(
    backend: Backend,
) -> None:
    behavior = {
        "scaleDown": {
            "stabilizationWindowSeconds": 60,
            "policies": [{"type": "Pods", "value": 1, "periodSeconds": 30}],
        }
    }
    body = hpa(V2, "c", {"minReplicas": 2, "metrics": METRICS, "behavior": behavior})
    created = await ok(backend, "POST", path(backend, V2), body)
    await ok(backend, "PUT", path(backend, V2, "c/status"), {**created, "status": STATUS})
    got = await ok(backend, "GET", path(backend, V1, "c"))
    assert (got["spec"], got["status"]) == (
        {
            "scaleTargetRef": REF,
            "minReplicas": 2,
            "maxReplicas": 3,
            "targetCPUUtilizationPercentage": 60,
        },
        {
            "observedGeneration": 1,
            "lastScaleTime": "2024-01-01T00:00:00Z",
            "currentReplicas": 2,
            "desiredReplicas": 3,
            "currentCPUUtilizationPercentage": 55,
        },
    )
    annotations = got["metadata"]["annotations"]
    policies = (
        '"Policies":[{"Type":"Pods","Value":4,"PeriodSeconds":15},'
        '{"Type":"Percent","Value":100,"PeriodSeconds":15}]'
    )
    assert annotations == {
        "autoscaling.alpha.kubernetes.io/metrics": (
            '[{"type":"Resource","resource":{"name":"memory","targetAverageValue":"100Mi"}},'
            '{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"1k",'
            '"selector":{"matchLabels":{"a":"1","b":"2"}}}},'
            '{"type":"Object","object":{"target":{"kind":"Service","name":"s",'
            '"apiVersion":"v1"},"metricName":"hits","targetValue":"10"}},'
            '{"type":"External","external":{"metricName":"queue","targetAverageValue":"30"}},'
            '{"type":"ContainerResource","containerResource":{"name":"cpu",'
            '"targetAverageUtilization":70,"container":"app"}}]'
        ),
        "autoscaling.alpha.kubernetes.io/current-metrics": (
            '[{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":55,'
            '"currentAverageValue":"200m"}},'
            '{"type":"Pods","pods":{"metricName":"qps","currentAverageValue":"2"}},'
            '{"type":"External","external":{"metricName":"queue","currentValue":"3"}}]'
        ),
        "autoscaling.alpha.kubernetes.io/behavior": (
            '{"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Max",'
            + policies
            + '},"ScaleDown":{"StabilizationWindowSeconds":60,"SelectPolicy":"Max",'
            '"Policies":[{"Type":"Pods","Value":1,"PeriodSeconds":30}]}}'
        ),
        "autoscaling.alpha.kubernetes.io/conditions": (
            '[{"type":"AbleToScale","status":"True","lastTransitionTime":'
            '"2024-01-01T00:00:00Z","reason":"R","message":"m"}]'
        ),
    }
    # a v1 update with the annotations keeps every metric (the CPU one now last)
    got["spec"]["targetCPUUtilizationPercentage"] = 65
    updated = await ok(backend, "PUT", path(backend, V1, "c"), got)
    assert content(updated)["metadata"] == content(got)["metadata"]
    v2 = await ok(backend, "GET", path(backend, V2, "c"))
    cpu = {"type": "Utilization", "averageUtilization": 65}
    assert v2["spec"]["metrics"] == [
        *METRICS[1:2],
        {
            **METRICS[2],
            "pods": {
                **METRICS[2]["pods"],
                "metric": {"name": "qps", "selector": {"matchLabels": {"a": "1", "b": "2"}}},
            },
        },
        *METRICS[3:],
        {"type": "Resource", "resource": {"name": "cpu", "target": cpu}},
    ]
    assert v2["spec"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"] == 60
    assert v2["status"]["conditions"] == STATUS["conditions"]
    assert "annotations" not in v2["metadata"]
    listed = await ok(backend, "GET", path(backend, V1))
    assert listed["apiVersion"] == V1
    assert [
        content({**i, "kind": "HorizontalPodAutoscaler", "apiVersion": V1}) for i in listed["items"]
    ] == [content(updated)]


async def test_v1_patches_defaults_and_validation(backend: Backend) -> None:
    await ok(backend, "POST", path(backend, V1), hpa(V1, "p", {}))
    patched = await ok(
        backend,
        "PATCH",
        path(backend, V1, "p"),
        {
            "metadata": {
                "annotations": {
                    "autoscaling.alpha.kubernetes.io/metrics": json.dumps(
                        [{"type": "Pods", "pods": {"metricName": "qps", "targetAverageValue": "3"}}]
                    )
                }
            },
            "spec": {"targetCPUUtilizationPercentage": 70},
        },
        content_type=MERGE,
    )
    assert patched["spec"]["targetCPUUtilizationPercentage"] == 70
    got = await ok(backend, "GET", path(backend, V2, "p"))
    assert got["spec"]["metrics"] == [
        {
            "type": "Pods",
            "pods": {
                "metric": {"name": "qps"},
                "target": {"type": "AverageValue", "averageValue": "3"},
            },
        },
        {
            "type": "Resource",
            "resource": {
                "name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 70},
            },
        },
    ]
    reply = await req(
        backend,
        "PATCH",
        path(backend, V1, "p"),
        {"spec": {"targetCPUUtilizationPercentage": 0, "minReplicas": 0}},
        content_type=MERGE,
    )
    assert reply.status == 422
    assert reply.body["message"] == (
        'HorizontalPodAutoscaler.autoscaling "p" is invalid: [spec.minReplicas: Invalid value:'
        " 0: must be greater than or equal to 1, spec.metrics[1].resource.target."
        "averageUtilization: Invalid value: 0: must be greater than 0, spec.metrics: Forbidden:"
        " must specify at least one Object or External metric to support scaling to zero"
        " replicas]"
    )
    bad = hpa(V1, "d", {"maxReplicas": 0, "targetCPUUtilizationPercentage": -1})
    bad["spec"]["scaleTargetRef"] = {}
    bad["metadata"]["annotations"] = {
        "autoscaling.alpha.kubernetes.io/behavior": '{"ScaleUp":{"StabilizationWindowSeconds":5}}',
        "autoscaling.alpha.kubernetes.io/conditions": "junk",
    }
    reply = await req(backend, "POST", path(backend, V1), bad)
    assert reply.status == 422
    assert [(c["field"], c["message"]) for c in reply.body["details"]["causes"]] == [
        ("spec.maxReplicas", "Invalid value: 0: must be greater than 0"),
        ("spec.maxReplicas", "Invalid value: 0: must be greater than or equal to `minReplicas`"),
        ("spec.scaleTargetRef.kind", "Required value"),
        ("spec.scaleTargetRef.name", "Required value"),
        (
            "spec.metrics[0].resource.target.averageUtilization",
            "Invalid value: -1: must be greater than 0",
        ),
        ("spec.behavior.scaleUp.policies", "Required value: must specify at least one Policy"),
    ]
    reply = await req(backend, "POST", path(backend, V1), hpa(V2, "e", {}))
    assert (reply.status, reply.body["message"]) == (
        400,
        "the API version in the data (autoscaling/v2) does not match the expected API version"
        " (autoscaling/v1)",
    )


async def test_v1_is_discovered_watched_and_printed(backend: Backend) -> None:
    group = await ok(backend, "GET", "/apis/autoscaling")
    assert group["versions"] == [
        {"groupVersion": V2, "version": "v2"},
        {"groupVersion": V1, "version": "v1"},
    ]
    assert group["preferredVersion"] == {"groupVersion": V2, "version": "v2"}
    resources = (await ok(backend, "GET", "/apis/autoscaling/v1"))["resources"]
    assert [(r["name"], r.get("shortNames"), r["verbs"]) for r in resources] == [
        (
            "horizontalpodautoscalers",
            ["hpa"],
            ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
        ),
        ("horizontalpodautoscalers/status", None, ["get", "patch", "update"]),
    ]
    events = watch_events(backend, path(backend, V1), {"resourceVersion": "0"})
    try:
        created = await ok(
            backend, "POST", path(backend, V2), hpa(V2, "w", {"metrics": METRICS[:1]})
        )
        (event,) = await collect(events, 1)
    finally:
        await events.aclose()
    assert event["type"] == "ADDED"
    assert event["object"]["apiVersion"] == V1
    assert event["object"]["spec"]["targetCPUUtilizationPercentage"] == 60
    assert event["object"]["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    status, table, _ = await send(
        backend.api, "GET", path(backend, V1), None, "application/json", None, None, accept=TABLE
    )
    assert status == 200
    assert [row["cells"][:6] for row in table["rows"]] == [
        ["w", "Deployment/web", "cpu: <unknown>/60%", "1", 3, 0]
    ]


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="no kubectl on PATH")
async def test_kubectl_autoscale(backend: Backend, tmp_path: Path) -> None:
    ns = backend.namespace
    labels = {"app": "web"}
    deployment = {
        "metadata": {"name": "web"},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }
    await ok(backend, "POST", f"/apis/apps/v1/namespaces/{ns}/deployments", deployment)
    args = ("autoscale", "deployment", "web", "--min=1", "--max=3", "--cpu-percent=50", "-n", ns)
    code, out, err = await kubectl(backend, tmp_path, *args)
    assert (code, out) == (0, "horizontalpodautoscaler.autoscaling/web autoscaled\n"), err
    got = await ok(backend, "GET", path(backend, V1, "web"))
    assert got["spec"] == {
        "scaleTargetRef": REF,
        "minReplicas": 1,
        "maxReplicas": 3,
        "targetCPUUtilizationPercentage": 50,
    }
    assert [(m["manager"], m["apiVersion"]) for m in got["metadata"]["managedFields"]] == [
        ("kubectl-autoscale", V1)
    ]
    code, out, err = await kubectl(
        backend, tmp_path, "get", "hpa", "web", "-n", ns, "-o", "jsonpath={.spec.metrics}"
    )
    assert code == 0, err
    assert json.loads(out) == [
        {
            "type": "Resource",
            "resource": {
                "name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 50},
            },
        }
    ]
    code, _, err = await kubectl(backend, tmp_path, *args)
    assert code == 1
    assert 'horizontalpodautoscalers.autoscaling "web" already exists' in err
