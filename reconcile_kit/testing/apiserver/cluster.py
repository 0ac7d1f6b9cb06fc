"""The embedded API server's semantics, independent of HTTP.

:class:`Cluster` implements create/get/list/update/patch/delete on raw objects with
kube-apiserver's rules (k8s.io/apiserver pkg/registry/generic/registry/store.go and
pkg/endpoints/handlers): preconditions, no-op writes, the status subresource, graceful
deletion with finalizers, CRD registration and custom resource validation.
"""

from __future__ import annotations

import asyncio
import base64
import bisect
import heapq
import itertools
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import orjson

from ...client.contenttypes import APPLY_PATCH
from ...meta.selectors import FieldSelector, label_selector_to_string
from ...meta.time import now_time
from . import bootstrap, certificates, errors
from . import crd as crds
from . import managedfields as mf
from .admission import Attributes, Mutate, Step, Validate, options_for, run_sync
from .admission import wanted as admission_wanted
from .cel import rule_causes
from .crdconversion import Convert, webhook_converts
from .errors import APIError
from .gofmt import go_format, go_quote
from .knownfields import prune_unknown_fields
from .managedfields import manager_name
from .meta import generate_name
from .patching import apply_patch
from .quantity import QuantityError, canonicalize_object
from .registry import Registry
from .resources import RBAC_GROUP, ResourceType
from .secrets import decode_secret
from .store import Obj, Store
from .strategy import (
    kind_defaults,
    metadata_causes,
    new_finalizers,
    omit_empty,
    prepare_create,
    prepare_status_update,
    prepare_update,
)
from .structured import MISSING, StructuredError, duplicate_causes
from .validation import kind_causes, update_causes
from .watch import Filter

CRD_KEY = "apiextensions.k8s.io/customresourcedefinitions"
CRD_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
BOOTSTRAP_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
BOOTSTRAP_PRIORITY_CLASSES = {
    "system-cluster-critical": (
        2000000000,
        "Used for system critical pods that must run in the cluster, but can be moved to"
        " another node if necessary.",
    ),
    "system-node-critical": (
        2000001000,
        "Used for system critical pods that must not be moved from their current node.",
    ),
}
"""kube-apiserver's bootstrap priority classes (pkg/apis/scheduling SystemPriorityClasses)."""


@dataclass
class WriteOptions:
    """Query options of a write: ``dryRun=All``, ``fieldValidation``, ``fieldManager``."""

    dry_run: bool = False
    field_validation: str = "Warn"
    field_manager: str | None = None
    user_agent: str = ""
    operation: str = "Update"
    force: bool = False
    """Server-side apply's ``force=true``: take fields other managers own."""
    managed: list[Obj] | None = None
    """managedFields already worked out (by server-side apply) for this write."""
    query: dict[str, str] = field(default_factory=dict)
    """The request's query (the ``options`` of an AdmissionReview)."""
    decode_warnings: list[str] = field(default_factory=list)
    """Warnings of the decoding before a mutating webhook changed the object."""
    user_info: Obj | None = None
    """The requester as AdmissionReviews name it (None: the admin)."""
    guard: Callable[[ResourceType, Obj, Obj | None], None] | None = None
    """The REST storage's own check of the requester's write (``(rt, new, old)``, raising
    APIError), after the mutating admission and before validation: RBAC's escalation
    prevention in RBAC mode."""
    admit: Callable[[ResourceType, Obj, Obj | None, str], None] | None = None
    """Validating admission of the requester (``(rt, new, old, subresource)``, raising
    APIError), called after validation and before the validating webhooks (kube-apiserver's
    plugin order): OwnerReferencesPermissionEnforcement in RBAC mode."""

    @property
    def manager(self) -> str:
        return manager_name(self.field_manager, self.user_agent)


@dataclass
class Result:
    """What a handler answers: HTTP code, body, and ``Warning`` header texts."""

    code: int
    body: Obj
    warnings: list[str] = field(default_factory=list)


_CONTROLLER_WRITE = WriteOptions(field_manager="kube-controller-manager")

Steps = Generator[Step, Any, Result]
"""A write that yields at its admission points (see admission.py); run_sync or
admission.drive runs it."""


def _without_managed_fields(obj: Obj) -> Obj:
    meta = {k: v for k, v in obj.get("metadata", {}).items() if k != "managedFields"}
    return {**obj, "metadata": meta}


def clone(obj: Obj) -> Obj:
    """A deep copy (an orjson round trip: several times faster than copy.deepcopy)."""
    result: Obj = orjson.loads(orjson.dumps(obj))
    return result


def _get_path(obj: Obj, path: str) -> Any:
    value: Any = obj
    for part in path.strip(".").split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def _set_path(obj: Obj, path: str, value: Any) -> None:
    parts = path.strip(".").split(".")
    for part in parts[:-1]:
        obj = obj.setdefault(part, {})
    obj[parts[-1]] = value


def _position_key(position: str) -> tuple[str, str]:
    """A continue position ``namespace/name`` as a sort key (names hold no "/")."""
    namespace, _, name = position.rpartition("/")
    return (namespace, name)


def _continue_token(list_rv: int, last: str) -> str:
    return base64.urlsafe_b64encode(orjson.dumps({"rv": list_rv, "start": last})).decode()


def _strict_error(rt: ResourceType, texts: list[str]) -> str:
    """The decode error the handler wraps (k8s.io/apiserver handlers/rest.go)."""
    return (
        f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: '
        "strict decoding error: " + ", ".join(texts)
    )


def _field_label_error(rt: ResourceType, path: str) -> str:
    """The per-kind field label conversion's error (kube-apiserver 1.32)."""
    if (rt.group, rt.kind) == ("batch", "Job"):
        return f'field label "{path}" not supported for Job'
    if rt.field_labels or rt.crd_name is not None:
        # kinds with their own conversion func (pods, secrets, services, events, ...) and CRs
        return f"field label not supported: {path}"
    # runtime.DefaultMetaV1FieldSelectorConversion
    return f'"{path}" is not a known field selector: only "metadata.name", "metadata.namespace"'


