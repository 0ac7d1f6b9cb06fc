"""Validation of core/v1 PersistentVolumes (kubernetes pkg/apis/core/validation
ValidatePersistentVolume, ValidatePersistentVolumeSpec and ValidatePersistentVolumeUpdate):
access modes, capacity, reclaim policy, node affinity, exactly one volume source, storage
class and volume mode; on an update the source and the volume mode are immutable.

Of the volume sources' own fields only hostPath, nfs, local and csi (driver and handle)
are checked; a node affinity may not change once set, with no exception for the beta
topology labels' GA names."""

from __future__ import annotations

import math
import posixpath
from fractions import Fraction
from typing import Any

from ....meta.validation import dns1123_subdomain_errors
from ..quantity import QuantityError, amount, canonical
from ..store import Obj
from .common import (
    Causes,
    Validator,
    Write,
    as_dict,
    forbidden,
    invalid,
    invalids,
    not_supported,
    required,
    semantic,
    too_long,
)
from .filepaths import no_backsteps_causes
from .gorender import quantity, spec_diff
from .scheduling import node_selector_causes
from .volumes import host_path_causes

_ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
_RECLAIM_POLICIES = ("Delete", "Recycle", "Retain")
_VOLUME_MODES = ("Block", "Filesystem")
# ValidatePersistentVolumeSpec's order of the sources (JSON field, reported path)
_SOURCES = (
    ("hostPath", "hostPath"),
    ("gcePersistentDisk", "gcePersistentDisk"),
    ("awsElasticBlockStore", "awsElasticBlockStore"),
    ("glusterfs", "glusterfs"),
    ("flocker", "flocker"),
    ("nfs", "nfs"),
    ("rbd", "rbd"),
    ("quobyte", "quobyte"),
    ("cephfs", "cephFS"),
    ("iscsi", "iscsi"),
    ("cinder", "cinder"),
    ("fc", "fc"),
    ("flexVolume", "flexVolume"),
    ("azureFile", "azureFile"),
    ("vsphereVolume", "vsphereVolume"),
    ("photonPersistentDisk", "photonPersistentDisk"),
    ("portworxVolume", "portworxVolume"),
    ("azureDisk", "azureDisk"),
    ("scaleIO", "scaleIO"),
    ("local", "local"),
    ("storageos", "storageos"),
    ("csi", "csi"),
)
_IMMUTABLE_SOURCE = "spec.persistentvolumesource is immutable after creation"


def _access_modes(spec: Obj) -> Causes:
    modes = [str(m) for m in spec.get("accessModes") or []]
    causes = [] if modes else [required("spec.accessModes")]
    causes += [
        not_supported("spec.accessModes", m, _ACCESS_MODES) for m in modes if m not in _ACCESS_MODES
    ]
    known = [m for m in modes if m in _ACCESS_MODES]
    if "ReadWriteOncePod" in known and any(m != "ReadWriteOncePod" for m in known):
        detail = "may not use ReadWriteOncePod with other access modes"
        causes.append(forbidden("spec.accessModes", detail))
    return causes


def resource_list(values: Any) -> str:
    """A core.ResourceList as Go's ``%#v`` prints it (keys sorted)."""
    if not isinstance(values, dict):
        return "core.ResourceList(nil)"
    items = ", ".join(f'"{k}":{quantity(values[k], True)}' for k in sorted(values))
    return "core.ResourceList{" + items + "}"


def _amount(value: Any) -> Fraction | None:
    try:
        return amount(value)
    except QuantityError:
        return None


def quantity_causes(value: Any, field: str) -> Causes:
    """validateBasicResource and ValidatePositiveQuantityValue."""
    number = _amount(value)
    if number is None:
        return []
    causes: Causes = []
    if math.ceil(number) < 0:
        causes.append(invalid(field, math.ceil(number), "must be a valid resource quantity"))
    if number <= 0:
        causes.append(invalid(field, canonical(value, True), "must be greater than zero"))
    return causes


def _capacity(spec: Obj) -> Causes:
    capacity = spec.get("capacity")
    values = capacity if isinstance(capacity, dict) else {}
    causes = [] if values else [required("spec.capacity")]
    if "storage" not in values or len(values) > 1:
        shown = resource_list(capacity if isinstance(capacity, dict) else None)
        causes.append(not_supported("spec.capacity", shown, ("storage",), rendered=True))
    for name in sorted(values):
        causes += quantity_causes(values[name], f"spec.capacity[{name}]")
    return causes


