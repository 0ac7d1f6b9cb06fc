"""The FleetConfigMap example across two clusters on each backend: on ``real`` the
session's kube-apiserver 1.32.5 (management cluster and workload cluster ``one``) and a
second ControlPlane (workload cluster ``two``); on ``embedded`` two embedded servers. The
example converges in both, follows a change, keeps reconciling ``one`` while ``two``'s
API server restarts, lets ``two`` catch up, and disengages ``two`` when it is removed.

Run on the real backend with ``pytest tests/multicluster --backend real`` (.ci/run does).
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

from kr8s.asyncio import Api
from reconcile_kit.examples.fleet_configmap import FleetConfigMap, fleet_manager

from reconcile_kit import Manager
from reconcile_kit.multicluster import Kubeconfig, StaticProvider
from reconcile_kit.testing import APIServer, eventually, install_crds
from reconcile_kit.testing.backends import Backend
from reconcile_kit.testing.controlplane import ControlPlane

from ..kubehttp import call

MERGE = "application/merge-patch+json"


async def data_of(api: Api, namespace: str, name: str) -> dict[str, str] | None:
    status, got = await call(api, "GET", f"/api/v1/namespaces/{namespace}/configmaps/{name}")
    return (got.get("data") or {}) if status == 200 else None


async def test_fleet_configmap_on_two_clusters(backend: Backend) -> None:
    ns = backend.namespace
    fcms = f"/apis/examples.reconcile-kit.io/v1/namespaces/{ns}/fleetconfigmaps"
    name = backend.unique("fleet")
    await install_crds(backend.api, FleetConfigMap)
    with tempfile.TemporaryDirectory() as tmp:
        second: APIServer | ControlPlane
        if backend.real:
            second = await ControlPlane().start()
        else:
            second = await APIServer(data_dir=Path(tmp) / "two").start()
        two: Api = await Api(kubeconfig=second.kubeconfig, bypass_factory=True)
        one = backend.api
        try:
            await call(two, "POST", "/api/v1/namespaces", {"metadata": {"name": ns}})
            provider = StaticProvider(
                {"one": Kubeconfig(backend.server.kubeconfig), "two": Kubeconfig(second.kubeconfig)}
            )
            manager = Manager(backend.api, namespace=ns, handle_signals=False)
            mcm = fleet_manager(provider, manager)
            body: dict[str, Any] = {
                "apiVersion": "examples.reconcile-kit.io/v1",
                "kind": "FleetConfigMap",
                "metadata": {"name": name},
                "spec": {"targetNamespace": ns, "data": {"LEVEL": "info"}},
            }
            status, created = await call(backend.api, "POST", fcms, body)
            assert status == 201, created.get("message")
            task = asyncio.create_task(mcm.run())
            try:

                async def holds(api: Api, data: dict[str, str]) -> bool:
                    return await data_of(api, ns, name) == data

                await eventually(lambda: holds(one, {"LEVEL": "info"}), 30)
                await eventually(lambda: holds(two, {"LEVEL": "info"}), 30)

                async def ready() -> bool:
                    _, got = await call(backend.api, "GET", f"{fcms}/{name}")
                    conditions = (got.get("status") or {}).get("conditions") or []
                    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)

                await eventually(ready, 30)

                # two's API server restarts: one follows a change meanwhile, two catches up
                if isinstance(second, ControlPlane):
                    restart = asyncio.create_task(second.restart_apiserver())  # down 3-5 s
                else:
                    await second.stop()
                    restart = asyncio.create_task(started_after(second, 2.0))
                patch = {"spec": {"data": {"LEVEL": "debug"}}}
                await call(backend.api, "PATCH", f"{fcms}/{name}", patch, MERGE)
                await eventually(lambda: holds(one, {"LEVEL": "debug"}), 30)
                await restart
                await eventually(lambda: holds(two, {"LEVEL": "debug"}), 60)
                await eventually(ready, 30)

                # two removed: disengaged, one goes on
                provider.remove("two")
                await eventually(lambda: mcm.engaged() == ["one"], 15)
                patch = {"spec": {"data": {"LEVEL": "warn"}}}
                await call(backend.api, "PATCH", f"{fcms}/{name}", patch, MERGE)
                await eventually(lambda: holds(one, {"LEVEL": "warn"}), 30)
                assert await data_of(two, ns, name) == {"LEVEL": "debug"}
                # deleting the FleetConfigMap removes the ConfigMaps of the engaged clusters
                await call(backend.api, "DELETE", f"{fcms}/{name}")
                await eventually(lambda: holds_none(one, ns, name), 30)
            finally:
                mcm.stop()
                await asyncio.wait_for(task, 30)
        finally:
            session = getattr(two, "_session", None)
            if session is not None:
                await session.aclose()
            await second.stop()


async def started_after(server: APIServer, seconds: float) -> None:
    """Start ``server`` again after ``seconds`` down (its port and objects kept)."""
    await asyncio.sleep(seconds)
    await server.start()


async def holds_none(api: Api, namespace: str, name: str) -> bool:
    return await data_of(api, namespace, name) is None
