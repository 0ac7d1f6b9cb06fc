"""Secure metrics (issue 33): the manager serves ``/metrics`` over HTTPS and answers a scrape
only when the API server authenticates its bearer token (TokenReview) and allows that user
``get`` on ``/metrics`` (SubjectAccessReview), as controller-runtime's
``filters.WithAuthenticationAndAuthorization``. The operator runs as the ServiceAccount the
generated manifests bind (``system:auth-delegator``), the scraper is bound to the generated
``metrics-reader`` ClusterRole: on kube-apiserver and on the embedded server in its RBAC
mode."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx

from reconcile_kit import Manager
from reconcile_kit.cli.manifests import DeploymentSettings, documents
from reconcile_kit.client.request import RequestObservation, add_request_observer
from reconcile_kit.testing import eventually
from reconcile_kit.testing.backends import Backend
from reconcile_kit.webhooks import SelfSignedCertificates

from .kube import ok, req, token_request
from .test_rbac_enforced import RBAC_KINDS, path_of, service_account_api

RBAC = "/apis/rbac.authorization.k8s.io/v1"


async def account(backend: Backend, name: str, cluster_role: str | None) -> str:
    """A ServiceAccount ``name`` in the test's namespace, bound to ``cluster_role`` (None:
    to nothing); its TokenRequest token."""
    ns = backend.namespace
    await ok(
        backend, "POST", f"/api/v1/namespaces/{ns}/serviceaccounts", {"metadata": {"name": name}}
    )
    if cluster_role is not None:
        binding = {
            "metadata": {"name": f"{cluster_role}-{name}"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": cluster_role,
            },
            "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": ns}],
        }
        await ok(backend, "POST", f"{RBAC}/clusterrolebindings", binding)
    token: str = (await token_request(backend, ns, name))["status"]["token"]
    return token


@asynccontextmanager
async def secure_operator(
    backend: Backend, tmp_path: Path, rbac: bool = True
) -> AsyncIterator[tuple[Manager, list[dict[str, Any]], ssl.SSLContext]]:
    """A manager serving secure metrics on a free port, running as the ServiceAccount of
    its generated manifests (with their RBAC when ``rbac``); yields it, the RBAC documents,
    and a client SSL context trusting its certificate."""
    ns = backend.namespace
    operator = Manager(
        name=backend.unique("metrics"),
        namespace=ns,
        metrics_port=0,
        host="127.0.0.1",
        handle_signals=False,
        metrics_certificates=SelfSignedCertificates(["127.0.0.1"]),
    )
    settings = DeploymentSettings(target="x:manager", namespace=ns, watch_namespace=ns)
    docs = [d for d in documents(operator, settings) if d["kind"] in RBAC_KINDS]
    applied = docs if rbac else [d for d in docs if d["kind"] == "ServiceAccount"]
    for doc in applied:
        await ok(backend, "POST", path_of(doc), doc)
    operator.api = await service_account_api(backend, ns, operator.name, tmp_path)
    client = ssl.create_default_context(cadata=operator.metrics_certificates.ca_bundle.decode())  # type: ignore[union-attr]
    running = asyncio.create_task(operator.run())
    try:
        await eventually(lambda: "/metrics" in operator.ports or running.done(), 30.0)
        if running.done():
            running.result()
        yield operator, docs, client
    finally:
        operator.stop()
        await asyncio.wait_for(running, 30.0)
        await operator.api._session.aclose()  # type: ignore[union-attr]
        for doc in applied:
            if "namespace" not in doc["metadata"]:
                await req(backend, "DELETE", f"{path_of(doc)}/{doc['metadata']['name']}")


async def scrape(
    operator: Manager, client: ssl.SSLContext, token: str | None, method: str = "GET"
) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    url = f"https://127.0.0.1:{operator.ports['/metrics']}/metrics"
    async with httpx.AsyncClient(verify=client, timeout=30.0) as session:
        return await session.request(method, url, headers=headers)


async def test_a_scrape_needs_a_token_bound_to_metrics_reader(
    backend: Backend, tmp_path: Path
) -> None:
    async with secure_operator(backend, tmp_path) as (operator, docs, client):
        names = {(d["kind"], d["metadata"]["name"]) for d in docs}
        reader = f"{operator.name}-metrics-reader"
        assert ("ClusterRole", reader) in names
        assert ("ClusterRoleBinding", f"{operator.name}-auth-delegator") in names
        try:
            scraper = await account(backend, "scraper", reader)
            stranger = await account(backend, "stranger", None)

            allowed = await scrape(operator, client, scraper)
            assert allowed.status_code == 200, allowed.text
            assert "controller_runtime_active_workers" in allowed.text or "rest_client" in (
                allowed.text
            )
            assert allowed.headers["content-type"].startswith("text/plain")

            missing = await scrape(operator, client, None)
            assert (missing.status_code, missing.text) == (401, "Unauthorized")
            made_up = await scrape(operator, client, "not-a-token")
            assert (made_up.status_code, made_up.text) == (401, "Unauthorized")

            refused = await scrape(operator, client, stranger)
            user = f"system:serviceaccount:{backend.namespace}:stranger"
            assert (refused.status_code, refused.text) == (
                403,
                f"Authorization denied for user {user}",
            )
            # metrics-reader grants exactly `get` on /metrics: not another verb
            post = await scrape(operator, client, scraper, "POST")
            assert post.status_code == 403, post.text
        finally:
            await req(backend, "DELETE", f"{RBAC}/clusterrolebindings/{reader}-scraper")


async def test_answers_are_cached_as_controller_runtime_does(
    backend: Backend, tmp_path: Path
) -> None:
    """One TokenReview and one SubjectAccessReview per token, for the next scrapes too
    (authentication cached 1 min, an allowed access 5 min, a denied one 30 s)."""
    async with secure_operator(backend, tmp_path) as (operator, _, client):
        reader = f"{operator.name}-metrics-reader"
        try:
            scraper = await account(backend, "scraper", reader)
            stranger = await account(backend, "stranger", None)
            reviews: list[str] = []

            def observe(seen: RequestObservation) -> None:
                if seen.method == "POST" and seen.path.endswith("reviews"):
                    reviews.append(seen.path.rsplit("/", 1)[1])

            add_request_observer(operator.api, observe)
            for _ in range(3):
                assert (await scrape(operator, client, scraper)).status_code == 200
                assert (await scrape(operator, client, stranger)).status_code == 403
            assert sorted(reviews) == [
                "subjectaccessreviews",
                "subjectaccessreviews",
                "tokenreviews",
                "tokenreviews",
            ]
        finally:
            await req(backend, "DELETE", f"{RBAC}/clusterrolebindings/{reader}-scraper")


async def test_without_the_auth_delegator_binding_a_scrape_fails_closed(
    backend: Backend, tmp_path: Path
) -> None:
    """The operator's account cannot create TokenReviews: every scrape is refused (500,
    as controller-runtime's filter answers a failed review), none is let through."""
    async with secure_operator(backend, tmp_path, rbac=False) as (operator, _, client):
        token = await account(backend, "scraper", None)
        answer = await scrape(operator, client, token)
        assert (answer.status_code, answer.text) == (500, "Authentication failed")
        assert (await scrape(operator, client, None)).status_code == 401
