"""FleetConfigMap: a custom resource in the management cluster that keeps a ConfigMap in
line in every selected workload cluster, and reports per-cluster conditions (issue 32)::

    apiVersion: examples.reconcile-kit.io/v1
    kind: FleetConfigMap
    metadata: {name: logging, namespace: default}
    spec:
      clusterSelector: "env=prod"        # a label selector over the clusters' labels
      data: {LOG_LEVEL: info}

becomes a ConfigMap ``logging`` in namespace ``default`` (``spec.targetNamespace``) of
every engaged cluster whose labels match, and ``status.clusters`` lists each selected
cluster with a ``Synced`` condition; ``Ready`` says whether every one is synced.

Design (a *multi-cluster aware* reconciler, sigs.k8s.io/multicluster-runtime's second
pattern):

- **Where things live.** The FleetConfigMap is the management cluster's (a controller of
  the :class:`~reconcile_kit.multicluster.MultiClusterManager`'s manager, added with
  ``add_aware``); the ConfigMaps are the workload clusters' (``ctx.clusters[name]``: its
  api, its cache, ``apply``). Owner references cannot cross clusters, so each child is
  labelled with its owner (``examples.reconcile-kit.io/fleet-configmap``: name,
  ``examples.reconcile-kit.io/fleet-namespace``: namespace) and the watch of ConfigMaps
  in the clusters (``watches_in_clusters``, selected by that label) maps a changed or
  deleted child back to its owner: drift is repaired.
- **The fleet changes.** Every FleetConfigMap is reconciled again when a cluster is
  engaged (it gets its ConfigMap) or disengaged (it leaves the status).
- **Isolation.** The clusters are written concurrently, each within
  :data:`CLUSTER_TIMEOUT` seconds: a cluster that does not answer gets ``Synced=False``
  (reason ``Unreachable``) and a requeue, without delaying the others. Server-side apply
  with the cluster's cache means an unchanged ConfigMap costs no request.
- **Deletion.** A finalizer removes the ConfigMaps from the engaged clusters before the
  FleetConfigMap goes; a cluster no longer selected has its ConfigMap deleted.

The CRD is generated from the model (``reconcile-kit crd examples/fleet_configmap.py``,
checked in as ``fleetconfigmap-crd.yaml``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

from kr8s.asyncio.objects import ConfigMap
from pydantic import Field

from reconcile_kit import (
    Action,
    Context,
    Controller,
    Manager,
    ObjectRef,
    PatchHelper,
    Reasons,
    add_finalizer,
    remove_finalizer,
)
from reconcile_kit.meta.selectors import LabelSelector
from reconcile_kit.multicluster import MultiClusterManager, Provider, SecretProvider
from reconcile_kit.runtime.clusters import ClusterHandle
from reconcile_kit.typed import Condition, CustomResource, KubeModel, ListType, PrinterColumn
from reconcile_kit.typed.conditions import mark_not_ready, mark_ready

GROUP = "examples.reconcile-kit.io"
CRD_PATH = Path(__file__).resolve().parent / "fleetconfigmap-crd.yaml"
OWNER_LABEL = f"{GROUP}/fleet-configmap"
OWNER_NAMESPACE_LABEL = f"{GROUP}/fleet-namespace"
FINALIZER = f"{GROUP}/fleet-configmap"
FIELD_MANAGER = "fleetconfigmap"
CLUSTER_TIMEOUT = 5.0
"""Seconds one cluster's write may take before it counts as unreachable this round."""
RETRY_UNSYNCED = 5.0
"""Seconds until a FleetConfigMap with an unsynced cluster looks again."""


class FleetConfigMapSpec(KubeModel):
    """Which clusters get the ConfigMap, and what it holds."""

    cluster_selector: str = Field(
        default="", description="A label selector over the clusters' labels ('' selects all)."
    )
    target_namespace: str = Field(
        default="default", description="The ConfigMap's namespace in the workload clusters."
    )
    data: dict[str, str] = Field(default_factory=dict, description="The ConfigMap's data.")


