"""Fenced writes (reconcile_kit.client.fencing) over the wire, on the embedded API server:
a sharded reconcile whose object moved to another replica meanwhile writes nothing, and a
replica whose Lease lapsed by its own clock starts no reconcile and sends no write."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import kr8s
import pytest
from kr8s.asyncio.objects import ConfigMap

from reconcile_kit import Context, Controller, LeaderElection, LeaseExpiredError, PatchHelper
from reconcile_kit.runtime.config import ControllerConfig
from reconcile_kit.runtime.sharding import ShardFilter
from reconcile_kit.runtime.sources import ReflectorPool
from reconcile_kit.testing import APIServer, eventually

from ..kubehttp import call

CM = "/api/v1/namespaces/default/configmaps"
MERGE = "application/merge-patch+json"
LABEL = "shard.reconcile-kit.io/ring"


def sharded(api: Any, member: str) -> Controller:
    ctrl = Controller(
        ConfigMap, api=api, namespace="default", config=ControllerConfig(pool=ReflectorPool())
    )
    ctrl.shard = ShardFilter("ring", member)
    return ctrl


def patches(apiserver: APIServer, name: str) -> int:
    """PATCH requests the server answered for ConfigMap ``name``, any answer."""
    return sum(
        1
        for r in apiserver.requests
        if r.resource == "configmaps" and r.verb == "patch" and r.name == name
    )


async def run(ctrl: Controller, reconcile: Any) -> asyncio.Task[None]:
    task = asyncio.create_task(ctrl.run(reconcile))
    await eventually(lambda: ctrl.synced, 10, interval=0.01)
    return task


async def stop(ctrl: Controller, task: asyncio.Task[None]) -> None:
    await ctrl.shutdown(5)
    await asyncio.wait_for(task, 10)


@pytest.mark.parametrize("write", ["merge", "status", "json"])
async def test_a_write_after_the_object_moved_lands_nowhere_and_is_not_retried(
    kube: kr8s.asyncio.Api, apiserver: APIServer, write: str, caplog: pytest.LogCaptureFixture
) -> None:
    body = {"metadata": {"name": "moved", "labels": {LABEL: "r1"}}, "data": {"v": "0"}}
    await call(kube, "POST", CM, body)
    runs: list[str] = []

    async def reconcile(obj: Any, ctx: Context) -> None:
        runs.append(obj.raw["metadata"]["resourceVersion"])
        # meanwhile the ring's sharder moved the object to r2 (this replica paused, say)
        relabel = {"metadata": {"labels": {LABEL: "r2"}}, "data": {"v": "new"}}
        await call(kube, "PATCH", f"{CM}/moved", relabel, content_type=MERGE)
        async with PatchHelper(obj):
            if write == "json":  # a null value: the helper sends a JSON patch
                obj.raw["metadata"].setdefault("annotations", {})["a"] = None
            obj.raw["data"] = {"v": "stale"}

    ctrl = sharded(kube, "r1")
    caplog.set_level(logging.INFO, "reconcile_kit")
    task = await run(ctrl, reconcile)
    try:
        await eventually(lambda: ctrl.stats.lost_ownership == 1, 10, interval=0.01)
        assert runs and len(runs) == 1  # not retried here
        assert not ctrl.queue.is_processing(ctrl.info.ref(body))  # type: ignore[union-attr]
    finally:
        await stop(ctrl, task)
    _, current = await call(kube, "GET", f"{CM}/moved")
    assert current["data"] == {"v": "new"}  # the stale write did not land
    assert current["metadata"]["labels"] == {LABEL: "r2"}
    assert ctrl.stats.errors == 0 and len(runs) == 1
    lost = [r for r in caplog.records if "lost ownership" in r.getMessage()]
    assert len(lost) == 1 and lost[0].levelno == logging.INFO


async def test_a_conflict_while_still_the_owner_is_retried(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    body = {"metadata": {"name": "mine", "labels": {LABEL: "r1"}}, "data": {"v": "0"}}
    await call(kube, "POST", CM, body)
    runs: list[str] = []

    async def reconcile(obj: Any, ctx: Context) -> None:
        runs.append(obj.raw["data"]["v"])
        if len(runs) == 1:  # another writer changes it: the precondition fails, still ours
            change = {"data": {"v": "1"}}
            await call(kube, "PATCH", f"{CM}/mine", change, content_type=MERGE)
        async with PatchHelper(obj):
            obj.raw["metadata"].setdefault("annotations", {})["seen"] = obj.raw["data"]["v"]

    ctrl = sharded(kube, "r1")
    task = await run(ctrl, reconcile)

    async def written() -> bool:
        _, current = await call(kube, "GET", f"{CM}/mine")
        return (current["metadata"].get("annotations") or {}).get("seen") == "1"

    try:
        await eventually(written, 10, interval=0.02)
    finally:
        await stop(ctrl, task)
    assert ctrl.stats.lost_ownership == 0
    assert runs[0] == "0" and runs[-1] == "1"


async def test_no_reconcile_and_no_write_once_the_lease_lapsed(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    await call(kube, "POST", CM, {"metadata": {"name": "led"}, "data": {"v": "0"}})
    valid = [True]
    checked = [0]

    def lease() -> bool:
        checked[0] += 1
        return valid[0]

    runs: list[str] = []

    async def reconcile(obj: Any, ctx: Context) -> None:
        runs.append(obj.name)
        valid[0] = False  # the process was paused past its renew deadline right here
        async with PatchHelper(obj):
            obj.raw["data"] = {"v": "written"}

    ctrl = Controller(
        ConfigMap, api=kube, namespace="default", config=ControllerConfig(pool=ReflectorPool())
    )
    ctrl.lease, ctrl.lease_holder = lease, "leadership Lease test"
    task = await run(ctrl, reconcile)
    try:
        await eventually(lambda: runs == ["led"] and ctrl.stats.results.get("fenced"), 10)
        assert patches(apiserver, "led") == 0  # refused before it was sent
        # while the Lease is not valid, the key is looked at again but no reconcile starts
        seen = checked[0]
        await eventually(lambda: checked[0] > seen + 1, 10, interval=0.05)
        assert runs == ["led"]
        valid[0] = True  # renewed: reconciled and written
        await eventually(lambda: len(runs) == 2, 10, interval=0.05)
    finally:
        await stop(ctrl, task)
    assert ctrl.stats.errors == 0


async def test_holds_lease_is_false_first_thing_after_a_pause(kube: kr8s.asyncio.Api) -> None:
    loop = asyncio.get_running_loop()
    paused = [0.0]
    election = LeaderElection(
        "paused",
        namespace="default",
        identity="a",
        lease_duration=15,
        renew_deadline=10,
        retry_period=2,
        clock=lambda: loop.time() + paused[0],
    )
    campaign = asyncio.create_task(election.run(kube))
    try:
        await asyncio.wait_for(election.leading(), 10)
        assert election.holds_lease()
        paused[0] = 25.0  # SIGSTOP for 25 s: the monotonic clock jumped, nothing ran yet
        assert election.is_leader and not election.holds_lease()
    finally:
        await election.stop()
        campaign.cancel()
        await asyncio.gather(campaign, return_exceptions=True)


async def test_a_conflicting_drain_acknowledgement_is_retried(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    """The owner's acknowledgement of a drain (removing both labels) is retried after a 409
    that brings no event (before: dropped, the object kept its drain label for good)."""
    drain = "drain.shard.reconcile-kit.io/ring"
    labels = {LABEL: "r1", drain: "true"}
    await call(kube, "POST", CM, {"metadata": {"name": "draining", "labels": labels}})
    apiserver.faults.fail(409, verb="patch", resource="configmaps", name="draining", times=2)
    ctrl = sharded(kube, "r1")

    async def reconcile(obj: Any, ctx: Context) -> None:
        raise AssertionError("a draining object is acknowledged, not reconciled")

    task = await run(ctrl, reconcile)

    async def acknowledged() -> bool:
        _, current = await call(kube, "GET", f"{CM}/draining")
        return not current["metadata"].get("labels")

    try:
        await eventually(acknowledged, 10, interval=0.02)
    finally:
        apiserver.faults.clear()
        await stop(ctrl, task)
    assert ctrl.stats.drains == 1


async def test_acknowledgements_failed_together_are_retried_by_their_own_backoff(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    """After an API server restart every acknowledgement in flight fails at once: each is
    tried again on its own backoff, not behind the controller's overall retry bucket (10 a
    second: 300 objects took 20 s to let go of before)."""
    drain = "drain.shard.reconcile-kit.io/ring"
    count = 300
    for i in range(count):
        labels = {LABEL: "r1", drain: "true"}
        await call(kube, "POST", CM, {"metadata": {"name": f"d-{i}", "labels": labels}})
    apiserver.faults.fail(500, verb="patch", resource="configmaps", times=count)
    ctrl = sharded(kube, "r1")

    async def reconcile(obj: Any, ctx: Context) -> None:
        raise AssertionError("a draining object is acknowledged, not reconciled")

    task = await run(ctrl, reconcile)
    try:
        await eventually(lambda: ctrl.stats.drains == count, 8, interval=0.05)
    finally:
        apiserver.faults.clear()
        await stop(ctrl, task)


async def test_a_controller_run_again_over_a_kept_store_reconciles_only_its_current_share(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    """A sharded controller whose reflector was kept (warm) while it did not run, with its
    watch down meanwhile (an API server restart), lists its share again before it
    reconciles: an object moved to another replica in the meantime is not reconciled from
    the kept store beside its new owner's reconcile (the sharding chaos test's overlap:
    "caches synced in 0.00 s", then a reconcile of a stale object 9 ms later)."""
    for name in ("stays", "moved"):
        await call(kube, "POST", CM, {"metadata": {"name": name, "labels": {LABEL: "r1"}}})
    runs: list[tuple[int, str, str]] = []
    round_ = [1]

    async def reconcile(obj: Any, ctx: Context) -> None:
        runs.append((round_[0], obj.name, obj.raw["metadata"]["labels"][LABEL]))

    ctrl = sharded(kube, "r1")
    cool = await ctrl.warm()  # what holds the reflector between runs (a ring member's)
    task = await run(ctrl, reconcile)
    await eventually(lambda: {n for _, n, _ in runs} == {"stays", "moved"}, 10, interval=0.01)
    await stop(ctrl, task)
    assert ctrl.reflector is not None
    await ctrl.reflector.stop()  # its watch is down: the store is kept, not updated
    relabel = {"metadata": {"labels": {LABEL: "r2"}}}
    await call(kube, "PATCH", f"{CM}/moved", relabel, content_type=MERGE)
    lists = apiserver.requests.count(verb="list")
    round_[0] = 2
    apiserver.faults.latency(0.5, verb="list", times=1)  # the server is slow to answer
    task = await run(ctrl, reconcile)
    try:
        await eventually(lambda: (2, "stays", "r1") in runs, 10, interval=0.01)
        assert apiserver.requests.count(verb="list") == lists + 1  # listed again, once
        assert [r for r in runs if r[0] == 2] == [(2, "stays", "r1")]
        assert ctrl.reflector.store.list_keys() == [("default", "stays")]
    finally:
        await stop(ctrl, task)
        await cool()


async def test_a_controller_run_on_a_fresh_reflector_lists_once(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    """A sharded controller that starts its reflector lists once (no extra LIST)."""
    await call(kube, "POST", CM, {"metadata": {"name": "a", "labels": {LABEL: "r1"}}})
    runs: list[str] = []

    async def reconcile(obj: Any, ctx: Context) -> None:
        runs.append(obj.name)

    ctrl = sharded(kube, "r1")
    task = await run(ctrl, reconcile)
    try:
        await eventually(lambda: runs == ["a"], 10, interval=0.01)
        assert apiserver.requests.count(verb="list") == 1
    finally:
        await stop(ctrl, task)


@pytest.mark.parametrize("write", ["patch", "label", "delete", "create"])
async def test_kr8s_own_writes_are_refused_once_the_lease_lapsed(
    kube: kr8s.asyncio.Api, apiserver: APIServer, write: str
) -> None:
    """A reconcile writing with kr8s's own methods (not through the toolkit's helpers)
    after its replica was paused past the renew deadline sends nothing either: the
    api's httpx client carries the fence's request hook (reconcile_kit.client.fencehook)."""
    await call(kube, "POST", CM, {"metadata": {"name": "own"}, "data": {"v": "0"}})
    valid = [True]
    errors: list[BaseException] = []

    async def reconcile(obj: Any, ctx: Context) -> None:
        if obj.name != "own":
            return
        valid[0] = False  # paused past the renew deadline right here
        try:
            if write == "patch":
                await obj.patch({"data": {"v": "stale"}})
            elif write == "label":
                await obj.label({"stale": "yes"})
            elif write == "delete":
                await obj.delete()
            else:
                await ConfigMap({"metadata": {"name": "child"}}, api=kube).create()
        except Exception as error:
            errors.append(error)
            raise

    ctrl = Controller(
        ConfigMap, api=kube, namespace="default", config=ControllerConfig(pool=ReflectorPool())
    )
    ctrl.lease, ctrl.lease_holder = (lambda: valid[0]), "leadership Lease test"
    before = len(apiserver.requests)
    task = await run(ctrl, reconcile)
    try:
        await eventually(lambda: errors, 10)
    finally:
        await stop(ctrl, task)
    assert isinstance(errors[0], LeaseExpiredError), errors
    named = "configmaps in namespace default" if write == "create" else "configmaps default/own"
    assert str(errors[0]).startswith(named), errors[0]  # the object as its path names it
    writes = [
        r
        for r in apiserver.requests[before:]
        if r.resource == "configmaps" and r.verb in ("create", "patch", "update", "delete")
    ]
    assert writes == []  # refused before it was sent
    _, stored = await call(kube, "GET", f"{CM}/own")
    assert stored["data"] == {"v": "0"} and not stored["metadata"].get("labels")
