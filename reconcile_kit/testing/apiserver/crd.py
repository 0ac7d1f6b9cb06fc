"""CustomResourceDefinitions: validation, registration, and custom resource schemas.

Follows k8s.io/apiextensions-apiserver: CRD validation, the establishing controller's
status, structural-schema pruning, defaulting, and OpenAPI v3 validation of custom
resources with field errors shaped as kube-apiserver's.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from ...client.extras import missing_extra

try:
    import jsonschema
except ModuleNotFoundError as _error:  # pip install reconcile-kit (no extras)
    raise missing_extra(_error, extra="testing", feature="The embedded API server") from _error

from ...meta.time import now_time
from . import errors
from .resources import ResourceType, ScalePaths
from .store import Obj

CRD_KEY = "apiextensions.k8s.io/customresourcedefinitions"
"""The storage key of CustomResourceDefinitions."""
CRD_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
"""The finalizer a CRD's first DELETE adds: its custom resources are deleted first."""

_VERSION_RE = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_priority(version: str) -> tuple[int, int, int, str]:
    """Sort key (smaller first) of Kubernetes version priority: v2 > v1 > v1beta2 > v1alpha1."""
    match = _VERSION_RE.match(version)
    if not match:
        return (3, 0, 0, version)
    major, stage, minor = match.groups()
    rank = {None: 0, "beta": 1, "alpha": 2}[stage]
    return (rank, -int(major), -int(minor or 0), version)


def _cause_required(field: str) -> dict[str, str]:
    return errors.cause("FieldValueRequired", field, "Required value")


