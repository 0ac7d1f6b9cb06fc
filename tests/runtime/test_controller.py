"""The controller loop against the embedded API server."""

from __future__ import annotations

import asyncio
import itertools
import logging
import random
from collections import Counter
from typing import Any

import kr8s
import orjson
import pytest
from kr8s.asyncio.objects import ConfigMap, Secret

from reconcile_kit import (
    Action,
    Context,
    Controller,
    PatchHelper,
    generation_changed,
    label_selector,
    set_controller_reference,
)
from reconcile_kit.meta.objects import ObjectRef
from reconcile_kit.runtime.config import ControllerConfig
from reconcile_kit.runtime.finalizer import finalizer
from reconcile_kit.runtime.reflector import MODIFIED, ReflectorEvent
from reconcile_kit.runtime.sources import ReflectorPool
from reconcile_kit.testing import APIServer, eventually, run_until

from ..conftest import assert_closed_cleanly, run_python_dev_mode
from ..kubehttp import call

CM = "/api/v1/namespaces/default/configmaps"
MERGE = "application/merge-patch+json"


def controller(api: Any, kind: Any = ConfigMap, **kwargs: Any) -> Controller:
    """A controller with its own reflector pool, so tests do not share caches."""
    return Controller(
        kind, api=api, namespace="default", config=ControllerConfig(pool=ReflectorPool()), **kwargs
    )


async def create_cm(api: Any, name: str, **meta: Any) -> dict[str, Any]:
    status, body = await call(api, "POST", CM, {"metadata": {"name": name, **meta}})
    assert status == 201, body
    return body


async def test_reconciles_every_object_with_a_kr8s_object(kube: kr8s.asyncio.Api) -> None:
    for name in ("a", "b", "c"):
        await create_cm(kube, name)
    seen: dict[str, Any] = {}

    async def reconcile(obj: Any, ctx: Context) -> None:
        assert isinstance(obj, ConfigMap)
        seen[obj.name] = (ctx.key, ctx.reasons, ctx.attempt)

    ctrl = controller(kube)
    assert await run_until(ctrl, reconcile, lambda: len(seen) == 3)
    assert seen["a"] == (ObjectRef("ConfigMap", "default", "a"), frozenset({"created"}), 1)


async def test_rapid_updates_coalesce_and_the_last_state_wins(kube: kr8s.asyncio.Api) -> None:
    await create_cm(kube, "a")
    runs: list[str] = []
    started = asyncio.Event()
    release = asyncio.Event()

    async def reconcile(obj: Any, ctx: Context) -> None:
        runs.append((obj.raw.get("data") or {}).get("i", ""))
        started.set()
        await release.wait()

    ctrl = controller(kube)
    task = asyncio.create_task(ctrl.run(reconcile))
    await asyncio.wait_for(started.wait(), 5)
    for i in range(100):
        await call(kube, "PATCH", f"{CM}/a", {"data": {"i": str(i)}}, MERGE)
    await eventually(
        lambda: (
            ctrl.reflector is not None
            and ctrl.reflector.store.get("default", "a")["data"]["i"] == "99"
        ),
        interval=0.001,
    )
    release.set()
    assert await ctrl.wait_reconciled(lambda: runs[-1:] == ["99"], 5)
    await ctrl.shutdown()
    await task
    assert len(runs) <= 3  # the first run, then one for the 100 coalesced updates
    assert runs[-1] == "99"


async def test_update_during_reconcile_runs_exactly_once_more(kube: kr8s.asyncio.Api) -> None:
    await create_cm(kube, "a")
    runs: list[frozenset[str]] = []
    first = asyncio.Event()
    release = asyncio.Event()

    async def reconcile(obj: Any, ctx: Context) -> None:
        runs.append(ctx.reasons)
        if len(runs) == 1:
            first.set()
            await release.wait()

    ctrl = controller(kube)
    task = asyncio.create_task(ctrl.run(reconcile))
    await asyncio.wait_for(first.wait(), 5)
    await call(kube, "PATCH", f"{CM}/a", {"data": {"x": "1"}}, MERGE)
    await call(kube, "PATCH", f"{CM}/a", {"data": {"x": "2"}}, MERGE)
    await eventually(
        lambda: (
            ctrl.queue.is_processing(ObjectRef("ConfigMap", "default", "a"))
            and ctrl.reflector.store.get("default", "a").get("data", {}).get("x") == "2"
        ),
        interval=0.001,
    )
    release.set()
    assert await ctrl.wait_reconciled(lambda: len(runs) == 2, 5)
    assert not await ctrl.wait_reconciled(lambda: len(runs) > 2, 0.2)
    await ctrl.shutdown()
    await task
    assert runs == [frozenset({"created"}), frozenset({"updated"})]


async def test_a_key_is_never_reconciled_concurrently(kube: kr8s.asyncio.Api) -> None:
    names = [f"cm{i}" for i in range(20)]
    for name in names:
        await create_cm(kube, name)
    active: set[str] = set()
    overlaps: list[str] = []
    counts: Counter[str] = Counter()
    peak = [0]

    async def reconcile(obj: Any, ctx: Context) -> None:
        if obj.name in active:
            overlaps.append(obj.name)
        active.add(obj.name)
        peak[0] = max(peak[0], len(active))
        counts[obj.name] += 1
        await asyncio.sleep(random.random() / 100)
        active.discard(obj.name)

    ctrl = controller(kube, concurrency=10)
    task = asyncio.create_task(ctrl.run(reconcile))
    rng = random.Random(7)
    for i in range(150):
        await call(kube, "PATCH", f"{CM}/{rng.choice(names)}", {"data": {"i": str(i)}}, MERGE)
    assert await ctrl.wait_reconciled(
        lambda: ctrl.stats.active == 0 and len(ctrl.queue) == 0 and all(counts[n] for n in names),
        10,
    )
    await ctrl.shutdown()
    await task
    assert overlaps == []
    assert peak[0] > 1  # keys did run in parallel


