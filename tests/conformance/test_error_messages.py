"""Error answers worded as kube-apiserver 1.32.5 words them (issue 28, point 6): bodies
that do not decode or are of another kind, continue tokens that do not decode, an invalid
``generateName``, a namespaced path to a cluster-scoped custom resource, a custom
resource without apiVersion/kind, and the Table columns' types.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from reconcile_kit.testing.backends import Backend

from ..kubehttp import send
from .kube import Widgets, install_crd, ok, req, status_body

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


def bad_request(message: str) -> dict[str, Any]:
    return status_body(400, "BadRequest", message, None)


def configmaps(backend: Backend) -> str:
    return f"/api/v1/namespaces/{backend.namespace}/configmaps"


@pytest.mark.parametrize(
    ("raw", "problem", "shown"),
    [
        (
            '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},',
            "unexpected end of JSON input",
            '{"apiVersion":"v1","kind":"Con ...',
        ),
        (
            "{not json",
            "invalid character 'n' looking for beginning of object key string",
            "{not json",
        ),
        (
            '{"a": tru}',
            "invalid character '}' in literal true (expecting 'e')",
            '{"a": tru}',
        ),
        (
            "[1,2]",
            "json: cannot unmarshal array into Go value of type struct { APIVersion string"
            ' "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }',
            "5b312c325d",
        ),
    ],
)
@pytest.mark.parametrize("method", ["POST", "PUT"])
async def test_a_body_that_does_not_decode(
    backend: Backend, raw: str, problem: str, shown: str, method: str
) -> None:
    path = configmaps(backend) + ("/x" if method == "PUT" else "")
    reply = await req(backend, method, path, raw=raw.encode())
    assert reply.body == bad_request(
        "the object provided is unrecognized (must be of type ConfigMap): couldn't get"
        f" version/kind; json parse error: {problem} ({shown})"
    )


@pytest.mark.parametrize(
    ("api_version", "kind", "why"),
    [
        ("v1", "Secret", "converting (v1.Secret) to (core.ConfigMap): unknown conversion"),
        (
            "apps/v1",
            "Deployment",
            "converting (v1.Deployment) to (core.ConfigMap): unknown conversion",
        ),
        (
            "v1",
            "Foo",
            'no kind "Foo" is registered for version "v1" in scheme "pkg/runtime/scheme.go:100"',
        ),
        (
            "apps/v1",
            "ConfigMap",
            'no kind "ConfigMap" is registered for version "apps/v1" in scheme'
            ' "pkg/runtime/scheme.go:100"',
        ),
    ],
)
async def test_a_body_of_another_kind(
    backend: Backend, api_version: str, kind: str, why: str
) -> None:
    body = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}}
    reply = await req(backend, "POST", configmaps(backend), body)
    version = api_version.rpartition("/")[2]
    assert reply.body == bad_request(
        f'{kind} in version "{version}" cannot be handled as a ConfigMap: {why}'
    )


async def test_a_deployment_posted_to_rbac_names_its_internal_package(backend: Backend) -> None:
    path = f"/apis/rbac.authorization.k8s.io/v1/namespaces/{backend.namespace}/roles"
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}
    reply = await req(backend, "POST", path, body)
    assert reply.body == bad_request(
        'ConfigMap in version "v1" cannot be handled as a Role: converting (v1.ConfigMap) to'
        " (rbac.Role): unknown conversion"
    )


_NOT_SERVED = "the API version in the data ({}) does not match the expected API version ({})"


@pytest.mark.parametrize(
    ("path", "api_version", "kind", "message"),
    [
        ("/apis/apps/v1/namespaces/{ns}/deployments", "apps/v1beta1", "Deployment", ""),
        ("/apis/apps/v1/namespaces/{ns}/deployments", "extensions/v1beta1", "Deployment", ""),
        ("/apis/batch/v1/namespaces/{ns}/cronjobs", "batch/v1beta1", "CronJob", ""),
        (
            "/apis/networking.k8s.io/v1/namespaces/{ns}/ingresses",
            "extensions/v1beta1",
            "Ingress",
            "",
        ),
        (
            "/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets",
            "policy/v1beta1",
            "PodDisruptionBudget",
            "",
        ),
        (
            "/apis/autoscaling/v2/namespaces/{ns}/horizontalpodautoscalers",
            "autoscaling/v1",
            "HorizontalPodAutoscaler",
            "",
        ),
        (
            "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles",
            "rbac.authorization.k8s.io/v1beta1",
            "Role",
            "",
        ),
        (
            "/apis/apps/v1/namespaces/{ns}/daemonsets",
            "apps/v1beta1",
            "DaemonSet",
            'DaemonSet in version "v1beta1" cannot be handled as a DaemonSet: no kind "DaemonSet"'
            ' is registered for version "apps/v1beta1" in scheme "pkg/runtime/scheme.go:100"',
        ),
    ],
)
async def test_an_older_version_of_the_kind(
    backend: Backend, path: str, api_version: str, kind: str, message: str
) -> None:
    """Versions kube-apiserver no longer serves but still decodes (apps/v1beta1,
    extensions/v1beta1, autoscaling/v1 on the v2 endpoint...) are refused after decoding;
    a kind its version never had does not decode."""
    body = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}}
    reply = await req(backend, "POST", path.format(ns=backend.namespace), body)
    expected = path.split("/namespaces")[0].removeprefix("/apis/").removeprefix("/api/")
    assert reply.body == bad_request(message or _NOT_SERVED.format(api_version, expected))


def _token(data: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


@pytest.mark.parametrize(
    ("token", "why"),
    [
        ("garbage", "invalid character '\\u0081' looking for beginning of value"),
        ("abc=", "illegal base64 data at input byte 3"),
        ("abcde", "illegal base64 data at input byte 4"),
        (_token({"rv": 1, "start": "x"}), "server does not recognize this encoded version "),
        (
            _token({"v": "meta.k8s.io/v1", "rv": 0, "start": "x"}),
            "incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
        ),
        (
            _token({"v": "meta.k8s.io/v1", "rv": 5, "start": ""}),
            "encoded start key empty (version meta.k8s.io/v1)",
        ),
        (_token({"v": "meta.k8s.io/v1", "rv": 5, "start": "a/../b"}), "a/../b"),
        (
            _token({"v": "meta.k8s.io/v1", "rv": "5", "start": "x"}),
            "json: cannot unmarshal string into Go struct field continueToken.rv of type int64",
        ),
    ],
)
async def test_a_continue_token_that_does_not_decode(
    backend: Backend, token: str, why: str
) -> None:
    reply = await req(backend, "GET", configmaps(backend), params={"limit": "1", "continue": token})
    assert reply.body == bad_request(f"invalid continue token: continue key is not valid: {why}")


async def test_continue_tokens_page_through_a_list(backend: Backend) -> None:
    for name in ("a", "b", "c"):
        body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}
        await ok(backend, "POST", configmaps(backend), body)
    first = await ok(backend, "GET", configmaps(backend), params={"limit": "2"})
    token = first["metadata"]["continue"]
    decoded = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    assert decoded == {
        "v": "meta.k8s.io/v1",
        "rv": int(first["metadata"]["resourceVersion"]),
        "start": "/b\x00",  # relative to the namespace listed
    }
    rest = await ok(backend, "GET", configmaps(backend), params={"limit": "2", "continue": token})
    assert [i["metadata"]["name"] for i in rest["items"]] == ["c"]


SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-'"
    " or '.', and must start and end with an alphanumeric character (e.g. 'example.com',"
    " regex used for validation is"
    " '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


async def test_an_invalid_generate_name_is_a_cause(backend: Backend) -> None:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "Bad_Name"}}
    reply = await req(backend, "POST", configmaps(backend), body)
    assert reply.status == 422
    name = reply.body["details"]["name"]
    assert re.fullmatch("Bad_Name[a-z0-9]{5}", name)
    causes = [
        ("metadata.generateName", f'Invalid value: "Bad_Name": {SUBDOMAIN}'),
        ("metadata.name", f'Invalid value: "{name}": {SUBDOMAIN}'),
    ]
    assert reply.body == status_body(
        422,
        "Invalid",
        f'ConfigMap "{name}" is invalid: [' + ", ".join(f"{f}: {m}" for f, m in causes) + "]",
        {
            "name": name,
            "kind": "ConfigMap",
            "causes": [
                {"reason": "FieldValueInvalid", "message": m, "field": f} for f, m in causes
            ],
        },
    )


async def test_a_generate_name_may_end_in_a_dash(backend: Backend) -> None:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "ok-"}}
    created = await ok(backend, "POST", configmaps(backend), body)
    assert created["metadata"]["name"].startswith("ok-")


@pytest_asyncio.fixture
async def cluster_things(backend: Backend) -> AsyncIterator[str]:
    group = f"{backend.namespace}.things.example.com"
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"clusterthings.{group}"},
        "spec": {
            "group": group,
            "scope": "Cluster",
            "names": {
                "plural": "clusterthings",
                "singular": "clusterthing",
                "kind": "ClusterThing",
            },
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "x-kubernetes-preserve-unknown-fields": True,
                        }
                    },
                }
            ],
        },
    }
    await install_crd(backend, crd)
    yield group
    await req(
        backend,
        "DELETE",
        f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/clusterthings.{group}",
    )


@pytest.mark.parametrize("method", ["GET", "POST"])
async def test_a_namespaced_path_to_a_cluster_scoped_custom_resource(
    backend: Backend, cluster_things: str, method: str
) -> None:
    path = f"/apis/{cluster_things}/v1/namespaces/{backend.namespace}/clusterthings"
    body = {"apiVersion": f"{cluster_things}/v1", "kind": "ClusterThing", "metadata": {"name": "x"}}
    status, text, headers = await send(
        backend.api, method, path, body if method == "POST" else None
    )
    assert (status, text) == (404, "404 page not found\n")
    assert headers["content-type"].startswith("text/plain")


async def test_a_namespaced_path_to_a_cluster_scoped_built_in(backend: Backend) -> None:
    reply = await req(backend, "GET", f"/api/v1/namespaces/{backend.namespace}/nodes")
    assert reply.body == status_body(
        404, "NotFound", "the server could not find the requested resource", {}
    )


async def test_a_custom_resource_without_kind_or_api_version(
    backend: Backend, widgets: Widgets
) -> None:
    no_kind = json.dumps({"apiVersion": widgets.api_version, "metadata": {"name": "x"}})
    reply = await req(backend, "POST", widgets.path, raw=no_kind.encode())
    summary = no_kind[:30] + " ..."
    assert reply.body == bad_request(
        "the object provided is unrecognized (must be of type Widget): Object 'Kind' is"
        f" missing in '{no_kind}' ({summary})"
    )
    reply = await req(backend, "POST", widgets.path, {"kind": "Widget", "metadata": {"name": "x"}})
    assert reply.body == bad_request(
        "the API version in the data () does not match the expected API version"
        f" ({widgets.api_version})"
    )


async def test_a_built_in_without_kind_or_api_version_is_created(backend: Backend) -> None:
    created = await ok(backend, "POST", configmaps(backend), {"metadata": {"name": "x"}})
    assert (created["apiVersion"], created["kind"]) == ("v1", "ConfigMap")


@pytest.mark.parametrize(
    ("path", "types"),
    [
        ("/api/v1/namespaces/{ns}/configmaps", {"Data": "string"}),
        ("/api/v1/namespaces/{ns}/secrets", {"Data": "string"}),
        (
            "/apis/apps/v1/namespaces/{ns}/deployments",
            {"Ready": "string", "Up-to-date": "string", "Available": "string"},
        ),
        (
            "/apis/apps/v1/namespaces/{ns}/daemonsets",
            {"Desired": "integer", "Up-to-date": "integer", "Available": "integer"},
        ),
    ],
)
async def test_table_column_types(backend: Backend, path: str, types: dict[str, str]) -> None:
    status, table, _ = await send(
        backend.api, "GET", path.format(ns=backend.namespace), accept=TABLE
    )
    assert status == 200
    columns = {c["name"]: c["type"] for c in table["columnDefinitions"]}
    assert {name: columns[name] for name in types} == types


async def test_a_create_that_sets_a_resource_version(backend: Backend) -> None:
    """etcd3's store refuses to create an object carrying a resourceVersion (a plain error:
    500 without a reason), after validation; "0", text that is no number and a dry run
    pass (the dry run echoes it)."""
    sent = {"metadata": {"name": "rv", "resourceVersion": "5"}}
    reply = await req(backend, "POST", configmaps(backend), sent)
    assert reply.body == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "resourceVersion should not be set on objects to be created",
        "code": 500,
    }
    invalid = await req(
        backend, "POST", configmaps(backend), {"metadata": {"name": "X", "resourceVersion": "5"}}
    )
    assert invalid.status == 422, invalid.body
    dry = await ok(backend, "POST", configmaps(backend), sent, params={"dryRun": "All"})
    assert dry["metadata"]["resourceVersion"] == "5"
    for version in ("0", "abc"):
        body = {"metadata": {"name": f"rv-{version}", "resourceVersion": version}}
        created = await ok(backend, "POST", configmaps(backend), body)
        assert created["metadata"]["resourceVersion"] not in ("0", "abc")
