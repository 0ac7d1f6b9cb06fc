"""reconcile_kit.testing: ``eventually`` returns once its check holds and fails after the
timeout; ``run_until`` over the wire (events, a clean exit)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import kr8s.asyncio
import pytest
from kr8s.asyncio.objects import ConfigMap

from reconcile_kit import Context, Controller
from reconcile_kit.runtime.config import ControllerConfig
from reconcile_kit.runtime.sources import ReflectorPool
from reconcile_kit.testing import eventually, run_until

from ..conftest import assert_closed_cleanly, run_python_dev_mode
from ..kubehttp import call


async def test_returns_once_the_check_holds() -> None:
    calls = 0

    def third_time() -> bool:
        nonlocal calls
        calls += 1
        return calls == 3

    await eventually(third_time, 1.0, interval=0)
    assert calls == 3


async def test_returns_at_once_without_sleeping() -> None:
    loop = asyncio.get_running_loop()
    started = loop.time()
    await eventually(lambda: True, 1.0, interval=10)
    assert loop.time() - started < 1


async def test_awaits_async_checks() -> None:
    event = asyncio.Event()
    asyncio.get_running_loop().call_later(0.01, event.set)

    async def is_set() -> bool:
        await asyncio.sleep(0)
        return event.is_set()

    await eventually(is_set, 1.0)
    assert event.is_set()


async def test_raises_assertion_error_after_the_timeout() -> None:
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(AssertionError, match=r"0\.05 s awaiting the flag"):
        await eventually(lambda: False, 0.05, what="the flag")
    assert 0.05 <= loop.time() - started < 1


async def test_names_the_check_when_no_description_is_given() -> None:
    def never() -> bool:
        return False

    with pytest.raises(AssertionError, match="never"):
        await eventually(never, 0.05)


async def test_a_hanging_async_check_is_cut_off_at_the_timeout() -> None:
    async def hangs() -> bool:
        await asyncio.Event().wait()
        return True

    with pytest.raises(AssertionError):
        await eventually(hangs, 0.05)


async def test_errors_from_the_check_propagate() -> None:
    async def times_out() -> bool:
        raise TimeoutError("the check's own")

    with pytest.raises(TimeoutError, match="the check's own"):
        await eventually(times_out, 1.0)
    with pytest.raises(ZeroDivisionError):
        await eventually(lambda: 1 / 0 > 0, 1.0)


@pytest.mark.looptime
async def test_polling_without_an_interval_is_bounded_under_looptime() -> None:
    """With ``interval=0`` no loop time passes: the wall clock ends the wait."""
    started = time.monotonic()
    with pytest.raises(AssertionError, match="spinning"):
        await eventually(lambda: False, 0.05, interval=0, what="spinning")
    assert time.monotonic() - started < 5


CM = "/api/v1/namespaces/default/configmaps"
EVENTS = "/apis/events.k8s.io/v1/namespaces/default/events"


async def test_ctx_recorder_writes_events_in_run_until(kube: kr8s.asyncio.Api) -> None:
    await call(kube, "POST", CM, {"metadata": {"name": "a"}})
    seen: list[str] = []

    async def reconcile(obj: Any, ctx: Context) -> None:
        assert ctx.recorder is not None
        ctx.recorder.event(obj, "Normal", "Seen", "reconciled outside a manager")
        seen.append(obj.name)

    ctrl = Controller(
        ConfigMap, api=kube, namespace="default", config=ControllerConfig(pool=ReflectorPool())
    )
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
        ConfigMap,
        api=kube,
        namespace="default",
        config=ControllerConfig(pool=ReflectorPool(), recorder=recorder),
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