_ETCD_PREFIX = {"services": "services/specs"}


def _etcd_key(rt: ResourceType, namespace: str, name: str) -> str:
    """The key kube-apiserver stores an object under (shown in StorageError messages)."""
    if rt.crd_name is not None or rt.group == "apiextensions.k8s.io":
        prefix = f"{rt.group}/{rt.plural}"
    else:
        prefix = _ETCD_PREFIX.get(rt.plural, rt.plural)
    return f"/registry/{prefix}/{namespace}/{name}" if namespace else f"/registry/{prefix}/{name}"


def _check_replicas(name: str, replicas: Any) -> None:
    """A Scale's ``spec.replicas`` (ValidateScale)."""
    if not isinstance(replicas, int) or replicas < 0:
        raise errors.invalid(
            "Scale",
            "autoscaling",
            name,
            [
                errors.cause(
                    "FieldValueInvalid",
                    "spec.replicas",
                    f"Invalid value: {replicas}: must be greater than or equal to 0",
                )
            ],
        )


def _check_delete_preconditions(rt: ResourceType, preconditions: Obj, old: Obj) -> None:
    """DeleteOptions.preconditions, checked by storage.Preconditions.Check, whose Conflict
    names the kind (``ConfigMap``, ``Deployment.apps``) rather than the resource."""
    meta = old["metadata"]
    uid, rv = preconditions.get("uid"), preconditions.get("resourceVersion")
    why = ""
    if uid and uid != meta["uid"]:
        why = (
            f"the UID in the precondition ({uid}) does not match the UID in record "
            f"({meta['uid']}). The object might have been deleted and then recreated"
        )
    elif rv and rv != meta["resourceVersion"]:
        why = (
            f"the ResourceVersion in the precondition ({rv}) does not match the "
            f"ResourceVersion in record ({meta['resourceVersion']}). The object might have "
            "been modified"
        )
    if why:
        name = meta["name"]
        qualified_kind = f"{rt.kind}.{rt.group}" if rt.group else rt.kind
        details = {"name": name, **({"group": rt.group} if rt.group else {}), "kind": rt.kind}
        raise APIError(
            409,
            "Conflict",
            f'Operation cannot be fulfilled on {qualified_kind} "{name}": {why}',
            details,
        )


