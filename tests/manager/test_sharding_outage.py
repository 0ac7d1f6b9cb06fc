"""An API server outage longer than a Lease duration: no member can renew, and when the
server is back every member's Lease looks expired at once. The ring's view counts a member
whose Lease it has not seen renewed since the outage as live for the ring's rejoin grace,
so that the first member back does not get everyone's objects; a member that does not
come back is expired once the grace is over (real clock: the server is stopped and started
again on its data directory, or answers 503 to every Lease request)."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from pathlib import Path

import aiohttp
import pytest

from reconcile_kit.manager.sharding import Sharding
from reconcile_kit.manager.sharding.membership import RingView
from reconcile_kit.meta.time import format_micro_time
from reconcile_kit.testing import APIServer, eventually

LEASES = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
LEASE = 2.0  # seconds
RING = Sharding("ring", identity="a", lease_duration=LEASE, renew_deadline=1.5, retry_period=0.4)


async def renew(server: APIServer, member: str, *, create: bool = False) -> None:
    """Write member's Lease as its holder renewing it (a new renewTime), on a connection
    of its own (the server may just have restarted)."""
    spec = {
        "holderIdentity": member,
        "leaseDurationSeconds": int(LEASE),
        "renewTime": format_micro_time(datetime.now(UTC)),
    }
    labels = {"reconcile-kit.io/ring": "ring", "reconcile-kit.io/member": member}
    async with aiohttp.ClientSession() as session:
        if create:
            body = {"metadata": {"name": f"ring-{member}", "labels": labels}, "spec": spec}
            reply = await session.post(f"{server.url}{LEASES}", json=body)
        else:
            headers = {"Content-Type": "application/merge-patch+json"}
            url = f"{server.url}{LEASES}/ring-{member}"
            reply = await session.patch(url, json={"spec": spec}, headers=headers)
        assert reply.status in (200, 201), await reply.text()


async def outage(server: APIServer, kind: str) -> None:
    """Make the Lease API unavailable for longer than a Lease duration: the server stopped
    (connections refused), or answering 503 to every Lease request (a proxy or load
    balancer with no kube-apiserver behind it) with its watches closed."""
    if kind == "stopped":
        await server.stop()
    else:
        server.faults.fail(503, resource="leases", times=None)
        server.close_watches()
    await asyncio.sleep(LEASE + 0.5)  # the outage: the scenario's input
    if kind == "stopped":
        await server.start()
    else:
        server.faults.clear()


@pytest.mark.parametrize("kind", ["stopped", "503"])
async def test_members_renewing_after_an_outage_stay_live(tmp_path: Path, kind: str) -> None:
    server = APIServer(data_dir=tmp_path / "data")
    await server.start()
    view: RingView | None = None
    try:
        for member in "abc":
            await renew(server, member, create=True)
        kube = await server.api()
        grace = RING.rejoin_grace
        view = RingView(kube, "ring", "default", retry_period=RING.retry_period, rejoin_grace=grace)
        ever_expired: dict[str, float] = {}

        def note() -> None:
            assert view is not None
            for member in view.expired():
                ever_expired.setdefault(member, time.monotonic())

        view.on_change.append(note)
        await view.start()
        assert view.members() == {"a", "b", "c"}

        await outage(server, kind)
        back = time.monotonic()
        await renew(server, "a")  # the first member back
        await asyncio.sleep(RING.retry_period * 2)  # b renews at its next jittered retry
        await renew(server, "b")
        # c never comes back: expired once the grace after the view's last failure is over
        await eventually(lambda: set(view.expired()) == {"c"}, LEASE + grace + 3)
        assert "b" not in ever_expired and "a" not in ever_expired
        assert view.members() == {"a", "b"}
        assert ever_expired["c"] - back <= grace + RING.retry_period + 0.5
    finally:
        if view is not None:
            await view.stop()
        await server.stop()


async def test_without_an_outage_a_lease_expires_after_its_duration(tmp_path: Path) -> None:
    """The grace applies only after the watch found the server unreachable: a member that
    stops renewing while the server answers is expired a Lease duration after its last
    renewal was seen."""
    async with APIServer() as server:
        for member in "ab":
            await renew(server, member, create=True)
        kube = await server.api()
        view = RingView(kube, "ring", "default", retry_period=0.4, rejoin_grace=30)
        await view.start()

        async def keep_renewing() -> None:  # a is live: only b stops renewing
            while True:
                await renew(server, "a")
                await asyncio.sleep(LEASE / 4)

        renewed = time.monotonic()
        renewing = asyncio.create_task(keep_renewing())
        try:
            # b was renewed last just before a: were a to stop too, a slow machine could
            # see both Leases expire at one check (a CI failure)
            await eventually(lambda: set(view.expired()) == {"b"}, LEASE + 2)
            assert time.monotonic() - renewed < LEASE + 1
            assert view.members() == {"a"}
        finally:
            renewing.cancel()
            await asyncio.gather(renewing, return_exceptions=True)
            await view.stop()
