"""CRD conversion webhooks (``spec.conversion.strategy: Webhook``), called as
kube-apiserver's apiextensions-apiserver calls them (webhookConverter): whenever a custom
resource is read or written in a version other than the one it is stored in, its objects
go to the webhook in one ConversionReview v1 (all items of a LIST in one request), with a
30 s timeout, and the answer is checked (uid, result, count, apiVersion, kind, metadata).

A write yields a :class:`Convert` step (the object read, in the request's version; the
object to store, in the storage version); reads and answers are converted by the request
handler. Failures are kube-apiserver's 500 ``conversion webhook for <group>/<version>,
Kind=<kind> failed: ...``.
"""

from __future__ import annotations

import copy
import uuid
from dataclasses import dataclass
from typing import Any, Protocol

from .errors import APIError
from .store import Obj

__all__ = ["Convert", "convert", "webhook_converts"]


class ConversionPoster(Protocol):
    """What sends a ConversionReview (:class:`~.admission.Admission`, which calls the
    server's webhooks)."""

    async def post_conversion(self, webhook: Obj, review: Obj, timeout: int, where: str) -> Any:
        """POST ``review`` to a CRD's conversion ``webhook`` (its ``clientConfig``) within
        ``timeout`` seconds; the answer (a decoded JSON document), or an APIError naming
        ``where``."""
        ...


TIMEOUT = 30  # seconds: apiextensions-apiserver's fixed conversion webhook timeout
REVIEW_VERSION = "apiextensions.k8s.io/v1"


@dataclass
class Convert:
    """Convert ``objects`` to ``desired`` (an apiVersion) with ``crd``'s webhook; the write
    is sent the converted objects."""

    objects: list[Obj]
    desired: str
    crd: Obj
    guard: tuple[str, str, str, str] | None = None


def webhook_converts(crd: Obj | None) -> bool:
    """Whether ``crd`` converts between versions with a webhook."""
    conversion = ((crd or {}).get("spec") or {}).get("conversion") or {}
    return conversion.get("strategy") == "Webhook"


async def convert(
    admission: ConversionPoster, crd: Obj, objects: list[Obj], desired: str
) -> list[Obj]:
    """``objects`` in ``desired``, converted by ``crd``'s webhook (objects already in that
    version are not sent). Raises APIError 500 in kube-apiserver's words."""
    pending = [i for i, obj in enumerate(objects) if obj.get("apiVersion") != desired]
    if not pending:
        return objects
    first = objects[pending[0]]
    where = _gvk(first)
    uid = str(uuid.uuid4())
    review = {
        "kind": "ConversionReview",
        "apiVersion": REVIEW_VERSION,
        "request": {
            "uid": uid,
            "desiredAPIVersion": desired,
            "objects": [objects[i] for i in pending],
        },
    }
    webhook = ((crd.get("spec") or {}).get("conversion") or {}).get("webhook") or {}
    answer = await admission.post_conversion(webhook, review, TIMEOUT, where)
    converted = _checked(answer, uid, [objects[i] for i in pending], desired, where)
    result = list(objects)
    for index, obj in zip(pending, converted, strict=True):
        result[index] = obj
    return result


def _gvk(obj: Obj) -> str:
    """``group/version, Kind=kind`` as Go prints a GroupVersionKind."""
    return f"{obj.get('apiVersion', '')}, Kind={obj.get('kind', '')}"


def failed(where: str, why: str) -> APIError:
    return APIError(500, "", f"conversion webhook for {where} failed: {why}")


def _checked(answer: Any, uid: str, sent: list[Obj], desired: str, where: str) -> list[Obj]:
    response = answer.get("response") if isinstance(answer, dict) else None
    if not isinstance(response, dict):
        raise failed(where, "no response provided")
    if response.get("uid") != uid:
        raise failed(where, f"expected response uid {uid}, got {response.get('uid')}")
    result = response.get("result") or {}
    if result.get("status") != "Success":
        raise failed(where, str(result.get("message", "")))
    converted = response.get("convertedObjects") or []
    if len(converted) != len(sent):
        raise failed(
            where,
            f"expected {len(sent)} converted objects, got {len(converted)}",
        )
    return [_one(obj, before, desired, where) for obj, before in zip(converted, sent, strict=True)]


def _one(obj: Any, before: Obj, desired: str, where: str) -> Obj:
    if not isinstance(obj, dict):
        raise failed(where, "invalid converted object: not an object")
    if obj.get("apiVersion") != desired:
        raise failed(
            where,
            f"invalid converted object: expected apiVersion {desired}, got {obj.get('apiVersion')}",
        )
    if obj.get("kind") != before.get("kind"):
        raise failed(
            where,
            f"invalid converted object: expected kind {before.get('kind')}, got {obj.get('kind')}",
        )
    metadata = copy.deepcopy(before.get("metadata") or {})
    changed = obj.get("metadata") or {}
    for key in ("labels", "annotations"):  # the only metadata a conversion may change
        if key in changed:
            metadata[key] = changed[key]
        else:
            metadata.pop(key, None)
    return {**obj, "metadata": metadata}
