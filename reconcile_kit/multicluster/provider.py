"""Providers: who discovers the clusters of a fleet and engages or disengages them while
the manager runs.

The protocol is sigs.k8s.io/multicluster-runtime's: a provider runs beside the manager and
calls ``Engage(ctx, name, cluster)`` on the multi-cluster-aware manager for every cluster
it finds, and disengages one by cancelling that engagement's context. Here a provider is an
object with ``async run(fleet)`` (until cancelled) calling ``fleet.engage(name, source)``
and ``fleet.disengage(name)``, both plain functions; the manager connects, starts and stops
the clusters' controllers itself. Three providers come with the toolkit:

* :class:`StaticProvider`: a fixed mapping (tests), changeable at run time;
* :class:`KubeconfigProvider`: the contexts of a kubeconfig file or of a directory of
  them, re-read when a file changes (multicluster-runtime's file provider);
* :class:`SecretProvider`: kubeconfigs in Secrets of the management cluster selected by
  label, as Cluster API writes them (``<cluster>-kubeconfig``, key ``value``;
  multicluster-runtime's Cluster API and kubeconfig-secret providers).
"""

from __future__ import annotations

import asyncio
import base64
import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Protocol

import yaml
from kr8s.asyncio import Api

from ..runtime.reflector import Reflector, ReflectorEvent
from ..runtime.resources import resolve_kind
from ..runtime.store import Obj
from .cluster import ClusterSource, Kubeconfig, KubeconfigDocument

__all__ = [
    "CAPI_CLUSTER_NAME_LABEL",
    "Fleet",
    "KubeconfigProvider",
    "Provider",
    "SecretProvider",
    "StaticProvider",
    "contexts_of",
]

log = logging.getLogger(__name__)

CAPI_CLUSTER_NAME_LABEL = "cluster.x-k8s.io/cluster-name"
"""The label Cluster API puts on a cluster's ``<cluster>-kubeconfig`` Secret."""


class Fleet(Protocol):
    """What a provider engages clusters with (the multi-cluster manager)."""

    @property
    def api(self) -> Api:
        """The management cluster's kr8s asyncio Api (where providers read Secrets)."""
        ...

    def engage(self, name: str, source: ClusterSource) -> None:
        """Engage cluster ``name`` reached through ``source``: its controllers start (in
        the background; a cluster that cannot be reached is retried with a per-cluster
        backoff). Engaging it again with an equal source changes nothing; with another,
        it is disengaged and engaged anew."""
        ...

    def disengage(self, name: str) -> None:
        """Disengage cluster ``name`` (in the background): its controllers stop, its
        queue items are dropped, its caches stop. Nothing happens for an unknown name."""
        ...


class Provider(Protocol):
    """Discovers clusters and engages or disengages them (implement it for your own
    inventory: a CRD, a cloud API...)."""

    async def run(self, fleet: Fleet) -> None:
        """Engage the clusters found, then follow changes until cancelled."""
        ...


class StaticProvider:
    """A fixed set of clusters, changeable while the manager runs (:meth:`add`,
    :meth:`remove`): for tests and small static fleets.

    Args:
        clusters: ``{name: source}``; a source is a :class:`Kubeconfig` (or any
            :class:`~reconcile_kit.multicluster.cluster.ClusterSource`), or a kubeconfig
            path (its current context).
    """

    def __init__(self, clusters: Mapping[str, ClusterSource | str | Path] | None = None) -> None:
        self.clusters: dict[str, ClusterSource] = {
            name: _source(source) for name, source in (clusters or {}).items()
        }
        self._fleet: Fleet | None = None

    def add(self, name: str, source: ClusterSource | str | Path) -> None:
        """Add (or replace) cluster ``name``; engaged at once while running."""
        self.clusters[name] = _source(source)
        if self._fleet is not None:
            self._fleet.engage(name, self.clusters[name])

    def remove(self, name: str) -> None:
        """Remove cluster ``name``; disengaged at once while running."""
        self.clusters.pop(name, None)
        if self._fleet is not None:
            self._fleet.disengage(name)

    async def run(self, fleet: Fleet) -> None:
        """Engage every cluster, then wait (changes come through :meth:`add`/:meth:`remove`)."""
        self._fleet = fleet
        try:
            for name, source in self.clusters.items():
                fleet.engage(name, source)
            await asyncio.Event().wait()
        finally:
            self._fleet = None


def _source(source: ClusterSource | str | Path) -> ClusterSource:
    return Kubeconfig(source) if isinstance(source, str | Path) else source


