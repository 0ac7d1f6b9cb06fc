"""Validation of core/v1 ConfigMaps, Secrets and Namespaces (kubernetes
pkg/apis/core/validation ValidateConfigMap, ValidateSecret, ValidateNamespace and their
updates). Services: services.py; PersistentVolumeClaims: claims.py."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from ....meta.validation import qualified_name_errors
from ..store import Obj
from .common import Causes, Validator, Write, forbidden, invalid, invalids, required, too_long
from .rules import config_key_errors

MAX_SECRET_SIZE = 1024 * 1024
_STANDARD_FINALIZERS = ("kubernetes", "orphan", "foregroundDeletion")
_SA_NAME_KEY = "kubernetes.io/service-account.name"


def _decoded_len(value: Any) -> int:
    """The byte length of a base64 ``[]byte`` value (of a string value, its UTF-8)."""
    try:
        return len(base64.b64decode(str(value), validate=False))
    except (binascii.Error, ValueError):
        return len(str(value).encode())


def _keys(field: str, data: Any) -> Causes:
    causes: Causes = []
    for key in data or {}:
        causes += invalids(f"{field}[{key}]", key, config_key_errors(key))
    return causes


def validate_configmap(obj: Obj) -> Causes:
    """ValidateConfigMap: data and binaryData keys, no key in both, 1 MiB in all."""
    data, binary = obj.get("data") or {}, obj.get("binaryData") or {}
    causes = _keys("data", data)
    causes += [
        invalid(f"data[{key}]", key, "duplicate of key present in binaryData")
        for key in data
        if key in binary
    ]
    causes += _keys("binaryData", binary)
    size = sum(len(str(v).encode()) for v in data.values())
    size += sum(_decoded_len(v) for v in binary.values())
    if size > MAX_SECRET_SIZE:
        causes.append(too_long("[]", MAX_SECRET_SIZE))  # field.NewPath("")
    return causes


def _json_causes(data: Obj, key: str) -> Causes:
    """A docker config Secret's key must hold a JSON object (Go's decoder message is only
    matched for text that does not start like JSON)."""
    try:
        decoded = base64.b64decode(str(data[key]))
    except (binascii.Error, ValueError):
        decoded = b""
    try:
        if isinstance(json.loads(decoded), dict):
            return []
    except ValueError:
        pass
    first = decoded[:1].decode(errors="replace")
    return [
        invalid(
            f"data[{key}]",
            "<secret contents redacted>",
            f"invalid character '{first}' looking for beginning of value",
        )
    ]


def _typed_secret(obj: Obj) -> Causes:
    """The keys (or annotation) each built-in Secret type needs."""
    data = obj.get("data") or {}
    kind = obj.get("type") or ""
    if kind == "kubernetes.io/service-account-token":
        annotations = obj["metadata"].get("annotations") or {}
        if not annotations.get(_SA_NAME_KEY):
            return [required(f"metadata.annotations[{_SA_NAME_KEY}]")]
    docker_keys = {
        "kubernetes.io/dockercfg": ".dockercfg",
        "kubernetes.io/dockerconfigjson": ".dockerconfigjson",
    }
    if kind in docker_keys:
        key = docker_keys[kind]
        return [required(f"data[{key}]")] if key not in data else _json_causes(data, key)
    if kind == "kubernetes.io/basic-auth" and "username" not in data and "password" not in data:
        return [required("data[username]"), required("data[password]")]
    if kind == "kubernetes.io/ssh-auth" and not data.get("ssh-privatekey"):
        return [required("data[ssh-privatekey]")]
    if kind == "kubernetes.io/tls":
        return [required(f"data[{k}]") for k in ("tls.crt", "tls.key") if k not in data]
    return []


def validate_secret(obj: Obj) -> Causes:
    """ValidateSecret: data keys, 1 MiB of data, the type's required keys."""
    data = obj.get("data") or {}
    causes = _keys("data", data)
    if sum(_decoded_len(v) for v in data.values()) > MAX_SECRET_SIZE:
        causes.append(too_long("data", MAX_SECRET_SIZE))
    return causes + _typed_secret(obj)


