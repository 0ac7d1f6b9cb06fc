"""``kubectl explain`` prints what kube-apiserver's ``/openapi/v3`` describes: the built-in
schemas' descriptions and enums (k8s.io/kubernetes's generated OpenAPI definitions) and a
CRD's own, with the apiVersion/kind/metadata descriptions the apiextensions-apiserver adds;
the built-in schemas' defaults are kube-apiserver's too.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import time
from pathlib import Path

import pytest

from reconcile_kit.testing.backends import Backend

from .kube import install_crd, kubectl, schema_crd

pytestmark = pytest.mark.skipif(shutil.which("kubectl") is None, reason="no kubectl on PATH")

API_CONVENTIONS = (
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md"
)

REPLICAS = [
    "GROUP:      apps",
    "KIND:       Deployment",
    "VERSION:    v1",
    "",
    "FIELD: replicas <integer>",
    "",
    "",
    "DESCRIPTION:",
    "    Number of desired pods. This is a pointer to distinguish between explicit",
    "    zero and not specified. Defaults to 1.",
    "    ",
    "",
    "",
]
STRATEGY = [
    "GROUP:      apps",
    "KIND:       Deployment",
    "VERSION:    v1",
    "",
    "FIELD: strategy <DeploymentStrategy>",
    "",
    "",
    "DESCRIPTION:",
    "    The deployment strategy to use to replace existing pods with new ones.",
    "    DeploymentStrategy describes how to replace existing pods with new ones.",
    "    ",
    "FIELDS:",
    "  rollingUpdate\t<RollingUpdateDeployment>",
    "    Rolling update config params. Present only if DeploymentStrategyType =",
    "    RollingUpdate.",
    "",
    "  type\t<string>",
    "  enum: Recreate, RollingUpdate",
    '    Type of deployment. Can be "Recreate" or "RollingUpdate". Default is',
    "    RollingUpdate.",
    "    ",
    "    Possible enum values:",
    '     - `"Recreate"` Kill all existing pods before creating new ones.',
    '     - `"RollingUpdate"` Replace the old ReplicaSets by new one using rolling',
    "    update i.e gradually scale down the old ReplicaSets and scale up the new",
    "    one.",
    "",
    "",
    "",
]


@pytest.mark.parametrize(("field", "expected"), [("replicas", REPLICAS), ("strategy", STRATEGY)])
async def test_explain_a_builtin_field(
    backend: Backend, tmp_path: Path, field: str, expected: list[str]
) -> None:
    assert await kubectl_ok(backend, tmp_path, "explain", f"deployment.spec.{field}") == (
        "\n".join(expected)
    )


GADGET = {
    "type": "object",
    "description": "Gadget is a thing with a size.",
    "properties": {
        "spec": {
            "type": "object",
            "description": "Spec is what the gadget should be.",
            "required": ["size"],
            "properties": {
                "size": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "Size of the gadget, in centimetres.",
                },
                "color": {
                    "type": "string",
                    "enum": ["red", "blue"],
                    "description": "Color of the gadget.",
                },
            },
        },
    },
}


def gadget_header(group: str) -> list[str]:
    return [f"GROUP:      {group}", "KIND:       Gadget", "VERSION:    v1", ""]


def gadget_kind(group: str) -> list[str]:
    return [
        *gadget_header(group),
        "DESCRIPTION:",
        "    Gadget is a thing with a size.",
        "    ",
        "FIELDS:",
        "  apiVersion\t<string>",
        "    APIVersion defines the versioned schema of this representation of an object.",
        "    Servers should convert recognized schemas to the latest internal value, and",
        "    may reject unrecognized values. More info:",
        f"    {API_CONVENTIONS}#resources",
        "",
        "  kind\t<string>",
        "    Kind is a string value representing the REST resource this object",
        "    represents. Servers may infer this from the endpoint the client submits",
        "    requests to. Cannot be updated. In CamelCase. More info:",
        f"    {API_CONVENTIONS}#types-kinds",
        "",
        "  metadata\t<ObjectMeta>",
        "    Standard object's metadata. More info:",
        f"    {API_CONVENTIONS}#metadata",
        "",
        "  spec\t<Object>",
        "    Spec is what the gadget should be.",
        "",
        "",
        "",
    ]


def gadget_spec(group: str) -> list[str]:
    return [
        *gadget_header(group),
        "FIELD: spec <Object>",
        "",
        "",
        "DESCRIPTION:",
        "    Spec is what the gadget should be.",
        "    ",
        "FIELDS:",
        "  color\t<string>",
        "  enum: red, blue",
        "    Color of the gadget.",
        "",
        "  size\t<integer> -required-",
        "    Size of the gadget, in centimetres.",
        "",
        "",
        "",
    ]


def gadget_color(group: str) -> list[str]:
    return [
        *gadget_header(group),
        "FIELD: color <string>",
        "ENUM:",
        "    red",
        "    blue",
        "",
        "DESCRIPTION:",
        "    Color of the gadget.",
        "    ",
        "",
        "",
    ]


async def test_explain_a_custom_resource(backend: Backend, tmp_path: Path) -> None:
    group = f"{backend.namespace}.example.com"
    await install_crd(backend, schema_crd(group, "Gadget", GADGET))
    await published(backend, tmp_path, f"apis/{group}/v1")
    for path, expected in (
        ("", gadget_kind),
        (".spec", gadget_spec),
        (".spec.color", gadget_color),
    ):
        printed = await kubectl_ok(backend, tmp_path, "explain", f"gadgets.{group}{path}")
        assert printed == "\n".join(expected(group)), path


async def published(backend: Backend, tmp_path: Path, gv_path: str, timeout: float = 30) -> None:
    """Wait until ``/openapi/v3`` lists ``gv_path``: kube-apiserver's CRD OpenAPI controller
    publishes a new CRD's schema a moment after it is served (no event tells when)."""
    deadline = time.monotonic() + timeout
    while f'"{gv_path}"' not in await kubectl_ok(backend, tmp_path, "get", "--raw", "/openapi/v3"):
        if time.monotonic() > deadline:
            pytest.fail(f"{gv_path} not in /openapi/v3 after {timeout} s")
        await asyncio.sleep(0.2)


