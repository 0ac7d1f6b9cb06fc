"""Kubernetes API paths: which resource a request path addresses (the metric label of
requests and the name of their trace spans) and which object (the messages of writes
:mod:`.fencehook` refuses). Imported by :mod:`.request`, :mod:`.tracing` and
:mod:`.fencehook`, so none imports another for it."""

from __future__ import annotations

__all__ = ["object_of_path", "resource_of"]


def resource_of(path: str) -> str:
    """The resource (and subresource) a Kubernetes API path addresses:
    ``/api/v1/namespaces/ns/pods/a/status`` -> ``pods/status``; the path itself for
    non-resource URLs."""
    rest = _after_version(path)
    if rest is None:
        return path
    if rest[:1] == ["watch"]:
        rest = rest[1:]
    if len(rest) >= 2 and rest[0] == "namespaces" and len(rest) != 2:
        rest = rest[2:]  # namespaced: namespaces/<ns>/<resource>/...
    if not rest:
        return path
    return rest[0] + (f"/{rest[2]}" if len(rest) >= 3 else "")


def object_of_path(path: str) -> tuple[str | None, str | None, str | None]:
    """``(resource, namespace, name)`` of an API path (``/api/v1/namespaces/ns/pods/p``,
    ``/apis/g/v/namespaces/ns/widgets/w/status``; None where the path has none), for
    the messages of a refused write."""
    rest = _after_version(path) or []
    namespace = None
    if len(rest) >= 3 and rest[0] == "namespaces":
        namespace, rest = rest[1], rest[2:]
    elif len(rest) == 2 and rest[0] == "namespaces":  # a Namespace itself
        return "namespaces", None, rest[1]
    resource = rest[0] if rest else None
    name = rest[1] if len(rest) > 1 else None
    return resource, namespace, name


def _after_version(path: str) -> list[str] | None:
    """The segments of a resource path after ``/api/v1`` or ``/apis/<group>/<version>``
    (at least one); None for a non-resource URL."""
    parts = [p for p in path.split("/") if p]
    if parts[:1] == ["api"] and len(parts) >= 3:
        return parts[2:]
    if parts[:1] == ["apis"] and len(parts) >= 4:
        return parts[3:]
    return None
