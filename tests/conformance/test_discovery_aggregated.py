"""Aggregated discovery (``apidiscovery.k8s.io``): ``/api`` and ``/apis`` answer an
APIGroupDiscoveryList when the ``Accept`` header asks for one, as kubectl and client-go
do, holding what the legacy documents hold; kubectl then asks no group version."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from reconcile_kit.testing.backends import Backend

from .kube import crd_document, install_crd, kubectl, ok

V2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
V2BETA1 = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
KUBECTL_ACCEPT = f"{V2},{V2BETA1},application/json"


async def get(backend: Backend, path: str, **headers: str) -> httpx.Response:
    """GET ``path`` with exactly ``headers`` (no client adds an Accept of its own)."""
    config = yaml.safe_load(Path(backend.server.kubeconfig).read_text())
    user = config["users"][0]["user"]
    server = config["clusters"][0]["cluster"]["server"]
    if user.get("token"):
        headers["Authorization"] = f"Bearer {user['token']}"
    async with httpx.AsyncClient(verify=False, timeout=30) as client:
        return await client.get(server + path, headers=headers)


def builtin(group: str) -> bool:
    """kube-apiserver's own groups (a CRD's group has a dot and is no ``*.k8s.io``)."""
    return "." not in group or group.endswith(".k8s.io")


def legacy_resources(listed: dict[str, Any]) -> dict[str, Any]:
    """A legacy APIResourceList as the aggregated document words it (a subresource's
    kind in its own group version unless it names another)."""
    group, _, version = listed["groupVersion"].rpartition("/")
    own = ("", "") if builtin(group) else (group, version)
    out: dict[str, Any] = {}
    for entry in listed["resources"]:
        name, _, sub = entry["name"].partition("/")
        if not sub:
            out[name] = {
                "scope": "Namespaced" if entry["namespaced"] else "Cluster",
                "singularResource": entry["singularName"],
                "kind": entry["kind"],
                "verbs": entry["verbs"],
                "shortNames": entry.get("shortNames", []),
                "categories": entry.get("categories", []),
                "subresources": {},
            }
        else:
            kind = (entry.get("group", own[0]), entry.get("version", own[1]), entry["kind"])
            out[name]["subresources"][sub] = (kind, entry["verbs"])
    return out


def aggregated_resources(group: str, version: dict[str, Any]) -> dict[str, Any]:
    """An aggregated group version's resources, their response kinds checked: a
    built-in kind's without its own group and version and its subresources sorted, a
    custom resource's naming them, status before scale."""
    own = ("", "") if builtin(group) else (group, version["version"])
    out: dict[str, Any] = {}
    for resource in version["resources"]:
        kind = resource["responseKind"]
        assert (kind["group"], kind["version"]) == own
        subresources = resource.get("subresources", [])
        names = [s["subresource"] for s in subresources]
        assert names == (sorted(names) if builtin(group) else sorted(names, reverse=True))
        out[resource["resource"]] = {
            "scope": resource["scope"],
            "singularResource": resource["singularResource"],
            "kind": kind["kind"],
            "verbs": resource["verbs"],
            "shortNames": resource.get("shortNames", []),
            "categories": resource.get("categories", []),
            "subresources": {
                s["subresource"]: (
                    (
                        s["responseKind"]["group"],
                        s["responseKind"]["version"],
                        s["responseKind"]["kind"],
                    ),
                    s["verbs"],
                )
                for s in subresources
            },
        }
    return out


@pytest.mark.parametrize("root", ["/api", "/apis"])
async def test_an_aggregated_document_holds_what_the_legacy_ones_hold(
    backend: Backend, root: str
) -> None:
    # a custom resource with both subresources: its response kinds are named
    await install_crd(backend, crd_document(f"{backend.namespace}.aggregated.example.com"))
    reply = await get(backend, root, Accept=KUBECTL_ACCEPT)
    assert reply.status_code == 200, reply.text
    assert reply.headers["content-type"] == V2
    assert reply.headers["vary"] == "Accept"
    assert reply.headers["etag"].startswith('"')
    document = reply.json()
    assert (document["kind"], document["apiVersion"]) == (
        "APIGroupDiscoveryList",
        "apidiscovery.k8s.io/v2",
    )
    if root == "/api":
        [core] = document["items"]
        assert core["metadata"] == {"creationTimestamp": None}
        groups = {"": [("v1", "/api/v1")]}
        found = {"": core}
    else:
        legacy = await ok(backend, "GET", "/apis")
        groups = {
            g["name"]: [(v["version"], f"/apis/{v['groupVersion']}") for v in g["versions"]]
            for g in legacy["groups"]
        }
        found = {item["metadata"]["name"]: item for item in document["items"]}
        assert list(found) == list(groups)
    for name, versions in groups.items():
        item = found[name]
        assert [v["version"] for v in item["versions"]] == [v for v, _ in versions]
        for version, (_, path) in zip(item["versions"], versions, strict=True):
            assert version["freshness"] == "Current"
            listed = await ok(backend, "GET", path)
            assert aggregated_resources(name, version) == legacy_resources(listed), path


async def test_the_accept_header_picks_the_document(backend: Backend) -> None:
    beta = await get(backend, "/apis", Accept=f"{V2BETA1},application/json")
    assert beta.headers["content-type"] == V2BETA1
    assert beta.json()["apiVersion"] == "apidiscovery.k8s.io/v2beta1"
    legacy = await get(backend, "/apis", Accept="application/json")
    assert legacy.json()["kind"] == "APIGroupList"
    second = await get(backend, "/apis", Accept=f"application/json,{V2}")
    assert second.json()["kind"] == "APIGroupDiscoveryList"  # wherever it is listed
    cached = await get(backend, "/api", Accept=V2)
    again = await get(backend, "/api", Accept=V2, **{"If-None-Match": cached.headers["etag"]})
    assert again.status_code == 304


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="no kubectl on PATH")
async def test_kubectl_discovers_with_two_requests(backend: Backend, tmp_path: Path) -> None:
    code, out, err = await kubectl(backend, tmp_path, "api-resources", "-v=6")
    assert code == 0, err
    assert "deployments" in out
    asked = [line.split(" GET ")[1].split("?")[0] for line in err.splitlines() if " GET " in line]
    paths = [url.split("://", 1)[1].split("/", 1)[1] for url in asked]
    assert paths == ["api", "apis"], paths
