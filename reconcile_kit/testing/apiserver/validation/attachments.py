"""Validation of VolumeAttachments and CSINodes (kubernetes pkg/apis/storage/validation
ValidateVolumeAttachment, ValidateVolumeAttachmentV1 and ValidateVolumeAttachmentUpdate;
ValidateCSINode and ValidateCSINodeUpdate with the strategy's AllowLongNodeID).

An update runs the kind's validation twice (the strategy's ValidateUpdate calls it, then
the Update function calls it again), so each cause of the new object is reported twice,
as kube-apiserver reports it. Go prints pointers as addresses; they show as 0x0 here."""

from __future__ import annotations

from typing import Any

from ....meta.validation import dns1123_subdomain_errors, qualified_name_errors
from ..gofmt import go_quote
from ..store import Obj
from .common import (
    Causes,
    Validator,
    Write,
    as_dict,
    as_list,
    duplicate,
    forbidden,
    invalid,
    invalids,
    nonnegative,
    required,
    semantic,
    too_long,
)
from .gorender import POINTER, strings
from .persistentvolumes import csi_driver_name_causes, inline_spec_causes

GROUP = "storage.k8s.io"
_MAX_METADATA_SIZE = 256 * 1024  # bytes of attachmentMetadata's keys and values
_MAX_ERROR_MESSAGE = 1024  # bytes (the TooLong cause names the metadata limit)
_MAX_NODE_ID = 256  # csiNodeIDLongerMaxLength: the strategy allows long node IDs
_ONE_SOURCE = "must specify exactly one of inlineVolumeSpec and persistentVolumeName"


def _source(source: Obj) -> Causes:
    path = "spec.source"
    inline, pv_name = source.get("inlineVolumeSpec"), source.get("persistentVolumeName")
    if inline is None and pv_name is None:
        return [required(path, _ONE_SOURCE)]
    if inline is not None and pv_name is not None:
        return [forbidden(path, _ONE_SOURCE)]
    if pv_name is not None:
        detail = "must specify non empty persistentVolumeName"
        return [] if pv_name else [required(f"{path}.persistentVolumeName", detail)]
    return inline_spec_causes(as_dict(inline), f"{path}.inlineVolumeSpec")


def _volume_error(error: Any, field: str) -> Causes:
    message = as_dict(error).get("message")
    if isinstance(message, str) and len(message.encode()) > _MAX_ERROR_MESSAGE:
        return [too_long(f"{field}.message", _MAX_METADATA_SIZE)]
    return []


def _attachment_causes(obj: Obj) -> Causes:
    """ValidateVolumeAttachment: the spec's attacher, source and node name, the status's
    metadata size and error messages."""
    spec, status = as_dict(obj.get("spec")), as_dict(obj.get("status"))
    attacher, node = str(spec.get("attacher") or ""), str(spec.get("nodeName") or "")
    causes = [] if attacher else [required("spec.attacher")]
    causes += _source(as_dict(spec.get("source")))
    causes += invalids("spec.nodeName", node, dns1123_subdomain_errors(node))
    metadata = as_dict(status.get("attachmentMetadata"))
    size = sum(len(str(k).encode()) + len(str(v).encode()) for k, v in metadata.items())
    if size > _MAX_METADATA_SIZE:
        causes.append(too_long("status.attachmentMetadata", _MAX_METADATA_SIZE))
    for key in ("attachError", "detachError"):
        causes += _volume_error(status.get(key), f"status.{key}")
    return causes


def _v1_causes(spec: Obj) -> Causes:
    """ValidateVolumeAttachmentV1 (on create only): the attacher is a CSI driver name, a
    persistent volume's name a DNS subdomain."""
    causes = csi_driver_name_causes(str(spec.get("attacher") or ""), "spec.attacher")
    pv_name = as_dict(spec.get("source")).get("persistentVolumeName")
    if isinstance(pv_name, str):
        field = "spec.source.persistentVolumeName"
        causes += invalids(field, pv_name, dns1123_subdomain_errors(pv_name))
    return causes


