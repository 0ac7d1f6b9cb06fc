"""Create, update, patch and server-side apply in the embedded API server, with
kube-apiserver's rules (k8s.io/apiserver pkg/registry/generic/registry/store.go and
pkg/endpoints/handlers): decoding, mutating admission, preconditions, the kind's strategy
and validation, the status and finalize subresources, no new finalizers on an object being
deleted, managedFields, validating admission, then the store (or nothing, on a dry run).
Each write is a generator of admission steps (:data:`~.admission.Steps`); the methods
without ``_steps`` run it without webhooks.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from ...client.contenttypes import APPLY_PATCH, STRATEGIC_MERGE_PATCH
from . import builtinversions, certificates, errors
from . import managedfields as mf
from .admission import Steps, run_sync
from .admitting import AdmissionCalls
from .crd import CRD_KEY
from .crdconversion import webhook_converts
from .decoding import check_namespace, decode, unknown_fields, validate
from .errors import APIError
from .gofmt import go_format, go_quote
from .gozero import fill_go_zero
from .meta import generate_name
from .metaupdate import check_applied_kind, check_uid_unchanged
from .patching import apply_patch
from .pvcresize import check_resize
from .resources import ResourceType
from .store import Obj
from .strategy import (
    new_finalizers,
    omit_empty,
    prepare_create,
    prepare_finalize_update,
    prepare_status_update,
    prepare_update,
    read_defaults,
)
from .structured import MISSING
from .writes import Result, WriteOptions, clone, record_manager, without_managed_fields

_ETCD_PREFIX = {
    ("", "replicationcontrollers"): "controllers",
    ("", "endpoints"): "services/endpoints",
    ("", "nodes"): "minions",
    ("", "services"): "services/specs",
    ("networking.k8s.io", "ingresses"): "ingress",
}
"""kubernetes pkg/kubeapiserver/default_storage_factory_builder.go
SpecialDefaultResourcePrefixes; other resources are stored under their plural."""

_UNDECODABLE = ("quantit", "parsing time", "json: cannot unmarshal", "illegal base64")
"""Decoder errors of a patched object: kube-apiserver refuses the patch (422) rather than
the body (400)."""


_UINT64_MAX = 2**64 - 1


def parse_resource_version(version: str) -> int:
    """APIObjectVersioner.ObjectResourceVersion: strconv.ParseUint of an object's
    resourceVersion ("" is 0); kube-apiserver's generic store answers its error as a plain
    500 (no reason)."""
    if not version:
        return 0
    if not version.isascii() or not version.isdigit():
        problem = "invalid syntax"
    elif int(version) > _UINT64_MAX:
        problem = "value out of range"
    else:
        return int(version)
    raise APIError(500, "", f"strconv.ParseUint: parsing {go_quote(version)}: {problem}")


def _check_strict_patch(rt: ResourceType, content_type: str, patch: Any, patched: Obj) -> None:
    """``fieldValidation=Strict``: a patched object with unknown fields is a 422 on the
    patch (k8s.io/apiserver handlers/patch.go). A strategic merge patch's value is the patch
    as Go's ``%+v`` prints it and its errors come sorted (the unstructured converter's); a
    merge or JSON patch's value is the patched object's JSON (kube-apiserver's has the Go
    struct's field order) and its errors come in the object's order."""
    texts = unknown_fields(rt, patched)
    if not texts:
        return
    if content_type == STRATEGIC_MERGE_PATCH:
        texts.sort()
        value = go_format(patch)
    else:
        value = json.dumps(patched, separators=(",", ":"), ensure_ascii=False)
    message = f"Invalid value: {go_quote(value)}: strict decoding error: " + ", ".join(texts)
    raise APIError(
        422,
        "Invalid",
        f' "" is invalid: patch: {message}',
        {"causes": [errors.cause("FieldValueInvalid", "patch", message)]},
    )


def _etcd_key(rt: ResourceType, namespace: str, name: str) -> str:
    """The key kube-apiserver stores an object under (shown in StorageError messages)."""
    if rt.crd_name is not None or rt.group == "apiextensions.k8s.io":
        prefix = f"{rt.group}/{rt.plural}"
    else:
        prefix = _ETCD_PREFIX.get((rt.group, rt.plural), rt.plural)
    return f"/registry/{prefix}/{namespace}/{name}" if namespace else f"/registry/{prefix}/{name}"


class Writes(AdmissionCalls):
    """:class:`~.admitting.AdmissionCalls` and the writes that create or change objects."""

    def create(
        self, rt: ResourceType, namespace: str | None, body: Any, opts: WriteOptions
    ) -> Result:
        """POST without admission webhooks (the server's own writes)."""
        return run_sync(self.create_steps(rt, namespace, body, opts))

    def create_steps(
        self,
        rt: ResourceType,
        namespace: str | None,
        body: Any,
        opts: WriteOptions,
        posted: bool = False,
    ) -> Steps:
        """POST (``posted``; a PUT or an apply that creates otherwise): decode, mutating
        admission, strategy and validation, validating admission, store."""
        obj = decode(rt, namespace, body)
        meta = obj["metadata"]
        if not meta.get("name"):
            if not meta.get("generateName"):
                raise errors.invalid(
                    rt.kind,
                    rt.group,
                    "",
                    [
                        errors.cause(
                            "FieldValueRequired",
                            "metadata.name",
                            "Required value: name or generateName is required",
                        )
                    ],
                )
            meta["name"] = generate_name(meta["generateName"])
        check_namespace(self.store, rt, obj, creating=True)
        self._check_crd_active(rt)
        obj, opts = yield from self._admit_mutate(rt, "CREATE", obj, None, opts, "")
        if opts.guard is not None:
            opts.guard(rt, obj, None)
        meta = obj["metadata"]
        sent_rv = str(meta.get("resourceVersion") or "") if posted else ""
        requested = clone(obj)
        prepare_create(rt, obj)
        if (rt.group, rt.plural) == (certificates.GROUP, certificates.PLURAL):
            certificates.prepare_create(obj, opts.user_info)
        omit_empty(rt, obj)
        warnings = validate(rt, obj, opts)
        later = rt.storage_key == CRD_KEY and self._establish_later()
        if rt.storage_key == CRD_KEY:
            self._prepare_crd(obj, None, established=not later)
        record_manager(rt, obj, None, opts, "", requested)
        if rt.storage_key == CRD_KEY and not later and obj["metadata"].get("managedFields"):
            self._record_status_writer(rt, obj)
        fill_go_zero(rt.api_version, rt.kind, obj)
        if opts.admit is not None:
            opts.admit(rt, obj, None, "")
        yield from self._admit_validate(rt, "CREATE", obj, None, opts, "")
        defaulted = read_defaults(rt, obj)
        if not opts.dry_run and sent_rv.isdigit() and int(sent_rv) and int(sent_rv) < 2**64:
            # etcd3 store Create: ErrResourceVersionSetOnCreate, a plain error (500)
            raise errors.unknown(500, "resourceVersion should not be set on objects to be created")
        if self.store.get(rt.storage_key, meta.get("namespace") or "", meta["name"]) is not None:
            raise errors.already_exists(rt.group, rt.plural, meta["name"])
        if opts.dry_run:
            if sent_rv:  # the dry-run storage stores nothing and keeps what was sent
                obj["metadata"]["resourceVersion"] = sent_rv
            return Result(201, obj, warnings)
        to_store = yield from self._storage_form(rt, obj)
        stored = self.store.create(rt.storage_key, to_store, read_defaulted=defaulted)
        if rt.storage_key == CRD_KEY:
            if later:
                self._schedule_establish(stored["metadata"]["name"])
            else:
                self._register_crd(stored)
        return Result(201, self.present(rt, stored), warnings)

    def update(
        self,
        rt: ResourceType,
        namespace: str | None,
        name: str,
        body: Any,
        opts: WriteOptions,
        subresource: str = "",
    ) -> Result:
        """PUT without admission webhooks."""
        return run_sync(self.update_steps(rt, namespace, name, body, opts, subresource))

    def update_steps(
        self,
        rt: ResourceType,
        namespace: str | None,
        name: str,
        body: Any,
        opts: WriteOptions,
        subresource: str = "",
    ) -> Steps:
        """PUT (and the create a PUT does for Leases and Events)."""
        obj = decode(rt, namespace, body)
        body_name = obj["metadata"].get("name")
        if body_name != name:
            raise errors.bad_request(
                f"the name of the object ({body_name}) does not match the name on the URL ({name})"
            )
        old = self.store.get(rt.storage_key, namespace or "", name)
        if old is None:
            if rt.create_on_update and not subresource:
                return (yield from self.create_steps(rt, namespace, obj, opts))
            raise errors.not_found(rt.group, rt.plural, name)
        old = yield from self._in_version(rt, old)
        obj, opts = yield from self._admit_mutate(rt, "UPDATE", obj, old, opts, subresource)
        self._check_preconditions(rt, obj, old)
        return (yield from self._write_update(rt, obj, old, opts, subresource))

    def _check_preconditions(
        self, rt: ResourceType, obj: Obj, old: Obj, *, uid: bool = True
    ) -> None:
        """An update's preconditions, after the mutating admission (generic store Update):
        (a PUT's, whose UpdatedObjectInfo carries it) uid, then the resourceVersion of the
        updated object, which a kind without unconditional updates must have."""
        meta, old_meta = obj["metadata"], old["metadata"]
        name = old_meta["name"]
        if uid and meta.get("uid") and meta["uid"] != old_meta["uid"]:
            key = _etcd_key(rt, old_meta.get("namespace") or "", name)
            raise errors.conflict(
                rt.group,
                rt.plural,
                name,
                f"StorageError: invalid object, Code: 4, Key: {key}, "
                "ResourceVersion: 0, AdditionalErrorMsg: Precondition failed:"
                f" UID in precondition: {meta['uid']},"
                f" UID in object meta: {old_meta['uid']}",
            )
        sent_rv = parse_resource_version(meta.get("resourceVersion") or "")
        if sent_rv == 0 and not rt.put_requires_rv:
            return  # none sent: an unconditional update
        if sent_rv == 0:
            # The generic store names the resource here, not the kind.
            raise errors.invalid(
                rt.plural,
                rt.group,
                name,
                [
                    errors.cause(
                        "FieldValueInvalid",
                        "metadata.resourceVersion",
                        "Invalid value: 0x0: must be specified for an update",
                    )
                ],
            )
        if sent_rv != parse_resource_version(old_meta["resourceVersion"]):
            raise errors.conflict(rt.group, rt.plural, name)

    def patch(
        self,
        rt: ResourceType,
        namespace: str | None,
        name: str,
        content_type: str,
        patch: Any,
        opts: WriteOptions,
        subresource: str = "",
    ) -> Result:
        """PATCH without admission webhooks."""
        return run_sync(
            self.patch_steps(rt, namespace, name, content_type, patch, opts, subresource)
        )

    def patch_steps(
        self,
        rt: ResourceType,
        namespace: str | None,
        name: str,
        content_type: str,
        patch: Any,
        opts: WriteOptions,
        subresource: str = "",
    ) -> Steps:
        """Apply a json/merge/strategic patch (or server-side apply) to the current object."""
        old = self.store.get(rt.storage_key, namespace or "", name)
        if old is not None:
            old = yield from self._in_version(rt, old)
        if content_type == APPLY_PATCH:
            return (yield from self._apply(rt, namespace, name, patch, old, opts, subresource))
        if old is None:
            raise errors.not_found(rt.group, rt.plural, name)
        current = clone(self.present(rt, old))
        result = apply_patch(rt, current, content_type, patch, opts.field_validation)
        patched = clone(result) if opts.field_validation == "Strict" else None
        try:
            result = decode(rt, namespace, result)
        except APIError as error:
            if not any(why in error.message for why in _UNDECODABLE):
                raise
            # the patched object does not decode: kube-apiserver's 422 on the patch itself
            why = error.message.rpartition(f"cannot be handled as a {rt.kind}: ")[2]
            message = f"Invalid value: {go_quote(go_format(patch))}: {why}"
            raise APIError(
                422,
                "Invalid",
                f' "" is invalid: patch: {message}',
                {"causes": [errors.cause("FieldValueInvalid", "patch", message)]},
            ) from None
        if patched is not None:
            _check_strict_patch(rt, content_type, patch, patched)
        if result["metadata"].get("name") != name:
            raise errors.bad_request(
                f"the name of the object ({result['metadata'].get('name')}) does not match the"
                f" name on the URL ({name})"
            )
        result, opts = yield from self._admit_mutate(rt, "UPDATE", result, old, opts, subresource)
        self._check_preconditions(rt, result, old, uid=False)
        return (yield from self._write_update(rt, result, old, opts, subresource))

    def _apply(
        self,
        rt: ResourceType,
        namespace: str | None,
        name: str,
        patch: Any,
        old: Obj | None,
        opts: WriteOptions,
        subresource: str,
    ) -> Steps:
        """Server-side apply of ``patch`` (an applied configuration), as kube-apiserver's
        field manager does it (see managedfields.py)."""
        if not opts.field_manager:
            raise errors.invalid(
                "PatchOptions",
                "meta.k8s.io",
                "",
                [
                    errors.cause(
                        "FieldValueRequired",
                        "fieldManager",
                        "Required value: is required for apply patch",
                    )
                ],
            )
        config = self._applied_config(rt, name, patch)
        if old is None and subresource:
            raise errors.not_found(rt.group, rt.plural, name)  # a subresource creates nothing
        live = None if old is None else without_managed_fields(self.present(rt, old))
        write = mf.Write(
            mf.object_type(rt),
            opts.field_manager,
            rt.api_version,
            subresource,
            mf.ignored_paths(rt, subresource, config),
            mf.group_of(rt),
        )
        sent_rv = (config.get("metadata") or {}).get("resourceVersion")
        if old is not None and sent_rv and sent_rv != old["metadata"]["resourceVersion"]:
            # a precondition, as in an update (kube-apiserver: the applied object keeps it)
            raise errors.conflict(rt.group, rt.plural, name)
        merged, managers = write.apply(live, config, mf.decode_managers(old), opts.force)
        opts = replace(opts, operation="Apply", managed=mf.encode_managers(managers))
        if merged is MISSING:
            merged = clone(live or {})
        merged = decode(rt, namespace, mf.sync_last_applied(opts.field_manager, merged, config))
        if old is None:
            merged["metadata"]["name"] = name
            return (yield from self.create_steps(rt, namespace, merged, opts))
        merged, opts = yield from self._admit_mutate(rt, "UPDATE", merged, old, opts, subresource)
        return (yield from self._write_update(rt, merged, old, opts, subresource))

    @staticmethod
    def _applied_config(rt: ResourceType, name: str, patch: Any) -> Obj:
        if not isinstance(patch, dict):
            raise errors.bad_request("the body of the request must be a JSON object")
        meta: Obj = patch["metadata"] if isinstance(patch.get("metadata"), dict) else {}
        if meta.get("managedFields") is not None:
            raise errors.bad_request("metadata.managedFields must be nil")
        body_name = meta.get("name")
        if body_name and body_name != name:
            raise errors.bad_request(
                f"the name of the object ({body_name}) does not match the name on the URL ({name})"
            )
        check_applied_kind(rt, patch)
        return patch

    def _write_update(
        self, rt: ResourceType, new: Obj, old: Obj, opts: WriteOptions, subresource: str
    ) -> Steps:
        name = old["metadata"]["name"]
        check_uid_unchanged(rt, new, old)
        if opts.guard is not None and not subresource:
            opts.guard(rt, new, old)
        requested = None
        if subresource in ("status", "finalize"):
            new = self._subresource_update(rt, new, old, subresource)
        else:
            requested = clone(new)
            prepare_update(rt, new, old)
        omit_empty(rt, new)
        deleting = bool(old["metadata"].get("deletionTimestamp"))
        added = new_finalizers(new, old) if deleting else []
        if added:
            found = ", ".join(f'"{f}"' for f in added)
            raise errors.invalid(
                rt.kind,
                rt.group,
                name,
                [
                    errors.cause(
                        "FieldValueForbidden",
                        "metadata.finalizers",
                        "Forbidden: no new finalizers can be added if the object is being deleted,"
                        f" found new finalizers []string{{{found}}}",
                    )
                ],
            )
        warnings = validate(rt, new, opts, old, subresource, requested)
        if rt.storage_key == CRD_KEY:
            self._prepare_crd(new, old)
        # a webhook's conversion, or a built-in kind's other form's, once admitted, as stored
        converting = webhook_converts(self.crd_of(rt)) or builtinversions.converts(rt)
        if not converting:
            new = self._to_storage(rt, new)
        record_manager(rt, new, old, opts, subresource, requested, updating=True)
        check_resize(self.store, rt, new, old, subresource)
        fill_go_zero(rt.api_version, rt.kind, new)
        if opts.admit is not None:
            opts.admit(rt, new, old, subresource)
        yield from self._admit_validate(rt, "UPDATE", new, old, opts, subresource)
        if not converting:
            mf.keep_unchanged_times(new, old)
        if opts.dry_run:
            return Result(200, self.present(rt, new), warnings)
        if deleting and self._finalized(new):
            self.store.delete(rt.storage_key, old["metadata"].get("namespace") or "", name)
            self._after_delete(rt, old)
            return Result(200, self.present(rt, new), warnings)
        if converting:
            new = yield from self._storage_form(rt, new)
            mf.keep_unchanged_times(new, old)
        stored = self.store.update(rt.storage_key, new)
        if rt.storage_key == CRD_KEY and stored is not old:
            self._register_crd(stored)
        return Result(200, self.present(rt, stored), warnings)

    def _subresource_update(self, rt: ResourceType, new: Obj, old: Obj, subresource: str) -> Obj:
        if subresource == "status":
            return prepare_status_update(rt, new, old)
        return prepare_finalize_update(new, old)

    @staticmethod
    def _finalized(obj: Obj) -> bool:
        if obj["metadata"].get("finalizers"):
            return False
        if obj.get("kind") == "Namespace":
            return not (obj.get("spec") or {}).get("finalizers")
        return True