class Cluster:
    """State and semantics of the embedded API server.

    Args:
        store: object storage (with history and optional persistence).
        registry: served resource types; CRDs found in ``store`` are registered again.
    """

    def __init__(self, store: Store, registry: Registry, crd_establish_delay: float = 0.0) -> None:
        self.store = store
        self.registry = registry
        self.crd_establish_delay = crd_establish_delay
        """Seconds between a CRD's create and its Established condition (and its resources
        being served): kube-apiserver's establishing controller takes ~10-40 ms; 0: at once."""
        self.on_crd_removed: list[Callable[[str], None]] = []
        for stored_crd in store.items(CRD_KEY):
            if (stored_crd.get("status") or {}).get("conditions") is None:
                self._establish(stored_crd["metadata"]["name"])  # stored before it was
            else:
                self._register_crd(stored_crd)
        for ns in BOOTSTRAP_NAMESPACES:
            if store.get("/namespaces", "", ns) is None:
                rt = self._rt("", "namespaces")
                self.create(
                    rt,
                    None,
                    {"metadata": {"name": ns}},
                    WriteOptions(field_manager="kube-apiserver"),
                )
        for name, (value, description) in BOOTSTRAP_PRIORITY_CLASSES.items():
            if store.get("scheduling.k8s.io/priorityclasses", "", name) is None:
                self.create(
                    self._rt("scheduling.k8s.io", "priorityclasses"),
                    None,
                    {"metadata": {"name": name}, "value": value, "description": description},
                    WriteOptions(field_manager="kube-apiserver"),
                )

        for name in bootstrap.CLUSTER_ROLES:
            if store.get(f"{RBAC_GROUP}/clusterroles", "", name) is None:
                self.create(
                    self._rt(RBAC_GROUP, "clusterroles"),
                    None,
                    bootstrap.cluster_role(name),
                    WriteOptions(field_manager="kube-apiserver"),
                )

    def ensure_kubernetes_service(self, port: int) -> None:
        """Create ``default/kubernetes`` for a server on ``port`` unless it exists, as
        kube-apiserver's endpoint reconciler does when it starts."""
        if self.store.get("/services", "default", "kubernetes") is None:
            self.create(
                self._rt("", "services"),
                "default",
                bootstrap.kubernetes_service(port),
                WriteOptions(field_manager="kube-apiserver"),
            )

    def _rt(self, group: str, plural: str) -> ResourceType:
        rt = self.registry.storage_type(f"{group}/{plural}")
        assert rt is not None
        return rt

    # --- reads -----------------------------------------------------------------------------

    def present(self, rt: ResourceType, obj: Obj) -> Obj:
        """``obj`` as served by ``rt``'s version (custom resources store one version). A
        CRD with a conversion webhook leaves it in its stored version: the request handler
        converts it (asynchronously, :mod:`.crdconversion`)."""
        if obj.get("apiVersion") != rt.api_version:
            if rt.crd_name is not None and webhook_converts(self.crd_of(rt)):
                return obj
            return {**obj, "apiVersion": rt.api_version}
        return obj

    def crd_of(self, rt: ResourceType) -> Obj | None:
        """The CustomResourceDefinition of a custom resource type (None for built-ins)."""
        if rt.crd_name is None:
            return None
        return self.store.get(CRD_KEY, "", rt.crd_name)

    def _in_version(self, rt: ResourceType, obj: Obj) -> Generator[Convert, Any, Obj]:
        """``obj`` (as stored) in ``rt``'s version, by the CRD's webhook if it has one."""
        crd = self.crd_of(rt)
        if obj.get("apiVersion") != rt.api_version and webhook_converts(crd):
            assert crd is not None
            converted = yield Convert([obj], rt.api_version, crd)
            return dict(converted[0])
        return self.present(rt, obj)

    def _storage_form(self, rt: ResourceType, obj: Obj) -> Generator[Convert, Any, Obj]:
        """``obj`` (in ``rt``'s version) in the storage version, by the CRD's webhook if it
        has one."""
        storage = self.registry.storage_type(rt.storage_key) or rt
        crd = self.crd_of(rt)
        if storage.api_version != obj.get("apiVersion") and webhook_converts(crd):
            assert crd is not None
            converted = yield Convert([obj], storage.api_version, crd)
            return dict(converted[0])
        return self._to_storage(rt, obj)

    def get(self, rt: ResourceType, namespace: str | None, name: str) -> Obj:
        obj = self.store.get(rt.storage_key, namespace or "", name)
        if obj is None:
            raise errors.not_found(rt.group, rt.plural, name)
        return self.present(rt, obj)

    def check_field_selector(self, rt: ResourceType, selector: FieldSelector) -> None:
        allowed = {"metadata.name", "metadata.namespace", *rt.field_labels}
        for path in sorted(selector.fields()):
            if path not in allowed:
                raise errors.bad_request(_field_label_error(rt, path))

    def list_objects(
        self,
        rt: ResourceType,
        selection: Filter,
        limit: int = 0,
        continue_token: str = "",
        resource_version: str = "",
        resource_version_match: str = "",
    ) -> Obj:
        """A List body; ``limit``/``continue`` page through one consistent snapshot."""
        self.check_field_selector(rt, selection.fields)
        if resource_version_match and not resource_version:
            raise errors.invalid(
                "ListOptions",
                "meta.k8s.io",
                "",
                [
                    errors.cause(
                        "FieldValueForbidden",
                        "resourceVersionMatch",
                        "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is"
                        " provided",
                    )
                ],
            )
        start = ""
        list_rv = self.store.rv
        if continue_token:
            list_rv, start = self._decode_continue(continue_token)
        elif resource_version_match == "Exact":
            list_rv = int(resource_version)
            if self.store.too_old(list_rv):
                raise errors.expired(
                    f"too old resource version: {list_rv} ({self.store.compacted_rv})"
                )
        return self._page(rt, selection, limit, start, list_rv)

    def _candidates(
        self, rt: ResourceType, namespace: str | None, start: str, list_rv: int
    ) -> tuple[Iterator[tuple[tuple[str, str], Obj | None]], int | None]:
        """The objects of ``rt`` at ``list_rv`` after ``start`` (in ``namespace``), in key
        order, without touching those before ``start``: a page costs O(page + log N).
        Also how many keys lie ahead when that is known without looking (no rewind)."""
        keys = self.store.sorted_keys(rt.storage_key)
        low, high = 0, len(keys)
        if namespace is not None:
            low = bisect.bisect_left(keys, (namespace, ""))
            high = bisect.bisect_left(keys, (namespace + "\x00", ""))
        if start:
            low = max(low, bisect.bisect_right(keys, _position_key(start), low, high))
        key = rt.storage_key
        if list_rv == self.store.rv:
            ahead = (k for k in itertools.islice(keys, low, high))
            return ((k, self.store.get_by_key(key, k)) for k in ahead), high - low
        before = self.store.changes_since(key, list_rv)
        extra = sorted(
            k
            for k in before
            if (namespace is None or k[0] == namespace) and (not start or k > _position_key(start))
        )
        merged = heapq.merge(itertools.islice(keys, low, high), extra)
        unique = (k for k, _ in itertools.groupby(merged))
        return (
            (k, before[k] if k in before else self.store.get_by_key(key, k)) for k in unique
        ), None

    def _page(
        self,
        rt: ResourceType,
        selection: Filter,
        limit: int,
        start: str,
        list_rv: int,
    ) -> Obj:
        candidates, ahead = self._candidates(rt, selection.namespace, start, list_rv)
        unfiltered = selection.labels.empty() and selection.fields.empty()
        items: list[Obj] = []
        more = False
        last = ""
        seen = 0
        for ident, obj in candidates:
            seen += 1
            if obj is None or not selection.matches(obj):
                continue
            if limit and len(items) >= limit:
                more = True
                break
            items.append(self._list_item(rt, obj))
            last = f"{ident[0]}/{ident[1]}"
        metadata: Obj = {"resourceVersion": str(list_rv)}
        if more:
            metadata["continue"] = _continue_token(list_rv, last)
            if unfiltered:
                # etcd3 store: counted only when no selector filters the rest.
                remaining = (
                    (ahead - seen + 1)
                    if ahead is not None
                    else 1 + sum(1 for _, o in candidates if o is not None)
                )
                metadata["remainingItemCount"] = remaining
        return {
            "kind": rt.list_kind,
            "apiVersion": rt.api_version,
            "metadata": metadata,
            "items": items,
        }

    def _list_item(self, rt: ResourceType, obj: Obj) -> Obj:
        if rt.builtin:
            # typed lists carry no per-item apiVersion/kind, as kube-apiserver's JSON encoding
            return {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}
        return self.present(rt, obj)

    def _decode_continue(self, token: str) -> tuple[int, str]:
        try:
            data = orjson.loads(base64.urlsafe_b64decode(token.encode()))
            list_rv, start = int(data["rv"]), str(data["start"])
        except (ValueError, KeyError, TypeError) as exc:
            raise errors.bad_request(
                f"invalid continue token: continue key is not valid: {exc}"
            ) from exc
        if list_rv == -1:
            # An "inconsistent" token from a 410: continue at the latest state.
            return self.store.rv, start
        if self.store.too_old(list_rv):
            # etcd3 store handleCompactedErrorForPaging: the Status carries a token that
            # continues after the same key at the latest resourceVersion.
            err = errors.expired(
                "The provided continue parameter is too old to display a consistent list result."
                " You can start a new list without the continue parameter, or use the continue"
                " token in this response to retrieve the remainder of the results. Continuing"
                " with the provided token results in an inconsistent list - objects that were"
                " created, modified, or deleted between the time the first chunk was returned"
                " and now may show up in the list."
            )
            err.list_metadata = {"continue": _continue_token(-1, start)}
            raise err
        return list_rv, start

    # --- body decoding ---------------------------------------------------------------------

    def _decode(self, rt: ResourceType, namespace: str | None, body: Any) -> Obj:
        if not isinstance(body, dict):
            raise errors.bad_request("the body of the request must be a JSON object")
        obj: Obj = body
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        if api_version and api_version != rt.api_version:
            raise errors.bad_request(
                f"the API version in the data ({api_version}) does not match the expected API"
                f" version ({rt.api_version})"
            )
        if kind and kind != rt.kind and rt.schema is not None:
            # custom resources: the schema's kind check, a 422 naming the sent kind
            raise errors.invalid(
                kind,
                rt.group,
                str((obj.get("metadata") or {}).get("name", "")),
                [
                    errors.cause(
                        "FieldValueInvalid", "kind", f'Invalid value: "{kind}": must be {rt.kind}'
                    )
                ],
            )
        if kind and kind != rt.kind:
            raise errors.bad_request(
                f'{kind} in version "{rt.version}" cannot be handled as a {rt.kind}:'
                f" the kind in the data ({kind}) does not match the expected kind ({rt.kind})"
            )
        obj = {
            "apiVersion": rt.api_version,
            "kind": rt.kind,
            **{k: v for k, v in obj.items() if k not in ("apiVersion", "kind")},
        }
        meta = obj.setdefault("metadata", {})
        if not isinstance(meta, dict):
            raise errors.bad_request("metadata must be an object")
        body_ns = meta.get("namespace") or ""
        if rt.namespaced:
            if body_ns and namespace and body_ns != namespace:
                raise errors.bad_request(
                    "the namespace of the provided object does not match the namespace sent on"
                    " the request"
                )
            meta["namespace"] = namespace or body_ns
        else:
            meta.pop("namespace", None)
        if rt.storage_key == "/secrets":
            decode_secret(obj, rt.version)
        if rt.crd_name is None:
            try:
                canonicalize_object(rt.api_version, rt.kind, obj)
            except QuantityError as error:
                raise errors.bad_request(
                    f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: {error}'
                ) from None
        return obj

    def _check_namespace(self, rt: ResourceType, obj: Obj, creating: bool) -> None:
        if not rt.namespaced:
            return
        ns = obj["metadata"].get("namespace") or ""
        if not ns:
            raise errors.bad_request("a namespace is required for a namespaced resource")
        namespace = self.store.get("/namespaces", "", ns)
        if namespace is None:
            raise errors.not_found("", "namespaces", ns)
        if creating and namespace["metadata"].get("deletionTimestamp"):
            error = errors.forbidden(
                rt.group,
                rt.plural,
                obj["metadata"].get("name", ""),
                f"unable to create new content in namespace {ns} because it is being terminated",
            )
            assert error.details is not None
            error.details["causes"] = [
                errors.cause(
                    "NamespaceTerminating",
                    "metadata.namespace",
                    f"namespace {ns} is being terminated",
                )
            ]
            raise error

    # --- validation ------------------------------------------------------------------------

    def _validate(
        self, rt: ResourceType, obj: Obj, opts: WriteOptions, old: Obj | None = None
    ) -> list[str]:
        warnings = [*opts.decode_warnings, *self._decode_fields(rt, obj, opts)]
        causes = metadata_causes(rt, obj)
        if rt.schema is not None:
            causes += crds.SchemaValidator(rt.schema).causes(obj)
            content = {k: v for k, v in obj.items() if k != "metadata"}
            duplicates = duplicate_causes(content, mf.object_type(rt))
            causes += [errors.cause("FieldValueDuplicate", f, m) for f, m in duplicates]
            causes += (
                rule_causes(rt.schema, obj) if old is None else rule_causes(rt.schema, obj, old)
            )
        if rt.storage_key == CRD_KEY:
            causes += crds.validate_crd(obj)
        if old is not None:  # update rules first, as ValidateSecretUpdate/ConfigMapUpdate
            causes += update_causes(rt, obj, old)
        causes += kind_causes(rt, obj)
        if causes:
            # The decoder's warnings reach the client with the refusal, as kube-apiserver's
            # warning recorder sends them on every answer.
            invalid = errors.invalid(rt.kind, rt.group, obj["metadata"].get("name", ""), causes)
            invalid.warnings = warnings
            raise invalid
        return warnings

    def _decode_fields(self, rt: ResourceType, obj: Obj, opts: WriteOptions) -> list[str]:
        """What decoding does to the fields: unknown ones dropped (``Strict``: 400; ``Warn``:
        the warnings returned), a custom resource's defaults applied."""
        if rt.schema is not None:
            return self._validate_custom(rt, obj, opts)
        if not rt.builtin:
            return []
        # Decoding into the Go type drops unknown fields (see knownfields.py).
        unknown = prune_unknown_fields(rt.api_version, rt.kind, obj) or []
        texts = [f'unknown field "{path}"' for path in unknown]
        if texts and opts.field_validation == "Strict":
            raise errors.bad_request(_strict_error(rt, texts))
        return texts if opts.field_validation == "Warn" else []

    def _validate_custom(self, rt: ResourceType, obj: Obj, opts: WriteOptions) -> list[str]:
        assert rt.schema is not None
        unknown = crds.prune(obj, rt.schema)
        crds.apply_defaults(obj, rt.schema)
        if not unknown or opts.field_validation == "Ignore":
            return []
        texts = [f'unknown field "{path}"' for path in unknown]
        if opts.field_validation == "Strict":
            raise errors.bad_request(_strict_error(rt, texts))
        return texts

    # --- admission -------------------------------------------------------------------------

    def _attrs(
        self,
        rt: ResourceType,
        operation: str,
        obj: Obj | None,
        old: Obj | None,
        opts: WriteOptions,
        subresource: str,
        options: Obj | None = None,
    ) -> Attributes:
        if subresource == "scale":  # reviewed as autoscaling/v1 Scale objects
            attrs = self._attrs(rt, operation, obj, old, opts, "", options)
            attrs.subresource = "scale"
            attrs.kind = ("autoscaling", "v1", "Scale")
            attrs.obj = None if obj is None else self._scale_of(rt, obj)
            attrs.old = None if old is None else self._scale_of(rt, old)
            return attrs
        source = obj if obj is not None else old
        assert source is not None
        meta = source["metadata"]
        namespace = (meta.get("namespace") or "") if rt.namespaced else ""
        if (rt.group, rt.plural) == ("", "namespaces"):
            namespace = meta.get("name") or ""  # a namespace is its own (RequestInfo)
        return Attributes(
            rt,
            operation,
            namespace,
            meta.get("name") or "",
            subresource,
            None if obj is None else self.present(rt, obj),
            None if old is None else self.present(rt, old),
            opts.dry_run,
            options if options is not None else options_for(operation, opts.query),
            user_info=opts.user_info,
        )

    @staticmethod
    def _guard(rt: ResourceType, old: Obj | None) -> tuple[str, str, str, str] | None:
        if old is None:
            return None
        meta = old["metadata"]
        return (rt.storage_key, meta.get("namespace") or "", meta["name"], meta["resourceVersion"])

    def _admit_mutate(
        self,
        rt: ResourceType,
        operation: str,
        obj: Obj,
        old: Obj | None,
        opts: WriteOptions,
        subresource: str,
    ) -> Generator[Step, Any, tuple[Obj, WriteOptions]]:
        """Mutating admission of ``obj`` as decoded and defaulted (before the strategy);
        the object to go on with (``obj`` itself unless a webhook changed it) and the
        options: when a webhook changed it, managedFields are those of the object before
        (kube-apiserver's field manager runs before admission: what webhooks set is
        nobody's)."""
        if not admission_wanted(self, rt, subresource, mutating=True):
            return obj, opts
        if subresource == "scale":
            return (yield from self._admit_mutate_scale(rt, obj, old, opts))
        view = clone(obj)
        decoded = self._decode_fields(rt, view, opts)
        kind_defaults(rt, view)
        attrs = self._attrs(rt, operation, view, old, opts, subresource)
        answer = yield Mutate(attrs, self._guard(rt, old))
        if not isinstance(answer, dict) or answer == attrs.obj:
            return obj, opts
        meta = answer.setdefault("metadata", {})
        if not isinstance(meta, dict):
            raise errors.internal("a mutating webhook replaced metadata by a non-object")
        if rt.namespaced:
            meta["namespace"] = obj["metadata"].get("namespace")
        if opts.managed is None:
            before = clone(view)
            self._record_manager(rt, before, old, opts, subresource)
            opts = replace(opts, managed=before["metadata"].get("managedFields") or [])
        # the decoding's warnings stand; unknown fields a webhook adds are dropped silently
        opts = replace(opts, decode_warnings=decoded, field_validation="Ignore")
        return answer, opts

    def _admit_mutate_scale(
        self, rt: ResourceType, obj: Obj, old: Obj | None, opts: WriteOptions
    ) -> Generator[Step, Any, tuple[Obj, WriteOptions]]:
        """Mutating admission of a ``/scale`` write: webhooks see and patch the Scale; its
        ``spec.replicas`` goes back into the object behind it."""
        assert rt.scale is not None
        attrs = self._attrs(rt, "UPDATE", obj, old, opts, "scale")
        answer = yield Mutate(attrs, self._guard(rt, old))
        if not isinstance(answer, dict) or answer == attrs.obj:
            return obj, opts
        replicas = (answer.get("spec") or {}).get("replicas")
        _check_replicas(obj["metadata"]["name"], replicas)
        changed = clone(obj)
        _set_path(changed, rt.scale.spec_replicas, replicas)
        return changed, opts

    def _admit_validate(
        self,
        rt: ResourceType,
        operation: str,
        obj: Obj,
        old: Obj | None,
        opts: WriteOptions,
        subresource: str,
    ) -> Generator[Step, Any, None]:
        """Validating admission of the object as it will be stored."""
        if not admission_wanted(self, rt, subresource, mutating=False):
            return
        yield Validate(
            self._attrs(rt, operation, obj, old, opts, subresource), self._guard(rt, old)
        )

    # --- create ----------------------------------------------------------------------------

    def create(
        self, rt: ResourceType, namespace: str | None, body: Any, opts: WriteOptions
    ) -> Result:
        """POST without admission webhooks (the server's own writes)."""
        return run_sync(self.create_steps(rt, namespace, body, opts))

    def create_steps(
        self, rt: ResourceType, namespace: str | None, body: Any, opts: WriteOptions
    ) -> Steps:
        """POST: decode, mutating admission, strategy and validation, validating
        admission, store."""
        obj = self._decode(rt, namespace, body)
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
        self._check_namespace(rt, obj, creating=True)
        self._check_crd_active(rt)
        obj, opts = yield from self._admit_mutate(rt, "CREATE", obj, None, opts, "")
        if opts.guard is not None:
            opts.guard(rt, obj, None)
        meta = obj["metadata"]
        prepare_create(rt, obj)
        if (rt.group, rt.plural) == (certificates.GROUP, certificates.PLURAL):
            certificates.prepare_create(obj, opts.user_info)
        omit_empty(rt, obj)
        warnings = self._validate(rt, obj, opts)
        later = rt.storage_key == CRD_KEY and self._establish_later()
        if rt.storage_key == CRD_KEY:
            self._prepare_crd(obj, None, established=not later)
        self._record_manager(rt, obj, None, opts, "")
        if opts.admit is not None:
            opts.admit(rt, obj, None, "")
        yield from self._admit_validate(rt, "CREATE", obj, None, opts, "")
        if self.store.get(rt.storage_key, meta.get("namespace") or "", meta["name"]) is not None:
            raise errors.already_exists(rt.group, rt.plural, meta["name"])
        if opts.dry_run:
            return Result(201, obj, warnings)
        to_store = yield from self._storage_form(rt, obj)
        stored = self.store.create(rt.storage_key, to_store)
        if rt.storage_key == CRD_KEY:
            if later:
                self._schedule_establish(stored["metadata"]["name"])
            else:
                self._register_crd(stored)
        return Result(201, self.present(rt, stored), warnings)

    def _to_storage(self, rt: ResourceType, obj: Obj) -> Obj:
        storage = self.registry.storage_type(rt.storage_key) or rt
        obj["apiVersion"] = storage.api_version
        return obj

    def _check_crd_active(self, rt: ResourceType) -> None:
        if rt.crd_name is None:
            return
        definition = self.store.get(CRD_KEY, "", rt.crd_name)
        if definition is not None and definition["metadata"].get("deletionTimestamp"):
            raise APIError(
                405,
                "MethodNotAllowed",
                "create not allowed while custom resource definition is terminating",
            )

    # --- update and patch ------------------------------------------------------------------

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
        obj = self._decode(rt, namespace, body)
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
        sent_rv = obj["metadata"].get("resourceVersion")
        if not sent_rv and rt.put_requires_rv:
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
        obj, opts = yield from self._admit_mutate(rt, "UPDATE", obj, old, opts, subresource)
        self._check_preconditions(rt, obj, old)
        return (yield from self._write_update(rt, obj, old, opts, subresource))

    def _check_preconditions(self, rt: ResourceType, obj: Obj, old: Obj) -> None:
        meta, old_meta = obj["metadata"], old["metadata"]
        name = old_meta["name"]
        if meta.get("uid") and meta["uid"] != old_meta["uid"]:
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
        sent_rv = meta.get("resourceVersion")
        if sent_rv and sent_rv != old_meta["resourceVersion"]:
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
        result = apply_patch(rt, current, content_type, patch)
        try:
            result = self._decode(rt, namespace, result)
        except APIError as error:
            if "quantit" not in error.message:
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
        if result["metadata"].get("name") != name:
            raise errors.bad_request(
                f"the name of the object ({result['metadata'].get('name')}) does not match the"
                f" name on the URL ({name})"
            )
        result, opts = yield from self._admit_mutate(rt, "UPDATE", result, old, opts, subresource)
        self._check_preconditions(rt, result, old)
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
        live = None if old is None else _without_managed_fields(self.present(rt, old))
        write = mf.Write(
            mf.object_type(rt),
            opts.field_manager,
            rt.api_version,
            subresource,
            mf.ignored_paths(rt, subresource, config),
        )
        sent_rv = (config.get("metadata") or {}).get("resourceVersion")
        if old is not None and sent_rv and sent_rv != old["metadata"]["resourceVersion"]:
            # a precondition, as in an update (kube-apiserver: the applied object keeps it)
            raise errors.conflict(rt.group, rt.plural, name)
        merged, managers = write.apply(live, config, mf.decode_managers(old), opts.force)
        opts = replace(opts, operation="Apply", managed=mf.encode_managers(managers))
        if merged is MISSING:
            merged = clone(live or {})
        merged = self._decode(rt, namespace, merged)
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
        return patch

    def _write_update(
        self, rt: ResourceType, new: Obj, old: Obj, opts: WriteOptions, subresource: str
    ) -> Steps:
        name = old["metadata"]["name"]
        if opts.guard is not None and not subresource:
            opts.guard(rt, new, old)
        if subresource in ("status", "finalize"):
            new = self._subresource_update(rt, new, old, subresource)
        else:
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
        warnings = self._validate(rt, new, opts, old)
        if rt.storage_key == CRD_KEY:
            self._prepare_crd(new, old)
        converting = webhook_converts(self.crd_of(rt))
        if not converting:  # else converted by the webhook once admitted, as it is stored
            new = self._to_storage(rt, new)
        self._record_manager(rt, new, old, opts, subresource)
        if opts.admit is not None:
            opts.admit(rt, new, old, subresource)
        yield from self._admit_validate(rt, "UPDATE", new, old, opts, subresource)
        if opts.dry_run:
            return Result(200, self.present(rt, new), warnings)
        if deleting and self._finalized(new):
            self.store.delete(rt.storage_key, old["metadata"].get("namespace") or "", name)
            self._after_delete(rt, old)
            return Result(200, self.present(rt, new), warnings)
        if converting:
            new = yield from self._storage_form(rt, new)
        stored = self.store.update(rt.storage_key, new)
        if rt.storage_key == CRD_KEY and stored is not old:
            self._register_crd(stored)
        return Result(200, self.present(rt, stored), warnings)

    @staticmethod
    def _record_manager(
        rt: ResourceType, new: Obj, old: Obj | None, opts: WriteOptions, subresource: str
    ) -> None:
        """Set ``new``'s managedFields: worked out by apply, else an Update by the writer."""
        meta = new["metadata"]
        if (rt.group, rt.plural) in mf.UNTRACKED:
            meta.pop("managedFields", None)
            return
        if opts.managed is not None:
            managed = opts.managed
        else:
            managers = mf.live_or_new_managers(old, new, subresource)
            if managers is None:  # an existing object without managedFields: not tracked
                meta.pop("managedFields", None)
                return
            write = mf.Write(
                mf.object_type(rt),
                opts.manager,
                rt.api_version,
                subresource,
                mf.ignored_paths(rt, subresource, new),
            )
            live = None if old is None else _without_managed_fields(old)
            try:
                updated = write.update(live, _without_managed_fields(new), managers)
            except StructuredError:
                # As kube-apiserver's FieldManager.UpdateNoErrors: an object the field manager
                # cannot type (a list-map item without its key) loses its managedFields; the
                # kind's validation, later, refuses it.
                meta.pop("managedFields", None)
                return
            managed = mf.encode_managers(updated)
        if managed:
            meta["managedFields"] = managed
        else:
            meta.pop("managedFields", None)

    def _subresource_update(self, rt: ResourceType, new: Obj, old: Obj, subresource: str) -> Obj:
        if subresource == "status":
            return prepare_status_update(rt, new, old)
        result = clone(old)
        wanted = (new.get("spec") or {}).get("finalizers") or []
        result.setdefault("spec", {})["finalizers"] = wanted
        return result

    @staticmethod
    def _finalized(obj: Obj) -> bool:
        if obj["metadata"].get("finalizers"):
            return False
        if obj.get("kind") == "Namespace":
            return not (obj.get("spec") or {}).get("finalizers")
        return True

    # --- delete ----------------------------------------------------------------------------

    def delete(
        self, rt: ResourceType, namespace: str | None, name: str, options: Obj, opts: WriteOptions
    ) -> Result:
        """DELETE without admission webhooks."""
        return run_sync(self.delete_steps(rt, namespace, name, options, opts))

    def delete_steps(
        self,
        rt: ResourceType,
        namespace: str | None,
        name: str,
        options: Obj,
        opts: WriteOptions,
        collection: bool = False,
    ) -> Steps:
        """DELETE: remove at once, or mark deleting while finalizers remain. Admission runs
        in storage, after the preconditions (rest.AdmissionToValidateObjectDeleteFunc:
        mutating, then validating webhooks, both given the stored object as oldObject);
        for an item of a DELETE of a collection the review names no object."""
        old = self.store.get(rt.storage_key, namespace or "", name)
        if old is None:
            raise errors.not_found(rt.group, rt.plural, name)
        _check_delete_preconditions(rt, options.get("preconditions") or {}, old)
        review_options = options_for("DELETE", opts.query, options)
        for mutating, step in ((True, Mutate), (False, Validate)):
            if admission_wanted(self, rt, "", mutating=mutating):
                attrs = self._attrs(rt, "DELETE", None, old, opts, "", review_options)
                if collection:
                    attrs.name = ""
                yield step(attrs, self._guard(rt, old))
        obj = clone(old)
        meta = obj["metadata"]
        finalizers = list(meta.get("finalizers") or [])
        policy = options.get("propagationPolicy")
        if policy is None and options.get("orphanDependents") is not None:
            policy = "Orphan" if options["orphanDependents"] else "Background"
        for wanted, finalizer in (("Orphan", "orphan"), ("Foreground", "foregroundDeletion")):
            if policy == wanted and finalizer not in finalizers:
                finalizers.append(finalizer)
        first_crd_delete = rt.storage_key == CRD_KEY and not meta.get("deletionTimestamp")
        if first_crd_delete and CRD_FINALIZER not in finalizers:
            # the CRD REST delete: "upon first request to delete, add our finalizer"
            finalizers.append(CRD_FINALIZER)
        if finalizers:
            meta["finalizers"] = finalizers
        if not self._finalized(obj) or (rt.plural == "namespaces" and not rt.group):
            return self._mark_deleting(rt, obj, old, options, opts)
        if not opts.dry_run:
            gone = self.store.delete(rt.storage_key, namespace or "", name)
            self._after_delete(rt, old)
        else:
            gone = old
        if rt.delete_returns_object:
            return Result(200, self.present(rt, gone))
        details = {"name": name, "kind": rt.plural, "uid": meta["uid"]}
        if rt.group:
            details["group"] = rt.group
        return Result(
            200,
            {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Success",
                "details": details,
            },
        )

    def _mark_deleting(
        self, rt: ResourceType, obj: Obj, old: Obj, options: Obj, opts: WriteOptions
    ) -> Result:
        meta = obj["metadata"]
        if not meta.get("deletionTimestamp"):
            meta["deletionTimestamp"] = now_time()
            meta["deletionGracePeriodSeconds"] = 0
            if meta.get("generation"):
                meta["generation"] += 1
        if rt.plural == "namespaces" and not rt.group:
            obj.setdefault("status", {})["phase"] = "Terminating"
        if rt.storage_key == CRD_KEY:
            crds.set_terminating(obj)
        stored = obj if opts.dry_run else self.store.update(rt.storage_key, obj)
        code = 202 if options.get("orphanDependents") is False else 200
        return Result(code, self.present(rt, stored))

    def _after_delete(self, rt: ResourceType, old: Obj) -> None:
        if rt.storage_key == CRD_KEY:
            self.registry.remove_crd(old["metadata"]["name"])
            for callback in self.on_crd_removed:
                callback(crds.storage_key_of(old))

    def delete_collection(
        self, rt: ResourceType, selection: Filter, options: Obj, opts: WriteOptions
    ) -> Result:
        """DELETE of a collection without admission webhooks."""
        return run_sync(self.delete_collection_steps(rt, selection, options, opts))

    def delete_collection_steps(
        self, rt: ResourceType, selection: Filter, options: Obj, opts: WriteOptions
    ) -> Steps:
        self.check_field_selector(rt, selection.fields)
        deleted = []
        for obj in list(self.store.items(rt.storage_key, selection.namespace)):
            if selection.matches(obj):
                meta = obj["metadata"]
                if (
                    self.store.get(rt.storage_key, meta.get("namespace") or "", meta["name"])
                    is None
                ):
                    continue  # deleted while webhooks ran for an earlier item
                result = yield from self.delete_steps(
                    rt, meta.get("namespace"), meta["name"], options, opts, collection=True
                )
                deleted.append(result.body if result.body.get("kind") != "Status" else obj)
        body = {
            "kind": rt.list_kind,
            "apiVersion": rt.api_version,
            "metadata": {"resourceVersion": str(self.store.rv)},
            "items": [self._list_item(rt, o) for o in deleted],
        }
        return Result(200, body)

    # --- scale -----------------------------------------------------------------------------

    def get_scale(self, rt: ResourceType, namespace: str | None, name: str) -> Obj:
        """The autoscaling/v1 Scale view of an object."""
        found = self.store.get(rt.storage_key, namespace or "", name)
        if found is None:
            raise errors.not_found(rt.group, f"{rt.plural}/scale", name)
        return self._scale_of(rt, found)

    def _scale_of(self, rt: ResourceType, found: Obj) -> Obj:
        assert rt.scale is not None
        obj = self.present(rt, found)
        paths = rt.scale
        selector: Any = _get_path(obj, paths.label_selector) if paths.label_selector else None
        if paths.selector_is_struct and isinstance(selector, dict):
            selector = label_selector_to_string(selector)
        meta = obj["metadata"]
        status: Obj = {"replicas": _get_path(obj, paths.status_replicas) or 0}
        if selector:
            status["selector"] = selector
        return {
            "kind": "Scale",
            "apiVersion": "autoscaling/v1",
            "metadata": {
                k: meta[k]
                for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
                if k in meta
            },
            "spec": {"replicas": _get_path(obj, paths.spec_replicas) or 0},
            "status": status,
        }

    def write_scale(
        self, rt: ResourceType, namespace: str | None, name: str, scale: Obj, opts: WriteOptions
    ) -> Result:
        """PUT of a Scale without admission webhooks."""
        return run_sync(self.write_scale_steps(rt, namespace, name, scale, opts))

    def write_scale_steps(
        self, rt: ResourceType, namespace: str | None, name: str, scale: Obj, opts: WriteOptions
    ) -> Steps:
        """Set the replicas of the object behind a Scale (PUT or patched Scale)."""
        assert rt.scale is not None
        old = self.store.get(rt.storage_key, namespace or "", name)
        if old is None:
            raise errors.not_found(rt.group, f"{rt.plural}/scale", name)
        replicas = (scale.get("spec") or {}).get("replicas")
        _check_replicas(name, replicas)
        obj = clone(self.present(rt, old))
        _set_path(obj, rt.scale.spec_replicas, replicas)
        obj, opts = yield from self._admit_mutate(rt, "UPDATE", obj, old, opts, "scale")
        self._check_preconditions(rt, {"metadata": scale.get("metadata") or {}}, old)
        result = yield from self._write_update(rt, obj, old, opts, "scale")
        return Result(200, self.get_scale(rt, namespace, name), result.warnings)

    def patch_scale_steps(
        self,
        rt: ResourceType,
        namespace: str | None,
        name: str,
        content_type: str,
        patch: Any,
        opts: WriteOptions,
    ) -> Steps:
        """A merge/JSON/strategic patch of a Scale (or a server-side apply)."""
        if content_type == APPLY_PATCH:
            return (yield from self.apply_scale_steps(rt, namespace, name, patch, opts))
        scale = self.get_scale(rt, namespace, name)
        scale_rt = ResourceType("autoscaling", "v1", "scale", "scale", "Scale", rt.namespaced)
        patched = apply_patch(scale_rt, scale, content_type, patch)
        return (yield from self.write_scale_steps(rt, namespace, name, patched, opts))

    def apply_scale(
        self, rt: ResourceType, namespace: str | None, name: str, scale: Any, opts: WriteOptions
    ) -> Result:
        """Server-side apply of a Scale without admission webhooks."""
        return run_sync(self.apply_scale_steps(rt, namespace, name, scale, opts))

    def apply_scale_steps(
        self, rt: ResourceType, namespace: str | None, name: str, scale: Any, opts: WriteOptions
    ) -> Steps:
        """Server-side apply of a Scale: the replicas go to the object behind it, owned by
        the applier with subresource ``scale`` (k8s.io/apiserver's ScaleHandler)."""
        assert rt.scale is not None
        old = self.store.get(rt.storage_key, namespace or "", name)
        if old is None:
            raise errors.not_found(rt.group, f"{rt.plural}/scale", name)
        replicas = ((scale if isinstance(scale, dict) else {}).get("spec") or {}).get("replicas")
        config: Obj = {"apiVersion": rt.api_version, "kind": rt.kind, "metadata": {"name": name}}
        if namespace:
            config["metadata"]["namespace"] = namespace
        if replicas is not None:
            _set_path(config, rt.scale.spec_replicas, replicas)
        result = yield from self._apply(rt, namespace, name, config, old, opts, "scale")
        return Result(200, self.get_scale(rt, namespace, name), result.warnings)

    # --- CRDs ------------------------------------------------------------------------------

    def _prepare_crd(self, obj: Obj, old: Obj | None, established: bool = True) -> None:
        crds.crd_defaults(obj)
        if old is None and not established:
            obj["status"] = crds.pending_crd_status(obj)  # the controllers have not run yet
            return
        if obj["metadata"].get("deletionTimestamp"):
            return
        if old is not None and not established:
            return
        obj["status"] = crds.crd_status(obj, old)

    def _establish_later(self) -> bool:
        if self.crd_establish_delay <= 0:
            return False
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return False
        return True

    def _schedule_establish(self, name: str) -> None:
        loop = asyncio.get_running_loop()
        loop.call_later(self.crd_establish_delay, self._establish, name)

    def _establish(self, name: str) -> None:
        """What kube-apiserver's naming and establishing controllers do to a new CRD:
        NamesAccepted and Established, its resources served."""
        crd = self.store.get(CRD_KEY, "", name)
        if crd is None or (crd.get("status") or {}).get("conditions") is not None:
            return
        if crd["metadata"].get("deletionTimestamp"):
            return
        established = clone(crd)
        self._prepare_crd(established, crd)
        stored = self.store.update(CRD_KEY, established)
        self._register_crd(stored)

    def _register_crd(self, definition: Obj) -> None:
        self.registry.remove_crd(definition["metadata"]["name"])
        preferred = crds.preferred_version(definition)
        for rt in crds.resource_types(definition):
            self.registry.add(rt, preferred=rt.version == preferred)

    # --- for the built-in controllers ------------------------------------------------------

    def replace(self, storage_key: str, obj: Obj, subresource: str = "") -> Result:
        """Write ``obj`` over the stored object of the same name, without preconditions."""
        rt = self.registry.storage_type(storage_key)
        meta = obj["metadata"]
        old = self.store.get(storage_key, meta.get("namespace") or "", meta["name"])
        if rt is None or old is None:
            raise errors.not_found("", storage_key, meta["name"])
        return run_sync(self._write_update(rt, obj, old, _CONTROLLER_WRITE, subresource))

    def remove(
        self, storage_key: str, namespace: str, name: str, policy: str = "Background"
    ) -> None:
        """DELETE an object as a controller would (finalizers respected); gone is fine."""
        rt = self.registry.storage_type(storage_key)
        if rt is None or self.store.get(storage_key, namespace, name) is None:
            return
        self.delete(rt, namespace or None, name, {"propagationPolicy": policy}, _CONTROLLER_WRITE)
