"""The log of requests the embedded API server served, for tests to assert on."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .authn import User


@dataclass
class RequestRecord:
    """One served request.

    Attributes:
        method: HTTP method (``GET``, ``PATCH``, ...).
        path: URL path.
        query: query parameters (last value of each).
        content_type: the request's Content-Type without parameters.
        body: the decoded request body (JSON/YAML), or None (a JSON, merge or strategic
            merge PATCH body that is no JSON: an ``UndecodedPatch``).
        status: the response's HTTP status (200 for a watch that started).
        verb: Kubernetes verb (get, list, watch, create, update, patch, delete,
            deletecollection), or "" for non-resource paths.
        resource, subresource, namespace, name, group: what the path addressed.
        user: who sent it (the admin, or a ServiceAccount with a TokenRequest token).
        user_agent: its ``User-Agent``; traceparent: its W3C ``traceparent`` ("" if none).
    """

    method: str
    path: str
    query: dict[str, str]
    content_type: str
    body: Any
    status: int = 0
    verb: str = ""
    group: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    user_agent: str = field(default="", repr=False)
    traceparent: str = field(default="", repr=False)
    user: User | None = field(default=None, repr=False)


class RequestLog(list[RequestRecord]):
    """A list of :class:`RequestRecord` with filtering helpers."""

    def filter(self, **match: Any) -> list[RequestRecord]:
        """Records whose attributes equal every keyword given, e.g. ``filter(verb="patch")``."""
        return [r for r in self if all(getattr(r, k) == v for k, v in match.items())]

    def count(self, *args: Any, **match: Any) -> int:
        """How many records match (see :meth:`filter`); with a positional arg, list.count."""
        if args:
            return super().count(*args)
        return len(self.filter(**match))

    def writes(self) -> list[RequestRecord]:
        """Records of create, update, patch, delete and deletecollection requests."""
        return [
            r for r in self if r.verb in ("create", "update", "patch", "delete", "deletecollection")
        ]