def contexts_of(document: KubeconfigDocument) -> dict[str, KubeconfigDocument]:
    """Split a kubeconfig into one self-contained kubeconfig per context (the context, its
    cluster and its user, as current context), keyed by context name: a change to one
    context then changes only its own document."""
    clusters = {c.get("name"): c for c in _items(document, "clusters")}
    users = {u.get("name"): u for u in _items(document, "users")}
    split: dict[str, KubeconfigDocument] = {}
    for context in _items(document, "contexts"):
        name = context.get("name")
        spec = context.get("context")
        if not isinstance(name, str) or not isinstance(spec, dict):
            continue
        split[name] = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [c for c in [clusters.get(spec.get("cluster"))] if c is not None],
            "users": [u for u in [users.get(spec.get("user"))] if u is not None],
            "contexts": [context],
            "current-context": name,
        }
    return split


def _items(document: KubeconfigDocument, key: str) -> list[dict[str, object]]:
    value = document.get(key)
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


class KubeconfigProvider:
    """Every context of a kubeconfig file, or of every file in a directory, is a cluster
    named after the context; the files are re-read when their modification time changes
    (polled every ``period`` seconds: no file-watching dependency). A context that appears
    is engaged, one that disappears (or whose file goes) is disengaged, one whose cluster
    or user changed is engaged anew. As multicluster-runtime's file provider.

    A context name that several files of a directory have (two kubeconfigs written by
    ``reconcile-kit apiserver`` both name theirs ``reconcile-kit``) names the cluster of
    the first file in name order; each later file's is named ``<file name>-<context>``
    (``b.yaml-reconcile-kit``: still a valid label value when the context's name is one,
    as ``ctx.cluster`` may be written to labels), with a warning naming both files when it
    is engaged. Should the first file go, the next one's cluster takes the plain name.

    Args:
        path: a kubeconfig file, or a directory whose regular files (not starting with a
            dot) are kubeconfigs.
        period: seconds between two looks at the files' modification times.
        labels: ``(context name) -> labels`` of each cluster (default: none; called with
            the context's name, also for a ``<file name>-<context>`` cluster).

    A file that cannot be read or parsed is logged and keeps its previous clusters.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        period: float = 5.0,
        labels: Callable[[str], Mapping[str, str]] | None = None,
    ) -> None:
        self.path = Path(path)
        self.period = period
        self.labels = labels
        self._seen: dict[Path, float] = {}
        self._files: dict[Path, dict[str, KubeconfigDocument]] = {}
        self.engaged: dict[str, Kubeconfig] = {}
        """The clusters this provider has engaged, by name."""

    async def run(self, fleet: Fleet) -> None:
        """Engage the contexts found, then re-read changed files every ``period`` seconds
        until cancelled (each run starts afresh: every file is read again)."""
        self._seen.clear()
        self._files.clear()
        self.engaged.clear()
        while True:
            self.scan(fleet)
            await asyncio.sleep(self.period)

    def scan(self, fleet: Fleet) -> None:
        """Read the files whose modification time changed, and engage or disengage what
        changed since the last scan."""
        files = self._paths()
        for gone in set(self._files) - set(files):
            del self._files[gone]
            self._seen.pop(gone, None)
        for path in files:
            try:
                mtime = path.stat().st_mtime_ns
                if self._seen.get(path) == mtime:
                    continue
                document = yaml.safe_load(path.read_text()) or {}
                if not isinstance(document, dict):
                    raise ValueError("not a kubeconfig document")
            except (OSError, ValueError, yaml.YAMLError) as error:
                log.warning("kubeconfig %s: not read (%s); keeping its clusters", path, error)
                continue
            self._seen[path] = mtime
            self._files[path] = contexts_of(document)
        wanted, renamed = self._wanted(files)
        for name in set(self.engaged) - set(wanted):
            del self.engaged[name]
            fleet.disengage(name)
        for name, source in wanted.items():
            if self.engaged.get(name) != source:
                if name in renamed:
                    file, earlier = renamed[name]
                    log.warning(
                        "kubeconfig %s: context %s is also in %s; its cluster is named %s",
                        file,
                        source.context,
                        earlier,
                        name,
                    )
                self.engaged[name] = source
                fleet.engage(name, source)

    def _wanted(
        self, files: list[Path]
    ) -> tuple[dict[str, Kubeconfig], dict[str, tuple[Path, Path]]]:
        """Cluster name -> source of every context of ``files`` (in order), and, for each
        cluster named ``<file name>-<context>`` because an earlier file has a context of
        that name: cluster name -> (its file, that earlier file)."""
        wanted: dict[str, Kubeconfig] = {}
        first: dict[str, Path] = {}  # context name -> the first file that has it
        renamed: dict[str, tuple[Path, Path]] = {}
        for path in files:
            for context, document in self._files.get(path, {}).items():
                name = context
                if context in first:
                    name = f"{path.name}-{context}"
                    renamed[name] = (path, first[context])
                first.setdefault(context, path)
                labels = dict(self.labels(context)) if self.labels is not None else {}
                wanted.setdefault(name, Kubeconfig(document, context, labels))
        return wanted, renamed

    def _paths(self) -> list[Path]:
        if self.path.is_dir():
            return sorted(
                p for p in self.path.iterdir() if p.is_file() and not p.name.startswith(".")
            )
        return [self.path] if self.path.exists() else []


class SecretProvider:
    """Clusters from kubeconfig Secrets in the management cluster, watched (a reflector)
    by label selector: Cluster API's ``<cluster>-kubeconfig`` Secrets (labelled
    ``cluster.x-k8s.io/cluster-name``, the kubeconfig base64 in ``data.value``) by default.
    A Secret created engages its cluster, one changed re-engages it, one deleted
    disengages it. As multicluster-runtime's Cluster API and kubeconfig providers.

    Args:
        namespace: the Secrets' namespace (None: all namespaces).
        label_selector: which Secrets hold kubeconfigs.
        key: the ``data`` key holding the kubeconfig.
        api: the management cluster's Api (None: the fleet's, i.e. the manager's).

    A cluster is named by the Secret's ``cluster.x-k8s.io/cluster-name`` label, else by
    its name without a ``-kubeconfig`` suffix; its labels are the Secret's. A Secret whose
    kubeconfig cannot be decoded is logged and disengaged.
    """

    def __init__(
        self,
        *,
        namespace: str | None = None,
        label_selector: str = CAPI_CLUSTER_NAME_LABEL,
        key: str = "value",
        api: Api | None = None,
    ) -> None:
        self.engaged: dict[str, str] = {}
        """Engaged cluster name -> the Secret (``namespace/name``) it came from."""
        self.namespace = namespace
        self.label_selector = label_selector
        self.key = key
        self.api = api

    @staticmethod
    def cluster_name(secret: Obj) -> str:
        """The cluster a kubeconfig Secret names (see the class)."""
        meta = secret.get("metadata") or {}
        label = (meta.get("labels") or {}).get(CAPI_CLUSTER_NAME_LABEL)
        if label:
            return str(label)
        return str(meta.get("name", "")).removesuffix("-kubeconfig")

    def source_of(self, secret: Obj) -> Kubeconfig:
        """The cluster source a Secret holds.

        Raises:
            ValueError: the Secret has no kubeconfig under :attr:`key`, or it does not
                decode (base64, then YAML) to a kubeconfig document.
        """
        encoded = (secret.get("data") or {}).get(self.key)
        if not isinstance(encoded, str):
            raise ValueError(f"no data.{self.key}")
        try:
            document = yaml.safe_load(base64.b64decode(encoded))
        except (ValueError, yaml.YAMLError) as error:
            raise ValueError(f"data.{self.key} is not a kubeconfig: {error}") from error
        if not isinstance(document, dict):
            raise ValueError(f"data.{self.key} is not a kubeconfig document")
        labels = dict((secret.get("metadata") or {}).get("labels") or {})
        return Kubeconfig(document, None, labels)

    async def run(self, fleet: Fleet) -> None:
        """Watch the Secrets and engage or disengage their clusters until cancelled
        (each run starts afresh with a new list)."""
        self.engaged.clear()
        api = self.api if self.api is not None else fleet.api
        info = await resolve_kind(api, "Secret")
        reflector = Reflector(
            api, info, namespace=self.namespace, label_selector=self.label_selector
        )
        unsubscribe = reflector.subscribe(lambda event: self._on_event(fleet, event))
        try:
            await reflector.run()
        finally:
            unsubscribe()

    def _on_event(self, fleet: Fleet, event: ReflectorEvent) -> None:
        meta = event.obj.get("metadata") or {}
        origin = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
        name = self.cluster_name(event.obj)
        if event.type == "DELETED":
            if self.engaged.get(name) == origin:
                del self.engaged[name]
                fleet.disengage(name)
            return
        try:
            source = self.source_of(event.obj)
        except ValueError as error:
            log.warning("Secret %s: %s; its cluster %s is not engaged", origin, error, name)
            if self.engaged.pop(name, None) is not None:
                fleet.disengage(name)
            return
        self.engaged[name] = origin
        fleet.engage(name, source)
