"""A pod spec's volumes (kubernetes pkg/apis/core/validation ValidateVolumes and
validateVolumeSource): names valid and unique, exactly one volume source."""

from __future__ import annotations

from typing import Any

from .common import Causes, as_dict, duplicate, forbidden, required
from .containers import name_causes

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


def _source_causes(volume: dict[str, Any], field: str) -> Causes:
    present = [path for key, path in _SOURCES if volume.get(key) is not None]
    if not present:
        return [required(field, "must specify a volume type")]
    detail = "may not specify more than 1 volume type"
    return [forbidden(f"{field}.{path}", detail) for path in present[1:]]


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
