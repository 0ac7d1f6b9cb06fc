"""ClusterRole aggregation on the embedded API server (kube-controller-manager's
clusterrole-aggregation controller; the conformance suite's control plane has none:
tests/conformance/test_rbac_escalation.py)."""

from __future__ import annotations

from typing import Any

import kr8s

from reconcile_kit.testing import APIServer

from ..kubehttp import call

ROLES = "/apis/rbac.authorization.k8s.io/v1/clusterroles"
MERGE = "application/merge-patch+json"
CM_GET = {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}
SECRETS_LIST = {"apiGroups": [""], "resources": ["secrets"], "verbs": ["list"]}


def cluster_role(name: str, rules: list[Any], **labels: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": labels}, "rules": rules}


async def rules_of(kube: kr8s.asyncio.Api, name: str) -> Any:
    status, body = await call(kube, "GET", f"{ROLES}/{name}")
    assert status == 200, body
    return body["rules"]


async def test_aggregated_rules_follow_the_selected_roles(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    await call(kube, "POST", ROLES, cluster_role("b", [SECRETS_LIST, CM_GET], team="x"))
    await call(kube, "POST", ROLES, cluster_role("a", [CM_GET], team="x"))
    await call(kube, "POST", ROLES, cluster_role("c", [SECRETS_LIST], team="y"))
    aggregated = {
        "metadata": {"name": "all", "labels": {"team": "x"}},  # itself left out
        "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"team": "x"}}]},
    }
    status, created = await call(kube, "POST", ROLES, aggregated)
    assert (status, created["rules"]) == (201, None)
    await apiserver.settled()
    assert await rules_of(kube, "all") == [CM_GET, SECRETS_LIST]  # by role name, once each
    status, body = await call(kube, "GET", f"{ROLES}/all")
    managers = [(m["manager"], m["operation"]) for m in body["metadata"]["managedFields"]]
    assert ("clusterrole-aggregation-controller", "Apply") in managers

    await call(kube, "PATCH", f"{ROLES}/c", {"metadata": {"labels": {"team": "x"}}}, MERGE)
    await call(kube, "DELETE", f"{ROLES}/a")
    await apiserver.settled()
    assert await rules_of(kube, "all") == [SECRETS_LIST, CM_GET]


async def test_no_aggregation_when_turned_off() -> None:
    async with APIServer(cluster_role_aggregation=False) as server:
        kube = await server.api()
        await call(kube, "POST", ROLES, cluster_role("a", [CM_GET], team="x"))
        aggregated = {
            "metadata": {"name": "all"},
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"team": "x"}}]},
        }
        await call(kube, "POST", ROLES, aggregated)
        await server.settled()
        assert await rules_of(kube, "all") is None
        await kube._session.aclose()
