"""One test per isolation rule of the multi-cluster manager (issue 32), each over the
wire against embedded servers, each failing when its rule is broken:

* a disengaged cluster: its controllers stop, its queued keys are dropped, its caches
  stop (no open watch, no request to it afterwards), the others go on;
* a cluster unreachable at start does not hold the manager's readiness, and catches up
  once it answers;
* a failing cluster is engaged again after a per-cluster backoff (growing delays), while
  the others reconcile;
* reconciles log a ``cluster`` field and the fleet's metrics carry a ``cluster`` label;
* leader election stays in the management cluster: only the leader engages clusters;
* clusters are spread over the members of a sharding ring.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
from collections import Counter
from typing import Any

import pytest
from kr8s.asyncio import Api
from kr8s.asyncio.objects import ConfigMap

from reconcile_kit import (
    Action,
    Context,
    Controller,
    LeaderElection,
    Manager,
    PatchHelper,
    Sharding,
)
from reconcile_kit.manager.logs import JsonFormatter, TextFormatter
from reconcile_kit.multicluster import Kubeconfig, MultiClusterManager, StaticProvider
from reconcile_kit.multicluster import manager as multicluster_manager
from reconcile_kit.runtime.reflector import Backoff
from reconcile_kit.testing import APIServer, eventually
from reconcile_kit.testing.multicluster import EmbeddedFleet

from ..kubehttp import call

CM = "/api/v1/namespaces/default/configmaps"


class Runs:
    """A uniform reconcile that labels each ConfigMap with its cluster and requeues every
    ``every`` seconds; counts runs per cluster and keeps each run's log record fields."""

    def __init__(self, every: float | None = None) -> None:
        self.every = every
        self.count: Counter[str] = Counter()

    async def __call__(self, cm: Any, ctx: Context) -> Action | None:
        self.count[ctx.cluster] += 1
        async with PatchHelper(cm):
            cm.raw["metadata"].setdefault("labels", {})["cluster"] = ctx.cluster
        ctx.log.info("labelled")
        return Action.requeue(self.every) if self.every is not None else None


async def labelled(api: Api, name: str, value: str) -> bool:
    status, got = await call(api, "GET", f"{CM}/{name}")
    return status == 200 and (got["metadata"].get("labels") or {}).get("cluster") == value


async def running(mcm: MultiClusterManager) -> asyncio.Task[None]:
    task = asyncio.create_task(mcm.run())
    await asyncio.sleep(0)
    return task


async def stopped(mcm: MultiClusterManager, task: asyncio.Task[None]) -> None:
    mcm.stop()
    await asyncio.wait_for(task, 15)


def manager_of(api: Api, **options: Any) -> Manager:
    return Manager(api, namespace="default", handle_signals=False, **options)


async def seed(fleet: EmbeddedFleet, name: str = "a") -> None:
    for cluster in fleet.servers:
        await call(await fleet.api(cluster), "POST", CM, {"metadata": {"name": name}})


async def test_a_disengaged_cluster_stops_its_caches_and_queue_and_is_never_called_again(
    clusters: EmbeddedFleet, apiserver: APIServer
) -> None:
    await clusters.start(3)
    await seed(clusters)
    provider = clusters.provider()
    runs = Runs(every=0.05)  # always something queued in every cluster
    mcm = MultiClusterManager(provider, manager_of(await apiserver.api()))
    mcm.add(Controller(ConfigMap), runs)
    task = await running(mcm)
    try:
        await eventually(lambda: all(runs.count[c] >= 2 for c in clusters.servers), 10)
        gone = mcm.clusters["cluster-1"]
        controller = mcm.controllers_of("cluster-1")[0]
        events: list[tuple[str, str]] = []
        mcm.on_change.append(lambda name, event: events.append((name, event)))
        provider.remove("cluster-1")
        await eventually(lambda: ("cluster-1", "disengaged") in events, 10)
        server = clusters.servers["cluster-1"]
        assert "cluster-1" not in mcm.clusters and "cluster-1" not in mcm.engaged()
        assert server.open_watches == 0  # its caches stopped
        assert len(gone.pool) == 0
        assert not controller.running and len(controller.queue) == 0  # its keys dropped
        served, before = len(server.requests), runs.count["cluster-1"]
        # the others go on: three more reconciles each, the removed cluster none
        others = {c: runs.count[c] for c in ("cluster-0", "cluster-2")}
        await eventually(lambda: all(runs.count[c] >= n + 3 for c, n in others.items()), 10)
        assert runs.count["cluster-1"] == before
        assert len(server.requests) == served, server.requests[served:]
    finally:
        await stopped(mcm, task)


