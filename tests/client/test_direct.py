"""The direct route (reconcile_kit.client.direct): the toolkit's whole requests go around
httpx on the aiohttp transport's connections, sending what kr8s's client would."""

from __future__ import annotations

import asyncio

import httpx
import kr8s.asyncio
import pytest
from kr8s.asyncio.objects import ConfigMap

from reconcile_kit.client import direct
from reconcile_kit.client.contenttypes import MERGE_PATCH
from reconcile_kit.client.errors import ServerTimeoutError
from reconcile_kit.client.ratelimit import install_rate_limit
from reconcile_kit.client.request import send
from reconcile_kit.client.transport import use_aiohttp_transport
from reconcile_kit.testing import APIServer

from ..kubehttp import call

CM = "/api/v1/namespaces/default/configmaps"


async def opened(kube: kr8s.asyncio.Api) -> httpx.AsyncClient:
    await kube.version()  # kr8s opens its client on its first request
    assert kube._session is not None
    return kube._session


async def test_requests_carry_what_kr8s_would_send(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    assert await use_aiohttp_transport(kube)
    session = await opened(kube)
    assert direct.route(kube) is not None
    await call(kube, "POST", CM, {"metadata": {"name": "c"}, "data": {"a": "1"}})
    reply = await send(
        kube,
        "PATCH",
        url="configmaps/c",
        namespace="default",
        params={"fieldManager": "direct", "dryRun": "All"},
        body={"data": {"a": "2"}},
        content_type=MERGE_PATCH,
    )
    assert reply.json()["data"] == {"a": "2"} and reply.path == f"{CM}/c"
    assert reply.headers["content-type"] == "application/json"
    [patch] = [r for r in apiserver.requests if r.method == "PATCH"]
    assert patch.content_type == MERGE_PATCH
    assert patch.query == {"fieldManager": "direct", "dryRun": "All"}
    assert patch.user_agent == session.headers["user-agent"]
    cm = await ConfigMap.get("c", namespace="default", api=kube)
    assert cm.raw["data"] == {"a": "1"}  # dry run


async def test_a_recreated_client_gets_a_new_route(kube: kr8s.asyncio.Api) -> None:
    assert await use_aiohttp_transport(kube)
    await opened(kube)
    first = direct.route(kube)
    await kube._create_session()  # as kr8s does on re-authentication
    second = direct.route(kube)
    assert first is not None and second is not None and second is not first
    assert (await send(kube, "GET", url="namespaces/default", base="/api")).status == 200


async def test_httpx_keeps_requests_where_the_route_would_lose_something(
    kube: kr8s.asyncio.Api,
) -> None:
    await opened(kube)
    assert direct.route(kube) is None  # kr8s's own transport: httpx
    assert await use_aiohttp_transport(kube)
    seen: list[str] = []

    async def hook(request: httpx.Request) -> None:
        seen.append(request.url.path)

    session = await opened(kube)
    session.event_hooks["request"].append(hook)
    assert direct.route(kube) is None  # a hook of the user's sees every request
    await send(kube, "GET", url="namespaces/default", base="/api")
    assert seen[-1] == "/api/v1/namespaces/default"


async def test_the_rate_limit_holds_on_the_direct_route(kube: kr8s.asyncio.Api) -> None:
    assert await use_aiohttp_transport(kube)
    bucket = install_rate_limit(kube, qps=0.001, burst=3)
    assert bucket is not None
    await opened(kube)  # one token
    assert direct.route(kube) is not None
    for _ in range(2):
        await send(kube, "GET", url="namespaces/default", base="/api")
    assert bucket.tokens < 1  # all three taken: the next request would wait ~1,000 s


def test_headers_aiohttp_sends_itself_are_not_copied_per_request() -> None:
    """httpx's defaults aiohttp would send anyway (Accept, Accept-Encoding) and HTTP/1.1's
    keep-alive are left to aiohttp; every other header is kept, whatever its case."""
    sent = httpx.AsyncClient(headers={"User-Agent": "kr8s/x", "Authorization": "Bearer t"})
    assert direct.own_headers(sent.headers) == {"user-agent": "kr8s/x", "authorization": "Bearer t"}
    other = {"Accept": "application/json", "Accept-Encoding": "br", "Connection": "close"}
    assert direct.own_headers(other) == {k.lower(): v for k, v in other.items()}


@pytest.mark.looptime
async def test_a_request_the_server_never_answers_times_out(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    """kr8s sets no timeout; a request on the direct route waits at most
    REQUEST_READ_TIMEOUT for the server's answer (kube-apiserver answers within its 60 s
    request timeout), so a connection that died unseen cannot hold a reconcile forever."""
    assert await use_aiohttp_transport(kube)
    await opened(kube)
    await call(kube, "POST", CM, {"metadata": {"name": "c"}})
    apiserver.faults.latency(600, verb="patch", resource="configmaps")
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(ServerTimeoutError):
        await send(
            kube,
            "PATCH",
            url="configmaps/c",
            namespace="default",
            body={"data": {"a": "2"}},
            content_type=MERGE_PATCH,
        )
    assert loop.time() - started == pytest.approx(direct.REQUEST_READ_TIMEOUT, abs=1.0)
