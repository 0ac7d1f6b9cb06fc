"""``kubectl get``'s server-side Tables: every listable built-in kind has kube-apiserver's
columns (pkg/printers/internalversion, kube-aggregator's apiservice table, and the default
convertor's Name/Created At for kinds without a printer), and the kinds printed since
(RBAC bindings, quotas, pod templates, replication controllers, runtime classes, CSI and
flow-control objects, admission policies) fill their cells as kube-apiserver does."""

from __future__ import annotations

from typing import Any

import pytest

from reconcile_kit.testing.backends import Backend

from ..kubehttp import send
from .kube import ok, req
from .table_columns_expected import COLUMNS
from .test_validation_flowcontrol import NOBODY, NOTHING

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
VOLATILE = ("Name", "Age", "Created At")
NOT_SERVED: set[str] = set()


async def table(backend: Backend, path: str) -> dict[str, Any]:
    status, body, _ = await send(
        backend.api, "GET", path, None, "application/json", None, None, accept=TABLE
    )
    assert status == 200, (path, body)
    return dict(body)


def columns(body: dict[str, Any]) -> list[tuple[str, str, str, int]]:
    return [
        (c["name"], c["type"], c.get("format", ""), c.get("priority", 0))
        for c in body["columnDefinitions"]
    ]


async def test_every_listable_kind_has_kube_apiservers_columns(backend: Backend) -> None:
    differ = {}
    for path, expected in COLUMNS.items():
        if not backend.real and path in NOT_SERVED:
            continue
        got = columns(await table(backend, path))
        if got != [tuple(c) for c in expected]:
            differ[path] = got
    assert not differ


SUBJECTS = [
    {"kind": "User", "name": "u1", "apiGroup": "rbac.authorization.k8s.io"},
    {"kind": "Group", "name": "g1", "apiGroup": "rbac.authorization.k8s.io"},
    {"kind": "User", "name": "u2", "apiGroup": "rbac.authorization.k8s.io"},
    {"kind": "ServiceAccount", "name": "sa1", "namespace": "elsewhere"},
]
POD_SPEC = {"containers": [{"name": "a", "image": "busybox"}, {"name": "b", "image": "nginx"}]}
TEMPLATE = {"metadata": {"labels": {"app": "web", "tier": "x"}}, "spec": POD_SPEC}
LEVEL_QUEUING = {"queues": 16, "handSize": 4, "queueLengthLimit": 20}
ANY_DANGLING = "?|False"
RULE = {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"]}

HPA = "/apis/autoscaling/v2/namespaces/{ns}/horizontalpodautoscalers"
TARGET_REF = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
METRIC = {"name": "m", "selector": {"matchLabels": {"a": "b"}}}


def hpa(name: str, *metrics: dict[str, Any]) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "spec": {"scaleTargetRef": TARGET_REF, "maxReplicas": 3, "metrics": list(metrics)},
    }


def resource(name: str, **target: Any) -> dict[str, Any]:
    return {"type": "Resource", "resource": {"name": name, "target": target}}