def _immutable(write: Write, fields: tuple[str, ...]) -> Causes:
    """Once ``immutable`` is true, it and the data fields stay as they are (compared as
    reflect.DeepEqual does: an empty map sent is not the nil map of an object without)."""
    new, old = write.obj, write.old or {}
    if old.get("immutable") is not True:
        return []
    why = "field is immutable when `immutable` is set"
    causes = [forbidden("immutable", why)] if new.get("immutable") is not True else []
    sent = write.sent or new
    changed = [f for f in fields if _sent(new, sent, f) != old.get(f)]
    return causes + [forbidden(field, why) for field in changed]


def _sent(new: Obj, sent: Obj, field: str) -> Any:
    """``field`` as the update's decoded object holds it: an empty map sent stays one, but
    for a ConfigMap's ``data``, where kube-apiserver 1.32.5 accepts ``data: {}`` on an
    immutable ConfigMap without data (measured: its ``binaryData: {}`` and a Secret's
    ``data: {}`` are refused)."""
    value = new.get(field)
    if value is None and (new.get("kind"), field) != ("ConfigMap", "data"):
        value = sent.get(field)
    return value


def _configmap(write: Write) -> Causes:
    """ValidateConfigMap / ValidateConfigMapUpdate."""
    update = [] if write.old is None else _immutable(write, ("data", "binaryData"))
    return update + validate_configmap(write.obj)


def _secret(write: Write) -> Causes:
    """ValidateSecret / ValidateSecretUpdate (the type is immutable)."""
    causes: Causes = []
    if write.old is not None:
        kind, old_kind = write.obj.get("type") or "", write.old.get("type") or ""
        if kind != old_kind:
            causes.append(invalid("type", kind, "field is immutable"))
        causes += _immutable(write, ("data",))
    return causes + validate_secret(write.obj)


def _namespace(write: Write) -> Causes:
    """ValidateNamespace: each spec finalizer a qualified name, standard or with a
    prefix (an update keeps the stored spec, so only a create is checked);
    ValidateNamespaceFinalizeUpdate (each finalizer, by index) and
    ValidateNamespaceStatusUpdate (the phase against the deletion timestamp)."""
    finalizers = (write.obj.get("spec") or {}).get("finalizers") or []
    if write.subresource == "finalize":
        return [
            cause
            for index, name in enumerate(finalizers)
            for cause in _finalizer_name(name, f"spec.finalizers[{index}]")
        ]
    if write.subresource == "status":
        phase = (write.obj.get("status") or {}).get("phase") or ""
        if not write.obj["metadata"].get("deletionTimestamp"):
            if phase != "Active":
                detail = "may only be 'Active' if `deletionTimestamp` is empty"
                return [invalid("status.Phase", phase, detail)]
        elif phase != "Terminating":
            detail = "may only be 'Terminating' if `deletionTimestamp` is not empty"
            return [invalid("status.Phase", phase, detail)]
        return []
    if write.old is not None:
        return []
    return [cause for name in finalizers for cause in _finalizer_name(name, "spec.finalizers")]


def _finalizer_name(name: str, field: str) -> Causes:
    """core validateFinalizerName: a qualified name, standard or with a prefix."""
    causes = invalids(field, name, qualified_name_errors(name))
    if "/" not in name and name not in _STANDARD_FINALIZERS:
        detail = "name is neither a standard finalizer name nor is it fully qualified"
        causes.append(invalid(field, name, detail))
    return causes


VALIDATORS: dict[tuple[str, str], Validator] = {
    ("", "configmaps"): _configmap,
    ("", "secrets"): _secret,
    ("", "namespaces"): _namespace,
}
