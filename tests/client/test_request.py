"""The request layer over the wire: every error answer becomes a public exception naming the
object, the status, the reason and the server's message; Retry-After is waited out where a
request is safe to repeat; a refused connection is "unavailable", never a timeout."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import httpx
import kr8s.asyncio
import pytest
from kr8s.asyncio.objects import ConfigMap

from reconcile_kit import Action, Controller, PatchHelper
from reconcile_kit.client import errors
from reconcile_kit.client.request import Target, send
from reconcile_kit.client.transport import use_aiohttp_transport
from reconcile_kit.runtime.config import ControllerConfig
from reconcile_kit.runtime.context import Context
from reconcile_kit.runtime.sources import ReflectorPool
from reconcile_kit.testing import APIServer

from ..kubehttp import call

CM = "/api/v1/namespaces/default/configmaps"

EXPECTED = [
    (400, errors.BadRequestError),
    (403, errors.ForbiddenError),
    (404, errors.NotFoundError),
    (409, errors.ConflictError),
    (410, errors.ExpiredError),
    (422, errors.InvalidError),
    (429, errors.TooManyRequestsError),
    (500, errors.InternalServerError),
    (503, errors.APIUnavailableError),
]


@pytest.fixture(params=["httpx", "direct"])
async def kube(kube: kr8s.asyncio.Api, request: pytest.FixtureRequest) -> kr8s.asyncio.Api:
    """The api on both request paths: kr8s's httpx client, and the direct route over
    aiohttp (reconcile_kit.client.direct) the toolkit's requests take with its transport."""
    if request.param == "direct":
        assert await use_aiohttp_transport(kube)
    return kube


async def configmap(kube: kr8s.asyncio.Api, name: str) -> ConfigMap:
    await call(kube, "POST", CM, {"metadata": {"name": name}, "data": {"a": "1"}})
    return await ConfigMap.get(name, namespace="default", api=kube)


@pytest.mark.parametrize(("status", "cls"), EXPECTED)
async def test_each_status_is_its_own_public_error(
    kube: kr8s.asyncio.Api, apiserver: APIServer, status: int, cls: type[errors.APIError]
) -> None:
    cm = await configmap(kube, "c")
    # a Retry-After longer than the layer waits out in place: the 429 surfaces
    apiserver.faults.fail(status, verb="patch", name="c", retry_after=60)
    with pytest.raises(cls) as caught:
        async with PatchHelper(cm):
            cm.raw["data"]["a"] = "2"
    error = caught.value
    assert type(error) is cls
    assert (error.kind, error.namespace, error.name) == ("ConfigMap", "default", "c")
    assert error.status == status
    assert error.method == "PATCH"
    assert error.path == f"{CM}/c"
    text = str(error)
    assert text.startswith(f"ConfigMap default/c: PATCH {CM}/c: {status} ")
    assert error.server_message and error.server_message in text
    assert apiserver.requests.count(verb="patch") == 1


