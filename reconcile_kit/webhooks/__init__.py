"""Admission and conversion webhooks served by the manager (validating, mutating,
CRD conversion), with their certificates."""

from .certs import CertificateFiles, Certificates, SelfSignedCertificates

__all__ = ["CertificateFiles", "Certificates", "SelfSignedCertificates"]
