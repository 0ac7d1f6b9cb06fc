"""Secret-safe logs: the one place that decides what of a document or a text may be logged.

Nothing reconcile_kit logs, at any level, holds a Secret's ``data``/``stringData`` values or a
bearer token:

- :func:`redact` replaces the values of a Secret's ``data`` and ``stringData`` (and its
  ``kubectl.kubernetes.io/last-applied-configuration`` annotation, which repeats them) with
  :data:`REDACTED`, in a Secret, a list of them, a watch event or an AdmissionReview's
  ``object``/``oldObject``; keys stay, so a log still says *which* entries changed. As
  kubectl ``describe secret`` (sizes, not values) and kube-apiserver's own
  ``"<secret contents redacted>"`` in validation errors.
- :func:`redact_pair` does it to the two sides of a diff, marking values that differ, so that
  :meth:`PatchHelper.changes() <reconcile_kit.patch.PatchHelper.changes>` of a Secret says
  ``changed`` without the values.
- :func:`redact_text` removes bearer tokens (``Authorization: Bearer ...``, ``"token": "..."``
  fields, and JSON Web Tokens wherever they appear) from a text; the API errors' messages
  and every record :class:`RedactingFilter` sees pass through it
  (:func:`~reconcile_kit.manager.logs.configure_logging` installs it on its handler).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any, TypeVar, cast

__all__ = [
    "REDACTED",
    "SECRET_FIELDS",
    "RedactingFilter",
    "is_secret",
    "redact",
    "redact_pair",
    "redact_patch",
    "redact_text",
]

T = TypeVar("T")
U = TypeVar("U")

REDACTED = "<redacted>"
"""What a Secret's value, or a token, is replaced with."""
CHANGED = "<redacted, changed>"
"""What :func:`redact_pair` puts on the "after" side of a value that changed."""
SECRET_FIELDS = ("data", "stringData")
"""The fields of a Secret whose values are never logged."""
_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"

# A JSON Web Token (ServiceAccount tokens, OIDC tokens): three base64url parts, the first two
# JSON objects ("eyJ" is the encoding of '{"').
_JWT = re.compile(r"eyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*")
# "Authorization: Bearer x" / "Authorization: Basic x" (a header, or a repr of one), and
# "Bearer x" anywhere
_AUTHORIZATION = re.compile(
    r"(?i)(authorization['\"]?\s*[:=]\s*['\"]?(?:bearer\s+|basic\s+)?|\bbearer\s+)"
    r"([A-Za-z0-9._~+/=-]{6,})"
)
# "token": "x" / token=x (a TokenRequest's status.token, a TokenReview's spec.token, a
# kubeconfig's user.token)
_TOKEN_FIELD = re.compile(
    r"(?i)(['\"]?\b(?:token|password|client-key-data|client_key_data)['\"]?\s*[:=]\s*['\"]?)"
    r"([^'\",\s}]{6,})"
)


def is_secret(document: object, kind: str | None = None) -> bool:
    """Whether ``document`` is a core/v1 Secret (by its ``kind``, or ``kind`` given for a
    document that does not say, such as a merge patch)."""
    if not isinstance(document, Mapping):
        return False
    found = document.get("kind") or kind
    version = document.get("apiVersion")
    return found == "Secret" and version in (None, "v1")


def redact(document: T, kind: str | None = None) -> T:
    """A copy of ``document`` with every Secret's ``data``/``stringData`` values (and its
    last-applied-configuration annotation) replaced by :data:`REDACTED`; the same object
    when it holds no Secret. Looks into lists (``items``), watch events and admission
    reviews (``object``, ``oldObject``). ``kind``: the kind of a document that does not
    name it (a patch of a Secret)."""
    if isinstance(document, list):
        items = [redact(item, kind) for item in document]
        changed_items = any(a is not b for a, b in zip(items, document, strict=True))
        return cast(T, items) if changed_items else document
    if not isinstance(document, Mapping):
        return document
    if is_secret(document, kind):
        return cast(T, _redact_secret(document, {}))
    changed: dict[str, Any] = {}
    for field in ("items", "object", "oldObject", "request", "response"):
        value = document.get(field)
        if isinstance(value, list | Mapping):
            redacted = redact(value)
            if redacted is not value:
                changed[field] = redacted
    return cast(T, {**document, **changed}) if changed else document