# plural (a suffix after "/" tells apart two objects of a kind) -> (collection path,
# namespaced, body, the cells but Name/Age/Created At)
CELLS: dict[str, tuple[str, bool, dict[str, Any], list[Any]]] = {
    "horizontalpodautoscalers/resources": (
        HPA,
        True,
        hpa(
            "resources",
            resource("cpu", type="Utilization", averageUtilization=50),
            resource("memory", type="AverageValue", averageValue="100Mi"),
            resource("cpu", type="AverageValue", averageValue="500m"),
        ),
        ["Deployment/web", "cpu: <unknown>/50%, memory: <unknown>/100Mi + 1 more...", "1", 3, 0],
    ),
    "horizontalpodautoscalers/others": (
        HPA,
        True,
        hpa(
            "others",
            {
                "type": "Pods",
                "pods": {"metric": METRIC, "target": {"type": "AverageValue", "averageValue": "2"}},
            },
            {
                "type": "External",
                "external": {"metric": METRIC, "target": {"type": "Value", "value": "3k"}},
            },
        ),
        ["Deployment/web", "<unknown>/2, <unknown>/3k", "1", 3, 0],
    ),
    "rolebindings": (
        "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings",
        True,
        {
            "metadata": {"name": "rb"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
            "subjects": SUBJECTS,
        },
        ["Role/r", "u1, u2", "g1", "elsewhere/sa1"],
    ),
    "clusterrolebindings": (
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
        False,
        {
            "metadata": {"name": "crb"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "view",
            },
        },
        ["ClusterRole/view", "", "", ""],
    ),
    "podtemplates": (
        "/api/v1/namespaces/{ns}/podtemplates",
        True,
        {"metadata": {"name": "pt"}, "template": TEMPLATE},
        ["a,b", "busybox,nginx", "app=web,tier=x"],
    ),
    "replicationcontrollers": (
        "/api/v1/namespaces/{ns}/replicationcontrollers",
        True,
        {
            "metadata": {"name": "rc"},
            "spec": {"replicas": 2, "selector": {"app": "web"}, "template": TEMPLATE},
        },
        [2, 0, 0, "a,b", "busybox,nginx", "app=web"],
    ),
    "resourcequotas": (
        "/api/v1/namespaces/{ns}/resourcequotas",
        True,
        {"metadata": {"name": "rq"}, "spec": {"hard": {"pods": "2", "limits.cpu": "1"}}},
        ["", ""],  # no quota controller fills status.hard on either backend
    ),
    "runtimeclasses": (
        "/apis/node.k8s.io/v1/runtimeclasses",
        False,
        {"metadata": {"name": "rtc"}, "handler": "runc"},
        ["runc"],
    ),
    "csidrivers": (
        "/apis/storage.k8s.io/v1/csidrivers",
        False,
        {
            "metadata": {"name": "csi.example.com"},
            "spec": {
                "podInfoOnMount": True,
                "tokenRequests": [{"audience": "a1"}, {"audience": "a2"}],
                "volumeLifecycleModes": ["Persistent", "Ephemeral"],
            },
        },
        [True, True, False, "a1,a2", False, "Persistent,Ephemeral"],
    ),
    "csinodes": (
        "/apis/storage.k8s.io/v1/csinodes",
        False,
        {
            "metadata": {"name": "node"},
            "spec": {"drivers": [{"name": "csi.example.com", "nodeID": "n1"}]},
        },
        [1],
    ),
    "volumeattachments": (
        "/apis/storage.k8s.io/v1/volumeattachments",
        False,
        {
            "metadata": {"name": "va"},
            "spec": {
                "attacher": "csi.example.com",
                "nodeName": "node-1",
                "source": {"persistentVolumeName": "pv-1"},
            },
        },
        ["csi.example.com", "pv-1", "node-1", False],
    ),
    "flowschemas": (
        "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas",
        False,
        {
            "metadata": {"name": "fs"},
            "spec": {
                "priorityLevelConfiguration": {"name": "global-default"},
                "matchingPrecedence": 9000,
                "distinguisherMethod": {"type": "ByUser"},
                "rules": [{"subjects": NOBODY, "nonResourceRules": NOTHING}],
            },
        },
        # MissingPL: "?" until kube-apiserver's APF controller sets the Dangling condition
        # ("False": its level exists), at a moment of its own; the embedded server runs none
        ["global-default", 9000, "ByUser", ANY_DANGLING],
    ),
    "prioritylevelconfigurations": (
        "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations",
        False,
        {
            "metadata": {"name": "pl"},
            "spec": {
                "type": "Limited",
                "limited": {
                    "nominalConcurrencyShares": 5,
                    "limitResponse": {"type": "Queue", "queuing": LEVEL_QUEUING},
                },
            },
        },
        ["Limited", 5, 16, 4, 20],
    ),
    "validatingadmissionpolicies": (
        "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies",
        False,
        {
            "metadata": {"name": "vap"},
            "spec": {
                "matchConstraints": {"resourceRules": [{**RULE, "resources": ["configmaps"]}]},
                "validations": [{"expression": "true"}, {"expression": "1 == 1"}],
                "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            },
        },
        [2, "v1/ConfigMap"],
    ),
    "validatingadmissionpolicybindings": (
        "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings",
        False,
        {
            "metadata": {"name": "vapb"},
            "spec": {
                "policyName": "reconcile-kit-no-such-policy",
                "validationActions": ["Deny"],
                "paramRef": {
                    "selector": {
                        "matchLabels": {"b": "2", "a": "1"},
                        "matchExpressions": [
                            {"key": "k", "operator": "In", "values": ["x", "y"]},
                        ],
                    },
                    "parameterNotFoundAction": "Deny",
                },
            },
        },
        [
            "reconcile-kit-no-such-policy",
            "&LabelSelector{MatchLabels:map[string]string{a: 1,b: 2,},MatchExpressions:"
            "[]LabelSelectorRequirement{LabelSelectorRequirement{Key:k,Operator:In,"
            "Values:[x y],},},}",
        ],
    ),
}


@pytest.mark.parametrize("plural", sorted(CELLS))
async def test_cells_as_kube_apiserver_prints_them(backend: Backend, plural: str) -> None:
    template, namespaced, body, expected = CELLS[plural]
    plural = plural.split("/")[0]
    path = template.format(ns=backend.namespace)
    body = {**body, "metadata": dict(body["metadata"])}
    if not namespaced:
        body["metadata"]["name"] = f"{backend.namespace}-{body['metadata']['name']}"
        if plural == "csidrivers":  # a CSI driver's name is a DNS subdomain
            body["metadata"]["name"] = f"{backend.namespace}.csi.example.com"
    created = await ok(backend, "POST", path, body)
    name = created["metadata"]["name"]
    try:
        one = await table(backend, f"{path}/{name}")
        [row] = one["rows"]
        names = [c[0] for c in columns(one)]
        cells = [c for c, n in zip(row["cells"], names, strict=True) if n not in VOLATILE]
        if expected[-1] == ANY_DANGLING and cells[-1] in ("?", "False"):
            cells[-1] = ANY_DANGLING
        assert cells == expected
    finally:
        await req(backend, "DELETE", f"{path}/{name}")
