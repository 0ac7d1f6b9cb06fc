"""The HTTPS servers an operator runs (the webhook server and the secure metrics server) over
the wire (issue 33): TLS 1.2 or later, HTTP/1.1 only (a client that tries HTTP/2 is
refused), request bodies bounded (an UPDATE review of two objects of kube-apiserver's 3 MiB
limit passes, a larger body gets 413), and a timeout per request."""

from __future__ import annotations

import asyncio
import ssl
import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
import orjson
import pytest
from aiohttp import web
from kr8s.asyncio.objects import ConfigMap

from reconcile_kit.manager.metricsauth import DelegatingAuth, SecureMetricsServer
from reconcile_kit.webhooks import AdmissionRequest, SelfSignedCertificates, WebhookServer
from reconcile_kit.webhooks.certs import harden
from reconcile_kit.webhooks.serving import MAX_ADMISSION_BODY

H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
APISERVER_MAX_BODY = 3 * 1024 * 1024  # kube-apiserver's MaxRequestBodyBytes


async def metrics(request: web.Request) -> web.Response:
    return web.Response(text="up 1\n")


@asynccontextmanager
async def serving(which: str) -> AsyncIterator[tuple[int, bytes]]:
    """The webhook server or the secure metrics server on a free port: (port, CA PEM)."""
    certificates = SelfSignedCertificates(["127.0.0.1"])
    if which == "webhooks":
        webhooks = WebhookServer(host="127.0.0.1", port=0, certificates=certificates)
        async with webhooks:
            assert webhooks.port is not None
            yield webhooks.port, certificates.ca_bundle
        return
    # the handshake comes before any request: the auth is never asked
    server = SecureMetricsServer(
        metrics, DelegatingAuth(None), host="127.0.0.1", port=0, certificates=certificates
    )
    await server.start()
    try:
        assert server.port is not None
        yield server.port, certificates.ca_bundle
    finally:
        await server.stop()


def client_context(ca: bytes, alpn: list[str]) -> ssl.SSLContext:
    context = ssl.create_default_context(cadata=ca.decode())
    context.set_alpn_protocols(alpn)
    return context


async def handshake(port: int, context: ssl.SSLContext) -> ssl.SSLObject:
    reader, writer = await asyncio.wait_for(
        asyncio.open_connection("127.0.0.1", port, ssl=context), 10
    )
    tls: ssl.SSLObject = writer.get_extra_info("ssl_object")
    writer.close()
    return tls


@pytest.mark.parametrize("which", ["webhooks", "metrics"])
async def test_http2_is_refused_and_http11_negotiated(which: str) -> None:
    async with serving(which) as (port, ca):
        # a client offering both gets HTTP/1.1 (as Go's and httpx's clients would)
        tls = await handshake(port, client_context(ca, ["h2", "http/1.1"]))
        assert tls.selected_alpn_protocol() == "http/1.1"
        assert tls.version() in ("TLSv1.2", "TLSv1.3")
        # a client that will only speak HTTP/2 negotiates nothing: no h2 connection
        try:
            tls = await handshake(port, client_context(ca, ["h2"]))
        except (ssl.SSLError, ConnectionResetError):
            pass  # refused in the handshake: as good
        else:
            assert tls.selected_alpn_protocol() is None
        # and HTTP/2 spoken anyway (prior knowledge) is not: an HTTP/1.1 400, no SETTINGS
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection("127.0.0.1", port, ssl=client_context(ca, ["h2"])), 10
        )
        writer.write(H2_PREFACE + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0]))  # an empty SETTINGS
        answer = await asyncio.wait_for(reader.read(200), 10)
        writer.close()
        status_line = answer.split(b"\r\n", 1)[0]
        assert status_line.startswith(b"HTTP/1.") and b" 400 " in status_line, answer


@pytest.mark.parametrize("which", ["webhooks", "metrics"])
async def test_tls_below_1_2_is_refused(which: str) -> None:
    with warnings.catch_warnings():  # TLSVersion.TLSv1_1 is deprecated: that is the point
        warnings.simplefilter("ignore", DeprecationWarning)
        old = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        old.check_hostname, old.verify_mode = False, ssl.CERT_NONE
        old.minimum_version = ssl.TLSVersion.TLSv1
        old.maximum_version = ssl.TLSVersion.TLSv1_1
        old.set_ciphers("DEFAULT:@SECLEVEL=0")  # else OpenSSL 3 refuses on the client side
    async with serving(which) as (port, _):
        with pytest.raises((ssl.SSLError, ConnectionResetError)):
            await handshake(port, old)


