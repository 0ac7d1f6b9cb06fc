"""The PersistentVolumeClaimResize admission plugin (k8s.io/kubernetes
plugin/pkg/admission/storage/persistentvolume/resize), on by default in kube-apiserver:
a claim's storage request grows only once it is bound, and only when its StorageClass
has ``allowVolumeExpansion``."""

from __future__ import annotations

from typing import Any

from . import errors
from .quantity import QuantityError, amount
from .resources import ResourceType
from .store import Obj, Store

__all__ = ["check_resize"]

_CLASSES = "storage.k8s.io/storageclasses"
_BETA_CLASS = "volume.beta.kubernetes.io/storage-class"


def _storage(claim: Obj) -> Any:
    requests = ((claim.get("spec") or {}).get("resources") or {}).get("requests") or {}
    try:
        return amount(requests.get("storage", "0"))
    except QuantityError:
        return 0


def _class(claim: Obj) -> str:
    """helper.GetPersistentVolumeClaimClass: the beta annotation, else the field."""
    annotations = claim["metadata"].get("annotations") or {}
    if _BETA_CLASS in annotations:
        return str(annotations[_BETA_CLASS])
    return str((claim.get("spec") or {}).get("storageClassName") or "")


def check_resize(store: Store, rt: ResourceType, new: Obj, old: Obj, subresource: str) -> None:
    """Raise the plugin's 403 for an update that grows an unbound or unexpandable claim."""
    if (rt.group, rt.plural) != ("", "persistentvolumeclaims") or subresource:
        return
    if _storage(new) <= _storage(old):
        return
    name = new["metadata"]["name"]
    if (old.get("status") or {}).get("phase") != "Bound":
        why = "Only bound persistent volume claims can be expanded"
        raise errors.forbidden(rt.group, rt.plural, name, why)
    class_name, old_class = _class(new), _class(old)
    storage_class = store.get(_CLASSES, "", class_name) if class_name else None
    allowed = class_name == old_class and (storage_class or {}).get("allowVolumeExpansion")
    if not allowed:
        raise errors.forbidden(
            rt.group,
            rt.plural,
            name,
            "only dynamically provisioned pvc can be resized and the storageclass that"
            " provisions the pvc must support resize",
        )