async def test_owned_children_reconcile_their_owner(kube: kr8s.asyncio.Api) -> None:
    owner = await create_cm(kube, "owner")
    reasons: list[frozenset[str]] = []
    cached: list[bool] = []

    async def reconcile(obj: Any, ctx: Context) -> None:
        reasons.append(ctx.reasons)
        cached.append(ctx.get("child", kind=Secret) is not None)
        child = await Secret(
            {"metadata": {"name": "child", "namespace": "default"}, "stringData": {"k": "v"}},
            api=kube,
        )
        set_controller_reference(obj, child)
        await ctx.apply(child)

    ctrl = controller(kube).owns(Secret)
    task = asyncio.create_task(ctrl.run(reconcile))
    assert await ctrl.wait_reconciled(lambda: frozenset({"child"}) in reasons, 5)
    count = len(reasons)  # before the write: its reconcile may start before the reply is read
    await call(
        kube,
        "PATCH",
        "/api/v1/namespaces/default/secrets/child",
        {"metadata": {"labels": {"x": "y"}}},
        MERGE,
    )
    assert await ctrl.wait_reconciled(lambda: len(reasons) > count, 5)
    assert reasons[-1] == frozenset({"child"})
    assert cached[0] is False and cached[-1] is True  # ctx.get reads the owned kind's cache
    await ctrl.shutdown()
    await task
    assert owner["metadata"]["uid"]


async def test_watches_mapper_and_reconcile_all_on(kube: kr8s.asyncio.Api) -> None:
    for name in ("a", "b"):
        await create_cm(kube, name)
    seen: list[tuple[str, frozenset[str]]] = []
    trigger: asyncio.Queue[None] = asyncio.Queue()

    async def ticks() -> Any:
        while True:
            yield await trigger.get()

    def mapper(secret: dict[str, Any]) -> list[tuple[str, str]]:
        target = (secret["metadata"].get("labels") or {}).get("for")
        if target == "boom":
            raise RuntimeError("mapper bug")
        return [("default", target)] if target else []

    async def reconcile(obj: Any, ctx: Context) -> None:
        seen.append((obj.name, ctx.reasons))

    ctrl = controller(kube).watches(Secret, mapper).reconcile_all_on(ticks())
    task = asyncio.create_task(ctrl.run(reconcile))
    assert await ctrl.wait_reconciled(lambda: len(seen) == 2, 5)
    await call(
        kube,
        "POST",
        "/api/v1/namespaces/default/secrets",
        {"metadata": {"name": "s0", "labels": {"for": "boom"}}},
    )
    await call(
        kube,
        "POST",
        "/api/v1/namespaces/default/secrets",
        {"metadata": {"name": "s1", "labels": {"for": "b"}}},
    )
    assert await ctrl.wait_reconciled(lambda: ("b", frozenset({"mapped"})) in seen, 5)
    assert ctrl.stats.mapper_errors == 1
    trigger.put_nowait(None)
    assert await ctrl.wait_reconciled(
        lambda: {n for n, r in seen if r == frozenset({"resync"})} == {"a", "b"}, 5
    )
    await ctrl.shutdown()
    await task


async def test_a_reconcile_reads_the_state_its_event_carried_without_decoding_it(
    kube: kr8s.asyncio.Api,
) -> None:
    """The reconcile a watch event queues is built over the very state the event carried
    (StoreWriter.keep_decoded; the cache keeps JSON bytes, decoded again before): its
    metadata is the event's own dict, for an object created and for a change of it."""
    await create_cm(kube, "a")
    carried: dict[tuple[str, str], Any] = {}
    shared: list[tuple[str, bool | None]] = []

    async def reconcile(obj: Any, ctx: Context) -> None:
        meta = dict.get(obj.raw, "metadata")  # dict.get: the value held, not a wrapper
        event = carried.get((obj.name, meta["resourceVersion"]))
        shared.append((obj.name, None if event is None else meta is event["metadata"]))

    def record(event: ReflectorEvent) -> None:
        meta = event.obj["metadata"]
        carried[(meta["name"], meta["resourceVersion"])] = event.obj

    ctrl = controller(kube)
    task = asyncio.create_task(ctrl.run(reconcile))
    assert await ctrl.wait_reconciled(lambda: shared == [("a", None)], 5)
    assert ctrl.reflector is not None
    ctrl.reflector.subscribe(record, replay=False)  # before the handler that queues
    await create_cm(kube, "b")
    assert await ctrl.wait_reconciled(lambda: len(shared) == 2, 5)
    await call(kube, "PATCH", f"{CM}/b", {"metadata": {"labels": {"x": "1"}}}, MERGE)
    assert await ctrl.wait_reconciled(lambda: len(shared) == 3, 5)
    await ctrl.shutdown()
    await task
    assert shared[1:] == [("b", True), ("b", True)], shared


async def test_predicates_filter_primary_events(kube: kr8s.asyncio.Api) -> None:
    await create_cm(kube, "a", labels={"team": "x"})
    await create_cm(kube, "b", labels={"team": "y"})
    seen: list[str] = []

    async def reconcile(obj: Any, ctx: Context) -> None:
        seen.append(obj.name)

    ctrl = controller(kube, predicates=[label_selector("team=x"), generation_changed])
    task = asyncio.create_task(ctrl.run(reconcile))
    assert await ctrl.wait_reconciled(lambda: seen == ["a"], 5)
    await call(kube, "PATCH", f"{CM}/a", {"data": {"k": "v"}}, MERGE)  # no generation change
    assert not await ctrl.wait_reconciled(lambda: len(seen) > 1, 0.3)
    await ctrl.shutdown()
    await task


