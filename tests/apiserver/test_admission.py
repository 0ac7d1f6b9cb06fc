"""Admission webhooks on the embedded server: what only it can show (the conformance suite,
tests/conformance/test_admission_webhooks.py, checks the behaviour against kube-apiserver)."""

from __future__ import annotations

from typing import Any

import kr8s

from reconcile_kit.testing import APIServer
from reconcile_kit.testing.apiserver.admission import run_sync
from reconcile_kit.testing.apiserver.cluster import WriteOptions

from ..conformance.webhook_server import Review, WebhookServer, answer
from ..kubehttp import call

CM = "/api/v1/namespaces/default/configmaps"
VALIDATING = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
MERGE = "application/merge-patch+json"


def hook(server: WebhookServer, path: str, **fields: Any) -> dict[str, Any]:
    return {
        "name": f"{path}.example.com",
        "clientConfig": server.client_config(path),
        "rules": [
            {
                "operations": ["*"],
                "apiGroups": [""],
                "apiVersions": ["v1"],
                "resources": ["configmaps"],
            }
        ],
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        **fields,
    }


async def test_no_configuration_no_client(apiserver: APIServer, kube: kr8s.asyncio.Api) -> None:
    """Without configurations a write costs no webhook machinery (no HTTP client)."""
    status, _ = await call(kube, "POST", CM, {"metadata": {"name": "a"}})
    assert status == 201
    status, _ = await call(kube, "PATCH", f"{CM}/a", {"data": {"k": "v"}}, MERGE)
    assert status == 200
    assert apiserver._admission is not None
    assert apiserver._admission._session is None


async def test_the_servers_own_writes_are_not_admitted(
    apiserver: APIServer, kube: kr8s.asyncio.Api
) -> None:
    server = await WebhookServer().start()
    server.handlers["deny"] = lambda r: answer(r, False)
    try:
        body = {"metadata": {"name": "deny"}, "webhooks": [hook(server, "deny")]}
        status, _ = await call(kube, "POST", VALIDATING, body)
        assert status == 201
        status, _ = await call(kube, "POST", CM, {"metadata": {"name": "a"}})
        assert status == 400
        cluster = apiserver.cluster
        rt = cluster.registry.lookup("", "v1", "configmaps")
        assert rt is not None
        result = cluster.create(rt, "default", {"metadata": {"name": "b"}}, WriteOptions())
        assert result.code == 201
        # the same write as steps, run without webhooks
        steps = cluster.create_steps(rt, "default", {"metadata": {"name": "c"}}, WriteOptions())
        assert run_sync(steps).code == 201
    finally:
        await server.stop()


async def test_reruns_are_bounded(apiserver: APIServer, kube: kr8s.asyncio.Api) -> None:
    """A write whose object changes during every call gives up after 10 runs (500)."""
    server = await WebhookServer().start()
    runs: list[Review] = []

    async def meddle(review: Review) -> dict[str, Any]:
        if review["request"]["object"]["metadata"]["name"] == "a":
            runs.append(review)
            rt = apiserver.cluster.registry.lookup("", "v1", "configmaps")
            assert rt is not None
            apiserver.cluster.patch(
                rt, "default", "a", MERGE, {"data": {"n": str(len(runs))}}, WriteOptions()
            )
        return answer(review)

    server.handlers["meddle"] = meddle
    try:
        status, _ = await call(kube, "POST", CM, {"metadata": {"name": "a"}})
        assert status == 201
        body = {"metadata": {"name": "meddle"}, "webhooks": [hook(server, "meddle")]}
        status, _ = await call(kube, "POST", VALIDATING, body)
        assert status == 201
        status, reply = await call(kube, "PATCH", f"{CM}/a", {"data": {"k": "v"}}, MERGE)
        assert status == 500
        assert reply["message"] == (
            "Internal error occurred: the object kept changing while admission webhooks ran"
        )
        assert len(runs) == 10
    finally:
        await server.stop()
