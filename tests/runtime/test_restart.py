"""A controller run again over a kept cache (a leader regaining leadership, a ring member
rejoining after its Lease lapsed) queues each cached object again at low priority (a
first look), except the keys its stopped run left work for: a retry waiting for its
backoff, a reconcile cut short by the stop. Those go first: a change the last run had
not finished with does not wait behind the whole cache (the sharding chaos test: a change
to an object mid-handover waited 1.6 s behind the 793 objects of a rejoined share)."""

from __future__ import annotations

import asyncio
from typing import Any

import kr8s
from kr8s.asyncio.objects import ConfigMap

from reconcile_kit import Context, Controller
from reconcile_kit.runtime.config import ControllerConfig
from reconcile_kit.runtime.sharding import ShardFilter
from reconcile_kit.runtime.sources import ReflectorPool
from reconcile_kit.testing import eventually

from ..kubehttp import call

CM = "/api/v1/namespaces/default/configmaps"
LABEL = "shard.reconcile-kit.io/ring"
NAMES = [f"cm-{i:02d}" for i in range(30)]
LAST = NAMES[-1]  # replayed last: the key with work left


def controller(api: Any, shard: str | None = None) -> Controller:
    pool = ReflectorPool()
    ctrl = Controller(ConfigMap, api=api, namespace="default", config=ControllerConfig(pool=pool))
    if shard is not None:
        ctrl.shard = ShardFilter("ring", shard)
    return ctrl


async def create(api: Any, labels: dict[str, str] | None = None) -> None:
    for name in NAMES:
        body = {"metadata": {"name": name, "labels": labels or {}}}
        status, answer = await call(api, "POST", CM, body)
        assert status == 201, answer


async def start(ctrl: Controller, reconcile: Any) -> asyncio.Task[None]:
    task = asyncio.create_task(ctrl.run(reconcile))
    await eventually(lambda: ctrl.synced, 10, interval=0.01)
    return task


async def stop(ctrl: Controller, task: asyncio.Task[None], grace: float = 5.0) -> None:
    await ctrl.shutdown(grace)
    await asyncio.wait_for(task, 10)


async def second_run_order(ctrl: Controller, reconcile: Any, runs: list[str]) -> list[str]:
    """Run ``ctrl`` again (its reflector kept warm) until it reconciled every name; the
    order it did so in."""
    runs.clear()
    task = await start(ctrl, reconcile)
    try:
        await eventually(lambda: len(set(runs)) == len(NAMES), 10, interval=0.01)
    finally:
        await stop(ctrl, task)
    return runs


async def test_a_retry_left_waiting_by_a_stop_runs_first_in_the_next_run(
    kube: kr8s.asyncio.Api,
) -> None:
    await create(kube)
    runs: list[str] = []
    failing = [True]

    async def reconcile(obj: Any, ctx: Context) -> None:
        runs.append(obj.name)
        if obj.name == LAST and failing[0]:
            raise RuntimeError("not yet")  # retried after a backoff

    ctrl = controller(kube)
    cool = await ctrl.warm()  # the reflector outlives the runs (a standby's warm cache)
    try:
        task = await start(ctrl, reconcile)
        await eventually(lambda: set(runs) == set(NAMES), 10, interval=0.01)
        await stop(ctrl, task)  # the failed key's retry is still waiting
        failing[0] = False
        order = await second_run_order(ctrl, reconcile, runs)
        assert order[0] == LAST, order
        assert sorted(order) == sorted(NAMES)  # each once
    finally:
        await cool()


async def test_a_reconcile_cut_short_by_a_stop_runs_first_when_a_shard_rejoins(
    kube: kr8s.asyncio.Api,
) -> None:
    """A sharded controller (which lists its share again over the kept cache) whose stop
    cut a reconcile short: that key goes first in the next run."""
    await create(kube, {LABEL: "r1"})
    runs: list[str] = []
    hold = asyncio.Event()

    async def reconcile(obj: Any, ctx: Context) -> None:
        runs.append(obj.name)
        if obj.name == LAST and not hold.is_set():
            await asyncio.Event().wait()  # in flight when the stop comes

    ctrl = controller(kube, "r1")
    cool = await ctrl.warm()
    try:
        task = await start(ctrl, reconcile)
        await eventually(lambda: set(runs) == set(NAMES), 10, interval=0.01)
        await stop(ctrl, task, grace=0.1)  # the held reconcile is cancelled
        hold.set()
        order = await second_run_order(ctrl, reconcile, runs)
        assert order[0] == LAST, order
    finally:
        await cool()


async def test_a_first_look_is_not_carried_to_the_next_run(kube: kr8s.asyncio.Api) -> None:
    """Keys queued only for their first look (low priority) when the run stopped are not
    promoted in the next: only work left undone is."""
    await create(kube)
    runs: list[str] = []
    gate = asyncio.Event()

    async def reconcile(obj: Any, ctx: Context) -> None:
        runs.append(obj.name)
        await gate.wait()  # the first run gets no further than its first key

    ctrl = controller(kube)
    cool = await ctrl.warm()
    try:
        task = await start(ctrl, reconcile)
        await eventually(lambda: len(runs) == 1, 10, interval=0.01)
        first = runs[0]
        await stop(ctrl, task, grace=0.1)  # cut short: carried; the others: first looks
        gate.set()
        order = await second_run_order(ctrl, reconcile, runs)
        assert order[0] == first
        assert order[1:] == [name for name in NAMES if name != first]  # the cache's order
    finally:
        await cool()