def validate_crd(crd: Obj) -> list[dict[str, str]]:
    """Field causes for an invalid CRD (empty when valid)."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    causes: list[dict[str, str]] = []
    group = spec.get("group") or ""
    if not group:
        causes.append(_cause_required("spec.group"))
    elif "." not in group:
        causes.append(
            errors.cause(
                "FieldValueInvalid",
                "spec.group",
                f'Invalid value: "{group}": should be a domain with at least one dot',
            )
        )
    for field in ("plural", "kind"):
        if not names.get(field):
            causes.append(_cause_required(f"spec.names.{field}"))
    name = crd.get("metadata", {}).get("name", "")
    if names.get("plural") and group and name != f"{names['plural']}.{group}":
        causes.append(
            errors.cause(
                "FieldValueInvalid",
                "metadata.name",
                f'Invalid value: "{name}": must be spec.names.plural+"."+spec.group',
            )
        )
    if spec.get("scope") not in ("Namespaced", "Cluster"):
        causes.append(
            errors.cause(
                "FieldValueNotSupported",
                "spec.scope",
                f'Unsupported value: "{spec.get("scope", "")}": supported values: '
                '"Cluster", "Namespaced"',
            )
        )
    causes.extend(_validate_versions(spec.get("versions") or []))
    return causes


def _validate_versions(versions: list[Any]) -> list[dict[str, str]]:
    if not versions:
        return [_cause_required("spec.versions")]
    causes = []
    if sum(1 for v in versions if v.get("storage")) != 1:
        causes.append(
            errors.cause(
                "FieldValueInvalid",
                "spec.versions",
                "Invalid value: []apiextensions.CustomResourceDefinitionVersion{...}: "
                "must have exactly one version marked as storage version",
            )
        )
    schemas = [(v.get("schema") or {}).get("openAPIV3Schema") for v in versions]
    # One schema for every version is hoisted to the internal spec.validation.
    shared = all(schema == schemas[0] for schema in schemas)
    for i, schema in enumerate(schemas):
        field = f"spec.versions[{i}].schema.openAPIV3Schema"
        if not schema:
            causes.append(
                errors.cause("FieldValueRequired", field, "Required value: schemas are required")
            )
        elif schema.get("type") != "object":
            causes.append(
                errors.cause(
                    "FieldValueRequired",
                    f"{field}.type",
                    "Required value: must not be empty at the root",
                )
            )
        elif not shared or i == 0:
            prefix = "spec.validation.openAPIV3Schema" if shared else field
            causes.extend(_structural_causes(schema, prefix, "root"))
    return causes


_EXEMPT_FROM_TYPE = (
    "x-kubernetes-int-or-string",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-preserve-unknown-fields",
)


def _structural_causes(node: Any, path: str, level: str) -> list[dict[str, str]]:
    """A structural schema's missing ``type`` and ``items`` (apiextensions-apiserver
    pkg/apiserver/schema validation.go: every specified field and array item has a type)."""
    if not isinstance(node, dict):
        return []
    causes = []
    if level != "root" and not node.get("type") and not any(node.get(x) for x in _EXEMPT_FROM_TYPE):
        what = "array items" if level == "items" else "object fields"
        causes.append(
            errors.cause(
                "FieldValueRequired",
                f"{path}.type",
                f"Required value: must not be empty for specified {what}",
            )
        )
    if node.get("type") == "array" and "items" not in node:
        causes.append(
            errors.cause("FieldValueRequired", f"{path}.items", "Required value: must be specified")
        )
    causes += _list_type_causes(node, path)
    properties = node.get("properties")
    if isinstance(properties, dict):
        for name in sorted(properties):
            causes += _structural_causes(properties[name], f"{path}.properties[{name}]", "field")
    causes += _structural_causes(node.get("items"), f"{path}.items", "items")
    causes += _structural_causes(
        node.get("additionalProperties"), f"{path}.additionalProperties", "field"
    )
    return causes


_LIST_TYPES = ("atomic", "set", "map")
_SCALARS = ("string", "integer", "number", "boolean")


def _list_type_causes(node: dict[str, Any], path: str) -> list[dict[str, str]]:
    """x-kubernetes-list-type / list-map-keys rules of a structural schema (as
    apiextensions-apiserver validation.go validates them)."""
    list_type = node.get("x-kubernetes-list-type")
    keys = node.get("x-kubernetes-list-map-keys") or []
    found = node.get("items")
    items: dict[str, Any] = found if isinstance(found, dict) else {}
    field = f"{path}.x-kubernetes-list-type"
    if list_type is not None and list_type not in _LIST_TYPES:
        supported = ", ".join(f'"{t}"' for t in _LIST_TYPES)
        return [
            errors.cause(
                "FieldValueNotSupported",
                field,
                f'Unsupported value: "{list_type}": supported values: {supported}',
            )
        ]
    if keys and list_type != "map":
        return [
            errors.cause(
                "FieldValueRequired",
                field,
                "Required value: must be map if x-kubernetes-list-map-keys is non-empty",
            )
        ]
    if list_type == "set" and items.get("type") == "object":
        map_type = items.get("x-kubernetes-map-type")
        if map_type != "atomic":
            shown = "null" if map_type is None else map_type
            return [
                errors.cause(
                    "FieldValueInvalid",
                    f"{path}.items.x-kubernetes-map-type",
                    f'Invalid value: "{shown}": must be atomic as item of a list with'
                    " x-kubernetes-list-type=set",
                )
            ]
    if list_type == "map":
        return _map_key_causes(keys, items, path)
    return []


def _map_key_causes(keys: list[str], items: dict[str, Any], path: str) -> list[dict[str, str]]:
    field = f"{path}.x-kubernetes-list-map-keys"
    if not keys:
        return [
            errors.cause(
                "FieldValueRequired",
                field,
                "Required value: must not be empty if x-kubernetes-list-type is map",
            )
        ]
    properties = items.get("properties") or {}
    if any(k not in properties for k in keys):
        shown = "[]string{" + ", ".join(f'"{k}"' for k in keys) + "}"
        return [
            errors.cause(
                "FieldValueInvalid",
                field,
                f"Invalid value: {shown}: entries must all be names of item properties",
            )
        ]
    causes = []
    required = items.get("required") or []
    for key in keys:
        prop = properties[key]
        where = f"{path}.items.properties[{key}]"
        if prop.get("type") not in _SCALARS:
            causes.append(
                errors.cause(
                    "FieldValueInvalid",
                    f"{where}.type",
                    f'Invalid value: "{prop.get("type")}": must be a scalar type if parent'
                    " array's x-kubernetes-list-type is map",
                )
            )
        elif key not in required and "default" not in prop:
            causes.append(
                errors.cause(
                    "FieldValueRequired",
                    f"{where}.default",
                    "Required value: this property is in x-kubernetes-list-map-keys, so it"
                    " must have a default or be a required property",
                )
            )
    return causes


def pending_crd_status(crd: Obj) -> Obj:
    """A CRD's status in its create response, before kube-apiserver's controllers ran."""
    storage = next((v["name"] for v in crd["spec"]["versions"] if v.get("storage")), "")
    return {
        "conditions": None,
        "acceptedNames": {"plural": "", "kind": ""},
        "storedVersions": [storage] if storage else [],
    }


def crd_status(crd: Obj, previous: Obj | None) -> Obj:
    """The status the establishing controller gives an accepted CRD."""
    names = dict(crd["spec"]["names"])
    names.setdefault("singular", names["kind"].lower())
    names.setdefault("listKind", names["kind"] + "List")
    old_status = (previous or {}).get("status") or {}
    stored = list(old_status.get("storedVersions") or [])
    storage = next(v["name"] for v in crd["spec"]["versions"] if v.get("storage"))
    if storage not in stored:
        stored.append(storage)
    old_conditions = {c["type"]: c for c in old_status.get("conditions") or []}
    when = now_time()

    def condition(ctype: str, reason: str, message: str) -> dict[str, str]:
        old = old_conditions.get(ctype)
        since = old["lastTransitionTime"] if old and old.get("status") == "True" else when
        return {
            "type": ctype,
            "status": "True",
            "lastTransitionTime": since,
            "reason": reason,
            "message": message,
        }

    return {
        "conditions": [
            condition("NamesAccepted", "NoConflicts", "no conflicts found"),
            condition(
                "Established", "InitialNamesAccepted", "the initial names have been accepted"
            ),
        ],
        "acceptedNames": names,
        "storedVersions": stored,
    }


def crd_defaults(crd: Obj) -> None:
    """Defaults the apiserver sets on a CRD (in place)."""
    spec = crd.setdefault("spec", {})
    names = spec.setdefault("names", {})
    if names.get("kind"):
        names.setdefault("singular", names["kind"].lower())
        names.setdefault("listKind", names["kind"] + "List")
    spec.setdefault("conversion", {"strategy": "None"})
    for version in spec.get("versions") or []:
        version.setdefault("served", True)
        version.setdefault("storage", False)


def resource_types(crd: Obj) -> list[ResourceType]:
    """The served versions of ``crd`` as resource types (the storage version marked stored)."""
    spec = crd["spec"]
    names = spec["names"]
    types = []
    for version in spec["versions"]:
        if not version.get("served", True):
            continue
        subresources = version.get("subresources") or {}
        scale = subresources.get("scale")
        types.append(
            ResourceType(
                group=spec["group"],
                version=version["name"],
                plural=names["plural"],
                singular=names.get("singular") or names["kind"].lower(),
                kind=names["kind"],
                namespaced=spec["scope"] == "Namespaced",
                short_names=tuple(names.get("shortNames") or ()),
                categories=tuple(names.get("categories") or ()),
                status="status" in subresources,
                scale=ScalePaths(
                    scale["specReplicasPath"],
                    scale["statusReplicasPath"],
                    scale.get("labelSelectorPath"),
                    selector_is_struct=False,
                )
                if scale
                else None,
                generation="custom",
                status_reset=("*",),
                put_requires_rv=True,
                builtin=False,
                crd_name=crd["metadata"]["name"],
                verbs=CR_VERBS,
                schema=(version.get("schema") or {}).get("openAPIV3Schema"),
                printer_columns=list(version.get("additionalPrinterColumns") or []),
                field_labels=tuple(
                    f["jsonPath"].lstrip(".") for f in version.get("selectableFields") or ()
                ),
                list_kind=names.get("listKind") or names["kind"] + "List",
                stored=bool(version.get("storage")),
            )
        )
    return types


CR_VERBS = ("delete", "deletecollection", "get", "list", "patch", "create", "update", "watch")
"""A custom resource's discovery verbs, in apiextensions-apiserver's (unsorted) order."""


def preferred_version(crd: Obj) -> str:
    served: list[str] = [v["name"] for v in crd["spec"]["versions"] if v.get("served", True)]
    return sorted(served, key=version_priority)[0]


# --- custom resource schemas -------------------------------------------------------------

_ROOT_KEEP = ("apiVersion", "kind", "metadata")


def prune(obj: Obj, schema: dict[str, Any]) -> list[str]:
    """Drop fields the structural ``schema`` does not know (in place); returns their paths."""
    unknown: list[str] = []
    properties = schema.get("properties") or {}
    for key in list(obj):
        if key in _ROOT_KEEP:
            continue
        if key in properties:
            obj[key] = _prune_value(obj[key], properties[key], key, unknown)
        elif not schema.get("x-kubernetes-preserve-unknown-fields"):
            unknown.append(key)
            del obj[key]
    return unknown


def _prune_value(value: Any, schema: dict[str, Any], path: str, unknown: list[str]) -> Any:
    if isinstance(value, dict):
        _prune_object(value, schema, path, unknown)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            value[i] = _prune_value(item, schema["items"], f"{path}[{i}]", unknown)
    return value


def _prune_object(
    value: dict[str, Any], schema: dict[str, Any], path: str, unknown: list[str]
) -> None:
    preserve = schema.get("x-kubernetes-preserve-unknown-fields", False)
    properties = schema.get("properties")
    additional = schema.get("additionalProperties")
    embedded = schema.get("x-kubernetes-embedded-resource", False)
    for key in list(value):
        child_path = f"{path}.{key}"
        if properties and key in properties:
            value[key] = _prune_value(value[key], properties[key], child_path, unknown)
        elif isinstance(additional, dict) and not properties:
            value[key] = _prune_value(value[key], additional, child_path, unknown)
        elif additional is True or preserve or (embedded and key in _ROOT_KEEP):
            continue
        else:
            unknown.append(child_path)
            del value[key]


def apply_defaults(value: Any, schema: dict[str, Any]) -> None:
    """Set ``default`` values of absent properties (in place), recursively."""
    if isinstance(value, dict):
        for key, sub in (schema.get("properties") or {}).items():
            if key not in value and "default" in sub:
                value[key] = copy.deepcopy(sub["default"])
            if key in value:
                apply_defaults(value[key], sub)
        additional = schema.get("additionalProperties")
        if isinstance(additional, dict) and not schema.get("properties"):
            for item in value.values():
                apply_defaults(item, additional)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for item in value:
            apply_defaults(item, schema["items"])


_PASSTHROUGH = (
    "enum",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "required",
    "multipleOf",
)


def go_pattern(pattern: str) -> str:
    """A Go (RE2) pattern as Python ``re`` reads it: a final ``$`` matches only at the end.

    In Python ``$`` also matches before a trailing newline; in RE2 without the ``m`` flag
    it does not, so ``^Ready$`` must reject ``"Ready\\n"`` as kube-apiserver does.
    """
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        return pattern[:-1] + "\\Z"
    return pattern


def to_json_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Translate a Kubernetes structural schema into a JSON Schema (draft 4) document."""
    out: dict[str, Any] = {key: schema[key] for key in _PASSTHROUGH if key in schema}
    if isinstance(out.get("pattern"), str):
        out["pattern"] = go_pattern(out["pattern"])
    if schema.get("x-kubernetes-int-or-string"):
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    elif "type" in schema:
        out["type"] = [schema["type"], "null"] if schema.get("nullable") else schema["type"]
    if "properties" in schema:
        out["properties"] = {k: to_json_schema(v) for k, v in schema["properties"].items()}
    if isinstance(schema.get("items"), dict):
        out["items"] = to_json_schema(schema["items"])
    if isinstance(schema.get("additionalProperties"), dict):
        out["additionalProperties"] = to_json_schema(schema["additionalProperties"])
    for key in ("allOf", "anyOf", "oneOf"):
        if key in schema:
            out[key] = [to_json_schema(s) for s in schema[key]]
    if "not" in schema:
        out["not"] = to_json_schema(schema["not"])
    return out


