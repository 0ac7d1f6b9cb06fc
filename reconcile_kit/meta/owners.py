"""Owner references: controller and plain owners of an object.

Semantics follow controller-runtime's ``controllerutil`` (sigs.k8s.io/controller-runtime
pkg/controller/controllerutil: ``SetControllerReference``, ``SetOwnerReference``,
``RemoveOwnerReference``) and apimachinery's ``metav1.GetControllerOf``/``IsControlledBy``.
Kubernetes' garbage collector deletes a dependent once every owner it references (matched by
``uid``) is gone, so a reference must carry the owner's uid: the owner must exist.

Unlike kr8s's ``set_owner`` (which replaces the whole list with one controller reference),
these functions keep the other references and only edit the object locally; the PatchHelper
(or a create) sends the result.

Scope rules (controller-runtime's ``validateOwner``): a namespaced owner may only own objects
in its own namespace, and never a cluster-scoped object; a cluster-scoped owner may own
anything. Scope is detected as follows: a kr8s object says so itself (``.namespaced``; its
namespace is ``metadata.namespace`` or, when that is absent, the kr8s Api's default, which
is where kr8s would create it); a plain dict is namespaced exactly when it has a non-empty
``metadata.namespace``, so give dict children their namespace before setting an owner.
"""

from __future__ import annotations

from collections.abc import MutableMapping, MutableSequence
from typing import Any

from ..client.errors import AlreadyOwnedError, ObjectError, OwnerReferenceError
from .objects import (
    ObjectLike,
    accepts_models,
    describe_object,
    identity,
    nested_list,
    raw_of,
    set_or_drop,
)
from .shards import copy_shard_labels

__all__ = [
    "controller_of",
    "is_controlled_by",
    "owner_refs",
    "remove_owner_reference",
    "set_controller_reference",
    "set_owner_reference",
]

_IDENTITY = ("apiVersion", "kind", "name", "uid")


# --- reading ---------------------------------------------------------------------------------


@accepts_models
def owner_refs(obj: ObjectLike) -> list[dict[str, Any]]:
    """Copies (plain dicts) of ``metadata.ownerReferences``, in order; [] when there are none."""
    return [dict(ref) for ref in _refs(obj, create=False) or () if isinstance(ref, MutableMapping)]


@accepts_models
def controller_of(obj: ObjectLike) -> dict[str, Any] | None:
    """A copy of the owner reference with ``controller: true``, or None.

    As apimachinery's ``metav1.GetControllerOf`` (Kubernetes allows at most one).
    """
    return next((ref for ref in owner_refs(obj) if ref.get("controller") is True), None)


@accepts_models
def is_controlled_by(child: ObjectLike, owner: ObjectLike) -> bool:
    """Whether ``child``'s controller reference points at ``owner`` by uid.

    As apimachinery's ``metav1.IsControlledBy``; an owner without a uid controls nothing.
    """
    ref = controller_of(child)
    uid = _meta(owner).get("uid")
    return ref is not None and bool(uid) and ref.get("uid") == uid


# --- writing ---------------------------------------------------------------------------------


@accepts_models
def set_controller_reference(owner: ObjectLike, child: ObjectLike) -> None:
    """Make ``owner`` the controller of ``child`` (append or update its owner reference).

    Adds ``{apiVersion, kind, name, uid, controller: true, blockOwnerDeletion: true}`` to
    ``child``'s ``metadata.ownerReferences``, keeping the other references, as
    controller-runtime's ``controllerutil.SetControllerReference``. A reference to the same
    object (same uid, or same API group, kind and name, as controller-runtime's
    ``referSameObject``: an owner recreated under the same name) is updated in place, so
    calling this again is a no-op.

    When ``owner`` is assigned to a replica of a sharded ring (it carries
    ``shard.reconcile-kit.io/<ring>`` labels, see :mod:`reconcile_kit.meta.shards`),
    ``child`` gets the same labels, so that the owning replica's filtered ``owns()`` watch
    sees it.

    Args:
        owner: a kr8s object, dict or typed model that exists on the server (has ``metadata.uid``).
        child: a kr8s object, dict or typed model, changed in place.

    Raises:
        OwnerReferenceError: ``owner`` lacks apiVersion, kind, name or uid; or the scope rules
            (see the module docstring) forbid the reference.
        AlreadyOwnedError: another object is already ``child``'s controller.
    """
    ref = {**_reference(owner), "controller": True, "blockOwnerDeletion": True}
    _check_scope(owner, child)
    current = controller_of(child)
    if current is not None and not _same_object(current, ref):
        raise _error(
            AlreadyOwnedError,
            child,
            f"already controlled by {current.get('kind')} {current.get('name')} "
            f"(uid {current.get('uid')}); cannot make {describe_object(owner)} its controller",
        )
    _upsert(child, ref)
    copy_shard_labels(owner, child)


@accepts_models
def set_owner_reference(
    owner: ObjectLike, child: ObjectLike, *, block_owner_deletion: bool = False
) -> None:
    """Add ``owner`` as a non-controller owner of ``child`` (idempotent).

    As controller-runtime's ``controllerutil.SetOwnerReference``: the reference is
    ``{apiVersion, kind, name, uid}`` plus ``blockOwnerDeletion: true`` when asked (foreground
    deletion of the owner then waits for ``child``); a reference to the same object is
    updated in place. One difference: if ``owner`` already is ``child``'s controller, the
    reference is left as it is rather than demoted.

    Args:
        owner: a kr8s object, dict or typed model that exists on the server (has ``metadata.uid``).
        child: a kr8s object, dict or typed model, changed in place.
        block_owner_deletion: set ``blockOwnerDeletion: true`` on the reference.

    Raises:
        OwnerReferenceError: as ``set_controller_reference``.
    """
    ref = _reference(owner)
    if block_owner_deletion:
        ref["blockOwnerDeletion"] = True
    _check_scope(owner, child)
    current = controller_of(child)
    if current is not None and _same_object(current, ref):
        return
    _upsert(child, ref)


