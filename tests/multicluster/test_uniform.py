"""Uniform reconcilers on a fleet of embedded servers: one reconcile function, every
engaged cluster, ``ctx.cluster`` naming the cluster it acts on."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from kr8s.asyncio.objects import ConfigMap

from reconcile_kit import Context, Controller, Manager, PatchHelper
from reconcile_kit.multicluster import MultiClusterManager
from reconcile_kit.testing import APIServer, eventually
from reconcile_kit.testing.multicluster import EmbeddedFleet

from ..kubehttp import call

CM = "/api/v1/namespaces/default/configmaps"


async def label_with_cluster(cm: Any, ctx: Context) -> None:
    """The uniform reconcile: the same function single- or multi-cluster."""
    async with PatchHelper(cm):
        cm.raw["metadata"].setdefault("labels", {})["cluster"] = ctx.cluster or "single"


async def labelled(api: Any, name: str, value: str) -> bool:
    _, got = await call(api, "GET", f"{CM}/{name}")
    return bool((got["metadata"].get("labels") or {}).get("cluster") == value)


async def test_one_reconcile_runs_in_every_cluster_with_ctx_cluster(
    clusters: EmbeddedFleet, apiserver: APIServer, caplog: Any
) -> None:
    await clusters.start(3)
    for name in clusters.servers:
        await call(await clusters.api(name), "POST", CM, {"metadata": {"name": "a"}})
    management = await apiserver.api()
    mcm = MultiClusterManager(
        clusters.provider(), Manager(management, namespace="default", handle_signals=False)
    )
    mcm.add(Controller(ConfigMap), label_with_cluster)
    caplog.set_level(logging.ERROR, logger="reconcile_kit")
    task = asyncio.create_task(mcm.run())
    try:
        for name in clusters.servers:
            api = await clusters.api(name)
            await eventually(lambda api=api, name=name: labelled(api, "a", name), 10)
        assert sorted(mcm.clusters) == sorted(clusters.servers)
        assert all(len(mcm.controllers_of(name)) == 1 for name in clusters.servers)
    finally:
        mcm.stop()
        await asyncio.wait_for(task, 10)
    assert not mcm.clusters and not mcm.engaged()