def _type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "null" if value is None else "object"


def _go_value(value: Any) -> str:
    if isinstance(value, str):
        return '"' + value.replace('"', '\\"') + '"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return '"' + _type_name(value) + '"'


def _path(parts: Any) -> str:
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _schema_cause(err: jsonschema.ValidationError) -> dict[str, str]:
    path = _path(err.absolute_path)
    value: Any = err.instance
    arg: Any = err.validator_value
    kind = str(err.validator)
    if kind == "pattern" and isinstance(arg, str) and arg.endswith("\\Z"):
        arg = arg[:-2] + "$"  # show the pattern as the CRD wrote it
    if kind == "required":
        missing = err.message.split("'")[1] if "'" in err.message else ""
        field = f"{path}.{missing}" if path else missing
        return errors.cause("FieldValueRequired", field, "Required value")
    if kind == "type":
        expected = arg if isinstance(arg, str) else arg[0]
        actual = _go_value(_type_name(value))
        return errors.cause(
            "FieldValueTypeInvalid",
            path,
            f"Invalid value: {actual}: {path} in body must be of type {expected}: {actual}",
        )
    if kind == "enum":
        allowed = ", ".join(_go_value(v) for v in arg)
        return errors.cause(
            "FieldValueNotSupported",
            path,
            f"Unsupported value: {_go_value(value)}: supported values: {allowed}",
        )
    if kind == "maxLength":
        return errors.cause("FieldValueTooLong", path, f"Too long: may not be longer than {arg}")
    if kind == "maxItems":
        return errors.cause(
            "FieldValueTooMany", path, f"Too many: {len(value)}: must have at most {arg} items"
        )
    phrase = {
        "minimum": f"should be greater than or equal to {arg}",
        "maximum": f"should be less than or equal to {arg}",
        "minLength": f"should be at least {arg} chars long",
        "minItems": f"should have at least {arg} items",
        "pattern": f"should match '{arg}'",
        "multipleOf": f"should be a multiple of {arg}",
    }.get(kind, err.message)
    return errors.cause(
        "FieldValueInvalid", path, f"Invalid value: {_go_value(value)}: {path} in body {phrase}"
    )