class ClusterStatus(KubeModel):
    """One selected cluster: whether its ConfigMap is in line."""

    name: str
    conditions: Annotated[list[Condition], ListType.map("type")] = Field(default_factory=list)


class FleetConfigMapStatus(KubeModel):
    """Per-cluster conditions and the summary, written by the controller."""

    observed_generation: Annotated[int, Field(ge=0)] | None = None
    clusters: Annotated[list[ClusterStatus], ListType.map("name")] = Field(default_factory=list)
    conditions: Annotated[list[Condition], ListType.map("type")] = Field(default_factory=list)


class FleetConfigMap(
    CustomResource,
    group=GROUP,
    version="v1",
    kind="FleetConfigMap",
    short_names=["fcm"],
    categories=["examples"],
    printer_columns=[
        PrinterColumn("Selector", ".spec.clusterSelector"),
        PrinterColumn("Ready", '.status.conditions[?(@.type=="Ready")].status'),
        PrinterColumn("Age", ".metadata.creationTimestamp", "date"),
    ],
):
    """Keeps a ConfigMap in line in every selected workload cluster."""

    spec: FleetConfigMapSpec = Field(default_factory=FleetConfigMapSpec)
    status: FleetConfigMapStatus | None = None


def desired_configmap(fleet_cm: FleetConfigMap) -> dict[str, Any]:
    """The ConfigMap a FleetConfigMap asks for in each selected cluster."""
    meta = fleet_cm.metadata
    configmap: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": meta.name,
            "namespace": fleet_cm.spec.target_namespace,
            "labels": {OWNER_LABEL: meta.name, OWNER_NAMESPACE_LABEL: meta.namespace},
        },
    }
    if fleet_cm.spec.data:
        configmap["data"] = dict(fleet_cm.spec.data)
    return configmap


def owner_of(cluster: str, configmap: Mapping[str, Any]) -> Iterable[ObjectRef]:
    """The FleetConfigMap a ConfigMap in a workload cluster belongs to (its labels)."""
    labels = configmap.get("metadata", {}).get("labels") or {}
    if OWNER_LABEL in labels and OWNER_NAMESPACE_LABEL in labels:
        yield ObjectRef(
            f"FleetConfigMap.{GROUP}", labels[OWNER_NAMESPACE_LABEL], labels[OWNER_LABEL]
        )


async def _write(cluster: ClusterHandle, configmap: dict[str, Any]) -> tuple[str, str, str]:
    """Apply ``configmap`` in ``cluster``: ``(status, reason, message)`` of its Synced."""
    try:
        await asyncio.wait_for(
            cluster.apply(dict(configmap), field_manager=FIELD_MANAGER), CLUSTER_TIMEOUT
        )
    except TimeoutError:
        return "False", "Unreachable", f"no answer within {CLUSTER_TIMEOUT} s"
    except Exception as error:
        return "False", "ApplyFailed", f"{type(error).__name__}: {error}"
    return "True", "Applied", "the ConfigMap is in line"


async def _delete(cluster: ClusterHandle, namespace: str, name: str) -> bool:
    """Delete our ConfigMap from ``cluster`` if its cache holds it; True when gone."""
    cached = cluster.store_for("ConfigMap").get(namespace, name)
    if cached is None or OWNER_LABEL not in (cached["metadata"].get("labels") or {}):
        return True
    try:
        configmap = ConfigMap(dict(cached), api=cluster.api)
        await asyncio.wait_for(configmap.delete(), CLUSTER_TIMEOUT)
    except Exception:
        return False
    return True


def _set(conditions: list[Condition], status: str, reason: str, message: str) -> None:
    """Set the ``Synced`` condition, keeping its transition time while its status holds."""
    now = datetime.now(UTC).replace(microsecond=0)
    for condition in conditions:
        if condition.type == "Synced":
            if condition.status != status:
                condition.last_transition_time = now
            condition.status = status  # type: ignore[assignment]  # "True"/"False"
            condition.reason, condition.message = reason, message
            return
    conditions.append(
        Condition(
            type="Synced",
            status=status,  # type: ignore[arg-type]  # "True"/"False"
            reason=reason,
            message=message,
            last_transition_time=now,
        )
    )


