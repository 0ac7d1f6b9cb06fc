"""The OwnerReferencesPermissionEnforcement admission plugin (k8s.io/kubernetes
plugin/pkg/admission/gc), on in the embedded server's RBAC mode: changing an object's
ownerReferences needs ``delete`` on it (except at create), and setting
``blockOwnerDeletion`` needs ``update`` on the owner's ``<resource>/finalizers``.

Deliberate difference: kube-apiserver maps an owner's kind with a RESTMapper refreshed
every 30 s (k8s.io/apiserver pkg/server/options/admission.go), so a CRD created moments
before is refused with "cannot find RESTMapping" for up to 30 s; here the kind is known
as soon as the CRD's resources are served.
"""

from __future__ import annotations

from typing import Any

from . import errors
from .authn import User
from .rbac import Attributes, Authorizer
from .registry import Registry
from .resources import ResourceType
from .store import Obj

__all__ = ["check_owner_references"]


def check_owner_references(
    authorizer: Authorizer,
    registry: Registry,
    user: User,
    rt: ResourceType,
    new: Obj,
    old: Obj | None,
    subresource: str,
) -> None:
    """Raise kube-apiserver's 403 when ``user`` may not make ``new``'s owner references."""
    if (rt.plural, subresource) == ("pods", "status"):  # the plugin's whitelist
        return
    refs = _refs(new)
    old_refs = _refs(old) if old is not None else None
    if (old_refs is not None and refs == old_refs) or (old_refs is None and not refs):
        return
    meta = new.get("metadata") or {}
    namespace, name = meta.get("namespace") or "", meta.get("name") or ""
    if old is not None:
        delete = Attributes(user, "delete", True, rt.group, rt.plural, subresource, namespace, name)
        if not authorizer.allowed(delete):
            why = "cannot set an ownerRef on a resource you can't delete: , <nil>"
            raise errors.forbidden(rt.group, rt.plural, name, why)
    blocking = _new_blocking(refs, old_refs or [])
    if not blocking:
        return
    anything = Attributes(user, "update", True, "*", "*", "finalizers")
    if authorizer.allowed(anything):
        return
    for ref in blocking:
        owner = _owner_type(registry, ref)
        if owner is None:
            why = (
                "cannot set blockOwnerDeletion in this case because cannot find RESTMapping "
                f"for APIVersion {ref.get('apiVersion')} Kind {ref.get('kind')}: no matches "
                f'for kind "{ref.get("kind")}" in version "{ref.get("apiVersion")}"'
            )
            raise errors.forbidden(rt.group, rt.plural, name, why)
        record = Attributes(
            user,
            "update",
            True,
            owner.group,
            owner.plural,
            "finalizers",
            namespace if owner.namespaced else "",
            str(ref.get("name", "")),
        )
        if not authorizer.allowed(record):
            why = (
                "cannot set blockOwnerDeletion if an ownerReference refers to a resource you "
                "can't set finalizers on: , <nil>"
            )
            raise errors.forbidden(rt.group, rt.plural, name, why)


def _refs(obj: Obj | None) -> list[dict[str, Any]]:
    return list(((obj or {}).get("metadata") or {}).get("ownerReferences") or [])


def _new_blocking(refs: list[dict[str, Any]], old: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """References that block owner deletion and did not before (by uid)."""
    blocked_before = {r.get("uid") for r in old if r.get("blockOwnerDeletion")}
    return [r for r in refs if r.get("blockOwnerDeletion") and r.get("uid") not in blocked_before]


def _owner_type(registry: Registry, ref: dict[str, Any]) -> ResourceType | None:
    group, _, version = str(ref.get("apiVersion", "")).rpartition("/")
    for rt in registry.resources(group, version):
        if rt.kind == ref.get("kind"):
            return rt
    return None
