"""A first reconcile queued at low priority (an object that just arrived: created, or moved
in from another replica with a change nobody reconciled) does not wait without bound
behind a steady stream of changes to objects already reconciled: once it waited
``queue.LOW_PRIORITY_MAX_WAIT`` the two lines take turns (a sharding chaos run saw such
changes wait 35-70 s)."""

from __future__ import annotations

import asyncio
from typing import Any

import kr8s
from kr8s.asyncio.objects import ConfigMap

from reconcile_kit import Context, Controller
from reconcile_kit.runtime.config import ControllerConfig
from reconcile_kit.runtime.queue import LOW_PRIORITY_MAX_WAIT
from reconcile_kit.runtime.sources import ReflectorPool
from reconcile_kit.testing import eventually

from ..kubehttp import call

CM = "/api/v1/namespaces/default/configmaps"
MERGE = "application/merge-patch+json"
OWN = [f"own-{i}" for i in range(4)]


async def test_a_new_object_is_reconciled_under_a_steady_stream_of_changes(
    kube: kr8s.asyncio.Api,
) -> None:
    for name in OWN:
        await call(kube, "POST", CM, {"metadata": {"name": name}, "data": {"v": "0"}})
    reconciled: dict[str, float] = {}
    loop = asyncio.get_running_loop()

    async def reconcile(obj: Any, ctx: Context) -> None:
        reconciled.setdefault(obj.name, loop.time())
        await asyncio.sleep(0.05)  # 20 reconciles/s at concurrency 1

    ctrl = Controller(
        ConfigMap,
        api=kube,
        namespace="default",
        concurrency=1,
        config=ControllerConfig(pool=ReflectorPool()),
    )
    task = asyncio.create_task(ctrl.run(reconcile))
    stop = asyncio.Event()

    async def stream() -> None:  # ~40 changes/s to objects already reconciled
        n = 0
        while not stop.is_set():
            n += 1
            body = {"data": {"v": str(n)}}
            await call(kube, "PATCH", f"{CM}/{OWN[n % len(OWN)]}", body, content_type=MERGE)
            await asyncio.sleep(0.025)

    changes = asyncio.create_task(stream())
    try:
        await eventually(lambda: set(OWN) <= reconciled.keys(), 10, interval=0.01)
        await asyncio.sleep(0.5)  # the normal line is never empty from here on
        created = loop.time()
        await call(kube, "POST", CM, {"metadata": {"name": "arrived"}, "data": {"v": "0"}})
        await eventually(lambda: "arrived" in reconciled, LOW_PRIORITY_MAX_WAIT + 5)
        assert reconciled["arrived"] - created < LOW_PRIORITY_MAX_WAIT + 1.5
        assert len(ctrl.queue) > 0  # the stream kept the queue busy throughout
    finally:
        stop.set()
        await asyncio.wait_for(changes, 10)
        await ctrl.shutdown(5)
        await asyncio.wait_for(task, 10)
