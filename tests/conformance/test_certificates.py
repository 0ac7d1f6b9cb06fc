"""CertificateSigningRequests (certificates.k8s.io/v1, issue 15: kr8s's own tests list
them): served cluster-scoped with their short name, the requester's identity written into
the spec and the status cleared on create, the request and usages validated, no
managedFields (kube-apiserver 1.32.5 records none for them), kubectl's columns."""

from __future__ import annotations

import base64
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from reconcile_kit.testing.backends import Backend

from ..kubehttp import send
from .kube import MERGE, ok, req, status_body

CSRS = "/apis/certificates.k8s.io/v1/certificatesigningrequests"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


def pem_request() -> str:
    """A signed PKCS#10 request, PEM, base64 (as the API's ``[]byte`` field takes it)."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kr8s")])
    csr = x509.CertificateSigningRequestBuilder().subject_name(subject).sign(key, hashes.SHA256())
    return base64.b64encode(csr.public_bytes(serialization.Encoding.PEM)).decode()


def csr(name: str, **spec: Any) -> dict[str, Any]:
    body = {"request": pem_request(), "signerName": "example.com/signer", **spec}
    return {"metadata": {"name": name}, "spec": body}


async def test_discovery_lists_certificate_signing_requests(backend: Backend) -> None:
    listing = await ok(backend, "GET", "/apis/certificates.k8s.io/v1")
    [resource] = [r for r in listing["resources"] if r["name"] == "certificatesigningrequests"]
    assert resource["namespaced"] is False
    assert resource["kind"] == "CertificateSigningRequest"
    assert resource["shortNames"] == ["csr"]
    names = {r["name"] for r in listing["resources"]}
    assert "certificatesigningrequests/status" in names


async def test_create_takes_the_requester_and_clears_the_status(backend: Backend) -> None:
    name = backend.unique("csr")
    body = csr(name, usages=["client auth"], expirationSeconds=3600, username="x", groups=["g"])
    body["status"] = {"conditions": [{"type": "Approved", "status": "True"}]}
    try:
        created = await ok(backend, "POST", CSRS, body)
        spec = created["spec"]
        assert (spec["username"], spec["uid"]) == ("admin", "admin")
        assert spec["groups"] == ["system:masters", "system:authenticated"]
        assert created["status"] == {}
        assert "managedFields" not in created["metadata"]
        patch = {"metadata": {"labels": {"a": "b"}}}
        patched = await ok(backend, "PATCH", f"{CSRS}/{name}", patch, content_type=MERGE)
        assert patched["metadata"]["labels"] == {"a": "b"}
        assert "managedFields" not in patched["metadata"]
        status, table, _ = await send(
            backend.api, "GET", f"{CSRS}/{name}", None, "application/json", None, None, accept=TABLE
        )
        assert status == 200, table
        columns = [(c["name"], c["type"]) for c in table["columnDefinitions"]]
        assert columns == [
            ("Name", "string"),
            ("Age", "string"),
            ("SignerName", "string"),
            ("Requestor", "string"),
            ("RequestedDuration", "string"),
            ("Condition", "string"),
        ]
        cells = table["rows"][0]["cells"]
        assert cells[0] == name and cells[2:] == ["example.com/signer", "admin", "60m", "Pending"]
    finally:
        await req(backend, "DELETE", f"{CSRS}/{name}")


async def test_request_and_usages_are_validated(backend: Backend) -> None:
    name = backend.unique("csr")
    body = csr(name)
    body["spec"]["request"] = base64.b64encode(b"hello").decode()
    answer = await req(backend, "POST", CSRS, body)
    request = "Invalid value: []byte{0x68, 0x65, 0x6c, 0x6c, 0x6f}: PEM block type must be "
    request += "CERTIFICATE REQUEST"
    causes = [
        {"reason": "FieldValueInvalid", "message": request, "field": "spec.request"},
        {"reason": "FieldValueRequired", "message": "Required value", "field": "spec.usages"},
    ]
    details = {"name": name, "group": "certificates.k8s.io", "kind": "CertificateSigningRequest"}
    details["causes"] = causes
    message = (
        f'CertificateSigningRequest.certificates.k8s.io "{name}" is invalid: '
        f"[spec.request: {request}, spec.usages: Required value]"
    )
    assert (answer.status, answer.body) == (422, status_body(422, "Invalid", message, details))
