"""The sharder on its own: it holds the Lease of a member that is gone while the member
owns objects (so that the member cannot rejoin), renews that hold, moves the objects once
a member takes them, then deletes the Lease (looptime: a fast-forwarded clock)."""

from __future__ import annotations

import asyncio

import kr8s
import pytest
from kr8s.asyncio.objects import ConfigMap

from reconcile_kit.manager.sharding import Sharding
from reconcile_kit.manager.sharding.assigner import Assigner, ShardedKind
from reconcile_kit.manager.sharding.membership import RingView, membership_election
from reconcile_kit.testing import APIServer, eventually

from ..kubehttp import call

pytestmark = pytest.mark.looptime

LEASES = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
LABEL = "shard.reconcile-kit.io/ring"


def member(identity: str) -> Sharding:
    return Sharding("ring", identity=identity, lease_duration=3, renew_deadline=2, retry_period=0.5)


async def lease(kube: kr8s.asyncio.Api, name: str) -> dict | None:
    status, body = await call(kube, "GET", f"{LEASES}/{name}")
    return body if status == 200 else None


async def owners(kube: kr8s.asyncio.Api) -> set[str | None]:
    _, listing = await call(kube, "GET", "/api/v1/namespaces/default/configmaps")
    return {(i["metadata"].get("labels") or {}).get(LABEL) for i in listing["items"]}


async def test_hold_renew_move_and_forget(kube: kr8s.asyncio.Api) -> None:
    loop = asyncio.get_running_loop()
    # member x held its Lease and owns objects; then it died (its Lease expires)
    x = membership_election(member("x"))
    x_task = asyncio.create_task(x.run(kube))
    await eventually(lambda: x.is_leader, 10, interval=0.05)
    for i in range(10):
        body = {"metadata": {"name": f"cm-{i}", "labels": {LABEL: "x"}}}
        await call(kube, "POST", "/api/v1/namespaces/default/configmaps", body)
    x_task.cancel()
    await asyncio.gather(x_task, return_exceptions=True)

    view = RingView(kube, "ring", "default")
    await view.start()
    assigner = Assigner(
        kube, "ring", "s", view, [ShardedKind(ConfigMap, "default")], lease_duration=3
    )
    running = asyncio.create_task(assigner.run())
    try:

        async def held() -> bool:
            current = await lease(kube, "ring-x")
            return current is not None and current["spec"]["holderIdentity"] == "sharder:s"

        await eventually(held, 20, interval=0.05)
        first = (await lease(kube, "ring-x"))["spec"]["renewTime"]  # type: ignore[index]
        # nobody takes objects: they stay with x, and the hold is renewed meanwhile
        x_again = membership_election(member("x"))
        x_again_task = asyncio.create_task(x_again.run(kube))
        await asyncio.sleep(10)
        assert await owners(kube) == {"x"}
        assert not x_again.is_leader  # x cannot rejoin while the sharder holds its Lease
        renewed = (await lease(kube, "ring-x"))["spec"]  # type: ignore[index]
        assert renewed["holderIdentity"] == "sharder:s" and renewed["renewTime"] != first

        # y joins: x's objects move to y directly, then x's Lease goes and x may rejoin
        y = membership_election(member("y"))
        y_task = asyncio.create_task(y.run(kube))
        started = loop.time()

        async def moved() -> bool:
            return await owners(kube) == {"y"}

        await eventually(moved, 20, interval=0.05)
        assert loop.time() - started < 3
        await eventually(lambda: x_again.is_leader, 20, interval=0.05)
        for task in (x_again_task, y_task):
            task.cancel()
        await asyncio.gather(x_again_task, y_task, return_exceptions=True)
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)
        await view.stop()


async def test_failed_label_writes_are_retried_with_a_growing_backoff(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    loop = asyncio.get_running_loop()
    y = membership_election(member("y"))
    y_task = asyncio.create_task(y.run(kube))
    await eventually(lambda: y.is_leader, 10, interval=0.05)
    view = RingView(kube, "ring", "default")
    await view.start()
    # the first three label writes of the object fail: retried after 0.05 s, then longer
    apiserver.faults.fail(500, verb="patch", resource="configmaps", times=3)
    await call(kube, "POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "a"}})
    assigner = Assigner(
        kube, "ring", "s", view, [ShardedKind(ConfigMap, "default")], lease_duration=3
    )
    started = loop.time()
    running = asyncio.create_task(assigner.run())
    try:

        async def labelled() -> bool:
            return await owners(kube) == {"y"}

        await eventually(labelled, 20, interval=0.01)
        assert 0.1 <= loop.time() - started < 1.0  # with a fixed 1 s delay: 3 s
    finally:
        running.cancel()
        y_task.cancel()
        await asyncio.gather(running, y_task, return_exceptions=True)
        await view.stop()
