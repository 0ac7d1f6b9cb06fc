"""Validation of core/v1 kinds other than Pods and Events (kubernetes
pkg/apis/core/validation)."""

from __future__ import annotations

from .. import errors
from ..store import Obj
from .common import Causes, Validator, Write

_TYPED_SECRET_KEYS = {
    "kubernetes.io/tls": ("tls.crt", "tls.key"),
    "kubernetes.io/dockerconfigjson": (".dockerconfigjson",),
    "kubernetes.io/dockercfg": (".dockercfg",),
    "kubernetes.io/ssh-auth": ("ssh-privatekey",),
}


def _secret(obj: Obj) -> Causes:
    """The data keys a typed Secret needs (pkg/apis/core/validation ValidateSecret)."""
    data = obj.get("data") or {}
    required = _TYPED_SECRET_KEYS.get(str(obj.get("type") or ""), ())
    return [
        errors.cause("FieldValueRequired", f"data[{key}]", "Required value")
        for key in required
        if key not in data
    ]


def _service(obj: Obj) -> Causes:
    """A Service's port names (pkg/apis/core/validation ``validateServicePort``): each is
    required when there is more than one port, and unique."""
    ports = (obj.get("spec") or {}).get("ports") or []
    causes: Causes = []
    seen: set[str] = set()
    for i, port in enumerate(ports):
        name = str((port or {}).get("name") or "")
        field = f"spec.ports[{i}].name"
        if not name:
            if len(ports) > 1:
                causes.append(errors.cause("FieldValueRequired", field, "Required value"))
            continue
        if name in seen:
            causes.append(errors.cause("FieldValueDuplicate", field, f'Duplicate value: "{name}"'))
        seen.add(name)
    return causes


def _update_causes(plural: str, new: Obj, old: Obj) -> Causes:
    """Causes of kind-specific update validation: immutable ConfigMaps and Secrets, a
    Secret's type (pkg/apis/core/validation ValidateConfigMapUpdate/ValidateSecretUpdate)."""
    causes: Causes = []
    if plural == "secrets" and (new.get("type") or "Opaque") != (old.get("type") or "Opaque"):
        causes.append(
            errors.cause(
                "FieldValueInvalid",
                "type",
                f'Invalid value: "{new.get("type")}": field is immutable',
            )
        )
    if old.get("immutable") is True:
        forbidden = "Forbidden: field is immutable when `immutable` is set"
        for field in ("immutable", "data", "binaryData"):
            if new.get(field) != old.get(field):
                causes.append(errors.cause("FieldValueForbidden", field, forbidden))
    return causes


def _configmap(write: Write) -> Causes:
    return [] if write.old is None else _update_causes("configmaps", write.obj, write.old)


def _secret_write(write: Write) -> Causes:
    update = [] if write.old is None else _update_causes("secrets", write.obj, write.old)
    return update + _secret(write.obj)


def _service_write(write: Write) -> Causes:
    return _service(write.obj)


VALIDATORS: dict[tuple[str, str], Validator] = {
    ("", "configmaps"): _configmap,
    ("", "secrets"): _secret_write,
    ("", "services"): _service_write,
}
