"""Validation of core/v1 PersistentVolumeClaims (kubernetes pkg/apis/core/validation
ValidatePersistentVolumeClaim, ValidatePersistentVolumeClaimUpdate, the status update's
capacity)."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from ....meta.validation import dns1123_subdomain_errors
from ..quantity import QuantityError, amount
from ..store import Obj
from .common import Causes, Validator, Write, forbidden, invalid, invalids, not_supported, required
from .gorender import spec_diff
from .rules import label_selector_causes

_BETA_CLASS = "volume.beta.kubernetes.io/storage-class"
_ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
_VOLUME_MODES = ("Block", "Filesystem")
_IMMUTABLE = (
    "spec is immutable after creation except resources.requests and"
    " volumeAttributesClassName for bound claims"
)


def _access_modes(spec: Obj) -> Causes:
    modes = spec.get("accessModes") or []
    if not modes:
        return [required("spec.accessModes", "at least 1 access mode is required")]
    causes = [
        not_supported("spec.accessModes", mode, _ACCESS_MODES)
        for mode in modes
        if mode not in _ACCESS_MODES
    ]
    known = [mode for mode in modes if mode in _ACCESS_MODES]
    if "ReadWriteOncePod" in known and any(m != "ReadWriteOncePod" for m in known):
        causes.append(
            forbidden("spec.accessModes", "may not use ReadWriteOncePod with other access modes")
        )
    return causes


def _storage(spec: Obj) -> Causes:
    """The storage request: required and greater than zero."""
    requests = (spec.get("resources") or {}).get("requests") or {}
    field = "spec.resources[storage]"
    if "storage" not in requests:
        return [required(field)]
    value = _size(requests["storage"])
    if value is not None and value <= 0:
        return [invalid(field, str(requests["storage"]), "must be greater than zero")]
    return []


def _size(value: Any) -> Fraction | None:
    try:
        return amount(value)
    except QuantityError:
        return None


def validate_claim_spec(spec: Obj) -> Causes:
    """ValidatePersistentVolumeClaimSpec (without the data source references)."""
    causes = _access_modes(spec)
    causes += label_selector_causes("spec.selector", spec.get("selector"))
    causes += _storage(spec)
    storage_class = spec.get("storageClassName")
    if storage_class:
        causes += invalids(
            "spec.storageClassName", storage_class, dns1123_subdomain_errors(storage_class)
        )
    mode = spec.get("volumeMode")
    if mode is not None and mode not in _VOLUME_MODES:
        causes.append(not_supported("spec.volumeMode", mode, _VOLUME_MODES))
    return causes + _data_sources(spec)


def _source_causes(source: dict[str, Any], field: str) -> Causes:
    """validateDataSource / validateDataSourceRef."""
    causes = [] if source.get("name") else [required(f"{field}.name")]
    kind, group = str(source.get("kind") or ""), str(source.get("apiGroup") or "")
    if not kind:
        causes.append(required(f"{field}.kind"))
    if not group and kind != "PersistentVolumeClaim":
        detail = "must be 'PersistentVolumeClaim' when referencing the default apiGroup"
        causes.append(invalid(field, kind, detail))
    if group:
        causes += invalids(f"{field}.apiGroup", group, dns1123_subdomain_errors(group))
    return causes


def _data_sources(spec: Obj) -> Causes:
    """The data source and its reference: valid, and the same when both are given."""
    source, ref = spec.get("dataSource"), spec.get("dataSourceRef")
    causes: Causes = []
    if isinstance(source, dict):
        causes += _source_causes(source, "spec.dataSource")
    if isinstance(ref, dict):
        causes += _source_causes(ref, "spec.dataSourceRef")
    if isinstance(source, dict) and isinstance(ref, dict) and not ref.get("namespace"):
        keys = ("apiGroup", "kind", "name")
        if any((source.get(k) or "") != (ref.get(k) or "") for k in keys):
            shown = 'field.Path{name:"dataSource", index:"", parent:(*field.Path)(0x0)}'
            causes.append(invalid("spec", shown, "must match dataSourceRef", rendered=True))
    return causes


def _status(status: Obj) -> Causes:
    """ValidatePersistentVolumeClaimStatusUpdate: capacity quantities (validateBasicResource)."""
    capacity = status.get("capacity") or {}
    causes: Causes = []
    for name in sorted(capacity):
        value = _size(capacity[name])
        if value is not None and math.ceil(value) < 0:
            field = f"status.capacity[{name}]"
            causes.append(invalid(field, math.ceil(value), "must be a valid resource quantity"))
    return causes


def _storage_of(obj: Obj) -> Any:
    return (((obj.get("spec") or {}).get("resources") or {}).get("requests") or {}).get("storage")


def _update(new: Obj, old: Obj) -> Causes:
    """The spec is immutable, but for a bound claim's storage request, a volume name set
    once and a storage class set on a claim without one (validateStorageClassUpgradeFromNil,
    RetroactiveDefaultStorageClass being GA) (the message's go-cmp diff framed as
    gorender.spec_diff)."""
    spec, old_spec = dict(new.get("spec") or {}), dict(old.get("spec") or {})
    if not old_spec.get("volumeName"):
        old_spec["volumeName"] = spec.get("volumeName")
    beta = ((old.get("metadata") or {}).get("annotations") or {}).get(_BETA_CLASS)
    if not beta and old_spec.get("storageClassName") is None:
        spec.pop("storageClassName", None)
    bound = (new.get("status") or {}).get("phase") == "Bound"
    if bound:
        spec["resources"] = {**(spec.get("resources") or {})}
        spec["resources"]["requests"] = {
            **(spec["resources"].get("requests") or {}),
            "storage": _storage_of(old),
        }
    causes: Causes = []
    if _normal(spec) != _normal(old_spec):
        diff = spec_diff("PersistentVolumeClaimSpec", old_spec, spec)
        causes.append(forbidden("spec", f"{_IMMUTABLE}\n{diff}"))
    new_size, old_size = _size(_storage_of(new)), _size(_storage_of(old))
    capacity = _size(((old.get("status") or {}).get("capacity") or {}).get("storage", "0"))
    shrunk = new_size is not None and old_size is not None and new_size < old_size
    if shrunk and capacity is not None and new_size is not None and new_size <= capacity:
        causes.append(
            forbidden(
                "spec.resources.requests.storage", "field can not be less than status.capacity"
            )
        )
    mode, old_mode = spec.get("volumeMode"), old_spec.get("volumeMode")
    if mode != old_mode:
        causes.append(invalid("volumeMode", mode, "field is immutable"))
    return causes


def _normal(spec: Obj) -> Obj:
    """The spec with its quantities compared by value and empty fields dropped."""
    out = {k: v for k, v in spec.items() if v not in (None, "", [], {})}
    resources = out.get("resources") or {}
    out["resources"] = {
        kind: {name: _size(q) for name, q in (resources.get(kind) or {}).items()}
        for kind in ("requests", "limits")
    }
    return out


def _claim(write: Write) -> Causes:
    if write.subresource == "status":
        return _status(write.obj.get("status") or {})
    if write.subresource:
        return []
    update = [] if write.old is None else _update(write.obj, write.old)
    return validate_claim_spec(write.obj.get("spec") or {}) + update


VALIDATORS: dict[tuple[str, str], Validator] = {("", "persistentvolumeclaims"): _claim}
