"""Serving certificates of the webhook server: a generated CA and serving certificate for
development and tests, or the files a Secret mounts (cert-manager's ``tls.crt``/``tls.key``/
``ca.crt``), reloaded when they change.

kube-apiserver verifies a webhook's certificate against the configuration's ``caBundle``
and needs the address it calls in the certificate's subjectAltName (Go does not fall back
to the common name); both holders below give a ``ca_bundle`` (PEM bytes) for that.
"""

from __future__ import annotations

import datetime
import ipaddress
import ssl
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = [
    "CertificateFiles",
    "Certificates",
    "SelfSignedCertificates",
    "harden",
    "self_signed_pem",
]

_VALIDITY = datetime.timedelta(days=365)


class Certificates:
    """What the webhook server needs of its certificates (base of the two holders)."""

    def ssl_context(self) -> ssl.SSLContext:
        """The server's SSL context (TLS 1.2 or later, HTTP/1.1 only: :func:`harden`)."""
        raise NotImplementedError

    @property
    def ca_bundle(self) -> bytes:
        """PEM of the CA that signed the serving certificate (a configuration's caBundle)."""
        raise NotImplementedError

    def reload(self) -> bool:
        """Load the certificate again if its files changed; True when it did."""
        return False


@dataclass
class SelfSignedCertificates(Certificates):
    """A CA and a serving certificate it signs, generated in memory (EC P-256, one year),
    for ``hosts``: DNS names and IP addresses (e.g. ``["127.0.0.1", "localhost",
    "my-webhook.my-ns.svc"]``). Written to ``directory`` (``tls.crt``, ``tls.key``,
    ``ca.crt``) or to a private temporary directory. As kopf's ``WebhookAutoTunnel``
    self-signed mode and controller-runtime's envtest webhook certificates."""

    hosts: list[str] = field(default_factory=lambda: ["127.0.0.1", "localhost"])
    directory: Path | None = None

    def __post_init__(self) -> None:
        if not self.hosts:
            raise ValueError("SelfSignedCertificates needs at least one host")
        if self.directory is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="reconcile-kit-webhook-")
            self.directory = Path(self._tmp.name)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._ca_pem, cert_pem, key_pem = self_signed_pem(self.hosts)
        _write(self.directory, cert_pem, key_pem, self._ca_pem)

    @property
    def cert_file(self) -> Path:
        """The serving certificate's PEM file (``tls.crt`` in :attr:`directory`)."""
        assert self.directory is not None
        return self.directory / "tls.crt"

    @property
    def key_file(self) -> Path:
        """The serving key's PEM file (``tls.key`` in :attr:`directory`)."""
        assert self.directory is not None
        return self.directory / "tls.key"

    def ssl_context(self) -> ssl.SSLContext:
        """A new server SSL context serving the generated certificate (:func:`harden`)."""
        return _server_context(self.cert_file, self.key_file)

    @property
    def ca_bundle(self) -> bytes:
        """PEM of the generated CA."""
        return self._ca_pem


@dataclass
class CertificateFiles(Certificates):
    """A serving certificate read from files, as a Secret of type kubernetes.io/tls mounts
    them (cert-manager: ``tls.crt``, ``tls.key``, ``ca.crt``). ``reload()`` loads them
    into the same SSL context when their modification time changed, so a renewed
    certificate is served to new connections without a restart. ``purpose`` says what the
    certificate serves in messages (``webhook``, ``metrics``).

    Raises:
        FileNotFoundError: a file is missing (named), from :meth:`ssl_context` and
            :meth:`reload`.
    """

    directory: Path
    cert_name: str = "tls.crt"
    key_name: str = "tls.key"
    ca_name: str = "ca.crt"
    purpose: str = "webhook"

    def __post_init__(self) -> None:
        self.directory = Path(self.directory)
        self._context: ssl.SSLContext | None = None
        self._stamp: tuple[float, float] = (0.0, 0.0)

    def _files(self) -> tuple[Path, Path]:
        cert, key = self.directory / self.cert_name, self.directory / self.key_name
        for path in (cert, key):
            if not path.is_file():
                raise FileNotFoundError(f"{self.purpose} serving certificate: no file {path}")
        return cert, key

    def ssl_context(self) -> ssl.SSLContext:
        """The server SSL context of the files (:func:`harden`), made on first use and kept:
        :meth:`reload` loads renewed files into it.

        Raises:
            FileNotFoundError: the certificate or key file is missing.
        """
        if self._context is None:
            cert, key = self._files()
            self._context = _server_context(cert, key)
            self._stamp = (cert.stat().st_mtime, key.stat().st_mtime)
        return self._context

    def reload(self) -> bool:
        """Load the files into the SSL context again when their modification times changed;
        True when it did.

        Raises:
            FileNotFoundError: the certificate or key file is missing.
        """
        cert, key = self._files()
        stamp = (cert.stat().st_mtime, key.stat().st_mtime)
        if self._context is None or stamp == self._stamp:
            return False
        self._context.load_cert_chain(cert, key)
        self._stamp = stamp
        return True

    @property
    def ca_bundle(self) -> bytes:
        """PEM of ``ca.crt`` when the directory has one, else of the serving certificate."""
        ca = self.directory / self.ca_name
        if ca.is_file():
            return ca.read_bytes()
        return self._files()[0].read_bytes()


def self_signed_pem(hosts: list[str]) -> tuple[bytes, bytes, bytes]:
    """A new CA and a serving certificate it signs for ``hosts`` (DNS names and IP
    addresses, the first one also the common name), EC P-256, valid for 365 days: PEM
    bytes of ``(ca certificate, serving certificate, serving key)`` (the key PKCS#8,
    unencrypted).

    Raises:
        ValueError: ``hosts`` is empty.
    """
    if not hosts:
        raise ValueError("a serving certificate needs at least one host")
    ca_key, ca_cert = _certificate_authority()
    key, cert = _serving_certificate(hosts, ca_key, ca_cert)
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return (
        ca_cert.public_bytes(serialization.Encoding.PEM),
        cert.public_bytes(serialization.Encoding.PEM),
        key_pem,
    )


def _server_context(cert: Path, key: Path) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    harden(context)
    context.load_cert_chain(cert, key)
    return context


def harden(context: ssl.SSLContext) -> ssl.SSLContext:
    """Restrict a server's SSL ``context`` as controller-runtime's webhook and metrics
    servers and kubebuilder's scaffold do: TLS 1.2 or later (an older client's handshake
    fails), and ALPN offering only ``http/1.1``, so a client that insists on HTTP/2 (``h2``)
    is refused in the handshake (controller-runtime and kubebuilder disable HTTP/2 by
    default because of CVE-2023-44487, HTTP/2 rapid reset; aiohttp does not speak it at
    all). Returns ``context``, changed in place."""
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.set_alpn_protocols(["http/1.1"])
    return context


def _certificate_authority() -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "reconcile-kit-webhook-ca")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + _VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(key, hashes.SHA256())
    )
    return key, cert


def _serving_certificate(
    hosts: list[str], ca_key: ec.EllipticCurvePrivateKey, ca_cert: x509.Certificate
) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    names: list[x509.GeneralName] = []
    for host in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hosts[0])]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + _VALIDITY)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    return key, cert


def _write(directory: Path, cert_pem: bytes, key_pem: bytes, ca: bytes) -> None:
    (directory / "tls.crt").write_bytes(cert_pem)
    key_file = directory / "tls.key"
    key_file.write_bytes(key_pem)
    key_file.chmod(0o600)
    (directory / "ca.crt").write_bytes(ca)
