"""The providers over the wire: kubeconfig contexts in files (re-read on change) and
kubeconfig Secrets in the management cluster (Cluster API's), engaging and disengaging
clusters while the manager runs."""

from __future__ import annotations

import asyncio
import base64
import functools
from pathlib import Path
from typing import Any

import pytest
import yaml
from kr8s.asyncio.objects import ConfigMap

from reconcile_kit import Context, Controller, Manager, PatchHelper
from reconcile_kit.multicluster import (
    Kubeconfig,
    KubeconfigProvider,
    MultiClusterManager,
    SecretProvider,
    contexts_of,
)
from reconcile_kit.testing import APIServer, eventually
from reconcile_kit.testing.multicluster import EmbeddedFleet

from ..kubehttp import call

CM = "/api/v1/namespaces/default/configmaps"
SECRETS = "/api/v1/namespaces/default/secrets"


async def label(cm: Any, ctx: Context) -> None:
    async with PatchHelper(cm):
        cm.raw["metadata"].setdefault("labels", {})["cluster"] = ctx.cluster


def kubeconfig(server: APIServer, context: str) -> dict[str, Any]:
    """``server``'s kubeconfig with its context, cluster and user named ``context``."""
    document = server.kubeconfig_dict()
    document["clusters"][0]["name"] = document["users"][0]["name"] = context
    document["contexts"][0] = {
        "name": context,
        "context": {"cluster": context, "user": context, "namespace": "default"},
    }
    document["current-context"] = context
    return document


def merged(*documents: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"apiVersion": "v1", "kind": "Config"}
    for key in ("clusters", "users", "contexts"):
        out[key] = [item for document in documents for item in document[key]]
    out["current-context"] = documents[0]["current-context"]
    return out


def test_contexts_of_splits_a_kubeconfig_per_context() -> None:
    document = merged(
        {
            "clusters": [{"name": "x", "cluster": {"server": "https://x"}}],
            "users": [{"name": "u", "user": {"token": "t"}}],
            "contexts": [{"name": "a", "context": {"cluster": "x", "user": "u"}}],
            "current-context": "a",
        },
        {
            "clusters": [{"name": "y", "cluster": {"server": "https://y"}}],
            "users": [],
            "contexts": [{"name": "b", "context": {"cluster": "y", "user": "none"}}],
            "current-context": "b",
        },
    )
    split = contexts_of(document)
    assert sorted(split) == ["a", "b"]
    assert split["a"]["clusters"] == [{"name": "x", "cluster": {"server": "https://x"}}]
    assert split["b"]["users"] == [] and split["b"]["current-context"] == "b"


async def fleet_with_a_configmap(clusters: EmbeddedFleet, count: int) -> list[APIServer]:
    """``count`` started clusters, each holding ConfigMap default/a."""
    servers = await clusters.start(count)
    for name in clusters.servers:
        await call(await clusters.api(name), "POST", CM, {"metadata": {"name": "a"}})
    return servers


async def labelling_manager(apiserver: APIServer, directory: Path) -> MultiClusterManager:
    """A manager over the kubeconfigs of ``directory`` whose ConfigMap controller labels
    each ConfigMap with its cluster's name (``label``)."""
    provider = KubeconfigProvider(directory, period=0.05)
    mcm = MultiClusterManager(provider, Manager(await apiserver.api(), handle_signals=False))
    mcm.add(Controller(ConfigMap, namespace="default"), label)
    return mcm


async def labelled_as(clusters: EmbeddedFleet, cluster: str, value: str) -> bool:
    """Whether ConfigMap default/a of ``cluster`` carries the label cluster=``value``."""
    _, got = await call(await clusters.api(cluster), "GET", f"{CM}/a")
    return bool((got["metadata"].get("labels") or {}).get("cluster") == value)


