"""The manager over the embedded API server: shared caches, probes, metrics, events."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import httpx
import kr8s
import pytest
from kr8s.asyncio.objects import ConfigMap, Secret

from reconcile_kit import Context, Controller, Manager, set_controller_reference
from reconcile_kit.testing import APIServer, eventually

from ..conftest import assert_closed_cleanly, run_python_dev_mode
from ..kubehttp import call

CM = "/api/v1/namespaces/default/configmaps"
MERGE = "application/merge-patch+json"


async def started(mgr: Manager) -> asyncio.Task[None]:
    task = asyncio.create_task(mgr.run())

    def running_and_ready() -> bool:
        if task.done():
            task.result()  # the manager failed: raise its error
        return bool(mgr.controllers) and all(c.running for c in mgr.controllers) and mgr.ready()

    await eventually(running_and_ready, 10)
    return task


async def stopped(mgr: Manager, task: asyncio.Task[None]) -> None:
    mgr.stop()
    await asyncio.wait_for(task, 10)


async def test_controllers_share_one_watch_per_kind_and_scope(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    await call(kube, "POST", CM, {"metadata": {"name": "a"}})
    cm_runs: list[str] = []
    secret_runs: list[str] = []

    async def reconcile_cm(obj: Any, ctx: Context) -> None:
        cm_runs.append(obj.name)
        secret = await Secret(
            {"metadata": {"name": obj.name, "namespace": "default"}, "stringData": {"k": "v"}},
            api=ctx.api,
        )
        set_controller_reference(obj, secret)
        await ctx.apply(secret)

    async def reconcile_secret(obj: Any, ctx: Context) -> None:
        secret_runs.append(obj.name)

    mgr = Manager(kube, namespace="default")
    mgr.add(Controller(ConfigMap).owns(Secret), reconcile_cm)
    mgr.add(Controller(Secret), reconcile_secret)
    mgr.add(Controller("ConfigMap", name="second-cm"), reconcile_secret)
    task = await started(mgr)
    assert await mgr.controllers[1].wait_reconciled(lambda: "a" in secret_runs, 5)
    watches = apiserver.requests.filter(verb="watch")
    assert sorted(r.resource for r in watches) == ["configmaps", "secrets"]
    assert {r.namespace for r in watches} == {"default"}
    await stopped(mgr, task)


async def test_probes_and_metrics(kube: kr8s.asyncio.Api) -> None:
    runs: list[str] = []

    async def reconcile(obj: Any, ctx: Context) -> None:
        runs.append(obj.name)
        if obj.name == "bad":
            raise RuntimeError("nope")

    mgr = Manager(
        kube,
        namespace="default",
        health_port=0,
        metrics_port=0,
        host="127.0.0.1",
        metrics_secure=False,
    )
    ctrl = mgr.add(Controller(ConfigMap, retry=3600), reconcile)
    task = await started(mgr)
    health = f"http://127.0.0.1:{mgr.ports['/healthz']}"
    metrics_url = f"http://127.0.0.1:{mgr.ports['/metrics']}/metrics"
    async with aiohttp.ClientSession() as session:
        for path in ("/healthz", "/readyz"):
            async with session.get(health + path) as response:
                assert response.status == 200 and await response.text() == "ok"

        async def scrape() -> str:
            async with session.get(metrics_url) as response:
                assert response.status == 200
                return await response.text()

        before = await scrape()
        assert (
            'controller_runtime_reconcile_total{controller="configmap",result="success"}'
            not in before
        )
        await call(kube, "POST", CM, {"metadata": {"name": "good"}})
        await call(kube, "POST", CM, {"metadata": {"name": "bad"}})
        assert await ctrl.wait_reconciled(lambda: {"good", "bad"} <= set(runs), 5)
        after = await scrape()
    assert (
        'controller_runtime_reconcile_total{controller="configmap",result="success"} 1.0' in after
    )
    assert 'controller_runtime_reconcile_errors_total{controller="configmap"} 1.0' in after
    assert 'workqueue_adds_total{name="configmap"} 2.0' in after
    assert 'workqueue_retries_total{name="configmap"} 1.0' in after
    assert "controller_runtime_reconcile_time_seconds_count" in after
    assert 'controller_runtime_active_workers{controller="configmap"} 0.0' in after
    assert 'rest_client_requests_total{code="200",method="GET"}' in after
    assert "workqueue_queue_duration_seconds_bucket" in after
    await stopped(mgr, task)


async def status_of(session: aiohttp.ClientSession, url: str) -> tuple[int, str]:
    async with session.get(url) as response:
        return response.status, await response.text()


async def test_not_ready_until_every_controller_started_and_synced(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    await call(kube, "POST", CM, {"metadata": {"name": "a"}})
    in_hook, release_hook, reconciled = asyncio.Event(), asyncio.Event(), asyncio.Event()

    async def reconcile(obj: Any, ctx: Context) -> None:
        reconciled.set()

    mgr = Manager(kube, namespace="default", health_port=0, host="127.0.0.1")
    ctrl = mgr.add(Controller(ConfigMap), reconcile)

    @mgr.on_start
    async def hook(api: Any) -> None:
        in_hook.set()
        await release_hook.wait()

    assert not mgr.ready()  # not running
    task = asyncio.create_task(mgr.run())
    async with aiohttp.ClientSession() as session:
        await asyncio.wait_for(in_hook.wait(), 10)
        # the probes answer while on_start hooks run: alive, not ready
        assert not mgr.ready()
        base = f"http://127.0.0.1:{mgr.ports['/readyz']}"
        assert await status_of(session, f"{base}/healthz") == (200, "ok")
        assert await status_of(session, f"{base}/readyz") == (500, "not ready: starting")

        # the controller starts, but its cache cannot sync while LISTs fail
        apiserver.faults.fail(500, verb="list", resource="configmaps", times=None)
        release_hook.set()
        await eventually(
            lambda: apiserver.requests.count(verb="list", resource="configmaps") > 0, 10
        )
        assert ctrl.running and not ctrl.synced
        assert not mgr.ready()
        code, text = await status_of(session, f"{base}/readyz")
        assert code == 500 and "configmap: caches not synced" in text

        apiserver.faults.clear()
        await asyncio.wait_for(reconciled.wait(), 10)  # workers start once caches synced
        assert ctrl.synced and mgr.ready()
        assert await status_of(session, f"{base}/readyz") == (200, "ok")
        mgr.stop()
        assert not mgr.ready()  # stopping
        await asyncio.wait_for(task, 10)
    assert not mgr.ready() and not ctrl.synced


async def test_stop_before_run_returns_at_once(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    async def reconcile(obj: Any, ctx: Context) -> None:
        return None

    mgr = Manager(kube, namespace="default", health_port=0, host="127.0.0.1")
    mgr.add(Controller(ConfigMap), reconcile)
    served = len(apiserver.requests)  # the kube fixture's version check
    mgr.stop()
    mgr.stop()  # idempotent
    await asyncio.wait_for(mgr.run(), 5)
    assert len(apiserver.requests) == served and mgr.ports == {}  # nothing started

    # stop() right after the run task is created, before run() ran at all
    task = asyncio.create_task(mgr.run())
    mgr.stop()
    await asyncio.wait_for(task, 5)
    assert len(apiserver.requests) == served

    # a stop counts for one run: the next one runs until stopped
    task = await started(mgr)
    await stopped(mgr, task)


async def test_stop_during_on_start_hooks_cancels_them_and_starts_nothing(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    in_hook, cancelled = asyncio.Event(), asyncio.Event()
    later_hooks: list[str] = []

    async def reconcile(obj: Any, ctx: Context) -> None:
        return None

    mgr = Manager(kube, namespace="default", health_port=0, host="127.0.0.1")
    ctrl = mgr.add(Controller(ConfigMap), reconcile)

    @mgr.on_start
    async def install_something(api: Any) -> None:
        in_hook.set()
        try:
            await asyncio.Event().wait()  # e.g. waiting for a CRD to be established
        except asyncio.CancelledError:
            cancelled.set()
            raise

    @mgr.on_start
    async def later(api: Any) -> None:
        later_hooks.append("ran")

    task = asyncio.create_task(mgr.run())
    await asyncio.wait_for(in_hook.wait(), 10)
    port = mgr.ports["/healthz"]
    mgr.stop()
    await asyncio.wait_for(task, 5)
    assert cancelled.is_set() and later_hooks == []
    assert not ctrl.running and ctrl.reflector is None
    assert apiserver.requests.count(verb="list") == apiserver.requests.count(verb="watch") == 0
    assert mgr.recorder is None
    async with aiohttp.ClientSession() as session:  # the probe server is closed too
        try:
            await status_of(session, f"http://127.0.0.1:{port}/healthz")
        except aiohttp.ClientConnectionError:
            pass
        else:
            raise AssertionError("the probe server still answers")


async def test_a_failing_on_start_hook_fails_run_and_closes_everything(
    kube: kr8s.asyncio.Api,
) -> None:
    async def reconcile(obj: Any, ctx: Context) -> None:
        return None

    mgr = Manager(kube, health_port=0, host="127.0.0.1")
    mgr.add(Controller(ConfigMap), reconcile)

    @mgr.on_start
    async def broken(api: Any) -> None:
        raise RuntimeError("cannot install the CRD")

    try:
        await asyncio.wait_for(mgr.run(), 5)
    except RuntimeError as error:
        assert str(error) == "cannot install the CRD"
    else:
        raise AssertionError("run should raise the hook's error")
    # a fresh run is possible (nothing left running)
    mgr._start_hooks.clear()
    task = await started(mgr)
    await stopped(mgr, task)


async def test_a_plain_def_on_start_hook_or_background_task_names_async_def(
    kube: kr8s.asyncio.Api, caplog: pytest.LogCaptureFixture
) -> None:
    """A ``def`` on_start hook failed run with Python's ``object NoneType can't be used in
    'await' expression``, a ``def`` background task was logged so: each names the manager
    or controller and the function, and asks for ``async def``."""

    async def reconcile(obj: Any, ctx: Context) -> None:
        return None

    ran: list[str] = []

    def watcher(controller: Controller) -> None:
        ran.append(controller.name)

    mgr = Manager(kube, name="plain", health_port=0, host="127.0.0.1")
    mgr.add(Controller(ConfigMap).background(watcher), reconcile)  # type: ignore[arg-type]

    @mgr.on_start  # type: ignore[arg-type]
    def install(api: Any) -> None:
        return None

    with pytest.raises(TypeError) as caught:
        await asyncio.wait_for(mgr.run(), 5)
    assert str(caught.value) == (
        "manager plain: on_start hook test_a_plain_def_on_start_hook_or_background_task_names"
        "_async_def.<locals>.install returned None (NoneType), not an awaitable: define it"
        " with async def (a plain def's return value cannot be awaited)"
    )
    mgr._start_hooks.clear()
    task = await started(mgr)
    await eventually(lambda: "background task" in caplog.text, 5, what="the task's error")
    await stopped(mgr, task)
    assert ran == ["configmap"]
    assert "watcher returned None (NoneType), not an awaitable: define it with async def" in (
        caplog.text
    )


MANAGER = """
    import asyncio
    import gc
    import os

    import aiohttp
    from kr8s.asyncio.objects import ConfigMap

    from reconcile_kit import Controller, Manager
    from reconcile_kit.testing import APIServer


    async def main() -> None:
        async with APIServer() as server, aiohttp.ClientSession() as http:
            cms = f"{server.url}/api/v1/namespaces/default/configmaps"
            async with http.post(cms, json={"metadata": {"name": "a"}}) as response:
                assert response.status == 201
            os.environ["KUBECONFIG"] = server.kubeconfig
            seen = []

            async def reconcile(obj, ctx):
                ctx.recorder.event(obj, "Normal", "Seen", "seen by a manager")
                seen.append(obj.name)

            manager = Manager(namespace="default", health_port=0, host="127.0.0.1")
            ctrl = manager.add(Controller(ConfigMap), reconcile)
            task = asyncio.create_task(manager.run())
            assert await ctrl.wait_reconciled(lambda: seen == ["a"], 30)
            readyz = f"http://127.0.0.1:{manager.ports['/readyz']}/readyz"
            async with http.get(readyz) as response:
                assert response.status == 200
            manager.stop()
            await asyncio.wait_for(task, 30)
        print("done")


    asyncio.run(main())
    gc.collect()  # what was left open warns now, not unnoticed at interpreter exit
