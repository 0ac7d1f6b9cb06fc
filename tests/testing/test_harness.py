"""run_until over the wire against the embedded API server: events, and a clean exit."""

from __future__ import annotations

from typing import Any

import kr8s.asyncio
from kr8s.asyncio.objects import ConfigMap

from reconcile_kit import Context, Controller
from reconcile_kit.runtime.sources import ReflectorPool
from reconcile_kit.testing import run_until

from ..conftest import assert_closed_cleanly, run_python_dev_mode
from ..kubehttp import call

CM = "/api/v1/namespaces/default/configmaps"
EVENTS = "/apis/events.k8s.io/v1/namespaces/default/events"


async def test_ctx_recorder_writes_events_in_run_until(kube: kr8s.asyncio.Api) -> None:
    await call(kube, "POST", CM, {"metadata": {"name": "a"}})
    seen: list[str] = []

    async def reconcile(obj: Any, ctx: Context) -> None:
        assert ctx.recorder is not None
        ctx.recorder.event(obj, "Normal", "Seen", "reconciled outside a manager")
        seen.append(obj.name)

    ctrl = Controller(ConfigMap, api=kube, namespace="default", pool=ReflectorPool())
    assert await run_until(ctrl, reconcile, lambda: seen == ["a"])
    # the recorder the controller created was flushed and stopped when its run ended
    assert ctrl.recorder is None
    status, events = await call(kube, "GET", EVENTS)
    assert status == 200
    [event] = [e for e in events["items"] if e["reason"] == "Seen"]
    assert event["regarding"]["kind"] == "ConfigMap"
    assert event["regarding"]["name"] == "a"
    assert event["note"] == "reconciled outside a manager"
    assert event["reportingController"] == "configmap"  # the controller's name


async def test_a_given_recorder_is_used_and_left_to_its_owner(kube: kr8s.asyncio.Api) -> None:
    from reconcile_kit import EventRecorder

    await call(kube, "POST", CM, {"metadata": {"name": "a"}})
    seen: list[str] = []
    recorder = EventRecorder(kube, reporting_controller="example.com/mine", api_group="")

    async def reconcile(obj: Any, ctx: Context) -> None:
        assert ctx.recorder is recorder
        ctx.recorder.event(obj, "Warning", "Odd", "core/v1 this time")
        seen.append(obj.name)

    ctrl = Controller(
        ConfigMap, api=kube, namespace="default", pool=ReflectorPool(), recorder=recorder
    )
    async with recorder:
        assert await run_until(ctrl, reconcile, lambda: seen == ["a"])
        assert ctrl.recorder is recorder
    _, events = await call(kube, "GET", "/api/v1/namespaces/default/events")
    [event] = [e for e in events["items"] if e["reason"] == "Odd"]
    assert event["source"]["component"] == "example.com/mine"


RUN_UNTIL = """
    import asyncio
    import gc

    import aiohttp
    from kr8s.asyncio.objects import ConfigMap

    from reconcile_kit import Controller
    from reconcile_kit.client.transport import close_session
    from reconcile_kit.testing import APIServer, run_until


    async def main() -> None:
        async with APIServer() as server, aiohttp.ClientSession() as http:
            cms = f"{server.url}/api/v1/namespaces/default/configmaps"
            async with http.post(cms, json={"metadata": {"name": "a"}}) as response:
                assert response.status == 201
            seen = []

            async def reconcile(obj, ctx):
                ctx.recorder.event(obj, "Normal", "Seen", "seen in run_until")
                seen.append(obj.name)

            api = await server.api()
            await close_session(api)  # kr8s's version check: this script's connection
            ctrl = Controller(ConfigMap, api=api, namespace="default")
            assert await run_until(ctrl, reconcile, lambda: seen == ["a"])
        print("done")


    asyncio.run(main())
    gc.collect()  # what was left open warns now, not unnoticed at interpreter exit
"""


async def test_run_until_ends_clean() -> None:
    """No aiohttp session, socket or task left behind once run_until returns."""
    code, out, err = await run_python_dev_mode(RUN_UNTIL)
    assert_closed_cleanly(code, out, err)
    assert out.strip() == "done"