def redact_patch(body: T, kind: str | None) -> T:
    """A patch of an object of ``kind`` as it may be logged: a merge patch (a mapping) as
    :func:`redact`; a JSON patch (a list of operations) of a Secret with the ``value`` of
    every operation outside ``/metadata`` (and on its last-applied annotation) replaced by
    :data:`REDACTED`."""
    if not isinstance(body, list):
        return redact(body, kind)
    if kind != "Secret":
        return body
    ops: list[object] = []
    for op in body:
        path = str(op.get("path", "")) if isinstance(op, Mapping) else ""
        hidden = not path.startswith("/metadata/") or "last-applied-configuration" in path
        hide = hidden and isinstance(op, Mapping) and "value" in op
        ops.append({**op, "value": REDACTED} if hide else op)
    return cast(T, ops)


def redact_pair(before: T, after: U, kind: str | None = None) -> tuple[T, U]:
    """``before`` and ``after`` redacted as :func:`redact`, except that a value of
    ``after`` that differs from ``before``'s becomes ``"<redacted, changed>"``: a diff of
    the pair still shows which entries were added, removed or changed, never a value."""
    if not (is_secret(before, kind) or is_secret(after, kind)):
        return redact(before, kind), redact(after, kind)
    old: Mapping[str, Any] = before if isinstance(before, Mapping) else {}
    if not isinstance(after, Mapping):
        return redact(before, kind or "Secret"), after
    return redact(before, kind or "Secret"), cast(U, _redact_secret(after, old))


def _redact_secret(document: Mapping[str, Any], before: Mapping[str, Any]) -> dict[str, Any]:
    result = dict(document)
    for field in SECRET_FIELDS:
        values = document.get(field)
        if isinstance(values, Mapping):
            found = before.get(field)
            old: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
            result[field] = {
                key: CHANGED if key in old and old[key] != value else REDACTED
                for key, value in values.items()
            }
        elif values is not None:
            result[field] = REDACTED
    metadata = document.get("metadata")
    if isinstance(metadata, Mapping):
        annotations = metadata.get("annotations")
        if isinstance(annotations, Mapping) and _LAST_APPLIED in annotations:
            result["metadata"] = {
                **metadata,
                "annotations": {**annotations, _LAST_APPLIED: REDACTED},
            }
    return result


def redact_text(text: str) -> str:
    """``text`` without bearer tokens: JSON Web Tokens, the credential of an
    ``Authorization: Bearer``/``Basic`` header, and the values of ``token``/``password``
    fields are replaced by :data:`REDACTED`."""
    if not text:
        return text
    text = _JWT.sub(REDACTED, text)
    text = _AUTHORIZATION.sub(lambda m: m.group(1) + REDACTED, text)
    return _TOKEN_FIELD.sub(lambda m: m.group(1) + REDACTED, text)


class RedactingFilter(logging.Filter):
    """A logging filter that passes every record with its message (and the text of its
    exception) through :func:`redact_text`: a token that reached a log call anyway, from
    any library, is not written. Install it on a handler (``handler.addFilter``), where it
    sees the records of every logger."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Redact ``record`` in place (its message, then its traceback's text); always
        True: the record is written, cleaned."""
        try:
            message = record.getMessage()
        except Exception:  # a broken format: leave the record for logging to report
            return True
        redacted = redact_text(message)
        if redacted != message:
            record.msg, record.args = redacted, None
        if record.exc_info and record.exc_info[1] is not None:
            text = logging.Formatter().formatException(record.exc_info)
            cleaned = redact_text(text)
            if cleaned != text:
                record.exc_info, record.exc_text = None, cleaned
        return True