def _attachment_spec(spec: Obj) -> str:
    """A VolumeAttachmentSpec as Go's ``%#v`` prints it."""
    source = as_dict(spec.get("source"))
    pv = POINTER if source.get("persistentVolumeName") is not None else "nil"
    inline = POINTER if source.get("inlineVolumeSpec") is not None else "nil"
    return (
        f"storage.VolumeAttachmentSpec{{Attacher:{go_quote(str(spec.get('attacher') or ''))}, "
        f"Source:storage.VolumeAttachmentSource{{PersistentVolumeName:(*string)({pv}), "
        f"InlineVolumeSpec:(*core.PersistentVolumeSpec)({inline})}}, "
        f"NodeName:{go_quote(str(spec.get('nodeName') or ''))}}}"
    )


def _volume_attachment(write: Write) -> Causes:
    causes = _attachment_causes(write.obj)
    if write.old is None:
        return causes + _v1_causes(as_dict(write.obj.get("spec")))
    causes += _attachment_causes(write.obj)
    spec = as_dict(write.obj.get("spec"))
    if semantic(spec) != semantic(as_dict(write.old.get("spec"))):
        causes.append(invalid("spec", _attachment_spec(spec), "field is immutable", rendered=True))
    return causes


def _driver_causes(driver: Obj, field: str, names: set[str]) -> Causes:
    """validateCSINodeDriver: name, node ID, allocatable count, unique names and topology
    keys (each a qualified name, none empty or repeated; reported at the driver)."""
    name, node_id = str(driver.get("name") or ""), str(driver.get("nodeID") or "")
    causes = csi_driver_name_causes(name, f"{field}.name")
    if not node_id:
        causes.append(required(f"{field}.nodeID"))
    if len(node_id) > _MAX_NODE_ID:
        detail = f"must be {_MAX_NODE_ID} characters or less"
        causes.append(invalid(f"{field}.nodeID", node_id, detail))
    count = as_dict(driver.get("allocatable")).get("count")
    causes += nonnegative(f"{field}.allocatable.count", count)
    if name in names:
        causes.append(duplicate(f"{field}.name", name))
    names.add(name)
    keys: set[str] = set()
    for key in (str(k) for k in as_list(driver.get("topologyKeys"))):
        if not key:
            causes.append(required(field))
        if key in keys:
            causes.append(duplicate(field, key))
        keys.add(key)
        causes += invalids(field, key, qualified_name_errors(key))
    return causes


def _csi_node_causes(obj: Obj) -> Causes:
    names: set[str] = set()
    drivers = as_list(as_dict(obj.get("spec")).get("drivers"))
    causes: Causes = []
    for i, driver in enumerate(drivers):
        causes += _driver_causes(as_dict(driver), f"spec.drivers[{i}]", names)
    return causes


def _csi_node_driver(driver: Obj) -> str:
    """A CSINodeDriver as Go's ``%#v`` prints it."""
    allocatable = POINTER if driver.get("allocatable") is not None else "nil"
    return (
        f"storage.CSINodeDriver{{Name:{go_quote(str(driver.get('name') or ''))}, "
        f"NodeID:{go_quote(str(driver.get('nodeID') or ''))}, "
        f"TopologyKeys:{strings(driver.get('topologyKeys'))}, "
        f"Allocatable:(*storage.VolumeNodeResources)({allocatable})}}"
    )


def _csi_node(write: Write) -> Causes:
    """ValidateCSINode; on an update again, then no driver named in both may change."""
    causes = _csi_node_causes(write.obj)
    if write.old is None:
        return causes
    causes += _csi_node_causes(write.obj)
    new = [as_dict(d) for d in as_list(as_dict(write.obj.get("spec")).get("drivers"))]
    for old in (as_dict(d) for d in as_list(as_dict(write.old.get("spec")).get("drivers"))):
        for driver in new:
            if driver.get("name") == old.get("name") and semantic(driver) != semantic(old):
                shown = _csi_node_driver(driver)
                causes.append(invalid("CSINodeDriver", shown, "field is immutable", rendered=True))
    return causes


VALIDATORS: dict[tuple[str, str], Validator] = {
    (GROUP, "volumeattachments"): _volume_attachment,
    (GROUP, "csinodes"): _csi_node,
}
