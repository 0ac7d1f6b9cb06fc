"""Reconcilers read the shared caches and cannot write them (issue 30): the store a
reconcile gets has reads, indexes and a wait, and no write; only the reflector's
StoreWriter changes it."""

from __future__ import annotations

from typing import Any

import kr8s
from kr8s.asyncio.objects import ConfigMap, Secret

from reconcile_kit import Context, Controller
from reconcile_kit.runtime.config import ControllerConfig
from reconcile_kit.runtime.sources import ReflectorPool
from reconcile_kit.runtime.store import Store
from reconcile_kit.testing import run_until

from ..kubehttp import call

CM = "/api/v1/namespaces/default/configmaps"
WRITES = ("put", "update", "remove", "delete", "add_indexer", "encode", "mark_synced")


async def test_a_reconcile_cannot_write_the_caches_it_reads(kube: kr8s.asyncio.Api) -> None:
    for name in ("a", "b"):
        status, _ = await call(kube, "POST", CM, {"metadata": {"name": name}})
        assert status == 201
    seen: dict[str, Any] = {}

    async def reconcile(obj: Any, ctx: Context) -> None:
        for store in (ctx.store, ctx.cache.store_for(Secret), ctx.cache.store_for()):
            assert isinstance(store, Store)
            for write in WRITES:
                assert not hasattr(store, write), write
        try:
            ctx.store.put({"metadata": {"name": "forged", "namespace": "default"}})  # type: ignore[attr-defined]
        except AttributeError as err:
            seen[obj.name] = str(err)
        await ctx.store.wait_synced(timeout=5)
        seen[obj.name + "/keys"] = ctx.store.list_keys()

    ctrl = Controller(
        ConfigMap, api=kube, namespace="default", config=ControllerConfig(pool=ReflectorPool())
    )
    ctrl.owns(Secret)
    assert await run_until(ctrl, reconcile, lambda: len(seen) == 4)
    assert "put" in seen["a"]
    assert seen["a/keys"] == [("default", "a"), ("default", "b")]  # nothing forged got in