async def test_a_cluster_unreachable_at_start_holds_no_readiness_and_catches_up(
    clusters: EmbeddedFleet, apiserver: APIServer
) -> None:
    await clusters.start(2)
    await seed(clusters)
    await clusters.stop_server("cluster-1")
    management = await apiserver.api()
    await call(management, "POST", CM, {"metadata": {"name": "m"}})
    runs = Runs()
    mcm = MultiClusterManager(
        clusters.provider(),
        manager_of(management),
        backoff=lambda: Backoff(initial=0.1, maximum=0.5),
    )
    mcm.manager.add(Controller(ConfigMap), runs)  # the management cluster's own
    mcm.add(Controller(ConfigMap), runs)
    task = await running(mcm)
    try:
        api0 = await clusters.api("cluster-0")
        await eventually(lambda: labelled(api0, "a", "cluster-0"), 10)
        await eventually(mcm.manager.ready, 10)  # ready although cluster-1 is down
        assert "cluster-1" in mcm.engaged() and "cluster-1" not in mcm.clusters  # backing off
        assert runs.count["cluster-1"] == 0
        await clusters.restart_server("cluster-1")
        api1 = await clusters.api("cluster-1")
        await eventually(lambda: labelled(api1, "a", "cluster-1"), 20)
    finally:
        await stopped(mcm, task)


class Broken:
    """A cluster source whose client cannot be made; records when it was asked."""

    labels: dict[str, str] = {}  # noqa: RUF012

    def __init__(self) -> None:
        self.attempts: list[float] = []

    async def connect(self) -> Api:
        self.attempts.append(asyncio.get_running_loop().time())
        raise ValueError("no such context")


async def test_a_failing_cluster_backs_off_on_its_own_while_the_others_reconcile(
    clusters: EmbeddedFleet, apiserver: APIServer
) -> None:
    await clusters.start(1)
    await seed(clusters)
    broken = Broken()
    provider = StaticProvider({"cluster-0": clusters.source("cluster-0"), "broken": broken})
    runs = Runs()
    mcm = MultiClusterManager(
        provider,
        manager_of(await apiserver.api()),
        backoff=lambda: Backoff(initial=0.05, maximum=0.4, jitter=0.0),
    )
    mcm.add(Controller(ConfigMap), runs)
    task = await running(mcm)
    try:
        api0 = await clusters.api("cluster-0")
        await eventually(lambda: labelled(api0, "a", "cluster-0"), 10)
        await eventually(lambda: len(broken.attempts) >= 5, 10)
        gaps = [b - a for a, b in itertools.pairwise(broken.attempts)]
        # 0.05, 0.1, 0.2, 0.4 s: growing (lower bounds only: a loaded machine adds time)
        assert all(gap >= 0.05 * 2**i * 0.9 for i, gap in enumerate(gaps[:4])), gaps
        assert "cluster-0" in mcm.clusters and "broken" not in mcm.clusters
        assert runs.count["broken"] == 0
    finally:
        await stopped(mcm, task)


async def test_reconciles_log_and_count_their_cluster(
    clusters: EmbeddedFleet, apiserver: APIServer, caplog: pytest.LogCaptureFixture
) -> None:
    await clusters.start(2)
    await seed(clusters)
    runs = Runs()
    mcm = MultiClusterManager(clusters.provider(), manager_of(await apiserver.api()))
    mcm.add(Controller(ConfigMap), runs)
    caplog.set_level(logging.INFO, logger="reconcile_kit.runtime.controller")
    task = await running(mcm)
    try:

        def logged() -> set[str | None]:
            return {getattr(r, "cluster", None) for r in caplog.records if r.msg == "labelled"}

        await eventually(lambda: logged() == {"cluster-0", "cluster-1"}, 10)
        record = next(r for r in caplog.records if r.msg == "labelled")
        assert f"cluster={record.cluster}]" in TextFormatter().format(record)
        assert json.loads(JsonFormatter().format(record))["cluster"] == record.cluster
        exposition = mcm.manager.metrics.exposition().decode()
        for cluster in ("cluster-0", "cluster-1"):
            line = (
                f'multicluster_reconcile_total{{cluster="{cluster}",'
                f'controller="configmap",result="success"}}'
            )
            assert line in exposition
        assert "multicluster_engaged_clusters 2.0" in exposition
    finally:
        await stopped(mcm, task)


