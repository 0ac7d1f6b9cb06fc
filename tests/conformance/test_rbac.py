"""`reconcile-kit rbac --namespace --leader-elect` output: accepted as it is by both servers."""

from __future__ import annotations

import yaml
from kr8s.asyncio.objects import ConfigMap, Namespace

from reconcile_kit import Controller, LeaderElection, Manager
from reconcile_kit.cli.rbac import render
from reconcile_kit.testing.backends import Backend

from .kube import ok, req

BASE = "/apis/rbac.authorization.k8s.io/v1"


async def test_rbac_output_is_accepted(backend: Backend) -> None:
    async def noop(obj: object, ctx: object) -> None:
        return None

    name = f"rk-{backend.namespace}"  # unique: the ClusterRole is cluster-scoped
    manager = Manager(
        name=name,
        namespace=backend.namespace,
        leader_election=LeaderElection("lock", namespace=backend.namespace),
    )
    manager.add(Controller(ConfigMap).owns(ConfigMap), noop)
    manager.add(Controller(Namespace), noop)
    docs = list(yaml.safe_load_all(render(manager)))
    assert [d["kind"] for d in docs] == [
        "Role",
        "RoleBinding",
        "ClusterRole",
        "ClusterRoleBinding",
        "Role",
        "RoleBinding",
        "ClusterRoleBinding",  # secure metrics: <name>-auth-delegator
        "ClusterRole",  # and <name>-metrics-reader
    ]
    try:
        for doc in docs:
            plural = doc["kind"].lower() + "s"
            ns = doc["metadata"].get("namespace")
            path = f"{BASE}/namespaces/{ns}/{plural}" if ns else f"{BASE}/{plural}"
            created = await req(backend, "POST", path, doc)
            assert created.status == 201, created.body
            stored = await ok(backend, "GET", f"{path}/{doc['metadata']['name']}")
            for field in ("rules", "roleRef", "subjects"):
                assert stored.get(field) == doc.get(field)
    finally:
        for plural in ("clusterroles", "clusterrolebindings"):
            await req(backend, "DELETE", f"{BASE}/{plural}/{name}")
        await req(backend, "DELETE", f"{BASE}/clusterrolebindings/{name}-auth-delegator")
        await req(backend, "DELETE", f"{BASE}/clusterroles/{name}-metrics-reader")
