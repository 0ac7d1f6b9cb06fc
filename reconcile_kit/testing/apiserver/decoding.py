"""Decoding and validation of a write's body, as kube-apiserver's handlers and REST
storage do them: the body checked against the URL (apiVersion, kind, namespace, name),
Secrets' ``stringData`` folded in, quantities made canonical, unknown fields dropped
(``fieldValidation``), a custom resource's schema pruning, defaults, OpenAPI and CEL
validation, and each kind's validation (k8s.io/apiserver pkg/endpoints/handlers/rest.go,
pkg/registry/rest/create.go and update.go).
"""

from __future__ import annotations

from typing import Any

from . import crd as crds
from . import errors, hpaversions
from . import managedfields as mf
from .cel import rule_causes
from .crd import CRD_KEY
from .gotime import TimeParseError
from .gotypes import type_error
from .knownfields import prune_unknown_fields
from .kubetypes import KINDS
from .poddefaults import convert_pod
from .quantity import QuantityError, canonicalize_object
from .resources import ResourceType
from .secrets import decode_secret
from .store import Obj, Store
from .strategy import GENERIC_METADATA_ONLY, metadata_causes
from .structured import duplicate_causes
from .validation import kind_causes
from .writes import WriteOptions, clone

__all__ = [
    "check_namespace",
    "decode",
    "decode_fields",
    "strict_error",
    "unknown_fields",
    "validate",
    "validate_custom",
]


def strict_error(rt: ResourceType, texts: list[str]) -> str:
    """The decode error the handler wraps (k8s.io/apiserver handlers/rest.go)."""
    return (
        f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: '
        "strict decoding error: " + ", ".join(texts)
    )


_INTERNAL_PACKAGES = {"": "core", "events.k8s.io": "core"}

_RBAC_KINDS = ("Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding")
_OLDER_VERSIONS: dict[str, tuple[str, ...]] = {
    "apps/v1beta1": ("Deployment", "StatefulSet", "ControllerRevision"),
    "apps/v1beta2": ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "ControllerRevision"),
    "extensions/v1beta1": ("Deployment", "DaemonSet", "Ingress", "ReplicaSet", "NetworkPolicy"),
    "batch/v1beta1": ("CronJob",),
    "networking.k8s.io/v1beta1": ("Ingress", "IngressClass"),
    "policy/v1beta1": ("PodDisruptionBudget",),
    "autoscaling/v1": ("HorizontalPodAutoscaler",),
    "autoscaling/v2beta1": ("HorizontalPodAutoscaler",),
    "autoscaling/v2beta2": ("HorizontalPodAutoscaler",),
    "rbac.authorization.k8s.io/v1beta1": _RBAC_KINDS,
    "rbac.authorization.k8s.io/v1alpha1": _RBAC_KINDS,
    "storage.k8s.io/v1beta1": ("StorageClass", "CSIDriver", "CSINode", "CSIStorageCapacity"),
    "storage.k8s.io/v1alpha1": ("CSIStorageCapacity",),
    "scheduling.k8s.io/v1beta1": ("PriorityClass",),
    "scheduling.k8s.io/v1alpha1": ("PriorityClass",),
    "coordination.k8s.io/v1beta1": ("Lease",),
    "discovery.k8s.io/v1beta1": ("EndpointSlice",),
    "events.k8s.io/v1beta1": ("Event",),
    "certificates.k8s.io/v1beta1": ("CertificateSigningRequest",),
    "admissionregistration.k8s.io/v1beta1": (
        "ValidatingWebhookConfiguration",
        "MutatingWebhookConfiguration",
    ),
    "node.k8s.io/v1beta1": ("RuntimeClass",),
    "node.k8s.io/v1alpha1": ("RuntimeClass",),
}
"""Older versions of the served kinds kube-apiserver 1.32's scheme still registers (and
converts), though it serves them no more (kubernetes pkg/apis/<group>/install)."""


def _registered(api_version: str, kind: str) -> bool:
    """Whether kube-apiserver's scheme decodes ``kind`` in ``api_version``."""
    return (api_version, kind) in KINDS or kind in _OLDER_VERSIONS.get(api_version, ())


def other_kind_error(rt: ResourceType, api_version: str, kind: str) -> str:
    """The decoder's error for a built-in body of another kind (k8s.io/apimachinery
    runtime.Scheme: conversion to the endpoint's internal type, or an unregistered kind),
    as transformDecodeError words it."""
    version = api_version.rpartition("/")[2]
    prefix = f'{kind} in version "{version}" cannot be handled as a {rt.kind}'
    if not _registered(api_version, kind):
        return (
            f'{prefix}: no kind "{kind}" is registered for version "{api_version}"'
            ' in scheme "pkg/runtime/scheme.go:100"'
        )
    internal = _INTERNAL_PACKAGES.get(rt.group, rt.group.split(".")[0])
    return f"{prefix}: converting ({version}.{kind}) to ({internal}.{rt.kind}): unknown conversion"