async def test_only_the_leader_engages_clusters(
    clusters: EmbeddedFleet, apiserver: APIServer
) -> None:
    await clusters.start(2)
    await seed(clusters)
    fleets = []
    for identity in ("one", "two"):
        election = LeaderElection(
            "fleet", identity=identity, lease_duration=2.0, renew_deadline=1.5, retry_period=0.2
        )
        mcm = MultiClusterManager(
            clusters.provider(), manager_of(await apiserver.api(), leader_election=election)
        )
        mcm.add(Controller(ConfigMap), Runs())
        fleets.append(mcm)
    tasks = [await running(mcm) for mcm in fleets]
    try:
        await eventually(lambda: any(len(m.engaged()) == 2 for m in fleets), 10)
        leader = next(m for m in fleets if m.engaged())
        standby = next(m for m in fleets if m is not leader)
        assert standby.engaged() == [] and not standby.clusters
        for name in clusters.servers:  # reconciles run (fenced by the leadership Lease)
            api = await clusters.api(name)
            await eventually(lambda api=api, name=name: labelled(api, "a", name), 10)
        await stopped(leader, tasks[fleets.index(leader)])  # releases the Lease
        await eventually(lambda: len(standby.engaged()) == 2, 10)
    finally:
        for mcm, task in zip(fleets, tasks, strict=True):
            if not task.done():
                await stopped(mcm, task)


async def test_clusters_are_spread_over_the_members_of_a_ring(
    clusters: EmbeddedFleet, apiserver: APIServer
) -> None:
    names = [f"c{i}" for i in range(6)]
    provider_sources = {}
    for name in names:
        await clusters.add(name)
        provider_sources[name] = Kubeconfig(clusters.servers[name].kubeconfig)
    fleets = []
    for identity in ("one", "two"):
        sharding = Sharding(
            "fleet", identity=identity, lease_duration=2.0, renew_deadline=1.5, retry_period=0.2
        )
        mcm = MultiClusterManager(
            StaticProvider(provider_sources),
            manager_of(await apiserver.api(), sharding=sharding),
        )
        mcm.add(Controller(ConfigMap), Runs())
        fleets.append(mcm)
    tasks = [await running(mcm) for mcm in fleets]
    try:

        def split() -> bool:
            one, two = (set(m.engaged()) for m in fleets)
            return bool(one) and bool(two) and not one & two and one | two == set(names)

        await eventually(split, 15)
        await seed(clusters)
        for name in names:  # reconciles run (fenced by each member's membership Lease)
            api = await clusters.api(name)
            await eventually(lambda api=api, name=name: labelled(api, "a", name), 10)
        await stopped(fleets[0], tasks[0])  # its Lease released: the other takes all
        await eventually(lambda: fleets[1].engaged() == sorted(names), 15)
    finally:
        for mcm, task in zip(fleets, tasks, strict=True):
            if not task.done():
                await stopped(mcm, task)


async def test_cluster_synced_follows_whether_the_cluster_answers(
    clusters: EmbeddedFleet,
    apiserver: APIServer,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``multicluster_cluster_synced{cluster}`` is 0 for a cluster engaged but never
    reached, 1 once its caches synced, 0 again while it does not answer (it stayed 1), and
    the reflectors' warnings name the cluster. A synced cluster is not polled: the gauge
    follows its reflectors' failures as they happen (the recheck is pushed out of reach)."""
    monkeypatch.setattr(multicluster_manager, "SYNCED_RECHECK", 600.0)
    await clusters.start(2)
    await seed(clusters)
    broken = Broken()
    provider = StaticProvider(
        {
            "cluster-0": clusters.source("cluster-0"),
            "cluster-1": clusters.source("cluster-1"),
            "broken": broken,
        }
    )
    mcm = MultiClusterManager(
        provider,
        manager_of(await apiserver.api()),
        backoff=lambda: Backoff(initial=0.1, maximum=0.5),
    )
    mcm.add(Controller(ConfigMap), Runs())
    caplog.set_level(logging.WARNING, logger="reconcile_kit.runtime.reflector")
    task = await running(mcm)

    def synced(cluster: str) -> str | None:
        for line in mcm.manager.metrics.exposition().decode().splitlines():
            if line.startswith(f'multicluster_cluster_synced{{cluster="{cluster}"}}'):
                return line.rsplit(" ", 1)[1]
        return None

    try:
        await eventually(lambda: synced("cluster-0") == synced("cluster-1") == "1.0", 10)
        await eventually(lambda: len(broken.attempts) >= 2, 10)
        assert synced("broken") == "0.0"  # engaged, never reached: a series all the same
        await clusters.stop_server("cluster-1")
        await eventually(lambda: synced("cluster-1") == "0.0", 15)
        assert synced("cluster-0") == "1.0"
        warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
        assert any(m.startswith("ConfigMap in cluster cluster-1: ") for m in warned), warned
        await clusters.restart_server("cluster-1")
        await eventually(lambda: synced("cluster-1") == "1.0", 20)
    finally:
        await stopped(mcm, task)