def _reclaim_policy(spec: Obj) -> Causes:
    policy = spec.get("persistentVolumeReclaimPolicy") or ""
    if policy and policy not in _RECLAIM_POLICIES:
        return [not_supported("spec.persistentVolumeReclaimPolicy", policy, _RECLAIM_POLICIES)]
    return []


def _node_affinity(spec: Obj) -> Causes:
    """validateVolumeNodeAffinity."""
    affinity = spec.get("nodeAffinity")
    if not isinstance(affinity, dict):
        return []
    if affinity.get("required") is None:
        detail = "must specify required node constraints"
        return [required("spec.nodeAffinity.required", detail)]
    return node_selector_causes(affinity["required"], "spec.nodeAffinity.required")


def _nfs(source: dict[str, Any], field: str) -> Causes:
    causes = [] if source.get("server") else [required(f"{field}.server")]
    path = str(source.get("path") or "")
    if not path:
        causes.append(required(f"{field}.path"))
    if not path.startswith("/"):
        causes.append(invalid(f"{field}.path", path, "must be an absolute path"))
    return causes


def _local(source: dict[str, Any], field: str, spec: Obj) -> Causes:
    path = str(source.get("path") or "")
    causes = no_backsteps_causes(path, f"{field}.path") if path else [required(f"{field}.path")]
    if not isinstance(spec.get("nodeAffinity"), dict):
        causes.append(required("spec.nodeAffinity", "Local volume requires node affinity"))
    return causes


def csi_driver_name_causes(name: str, field: str) -> Causes:
    """ValidateCSIDriverName (pkg/apis/core/validation): required, at most 63 characters,
    a DNS subdomain (lower-cased)."""
    causes = [] if name else [required(field)]
    if len(name) > 63:
        causes.append(too_long(field, 63))
    return causes + invalids(field, name, dns1123_subdomain_errors(name.lower()))


def _csi(source: dict[str, Any], field: str) -> Causes:
    causes = csi_driver_name_causes(str(source.get("driver") or ""), f"{field}.driver")
    if not source.get("volumeHandle"):
        causes.append(required(f"{field}.volumeHandle"))
    return causes


def _source_detail(key: str, source: dict[str, Any], field: str, spec: Obj) -> Causes:
    if key == "hostPath":
        return host_path_causes(source, field)
    if key == "nfs":
        return _nfs(source, field)
    if key == "local":
        return _local(source, field, spec)
    if key == "csi":
        return _csi(source, field)
    return []


def _sources(spec: Obj) -> Causes:
    present = [(key, path) for key, path in _SOURCES if spec.get(key) is not None]
    if not present:
        return [required("spec", "must specify a volume type")]
    key, path = present[0]
    causes = _source_detail(key, as_dict(spec[key]), f"spec.{path}", spec)
    detail = "may not specify more than 1 volume type"
    # a flexVolume is counted but never refused as a second source (its branch in
    # ValidatePersistentVolumeSpec does not check the count)
    return causes + [
        forbidden(f"spec.{path}", detail) for key, path in present[1:] if key != "flexVolume"
    ]


def _recycled_root(spec: Obj) -> Causes:
    host = spec.get("hostPath")
    root = isinstance(host, dict) and posixpath.normpath(str(host.get("path") or ".")) == "/"
    if root and spec.get("persistentVolumeReclaimPolicy") == "Recycle":
        detail = "may not be 'recycle' for a hostPath mount of '/'"
        return [forbidden("spec.persistentVolumeReclaimPolicy", detail)]
    return []


def _class_and_mode(spec: Obj) -> Causes:
    name = str(spec.get("storageClassName") or "")
    causes = invalids("spec.storageClassName", name, dns1123_subdomain_errors(name)) if name else []
    mode = spec.get("volumeMode")
    if mode is not None and mode not in _VOLUME_MODES:
        causes.append(not_supported("spec.volumeMode", mode, _VOLUME_MODES))
    return causes


