"""The 422 Invalid answers of the kind validation tables (tests/conformance/test_validation_*):
causes as (reason, field, message) triples and the Status kube-apiserver builds of them."""

from __future__ import annotations

from typing import Any

from .kube import Reply, status_body

Cause = tuple[str, str, str]


def invalid(kind: str, group: str, name: str, causes: list[Cause]) -> dict[str, Any]:
    """The Status of a 422 Invalid (apimachinery errors.NewInvalid): its message joins
    ``field: message`` of every cause, each text once (one alone, several in brackets)."""
    parts = list(dict.fromkeys(f"{field}: {message}" for _, field, message in causes))
    summary = parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"
    qualified = f"{kind}.{group}" if group else kind
    details: dict[str, Any] = {"name": name}
    if group:
        details["group"] = group
    details["kind"] = kind
    details["causes"] = [
        {"reason": reason, "message": message, "field": field} for reason, field, message in causes
    ]
    return status_body(422, "Invalid", f'{qualified} "{name}" is invalid: {summary}', details)


def causes_of(reply: Reply) -> list[Cause]:
    """The (reason, field, message) triples of a refusal's causes."""
    causes = (reply.body.get("details") or {}).get("causes") or []
    return [(c["reason"], c.get("field", ""), c["message"]) for c in causes]