async def kubectl_ok(backend: Backend, tmp_path: Path, *args: str) -> str:
    """kubectl's stdout (the test fails on a non-zero exit)."""
    code, out, err = await kubectl(backend, tmp_path, *args)
    assert code == 0, err
    return out


CONTAINER_PORT = {
    "description": "ContainerPort represents a network port in a single container.",
    "type": "object",
    "required": ["containerPort"],
    "properties": {
        "containerPort": {
            "description": "Number of port to expose on the pod's IP address. This must be a"
            " valid port number, 0 < x < 65536.",
            "type": "integer",
            "format": "int32",
            "default": 0,
        },
        "hostIP": {"description": "What host IP to bind the external port to.", "type": "string"},
        "hostPort": {
            "description": "Number of port to expose on the host. If specified, this must be a"
            " valid port number, 0 < x < 65536. If HostNetwork is specified, this must match"
            " ContainerPort. Most containers do not need this.",
            "type": "integer",
            "format": "int32",
        },
        "name": {
            "description": "If specified, this must be an IANA_SVC_NAME and unique within the"
            " pod. Each named port in a pod must have a unique name. Name for the port that can"
            " be referred to by services.",
            "type": "string",
        },
        "protocol": {
            "description": 'Protocol for port. Must be UDP, TCP, or SCTP. Defaults to "TCP".'
            '\n\nPossible enum values:\n - `"SCTP"` is the SCTP protocol.\n - `"TCP"` is the'
            ' TCP protocol.\n - `"UDP"` is the UDP protocol.',
            "type": "string",
            "default": "TCP",
            "enum": ["SCTP", "TCP", "UDP"],
        },
    },
}


async def test_a_builtin_schema_as_kube_apiserver_serves_it(
    backend: Backend, tmp_path: Path
) -> None:
    """Descriptions, enums and defaults where kube-apiserver has them (and no others)."""
    document = json.loads(await kubectl_ok(backend, tmp_path, "get", "--raw", "/openapi/v3/api/v1"))
    assert document["components"]["schemas"]["io.k8s.api.core.v1.ContainerPort"] == CONTAINER_PORT


