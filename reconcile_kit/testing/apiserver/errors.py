"""Kubernetes API errors as ``metav1.Status`` bodies.

Reasons, codes and messages follow k8s.io/apimachinery/pkg/api/errors, so that clients
(kr8s, client-go, kubectl) see exactly what a kube-apiserver would send.
"""

from __future__ import annotations

from typing import Any

Causes = list[dict[str, str]]


class APIError(Exception):
    """An error answered with a ``Status`` object.

    Args:
        code: HTTP status code.
        reason: the ``StatusReason`` (``NotFound``, ``Conflict``, ...).
        message: human-readable message.
        details: the ``details`` block (``name``, ``group``, ``kind``, ``causes``).
        headers: extra response headers (e.g. ``Retry-After``).
    """

    def __init__(
        self,
        code: int,
        reason: str,
        message: str,
        details: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
        self.headers = headers or {}
        self.list_metadata: dict[str, Any] = {}
        """The Status's ``metadata`` (ListMeta, e.g. an expired list's ``continue``)."""
        self.warnings: list[str] = []
        """``Warning`` headers to send with the error (e.g. from admission webhooks)."""

    def status(self) -> dict[str, Any]:
        """The ``metav1.Status`` body of this error."""
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": dict(self.list_metadata),
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
        }
        if not self.reason:  # StatusReasonUnknown is "" and omitted
            del body["reason"]
        if self.details is not None:
            body["details"] = self.details
        body["code"] = self.code  # metav1.Status's field order: details, then code
        return body


def _details(group: str, plural: str, name: str, **extra: Any) -> dict[str, Any]:
    details: dict[str, Any] = {}
    if name:
        details["name"] = name
    if group:
        details["group"] = group
    details["kind"] = plural
    details.update(extra)
    return details


def qualified(group: str, plural: str) -> str:
    """``plural.group`` as used in messages (``configmaps``, ``deployments.apps``)."""
    return f"{plural}.{group}" if group else plural


def not_found(group: str, plural: str, name: str) -> APIError:
    return APIError(
        404,
        "NotFound",
        f'{qualified(group, plural)} "{name}" not found',
        _details(group, plural, name),
    )


def already_exists(group: str, plural: str, name: str) -> APIError:
    return APIError(
        409,
        "AlreadyExists",
        f'{qualified(group, plural)} "{name}" already exists',
        _details(group, plural, name),
    )


def conflict(group: str, plural: str, name: str, why: str | None = None) -> APIError:
    why = why or (
        "the object has been modified; please apply your changes to the latest version"
        " and try again"
    )
    return APIError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {qualified(group, plural)} "{name}": {why}',
        _details(group, plural, name),
    )


def invalid(kind: str, group: str, name: str, causes: Causes) -> APIError:
    """422 Invalid; ``causes`` are ``{"reason", "message", "field"}`` dicts. The message
    joins them once each (field.ErrorList.ToAggregate drops repeated texts; the causes keep
    every one)."""
    texts = (f"{c['field']}: {c['message']}" if c.get("field") else c["message"] for c in causes)
    parts = list(dict.fromkeys(texts))
    summary = parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"
    qualified_kind = f"{kind}.{group}" if group else kind
    return APIError(
        422,
        "Invalid",
        f'{qualified_kind} "{name}" is invalid: {summary}',
        {
            **({"name": name} if name else {}),  # omitempty in StatusDetails
            **({"group": group} if group else {}),
            **({"kind": kind} if kind else {}),
            "causes": causes,
        },
    )


def unknown(code: int, message: str) -> APIError:
    """An error kube-apiserver got as a plain Go error: ``ErrorToAPIStatus`` gives it no
    reason (StatusReasonUnknown) and no details."""
    return APIError(code, "", message)


def apply_conflict(conflicts: list[tuple[str, str]]) -> APIError:
    """409 for server-side apply: ``conflicts`` are ``(manager, path)`` pairs, the manager
    as displayed (``"one"`` or ``"kubectl" using v1``), the path as ``.data.x``. Message
    from sigs.k8s.io/structured-merge-diff ``Conflicts.Error`` wrapped by k8s.io/apiserver's
    field manager; details carry no name, group or kind."""
    if len(conflicts) == 1:
        manager, path = conflicts[0]
        text = f"conflict with {manager}: {path}"
    else:
        lines = []
        for manager in sorted({m for m, _ in conflicts}):
            lines.append(f"conflicts with {manager}:")
            lines += [f"- {path}" for m, path in conflicts if m == manager]
        text = "\n".join(lines)
    plural = "" if len(conflicts) == 1 else "s"
    return APIError(
        409,
        "Conflict",
        f"Apply failed with {len(conflicts)} conflict{plural}: {text}",
        {
            "causes": [
                {
                    "reason": "FieldManagerConflict",
                    "message": f"conflict with {manager}",
                    "field": path,
                }
                for manager, path in conflicts
            ]
        },
    )


def cause(reason: str, field: str, message: str) -> dict[str, str]:
    """One ``StatusCause``; reasons are ``FieldValueInvalid``, ``FieldValueRequired``, ..."""
    return {"reason": reason, "message": message, "field": field}


def bad_request(message: str) -> APIError:
    return APIError(400, "BadRequest", message)


def forbidden(group: str, plural: str, name: str, why: str) -> APIError:
    return APIError(
        403,
        "Forbidden",
        f'{qualified(group, plural)} "{name}" is forbidden: {why}',
        _details(group, plural, name),
    )


def expired(message: str) -> APIError:
    return APIError(410, "Expired", message)


def too_large_resource_version(requested: int, current: int) -> APIError:
    """504 of a watch whose resourceVersion the watch cache did not reach in 3 s
    (k8s.io/apiserver storage ``NewTooLargeResourceVersionError``)."""
    return APIError(
        504,
        "Timeout",
        f"Timeout: Too large resource version: {requested}, current: {current}",
        {
            "causes": [
                {"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}
            ],
            "retryAfterSeconds": 1,
        },
    )


def gone(message: str) -> APIError:
    return APIError(410, "Gone", message)


def method_not_allowed(verb: str, plural: str) -> APIError:
    return APIError(
        405,
        "MethodNotAllowed",
        "the server does not allow this method on the requested resource",
        {"kind": plural, "causes": [{"reason": "", "message": verb}]},
    )


def method_not_allowed_here() -> APIError:
    """405 for a method the URL does not take (POST to an object, PUT to a collection):
    kube-apiserver's mux answers with empty details."""
    return APIError(
        405,
        "MethodNotAllowed",
        "the server does not allow this method on the requested resource",
        {},
    )


def unsupported_media_type(content_type: str, accepted: list[str]) -> APIError:
    return APIError(
        415,
        "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: "
        + ", ".join(accepted),
        {"causes": [{"reason": "UnexpectedServerResponse", "message": content_type}]}
        if content_type
        else None,
    )


def too_large(message: str = "the server has received too large of a request") -> APIError:
    return APIError(413, "RequestEntityTooLarge", message)


def unauthorized() -> APIError:
    return APIError(401, "Unauthorized", "Unauthorized")


def internal(
    message: str = "an error on the server has prevented the request from succeeding",
) -> APIError:
    return APIError(500, "InternalError", f"Internal error occurred: {message}")
