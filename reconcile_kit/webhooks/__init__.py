"""Admission and conversion webhooks served by the manager: validating and mutating
handlers (AdmissionReview v1), CRD conversion between typed versions (ConversionReview v1),
their HTTPS server and certificates, and their registration."""

from .admission import AdmissionWebhook
from .certs import CertificateFiles, Certificates, SelfSignedCertificates
from .conversion import ConversionError
from .registration import ServiceReference, configurations, conversion_stanzas, register, unregister
from .review import AdmissionRequest, Denied, UserInfo
from .server import WebhookServer

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