async def test_errors_retry_and_the_loop_goes_on(
    kube: kr8s.asyncio.Api, caplog: pytest.LogCaptureFixture
) -> None:
    for name in ("bad", "good"):
        await create_cm(kube, name)
    attempts: list[tuple[str, int]] = []

    async def reconcile(obj: Any, ctx: Context) -> None:
        attempts.append((obj.name, ctx.attempt))
        if obj.name == "bad" and ctx.attempt < 3:
            raise RuntimeError("not yet")

    ctrl = controller(kube, retry=0.01)
    assert await run_until(ctrl, reconcile, lambda: ("bad", 3) in attempts)
    assert ("good", 1) in attempts
    assert [a for n, a in attempts if n == "bad"] == [1, 2, 3]
    assert ctrl.stats.errors == 2
    assert "reconcile failed (attempt 1): RuntimeError: not yet" in caplog.text


BAD_RESULTS = {"true": True, "seconds": 30, "uncalled": Action.requeue}


async def test_a_reconcile_returning_no_action_fails_and_the_workers_go_on(
    kube: kr8s.asyncio.Api, caplog: pytest.LogCaptureFixture
) -> None:
    """A reconcile returning ``True``, a number of seconds or ``Action.requeue`` itself
    killed its worker silently (no log; one worker: the controller never reconciled
    again). It is a failed reconcile, retried, its message naming the object and value."""
    for name in (*BAD_RESULTS, "after"):
        await create_cm(kube, name)
    seen: list[tuple[str, int]] = []

    async def reconcile(obj: Any, ctx: Context) -> Any:
        seen.append((obj.name, ctx.attempt))
        return BAD_RESULTS.get(obj.name) if ctx.attempt == 1 else None

    ctrl = controller(kube, retry=0.01, concurrency=1)
    done = lambda: {(name, 2) for name in BAD_RESULTS} | {("after", 1)} <= set(seen)  # noqa: E731
    assert await run_until(ctrl, reconcile, done)
    assert ctrl.stats.errors == 3
    assert (
        "TypeError: ConfigMap default/seconds: reconcile returned 30 (int), not an Action or "
        "None: return Action.requeue(seconds)" in caplog.text
    )
    assert "reconcile returned Action.requeue (method), uncalled, not an Action" in caplog.text


async def test_a_plain_def_reconcile_fails_naming_async_def(
    kube: kr8s.asyncio.Api, caplog: pytest.LogCaptureFixture
) -> None:
    """A ``def`` reconcile failed with Python's ``object NoneType can't be used in 'await'
    expression``; the message now names the object and asks for ``async def``."""
    await create_cm(kube, "a")
    calls: list[int] = []

    def reconcile(obj: Any, ctx: Context) -> None:
        calls.append(ctx.attempt)

    ctrl = controller(kube, retry=0.01)
    assert await run_until(ctrl, reconcile, lambda: len(calls) >= 2)  # type: ignore[arg-type]
    assert (
        "TypeError: ConfigMap default/a: reconcile returned None (NoneType), not an "
        "awaitable: define it with async def" in caplog.text
    )


async def test_a_plain_def_on_delete_and_finalizer_cleanup_name_async_def(
    kube: kr8s.asyncio.Api, caplog: pytest.LogCaptureFixture
) -> None:
    """A ``def`` on_delete was logged as ``on_delete failed`` with Python's ``object
    NoneType can't be used in 'await' expression``, a ``def`` finalizer cleanup failed the
    reconcile so; both now name the object and ask for ``async def``, as a reconcile's."""
    await create_cm(kube, "a")
    deleted: list[str] = []
    cleanups: list[str] = []

    def on_delete(obj: Any, ctx: Context) -> None:
        deleted.append(obj.name)

    def cleanup(obj: Any) -> None:
        cleanups.append(obj.name)

    async def apply(obj: Any) -> None:
        return None

    async def reconcile(obj: Any, ctx: Context) -> Any:
        return await finalizer(obj, "example.com/cleanup", apply, cleanup)  # type: ignore[arg-type]

    ctrl = controller(kube, retry=0.05)
    task = asyncio.create_task(ctrl.run(reconcile, on_delete=on_delete))  # type: ignore[arg-type]
    try:

        async def finalized() -> bool:
            _, body = await call(kube, "GET", f"{CM}/a")
            return "example.com/cleanup" in (body["metadata"].get("finalizers") or [])

        assert await ctrl.wait_reconciled(finalized, 5)
        await call(kube, "DELETE", f"{CM}/a")
        assert await ctrl.wait_reconciled(lambda: "finalizer cleanup returned" in caplog.text, 5)
        assert (
            "ConfigMap default/a: finalizer cleanup returned None (NoneType), not an awaitable:"
            " define it with async def" in caplog.text
        )
        # the finalizer stays (the cleanup did not succeed); release the object by hand
        patch = {"metadata": {"finalizers": None}}
        await call(kube, "PATCH", f"{CM}/a", patch, MERGE)
        assert await ctrl.wait_reconciled(lambda: "on_delete failed" in caplog.text, 5)
    finally:
        await ctrl.shutdown()
        await task
    assert deleted == ["a"]  # it ran, as a plain def does; its None is what was refused
    (line,) = [r for r in caplog.records if "on_delete failed" in r.getMessage()]
    assert line.getMessage() == (
        "on_delete failed: ConfigMap default/a: on_delete returned None (NoneType), not an"
        " awaitable: define it with async def (a plain def's return value cannot be awaited)"
    )
    assert line.exc_info is None  # one line, no traceback


