"""Validation of RuntimeClasses (kubernetes pkg/apis/node/validation), ControllerRevisions
(pkg/apis/apps/validation ValidateControllerRevision and its update) and CSIDrivers
(pkg/apis/storage/validation ValidateCSIDriver and its update).

Left out: a RuntimeClass's duplicate tolerations (the cause prints a Go struct); a
ControllerRevision's data is compared as JSON values (kube-apiserver compares the raw
bytes, so it refuses every merge, strategic or JSON patch of one, even one that leaves
the data alone) and its immutable-data message shows the data as compact JSON."""

from __future__ import annotations

import json
from typing import Any

from ....meta.validation import dns1123_label_errors
from ..gofmt import go_quote
from ..store import Obj
from .common import (
    Causes,
    Validator,
    Write,
    as_dict,
    as_list,
    duplicate,
    invalid,
    invalids,
    nonnegative,
    not_supported,
    required,
)
from .resources import requirements_causes
from .rules import labels_causes
from .scheduling import tolerations_causes

_FS_GROUP_POLICIES = ("File", "None", "ReadWriteOnceWithFSType")
_LIFECYCLE_MODES = ("Persistent", "Ephemeral")


def _runtime_class(write: Write) -> Causes:
    """ValidateRuntimeClass, then on an update the immutable handler."""
    obj = write.obj
    handler = str(obj.get("handler") or "")
    causes = invalids("handler", handler, dns1123_label_errors(handler))
    overhead = obj.get("overhead")
    if isinstance(overhead, dict):
        causes += requirements_causes({"limits": overhead.get("podFixed")}, "overhead")
    scheduling = obj.get("scheduling")
    if isinstance(scheduling, dict):
        if scheduling.get("nodeSelector") is not None:
            causes += labels_causes("scheduling.nodeSelector", scheduling["nodeSelector"])
        tolerations = as_list(scheduling.get("tolerations"))
        causes += tolerations_causes(tolerations, "scheduling.tolerations.tolerations")
    if write.old is not None and handler != str(write.old.get("handler") or ""):
        causes.append(invalid("handler", handler, "field is immutable"))
    return causes


def raw_extension(data: Any) -> str:
    """A runtime.RawExtension holding ``data`` as Go's ``%#v`` prints it (the JSON
    compact)."""
    if data is None:
        return "runtime.RawExtension{Raw:[]uint8(nil), Object:runtime.Object(nil)}"
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    raw = ", ".join(f"0x{byte:x}" for byte in text.encode())
    return f"runtime.RawExtension{{Raw:[]uint8{{{raw}}}, Object:runtime.Object(nil)}}"


def _controller_revision(write: Write) -> Causes:
    """ValidateControllerRevision on create (data a JSON object); on an update the
    revision and the immutable data."""
    obj = write.obj
    causes = nonnegative("revision", obj.get("revision"))
    data = obj.get("data")
    if write.old is not None:
        if data != write.old.get("data"):
            causes.append(invalid("data", raw_extension(data), "field is immutable", rendered=True))
        return causes
    if data is None:
        causes.append(required("data", "data is mandatory"))
    elif not isinstance(data, dict):
        causes.append(required("data", "data must be a valid JSON object"))
    return causes


def _token_requests(requests: list[Any]) -> Causes:
    causes: Causes = []
    audiences: set[str] = set()
    for i, request in enumerate(requests):
        request, path = as_dict(request), f"spec.tokenRequests[{i}]"
        audience = str(request.get("audience") or "")
        if audience in audiences:
            causes.append(duplicate(f"{path}.audience", audience))
            continue
        audiences.add(audience)
        seconds = request.get("expirationSeconds")
        if not isinstance(seconds, int):
            continue
        if seconds < 600:
            detail = "may not specify a duration less than 10 minutes"
            causes.append(invalid(f"{path}.expirationSeconds", seconds, detail))
        if seconds > 1 << 32:
            detail = "may not specify a duration larger than 2^32 seconds"
            causes.append(invalid(f"{path}.expirationSeconds", seconds, detail))
    return causes


def _csi_spec(spec: Obj) -> Causes:
    """validateCSIDriverSpec (the defaulted booleans are always set)."""
    causes: Causes = []
    policy = spec.get("fsGroupPolicy")
    if policy is not None and policy not in _FS_GROUP_POLICIES:
        causes.append(not_supported("spec.fsGroupPolicy", policy, _FS_GROUP_POLICIES))
    causes += _token_requests(as_list(spec.get("tokenRequests")))
    for mode in as_list(spec.get("volumeLifecycleModes")):
        if mode not in _LIFECYCLE_MODES:
            causes.append(not_supported("spec.volumeLifecycleModes", mode, _LIFECYCLE_MODES))
    return causes


def _modes(value: Any) -> str:
    items = ", ".join(go_quote(str(m)) for m in as_list(value))
    return "[]storage.VolumeLifecycleMode{" + items + "}"


def _csi_driver(write: Write) -> Causes:
    """ValidateCSIDriver, then on an update the immutable attachRequired (reported at
    kubernetes' misspelt ``spec.attachedRequired``) and volumeLifecycleModes."""
    spec = as_dict(write.obj.get("spec"))
    causes = _csi_spec(spec)
    if write.old is None:
        return causes
    old = as_dict(write.old.get("spec"))
    attach = spec.get("attachRequired")
    if attach != old.get("attachRequired"):
        causes.append(invalid("spec.attachedRequired", attach, "field is immutable"))
    modes = spec.get("volumeLifecycleModes")
    if as_list(modes) != as_list(old.get("volumeLifecycleModes")):
        shown = _modes(modes)
        causes.append(
            invalid("spec.volumeLifecycleModes", shown, "field is immutable", rendered=True)
        )
    return causes


VALIDATORS: dict[tuple[str, str], Validator] = {
    ("node.k8s.io", "runtimeclasses"): _runtime_class,
    ("apps", "controllerrevisions"): _controller_revision,
    ("storage.k8s.io", "csidrivers"): _csi_driver,
}