async def test_forbidden_names_the_missing_rule(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    apiserver.faults.fail(403, verb="get", resource="leases")
    with pytest.raises(errors.ForbiddenError) as caught:
        await send(
            kube,
            "GET",
            version="coordination.k8s.io/v1",
            namespace="ops",
            url="leases/mine",
            target=Target("Lease", "ops", "mine"),
        )
    assert (caught.value.verb, caught.value.group, caught.value.resource) == (
        "get",
        "coordination.k8s.io",
        "leases",
    )
    assert "needs get on leases.coordination.k8s.io in namespace ops" in str(caught.value)


async def test_invalid_carries_the_field_causes(kube: kr8s.asyncio.Api) -> None:
    bad = ConfigMap(
        {"metadata": {"name": "c", "namespace": "default", "labels": {"x": "-bad-"}}}, api=kube
    )
    with pytest.raises(errors.InvalidError) as caught:
        await send(kube, "POST", url="configmaps", namespace="default", body=bad.raw)
    assert caught.value.reason == "Invalid"
    assert [c["field"] for c in caught.value.causes] == ["metadata.labels"]
    assert "metadata.labels" in str(caught.value)


async def test_already_exists_is_a_conflict(kube: kr8s.asyncio.Api) -> None:
    await configmap(kube, "c")
    with pytest.raises(errors.AlreadyExistsError) as caught:
        await send(
            kube, "POST", url="configmaps", namespace="default", body={"metadata": {"name": "c"}}
        )
    assert isinstance(caught.value, errors.ConflictError)
    assert caught.value.reason == "AlreadyExists"


async def test_a_slow_answer_is_a_server_timeout(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    apiserver.faults.latency(2.0, verb="get", times=1)
    with pytest.raises(errors.ServerTimeoutError) as caught:
        await send(kube, "GET", url="configmaps/x", namespace="default", timeout=httpx.Timeout(0.2))
    assert caught.value.status == 0


async def test_retry_after_is_waited_out_for_reads(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    await configmap(kube, "c")
    apiserver.faults.fail(429, verb="get", name="c", times=2, retry_after=1)
    loop = asyncio.get_running_loop()
    started = loop.time()
    reply = await send(kube, "GET", url="configmaps/c", namespace="default")
    assert reply.json()["metadata"]["name"] == "c"
    assert loop.time() - started >= 2.0
    assert apiserver.requests.count(verb="get", name="c") == 3


async def test_retry_after_is_waited_out_for_a_merge_patch(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    cm = await configmap(kube, "c")
    apiserver.faults.fail(429, verb="patch", name="c", times=1, retry_after=1)
    async with PatchHelper(cm):
        cm.raw["data"]["a"] = "2"
    assert apiserver.requests.count(verb="patch") == 2
    assert cm.raw["data"]["a"] == "2"


async def test_a_create_facing_429_surfaces_with_retry_after(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    apiserver.faults.fail(429, verb="create", times=1, retry_after=2)
    with pytest.raises(errors.TooManyRequestsError) as caught:
        await send(
            kube, "POST", url="configmaps", namespace="default", body={"metadata": {"name": "c"}}
        )
    assert caught.value.retry_after == 2
    assert apiserver.requests.count(verb="create") == 1


async def test_a_key_facing_429_sends_at_most_three_patches_in_three_seconds(
    kube: kr8s.asyncio.Api, apiserver: APIServer, caplog: pytest.LogCaptureFixture
) -> None:
    await configmap(kube, "c")
    rule = apiserver.faults.fail(429, verb="patch", name="c", times=None, retry_after=2)
    done = asyncio.Event()

    async def reconcile(cm: Any, ctx: Context) -> Action | None:
        async with PatchHelper(cm):
            cm.raw["data"]["a"] = "2"
        done.set()
        return None

    ctrl = Controller(
        ConfigMap, api=kube, namespace="default", config=ControllerConfig(pool=ReflectorPool())
    )
    task = asyncio.create_task(ctrl.run(reconcile))
    await asyncio.sleep(3.0)  # the window in which the server answers 429
    in_window = apiserver.requests.count(verb="patch")
    rule.times = 0
    await asyncio.wait_for(done.wait(), 10)
    await ctrl.shutdown()
    await task
    assert 1 <= in_window <= 3
    assert "Traceback" not in caplog.text


async def test_a_refused_connection_is_unavailable_and_the_loop_recovers(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    server = APIServer(data_dir=tmp_path)
    await server.start()
    kube = await server.api()
    seen: set[str] = set()

    async def reconcile(cm: Any, ctx: Context) -> Action | None:
        seen.add(cm.name)
        return None

    ctrl = Controller(
        ConfigMap, api=kube, namespace="default", config=ControllerConfig(pool=ReflectorPool())
    )
    task = asyncio.create_task(ctrl.run(reconcile))
    try:
        await call(kube, "POST", CM, {"metadata": {"name": "before"}})
        assert await ctrl.wait_reconciled(lambda: "before" in seen, 10)
        await server.stop()
        with pytest.raises(errors.APIUnavailableError) as caught:
            await send(kube, "GET", url="configmaps/before", namespace="default")
        assert "cannot reach the API server" in str(caught.value)
        assert "timeout" not in str(caught.value).lower()
        with caplog.at_level(logging.WARNING):
            server = APIServer(port=server.port, data_dir=tmp_path)  # same port and state
            await server.start()
            await call(kube, "POST", CM, {"metadata": {"name": "after"}})
            assert await ctrl.wait_reconciled(lambda: "after" in seen, 15)
    finally:
        await ctrl.shutdown()
        await task
        await server.stop()
