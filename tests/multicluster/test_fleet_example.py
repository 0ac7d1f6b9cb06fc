"""The FleetConfigMap example (examples/fleet_configmap.py) on ten embedded clusters: it
converges; a cluster added at run time gets its ConfigMap; a cluster removed at run time
is disengaged (no request to it afterwards, its caches gone); with one cluster's server
stopped the others converge and keep reconciling changes; the stopped cluster catches up
once its server is back."""

from __future__ import annotations

import asyncio
from typing import Any

from kr8s.asyncio import Api
from reconcile_kit.examples.fleet_configmap import FleetConfigMap, fleet_manager

from reconcile_kit import Manager
from reconcile_kit.multicluster import Kubeconfig, MultiClusterManager, StaticProvider
from reconcile_kit.testing import APIServer, eventually, install_crds
from reconcile_kit.testing.multicluster import EmbeddedFleet

from ..kubehttp import call

FCMS = "/apis/examples.reconcile-kit.io/v1/namespaces/default/fleetconfigmaps"
CM = "/api/v1/namespaces/default/configmaps"
MERGE = "application/merge-patch+json"


def labels_of(index: int) -> dict[str, str]:
    return {"env": "prod" if index % 2 == 0 else "dev"}


async def configmap_data(api: Api, name: str) -> dict[str, str] | None:
    status, got = await call(api, "GET", f"{CM}/{name}")
    return got.get("data") or {} if status == 200 else None


async def cluster_status(api: Api, name: str) -> dict[str, str]:
    """``{cluster: Synced status}`` of a FleetConfigMap, plus ``"Ready"``."""
    _, got = await call(api, "GET", f"{FCMS}/{name}")
    status = got.get("status") or {}
    result = {
        entry["name"]: next(c["status"] for c in entry["conditions"] if c["type"] == "Synced")
        for entry in status.get("clusters") or []
    }
    for condition in status.get("conditions") or []:
        if condition["type"] == "Ready":
            result["Ready"] = condition["status"]
    return result


async def test_fleet_configmap_on_ten_embedded_clusters(
    clusters: EmbeddedFleet, apiserver: APIServer
) -> None:
    await clusters.start(10)
    management = await apiserver.api()
    await install_crds(management, FleetConfigMap)
    provider = StaticProvider(
        {
            name: Kubeconfig(each.kubeconfig, labels=labels_of(i))
            for i, (name, each) in enumerate(clusters.servers.items())
        }
    )
    mcm = fleet_manager(provider, Manager(management, handle_signals=False))
    # a custom resource's body names its apiVersion and kind (kube-apiserver: 400 without)
    type_meta = {"apiVersion": "examples.reconcile-kit.io/v1", "kind": "FleetConfigMap"}
    body: dict[str, Any] = {
        **type_meta,
        "metadata": {"name": "logging"},
        "spec": {"data": {"LEVEL": "info"}},
    }
    await call(management, "POST", FCMS, body)
    prod = {**type_meta, "metadata": {"name": "prod-only"}, "spec": {"clusterSelector": "env=prod"}}
    await call(management, "POST", FCMS, prod | {"spec": prod["spec"] | {"data": {"A": "1"}}})
    apis = {name: await clusters.api(name) for name in clusters.servers}

    async def everywhere(data: dict[str, str], names: list[str], fcm: str = "logging") -> bool:
        for name in names:
            if await configmap_data(apis[name], fcm) != data:
                return False
        return True

    async def reported(fcm: str, expected: dict[str, str]) -> bool:
        return await cluster_status(management, fcm) == expected

    task = asyncio.create_task(mcm.run())
    try:
        # converges: every cluster has "logging", the prod ones "prod-only"
        names = sorted(clusters.servers)
        await eventually(lambda: everywhere({"LEVEL": "info"}, names), 30)
        prod_names = [n for i, n in enumerate(clusters.servers) if i % 2 == 0]
        await eventually(lambda: everywhere({"A": "1"}, prod_names, "prod-only"), 30)
        all_synced = dict.fromkeys(names, "True") | {"Ready": "True"}
        await eventually(lambda: reported("logging", all_synced), 30)
        for name in set(names) - set(prod_names):
            assert await configmap_data(apis[name], "prod-only") is None

        # a cluster added at run time gets its ConfigMap
        server = await clusters.add("cluster-10")
        apis["cluster-10"] = await clusters.api("cluster-10")
        provider.add("cluster-10", Kubeconfig(server.kubeconfig, labels=labels_of(10)))
        await eventually(lambda: everywhere({"LEVEL": "info"}, ["cluster-10"]), 30)
        await eventually(lambda: everywhere({"A": "1"}, ["cluster-10"], "prod-only"), 30)

        # a cluster removed at run time is disengaged: caches gone, no request afterwards
        removed = clusters.servers["cluster-3"]
        provider.remove("cluster-3")
        await eventually(lambda: "cluster-3" not in mcm.engaged(), 10)
        await eventually(lambda: removed.open_watches == 0, 10)
        served = len(removed.requests)
        remaining = [n for n in [*names, "cluster-10"] if n != "cluster-3"]
        expected = dict.fromkeys(remaining, "True") | {"Ready": "True"}
        await eventually(lambda: reported("logging", expected), 30)

        # one cluster's server stopped: the others converge and keep reconciling changes
        await clusters.stop_server("cluster-5")
        patch = {"spec": {"data": {"LEVEL": "debug"}}}
        await call(management, "PATCH", f"{FCMS}/logging", patch, MERGE)
        up = [n for n in remaining if n != "cluster-5"]
        await eventually(lambda: everywhere({"LEVEL": "debug"}, up), 30)
        expected = dict.fromkeys(up, "True") | {"cluster-5": "False", "Ready": "False"}
        await eventually(lambda: reported("logging", expected), 30)
        await call(management, "PATCH", f"{FCMS}/logging", {"spec": {"data": {"X": "2"}}}, MERGE)
        await eventually(lambda: everywhere({"LEVEL": "debug", "X": "2"}, up), 30)
        assert len(removed.requests) == served  # nothing ever went to the removed cluster

        # the stopped cluster catches up after it returns
        await clusters.restart_server("cluster-5")
        await eventually(lambda: everywhere({"LEVEL": "debug", "X": "2"}, ["cluster-5"]), 30)
        expected = dict.fromkeys(remaining, "True") | {"Ready": "True"}
        await eventually(lambda: reported("logging", expected), 30)
        assert len(removed.requests) == served
    finally:
        mcm.stop()
        await asyncio.wait_for(task, 30)
    assert isinstance(mcm, MultiClusterManager) and not mcm.engaged()
