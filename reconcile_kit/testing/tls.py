"""Serving certificates of the test servers (the embedded API server's ``tls=True`` mode
and the real control plane's kube-apiserver): a generated CA and a serving certificate,
made by :class:`~reconcile_kit.webhooks.certs.SelfSignedCertificates`."""

from __future__ import annotations

import ssl
from pathlib import Path

from ..webhooks.certs import SelfSignedCertificates

__all__ = ["self_signed_certificate"]


def self_signed_certificate(directory: Path, host: str) -> tuple[ssl.SSLContext, bytes]:
    """A server SSL context for ``host`` (and localhost), its files ``tls.crt`` and
    ``tls.key`` in ``directory``, and the PEM of the CA clients should trust."""
    hosts = [host] if host == "localhost" else [host, "localhost"]
    certificates = SelfSignedCertificates(hosts, directory=directory)
    return certificates.ssl_context(), certificates.ca_bundle
