"""Discovery documents: /version, /api, /apis, /apis/{group}, and APIResourceLists.

Shapes follow k8s.io/apiserver pkg/endpoints/discovery: the legacy documents, and the
aggregated ones (``apidiscovery.k8s.io`` v2 and v2beta1 APIGroupDiscoveryLists, every
group version's resources in one document) that ``/api`` and ``/apis`` answer when the
``Accept`` header asks for them, as kubectl and client-go do.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

from .registry import Registry
from .resources import ResourceType

Doc = dict[str, Any]

KUBERNETES_VERSION = "v1.32.0"
_SERVER_ADDRESS = [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1:6443"}]


def version_doc() -> Doc:
    major, minor, _ = KUBERNETES_VERSION.lstrip("v").split(".")
    return {
        "major": major,
        "minor": minor,
        "gitVersion": KUBERNETES_VERSION,
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2024-12-11T00:00:00Z",
        "goVersion": "go1.23.3",
        "compiler": "gc",
        "platform": "linux/amd64",
    }


def core_versions() -> Doc:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": _SERVER_ADDRESS,
    }


def _group(name: str, versions: list[str], preferred: str) -> Doc:
    def gv(version: str) -> Doc:
        return {"groupVersion": f"{name}/{version}", "version": version}

    return {"name": name, "versions": [gv(v) for v in versions], "preferredVersion": gv(preferred)}


def group_list(registry: Registry) -> Doc:
    return {
        "kind": "APIGroupList",
        "apiVersion": "v1",
        "groups": [_group(*g) for g in registry.groups()],
    }


def group_doc(registry: Registry, name: str) -> Doc | None:
    for group in registry.groups():
        if group[0] == name:
            return {"kind": "APIGroup", "apiVersion": "v1", **_group(*group)}
    return None


def _resource_entries(rt: ResourceType) -> list[Doc]:
    entry: Doc = {
        "name": rt.plural,
        "singularName": rt.singular,
        "namespaced": rt.namespaced,
        # built-ins list verbs sorted; apiextensions-apiserver keeps its own order
        "kind": rt.kind,
        "verbs": sorted(rt.verbs) if rt.builtin else list(rt.verbs),
    }
    if rt.short_names:
        entry["shortNames"] = list(rt.short_names)
    if rt.categories:
        entry["categories"] = list(rt.categories)
    entry["storageVersionHash"] = ""
    entries = [entry]
    if rt.status:
        entries.append(
            {
                "name": f"{rt.plural}/status",
                "singularName": "",
                "namespaced": rt.namespaced,
                "kind": rt.kind,
                "verbs": ["get", "patch", "update"],
            }
        )
    if rt.scale is not None:
        entries.append(
            {
                "name": f"{rt.plural}/scale",
                "singularName": "",
                "namespaced": rt.namespaced,
                "group": "autoscaling",
                "version": "v1",
                "kind": "Scale",
                "verbs": ["get", "patch", "update"],
            }
        )
    if rt.plural == "serviceaccounts" and not rt.group:
        entries.append(
            {
                "name": "serviceaccounts/token",
                "singularName": "",
                "namespaced": True,
                "group": "authentication.k8s.io",
                "version": "v1",
                "kind": "TokenRequest",
                "verbs": ["create"],
            }
        )
    if rt.plural == "namespaces" and not rt.group:
        entries.append(
            {
                "name": "namespaces/finalize",
                "singularName": "",
                "namespaced": False,
                "kind": "Namespace",
                "verbs": ["update"],
            }
        )
    return entries


def resource_list(registry: Registry, group: str, version: str) -> Doc | None:
    types = registry.resources(group, version)
    if not types:
        return None
    resources = [e for rt in sorted(types, key=lambda r: r.plural) for e in _resource_entries(rt)]
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{group}/{version}" if group else version,
        "resources": resources,
    }


AGGREGATED_GROUP = "apidiscovery.k8s.io"
_AGGREGATED_VERSIONS = ("v2", "v2beta1")


def aggregated_media_type(version: str) -> str:
    """The JSON media type of an APIGroupDiscoveryList of ``version`` (v2, v2beta1)."""
    return f"application/json;g={AGGREGATED_GROUP};v={version};as=APIGroupDiscoveryList"


def aggregated_version(accept: str) -> str | None:
    """The version of the first aggregated discovery media type ``accept`` lists (JSON,
    v2 or v2beta1: ``application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList``),
    wherever it stands among the others (kube-apiserver's aggregated handler restricts the
    negotiation to those); None when it lists none but forms not served (protobuf)."""
    for media_range in accept.split(","):
        kind, *params = [part.strip() for part in media_range.split(";")]
        values = dict(p.split("=", 1) for p in params if "=" in p)
        if values.get("g") != AGGREGATED_GROUP:
            continue
        version = values.get("v")
        listed = kind == "application/json" and values.get("as") == "APIGroupDiscoveryList"
        if listed and version in _AGGREGATED_VERSIONS:
            return version
    return None


def aggregated(registry: Registry, core: bool, version: str) -> tuple[bytes, str]:
    """``/api`` (``core``) or ``/apis`` as an APIGroupDiscoveryList of ``version``: its
    JSON and its ETag (a hash of it)."""
    if core:
        items = [
            {"metadata": {"creationTimestamp": None}, "versions": _versions(registry, "", ["v1"])}
        ]
    else:
        items = [
            {
                "metadata": {"name": name, "creationTimestamp": None},
                "versions": _versions(registry, name, versions),
            }
            for name, versions, _ in registry.groups()
        ]
    doc = {
        "kind": "APIGroupDiscoveryList",
        "apiVersion": f"{AGGREGATED_GROUP}/{version}",
        "metadata": {},
        "items": items,
    }
    body = orjson.dumps(doc)
    return body, hashlib.sha512(body).hexdigest().upper()


def _versions(registry: Registry, group: str, versions: list[str]) -> list[Doc]:
    """A group's versions (in the legacy document's order) with their resources."""
    out = []
    for version in versions:
        types = sorted(registry.resources(group, version), key=lambda rt: rt.plural)
        resources = [_aggregated_resource(rt, _resource_entries(rt)) for rt in types]
        out.append({"version": version, "resources": resources, "freshness": "Current"})
    return out


def _aggregated_resource(rt: ResourceType, entries: list[Doc]) -> Doc:
    """An APIResourceDiscovery from a resource's legacy entries (itself, then its
    subresources). A built-in kind's response kinds leave their own group and version
    out and its subresources come sorted (the endpoint installer's); a custom resource's
    name them, status before scale (apiextensions-apiserver's discovery controller)."""
    main, *subresources = entries
    own = {"group": "", "version": ""} if rt.builtin else {"group": rt.group, "version": rt.version}
    if rt.builtin:
        subresources.sort(key=lambda e: str(e["name"]))
    resource: Doc = {
        "resource": main["name"],
        "responseKind": {**own, "kind": main["kind"]},
        "scope": "Namespaced" if main["namespaced"] else "Cluster",
        "singularResource": main["singularName"],
        "verbs": main["verbs"],
    }
    for legacy, field in (("shortNames", "shortNames"), ("categories", "categories")):
        if main.get(legacy):
            resource[field] = main[legacy]
    if subresources:
        resource["subresources"] = [
            {
                "subresource": entry["name"].split("/", 1)[1],
                "responseKind": {
                    "group": entry.get("group", own["group"]),
                    "version": entry.get("version", own["version"]),
                    "kind": entry["kind"],
                },
                "verbs": entry["verbs"],
            }
            for entry in subresources
        ]
    return resource