async def test_kubeconfig_provider_follows_the_files_of_a_directory(
    clusters: EmbeddedFleet, apiserver: APIServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    s0, s1, s2 = await fleet_with_a_configmap(clusters, 3)
    (tmp_path / "one.yaml").write_text(
        yaml.safe_dump(merged(kubeconfig(s0, "alpha"), kubeconfig(s1, "beta")))
    )
    (tmp_path / ".hidden").write_text("not: a kubeconfig")
    mcm = await labelling_manager(apiserver, tmp_path)
    task = asyncio.create_task(mcm.run())
    labelled = functools.partial(labelled_as, clusters)

    try:
        await eventually(lambda: mcm.engaged() == ["alpha", "beta"], 10)
        await eventually(lambda: labelled("cluster-1", "beta"), 10)
        # a new file: its context is engaged
        (tmp_path / "two.yaml").write_text(yaml.safe_dump(kubeconfig(s2, "gamma")))
        await eventually(lambda: mcm.engaged() == ["alpha", "beta", "gamma"], 10)
        await eventually(lambda: labelled("cluster-2", "gamma"), 10)
        # a context removed from its file is disengaged; one pointed elsewhere re-engaged
        (tmp_path / "one.yaml").write_text(yaml.safe_dump(kubeconfig(s1, "alpha")))
        await eventually(lambda: mcm.engaged() == ["alpha", "gamma"], 10)
        await eventually(lambda: labelled("cluster-1", "alpha"), 10)
        # an unreadable file keeps its clusters; a deleted one loses them
        (tmp_path / "two.yaml").write_text("{not yaml")
        await eventually(lambda: "two.yaml: not read" in caplog.text, 10)
        assert mcm.engaged() == ["alpha", "gamma"]
        (tmp_path / "two.yaml").unlink()
        await eventually(lambda: mcm.engaged() == ["alpha"], 10)
    finally:
        mcm.stop()
        await asyncio.wait_for(task, 15)


async def test_a_context_name_repeated_across_files_engages_every_cluster(
    clusters: EmbeddedFleet, apiserver: APIServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Two kubeconfigs as `reconcile-kit apiserver` writes them, both naming their context
    `reconcile-kit`: the first file's keeps the name, the other is `<file name>-<context>`."""
    s0, s1 = await fleet_with_a_configmap(clusters, 2)
    (tmp_path / "a.yaml").write_text(yaml.safe_dump(s0.kubeconfig_dict()))
    (tmp_path / "b.yaml").write_text(yaml.safe_dump(s1.kubeconfig_dict()))
    mcm = await labelling_manager(apiserver, tmp_path)
    task = asyncio.create_task(mcm.run())
    labelled = functools.partial(labelled_as, clusters)

    try:
        await eventually(lambda: mcm.engaged() == ["b.yaml-reconcile-kit", "reconcile-kit"], 10)
        await eventually(lambda: labelled("cluster-0", "reconcile-kit"), 10)
        await eventually(lambda: labelled("cluster-1", "b.yaml-reconcile-kit"), 10)
    finally:
        mcm.stop()
        await asyncio.wait_for(task, 15)
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert [w for w in warnings if "b.yaml-reconcile-kit" in w] == [
        f"kubeconfig {tmp_path / 'b.yaml'}: context reconcile-kit is also in "
        f"{tmp_path / 'a.yaml'}; its cluster is named b.yaml-reconcile-kit"
    ]


def test_repeated_context_names_keep_the_other_names_and_warn_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server = APIServer()  # not started: only its kubeconfig document is read
    server.url = "http://127.0.0.1:1"
    (tmp_path / "a.yaml").write_text(
        yaml.safe_dump(merged(kubeconfig(server, "alpha"), kubeconfig(server, "beta")))
    )
    (tmp_path / "b.yaml").write_text(
        yaml.safe_dump(merged(kubeconfig(server, "beta"), kubeconfig(server, "gamma")))
    )
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(kubeconfig(server, "beta")))
    provider = KubeconfigProvider(tmp_path, period=0.01)
    fleet = Recorded()
    provider.scan(fleet)
    provider.scan(fleet)  # nothing changed: nothing logged again
    assert sorted(fleet.clusters) == ["alpha", "b.yaml-beta", "beta", "c.yaml-beta", "gamma"]
    renamed = [r for r in caplog.records if r.levelname == "WARNING"]
    assert [r.getMessage().split(":")[0] for r in renamed] == [
        f"kubeconfig {tmp_path / 'b.yaml'}",
        f"kubeconfig {tmp_path / 'c.yaml'}",
    ]
    assert all(str(tmp_path / "a.yaml") in r.getMessage() for r in renamed)
    # the cluster source still selects the context by its own name
    source = fleet.clusters["c.yaml-beta"]
    assert isinstance(source, Kubeconfig) and source.context == "beta"
    # the first file gone, the next one's context takes the plain name
    (tmp_path / "a.yaml").unlink()
    provider.scan(fleet)
    assert sorted(fleet.clusters) == ["beta", "c.yaml-beta", "gamma"]


def kubeconfig_secret(name: str, server: APIServer, labels: dict[str, str]) -> dict[str, Any]:
    value = base64.b64encode(yaml.safe_dump(server.kubeconfig_dict()).encode()).decode()
    return {
        "metadata": {"name": f"{name}-kubeconfig", "labels": labels},
        "data": {"value": value},
    }


async def test_secret_provider_engages_cluster_api_kubeconfig_secrets(
    clusters: EmbeddedFleet, apiserver: APIServer
) -> None:
    s0, s1 = await clusters.start(2)
    management = await apiserver.api()
    capi = "cluster.x-k8s.io/cluster-name"
    await call(management, "POST", SECRETS, kubeconfig_secret("w0", s0, {capi: "w0", "env": "a"}))
    bad = {"metadata": {"name": "w9-kubeconfig", "labels": {capi: "w9"}}, "data": {"value": "!"}}
    await call(management, "POST", SECRETS, bad)
    unrelated = {"metadata": {"name": "other"}, "data": {"value": "eA=="}}
    await call(management, "POST", SECRETS, unrelated)
    mcm = MultiClusterManager(
        SecretProvider(namespace="default"), Manager(management, handle_signals=False)
    )
    mcm.add(Controller(ConfigMap, namespace="default"), label)
    task = asyncio.create_task(mcm.run())
    try:
        await eventually(lambda: mcm.engaged() == ["w0"] and "w0" in mcm.clusters, 10)
        assert mcm.clusters["w0"].labels == {capi: "w0", "env": "a"}
        await call(management, "POST", SECRETS, kubeconfig_secret("w1", s1, {capi: "w1"}))
        await eventually(lambda: mcm.engaged() == ["w0", "w1"], 10)
        await call(management, "DELETE", f"{SECRETS}/w0-kubeconfig")
        await eventually(lambda: mcm.engaged() == ["w1"], 10)
        await eventually(lambda: s0.open_watches == 0, 10)
    finally:
        mcm.stop()
        await asyncio.wait_for(task, 15)


class Recorded:
    """A Fleet that records what a provider engages (no manager)."""

    def __init__(self) -> None:
        self.clusters: dict[str, object] = {}

    @property
    def api(self) -> Any:
        raise AssertionError("not needed")

    def engage(self, name: str, source: object) -> None:
        self.clusters[name] = source

    def disengage(self, name: str) -> None:
        self.clusters.pop(name, None)


async def test_a_kubeconfig_providers_next_run_starts_afresh(tmp_path: Path) -> None:
    """After leadership is lost the manager forgets what was engaged; the provider's next
    run must engage every cluster again (and only those still there)."""
    server = APIServer()  # not started: only its kubeconfig document is read
    server.url = "http://127.0.0.1:1"
    (tmp_path / "a.yaml").write_text(
        yaml.safe_dump(merged(kubeconfig(server, "alpha"), kubeconfig(server, "beta")))
    )
    provider = KubeconfigProvider(tmp_path, period=0.01)
    first = Recorded()
    provider.scan(first)
    assert sorted(first.clusters) == ["alpha", "beta"]
    (tmp_path / "a.yaml").write_text(yaml.safe_dump(kubeconfig(server, "alpha")))
    second = Recorded()
    run = asyncio.create_task(provider.run(second))
    try:
        await eventually(lambda: list(second.clusters) == ["alpha"], 5)
    finally:
        run.cancel()
        await asyncio.gather(run, return_exceptions=True)