@accepts_models
def remove_owner_reference(owner_or_uid: ObjectLike | str, child: ObjectLike) -> bool:
    """Remove ``child``'s references to an owner; True if one was removed.

    ``owner_or_uid`` is the owner's uid, or the owner object (matched by uid, or by API group,
    kind and name as controller-runtime's ``RemoveOwnerReference``, so an owner that is gone
    can be named by a dict without uid). When no reference remains,
    ``metadata.ownerReferences`` is deleted (a merge patch then sends ``null``).
    """
    refs = _refs(child, create=False)
    if not refs:
        return False
    target = _target(owner_or_uid)
    kept = [r for r in refs if not (isinstance(r, MutableMapping) and _same_object(r, target))]
    if len(kept) == len(refs):
        return False
    set_or_drop(raw_of(child)["metadata"], "ownerReferences", kept)
    return True


# --- internals -------------------------------------------------------------------------------


def _meta(obj: ObjectLike) -> MutableMapping[str, Any]:
    meta = raw_of(obj).get("metadata")
    return meta if isinstance(meta, MutableMapping) else {}


def _refs(obj: ObjectLike, *, create: bool) -> MutableSequence[Any] | None:
    return nested_list(obj, "metadata", "ownerReferences", create=create)


def _upsert(child: ObjectLike, ref: dict[str, Any]) -> None:
    refs = _refs(child, create=True)
    assert refs is not None
    for i, existing in enumerate(refs):
        if isinstance(existing, MutableMapping) and _same_object(existing, ref):
            if dict(existing) != ref:
                refs[i] = ref
            return
    refs.append(ref)


def _reference(owner: ObjectLike, *, need_uid: bool = True) -> dict[str, Any]:
    """``{apiVersion, kind, name, uid}`` of ``owner``.

    Raises:
        OwnerReferenceError: ``owner`` lacks one of them.
    """
    raw, meta = raw_of(owner), _meta(owner)
    ref = {
        "apiVersion": raw.get("apiVersion"),
        "kind": raw.get("kind"),
        "name": meta.get("name"),
        "uid": meta.get("uid"),
    }
    if need_uid and not ref["uid"]:
        raise _error(OwnerReferenceError, owner, "owner has no uid: create it first")
    missing = [key for key in _IDENTITY[:3] if not ref[key]]
    if missing:
        raise _error(OwnerReferenceError, owner, f"owner has no {', '.join(missing)}")
    return ref


def _target(owner_or_uid: ObjectLike | str) -> dict[str, Any]:
    if isinstance(owner_or_uid, str):
        return {"uid": owner_or_uid}
    return _reference(owner_or_uid, need_uid=False)


def _same_object(ref: MutableMapping[str, Any], target: MutableMapping[str, Any]) -> bool:
    """Same uid, or same API group, kind and name (controller-runtime's referSameObject)."""
    uid = target.get("uid")
    if uid and ref.get("uid") == uid:
        return True
    if "kind" not in target:
        return False
    return (
        _group(ref.get("apiVersion")) == _group(target.get("apiVersion"))
        and ref.get("kind") == target.get("kind")
        and ref.get("name") == target.get("name")
    )


def _group(api_version: Any) -> str:
    """The API group of ``group/version`` ("" for the core group's ``v1``)."""
    return str(api_version or "").rpartition("/")[0]


def _scope(obj: ObjectLike) -> tuple[bool, str | None]:
    """``(namespaced, namespace)``; see the module docstring for how scope is detected."""
    namespace = _meta(obj).get("namespace") or None
    namespaced = getattr(obj, "namespaced", None)
    if isinstance(obj, MutableMapping) or not isinstance(namespaced, bool):
        return namespace is not None, namespace
    if namespaced and namespace is None:
        try:
            namespace = getattr(obj, "namespace", None) or None
        except RuntimeError:  # a kr8s object not bound to an Api yet
            namespace = None
    return namespaced, namespace


def _check_scope(owner: ObjectLike, child: ObjectLike) -> None:
    owner_namespaced, owner_ns = _scope(owner)
    if not owner_namespaced:
        return
    child_namespaced, child_ns = _scope(child)
    if owner_ns is None:
        problem = f"namespaced owner {describe_object(owner)} has no namespace"
    elif not child_namespaced:
        problem = (
            "a cluster-scoped object must not have a namespace-scoped owner "
            f"({describe_object(owner)})"
        )
    elif child_ns is None:
        problem = f"has no namespace; it must be in its owner's namespace {owner_ns!r}"
    elif child_ns != owner_ns:
        problem = (
            f"cross-namespace owner references are disallowed: owner {describe_object(owner)} "
            f"is in namespace {owner_ns!r}, this object in {child_ns!r}"
        )
    else:
        return
    raise _error(OwnerReferenceError, child, problem)


def _error(cls: type[ObjectError], obj: ObjectLike, message: str) -> ObjectError:
    kind, namespace, name = identity(obj)
    return cls(message, kind=kind, namespace=namespace, name=name)