def test_async_predicates_mappers_and_converters_are_refused_by_name() -> None:
    """An ``async def`` predicate returned a coroutine, always true: every event passed,
    and Python warned "coroutine was never awaited"; a mapper's coroutine is no list of
    keys. Both are refused where they are given, naming them."""
    from reconcile_kit.webhooks.conversion import Converters

    from ..typed.models import Gadget

    async def is_ready(event: ReflectorEvent) -> bool:
        return True

    async def owners_of(obj: Any) -> list[ObjectRef]:
        return []

    with pytest.raises(
        TypeError, match=r"predicate .*is_ready is an async def: .* define it with def"
    ):
        Controller(ConfigMap, predicates=[is_ready])  # type: ignore[list-item]
    with pytest.raises(TypeError, match=r"mapper .*owners_of is an async def"):
        Controller(ConfigMap).watches(Secret, owners_of)  # type: ignore[arg-type]

    class V2(Gadget, group="typed.example.com", version="v2", kind="Gadget"):
        pass

    async def up(obj: Any) -> Any:
        return obj

    with pytest.raises(TypeError, match=r"converter .*up is an async def"):
        Converters().add(Gadget, V2, up)


async def test_an_error_policy_returning_no_action_falls_back_to_the_retry_policy(
    kube: kr8s.asyncio.Api, caplog: pytest.LogCaptureFixture
) -> None:
    """An error_policy returning something else than an Action killed the worker too."""
    await create_cm(kube, "a")
    calls: list[int] = []

    async def reconcile(obj: Any, ctx: Context) -> None:
        calls.append(ctx.attempt)
        raise RuntimeError("always")

    def error_policy(obj: Any, error: BaseException, ctx: Context) -> Any:
        return 0.01

    ctrl = controller(kube, retry=0.01, concurrency=1)
    assert await run_until(ctrl, reconcile, lambda: len(calls) >= 3, error_policy=error_policy)
    assert "error_policy failed; using the retry policy" in caplog.text
    assert "ConfigMap default/a: error_policy returned 0.01 (float), not an Action" in caplog.text


async def test_error_policy_and_max_retries(kube: kr8s.asyncio.Api) -> None:
    await create_cm(kube, "a")
    calls: list[int] = []

    async def reconcile(obj: Any, ctx: Context) -> None:
        calls.append(ctx.attempt)
        raise RuntimeError("always")

    def error_policy(obj: Any, error: BaseException, ctx: Context) -> Action:
        return Action.requeue(0.01) if ctx.attempt < 4 else Action.await_change()

    ctrl = controller(kube)

    def settled() -> bool:  # after the 4th reconcile: nothing queued or delayed any more
        return len(calls) >= 4 and not len(ctrl.queue) and not ctrl.queue.pending_delayed()

    assert await run_until(ctrl, reconcile, settled, error_policy=error_policy)
    assert calls == [1, 2, 3, 4]
    from reconcile_kit.runtime.queue import RetryPolicy

    calls.clear()
    ctrl = controller(kube, retry=RetryPolicy(0.01, max_retries=2))
    assert await run_until(ctrl, reconcile, lambda: ctrl.queue.dropped == 1)
    assert calls == [1, 2, 3] and not ctrl.queue.pending_delayed()


async def test_requeue_after(kube: kr8s.asyncio.Api) -> None:
    await create_cm(kube, "a")
    reasons: list[frozenset[str]] = []

    async def reconcile(obj: Any, ctx: Context) -> Action:
        reasons.append(ctx.reasons)
        return Action.requeue(0.05)

    ctrl = controller(kube)
    assert await run_until(ctrl, reconcile, lambda: len(reasons) >= 3)
    assert reasons[1:3] == [frozenset({"requeue"})] * 2


async def test_finalizer_flow_and_on_delete(kube: kr8s.asyncio.Api, apiserver: APIServer) -> None:
    await create_cm(kube, "a")
    cleaned: list[str] = []
    deleted: list[dict[str, Any]] = []

    async def apply(obj: Any) -> None:
        return None

    async def cleanup(obj: Any) -> None:
        cleaned.append(obj.name)

    async def reconcile(obj: Any, ctx: Context) -> Any:
        return await finalizer(obj, "example.com/cleanup", apply, cleanup)

    async def on_delete(obj: Any, ctx: Context) -> None:
        deleted.append(dict(obj.raw))

    ctrl = controller(kube)
    task = asyncio.create_task(ctrl.run(reconcile, on_delete=on_delete))

    async def has_finalizer() -> bool:
        _, body = await call(kube, "GET", f"{CM}/a")
        return "example.com/cleanup" in (body["metadata"].get("finalizers") or [])

    assert await ctrl.wait_reconciled(has_finalizer, 5)
    await call(kube, "DELETE", f"{CM}/a")
    assert await ctrl.wait_reconciled(lambda: bool(deleted), 5)
    assert cleaned == ["a"]
    assert deleted[0]["metadata"]["name"] == "a"
    assert deleted[0]["metadata"]["deletionTimestamp"]  # the last known state
    status, _ = await call(kube, "GET", f"{CM}/a")
    assert status == 404
    await ctrl.shutdown()
    await task


