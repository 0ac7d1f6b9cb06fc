"""Defaults kube-apiserver gives built-in kinds on create (SetDefaults_* and admission
plugins), which the embedded server must give too (issue 15)."""

from __future__ import annotations

from typing import Any

from reconcile_kit.testing.backends import Backend

from .kube import MERGE, ok

TEMPLATE = {
    "metadata": {"labels": {"app": "a"}},
    "spec": {"containers": [{"name": "c", "image": "nginx:1"}]},
}


def apps(backend: Backend, plural: str) -> str:
    return f"/apis/apps/v1/namespaces/{backend.namespace}/{plural}"


async def test_statefulset_and_daemonset_defaults(backend: Backend) -> None:
    selector = {"matchLabels": {"app": "a"}}
    sts = await ok(
        backend,
        "POST",
        apps(backend, "statefulsets"),
        {
            "metadata": {"name": "s"},
            "spec": {"selector": selector, "serviceName": "s", "template": TEMPLATE},
        },
    )
    spec = sts["spec"]
    assert (spec["podManagementPolicy"], spec["revisionHistoryLimit"], spec["replicas"]) == (
        "OrderedReady",
        10,
        1,
    )
    assert spec["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
    assert spec["persistentVolumeClaimRetentionPolicy"] == {
        "whenDeleted": "Retain",
        "whenScaled": "Retain",
    }
    ds = await ok(
        backend,
        "POST",
        apps(backend, "daemonsets"),
        {"metadata": {"name": "d"}, "spec": {"selector": selector, "template": TEMPLATE}},
    )
    assert ds["spec"]["revisionHistoryLimit"] == 10
    assert ds["spec"]["updateStrategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0},
    }


async def test_job_selector_labels_and_policies(backend: Backend) -> None:
    path = f"/apis/batch/v1/namespaces/{backend.namespace}/jobs"
    pod: dict[str, Any] = {
        "spec": {"containers": [{"name": "c", "image": "busybox"}], "restartPolicy": "Never"}
    }
    job = await ok(backend, "POST", path, {"metadata": {"name": "j"}, "spec": {"template": pod}})
    uid = job["metadata"]["uid"]
    generated = {
        "batch.kubernetes.io/controller-uid": uid,
        "batch.kubernetes.io/job-name": "j",
        "controller-uid": uid,
        "job-name": "j",
    }
    assert job["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    assert job["spec"]["template"]["metadata"]["labels"] == generated
    assert job["metadata"]["labels"] == generated
    assert (job["spec"]["manualSelector"], job["spec"]["podReplacementPolicy"]) == (
        False,
        "TerminatingOrFailed",
    )
    labelled = await ok(
        backend,
        "POST",
        path,
        {"metadata": {"name": "k", "labels": {"mine": "1"}}, "spec": {"template": pod}},
    )
    assert labelled["metadata"]["labels"] == {"mine": "1"}


async def test_nodeport_service_and_pod_tolerations(backend: Backend) -> None:
    ns = backend.namespace
    svc = await ok(
        backend,
        "POST",
        f"/api/v1/namespaces/{ns}/services",
        {"metadata": {"name": "np"}, "spec": {"type": "NodePort", "ports": [{"port": 80}]}},
    )
    assert svc["spec"]["externalTrafficPolicy"] == "Cluster"
    assert 30000 <= svc["spec"]["ports"][0]["nodePort"] <= 32767
    pod = await ok(
        backend,
        "POST",
        f"/api/v1/namespaces/{ns}/pods",
        {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}},
    )
    assert pod["spec"]["tolerations"] == [
        {
            "key": "node.kubernetes.io/not-ready",
            "operator": "Exists",
            "effect": "NoExecute",
            "tolerationSeconds": 300,
        },
        {
            "key": "node.kubernetes.io/unreachable",
            "operator": "Exists",
            "effect": "NoExecute",
            "tolerationSeconds": 300,
        },
    ]


async def test_defaults_reapplied_on_update(backend: Backend) -> None:
    """A patch that drops a defaulted field gets the default back, and the generation
    does not move (kube-apiserver defaults every decoded object)."""
    path = apps(backend, "deployments")
    body = {
        "metadata": {"name": "w"},
        "spec": {"selector": {"matchLabels": {"app": "a"}}, "template": TEMPLATE},
    }
    created = await ok(backend, "POST", path, body)
    patched = await ok(
        backend,
        "PATCH",
        f"{path}/w",
        {"spec": {"revisionHistoryLimit": None, "progressDeadlineSeconds": None}},
        content_type=MERGE,
    )
    assert (
        patched["spec"]["revisionHistoryLimit"],
        patched["spec"]["progressDeadlineSeconds"],
    ) == (
        10,
        600,
    )
    assert patched["metadata"]["generation"] == created["metadata"]["generation"]


async def test_field_selectors_and_projected_tokens_are_defaulted(backend: Backend) -> None:
    """SetDefaults_ObjectFieldSelector (``apiVersion: v1``) in env vars and downward API
    files, SetDefaults_ServiceAccountTokenProjection (an hour), in a pod template."""
    field = {"fieldRef": {"fieldPath": "metadata.name"}}
    downward = {"items": [{"path": "name", **field}]}
    template = {
        "metadata": {"labels": {"app": "a"}},
        "spec": {
            "serviceAccountName": "default",
            "containers": [
                {"name": "c", "image": "nginx:1", "env": [{"name": "N", "valueFrom": field}]}
            ],
            "volumes": [
                {"name": "d", "downwardAPI": downward},
                {
                    "name": "p",
                    "projected": {
                        "sources": [
                            {"downwardAPI": downward},
                            {"serviceAccountToken": {"path": "token"}},
                        ]
                    },
                },
            ],
        },
    }
    created = await ok(
        backend,
        "POST",
        apps(backend, "deployments"),
        {
            "metadata": {"name": "refs"},
            "spec": {"selector": {"matchLabels": {"app": "a"}}, "template": template},
        },
    )
    spec = created["spec"]["template"]["spec"]
    defaulted = {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}
    assert spec["containers"][0]["env"][0]["valueFrom"] == defaulted
    assert spec["volumes"][0]["downwardAPI"]["items"][0] == {"path": "name", **defaulted}
    sources = spec["volumes"][1]["projected"]["sources"]
    assert sources[0]["downwardAPI"]["items"][0] == {"path": "name", **defaulted}
    assert sources[1]["serviceAccountToken"] == {"path": "token", "expirationSeconds": 3600}
