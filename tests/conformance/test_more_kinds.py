"""Kinds kube-apiserver serves beyond the workloads (issue 15): each is created, read,
listed, patched and deleted on both backends, and what the server returns (its defaults,
generation, initial status, finalizers) is the same."""

from __future__ import annotations

from typing import Any

import pytest

from reconcile_kit.testing.backends import Backend

from ..kubehttp import send
from .kube import MERGE, ok, req

POD = {"containers": [{"name": "c", "image": "busybox"}], "restartPolicy": "Never"}
KINDS: dict[str, tuple[str, dict[str, Any]]] = {
    "nodes": ("/api/v1/nodes", {"metadata": {"name": "{u}"}}),
    "endpoints": (
        "/api/v1/namespaces/{ns}/endpoints",
        {
            "metadata": {"name": "ep"},
            "subsets": [{"addresses": [{"ip": "10.1.2.3"}], "ports": [{"port": 80}]}],
        },
    ),
    "persistentvolumeclaims": (
        "/api/v1/namespaces/{ns}/persistentvolumeclaims",
        {
            "metadata": {"name": "pvc"},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}},
            },
        },
    ),
    "persistentvolumes": (
        "/api/v1/persistentvolumes",
        {
            "metadata": {"name": "{u}"},
            "spec": {
                "capacity": {"storage": "1Gi"},
                "accessModes": ["ReadWriteOnce"],
                "hostPath": {"path": "/tmp/x"},
            },
        },
    ),
    "controllerrevisions": (
        "/apis/apps/v1/namespaces/{ns}/controllerrevisions",
        {"metadata": {"name": "cr"}, "revision": 1, "data": {"a": 1}},
    ),
    "cronjobs": (
        "/apis/batch/v1/namespaces/{ns}/cronjobs",
        {
            "metadata": {"name": "cj"},
            "spec": {
                "schedule": "*/5 * * * *",
                "jobTemplate": {"spec": {"template": {"spec": POD}}},
            },
        },
    ),
    "horizontalpodautoscalers": (
        "/apis/autoscaling/v2/namespaces/{ns}/horizontalpodautoscalers",
        {
            "metadata": {"name": "hpa"},
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "maxReplicas": 3,
            },
        },
    ),
    "ingressclasses": (
        "/apis/networking.k8s.io/v1/ingressclasses",
        {"metadata": {"name": "{u}"}, "spec": {"controller": "example.com/ingress"}},
    ),
    "ingresses": (
        "/apis/networking.k8s.io/v1/namespaces/{ns}/ingresses",
        {
            "metadata": {"name": "ing"},
            "spec": {"defaultBackend": {"service": {"name": "web", "port": {"number": 80}}}},
        },
    ),
    "networkpolicies": (
        "/apis/networking.k8s.io/v1/namespaces/{ns}/networkpolicies",
        {"metadata": {"name": "np"}, "spec": {"podSelector": {}}},
    ),
    "endpointslices": (
        "/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices",
        {
            "metadata": {"name": "es"},
            "addressType": "IPv4",
            "endpoints": [{"addresses": ["10.1.2.3"]}],
            "ports": [{"port": 80}],
        },
    ),
    "poddisruptionbudgets": (
        "/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets",
        {
            "metadata": {"name": "pdb"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "a"}}},
        },
    ),
    "storageclasses": (
        "/apis/storage.k8s.io/v1/storageclasses",
        {"metadata": {"name": "{u}"}, "provisioner": "example.com/disk"},
    ),
    "priorityclasses": (
        "/apis/scheduling.k8s.io/v1/priorityclasses",
        {"metadata": {"name": "{u}"}, "value": 1000},
    ),
}
_VOLATILE = ("uid", "resourceVersion", "creationTimestamp", "managedFields", "name", "namespace")


def comparable(obj: dict[str, Any]) -> dict[str, Any]:
    """What the server made of the object, without names, uids, times and versions."""
    meta = {k: v for k, v in obj["metadata"].items() if k not in _VOLATILE}
    out = {**obj, "metadata": meta}
    status = dict(out.get("status") or {})
    status.pop("lastPhaseTransitionTime", None)
    if status or "status" in out:
        out["status"] = status
    return out