def decode(rt: ResourceType, namespace: str | None, body: Any) -> Obj:
    """The object of a write's ``body`` as ``rt`` stores it: apiVersion and kind checked
    against the URL's (400, or a custom resource's 422) and set, the namespace from the URL
    (400 when the body names another; dropped for cluster-scoped kinds), a Secret's
    ``stringData`` folded into ``data``, quantities made canonical (400 when one does not
    parse). Raises APIError."""
    if not isinstance(body, dict):
        raise errors.bad_request("the body of the request must be a JSON object")
    obj: Obj = body
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    other = kind != rt.kind or not _registered(str(api_version or rt.api_version), kind)
    if rt.builtin and rt.schema is None and kind and other:
        raise errors.bad_request(other_kind_error(rt, str(api_version or rt.api_version), kind))
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
    message = KINDS.get((rt.api_version, rt.kind)) if rt.crd_name is None else None
    saved = type_error(message, obj) if message else None
    if saved:
        _undecodable(rt, obj, saved)
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
    if (rt.group, rt.plural) == ("", "pods"):
        convert_pod(obj)
    if rt.crd_name is None:
        try:
            canonicalize_object(rt.api_version, rt.kind, obj)
        except (QuantityError, TimeParseError) as error:
            raise errors.bad_request(
                f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: {error}'
            ) from None
    if hpaversions.converts(rt):
        hpaversions.normalize(obj)
    return obj


def _undecodable(rt: ResourceType, obj: Obj, saved: str) -> None:
    """The 400 of a body Go's decoder stores with a (type) error: the one saved, unless a
    quantity or time that does not parse stops the decoder (that error wins). Raises
    APIError."""
    error: Exception = ValueError(saved)
    try:
        canonicalize_object(rt.api_version, rt.kind, clone(obj))
    except (QuantityError, TimeParseError) as stopped:
        error = stopped
    except (TypeError, AttributeError, ValueError):  # the wrongly typed parts
        pass
    raise errors.bad_request(
        f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: {error}'
    )


def check_namespace(store: Store, rt: ResourceType, obj: Obj, creating: bool) -> None:
    """A namespaced write's namespace: required (400), existing in ``store`` (404), and,
    when ``creating``, not being terminated (403 with a NamespaceTerminating cause).
    Raises APIError."""
    if not rt.namespaced:
        return
    ns = obj["metadata"].get("namespace") or ""
    if not ns:
        raise errors.bad_request("a namespace is required for a namespaced resource")
    namespace = store.get("/namespaces", "", ns)
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


_VALIDATED_TWICE = {  # (group, plural) -> whether the metadata is validated twice too
    ("", "persistentvolumeclaims"): True,
    ("", "persistentvolumes"): True,  # ValidatePersistentVolume, then ...Update
    ("", "replicationcontrollers"): True,  # ValidateReplicationController, then ...Update
    ("apps", "daemonsets"): True,  # ValidateDaemonSet, then ValidateDaemonSetUpdate
    ("apps", "replicasets"): True,  # ValidateReplicaSet, then ValidateReplicaSetUpdate
    ("networking.k8s.io", "networkpolicies"): False,
    ("rbac.authorization.k8s.io", "roles"): True,
    ("rbac.authorization.k8s.io", "clusterroles"): True,
    ("rbac.authorization.k8s.io", "rolebindings"): True,
    ("rbac.authorization.k8s.io", "clusterrolebindings"): True,
}


def validate(
    rt: ResourceType,
    obj: Obj,
    opts: WriteOptions,
    old: Obj | None = None,
    subresource: str = "",
    sent: Obj | None = None,
) -> list[str]:
    """The checks of a write's object (``old``: the stored one, on an update; ``sent``: the
    object as the update sent it, see validation.Write): metadata,
    a custom resource's schema, duplicate list items and CEL rules, a CRD's own rules,
    update rules, the kind's validation; the decoding's warnings, or a 422 APIError with
    every cause (carrying those warnings)."""
    warnings = [*opts.decode_warnings, *decode_fields(rt, obj, opts)]
    if old is None and (rt.group, rt.plural) in GENERIC_METADATA_ONLY:
        causes = kind_causes(rt, obj) or metadata_causes(rt, obj)
        if causes:
            raise _invalid(rt, obj, causes, warnings)
        return warnings
    causes = metadata_causes(rt, obj)
    if rt.schema is not None:
        causes += crds.SchemaValidator(rt.schema).causes(obj)
        content = {k: v for k, v in obj.items() if k != "metadata"}
        duplicates = duplicate_causes(content, mf.object_type(rt))
        causes += [errors.cause("FieldValueDuplicate", f, m) for f, m in duplicates]
        causes += _rules_unless_blocked(rt.schema, obj, old, causes)
    if rt.storage_key == CRD_KEY:
        causes += crds.validate_crd(obj)
    if old is not None and not subresource and (rt.group, rt.plural) in _VALIDATED_TWICE:
        # the strategy's ValidateUpdate runs the create validation, then the update one,
        # which runs it again (with the metadata, but for NetworkPolicies)
        causes += kind_causes(rt, obj)
        if _VALIDATED_TWICE[(rt.group, rt.plural)]:
            causes += metadata_causes(rt, obj)
    causes += kind_causes(rt, obj, old, subresource, sent)
    if causes:
        raise _invalid(rt, obj, causes, warnings)
    return warnings


