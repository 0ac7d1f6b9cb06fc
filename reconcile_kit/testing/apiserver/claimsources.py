"""A PersistentVolumeClaim's data sources as its strategy prepares them (kubernetes
pkg/api/persistentvolumeclaim DropDisabledFields, EnforceDataSourceBackwardsCompatibility
and NormalizeDataSources; AnyVolumeDataSource on, CrossNamespaceVolumeDataSource off)."""

from __future__ import annotations

from typing import Any

from .store import Obj

_SNAPSHOT_GROUP = "snapshot.storage.k8s.io"


def _in_use(spec: Obj | None, key: str) -> bool:
    return isinstance(spec, dict) and spec.get(key) is not None


def _enabled(source: dict[str, Any]) -> bool:
    """dataSourceIsEnabled: a claim, or a VolumeSnapshot of its group."""
    group, kind = source.get("apiGroup") or "", source.get("kind")
    return (kind, group) in (("PersistentVolumeClaim", ""), ("VolumeSnapshot", _SNAPSHOT_GROUP))


def _drop(spec: Obj, old: Obj | None) -> None:
    ref = spec.get("dataSourceRef")
    cross = isinstance(ref, dict) and bool(ref.get("namespace"))
    if cross and not _in_use(old, "dataSourceRef"):
        spec.pop("dataSourceRef")
    source = spec.get("dataSource")
    if isinstance(source, dict) and not _in_use(old, "dataSource") and not _enabled(source):
        spec.pop("dataSource")


def _normalize(spec: Obj) -> None:
    source, ref = spec.get("dataSource"), spec.get("dataSourceRef")
    keys = ("apiGroup", "kind", "name")
    if isinstance(source, dict) and ref is None:
        spec["dataSourceRef"] = {k: source.get(k) for k in keys if k in source or k != "apiGroup"}
    elif isinstance(ref, dict) and source is None and not ref.get("namespace"):
        spec["dataSource"] = {k: ref.get(k) for k in keys if k in ref or k != "apiGroup"}


def prepare_create(obj: Obj) -> None:
    spec = obj.get("spec")
    if isinstance(spec, dict):
        _drop(spec, None)
        _normalize(spec)


def prepare_update(new: Obj, old: Obj) -> None:
    spec = new.get("spec")
    if isinstance(spec, dict):
        _drop(spec, old.get("spec"))
