"""Two managers with leader election over one embedded API server (fast-forwarded clock)."""

from __future__ import annotations

import asyncio
from typing import Any

import kr8s
import pytest
from kr8s.asyncio.objects import ConfigMap, Secret

from reconcile_kit import Context, Controller, LeaderElection, Manager
from reconcile_kit.testing import APIServer, eventually

from ..kubehttp import call

pytestmark = pytest.mark.looptime


class Replica:
    """One manager process: reconciles ConfigMaps, records when it does."""

    def __init__(self, api: Any, identity: str, log: list[tuple[float, str]]) -> None:
        self.identity = identity
        self.election = LeaderElection("operator", identity=identity, release_on_cancel=False)
        self.manager = Manager(
            api, namespace="default", leader_election=self.election, graceful_shutdown_timeout=5
        )
        self.controller = self.manager.add(Controller(ConfigMap, resync=1), self.reconcile)
        self.log = log
        self.task: asyncio.Task[None] | None = None

    async def reconcile(self, obj: Any, ctx: Context) -> None:
        self.log.append((asyncio.get_running_loop().time(), self.identity))

    def start(self) -> None:
        self.task = asyncio.create_task(self.manager.run())

    @property
    def reconciling(self) -> bool:
        return self.controller.running

    async def kill(self) -> None:
        """Die without releasing the lease (as a killed process would)."""
        assert self.task is not None
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)

    async def stop(self) -> None:
        assert self.task is not None
        self.manager.stop()
        await asyncio.wait_for(self.task, 60)


async def sample(replicas: list[Replica], stop: asyncio.Event, overlaps: list[float]) -> None:
    loop = asyncio.get_running_loop()
    while not stop.is_set():
        if sum(r.reconciling for r in replicas) > 1:
            overlaps.append(loop.time())
        await asyncio.sleep(0.1)


async def until(predicate: Any, timeout: float = 120) -> float:
    """Loop time at which ``predicate()`` first holds (checked every 0.05 s)."""
    await eventually(predicate, timeout, interval=0.05)
    return asyncio.get_running_loop().time()


async def test_one_leader_failover_and_handover(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    await call(kube, "POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "a"}})
    loop = asyncio.get_running_loop()
    log: list[tuple[float, str]] = []
    a, b = Replica(kube, "a", log), Replica(kube, "b", log)
    stop, overlaps = asyncio.Event(), []
    sampler = asyncio.create_task(sample([a, b], stop, overlaps))
    a.start()
    await until(lambda: bool(log))
    b.start()
    await asyncio.sleep(30)
    assert {who for _, who in log} == {"a"}  # exactly one reconciles
    assert a.election.is_leader and not b.election.is_leader

    killed_at = loop.time()
    await a.kill()
    took_over = await until(lambda: any(who == "b" for _, who in log))
    assert took_over - killed_at <= 15 + 2 + 0.5  # lease duration + retry period
    assert b.election.is_leader

    c = Replica(kube, "c", log)
    c.start()
    await asyncio.sleep(10)
    assert not any(who == "c" for _, who in log)
    stopped_at = loop.time()
    await b.stop()
    handed = await until(lambda: any(who == "c" for _, who in log))
    assert handed - stopped_at <= 2 + 0.5  # one retry period after the release
    await c.stop()
    stop.set()
    await sampler
    assert overlaps == []  # never two replicas reconciling at once
    _, lease = await call(
        kube, "GET", "/apis/coordination.k8s.io/v1/namespaces/default/leases/operator"
    )
    assert lease["spec"]["leaseTransitions"] >= 2


async def test_ready_on_the_leader_and_on_standbys(kube: kr8s.asyncio.Api) -> None:
    """The leader is ready once its controllers synced; a standby once the controllers
    that run everywhere synced, or once started when it has none; stop() while
    campaigning for the lease returns at once."""
    await call(kube, "POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "a"}})
    loop = asyncio.get_running_loop()
    log: list[tuple[float, str]] = []

    async def nothing(obj: Any, ctx: Context) -> None:
        return None

    a, b, c = (Replica(kube, who, log) for who in "abc")
    everywhere = b.manager.add(Controller(Secret), nothing, needs_leader=False)
    assert not a.manager.ready()
    a.start()
    await until(lambda: bool(log))  # a leads and reconciles: its caches synced
    assert a.manager.ready()

    b.start()
    await until(b.manager.ready)
    assert everywhere.synced and not b.reconciling and not b.election.is_leader

    c.start()
    await until(c.manager.ready)  # nothing to sync while standing by
    assert not c.reconciling and not c.election.is_leader
    await asyncio.sleep(5)  # still campaigning, still ready
    assert c.manager.ready() and a.manager.ready() and b.manager.ready()

    stopping_at = loop.time()
    await c.stop()
    assert loop.time() - stopping_at < 1
    await b.stop()
    await a.stop()
    assert not a.manager.ready()


async def test_a_standby_is_warm_and_takes_over_without_listing(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    """controller-runtime's warm replicas (#3192): the standby lists and watches before it
    leads, so after the leader dies its first reconcile needs no LIST: bounded by the
    Lease, not by a cache sync."""
    for i in range(20):
        body = {"metadata": {"name": f"cm-{i}"}}
        await call(kube, "POST", "/api/v1/namespaces/default/configmaps", body)
    log: list[tuple[float, str]] = []
    a, b = Replica(kube, "a", log), Replica(kube, "b", log)
    a.start()
    await until(lambda: any(who == "a" for _, who in log))
    b.start()

    def standby_synced() -> bool:
        reflector = b.controller.reflector
        return reflector is not None and reflector.has_synced() and len(reflector.store) == 20

    await until(standby_synced)
    assert not b.reconciling and not any(who == "b" for _, who in log)
    lists = len(apiserver.requests)
    killed = asyncio.get_running_loop().time()
    await a.kill()
    took_over = await until(lambda: any(who == "b" for _, who in log))
    listed = [
        r for r in apiserver.requests[lists:] if r.resource == "configmaps" and r.verb == "list"
    ]
    assert listed == []  # the standby's cache served the takeover
    assert took_over - killed <= b.election.lease_duration + 2
    await b.stop()
