"""ClusterRole aggregation, as kube-controller-manager's clusterrole-aggregation controller
does it (k8s.io/kubernetes pkg/controller/clusterroleaggregation): the rules of a ClusterRole
with an ``aggregationRule`` become those of the ClusterRoles its ``clusterRoleSelectors``
select (for each selector in order, the selected ClusterRoles by name, itself left out, each
rule once), written by server-side apply as ``clusterrole-aggregation-controller`` when they
differ.
"""

from __future__ import annotations

from typing import Any

import orjson

from ...client.contenttypes import APPLY_PATCH
from ...meta.selectors import SelectorError, label_selector_from_dict
from .cluster import Cluster, WriteOptions
from .rbac import RBAC_GROUP

CLUSTER_ROLES_KEY = f"{RBAC_GROUP}/clusterroles"
FIELD_MANAGER = "clusterrole-aggregation-controller"
Rule = dict[str, Any]


def aggregate(cluster: Cluster) -> None:
    """Bring every aggregated ClusterRole's rules up to date."""
    roles = cluster.store.items(CLUSTER_ROLES_KEY)
    for role in roles:
        aggregation = role.get("aggregationRule")
        if aggregation is None:
            continue
        name = role["metadata"]["name"]
        try:
            rules = aggregated_rules(name, aggregation.get("clusterRoleSelectors") or [], roles)
        except SelectorError:
            continue  # validation refuses such selectors
        if [_semantic(r) for r in rules] != [_semantic(r) for r in role.get("rules") or []]:
            _apply(cluster, name, rules)


def aggregated_rules(name: str, selectors: list[Any], roles: list[Any]) -> list[Rule]:
    """The rules the ClusterRole ``name`` aggregates from ``roles`` (sorted by name)."""
    rules: list[Rule] = []
    seen: list[Any] = []
    for selector in selectors:
        chosen = label_selector_from_dict(selector or {})
        for role in sorted(roles, key=lambda r: r["metadata"]["name"]):
            labels = role["metadata"].get("labels") or {}
            if role["metadata"]["name"] == name or not chosen.matches(labels):
                continue
            for rule in role.get("rules") or []:
                if _semantic(rule) not in seen:
                    seen.append(_semantic(rule))
                    rules.append(rule)
    return rules


def _semantic(rule: Rule) -> Rule:
    """A rule for comparison: empty and missing lists are equal (Go's semantic equality)."""
    return {key: value for key, value in rule.items() if value}


def _apply(cluster: Cluster, name: str, rules: list[Rule]) -> None:
    rt = cluster.registry.storage_type(CLUSTER_ROLES_KEY)
    assert rt is not None
    body = {
        "apiVersion": rt.api_version,
        "kind": "ClusterRole",
        "metadata": {"name": name},
        "rules": rules,
    }
    options = WriteOptions(field_manager=FIELD_MANAGER, force=True)
    cluster.patch(rt, None, name, APPLY_PATCH, orjson.loads(orjson.dumps(body)), options)