# the schema errors that leave CEL rules unchecked (apiextensions-apiserver hasBlockingErr)
_BLOCKING = frozenset(
    {
        "FieldValueNotSupported",
        "FieldValueRequired",
        "FieldValueTooLong",
        "FieldValueTooMany",
        "FieldValueTypeInvalid",
    }
)
_NOT_CHECKED = (
    'Invalid value: "null": some validation rules were not checked because the object was'
    " invalid; correct the existing errors to complete validation"
)


def _rules_unless_blocked(
    schema: Obj, obj: Obj, old: Obj | None, found: list[dict[str, str]]
) -> list[dict[str, str]]:
    """A custom resource's ``x-kubernetes-validations`` causes; none but one saying so
    when ``found`` (its metadata and schema causes) has an enum, required, length, count
    or type error, as apiextensions-apiserver's strategy skips the rules then (a schema
    without rules has no CEL validator, and no such cause)."""
    if any(cause.get("reason") in _BLOCKING for cause in found) and _has_rules(schema):
        return [errors.cause("FieldValueInvalid", "<nil>", _NOT_CHECKED)]
    return rule_causes(schema, obj) if old is None else rule_causes(schema, obj, old)


def _has_rules(schema: Any) -> bool:
    """Whether ``schema`` declares ``x-kubernetes-validations`` anywhere."""
    if isinstance(schema, dict):
        if schema.get("x-kubernetes-validations"):
            return True
        return any(_has_rules(value) for value in schema.values())
    return isinstance(schema, list) and any(_has_rules(value) for value in schema)


def _invalid(
    rt: ResourceType, obj: Obj, causes: list[dict[str, str]], warnings: list[str]
) -> errors.APIError:
    """The 422 of ``causes``, carrying the decoder's ``warnings`` (kube-apiserver's warning
    recorder sends them on every answer, a refusal included)."""
    # events.k8s.io serves core's internal Event, whose GroupKind has no group
    group = "" if rt.group == "events.k8s.io" else rt.group
    invalid = errors.invalid(rt.kind, group, obj["metadata"].get("name", ""), causes)
    invalid.warnings = warnings
    return invalid


def decode_fields(rt: ResourceType, obj: Obj, opts: WriteOptions) -> list[str]:
    """What decoding does to the fields: unknown ones dropped (``Strict``: 400; ``Warn``:
    the warnings returned), a custom resource's defaults applied."""
    if rt.schema is not None:
        return validate_custom(rt, obj, opts)
    if not rt.builtin:
        return []
    # Decoding into the Go type drops unknown fields (see knownfields.py).
    unknown = prune_unknown_fields(rt.api_version, rt.kind, obj) or []
    texts = [f'unknown field "{path}"' for path in unknown]
    if texts and opts.field_validation == "Strict":
        raise errors.bad_request(strict_error(rt, texts))
    return texts if opts.field_validation == "Warn" else []


def unknown_fields(rt: ResourceType, obj: Obj) -> list[str]:
    """The ``unknown field "path"`` texts of decoding ``obj`` (not changed)."""
    view = clone(obj)
    if rt.schema is not None:
        unknown = crds.prune(view, rt.schema)
    elif rt.builtin:
        unknown = prune_unknown_fields(rt.api_version, rt.kind, view) or []
    else:
        unknown = []
    return [f'unknown field "{path}"' for path in unknown]


def validate_custom(rt: ResourceType, obj: Obj, opts: WriteOptions) -> list[str]:
    """A custom resource's decoding: fields its schema does not declare pruned, defaults
    applied; the unknown fields' warnings (``fieldValidation=Warn``), none (``Ignore``), or
    a 400 APIError (``Strict``)."""
    assert rt.schema is not None
    unknown = crds.prune(obj, rt.schema)
    crds.apply_defaults(obj, rt.schema)
    if not unknown or opts.field_validation == "Ignore":
        return []
    texts = [f'unknown field "{path}"' for path in unknown]
    if opts.field_validation == "Strict":
        raise errors.bad_request(strict_error(rt, texts))
    return texts
