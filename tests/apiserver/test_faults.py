"""Fault injection hooks of the embedded API server."""

from __future__ import annotations

import asyncio

import kr8s
import pytest

from reconcile_kit.testing import APIServer

from ..kubehttp import call, watch

CM = "/api/v1/namespaces/default/configmaps"
MERGE = "application/merge-patch+json"


@pytest.mark.parametrize(
    ("code", "reason"),
    [
        (409, "Conflict"),
        (410, "Expired"),
        (429, "TooManyRequests"),
        (500, "InternalError"),
        (503, "ServiceUnavailable"),
    ],
)
async def test_fail_next_matching_requests(
    kube: kr8s.asyncio.Api, apiserver: APIServer, code: int, reason: str
) -> None:
    await call(kube, "POST", CM, {"metadata": {"name": "a"}})
    await call(kube, "POST", CM, {"metadata": {"name": "b"}})
    rule = apiserver.faults.fail(code, verb="patch", resource="configmaps", name="a", times=2)
    for _ in range(2):
        status, body = await call(kube, "PATCH", f"{CM}/a", {"data": {"k": "v"}}, MERGE)
        assert (status, body["reason"]) == (code, reason)
    status, _ = await call(kube, "PATCH", f"{CM}/b", {"data": {"k": "v"}}, MERGE)
    assert status == 200  # other names unaffected
    status, body = await call(kube, "PATCH", f"{CM}/a", {"data": {"k": "v"}}, MERGE)
    assert status == 200 and body["data"] == {"k": "v"}
    assert rule.hits == 2


async def test_429_carries_retry_after(kube: kr8s.asyncio.Api, apiserver: APIServer) -> None:
    apiserver.faults.fail(429, verb="list", retry_after=7)
    base, version = "/api", "v1"
    async with kube.call_api(
        "GET",
        version=version,
        base=base,
        url="namespaces/default/configmaps",
        raise_for_status=False,
    ) as response:
        assert response.status_code == 429
        assert response.headers["Retry-After"] == "7"
        assert response.json()["details"]["retryAfterSeconds"] == 7


async def test_fail_matches_subresource(kube: kr8s.asyncio.Api, apiserver: APIServer) -> None:
    deploy = "/apis/apps/v1/namespaces/default/deployments"
    await call(
        kube,
        "POST",
        deploy,
        {
            "metadata": {"name": "d"},
            "spec": {
                "selector": {"matchLabels": {"a": "b"}},
                "template": {
                    "metadata": {"labels": {"a": "b"}},
                    "spec": {"containers": [{"name": "c", "image": "busybox"}]},
                },
            },
        },
    )
    apiserver.faults.fail(500, subresource="status")
    status, _ = await call(kube, "PATCH", f"{deploy}/d", {"spec": {"replicas": 2}}, MERGE)
    assert status == 200
    status, _ = await call(kube, "PATCH", f"{deploy}/d/status", {"status": {"replicas": 2}}, MERGE)
    assert status == 500


async def test_watch_fault_410_is_sent_in_stream(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    apiserver.faults.fail(410, verb="watch")
    events = [e async for e in watch(kube, CM, {"resourceVersion": "1"})]
    assert [e["type"] for e in events] == ["ERROR"]
    assert events[0]["object"]["code"] == 410


async def test_latency(kube: kr8s.asyncio.Api, apiserver: APIServer) -> None:
    apiserver.faults.latency(0.3, verb="get")
    loop = asyncio.get_running_loop()
    started = loop.time()
    status, _ = await call(kube, "GET", "/api/v1/namespaces/default")
    assert status == 200 and loop.time() - started >= 0.3
    started = loop.time()
    await call(kube, "GET", CM)  # a list: not delayed
    assert loop.time() - started < 0.3


async def test_fault_rejects_non_error_status(apiserver: APIServer) -> None:
    with pytest.raises(ValueError, match="status 200"):
        apiserver.faults.fail(200)


async def test_a_fraction_of_matching_requests_fails(apiserver: APIServer) -> None:
    kube = await apiserver.api()
    apiserver.faults.fail(500, verb="get", times=None, fraction=0.25, seed=3)
    failures = 0
    for _ in range(200):
        status, _ = await call(kube, "GET", "/api/v1/namespaces/default")
        failures += status == 500
    assert 30 <= failures <= 70
    with pytest.raises(ValueError, match="fraction"):
        apiserver.faults.fail(500, fraction=1.5)