async def reconcile(fleet_cm: FleetConfigMap, ctx: Context) -> Action | None:
    """Apply the ConfigMap in every selected engaged cluster; report each in the status."""
    meta = fleet_cm.metadata
    namespace = fleet_cm.spec.target_namespace
    selector = LabelSelector.parse(fleet_cm.spec.cluster_selector)
    selected = {n: c for n, c in ctx.clusters.items() if selector.matches(c.labels)}
    async with PatchHelper(fleet_cm, observed_generation=True, owned_conditions=("Ready",)):
        if meta.deletion_timestamp is not None:
            gone = await asyncio.gather(
                *(_delete(c, namespace, meta.name) for c in ctx.clusters.values())
            )
            if all(gone):
                remove_finalizer(fleet_cm, FINALIZER)
                return None
            return Action.requeue(RETRY_UNSYNCED)
        add_finalizer(fleet_cm, FINALIZER)
        others = [c for n, c in ctx.clusters.items() if n not in selected]
        configmap = desired_configmap(fleet_cm)
        names = sorted(selected)
        results, _ = await asyncio.gather(
            asyncio.gather(*(_write(selected[n], configmap) for n in names)),
            asyncio.gather(*(_delete(c, namespace, meta.name) for c in others)),
        )
        status = fleet_cm.status = fleet_cm.status or FleetConfigMapStatus()
        previous = {entry.name: entry for entry in status.clusters}
        status.clusters = []
        for name, (synced, reason, message) in zip(names, results, strict=True):
            known = previous.get(name)
            conditions = list(known.conditions) if known is not None else []
            _set(conditions, synced, reason, message)
            status.clusters.append(ClusterStatus(name=name, conditions=conditions))
        unsynced = [n for n, r in zip(names, results, strict=True) if r[0] != "True"]
        if unsynced:
            message = f"not synced in {len(unsynced)} of {len(names)}: {', '.join(unsynced)}"
            mark_not_ready(fleet_cm, "ClustersNotSynced", message)
        else:
            mark_ready(fleet_cm, Reasons.RECONCILED, f"in line in {len(names)} cluster(s)")
    ctx.log.info("in line in %d of %d selected clusters", len(names) - len(unsynced), len(names))
    return Action.requeue(RETRY_UNSYNCED) if unsynced else None


def add_to(mcm: MultiClusterManager, *, namespace: str | None = None) -> Controller:
    """Add the FleetConfigMap controller to ``mcm`` (aware: management cluster primary,
    ConfigMaps watched in every cluster)."""
    controller = Controller(FleetConfigMap, namespace=namespace, name="fleetconfigmap")
    mcm.add_aware(controller, reconcile).watches_in_clusters(
        ConfigMap, owner_of, label_selector=OWNER_LABEL
    )
    return controller


def fleet_manager(provider: Provider, manager: Manager | None = None) -> MultiClusterManager:
    """A MultiClusterManager running the FleetConfigMap controller over ``provider``."""
    mcm = MultiClusterManager(provider, manager or Manager(name="fleetconfigmap"))
    add_to(mcm)
    return mcm


def fleet() -> MultiClusterManager:
    """The FleetConfigMap operator over Cluster API's kubeconfig Secrets in the management
    cluster (``reconcile-kit run examples/fleet_configmap.py:fleet``; ``reconcile-kit rbac``
    of the same target prints what the management side needs: the FleetConfigMaps, their
    status and finalizers, and reading the Secrets). It installs its CRD on start."""
    mcm = fleet_manager(SecretProvider())

    @mcm.manager.on_start
    async def install_crd(api: Any) -> None:
        from reconcile_kit.examples.manager import install_crds

        await install_crds(api, [CRD_PATH])

    mcm.manager.add_rbac_rule(
        ["apiextensions.k8s.io"],
        ["customresourcedefinitions"],
        ["create", "get", "list", "watch"],
        namespaced=False,
    )
    return mcm
