"""A controller at scale shares the event loop: the initial LIST is stored in chunks and
workers yield between reconciles that never suspend (no-ops), so watches, probes and
lease renewals keep running (issue 19: 100,000 objects held the loop for seconds)."""

from __future__ import annotations

import asyncio
import gc
from typing import Any

import kr8s.asyncio
from kr8s.asyncio.objects import ConfigMap

from reconcile_kit import Context, Controller
from reconcile_kit.runtime import reflector as reflector_module
from reconcile_kit.runtime.config import ControllerConfig
from reconcile_kit.runtime.reflector import REPLACE_CHUNK, Reflector
from reconcile_kit.runtime.resources import info_from_class
from reconcile_kit.runtime.sources import ReflectorPool

from ..kubehttp import call

CM = "/api/v1/namespaces/default/configmaps"
OBJECTS = 3 * REPLACE_CHUNK


async def create(kube: kr8s.asyncio.Api, count: int) -> None:
    pending = list(range(count))

    async def worker() -> None:
        while pending:
            name = f"cm-{pending.pop():04d}"
            status, body = await call(kube, "POST", CM, {"metadata": {"name": name}})
            assert status == 201, body

    await asyncio.gather(*(worker() for _ in range(8)))


class Observer:
    """A task that runs whenever the loop lets it and records what ``probe()`` says."""

    def __init__(self, probe: Any) -> None:
        self.probe = probe
        self.seen: list[int] = []
        self.task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        while True:
            self.seen.append(self.probe())
            await asyncio.sleep(0)

    async def stop(self) -> None:
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)


async def test_the_initial_list_is_stored_in_chunks(kube: kr8s.asyncio.Api) -> None:
    await create(kube, OBJECTS)
    reflector = Reflector(kube, info_from_class(ConfigMap), namespace="default")
    observer = Observer(lambda: len(reflector.store.list_keys()))
    reflector.start()
    try:
        await asyncio.wait_for(reflector.wait_synced(), 30)
    finally:
        await observer.stop()
        await reflector.stop()
    partial = {n for n in observer.seen if 0 < n < OBJECTS}
    assert len(partial) >= 2  # the loop ran between chunks


async def test_workers_yield_between_reconciles_that_never_suspend(
    kube: kr8s.asyncio.Api,
) -> None:
    await create(kube, OBJECTS)
    reconciled: set[str] = set()

    async def noop(obj: Any, ctx: Context) -> None:
        reconciled.add(obj.name)  # nothing to do, nothing awaited

    ctrl = Controller(
        ConfigMap, api=kube, namespace="default", config=ControllerConfig(pool=ReflectorPool())
    )
    observer = Observer(lambda: len(reconciled))
    task = asyncio.create_task(ctrl.run(noop))
    try:
        assert await ctrl.wait_reconciled(lambda: len(reconciled) >= OBJECTS, 30)
    finally:
        await observer.stop()
        await ctrl.shutdown(5)
        await task
    partial = {n for n in observer.seen if 0 < n < OBJECTS}
    assert len(partial) >= 2  # other tasks ran while the queue was worked through


async def test_the_synced_heap_is_frozen_out_of_full_collections(
    kube: kr8s.asyncio.Api, monkeypatch: Any
) -> None:
    """Issue 31: a generation-2 collection walked every object the process held, queued
    keys included (110-140 ms at 100,000 objects); the reflector freezes the heap while it
    stores a LIST and once stored, so later full collections walk only what is new."""
    await create(kube, OBJECTS)
    counts: dict[str, int] = {}
    for mode in ("off", "synced", "chunk"):
        monkeypatch.setattr(reflector_module, "GC_FREEZE", mode)
        gc.unfreeze()
        reflector = Reflector(kube, info_from_class(ConfigMap), namespace="default")
        frozen: list[int] = []
        observer = Observer(gc.get_freeze_count)
        reflector.start()
        try:
            await asyncio.wait_for(reflector.wait_synced(), 30)
            frozen.append(gc.get_freeze_count())
        finally:
            await observer.stop()
            await reflector.stop()
            gc.unfreeze()
        counts[mode] = frozen[0]
        if mode == "chunk":  # frozen before the LIST was stored in full, too (a count
            # other than the final one: smaller, or larger while a decoded page was held)
            assert any(0 < n != frozen[0] for n in observer.seen), observer.seen[-5:]
    assert counts["off"] == 0
    assert counts["synced"] > 0 and counts["chunk"] > 0


async def test_a_worker_yields_only_after_a_turn_it_was_never_suspended_in() -> None:
    """A worker's turn (controller._Turn): over after WORKER_TURN seconds in which the loop
    ran nothing else; a turn in which the worker awaited something (a request) starts over
    without a sleep(0) of its own."""
    from reconcile_kit.runtime.controller import WORKER_TURN, _Turn

    loop = asyncio.get_running_loop()
    turn = _Turn(loop)
    started = loop.time()
    while loop.time() - started <= WORKER_TURN:  # back-to-back work, never suspended
        pass
    assert turn.over() and turn.over()  # over until it yields
    await asyncio.sleep(0)
    turn.start()
    await asyncio.sleep(WORKER_TURN * 2)  # suspended, as on a request
    assert not turn.over()  # the turn starts over: no sleep(0) needed