def validate_spec(spec: Obj) -> Causes:
    """ValidatePersistentVolumeSpec, in its order."""
    causes = _access_modes(spec) + _capacity(spec) + _reclaim_policy(spec)
    causes += _node_affinity(spec) + _sources(spec) + _recycled_root(spec)
    return causes + _class_and_mode(spec)


def inline_spec_causes(spec: Obj, field: str) -> Causes:
    """ValidatePersistentVolumeSpec of an inline volume spec (a VolumeAttachment's) at
    ``field``: no claimRef, capacity or node affinity, a CSI source, reclaim policy only
    Retain, no storage class, volume mode only Filesystem; the access modes and sources as
    a PV's."""
    causes: Causes = []
    inline = "may not be specified in the context of inline volumes"
    if spec.get("claimRef") is not None:
        causes.append(forbidden("spec.claimRef", inline))
    if spec.get("capacity"):
        causes.append(forbidden("spec.capacity", inline))
    if spec.get("csi") is None:
        causes.append(required("spec.csi", "has to be specified in the context of inline volumes"))
    causes += _access_modes(spec)
    if (spec.get("persistentVolumeReclaimPolicy") or "Retain") != "Retain":
        detail = "may only be Retain in the context of inline volumes"
        causes.append(forbidden("spec.persistentVolumeReclaimPolicy", detail))
    if spec.get("nodeAffinity") is not None:
        causes.append(forbidden("spec.nodeAffinity", inline))
    causes += _sources(spec) + _recycled_root(spec)
    if spec.get("storageClassName"):
        causes.append(forbidden("spec.storageClassName", inline))
    if spec.get("volumeMode") not in (None, "Filesystem"):
        detail = "may not specify volumeMode other than Filesystem in the context of inline volumes"
        causes.append(forbidden("spec.volumeMode", detail))
    return [{**cause, "field": field + cause["field"][len("spec") :]} for cause in causes]


def _source_of(spec: Obj) -> Obj:
    return {key: spec[key] for key, _ in _SOURCES if spec.get(key) is not None}


def _update(spec: Obj, old: Obj) -> Causes:
    """ValidatePersistentVolumeUpdate: the source (but for a CSI expansion secret set
    the first time) and the volume mode are immutable."""
    source, old_source = _source_of(spec), _source_of(old)
    csi, old_csi = as_dict(source.get("csi")), as_dict(old_source.get("csi"))
    if csi and old_csi and old_csi.get("controllerExpandSecretRef") is None:
        source["csi"] = {k: v for k, v in csi.items() if k != "controllerExpandSecretRef"}
    causes: Causes = []
    if semantic(source) != semantic(old_source):
        diff = spec_diff("PersistentVolumeSource", old_source, source)
        causes.append(forbidden("spec.persistentvolumesource", f"{_IMMUTABLE_SOURCE}\n{diff}"))
    mode = spec.get("volumeMode")
    if mode != old.get("volumeMode"):
        causes.append(invalid("volumeMode", mode, "field is immutable"))
    return causes + _affinity_unchanged(spec.get("nodeAffinity"), old.get("nodeAffinity"))


def _affinity_unchanged(affinity: Any, old: Any) -> Causes:
    """validatePvNodeAffinity: a node affinity, once set, stays (the beta-to-GA label
    exception is not ported); the value is Go's ``%#v`` of a pointer (its address shown
    as 0x0)."""
    if old is None or semantic(affinity) == semantic(old):
        return []
    if not isinstance(affinity, dict):
        shown = "(*core.VolumeNodeAffinity)(nil)"
    else:
        pointer = "nil" if affinity.get("required") is None else "0x0"
        shown = f"core.VolumeNodeAffinity{{Required:(*core.NodeSelector)({pointer})}}"
    detail = "field is immutable, except for updating from beta label to GA"
    return [invalid("nodeAffinity", shown, detail, rendered=True)]


def _persistent_volume(write: Write) -> Causes:
    if write.subresource:
        return []
    spec = as_dict(write.obj.get("spec"))
    causes = validate_spec(spec)
    if write.old is None:
        return causes
    return causes + _update(spec, as_dict(write.old.get("spec")))


VALIDATORS: dict[tuple[str, str], Validator] = {("", "persistentvolumes"): _persistent_volume}
