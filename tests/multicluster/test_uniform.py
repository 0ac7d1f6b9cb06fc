"""Uniform reconcilers on a fleet of embedded servers: one reconcile function, every
engaged cluster, ``ctx.cluster`` naming the cluster it acts on."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from kr8s.asyncio.objects import ConfigMap, Secret

from reconcile_kit import Context, Controller, Manager, PatchHelper, set_controller_reference
from reconcile_kit.multicluster import MultiClusterManager, StaticProvider
from reconcile_kit.testing import APIServer, eventually
from reconcile_kit.testing.multicluster import EmbeddedFleet

from ..kubehttp import call

CM = "/api/v1/namespaces/default/configmaps"
SECRETS = "/api/v1/namespaces/default/secrets"


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


async def test_a_disengaged_cluster_leaves_ctx_clusters_at_once(
    clusters: EmbeddedFleet, apiserver: APIServer
) -> None:
    """A cluster removed from the provider is gone from ``clusters`` (every reconcile's
    ``ctx.clusters``) the moment ``engaged()`` stops naming it: a reconcile starting
    before its controllers stop must not write to it (the FleetConfigMap example wrote a
    change to a removed cluster)."""
    await clusters.start(2)
    provider = clusters.provider()
    management = await apiserver.api()
    mcm = MultiClusterManager(
        provider, Manager(management, namespace="default", handle_signals=False)
    )
    mcm.add(Controller(ConfigMap), label_with_cluster)
    task = asyncio.create_task(mcm.run())
    try:
        await eventually(lambda: len(mcm.clusters) == 2, 10)
        gone, kept = sorted(mcm.clusters)
        provider.remove(gone)
        assert mcm.engaged() == [kept]
        assert list(mcm.clusters) == [kept]
    finally:
        mcm.stop()
        await asyncio.wait_for(task, 10)


async def mirror(cm: Any, ctx: Context) -> None:
    """Mirror a ConfigMap into a Secret it owns, in the reconciled cluster."""
    secret = Secret(
        {
            "metadata": {"name": cm.name, "namespace": cm.namespace},
            "stringData": {"cluster": ctx.cluster},
        },
        api=ctx.api,
    )
    set_controller_reference(cm, secret)
    await ctx.apply(secret)


async def test_a_template_with_owned_children_is_copied_per_cluster(
    clusters: EmbeddedFleet, apiserver: APIServer
) -> None:
    await clusters.start(2)
    for name in clusters.servers:
        await call(await clusters.api(name), "POST", CM, {"metadata": {"name": "a"}})
    template = Controller(ConfigMap, namespace="default").owns(Secret)
    mcm = MultiClusterManager(clusters.provider(), Manager(await apiserver.api()))
    mcm.add(template, mirror)
    task = asyncio.create_task(mcm.run())

    async def mirrored(api: Any) -> bool:
        status, _ = await call(api, "GET", f"{SECRETS}/a")
        return status == 200

    try:
        for name in clusters.servers:
            api = await clusters.api(name)
            await eventually(lambda api=api: mirrored(api), 10)
        # the owned Secret deleted in cluster-1: its own controller's owns() watch repairs it
        api1 = await clusters.api("cluster-1")
        await call(api1, "DELETE", f"{SECRETS}/a")
        await eventually(lambda: mirrored(api1), 10)
        assert not template.running and template.info is None  # the template never runs
        copies = [mcm.controllers_of(name)[0] for name in clusters.servers]
        assert all(c.cluster == name for c, name in zip(copies, clusters.servers, strict=True))
        assert len({id(c.sources[0]) for c in copies}) == 2  # sources are not shared
    finally:
        mcm.stop()
        await asyncio.wait_for(task, 10)


def test_a_template_with_a_mapper_must_be_a_function() -> None:
    mcm = MultiClusterManager(StaticProvider())
    template = Controller(ConfigMap).watches(Secret, lambda obj: [])
    with pytest.raises(ValueError, match="give a function"):
        mcm.add(template, mirror)
    mcm.add(lambda: Controller(ConfigMap).watches(Secret, lambda obj: []), mirror)