async def test_watch_resume_and_relist_through_the_controller(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    await create_cm(kube, "a")
    await create_cm(kube, "b")
    seen: list[tuple[str, frozenset[str]]] = []
    gone: list[str] = []

    async def reconcile(obj: Any, ctx: Context) -> None:
        seen.append((obj.name, ctx.reasons))

    async def on_delete(obj: Any, ctx: Context) -> None:
        gone.append(obj.name)

    ctrl = controller(kube)
    task = asyncio.create_task(ctrl.run(reconcile, on_delete=on_delete))
    assert await ctrl.wait_reconciled(lambda: len(seen) == 2, 5)
    await eventually(lambda: apiserver.open_watches > 0, interval=0.001)
    apiserver.close_watches()
    await eventually(
        lambda: apiserver.requests.count(verb="watch") >= 2 and apiserver.open_watches > 0,
        interval=0.001,
    )
    await call(kube, "PATCH", f"{CM}/a", {"data": {"k": "v"}}, MERGE)
    assert await ctrl.wait_reconciled(lambda: ("a", frozenset({"updated"})) in seen, 5)
    assert apiserver.requests.count(verb="list") == 1  # resumed, no relist
    apiserver.faults.latency(0.3, verb="watch", times=1)
    apiserver.close_watches()
    await eventually(lambda: apiserver.requests.count(verb="watch") >= 3, interval=0.001)
    await call(kube, "DELETE", f"{CM}/b")
    apiserver.compact()
    assert await ctrl.wait_reconciled(lambda: gone == ["b"], 5)
    assert apiserver.requests.count(verb="list") == 2  # one relist
    await ctrl.shutdown()
    await task


async def test_graceful_shutdown_waits_then_cancels(kube: kr8s.asyncio.Api) -> None:
    await create_cm(kube, "a")
    started = asyncio.Event()
    finished: list[str] = []
    cancelled: list[str] = []

    async def slow(obj: Any, ctx: Context) -> None:
        started.set()
        await asyncio.sleep(0.2)
        finished.append(obj.name)

    ctrl = controller(kube)
    task = asyncio.create_task(ctrl.run(slow))
    await asyncio.wait_for(started.wait(), 5)
    await ctrl.shutdown(timeout=5)
    await task
    assert finished == ["a"]

    started.clear()

    async def stuck(obj: Any, ctx: Context) -> None:
        started.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.append(obj.name)
            raise

    ctrl = controller(kube)
    task = asyncio.create_task(ctrl.run(stuck))
    await asyncio.wait_for(started.wait(), 5)
    await ctrl.shutdown(timeout=0.1)
    await task
    assert cancelled == ["a"]


async def test_context_apply_creates_then_sends_nothing_while_unchanged(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    await create_cm(kube, "a")
    runs: list[str] = []

    async def reconcile(obj: Any, ctx: Context) -> None:
        runs.append(obj.name)
        if obj.name.endswith("-child"):
            return
        child = await ConfigMap(
            {"metadata": {"name": "a-child", "namespace": "default"}, "data": {"from": obj.name}},
            api=kube,
        )
        await ctx.apply(child)
        async with PatchHelper(obj):
            obj.raw.setdefault("data", {})["done"] = str(runs.count("a"))

    ctrl = controller(kube)  # the child is a ConfigMap too: in the controller's cache
    assert await run_until(ctrl, reconcile, lambda: runs.count("a") >= 3)
    applies = apiserver.requests.filter(verb="patch", name="a-child")
    assert [r.query for r in applies] == [{"fieldManager": "configmap", "force": "true"}]
    child = await ConfigMap.get("a-child", namespace="default", api=kube)
    assert child.raw["data"] == {"from": "a"}
    fields = child.raw["metadata"]["managedFields"]
    assert [(f["manager"], f["operation"]) for f in fields] == [("configmap", "Apply")]


async def test_context_apply_without_a_cache_sends_a_no_op_apply(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    await create_cm(kube, "a")
    runs: list[int] = []
    versions: list[str] = []

    async def reconcile(obj: Any, ctx: Context) -> None:
        runs.append(1)
        secret = await Secret(
            {"metadata": {"name": "a-secret", "namespace": "default"}, "stringData": {"k": "v"}},
            api=kube,
        )
        await ctx.apply(secret)
        versions.append(secret.raw["metadata"]["resourceVersion"])
        async with PatchHelper(obj):
            obj.raw.setdefault("data", {})["done"] = str(len(runs))

    # Secrets are not in the controller's cache: each reconcile applies, and the server
    # leaves an unchanged object alone (same resourceVersion)
    ctrl = controller(kube)
    assert await run_until(ctrl, reconcile, lambda: len(runs) >= 2)
    assert apiserver.requests.count(verb="patch", name="a-secret") == len(runs)
    assert len(set(versions)) == 1


@pytest.mark.looptime
async def test_requeue_and_backoff_on_a_fast_forwarded_clock(kube: kr8s.asyncio.Api) -> None:
    await create_cm(kube, "a")
    loop = asyncio.get_running_loop()
    times: list[tuple[float, int, frozenset[str]]] = []
    fail_until = [4]

    async def reconcile(obj: Any, ctx: Context) -> Action:
        times.append((loop.time(), ctx.attempt, ctx.reasons))
        if len(times) < fail_until[0]:
            raise RuntimeError("flaky")
        return Action.requeue(300)

    ctrl = controller(kube)  # default policy: 5 ms doubling to 1000 s
    task = asyncio.create_task(ctrl.run(reconcile))
    assert await ctrl.wait_reconciled(lambda: len(times) >= 5, 3600)
    gaps = [round(b[0] - a[0], 3) for a, b in itertools.pairwise(times)]
    assert gaps[:3] == [0.005, 0.01, 0.02]  # backoff grows
    assert [t[1] for t in times[:5]] == [1, 2, 3, 4, 1]  # and resets after the success
    assert gaps[3] == pytest.approx(300, abs=0.01) and times[4][2] == frozenset({"requeue"})
    await ctrl.shutdown()
    await task


@pytest.mark.looptime
@pytest.mark.parametrize(
    ("retry_rate_limit", "fewest", "most"),
    [((10.0, 100), 100 + 10 * 5 - 1, 100 + 10 * 5 + 1), (None, 1500, 200 * 10)],
)
async def test_a_retry_storm_is_held_to_the_overall_retry_rate_limit(
    kube: kr8s.asyncio.Api,
    retry_rate_limit: tuple[float, int] | None,
    fewest: int,
    most: int,
) -> None:
    """200 objects whose reconcile always fails, for 5 s of loop time: with client-go's
    overall 10 qps / 100 burst bucket (the default) 100 + 10 * 5 retries; without it, the
    per-key backoff alone lets each key retry ~9 times."""
    for i in range(200):
        await create_cm(kube, f"cm{i}")
    loop = asyncio.get_running_loop()
    runs: list[tuple[float, int]] = []

    async def reconcile(obj: Any, ctx: Context) -> None:
        runs.append((loop.time(), ctx.attempt))
        raise RuntimeError("always failing")

    ctrl = controller(kube, retry_rate_limit=retry_rate_limit)
    assert ctrl.queue.retry_rate_limit == retry_rate_limit
    task = asyncio.create_task(ctrl.run(reconcile))
    assert await ctrl.wait_reconciled(lambda: bool(runs), 60)
    started = runs[0][0]
    assert await ctrl.wait_reconciled(lambda: loop.time() > started + 5, 600)
    await ctrl.shutdown()
    await task
    in_time = [attempt for t, attempt in runs if t <= started + 5]
    assert in_time.count(1) == 200
    retries = len(in_time) - 200
    assert fewest <= retries <= most
    print(f"controller retry storm, retry_rate_limit={retry_rate_limit}: {retries} in 5 s")


@pytest.mark.looptime
async def test_requeues_are_not_held_to_the_retry_rate_limit(kube: kr8s.asyncio.Api) -> None:
    """controller-runtime's RequeueAfter is a plain AddAfter: 150 keys (more than the
    bucket's 100) requeued after 1 s all run again 1 s later."""
    for i in range(150):
        await create_cm(kube, f"cm{i}")
    loop = asyncio.get_running_loop()
    runs: list[tuple[float, frozenset[str]]] = []

    async def reconcile(obj: Any, ctx: Context) -> Action:
        runs.append((loop.time(), ctx.reasons))
        return Action.requeue(1)

    ctrl = controller(kube, retry_rate_limit=(1.0, 1))
    task = asyncio.create_task(ctrl.run(reconcile))
    assert await ctrl.wait_reconciled(lambda: len(runs) >= 300, 60)
    await ctrl.shutdown()
    await task
    started = runs[0][0]
    assert {round(t - started, 3) for t, _ in runs[:150]} == {0}
    assert {round(t - started, 3) for t, _ in runs[150:300]} == {1}
    assert {reasons for _, reasons in runs[150:300]} == {frozenset({"requeue"})}


@pytest.mark.looptime
async def test_periodic_resync(kube: kr8s.asyncio.Api) -> None:
    await create_cm(kube, "a")
    loop = asyncio.get_running_loop()
    runs: list[tuple[float, frozenset[str]]] = []

    async def reconcile(obj: Any, ctx: Context) -> None:
        runs.append((loop.time(), ctx.reasons))

    ctrl = controller(kube, resync=600)
    task = asyncio.create_task(ctrl.run(reconcile))
    assert await ctrl.wait_reconciled(lambda: len(runs) >= 3, 7200)
    assert [r for _, r in runs[1:3]] == [frozenset({"resync"})] * 2
    assert runs[2][0] - runs[1][0] == pytest.approx(600, abs=0.01)
    await ctrl.shutdown()
    await task


async def test_status_helpers_background_tasks_and_cache_reads(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    deploy = "/apis/apps/v1/namespaces/default/deployments"
    await call(
        kube,
        "POST",
        deploy,
        {
            "metadata": {"name": "d"},
            "spec": {
                "selector": {"matchLabels": {"a": "b"}},
                "template": {
                    "metadata": {"labels": {"a": "b"}},
                    "spec": {"containers": [{"name": "c", "image": "busybox"}]},
                },
            },
        },
    )
    ticks: list[str] = []
    listed: list[list[str]] = []

    async def heartbeat(ctrl: Controller) -> None:
        while True:
            ticks.append(ctrl.name)
            await asyncio.sleep(3600)

    async def reconcile(obj: Any, ctx: Context) -> None:
        listed.append([o["metadata"]["name"] for o in ctx.list()])
        await ctx.patch_status(obj, {"replicas": 3})
        obj.raw["status"]["readyReplicas"] = 1
        await ctx.update_status(obj)

    ctrl = Controller(
        "Deployment",
        api=kube,
        namespace="default",
        config=ControllerConfig(pool=ReflectorPool()),
        predicates=[generation_changed],
    ).background(heartbeat)
    assert await run_until(ctrl, reconcile, lambda: bool(listed) and bool(ticks))
    assert listed[0] == ["d"] and ticks == ["deployment"]
    _, stored = await call(kube, "GET", f"{deploy}/d")
    assert stored["status"]["replicas"] == 3 and stored["status"]["readyReplicas"] == 1
    status_writes = [(r.verb, r.subresource) for r in apiserver.requests.writes()]
    assert status_writes[-2:] == [("patch", "status"), ("update", "status")]


async def test_object_that_fails_to_build_is_counted_and_the_loop_goes_on(
    kube: kr8s.asyncio.Api,
) -> None:
    # "unbuildable": kr8s keeps Picky as the ConfigMap class for later tests' lookups
    await create_cm(kube, "unbuildable")
    await create_cm(kube, "b")
    seen: list[str] = []

    class Picky(ConfigMap):  # type: ignore[misc]
        def __init__(self, resource: Any, *args: Any, **kwargs: Any) -> None:
            if resource["metadata"]["name"] == "unbuildable":
                raise ValueError("cannot parse")
            super().__init__(resource, *args, **kwargs)

    async def reconcile(obj: Any, ctx: Context) -> None:
        seen.append(obj.name)

    ctrl = controller(kube, Picky, retry=3600.0)
    assert await run_until(ctrl, reconcile, lambda: seen == ["b"] and ctrl.stats.errors >= 1)
    assert ctrl.stats.errors >= 1


async def test_a_reconcile_reads_the_controllers_own_earlier_write(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    await create_cm(kube, "a")
    seen: list[str | None] = []

    async def reconcile(obj: Any, ctx: Context) -> Action | None:
        seen.append((obj.raw["metadata"].get("labels") or {}).get("step"))
        if len(seen) == 1:
            # hold back the cache: the watch is cut and resumes only after 5 s
            apiserver.faults.latency(5, verb="watch", times=1)
            apiserver.close_watches()
            async with PatchHelper(obj):
                obj.raw["metadata"]["labels"] = {"step": "1"}
            return Action.requeue(0)
        return None

    ctrl = controller(kube)
    assert await run_until(ctrl, reconcile, lambda: len(seen) >= 2, timeout=4)
    assert seen[:2] == [None, "1"]  # the second run saw its own write, not the stale cache


async def test_reconciler_edits_never_reach_the_cache(kube: kr8s.asyncio.Api) -> None:
    """The object a reconcile gets shares the cached document copy-on-access: editing it
    (here without ever patching) leaves the cache as the server sent it."""
    await create_cm(kube, "a", labels={"app": "x"})
    await call(kube, "PATCH", f"{CM}/a", {"data": {"k": "v"}}, MERGE)
    runs: list[dict[str, Any]] = []

    async def reconcile(obj: Any, ctx: Context) -> Action | None:
        runs.append(obj.raw.to_dict())
        obj.raw["data"]["k"] = "edited"
        obj.raw["metadata"]["labels"]["app"] = "edited"
        del obj.raw["metadata"]["name"]
        return Action.requeue(0.01) if len(runs) < 3 else None

    ctrl = controller(kube)
    assert await run_until(ctrl, reconcile, lambda: len(runs) == 3)
    assert ctrl.reflector is not None
    cached = ctrl.reflector.store.get("default", "a")
    assert cached["data"] == {"k": "v"} and cached["metadata"]["labels"] == {"app": "x"}
    assert [(r["data"], r["metadata"]["labels"]) for r in runs] == [({"k": "v"}, {"app": "x"})] * 3


BARE_CONTROLLER = """
    import asyncio
    import gc
    import os

    import aiohttp
    from kr8s.asyncio.objects import ConfigMap

    from reconcile_kit import Controller
    from reconcile_kit.client.transport import close_session
    from reconcile_kit.testing import APIServer


    async def main() -> None:
        async with APIServer() as server, aiohttp.ClientSession() as http:
            cms = f"{server.url}/api/v1/namespaces/default/configmaps"
            async with http.post(cms, json={"metadata": {"name": "a"}}) as response:
                assert response.status == 201
            os.environ["KUBECONFIG"] = server.kubeconfig
            seen = []

            async def reconcile(obj, ctx):
                ctx.recorder.event(obj, "Normal", "Seen", "seen by a bare controller")
                seen.append(obj.name)

            ctrl = Controller(ConfigMap, namespace="default")  # its own api (kr8s discovery)
            task = asyncio.create_task(ctrl.run(reconcile))
            assert await ctrl.wait_reconciled(lambda: seen == ["a"], 30)
            await ctrl.shutdown()
            await task
            events = f"{server.url}/apis/events.k8s.io/v1/namespaces/default/events"
            async with http.get(events) as response:
                items = (await response.json())["items"]
            assert [e["reason"] for e in items] == ["Seen"], items

            # a run that fails to start closes what it opened as well
            api = await server.api()
            await close_session(api)  # kr8s's version check: this script's connection
            failing = Controller("NoSuchKind", api=api)
            try:
                await failing.run(reconcile)
            except ValueError:
                pass
            else:
                raise AssertionError("a kind the server does not serve cannot run")
        print("done")


    asyncio.run(main())
    gc.collect()  # what was left open warns now, not unnoticed at interpreter exit
"""


async def test_a_bare_controller_closes_what_it_opened() -> None:
    """Not in a manager: the aiohttp session, the api client it created and its event
    recorder are closed when run ends (shutdown or error), nothing left for the GC."""
    code, out, err = await run_python_dev_mode(BARE_CONTROLLER)
    assert_closed_cleanly(code, out, err)
    assert out.strip() == "done"


async def test_startup_and_stop_say_what_they_do(
    kube: kr8s.asyncio.Api, caplog: pytest.LogCaptureFixture
) -> None:
    for name in ("a", "b"):
        await create_cm(kube, name)
    seen: set[str] = set()

    async def reconcile(obj: Any, ctx: Context) -> None:
        seen.add(obj.name)

    ctrl = controller(kube).owns(Secret)
    with caplog.at_level(logging.INFO, logger="reconcile_kit.runtime.controller"):
        assert await run_until(ctrl, reconcile, lambda: seen == {"a", "b"})
    lines = [r.getMessage() for r in caplog.records if r.name == "reconcile_kit.runtime.controller"]
    assert "configmap: waiting for caches to sync (ConfigMap, Secret)" in lines
    [synced] = [line for line in lines if "caches synced in" in line]
    assert synced.endswith("s (2 ConfigMap, 0 Secret); starting workers")
    assert lines[-1] == "configmap: stopped"


async def test_own_writes_are_forgotten_once_the_cache_holds_them(
    kube: kr8s.asyncio.Api,
) -> None:
    """The read-your-writes copies go when the watch delivers the write, even when a
    predicate (generation_changed) filters that event out and the key never runs again."""
    for i in range(20):
        await create_cm(kube, f"cm-{i}")
    done: set[str] = set()

    async def reconcile(obj: Any, ctx: Context) -> None:
        async with PatchHelper(obj):
            obj.raw["metadata"].setdefault("annotations", {})["seen"] = "yes"
        done.add(obj.name)

    ctrl = controller(kube, predicates=[generation_changed])
    task = asyncio.create_task(ctrl.run(reconcile))
    try:
        await eventually(lambda: len(done) == 20, 10)
        # every write reached the cache: nothing of it is kept twice
        await eventually(lambda: not ctrl._written, 10, what="own writes forgotten")
        assert ctrl.stats.reconciles == 20
    finally:
        await ctrl.shutdown()
        await task


async def test_the_echo_of_a_write_sees_the_state_the_reconcile_read(
    kube: kr8s.asyncio.Api,
) -> None:
    """The watch event of a reconcile's write carries the state the reconcile read as its
    old state (taken from the reconcile's decoded copy: the store notes it, and the notes
    go once the events came)."""
    for i in range(10):
        await create_cm(kube, f"e{i}", labels={"step": "0"})
    olds: dict[str, list[str | None]] = {}

    def record(event: ReflectorEvent) -> bool:
        if event.type == MODIFIED:
            labels = (event.old or {}).get("metadata", {}).get("labels") or {}
            olds.setdefault(event.obj["metadata"]["name"], []).append(labels.get("step"))
        return True

    async def reconcile(obj: Any, ctx: Context) -> None:
        step = int(obj.raw["metadata"]["labels"]["step"])
        if step < 2:
            async with PatchHelper(obj):
                obj.raw["metadata"]["labels"]["step"] = str(step + 1)

    ctrl = controller(kube, predicates=[record])
    done = lambda: all(olds.get(f"e{i}") == ["0", "1"] for i in range(10))  # noqa: E731
    assert await run_until(ctrl, reconcile, done, timeout=10)
    assert ctrl.reflector is not None
    assert not ctrl.reflector._writer._decoded


TRICKY_OBJECTS: dict[str, dict[str, Any]] = {
    "plain": {},
    "annotated": {"annotations": {"resourceVersion": "1"}},
    "labelled": {"labels": {"resourceVersion": "2"}},
    "quoted": {"annotations": {"a": '{"resourceVersion":"3"}', "z": "\u00e9\u2603"}},
}


async def test_the_cache_holds_a_controllers_own_writes_as_the_server_does(
    kube: kr8s.asyncio.Api,
) -> None:
    """After a controller's own writes, each reconcile's answer taken for its watch event
    (the event is not decoded again, issue 31) or the event decoded (a label or annotation
    named resourceVersion), the cache holds what a GET answers (managedFields dropped); a
    reconcile that read what it wrote and changed it again is no exception. After each
    write the object holds what a GET answers, whether its answer was decoded or took the
    state of its watch event decoded first (reconcile_kit.patch.recent)."""
    for name, meta in TRICKY_OBJECTS.items():
        await create_cm(kube, name, **meta)
    written: Counter[str] = Counter()

    adopted: list[tuple[str, bool]] = []

    async def reconcile(obj: Any, ctx: Context) -> None:
        if written[obj.name] < 3:
            async with PatchHelper(obj):
                obj.raw["data"] = {"step": str(written[obj.name]), "name": obj.name}
            written[obj.name] += 1
            if written[obj.name] == 2:  # (a GET between a write and its end lets the echo in)
                # the object holds the server's answer (decoded, or its watch event's state)
                _, served = await call(kube, "GET", f"{CM}/{obj.name}")
                adopted.append((obj.name, orjson.loads(orjson.dumps(obj.raw)) == served))

    def settled() -> bool:
        return ctrl.reflector is not None and all(
            (ctrl.reflector.store.get("default", name) or {}).get("data", {}).get("step") == "2"
            for name in TRICKY_OBJECTS
        )

    ctrl = controller(kube, predicates=[lambda event: True])
    assert await run_until(ctrl, reconcile, settled, timeout=10)
    assert ctrl.reflector is not None
    for name in TRICKY_OBJECTS:
        status, served = await call(kube, "GET", f"{CM}/{name}")
        assert status == 200
        served["metadata"].pop("managedFields", None)
        assert ctrl.reflector.store.get("default", name) == served, name
    assert len(adopted) == len(TRICKY_OBJECTS) and all(same for _, same in adopted), adopted


async def test_own_writes_are_not_kept_once_the_cache_holds_them(
    kube: kr8s.asyncio.Api,
) -> None:
    """Read-your-writes copies go once the watch delivered the write, even when its event
    came before the reconcile finished (issue 19: they used to pile up)."""
    for i in range(40):
        await create_cm(kube, f"c{i}")
    done: set[str] = set()

    async def reconcile(obj: Any, ctx: Context) -> None:
        async with PatchHelper(obj):
            obj.raw.setdefault("data", {})["seen"] = "yes"
        written = obj.raw["metadata"]["resourceVersion"]

        def cached() -> bool:  # the watch event of the write arrives before we return
            held = ctx.store.get(obj.namespace, obj.name) or {}
            return held.get("metadata", {}).get("resourceVersion") == written

        await eventually(cached, 5, what="the write in the cache")
        done.add(obj.name)

    ctrl = controller(kube, predicates=[generation_changed], concurrency=4)
    task = asyncio.create_task(ctrl.run(reconcile))
    try:
        assert await ctrl.wait_reconciled(lambda: len(done) == 40, 10)

        def cached_all() -> bool:
            assert ctrl.reflector is not None
            return all(
                (ctrl.reflector.store.get("default", f"c{i}") or {}).get("data") == {"seen": "yes"}
                for i in range(40)
            )

        await eventually(cached_all, 10, what="the cache holding every write")
        await eventually(lambda: not ctrl._written, 5, what="no own-write copies left")
    finally:
        await ctrl.shutdown(5)
        await task