class SchemaValidator:
    """Validates custom resources against one CRD version's openAPIV3Schema."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = schema
        body = to_json_schema(schema)
        props = body.get("properties", {})
        props.pop("metadata", None)
        props.pop("apiVersion", None)
        props.pop("kind", None)
        self._validator = jsonschema.Draft4Validator(body)

    def causes(self, obj: Obj) -> list[dict[str, str]]:
        """Field causes of every schema violation in ``obj``, in document order."""
        found = sorted(self._validator.iter_errors(obj), key=lambda e: list(map(str, e.path)))
        return [_schema_cause(err) for err in found]


def set_terminating(crd: Obj) -> None:
    """Mark a CRD being deleted: its Terminating condition, as the CRD's REST Delete sets
    it (apiextensions-apiserver pkg/registry/customresourcedefinition/etcd.go)."""
    conditions = [
        c
        for c in (crd.get("status") or {}).get("conditions") or []
        if c.get("type") != "Terminating"
    ]
    conditions.append(
        {
            "type": "Terminating",
            "status": "True",
            "lastTransitionTime": now_time(),
            "reason": "InstanceDeletionPending",
            "message": "CustomResourceDefinition marked for deletion; CustomResource deletion"
            " will begin soon",
        }
    )
    crd.setdefault("status", {})["conditions"] = conditions


def storage_key_of(crd: Obj) -> str:
    """Storage key of the custom resources a CRD defines."""
    return f"{crd['spec']['group']}/{crd['spec']['names']['plural']}"
