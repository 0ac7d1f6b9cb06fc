"""No private exception class ever reaches a user: every public entry point that talks to
the API server, driven into every fault the embedded server can inject, raises (or logs)
only public reconcile_kit errors."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import kr8s.asyncio
import pytest
from kr8s.asyncio.objects import ConfigMap

from reconcile_kit import (
    Context,
    EventRecorder,
    LeaderElection,
    ObjectRef,
    PatchHelper,
    ReconcileKitError,
    Reflector,
)
from reconcile_kit.client import discovery
from reconcile_kit.runtime.resources import info_from_class
from reconcile_kit.runtime.sources import CacheView
from reconcile_kit.runtime.storewriter import StoreWriter
from reconcile_kit.testing import APIServer, Faults, eventually

from ..kubehttp import call

CM = "/api/v1/namespaces/default/configmaps"
EntryPoint = Callable[[kr8s.asyncio.Api, ConfigMap, APIServer], Awaitable[Any]]


def context(kube: kr8s.asyncio.Api) -> Context:
    store = StoreWriter().store
    return Context(
        controller_name="test",
        cache=CacheView("test", store, ()),
        api=kube,
        key=ObjectRef("ConfigMap", "default", "c"),
        attempt=1,
        reasons=frozenset(),
        store=store,
        data=None,
        log=logging.LoggerAdapter(logging.getLogger("test")),
    )


async def patch_helper(kube: kr8s.asyncio.Api, cm: ConfigMap, apiserver: APIServer) -> None:
    async with PatchHelper(cm):
        cm.raw["data"]["a"] = "2"
        cm.raw["metadata"]["finalizers"] = ["example.com/f"]  # a guarded write too


async def apply(kube: kr8s.asyncio.Api, cm: ConfigMap, apiserver: APIServer) -> None:
    child = ConfigMap({"metadata": {"name": "child", "namespace": "default"}}, api=kube)
    await context(kube).apply(child)
    child.raw["data"] = {"b": "1"}
    await context(kube).apply(child)


async def patch_status(kube: kr8s.asyncio.Api, cm: ConfigMap, apiserver: APIServer) -> None:
    await context(kube).patch_status(cm, {"phase": "x"})


async def update_status(kube: kr8s.asyncio.Api, cm: ConfigMap, apiserver: APIServer) -> None:
    await context(kube).update_status(cm)


async def status_discovery(kube: kr8s.asyncio.Api, cm: ConfigMap, apiserver: APIServer) -> None:
    await discovery.has_status_subresource(kube, "apps/v1", "deployments")


async def until_requested(apiserver: APIServer, resource: str) -> None:
    await eventually(lambda: apiserver.requests.count(resource=resource) > 0, 5, what=resource)


async def lease(kube: kr8s.asyncio.Api, cm: ConfigMap, apiserver: APIServer) -> None:
    election = LeaderElection("lock", namespace="default")
    task = asyncio.create_task(election.run(kube))
    try:
        await until_requested(apiserver, "leases")
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def reflector(kube: kr8s.asyncio.Api, cm: ConfigMap, apiserver: APIServer) -> None:
    reflector = Reflector(kube, info_from_class(ConfigMap), namespace="default")
    before = apiserver.requests.count(verb="list")
    reflector.start()
    try:
        await eventually(lambda: apiserver.requests.count(verb="list") > before, 5, what="a LIST")
    finally:
        await reflector.stop()


async def events(kube: kr8s.asyncio.Api, cm: ConfigMap, apiserver: APIServer) -> None:
    recorder = EventRecorder(kube, reporting_controller="example.com/test")
    recorder.event(cm, "Normal", "Tested", "a message")
    await recorder.flush()
    await recorder.stop()


ENTRY_POINTS = [
    patch_helper,
    apply,
    patch_status,
    update_status,
    status_discovery,
    lease,
    reflector,
    events,
]


def private(error: BaseException) -> list[str]:
    """Names of private reconcile_kit exception classes in ``error``'s chain."""
    found, current, seen = [], error, set()
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        cls = type(current)
        if cls.__module__.startswith("reconcile_kit") and cls.__name__.startswith("_"):
            found.append(f"{cls.__module__}.{cls.__name__}")
        current = current.__cause__ or current.__context__
    return found


@pytest.mark.parametrize("status", Faults.FAILURE_CODES)
@pytest.mark.parametrize("entry", ENTRY_POINTS, ids=lambda f: f.__name__)
async def test_only_public_errors_escape(
    kube: kr8s.asyncio.Api,
    apiserver: APIServer,
    caplog: pytest.LogCaptureFixture,
    entry: EntryPoint,
    status: int,
) -> None:
    await call(kube, "POST", CM, {"metadata": {"name": "c"}, "data": {"a": "1"}})
    cm = await ConfigMap.get("c", namespace="default", api=kube)
    apiserver.faults.fail(status, times=1, retry_after=1)
    try:
        await entry(kube, cm, apiserver)
    except Exception as error:
        assert isinstance(error, ReconcileKitError), repr(error)
        assert not private(error)
    for record in caplog.records:
        if record.exc_info and record.exc_info[1] is not None:
            assert not private(record.exc_info[1])
        assert "._" not in record.getMessage().split(":")[0]
