"""OpenAPI documents (/openapi/v3, /openapi/v2) for clients that validate against them."""

from __future__ import annotations

from typing import Any

from .registry import Registry

Doc = dict[str, Any]


def _gv_path(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


def openapi_v3_index(registry: Registry) -> Doc:
    """The /openapi/v3 index: one entry per served group/version."""
    paths: Doc = {}
    gvs = {(rt.group, rt.version) for rt in registry.all()}
    for group, version in sorted(gvs):
        path = _gv_path(group, version)
        paths[path] = {"serverRelativeURL": f"/openapi/v3/{path}?hash=0"}
    return {"paths": paths}


def openapi_v3_doc(registry: Registry, gv_path: str) -> Doc | None:
    """The OpenAPI v3 document of one group/version (``api/v1``, ``apis/apps/v1``)."""
    parts = gv_path.strip("/").split("/")
    if parts[0] == "api" and len(parts) == 2:
        group, version = "", parts[1]
    elif parts[0] == "apis" and len(parts) == 3:
        group, version = parts[1], parts[2]
    else:
        return None
    if not registry.resources(group, version):
        return None
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": "v1.32.0"},
            "paths": {}, "components": {"schemas": {}}}


def openapi_v2(registry: Registry) -> Doc | None:
    """No OpenAPI v2 document is served (clients fall back or use v3)."""
    return None
