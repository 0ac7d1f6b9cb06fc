"""Authentication of the embedded server without RBAC (`APIServer()`, `reconcile-kit
apiserver`, `run --embedded`): every request is allowed, but a TokenReview authenticates
only the tokens the server knows, as kube-apiserver's does (its token authenticators know
no made-up token), so a manager's secure metrics refuse a made-up token there too."""

from __future__ import annotations

import asyncio
import ssl

import httpx
import kr8s.asyncio

from reconcile_kit import Manager
from reconcile_kit.client.transport import close_session
from reconcile_kit.testing import APIServer, eventually
from reconcile_kit.webhooks import SelfSignedCertificates

from ..kubehttp import call

REVIEWS = "/apis/authentication.k8s.io/v1/tokenreviews"
SERVICE_ACCOUNTS = "/api/v1/namespaces/default/serviceaccounts"


async def review(api: kr8s.asyncio.Api, token: str) -> dict:
    body = {
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenReview",
        "spec": {"token": token},
    }
    status, answer = await call(api, "POST", REVIEWS, body)
    assert status == 201, answer
    return answer["status"]


async def test_a_made_up_token_is_not_authenticated(kube: kr8s.asyncio.Api) -> None:
    assert await review(kube, "made-up") == {"user": {}, "error": "invalid bearer token"}
    assert await review(kube, "") == {"user": {}, "error": "invalid bearer token"}


async def test_an_issued_token_is_authenticated(kube: kr8s.asyncio.Api) -> None:
    status, _ = await call(kube, "POST", SERVICE_ACCOUNTS, {"metadata": {"name": "scraper"}})
    assert status == 201
    request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}}
    status, issued = await call(kube, "POST", f"{SERVICE_ACCOUNTS}/scraper/token", request)
    assert status == 201, issued
    found = await review(kube, issued["status"]["token"])
    assert found["authenticated"] is True
    assert found["user"]["username"] == "system:serviceaccount:default:scraper"


async def test_the_admin_token_is_authenticated_as_admin() -> None:
    async with APIServer(token="admin-secret") as server:
        api = await server.api()
        found = await review(api, "admin-secret")
        assert found["authenticated"] is True
        assert found["user"]["username"] == "admin"
        assert await review(api, "admin-secre") == {"user": {}, "error": "invalid bearer token"}
        await close_session(api)


async def test_secure_metrics_refuse_a_made_up_token(kube: kr8s.asyncio.Api) -> None:
    """A manager's secure metrics on the embedded server without RBAC (as `run
    --embedded`): a made-up token 401, a ServiceAccount's issued token 200 (no RBAC: the
    access review allows every user)."""
    status, _ = await call(kube, "POST", SERVICE_ACCOUNTS, {"metadata": {"name": "prometheus"}})
    assert status == 201
    request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}}
    _, issued = await call(kube, "POST", f"{SERVICE_ACCOUNTS}/prometheus/token", request)
    certificates = SelfSignedCertificates(["127.0.0.1"])
    operator = Manager(
        api=kube,
        metrics_port=0,
        host="127.0.0.1",
        handle_signals=False,
        metrics_certificates=certificates,
    )
    running = asyncio.create_task(operator.run())
    try:
        await eventually(lambda: "/metrics" in operator.ports or running.done(), 30.0)
        url = f"https://127.0.0.1:{operator.ports['/metrics']}/metrics"
        trust = ssl.create_default_context(cadata=certificates.ca_bundle.decode())
        async with httpx.AsyncClient(verify=trust, timeout=30.0) as session:
            for token, expected in (("made-up", 401), (issued["status"]["token"], 200)):
                answer = await session.get(url, headers={"Authorization": f"Bearer {token}"})
                assert answer.status_code == expected, (token, answer.text)
    finally:
        operator.stop()
        await asyncio.wait_for(running, 30.0)