def test_harden_sets_tls_1_2_where_the_default_would_allow_less() -> None:
    """Python 3.10+ defaults server contexts to TLS 1.2 already, so the test above passes
    without :func:`harden`'s minimum too; here the context starts as a permissive OpenSSL
    configuration (``MinProtocol = TLSv1``, security level 0) would make it: harden
    raises the floor, and a TLS 1.1 handshake against it fails."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1
    context.set_ciphers("DEFAULT:@SECLEVEL=0")
    assert harden(context) is context
    assert context.minimum_version == ssl.TLSVersion.TLSv1_2


async def test_tls_1_1_handshake_fails_against_a_hardened_permissive_context() -> None:
    certificates = SelfSignedCertificates(["127.0.0.1"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1
        context.set_ciphers("DEFAULT:@SECLEVEL=0")
        context.load_cert_chain(certificates.cert_file, certificates.key_file)
        old = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        old.check_hostname, old.verify_mode = False, ssl.CERT_NONE
        old.minimum_version = ssl.TLSVersion.TLSv1
        old.maximum_version = ssl.TLSVersion.TLSv1_1
        old.set_ciphers("DEFAULT:@SECLEVEL=0")

    async def close(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()

    async def attempt() -> str:
        server = await asyncio.start_server(close, "127.0.0.1", 0, ssl=context)
        try:
            tls = await handshake(server.sockets[0].getsockname()[1], old)
            return str(tls.version())
        except (ssl.SSLError, ConnectionResetError):
            return "refused"
        finally:
            server.close()

    assert await attempt() == "TLSv1.1"  # the permissive context does allow it
    harden(context)
    assert await attempt() == "refused"


async def post(port: int, ca: bytes, path: str, body: bytes) -> tuple[int, str]:
    context = ssl.create_default_context(cadata=ca.decode())
    async with (
        aiohttp.ClientSession() as session,
        session.post(
            f"https://127.0.0.1:{port}{path}",
            data=body,
            ssl=context,
            headers={"Content-Type": "application/json"},
        ) as reply,
    ):
        return reply.status, await reply.text()


def big_configmap(size: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "big", "namespace": "default"},
        "data": {"blob": "x" * size},
    }


async def test_the_largest_update_review_passes_and_a_larger_body_gets_413() -> None:
    certificates = SelfSignedCertificates(["127.0.0.1"])
    webhooks = WebhookServer(host="127.0.0.1", port=0, certificates=certificates)
    seen: list[int] = []

    @webhooks.validating(ConfigMap)
    def check(obj: Any, request: AdmissionRequest) -> None:
        seen.append(len(obj.raw["data"]["blob"]))

    path = webhooks.webhooks[0].path
    # an UPDATE of an object as large as kube-apiserver takes (3 MiB of JSON), old and new
    obj = big_configmap(APISERVER_MAX_BODY - 200)
    assert len(orjson.dumps(obj)) <= APISERVER_MAX_BODY
    review = {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "u",
            "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
            "resource": {"group": "", "version": "v1", "resource": "configmaps"},
            "operation": "UPDATE",
            "name": "big",
            "namespace": "default",
            "object": obj,
            "oldObject": obj,
            "userInfo": {"username": "admin"},
        },
    }
    body = orjson.dumps(review)
    assert 2 * APISERVER_MAX_BODY - 1000 < len(body) <= MAX_ADMISSION_BODY
    async with webhooks:
        assert webhooks.port is not None
        status, text = await post(webhooks.port, certificates.ca_bundle, path, body)
        assert status == 200, text[:300]
        assert orjson.loads(text)["response"]["allowed"] is True
        assert seen == [APISERVER_MAX_BODY - 200]
        too_large = b"{" + b" " * MAX_ADMISSION_BODY + b"}"
        status, text = await post(webhooks.port, certificates.ca_bundle, path, too_large)
        assert status == 413, text[:300]
    assert len(seen) == 1


async def test_a_request_that_takes_too_long_is_answered_503() -> None:
    certificates = SelfSignedCertificates(["127.0.0.1"])
    webhooks = WebhookServer(
        host="127.0.0.1", port=0, certificates=certificates, request_timeout=0.3
    )
    never = asyncio.Event()
    cancelled = asyncio.Event()

    @webhooks.validating(ConfigMap)
    async def stuck(obj: Any, request: AdmissionRequest) -> None:
        try:
            await never.wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    review = {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {"uid": "u", "operation": "CREATE", "object": big_configmap(1)},
    }
    async with webhooks:
        assert webhooks.port is not None
        status, text = await post(
            webhooks.port, certificates.ca_bundle, webhooks.webhooks[0].path, orjson.dumps(review)
        )
        assert (status, text) == (503, "request timed out after 0.3 s")
        await asyncio.wait_for(cancelled.wait(), 5)  # the handler was stopped, not left running
