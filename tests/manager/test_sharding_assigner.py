"""The sharder on its own: while another member takes objects, it holds the Lease of a
member that is gone but owns objects (so that the member cannot rejoin), renews that hold,
moves the objects, then deletes the Lease; with nobody to take them it holds nothing
(looptime: a fast-forwarded clock)."""

from __future__ import annotations

import asyncio

import kr8s
import pytest
from kr8s.asyncio.objects import ConfigMap

from reconcile_kit.manager.leaderelection import LeaderElection
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


async def stop(view: RingView, *tasks: asyncio.Task[None] | None) -> None:
    """Cancel ``tasks`` (None: never started) and wait for them, then stop ``view``."""
    started = [task for task in tasks if task is not None]
    for task in started:
        task.cancel()
    await asyncio.gather(*started, return_exceptions=True)
    await view.stop()


async def test_hold_renew_move_and_forget(kube: kr8s.asyncio.Api, apiserver: APIServer) -> None:
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
    y_task: asyncio.Task[None] | None = None
    x_again_task: asyncio.Task[None] | None = None
    try:
        # nobody takes objects: the sharder leaves x's expired Lease alone (holding it would
        # only keep x out), the objects stay with x
        await asyncio.sleep(10)
        assert (await lease(kube, "ring-x"))["spec"]["holderIdentity"] == "x"  # type: ignore[index]
        assert await owners(kube) == {"x"}

        # y joins: the sharder holds x's Lease and moves x's objects to y directly; with
        # every move taking 2 s (8 at a time), the hold is renewed meanwhile and x cannot
        # rejoin until its objects are gone; then x's Lease is deleted and x may rejoin
        apiserver.faults.latency(2.0, verb="patch", resource="configmaps")
        y = membership_election(member("y"))
        y_task = asyncio.create_task(y.run(kube))
        started = loop.time()

        async def held() -> bool:
            current = await lease(kube, "ring-x")
            return current is not None and current["spec"]["holderIdentity"] == "sharder:s"

        await eventually(held, 20, interval=0.05)
        first = (await lease(kube, "ring-x"))["spec"]["renewTime"]  # type: ignore[index]
        x_again = membership_election(member("x"))
        x_again_task = asyncio.create_task(x_again.run(kube))

        async def moved() -> bool:
            return await owners(kube) == {"y"}

        await eventually(lambda: loop.time() - started > 2.5, 20, interval=0.05)
        assert not x_again.is_leader  # x cannot rejoin while the sharder holds its Lease
        renewed = (await lease(kube, "ring-x"))["spec"]  # type: ignore[index]
        assert renewed["holderIdentity"] == "sharder:s" and renewed["renewTime"] != first
        await eventually(moved, 20, interval=0.05)
        assert loop.time() - started < 8
        await eventually(lambda: x_again.is_leader, 20, interval=0.05)
    finally:
        apiserver.faults.clear()
        await stop(view, running, y_task, x_again_task)


