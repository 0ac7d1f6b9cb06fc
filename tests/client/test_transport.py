"""The aiohttp transport under kr8s, over the wire against the embedded API server."""

from __future__ import annotations

import ssl

import httpx
import kr8s
import pytest
from kr8s.asyncio.objects import ConfigMap

from reconcile_kit import Context, Controller, Manager, PatchHelper
from reconcile_kit.client.transport import (
    AiohttpFirstTransport,
    acquire_transport,
    release_aiohttp_transport,
    release_transport,
    use_aiohttp_transport,
)
from reconcile_kit.runtime.config import ControllerConfig
from reconcile_kit.runtime.sources import ReflectorPool
from reconcile_kit.testing import APIServer, run_until


def transport_of(api: kr8s.asyncio.Api) -> httpx.AsyncBaseTransport:
    session = api._session
    assert session is not None
    return session._transport


async def test_kr8s_works_unchanged_over_aiohttp(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    assert await use_aiohttp_transport(kube)
    cm = await ConfigMap({"metadata": {"name": "a"}, "data": {"x": "1"}}, api=kube)
    await cm.create()
    assert isinstance(transport_of(kube), AiohttpFirstTransport)
    await cm.patch({"data": {"x": "2"}})
    [listed] = [c async for c in kube.get("configmaps", namespace="default")]
    assert listed.raw["data"] == {"x": "2"}
    with pytest.raises(kr8s.NotFoundError):
        await ConfigMap.get("missing", namespace="default", api=kube)
    await cm.delete()
    # (kr8s reads one object with LISTs and a field selector, retrying a few times)
    served = [(r.verb, r.status) for r in apiserver.requests if r.resource == "configmaps"]
    assert served[:3] == [("create", 201), ("patch", 200), ("list", 200)]
    assert set(served[3:-1]) == {("list", 200)} and served[-1] == ("delete", 200)


async def test_a_plain_http_api_loads_no_ca_bundle(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    # loading certifi's CAs cost ~20 ms of CPU per api (each test's, each fleet cluster's)
    other = await apiserver.api()
    for api in (kube, other):
        assert await use_aiohttp_transport(api)
        assert [c async for c in ConfigMap.list(namespace="default", api=api)] == []
    first, second = transport_of(kube), transport_of(other)
    assert isinstance(first, AiohttpFirstTransport) and isinstance(second, AiohttpFirstTransport)
    assert first.fast.ssl_context is second.fast.ssl_context
    assert first.fast.ssl_context.cert_store_stats()["x509_ca"] == 0
    assert first.fast.ssl_context.verify_mode == ssl.CERT_REQUIRED
    assert apiserver.requests.count(verb="list") == 2


async def test_timeouts_are_httpx_timeouts(kube: kr8s.asyncio.Api, apiserver: APIServer) -> None:
    assert await use_aiohttp_transport(kube)
    apiserver.faults.latency(1.0, verb="get")
    with pytest.raises(kr8s.APITimeoutError):
        async with kube.call_api(
            "GET", url="namespaces/default", timeout=httpx.Timeout(5.0, read=0.1)
        ):
            pass


async def test_a_recreated_client_gets_the_transport_again(kube: kr8s.asyncio.Api) -> None:
    """kr8s builds a new httpx client when it re-authenticates (401/403)."""
    assert await use_aiohttp_transport(kube)
    assert await use_aiohttp_transport(kube)  # idempotent
    await kube._create_session()
    assert isinstance(transport_of(kube), AiohttpFirstTransport)
    assert [c async for c in ConfigMap.list(namespace="default", api=kube)] == []


async def test_connection_upgrades_stay_on_httpx(kube: kr8s.asyncio.Api) -> None:
    """websocket upgrades (exec, port-forward via httpx-ws) need httpcore's stream."""
    assert await use_aiohttp_transport(kube)
    assert [c async for c in ConfigMap.list(namespace="default", api=kube)] == []
    transport = transport_of(kube)
    assert isinstance(transport, AiohttpFirstTransport)
    fallback = transport.fallback
    assert isinstance(fallback, httpx.AsyncHTTPTransport)

    def served() -> int:  # "HTTP/1.1, IDLE, Request Count: 3" per connection
        return sum(int(c.info().rsplit(" ", 1)[-1]) for c in fallback._pool.connections)

    before = served()
    # plain requests do not touch it:
    assert [c async for c in ConfigMap.list(namespace="default", api=kube)] == []
    assert served() == before
    async with kube.call_api(
        "GET",
        url="namespaces",
        raise_for_status=False,
        headers={"Connection": "Upgrade", "Upgrade": "websocket"},
    ):
        pass
    assert served() == before + 1


async def test_controllers_install_it_unless_told_not_to(kube: kr8s.asyncio.Api) -> None:
    await ConfigMap({"metadata": {"name": "a"}}, api=kube).create()
    seen: list[str] = []

    async def reconcile(obj: ConfigMap, ctx: Context) -> None:
        async with PatchHelper(obj):
            obj.raw["metadata"].setdefault("labels", {})["seen"] = "yes"
        seen.append(obj.name)

    plain = Controller(
        ConfigMap,
        api=kube,
        namespace="default",
        config=ControllerConfig(pool=ReflectorPool(), transport="httpx"),
    )
    assert await run_until(plain, reconcile, lambda: seen == ["a"])
    assert isinstance(transport_of(kube), httpx.AsyncHTTPTransport)
    fast = Controller(
        ConfigMap, api=kube, namespace="default", config=ControllerConfig(pool=ReflectorPool())
    )
    assert await run_until(fast, reconcile, lambda: seen == ["a", "a"])
    assert isinstance(transport_of(kube), AiohttpFirstTransport)


def test_unknown_transport_is_refused() -> None:
    with pytest.raises(ValueError, match="transport"):
        Controller(ConfigMap, config=ControllerConfig(transport="curl"))
    with pytest.raises(ValueError, match="transport"):
        Manager(transport="curl")


async def test_release_closes_aiohttp_and_requests_still_work(kube: kr8s.asyncio.Api) -> None:
    assert await use_aiohttp_transport(kube)
    assert [c async for c in ConfigMap.list(namespace="default", api=kube)] == []
    transport = transport_of(kube)
    assert isinstance(transport, AiohttpFirstTransport)
    session = transport.fast.client
    await release_aiohttp_transport(kube)
    assert session is not None and session.closed
    assert [c async for c in ConfigMap.list(namespace="default", api=kube)] == []


async def test_the_last_user_closes_the_aiohttp_connections(kube: kr8s.asyncio.Api) -> None:
    """A controller closes the connections it opened, not those of another user of its api
    (a manager, or another controller), whether its run ends by shutdown or by an error."""
    await ConfigMap({"metadata": {"name": "a"}}, api=kube).create()
    seen: list[str] = []

    async def reconcile(obj: ConfigMap, ctx: Context) -> None:
        seen.append(obj.name)

    await acquire_transport(kube, "aiohttp")  # as a manager does
    assert [c async for c in ConfigMap.list(namespace="default", api=kube)] != []
    transport = transport_of(kube)
    assert isinstance(transport, AiohttpFirstTransport)
    session = transport.fast.client
    assert session is not None

    ctrl = Controller(
        ConfigMap, api=kube, namespace="default", config=ControllerConfig(pool=ReflectorPool())
    )
    assert await run_until(ctrl, reconcile, lambda: seen == ["a"])
    failing = Controller("NoSuchKind", api=kube, config=ControllerConfig(pool=ReflectorPool()))
    with pytest.raises(ValueError, match="NoSuchKind"):
        await failing.run(reconcile)
    assert transport.fast.client is session and not session.closed  # still in use

    await release_transport(kube)
    assert session.closed


async def test_a_controller_alone_closes_its_connections_on_error(kube: kr8s.asyncio.Api) -> None:
    async def reconcile(obj: ConfigMap, ctx: Context) -> None:
        return None

    failing = Controller("NoSuchKind", api=kube, config=ControllerConfig(pool=ReflectorPool()))
    with pytest.raises(ValueError, match="NoSuchKind"):
        await failing.run(reconcile)
    transport = transport_of(kube)
    assert isinstance(transport, AiohttpFirstTransport)
    assert transport.fast.client is None  # released
    assert not failing.running
