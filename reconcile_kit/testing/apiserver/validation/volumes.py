"""A pod spec's volumes (kubernetes pkg/apis/core/validation ValidateVolumes and
validateVolumeSource): names valid and unique, exactly one volume source."""

from __future__ import annotations

from typing import Any

from .. import quantity
from .common import Causes, as_dict, as_list, duplicate, forbidden, not_supported, required
from .containers import name_causes
from .filepaths import mode_causes, no_backsteps_causes, non_reserved_path_causes

# validateVolumeSource's order: (JSON field, the field path it reports; Go spells two of
# them its own way).
_SOURCES = (
    ("emptyDir", "emptyDir"),
    ("hostPath", "hostPath"),
    ("gitRepo", "gitRepo"),
    ("gcePersistentDisk", "gcePersistentDisk"),
    ("awsElasticBlockStore", "awsElasticBlockStore"),
    ("secret", "secret"),
    ("nfs", "nfs"),
    ("iscsi", "iscsi"),
    ("glusterfs", "glusterfs"),
    ("flocker", "flocker"),
    ("persistentVolumeClaim", "persistentVolumeClaim"),
    ("rbd", "rbd"),
    ("cinder", "cinder"),
    ("cephfs", "cephFS"),
    ("quobyte", "quobyte"),
    ("downwardAPI", "downwarAPI"),
    ("fc", "fc"),
    ("flexVolume", "flexVolume"),
    ("configMap", "configMap"),
    ("azureFile", "azureFile"),
    ("vsphereVolume", "vsphereVolume"),
    ("photonPersistentDisk", "photonPersistentDisk"),
    ("portworxVolume", "portworxVolume"),
    ("azureDisk", "azureDisk"),
    ("storageos", "storageos"),
    ("projected", "projected"),
    ("scaleIO", "scaleIO"),
    ("csi", "csi"),
    ("ephemeral", "ephemeral"),
    ("image", "image"),
)
SOURCE_FIELDS = tuple(key for key, _ in _SOURCES)


_HOST_PATH_TYPES = (
    "",
    "BlockDevice",
    "CharDevice",
    "Directory",
    "DirectoryOrCreate",
    "File",
    "FileOrCreate",
    "Socket",
)


def _items_causes(items: Any, field: str) -> Causes:
    """validateKeyToPath of each item: a key, a relative path, a file mode."""
    causes: Causes = []
    for i, item in enumerate(as_list(items)):
        item, path = as_dict(item), f"{field}[{i}]"
        key, target = str(item.get("key") or ""), str(item.get("path") or "")
        if not key:
            causes.append(required(f"{path}.key"))
        if not target:
            causes.append(required(f"{path}.path"))
        causes += non_reserved_path_causes(target, f"{path}.path")
        causes += mode_causes(item.get("mode"), f"{path}.mode")
    return causes


def _named(source: dict[str, Any], field: str, name_key: str) -> Causes:
    """A Secret or ConfigMap source: named, a valid default mode, valid items."""
    causes = [] if source.get(name_key) else [required(f"{field}.{name_key}")]
    causes += mode_causes(source.get("defaultMode"), f"{field}.defaultMode")
    return causes + _items_causes(source.get("items"), f"{field}.items")


def host_path_causes(source: dict[str, Any], field: str) -> Causes:
    """validateHostPathVolumeSource: a path without backsteps, a known type."""
    path = str(source.get("path") or "")
    if not path:
        return [required(f"{field}.path")]
    causes = no_backsteps_causes(path, f"{field}.path")
    kind = source.get("type")
    if kind is not None and kind not in _HOST_PATH_TYPES:
        causes.append(not_supported(f"{field}.type", kind, _HOST_PATH_TYPES))
    return causes


def _empty_dir(source: dict[str, Any], field: str) -> Causes:
    limit = source.get("sizeLimit")
    try:
        negative = limit is not None and quantity.amount(limit) < 0
    except quantity.QuantityError:
        negative = False
    if negative:
        detail = "SizeLimit field must be a valid resource quantity"
        return [forbidden(f"{field}.sizeLimit", detail)]
    return []


def _source_detail(key: str, source: dict[str, Any], field: str) -> Causes:
    """The rules of the few sources ported (secret, configMap, persistentVolumeClaim,
    hostPath, emptyDir)."""
    if key == "secret":
        return _named(source, field, "secretName")
    if key == "configMap":
        return _named(source, field, "name")
    if key == "persistentVolumeClaim":
        return [] if source.get("claimName") else [required(f"{field}.claimName")]
    if key == "hostPath":
        return host_path_causes(source, field)
    if key == "emptyDir":
        return _empty_dir(source, field)
    return []


def _source_causes(volume: dict[str, Any], field: str) -> Causes:
    """validateVolumeSource: exactly one source (the first one's rules checked)."""
    present = [(key, path) for key, path in _SOURCES if volume.get(key) is not None]
    if not present:
        return [required(field, "must specify a volume type")]
    key, path = present[0]
    causes = _source_detail(key, as_dict(volume[key]), f"{field}.{path}")
    detail = "may not specify more than 1 volume type"
    return causes + [forbidden(f"{field}.{path}", detail) for _, path in present[1:]]


def volumes_causes(volumes: list[Any], field: str) -> tuple[set[str], Causes]:
    """The names of the valid volumes (mounts may refer to those only) and the causes."""
    names: set[str] = set()
    causes: Causes = []
    for i, volume in enumerate(volumes):
        volume, path = as_dict(volume), f"{field}[{i}]"
        name = str(volume.get("name") or "")
        found = _source_causes(volume, path) + name_causes(name, f"{path}.name")
        if name in names:
            found.append(duplicate(f"{path}.name", name))
        if found:
            causes += found
        else:
            names.add(name)
    return names, causes