async def test_failed_label_writes_are_retried_with_a_growing_backoff(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    loop = asyncio.get_running_loop()
    y = membership_election(member("y"))
    y_task = asyncio.create_task(y.run(kube))
    await eventually(lambda: y.is_leader, 10, interval=0.05)
    view = RingView(kube, "ring", "default")
    await view.start()
    # the first three label writes of the object fail: retried after 0.05, 0.1 and 0.2 s
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
        assert 0.35 <= loop.time() - started < 1.0  # 0.05 + 0.1 + 0.2; a fixed 1 s delay: 3 s
    finally:
        await stop(view, running, y_task)


async def test_a_conflicting_label_write_is_decided_again(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    """A 409 that brings no event (here injected; also a write raced by the object's own
    event) is decided again after the object's backoff, not left to a next event."""
    y = membership_election(member("y"))
    y_task = asyncio.create_task(y.run(kube))
    await eventually(lambda: y.is_leader, 10, interval=0.05)
    view = RingView(kube, "ring", "default")
    await view.start()
    apiserver.faults.fail(409, verb="patch", resource="configmaps", times=2)
    await call(kube, "POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "a"}})
    assigner = Assigner(
        kube, "ring", "s", view, [ShardedKind(ConfigMap, "default")], lease_duration=3
    )
    running = asyncio.create_task(assigner.run())
    try:

        async def labelled() -> bool:
            return await owners(kube) == {"y"}

        await eventually(labelled, 5, interval=0.01)
    finally:
        await stop(view, running, y_task)


async def test_objects_of_a_member_held_by_a_dead_sharder_move_once_that_hold_lapses(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    """The previous sharder (killed) held the Lease of member x; nothing changes in the
    ring when that hold lapses, yet the new sharder takes the Lease and moves x's objects
    within a Lease duration and a little (before: only once the ring changed again)."""
    loop = asyncio.get_running_loop()
    stamp = "2026-01-01T00:00:00.000000Z"
    held = {
        "metadata": {
            "name": "ring-x",
            "labels": {"reconcile-kit.io/ring": "ring", "reconcile-kit.io/member": "x"},
        },
        "spec": {
            "holderIdentity": "sharder:old",
            "leaseDurationSeconds": 3,
            "acquireTime": stamp,
            "renewTime": stamp,
        },
    }
    await call(kube, "POST", LEASES, held)
    for i in range(5):
        body = {"metadata": {"name": f"cm-{i}", "labels": {LABEL: "x"}}}
        await call(kube, "POST", "/api/v1/namespaces/default/configmaps", body)
    y = membership_election(member("y"))
    y_task = asyncio.create_task(y.run(kube))
    await eventually(lambda: y.is_leader, 10, interval=0.05)
    view = RingView(kube, "ring", "default")
    await view.start()
    assigner = Assigner(
        kube, "ring", "s", view, [ShardedKind(ConfigMap, "default")], lease_duration=3
    )
    started = loop.time()
    running = asyncio.create_task(assigner.run())
    try:

        async def moved() -> bool:
            return await owners(kube) == {"y"}

        await eventually(moved, 10, interval=0.05)
        assert 3 <= loop.time() - started < 3 + 1  # the old hold's lapse, then one pass
    finally:
        await stop(view, running, y_task)


async def expired_member_x_with_objects_and_live_y(
    kube: kr8s.asyncio.Api,
) -> tuple[RingView, asyncio.Task[None], LeaderElection]:
    """Member x owned 10 objects and stopped renewing its Lease (not released); y is live.
    Returns the ring's view (started), y's election task and x's election (stopped: x's
    process may take its Lease again with it)."""
    x = membership_election(member("x"))
    x_task = asyncio.create_task(x.run(kube))
    await eventually(lambda: x.is_leader, 10, interval=0.05)
    for i in range(10):
        body = {"metadata": {"name": f"cm-{i}", "labels": {LABEL: "x"}}}
        await call(kube, "POST", "/api/v1/namespaces/default/configmaps", body)
    y = membership_election(member("y"))
    y_task = asyncio.create_task(y.run(kube))
    await eventually(lambda: y.is_leader, 10, interval=0.05)
    x_task.cancel()
    await asyncio.gather(x_task, return_exceptions=True)
    view = RingView(kube, "ring", "default")
    await view.start()
    return view, y_task, x


async def test_the_sharders_own_member_rejoining_keeps_its_objects(
    kube: kr8s.asyncio.Api,
) -> None:
    """The sharder runs in replica x, whose membership Lease expired (an API server outage
    past its renew deadline: x stopped its sharded controllers and is taking its Lease
    again). The sharder does not hold x's Lease and move x's objects meanwhile (in the
    chaos test it did, first: x rejoined 3.9 s after the server was back, once all its
    objects had moved, and every change to them waited for that)."""
    view, y_task, x = await expired_member_x_with_objects_and_live_y(kube)
    assigner = Assigner(
        kube, "ring", "x", view, [ShardedKind(ConfigMap, "default")], lease_duration=3
    )
    running = asyncio.create_task(assigner.run())
    x_again_task: asyncio.Task[None] | None = None
    try:
        await asyncio.sleep(3 + 2)  # expired 2 s ago (x's retries failing meanwhile)
        assert (await lease(kube, "ring-x"))["spec"]["holderIdentity"] == "x"  # type: ignore[index]
        assert await owners(kube) == {"x"}
        x_again = x  # x's own election: a record x wrote last is x's to take again at once
        x_again_task = asyncio.create_task(x_again.run(kube))
        await eventually(lambda: x_again.is_leader, 10, interval=0.05)
        await asyncio.sleep(5)
        assert await owners(kube) == {"x"}  # never moved
    finally:
        await stop(view, running, y_task, x_again_task)


async def test_the_sharders_own_member_not_back_within_a_lease_duration_is_moved_from(
    kube: kr8s.asyncio.Api,
) -> None:
    """The same, but x does not take its Lease again: a Lease duration after it expired,
    the sharder holds it and moves x's objects, as any member's."""
    loop = asyncio.get_running_loop()
    view, y_task, _x = await expired_member_x_with_objects_and_live_y(kube)
    assigner = Assigner(
        kube, "ring", "x", view, [ShardedKind(ConfigMap, "default")], lease_duration=3
    )
    running = asyncio.create_task(assigner.run())
    try:
        expired = loop.time() + 3  # from now: x stopped renewing just before

        async def moved() -> bool:
            return await owners(kube) == {"y"}

        await eventually(moved, 20, interval=0.05)
        assert 3 - 0.5 <= loop.time() - expired < 3 + 1
    finally:
        await stop(view, running, y_task)


async def test_a_member_joining_during_a_pass_keeps_its_lease(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    """A member whose Lease appears while the sharder's pass awaits its label writes is
    live at the pass's end: its Lease is not deleted as that of a member "gone, owns
    nothing" (it was, when the pass judged liveness from its start: seen in a start-up of
    three replicas, the new member kept its controllers running without a Lease)."""
    y = membership_election(member("y"))
    y_task = asyncio.create_task(y.run(kube))
    z_task: asyncio.Task[None] | None = None
    await eventually(lambda: y.is_leader, 10, interval=0.05)
    for i in range(8):
        body = {"metadata": {"name": f"cm-{i}"}}
        await call(kube, "POST", "/api/v1/namespaces/default/configmaps", body)
    apiserver.faults.latency(2.0, verb="patch", resource="configmaps")
    view = RingView(kube, "ring", "default")
    await view.start()
    assigner = Assigner(
        kube, "ring", "s", view, [ShardedKind(ConfigMap, "default")], lease_duration=3
    )
    running = asyncio.create_task(assigner.run())
    try:
        await eventually(
            lambda: apiserver.requests.count(verb="patch", resource="configmaps") > 0, 10
        )
        z = membership_election(member("z"))
        z_task = asyncio.create_task(z.run(kube))
        await eventually(lambda: z.is_leader and "z" in view.members(), 10, interval=0.05)

        async def labelled() -> bool:
            return None not in await owners(kube)

        await eventually(labelled, 20, interval=0.05)
        await asyncio.sleep(1)  # the pass's end: its _forget
        deletes = apiserver.requests.filter(verb="delete", resource="leases")
        assert [r.path.rsplit("/", 1)[1] for r in deletes] == []
        assert await lease(kube, "ring-z") is not None
    finally:
        apiserver.faults.clear()
        await stop(view, running, y_task, z_task)
