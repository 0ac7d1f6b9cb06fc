"""Values of the wrong JSON type in built-in objects: kube-apiserver's decoder (Go's
encoding/json) refuses the body with a 400 naming the innermost Go struct, the JSON path
and the Go type (``json: cannot unmarshal string into Go struct field
DeploymentSpec.spec.replicas of type int32``); a patch whose result does not decode is a
422 on ``patch``. The first wrong value in the document's order is the one named."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from reconcile_kit.testing.backends import Backend

from .kube import JSON_PATCH, MERGE, STRATEGIC, ok, req, status_body

POD = {"containers": [{"name": "c", "image": "busybox"}]}
TEMPLATE = {"metadata": {"labels": {"app": "a"}}, "spec": POD}
DEPLOYMENT = {
    "metadata": {"name": "d"},
    "spec": {"selector": {"matchLabels": {"app": "a"}}, "template": TEMPLATE},
}
PATHS = {
    "Deployment": "/apis/apps/v1/namespaces/{ns}/deployments",
    "ConfigMap": "/api/v1/namespaces/{ns}/configmaps",
    "Secret": "/api/v1/namespaces/{ns}/secrets",
    "Service": "/api/v1/namespaces/{ns}/services",
    "Pod": "/api/v1/namespaces/{ns}/pods",
    "Lease": "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases",
    "Role": "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles",
}


def _deployment(**spec: Any) -> dict[str, Any]:
    body = copy.deepcopy(DEPLOYMENT)
    body["spec"].update(spec)
    return body


def _container(**fields: Any) -> dict[str, Any]:
    template = {"metadata": TEMPLATE["metadata"], "spec": {"containers": [{"name": "c", **fields}]}}
    return _deployment(template=template)


CASES: list[tuple[str, str, dict[str, Any], str]] = [
    (
        "replicas-string",
        "Deployment",
        _deployment(replicas="3"),
        "cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32",
    ),
    (
        "replicas-fraction",
        "Deployment",
        _deployment(replicas=1.5),
        "cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas"
        " of type int32",
    ),
    (
        "replicas-out-of-range",
        "Deployment",
        _deployment(replicas=3000000000),
        "cannot unmarshal number 3000000000 into Go struct field DeploymentSpec.spec.replicas"
        " of type int32",
    ),
    (
        "first-in-document-order",
        "Deployment",
        _deployment(replicas="3", paused="yes"),
        "cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32",
    ),
    (
        "spec-a-list",
        "Deployment",
        {"metadata": {"name": "d"}, "spec": []},
        "cannot unmarshal array into Go struct field Deployment.spec of type v1.DeploymentSpec",
    ),
    (
        "selector-a-string",
        "Deployment",
        _deployment(selector="app=a"),
        "cannot unmarshal string into Go struct field DeploymentSpec.spec.selector"
        " of type v1.LabelSelector",
    ),
    (
        "containers-an-object",
        "Deployment",
        _deployment(template={"spec": {"containers": {"name": "c"}}}),
        "cannot unmarshal object into Go struct field PodSpec.spec.template.spec.containers"
        " of type []v1.Container",
    ),
    (
        "image-a-number",
        "Deployment",
        _container(image=5),
        "cannot unmarshal number into Go struct field Container.spec.template.spec.containers"
        ".image of type string",
    ),
    (
        "args-a-string",
        "Deployment",
        _container(image="x", args="a b"),
        "cannot unmarshal string into Go struct field Container.spec.template.spec.containers"
        ".args of type []string",
    ),
    (
        "env-value-a-bool",
        "Deployment",
        _container(image="x", env=[{"name": "A", "value": True}]),
        "cannot unmarshal bool into Go struct field EnvVar.spec.template.spec.containers.env"
        ".value of type string",
    ),
    (
        "limits-a-list",
        "Deployment",
        _container(image="x", resources={"limits": ["cpu"]}),
        "cannot unmarshal array into Go struct field ResourceRequirements.spec.template.spec"
        ".containers.resources.limits of type v1.ResourceList",
    ),
    (
        "probe-port-a-bool",
        "Deployment",
        _container(image="x", livenessProbe={"httpGet": {"port": True}}),
        "cannot unmarshal bool into Go struct field HTTPGetAction.spec.template.spec.containers"
        ".livenessProbe.httpGet.port of type int32",
    ),
    (
        "max-surge-a-bool",
        "Deployment",
        _deployment(strategy={"rollingUpdate": {"maxSurge": True}}),
        "cannot unmarshal bool into Go struct field RollingUpdateDeployment.spec.strategy"
        ".rollingUpdate.maxSurge of type int32",
    ),
    (
        "label-a-number",
        "ConfigMap",
        {"metadata": {"name": "cm", "labels": {"a": 1}}},
        "cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string",
    ),
    (
        "labels-a-list",
        "ConfigMap",
        {"metadata": {"name": "cm", "labels": ["a"]}},
        "cannot unmarshal array into Go struct field ObjectMeta.metadata.labels"
        " of type map[string]string",
    ),
    (
        "name-a-number",
        "ConfigMap",
        {"metadata": {"name": 5}},
        "cannot unmarshal number into Go struct field ObjectMeta.metadata.name of type string",
    ),
    (
        "uid-a-number",
        "ConfigMap",
        {"metadata": {"name": "cm", "uid": 5}},
        "cannot unmarshal number into Go struct field ObjectMeta.metadata.uid of type types.UID",
    ),
    (
        "metadata-a-string",
        "ConfigMap",
        {"metadata": "cm"},
        "cannot unmarshal string into Go struct field ConfigMap.metadata of type v1.ObjectMeta",
    ),
    (
        "finalizers-a-string",
        "ConfigMap",
        {"metadata": {"name": "cm", "finalizers": "a.com/x"}},
        "cannot unmarshal string into Go struct field ObjectMeta.metadata.finalizers"
        " of type []string",
    ),
    (
        "owner-controller-a-string",
        "ConfigMap",
        {
            "metadata": {
                "name": "cm",
                "ownerReferences": [
                    {"apiVersion": "v1", "kind": "X", "name": "x", "uid": "1", "controller": "1"}
                ],
            }
        },
        "cannot unmarshal string into Go struct field OwnerReference.metadata.ownerReferences"
        ".controller of type bool",
    ),
    (
        "data-a-number",
        "ConfigMap",
        {"metadata": {"name": "cm"}, "data": {"a": 1}},
        "cannot unmarshal number into Go struct field ConfigMap.data of type string",
    ),
    (
        "immutable-a-string",
        "ConfigMap",
        {"metadata": {"name": "cm"}, "immutable": "true"},
        "cannot unmarshal string into Go struct field ConfigMap.immutable of type bool",
    ),
    (
        "binary-data-not-base64",
        "ConfigMap",
        {"metadata": {"name": "cm"}, "binaryData": {"a": "!!!"}},
        "illegal base64 data at input byte 0",
    ),
    (
        "secret-data-a-number",
        "Secret",
        {"metadata": {"name": "s"}, "data": {"a": 1}},
        "cannot unmarshal number into Go struct field Secret.data of type []uint8",
    ),
    (
        "string-data-a-number",
        "Secret",
        {"metadata": {"name": "s"}, "stringData": {"a": 1}},
        "cannot unmarshal number into Go struct field Secret.stringData of type string",
    ),
    (
        "port-a-string",
        "Service",
        {"metadata": {"name": "s"}, "spec": {"ports": [{"port": "80"}]}},
        "cannot unmarshal string into Go struct field ServicePort.spec.ports.port of type int32",
    ),
    (
        "port-a-float",
        "Service",
        {"metadata": {"name": "s"}, "spec": {"ports": [{"port": 80.0}]}},
        "cannot unmarshal number 80.0 into Go struct field ServicePort.spec.ports.port"
        " of type int32",
    ),
    (
        "protocol-a-number",
        "Service",
        {"metadata": {"name": "s"}, "spec": {"ports": [{"port": 80, "protocol": 6}]}},
        "cannot unmarshal number into Go struct field ServicePort.spec.ports.protocol"
        " of type v1.Protocol",
    ),
    (
        "target-port-a-bool",
        "Service",
        {"metadata": {"name": "s"}, "spec": {"ports": [{"port": 80, "targetPort": True}]}},
        "cannot unmarshal bool into Go struct field ServicePort.spec.ports.targetPort"
        " of type int32",
    ),
    (
        "grace-period-a-string",
        "Pod",
        {"metadata": {"name": "p"}, "spec": {**POD, "terminationGracePeriodSeconds": "30"}},
        "cannot unmarshal string into Go struct field PodSpec.spec.terminationGracePeriodSeconds"
        " of type int64",
    ),
    (
        "default-mode-a-string",
        "Pod",
        {
            "metadata": {"name": "p"},
            "spec": {**POD, "volumes": [{"name": "v", "configMap": {"defaultMode": "0644"}}]},
        },
        "cannot unmarshal string into Go struct field ConfigMapVolumeSource.spec.volumes"
        ".configMap.defaultMode of type int32",
    ),
    (
        "renew-time-a-number",
        "Lease",
        {"metadata": {"name": "l"}, "spec": {"renewTime": 5}},
        "cannot unmarshal number into Go struct field LeaseSpec.spec.renewTime of type string",
    ),
    (
        "verbs-a-string",
        "Role",
        {"metadata": {"name": "r"}, "rules": [{"apiGroups": [""], "verbs": "get"}]},
        "cannot unmarshal string into Go struct field PolicyRule.rules.verbs of type []string",
    ),
]


def _expected(kind: str, why: str) -> dict[str, Any]:
    if not why.startswith("illegal"):
        why = f"json: {why}"
    return status_body(
        400, "BadRequest", f'{kind} in version "v1" cannot be handled as a {kind}: {why}', None
    )


@pytest.mark.parametrize(("kind", "body", "why"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
async def test_a_create_of_the_wrong_type_is_400(
    backend: Backend, kind: str, body: dict[str, Any], why: str
) -> None:
    path = PATHS[kind].format(ns=backend.namespace)
    reply = await req(backend, "POST", path, body)
    assert reply.body == _expected(kind, why)


async def test_an_update_of_the_wrong_type_is_400(backend: Backend) -> None:
    path = PATHS["Deployment"].format(ns=backend.namespace)
    stored = await ok(backend, "POST", path, DEPLOYMENT)
    stored["spec"]["replicas"] = "2"
    reply = await req(backend, "PUT", f"{path}/d", stored)
    why = "cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"
    assert reply.body == _expected("Deployment", why)


@pytest.mark.parametrize(
    ("content_type", "patch"),
    [
        (MERGE, {"spec": {"replicas": "3"}}),
        (STRATEGIC, {"spec": {"replicas": "3"}}),
        (JSON_PATCH, [{"op": "replace", "path": "/spec/replicas", "value": "3"}]),
    ],
    ids=["merge", "strategic", "json"],
)
async def test_a_patch_of_the_wrong_type_is_422_on_the_patch(
    backend: Backend, content_type: str, patch: Any
) -> None:
    """The value and the decoder's wording differ per patch type on kube-apiserver (the
    patched object's JSON, or the strategic patch and its converter's error): the status,
    reason and field are compared."""
    path = PATHS["Deployment"].format(ns=backend.namespace)
    await ok(backend, "POST", path, DEPLOYMENT)
    reply = await req(backend, "PATCH", f"{path}/d", patch, content_type=content_type)
    assert (reply.status, reply.body["reason"]) == (422, "Invalid"), reply.body
    assert [c["field"] for c in reply.body["details"]["causes"]] == ["patch"]
    assert reply.body["message"].startswith(' "" is invalid: patch: Invalid value: ')
