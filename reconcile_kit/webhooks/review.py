"""AdmissionReview v1 (``admission.k8s.io/v1``): the request kube-apiserver sends an admission
webhook and the response it expects back (Kubernetes docs, "Dynamic Admission Control")."""

from __future__ import annotations

import base64
import builtins
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..client.errors import describe
from ..meta.objects import metadata_of

__all__ = ["AdmissionRequest", "Denied", "UserInfo", "admission_response"]

REVIEW_API_VERSION = "admission.k8s.io/v1"


class Denied(Exception):
    """Raise it in a validating or mutating handler to refuse the request.

    kube-apiserver answers the client with ``admission webhook "NAME" denied the request:
    MESSAGE`` and the HTTP status ``code`` (default 403, as controller-runtime's
    ``admission.Denied``; kube-apiserver raises codes below 400 to 400); ``reason`` is the
    Status reason (e.g. ``"Invalid"``).
    """

    def __init__(self, message: str, *, code: int = 403, reason: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.reason = reason


@dataclass(frozen=True)
class UserInfo:
    """Who sent the request (authentication.k8s.io/v1 UserInfo)."""

    username: str = ""
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: dict[str, list[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class AdmissionRequest:
    """The ``request`` of an AdmissionReview v1, as kube-apiserver sent it.

    Attributes:
        uid: the review's uid (echoed in the response).
        operation: ``CREATE``, ``UPDATE``, ``DELETE`` or ``CONNECT``.
        kind: the object's ``{"group", "version", "kind"}``.
        resource: ``{"group", "version", "resource"}`` of the request.
        sub_resource: ``"status"``, ``"scale"``... or ``""``.
        name: of the object (may be empty on CREATE with generateName).
        namespace: of the object.
        object: the object as JSON (None on DELETE).
        old_object: the stored object on UPDATE and DELETE (None on CREATE).
        dry_run: the request does not persist anything.
        user_info: who sent it.
        options: CreateOptions/UpdateOptions/DeleteOptions as JSON.
        raw: the whole ``request`` as JSON.
    """

    uid: str
    operation: str
    kind: dict[str, str]
    resource: dict[str, str]
    sub_resource: str
    name: str
    namespace: str
    object: dict[str, Any] | None
    old_object: dict[str, Any] | None
    dry_run: bool
    user_info: UserInfo
    options: dict[str, Any] | None
    raw: dict[str, Any]

    @classmethod
    def from_review(cls, review: builtins.object) -> AdmissionRequest:
        """The request of an AdmissionReview body; ValueError naming what is missing."""
        if not isinstance(review, dict) or not isinstance(review.get("request"), dict):
            raise ValueError("not an AdmissionReview: no request")
        if review.get("apiVersion") != REVIEW_API_VERSION:
            raise ValueError(f"AdmissionReview apiVersion {review.get('apiVersion')!r}: only v1")
        request: dict[str, Any] = review["request"]
        uid = request.get("uid")
        if not isinstance(uid, str) or not uid:
            raise ValueError("AdmissionReview request.uid is missing")
        user = request.get("userInfo") or {}
        return cls(
            uid=uid,
            operation=str(request.get("operation", "")),
            kind=dict(request.get("kind") or {}),
            resource=dict(request.get("resource") or {}),
            sub_resource=str(request.get("subResource") or ""),
            name=str(request.get("name") or ""),
            namespace=str(request.get("namespace") or ""),
            object=request.get("object"),
            old_object=request.get("oldObject"),
            dry_run=bool(request.get("dryRun")),
            user_info=UserInfo(
                username=str(user.get("username", "")),
                uid=str(user.get("uid", "")),
                groups=tuple(user.get("groups") or ()),
                extra=dict(user.get("extra") or {}),
            ),
            options=request.get("options"),
            raw=request,
        )

    @property
    def where(self) -> str:
        """``Kind namespace/name`` of the object, for messages."""
        obj = self.object or self.old_object or {}
        meta = metadata_of(obj)
        kind = self.kind.get("kind") or obj.get("kind", "?")
        name = self.name or meta.get("name") or meta.get("generateName", "")
        return describe(kind, self.namespace or meta.get("namespace", ""), name)


def admission_response(
    uid: str,
    *,
    allowed: bool,
    warnings: list[str] | None = None,
    patch: list[dict[str, Any]] | None = None,
    code: int | None = None,
    message: str | None = None,
    reason: str | None = None,
) -> dict[str, Any]:
    """An AdmissionReview v1 answer: ``allowed``, a Status when refused, ``warnings``, and a
    JSONPatch (RFC 6902, base64 as the API requires) for a mutation."""
    response: dict[str, Any] = {"uid": uid, "allowed": allowed}
    if not allowed or message:
        status: dict[str, Any] = {}
        if code is not None:
            status["code"] = code
        if message:
            status["message"] = message
        if reason:
            status["reason"] = reason
        response["status"] = status
    if warnings:
        response["warnings"] = list(warnings)
    if patch:
        response["patchType"] = "JSONPatch"
        response["patch"] = base64.b64encode(orjson.dumps(patch)).decode()
    return {"apiVersion": REVIEW_API_VERSION, "kind": "AdmissionReview", "response": response}
