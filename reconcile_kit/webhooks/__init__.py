"""Admission and conversion webhooks served by the manager: validating and mutating
handlers (AdmissionReview v1), CRD conversion between typed versions (ConversionReview v1),
their HTTPS server and certificates, and their registration.

Names load on first use (PEP 562), as the top-level package's: the embedded API server
needs only the certificates (:mod:`.certs`), not kr8s and the handlers' runtime.
"""

from __future__ import annotations

import importlib
import typing

if typing.TYPE_CHECKING:
    from .admission import AdmissionWebhook
    from .certs import CertificateFiles, Certificates, SelfSignedCertificates
    from .conversion import ConversionError
    from .registration import (
        ServiceReference,
        configurations,
        conversion_stanzas,
        register,
        unregister,
    )
    from .review import AdmissionRequest, Denied, UserInfo
    from .server import WebhookServer

# public name -> the module defining it (relative to this package)
_EXPORTS: dict[str, str] = {
    "AdmissionRequest": "review",
    "AdmissionWebhook": "admission",
    "CertificateFiles": "certs",
    "Certificates": "certs",
    "ConversionError": "conversion",
    "Denied": "review",
    "SelfSignedCertificates": "certs",
    "ServiceReference": "registration",
    "UserInfo": "review",
    "WebhookServer": "server",
    "configurations": "registration",
    "conversion_stanzas": "registration",
    "register": "registration",
    "unregister": "registration",
}

__all__ = [
    "AdmissionRequest",
    "AdmissionWebhook",
    "CertificateFiles",
    "Certificates",
    "ConversionError",
    "Denied",
    "SelfSignedCertificates",
    "ServiceReference",
    "UserInfo",
    "WebhookServer",
    "configurations",
    "conversion_stanzas",
    "register",
    "unregister",
]


def __getattr__(name: str) -> typing.Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
