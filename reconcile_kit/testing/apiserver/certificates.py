"""CertificateSigningRequests (certificates.k8s.io/v1) as kube-apiserver's registry
(pkg/registry/certificates/certificates) and validation (pkg/apis/certificates/validation)
treat them on create: the requester's identity is written into the spec, the status is
cleared, the request must be a PEM ``CERTIFICATE REQUEST`` with a valid signature and
usages are required (the words of a PEM block that does not parse or verify are
cryptography's, not Go's).

Not implemented: the ``/approval`` subresource, the checks of signer names, usages' values,
conditions and issued certificates, and a signer (nothing approves or signs).
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from cryptography import x509

from . import errors
from .authn import ADMIN

__all__ = ["GROUP", "PLURAL", "causes", "prepare_create", "requestor"]

GROUP = "certificates.k8s.io"
PLURAL = "certificatesigningrequests"
_PEM_TYPE = "CERTIFICATE REQUEST"


def prepare_create(obj: dict[str, Any], user_info: dict[str, Any] | None) -> None:
    """csrStrategy.PrepareForCreate: the spec's username, uid, groups and extra are the
    requester's (``user_info``; None: the admin), the status is empty."""
    spec = obj.setdefault("spec", {})
    for key in ("username", "uid", "groups", "extra"):
        spec.pop(key, None)
    user: dict[str, Any] = user_info if user_info is not None else ADMIN.info()
    spec["username"] = user["username"]
    if user.get("uid"):
        spec["uid"] = user["uid"]
    if user.get("groups"):
        spec["groups"] = list(user["groups"])
    if user.get("extra"):
        spec["extra"] = {key: list(values) for key, values in user["extra"].items()}
    obj["status"] = {}


def causes(obj: dict[str, Any]) -> list[dict[str, str]]:
    """Field causes of validateCertificateSigningRequest (request and usages only)."""
    spec = obj.get("spec") or {}
    found: list[dict[str, str]] = []
    request = _decoded(spec.get("request"))
    problem = _request_problem(request)
    if problem is not None:
        invalid = f"Invalid value: {_go_bytes(request)}: {problem}"
        found.append(errors.cause("FieldValueInvalid", "spec.request", invalid))
    if not spec.get("usages"):
        found.append(errors.cause("FieldValueRequired", "spec.usages", "Required value"))
    return found


def requestor(obj: dict[str, Any]) -> str:
    """The Requestor column of ``kubectl get csr``."""
    return str((obj.get("spec") or {}).get("username") or "")


def _decoded(value: Any) -> bytes | None:
    if not isinstance(value, str):
        return None
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return b""


def _request_problem(request: bytes | None) -> str | None:
    """certificates.ParseCSR then CheckSignature: the error text, or None when valid."""
    begin = f"-----BEGIN {_PEM_TYPE}-----".encode()
    if request is None or begin not in request:
        return f"PEM block type must be {_PEM_TYPE}"
    try:
        csr = x509.load_pem_x509_csr(request)
    except ValueError as error:
        return str(error)
    return None if csr.is_signature_valid else "x509: ECDSA verification failure"


def _go_bytes(data: bytes | None) -> str:
    """``[]byte`` as Go's ``%#v`` prints it (field.Invalid's value)."""
    if data is None:
        return "[]byte(nil)"
    return "[]byte{" + ", ".join(f"0x{byte:x}" for byte in data) + "}"