@pytest.mark.parametrize("plural", sorted(KINDS))
async def test_kind_is_served_as_kube_apiserver_serves_it(backend: Backend, plural: str) -> None:
    template, body = KINDS[plural]
    unique = backend.unique(plural[:10])
    path = template.format(ns=backend.namespace)
    doc = _fill(body, unique)
    created = await ok(backend, "POST", path, doc)
    name = created["metadata"]["name"]
    assert comparable(created) == _expected(plural), created
    assert (await ok(backend, "GET", f"{path}/{name}"))["metadata"]["uid"] == created["metadata"][
        "uid"
    ]
    listed = await ok(backend, "GET", path)
    assert name in [i["metadata"]["name"] for i in listed["items"]]
    if plural != "controllerrevisions":
        # kube-apiserver refuses any patch of a ControllerRevision ("data: field is
        # immutable": its RawExtension is compared re-encoded), so none is tried
        patched = await ok(
            backend,
            "PATCH",
            f"{path}/{name}",
            {"metadata": {"labels": {"x": "y"}}},
            content_type=MERGE,
        )
        assert patched["metadata"]["labels"] == {"x": "y"}
    if created["metadata"].get("finalizers"):
        await ok(
            backend,
            "PATCH",
            f"{path}/{name}",
            {"metadata": {"finalizers": None}},
            content_type=MERGE,
        )
    assert (await req(backend, "DELETE", f"{path}/{name}")).status in (200, 202)


def _fill(body: dict[str, Any], unique: str) -> dict[str, Any]:
    import json

    filled: dict[str, Any] = json.loads(json.dumps(body).replace("{u}", unique))
    return filled


def _expected(plural: str) -> dict[str, Any]:
    """kube-apiserver's answer (recorded in more_kinds_expected.py from the real backend,
    which this test checks again on every run with --backend real)."""
    from .more_kinds_expected import EXPECTED

    return EXPECTED[plural]


TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


@pytest.mark.parametrize("plural", sorted(KINDS))
async def test_kind_prints_as_kube_apiserver_prints_it(backend: Backend, plural: str) -> None:
    """``kubectl get`` columns (a Table): definitions and cells, but for name and age."""
    template, body = KINDS[plural]
    path = template.format(ns=backend.namespace)
    created = await ok(backend, "POST", path, _fill(body, backend.unique(plural[:10])))
    name = created["metadata"]["name"]
    status, table, _ = await send(
        backend.api, "GET", f"{path}/{name}", None, "application/json", None, None, accept=TABLE
    )
    assert status == 200, table
    columns = [(c["name"], c["type"], c.get("priority", 0)) for c in table["columnDefinitions"]]
    [row] = table["rows"]
    cells = [c for c, d in zip(row["cells"], columns, strict=True) if d[0] not in ("Name", "Age")]
    assert (columns, cells) == _expected_table(plural)
    if created["metadata"].get("finalizers"):
        await ok(
            backend,
            "PATCH",
            f"{path}/{name}",
            {"metadata": {"finalizers": None}},
            content_type=MERGE,
        )
    await req(backend, "DELETE", f"{path}/{name}")


async def test_bootstrap_priority_classes(backend: Backend) -> None:
    listed = await ok(backend, "GET", "/apis/scheduling.k8s.io/v1/priorityclasses")
    values = {i["metadata"]["name"]: i["value"] for i in listed["items"]}
    assert values["system-cluster-critical"] == 2000000000
    assert values["system-node-critical"] == 2000001000


def _expected_table(plural: str) -> tuple[list[Any], list[Any]]:
    from .more_kinds_expected import TABLES

    columns, cells = TABLES[plural]
    return [tuple(c) for c in columns], list(cells)


async def test_csi_storage_capacity(backend: Backend) -> None:
    """CSIStorageCapacity (storage.k8s.io/v1, listed by kr8s's own tests): served as
    created, its storageClassName validated, printed by the default table convertor (Name,
    Created At: kube-apiserver has no printer for it)."""
    path = f"/apis/storage.k8s.io/v1/namespaces/{backend.namespace}/csistoragecapacities"
    body = {"metadata": {"name": "cap"}, "storageClassName": "standard", "capacity": "1Gi"}
    created = await ok(backend, "POST", path, body)
    assert comparable(created) == {
        "kind": "CSIStorageCapacity",
        "apiVersion": "storage.k8s.io/v1",
        "metadata": {},
        "storageClassName": "standard",
        "capacity": "1Gi",
    }
    status, table, _ = await send(
        backend.api, "GET", f"{path}/cap", None, "application/json", None, None, accept=TABLE
    )
    assert status == 200, table
    columns = [(c["name"], c["type"]) for c in table["columnDefinitions"]]
    assert columns == [("Name", "string"), ("Created At", "date")]
    assert table["rows"][0]["cells"] == ["cap", created["metadata"]["creationTimestamp"]]
    bad = await req(backend, "POST", path, {"metadata": {"name": "nameless-class"}})
    assert bad.status == 422
    [cause] = bad.body["details"]["causes"]
    assert cause["field"] == "storageClassName"
    assert cause["message"].startswith('Invalid value: "": a lowercase RFC 1123 subdomain')
