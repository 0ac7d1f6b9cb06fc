"""Kubernetes API paths: which resource a request path addresses (the metric label of
requests and the name of their trace spans). Imported by :mod:`.request` and
:mod:`.tracing`, so neither imports the other for it."""

from __future__ import annotations

__all__ = ["resource_of"]


def resource_of(path: str) -> str:
    """The resource (and subresource) a Kubernetes API path addresses:
    ``/api/v1/namespaces/ns/pods/a/status`` -> ``pods/status``; the path itself for
    non-resource URLs."""
    parts = [p for p in path.split("/") if p]
    if parts[:1] == ["api"] and len(parts) >= 3:
        rest = parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 4:
        rest = parts[3:]
    else:
        return path
    if rest[:1] == ["watch"]:
        rest = rest[1:]
    if len(rest) >= 2 and rest[0] == "namespaces" and len(rest) != 2:
        rest = rest[2:]  # namespaced: namespaces/<ns>/<resource>/...
    if not rest:
        return path
    return rest[0] + (f"/{rest[2]}" if len(rest) >= 3 else "")
