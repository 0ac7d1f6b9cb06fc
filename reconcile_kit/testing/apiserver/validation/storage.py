"""Validation of storage.k8s.io kinds (kubernetes pkg/apis/storage/validation)."""

from __future__ import annotations

from ....meta.validation import dns1123_subdomain_errors
from .. import errors
from ..store import Obj
from .common import Causes, Validator, on_object


def _csi_storage_capacity(obj: Obj) -> Causes:
    """storageClassName is a DNS subdomain (pkg/apis/storage/validation
    ValidateCSIStorageCapacity; the rest is not checked)."""
    name = obj.get("storageClassName")
    value = name if isinstance(name, str) else ""
    return [
        errors.cause("FieldValueInvalid", "storageClassName", f'Invalid value: "{value}": {text}')
        for text in dns1123_subdomain_errors(value)
    ]


VALIDATORS: dict[tuple[str, str], Validator] = {
    ("storage.k8s.io", "csistoragecapacities"): on_object(_csi_storage_capacity),
}
