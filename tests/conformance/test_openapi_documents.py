"""The structure of kube-apiserver 1.32's ``/openapi/v3/<group-version>`` documents: which
component schemas a document carries and the extensions they have (the meta kinds'
``x-kubernetes-group-version-kind``, ``x-kubernetes-unions``, the descriptions of every
served kind and its list), and how kube-openapi lays out the paths (the group/version's
discovery path, the deprecated ``/watch/`` paths, parameters every operation shares moved
to the path, ``*/*`` request bodies)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reconcile_kit.testing.backends import Backend

from .test_explain import kubectl_ok, published

META = "io.k8s.apimachinery.pkg.apis.meta.v1."
CORE = "io.k8s.api.core.v1."


async def document(backend: Backend, tmp_path: Path, gv_path: str) -> Any:
    return json.loads(await kubectl_ok(backend, tmp_path, "get", "--raw", f"/openapi/v3/{gv_path}"))


def kinds(schema: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [
        (g["group"], g["version"], g["kind"]) for g in schema["x-kubernetes-group-version-kind"]
    ]


async def test_meta_kinds_name_every_group_version_of_the_scheme(
    backend: Backend, tmp_path: Path
) -> None:
    schemas = (await document(backend, tmp_path, "apis/apps/v1"))["components"]["schemas"]
    assert kinds(schemas[META + "Status"]) == [("", "v1", "Status")]
    for kind in ("DeleteOptions", "WatchEvent"):
        listed = kinds(schemas[META + kind])
        assert len(listed) == 61, kind
        assert listed == sorted(listed)
        for group_version in (
            ("", "v1"),
            ("apps", "v1beta2"),
            ("storagemigration.k8s.io", "v1alpha1"),
        ):
            assert (*group_version, kind) in listed
    assert kinds(schemas[META + "APIResourceList"]) == [("", "v1", "APIResourceList")]


async def test_every_core_kind_and_list_is_described(backend: Backend, tmp_path: Path) -> None:
    schemas = (await document(backend, tmp_path, "api/v1"))["components"]["schemas"]
    for kind in ("LimitRange", "PodTemplate", "ReplicationController", "ResourceQuota"):
        for name in (CORE + kind, CORE + kind + "List"):
            assert schemas[name]["description"], name
            assert all("description" in p for p in schemas[name]["properties"].values()), name
    assert schemas[CORE + "ScopeSelector"]["x-kubernetes-map-type"] == "atomic"
    binary = schemas[CORE + "ConfigMap"]["properties"]["binaryData"]["additionalProperties"]
    assert binary == {"type": "string", "format": "byte"}
    assert schemas[CORE + "AppArmorProfile"]["x-kubernetes-unions"] == [
        {
            "discriminator": "type",
            "fields-to-discriminateBy": {"localhostProfile": "LocalhostProfile"},
        }
    ]


async def test_review_document_has_local_subject_access_review_and_no_meta_kinds(
    backend: Backend, tmp_path: Path
) -> None:
    doc = await document(backend, tmp_path, "apis/authorization.k8s.io/v1")
    schemas = doc["components"]["schemas"]
    review = schemas["io.k8s.api.authorization.v1.LocalSubjectAccessReview"]
    assert kinds(review) == [("authorization.k8s.io", "v1", "LocalSubjectAccessReview")]
    assert review["properties"]["spec"]["allOf"] == [
        {"$ref": "#/components/schemas/io.k8s.api.authorization.v1.SubjectAccessReviewSpec"}
    ]
    assert META + "Status" not in schemas and META + "DeleteOptions" not in schemas
    path = "/apis/authorization.k8s.io/v1/namespaces/{namespace}/localsubjectaccessreviews"
    assert doc["paths"][path]["post"]["operationId"] == (
        "createAuthorizationV1NamespacedLocalSubjectAccessReview"
    )
    assert doc["info"] == {"title": "Kubernetes", "version": "1.32"}


async def test_paths_as_kube_openapi_lays_them_out(backend: Backend, tmp_path: Path) -> None:
    paths = (await document(backend, tmp_path, "apis/apps/v1"))["paths"]
    resources = paths["/apis/apps/v1/"]["get"]
    assert resources["operationId"] == "getAppsV1APIResources"
    assert set(resources["responses"]["200"]["content"]) == {
        "application/json",
        "application/yaml",
        "application/vnd.kubernetes.protobuf",
    }
    watch = paths["/apis/apps/v1/watch/namespaces/{namespace}/deployments/{name}"]
    assert watch["get"]["operationId"] == "watchAppsV1NamespacedDeployment"
    assert watch["get"]["x-kubernetes-action"] == "watch"
    assert "parameters" not in watch["get"]
    assert [p["name"] for p in watch["parameters"]][:3] == [
        "allowWatchBookmarks",
        "continue",
        "fieldSelector",
    ]
    assert "/apis/apps/v1/watch/deployments" in paths
    item = paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]
    assert [p["name"] for p in item["parameters"]] == ["name", "namespace", "pretty"]
    assert "parameters" not in item["get"]
    assert list(item["put"]["requestBody"]["content"]) == ["*/*"]
    every_namespace = paths["/apis/apps/v1/deployments"]
    assert "parameters" not in every_namespace["get"]
    assert "application/json;stream=watch" in every_namespace["get"]["responses"]["200"]["content"]
    collection = paths["/apis/apps/v1/namespaces/{namespace}/deployments"]
    names = [p["name"] for p in collection["delete"]["parameters"]]
    assert names == sorted(names) and "watch" not in names and "labelSelector" in names


async def test_crd_document(backend: Backend, tmp_path: Path, widgets: Any) -> None:
    gv_path = f"apis/{widgets.group}/v1"
    await published(backend, tmp_path, gv_path)
    doc = await document(backend, tmp_path, gv_path)
    assert doc["info"] == {"title": "Kubernetes CRD Swagger", "version": "v0.1.0"}
    assert not [p for p in doc["paths"] if "/watch/" in p]
    schemas = doc["components"]["schemas"]
    assert META + "WatchEvent" not in schemas
    listed = kinds(schemas[META + "DeleteOptions"])
    assert ("apiextensions.k8s.io", "v1", "DeleteOptions") not in listed
    assert ("apps", "v1", "DeleteOptions") in listed
    name = next(n for n in schemas if n.endswith(".v1.Widget"))
    assert schemas[name]["x-kubernetes-selectable-fields"] == []
    assert "default" not in schemas[name]["properties"]["metadata"]
    base = f"/apis/{widgets.group}/v1/namespaces/{{namespace}}/widgets"
    scale = doc["paths"][base + "/{name}/scale"]
    assert scale["get"]["x-kubernetes-group-version-kind"]["kind"] == "Widget"
    assert [p["name"] for p in scale["get"]["parameters"]] == ["resourceVersion"]
    assert "requestBody" not in doc["paths"][base]["delete"]