async def test_int_or_string_fields_are_explained_as_such(backend: Backend, tmp_path: Path) -> None:
    """IntOrString is no string in /openapi/v3 (a ``oneOf`` of integer and string), so
    ``kubectl explain`` names its type, as on kube-apiserver."""
    out = await kubectl_ok(
        backend, tmp_path, "explain", "deployment.spec.strategy.rollingUpdate", "--recursive"
    )
    assert "  maxSurge\t<IntOrString>" in out.splitlines(), out
    document = json.loads(await kubectl_ok(backend, tmp_path, "get", "--raw", "/openapi/v3/api/v1"))
    schema = document["components"]["schemas"]["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]
    assert {k: v for k, v in schema.items() if k != "description"} == {
        "format": "int-or-string",
        "oneOf": [{"type": "integer"}, {"type": "string"}],
    }


@pytest.mark.parametrize(
    ("group_version", "collection", "schema"),
    [
        ("api/v1", "/api/v1/namespaces/{namespace}/bindings", "io.k8s.api.core.v1.Binding"),
        (
            "apis/authentication.k8s.io/v1",
            "/apis/authentication.k8s.io/v1/tokenreviews",
            "io.k8s.api.authentication.v1.TokenReview",
        ),
        (
            "apis/authorization.k8s.io/v1",
            "/apis/authorization.k8s.io/v1/subjectaccessreviews",
            "io.k8s.api.authorization.v1.SubjectAccessReview",
        ),
    ],
)
async def test_create_only_kinds_are_described_by_their_go_types(
    backend: Backend, tmp_path: Path, group_version: str, collection: str, schema: str
) -> None:
    """A kind that is only created (a binding, a review) has its kube-apiserver schema
    and a POST on its collection only: no item path, no list schema."""
    document = json.loads(
        await kubectl_ok(backend, tmp_path, "get", "--raw", f"/openapi/v3/{group_version}")
    )
    post = document["paths"][collection]["post"]
    body = post["requestBody"]["content"]
    assert {c["schema"]["$ref"] for c in body.values()} == {f"#/components/schemas/{schema}"}
    assert schema in document["components"]["schemas"]
    assert f"{collection}/{{name}}" not in document["paths"]
    assert not [name for name in document["components"]["schemas"] if name.startswith(".")]


async def test_each_group_versions_document_describes_that_version(
    backend: Backend, tmp_path: Path
) -> None:
    """Every document of the /openapi/v3 index has the paths of its own group/version
    (HorizontalPodAutoscaler's autoscaling/v1 and v2 have alike resources; the v2 URL
    served v1's document, and kubectl's client-side validation of a v2 HPA failed), and
    ``kubectl apply`` of a v2 HorizontalPodAutoscaler validates against it."""
    index = json.loads(await kubectl_ok(backend, tmp_path, "get", "--raw", "/openapi/v3"))
    wrong = {}
    for group_version, entry in index["paths"].items():
        if not group_version.startswith(("api/", "apis/")) or group_version.count("/") < 1:
            continue
        url = entry["serverRelativeURL"]
        document = json.loads(await kubectl_ok(backend, tmp_path, "get", "--raw", url))
        others = [p for p in document["paths"] if not p.startswith(f"/{group_version}/")]
        if others:
            wrong[group_version] = others[:3]
    assert not wrong
    manifest = tmp_path / "hpa.json"
    manifest.write_text(
        json.dumps(
            {
                "apiVersion": "autoscaling/v2",
                "kind": "HorizontalPodAutoscaler",
                "metadata": {"name": "web", "namespace": backend.namespace},
                "spec": {
                    "scaleTargetRef": {
                        "apiVersion": "apps/v1",
                        "kind": "Deployment",
                        "name": "web",
                    },
                    "maxReplicas": 3,
                },
            }
        )
    )
    out = await kubectl_ok(backend, tmp_path, "apply", "-f", str(manifest))
    assert out == "horizontalpodautoscaler.autoscaling/web created\n"
