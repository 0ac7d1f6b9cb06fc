"""A member's Lease deleted or edited by someone else while the member runs: the ring view
keeps the member live until the record it last wrote would have expired (it re-creates or
retakes its Lease at its next renewal), so the sharder moves none of its objects; only the
member's own release (no holder, ``leaseDurationSeconds: 1``) or a lapse makes it gone at
once. Before, a deleted Lease was taken over within 10 ms while its member kept
reconciling (a chaos probe: 1-4 foreign writes through kr8s's own methods per run)."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable

import kr8s
import pytest
from kr8s.asyncio.objects import ConfigMap

from reconcile_kit.manager.leaderelection import LeaderElection
from reconcile_kit.manager.sharding.assigner import Assigner, ShardedKind
from reconcile_kit.manager.sharding.membership import RingView, membership_election
from reconcile_kit.testing import eventually

from ..kubehttp import call
from .test_sharding_assigner import LABEL, LEASES, member, owners, stop

pytestmark = pytest.mark.looptime

LEASE_DURATION = 3.0


async def running_member(
    kube: kr8s.asyncio.Api, name: str, retry_period: float = 0.5
) -> tuple[LeaderElection, asyncio.Task[None]]:
    sharding = dataclasses.replace(member(name), retry_period=retry_period)
    election = membership_election(sharding)
    task = asyncio.create_task(election.run(kube))
    await eventually(lambda: election.is_leader, 10, interval=0.05)
    return election, task


def watch_members(view: RingView) -> list[frozenset[str]]:
    """Every member set the view reports from now on."""
    seen = [view.members()]
    view.on_change.append(lambda: seen.append(view.members()))
    return seen


async def edit_lease(kube: kr8s.asyncio.Api, name: str, change: Callable[[dict], None]) -> None:
    _, lease = await call(kube, "GET", f"{LEASES}/{name}")
    change(lease["spec"])
    status, body = await call(kube, "PUT", f"{LEASES}/{name}", lease)
    assert status == 200, body


@pytest.mark.parametrize("edit", ["delete", "empty holder", "duration 1"])
async def test_a_lease_changed_by_another_keeps_its_running_member(
    kube: kr8s.asyncio.Api, edit: str
) -> None:
    # renewing every 1.5 s, x outlives a 1 s duration written by another only by the floor
    x, x_task = await running_member(kube, "x", 1.5 if edit == "duration 1" else 0.5)
    y, y_task = await running_member(kube, "y")
    for i in range(6):
        body = {"metadata": {"name": f"cm-{i}", "labels": {LABEL: "xy"[i % 2]}}}
        await call(kube, "POST", "/api/v1/namespaces/default/configmaps", body)
    view = RingView(kube, "ring", "default")
    await view.start()
    assigner = Assigner(
        kube, "ring", "s", view, [ShardedKind(ConfigMap, "default")], lease_duration=3
    )
    running = asyncio.create_task(assigner.run())
    try:
        await eventually(lambda: view.members() == {"x", "y"}, 10, interval=0.05)
        seen = watch_members(view)
        if edit == "delete":
            status, _ = await call(kube, "DELETE", f"{LEASES}/ring-x")
            assert status == 200
        elif edit == "empty holder":
            await edit_lease(kube, "ring-x", lambda spec: spec.update(holderIdentity=""))
        else:
            await edit_lease(kube, "ring-x", lambda spec: spec.update(leaseDurationSeconds=1))
        await asyncio.sleep(3 * LEASE_DURATION)
        assert all("x" in members for members in seen), seen
        assert x.is_leader
        assert await owners(kube) == {"x", "y"}
    finally:
        await stop(view, running, x_task, y_task)


async def test_a_release_or_a_lapse_makes_the_member_gone(kube: kr8s.asyncio.Api) -> None:
    loop = asyncio.get_running_loop()
    x, x_task = await running_member(kube, "x")
    _, y_task = await running_member(kube, "y")
    _, z_task = await running_member(kube, "z")
    view = RingView(kube, "ring", "default")
    await view.start()
    try:
        await eventually(lambda: view.members() == {"x", "y", "z"}, 10, interval=0.05)
        started = loop.time()
        x_task.cancel()
        await asyncio.gather(x_task, return_exceptions=True)
        await x.release()
        await eventually(lambda: "x" not in view.members(), 10, interval=0.01)
        assert loop.time() - started < 0.5  # released: gone at once
        z_task.cancel()  # z dies: its Lease lapses
        await asyncio.gather(z_task, return_exceptions=True)
        started = loop.time()
        await eventually(lambda: "z" not in view.members(), 10, interval=0.01)
        assert LEASE_DURATION - 0.6 <= loop.time() - started <= LEASE_DURATION + 0.1
    finally:
        await stop(view, y_task)
