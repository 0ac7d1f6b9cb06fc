"""Validation of storage.k8s.io kinds (kubernetes pkg/apis/storage/validation):
StorageClasses (ValidateStorageClass/Update, without the allowed topologies' terms) and
CSIStorageCapacities (the storage class name)."""

from __future__ import annotations

from ....meta.validation import dns1123_subdomain_errors, qualified_name_errors
from .. import errors
from ..gofmt import go_quote
from ..store import Obj
from .common import (
    Causes,
    Validator,
    Write,
    forbidden,
    immutable,
    invalid,
    not_supported,
    on_object,
    required,
    too_long,
)

GROUP = "storage.k8s.io"
_RECLAIM_POLICIES = ("Delete", "Retain")
_BINDING_MODES = ("Immediate", "WaitForFirstConsumer")
_MAX_PARAMETERS = 512
_MAX_PARAMETERS_SIZE = 256 * 1024


def _csi_storage_capacity(obj: Obj) -> Causes:
    """storageClassName is a DNS subdomain (pkg/apis/storage/validation
    ValidateCSIStorageCapacity; the rest is not checked)."""
    name = obj.get("storageClassName")
    value = name if isinstance(name, str) else ""
    return [
        errors.cause("FieldValueInvalid", "storageClassName", f'Invalid value: "{value}": {text}')
        for text in dns1123_subdomain_errors(value)
    ]


def _provisioner(provisioner: str) -> Causes:
    if not provisioner:
        return [required("provisioner")]
    lowered = provisioner.lower()
    return [invalid("provisioner", lowered, text) for text in qualified_name_errors(lowered)]


def _parameters(params: dict[str, str]) -> Causes:
    if len(params) > _MAX_PARAMETERS:
        return [too_long("parameters", _MAX_PARAMETERS)]
    causes = [invalid("parameters", k, "field can not be empty.") for k in params if not k]
    if sum(len(k) + len(str(v)) for k, v in params.items()) > _MAX_PARAMETERS_SIZE:
        causes.append(too_long("parameters", _MAX_PARAMETERS_SIZE))
    return causes


def _storage_class(obj: Obj) -> Causes:
    """ValidateStorageClass (reclaimPolicy and volumeBindingMode are defaulted)."""
    causes = _provisioner(str(obj.get("provisioner") or ""))
    causes += _parameters(obj.get("parameters") or {})
    policy = obj.get("reclaimPolicy") or ""
    if policy and policy not in _RECLAIM_POLICIES:
        causes.append(not_supported("reclaimPolicy", policy, _RECLAIM_POLICIES))
    mode = obj.get("volumeBindingMode")
    if mode is None:
        causes.append(required("volumeBindingMode"))
    elif mode not in _BINDING_MODES:
        causes.append(not_supported("volumeBindingMode", mode, _BINDING_MODES))
    return causes


def _storage_class_update(new: Obj, old: Obj) -> Causes:
    """ValidateStorageClassUpdate: parameters, provisioner, reclaimPolicy and
    volumeBindingMode are immutable."""
    causes: Causes = []
    if (new.get("parameters") or {}) != (old.get("parameters") or {}):
        causes.append(forbidden("parameters", "updates to parameters are forbidden."))
    if new.get("provisioner") != old.get("provisioner"):
        causes.append(forbidden("provisioner", "updates to provisioner are forbidden."))
    if new.get("reclaimPolicy") != old.get("reclaimPolicy"):
        causes.append(forbidden("reclaimPolicy", "updates to reclaimPolicy are forbidden."))
    mode = new.get("volumeBindingMode")
    shown = go_quote(str(mode)) if mode is not None else "null"
    return causes + immutable("volumeBindingMode", mode, old.get("volumeBindingMode"), shown)


def _storage_class_write(write: Write) -> Causes:
    """ValidateStorageClass, then on an update ValidateStorageClassUpdate."""
    causes = _storage_class(write.obj)
    return causes if write.old is None else causes + _storage_class_update(write.obj, write.old)


VALIDATORS: dict[tuple[str, str], Validator] = {
    (GROUP, "csistoragecapacities"): on_object(_csi_storage_capacity),
    (GROUP, "storageclasses"): _storage_class_write,
}
