"""Discovery documents: /version, /api, /apis, /apis/{group}, and APIResourceLists.

Shapes follow k8s.io/apiserver pkg/endpoints/discovery (legacy, non-aggregated
discovery: clients fall back to it when aggregated discovery is not offered).
"""

from __future__ import annotations

from typing import Any

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