"""


async def test_a_manager_closes_what_it_opened() -> None:
    """Its own api (kr8s discovery), the aiohttp connections, the probe server."""
    code, out, err = await run_python_dev_mode(MANAGER)
    assert_closed_cleanly(code, out, err)
    assert out.strip() == "done"


async def test_repeated_events_aggregate_into_one_object(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    await call(kube, "POST", CM, {"metadata": {"name": "a"}})
    runs: list[int] = []

    async def reconcile(obj: Any, ctx: Context) -> None:
        for _ in range(20):
            ctx.recorder.event(obj, "Warning", "Flapping", "the same thing again")
        runs.append(1)

    mgr = Manager(kube, namespace="default")
    ctrl = mgr.add(Controller(ConfigMap), reconcile)
    task = await started(mgr)
    assert await ctrl.wait_reconciled(lambda: bool(runs), 5)
    assert mgr.recorder is not None
    await mgr.recorder.flush()
    _, events = await call(kube, "GET", "/apis/events.k8s.io/v1/namespaces/default/events")
    flapping = [e for e in events["items"] if e["reason"] == "Flapping"]
    assert len(flapping) == 1
    assert flapping[0]["series"]["count"] == 20
    assert flapping[0]["regarding"]["name"] == "a"
    await stopped(mgr, task)


async def test_a_controller_that_cannot_start_fails_the_manager(kube: kr8s.asyncio.Api) -> None:
    async def reconcile(obj: Any, ctx: Context) -> None:
        return None

    mgr = Manager(kube)
    mgr.add(Controller("NoSuchKind"), reconcile)
    try:
        await asyncio.wait_for(mgr.run(), 5)
    except RuntimeError as error:
        assert "controller nosuchkind failed" in str(error)
        assert "'NoSuchKind' is not served" in str(error.__cause__)
    else:
        raise AssertionError("the manager should fail")


async def test_the_managers_transport_choice_holds_for_its_controllers(
    kube: kr8s.asyncio.Api,
) -> None:
    """Controllers default to aiohttp; under Manager(transport="httpx") the shared client
    keeps httpx's own transport."""
    await call(kube, "POST", CM, {"metadata": {"name": "a"}})
    runs: list[str] = []

    async def reconcile(obj: Any, ctx: Context) -> None:
        runs.append(obj.name)

    mgr = Manager(kube, namespace="default", transport="httpx")
    mgr.add(Controller(ConfigMap), reconcile)
    task = await started(mgr)
    assert await mgr.controllers[0].wait_reconciled(lambda: runs == ["a"], 5)
    assert kube._session is not None
    assert isinstance(kube._session._transport, httpx.AsyncHTTPTransport)
    await stopped(mgr, task)


