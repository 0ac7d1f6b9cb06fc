"""``meta.k8s.io/v1`` Table responses (what ``kubectl get`` asks for)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from .resources import ResourceType

Doc = dict[str, Any]


def wants_table(accept: str) -> bool:
    """Whether an Accept header asks for a Table (``as=Table;g=meta.k8s.io``)."""
    return "as=Table" in accept


def _age(timestamp: str | None) -> str:
    if not timestamp:
        return "<unknown>"
    created = datetime.strptime(timestamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    seconds = int((datetime.now(UTC) - created).total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{max(seconds, 0)}s"


def to_table(rt: ResourceType, objects: list[Doc], list_meta: Doc | None) -> Doc:
    """A Table of ``objects`` with NAME and AGE columns."""
    columns = [
        {"name": "Name", "type": "string", "format": "name", "description": "Name", "priority": 0},
        {"name": "Age", "type": "string", "format": "", "description": "Age", "priority": 0},
    ]
    rows = [
        {"cells": [o["metadata"]["name"], _age(o["metadata"].get("creationTimestamp"))],
         "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                    "metadata": o["metadata"]}}
        for o in objects
    ]
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": list_meta or {},
            "columnDefinitions": columns, "rows": rows}