async def test_secure_metrics_need_a_port_of_their_own(kube: kr8s.asyncio.Api) -> None:
    """The probes stay plain HTTP: secure metrics on the health port are refused at run."""
    mgr = Manager(kube, health_port=18081, metrics_port=18081, handle_signals=False)
    with pytest.raises(ValueError, match="secure metrics \\(HTTPS\\) need a port of their own"):
        await asyncio.wait_for(mgr.run(), 30)


async def test_a_kind_not_served_does_not_keep_a_controller_or_its_manager_running(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    """A controller of a kind the server does not serve (a CRD not installed) waits for
    its cache forever; shutdown() and Manager.stop() still end it (the wait for the cache
    sync gives way to the stop)."""
    from kr8s.asyncio.objects import new_class

    missing = new_class("Gizmo", "missing.example.com/v1", namespaced=True)

    async def reconcile(obj: Any, ctx: Context) -> None:
        raise AssertionError("nothing of a kind not served is reconciled")

    alone = Controller(missing, api=kube, namespace="default")
    task = asyncio.create_task(alone.run(reconcile))
    await eventually(lambda: apiserver.requests.count(resource="gizmos") > 0, 10)
    await asyncio.wait_for(alone.shutdown(), 5)
    await asyncio.wait_for(task, 5)

    mgr = Manager(kube, handle_signals=False)
    mgr.add(Controller(missing, namespace="default"), reconcile, needs_leader=False)
    running = asyncio.create_task(mgr.run())
    before = apiserver.requests.count(resource="gizmos")
    await eventually(lambda: apiserver.requests.count(resource="gizmos") > before, 10)
    mgr.stop()
    await asyncio.wait_for(running, 10)
