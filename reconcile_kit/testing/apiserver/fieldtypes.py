"""Schema types as server-side apply sees them: scalars, structs, maps and lists.

structured-merge-diff (sigs.k8s.io/structured-merge-diff ``schema``) merges and tracks
ownership by type, not by value: a struct's declared fields, a granular or atomic map,
an atomic, set or map (keyed) list. kube-apiserver derives these from OpenAPI
(k8s.io/kube-openapi ``schemaconv``): ``x-kubernetes-list-type`` /
``x-kubernetes-list-map-keys`` / ``x-kubernetes-map-type`` on the Go types (``kubetypes``
holds them, with ``+structType=atomic`` types in ``ATOMIC``), and from a CRD version's
structural schema (lists without a list type are atomic; ``x-kubernetes-preserve-unknown-
fields`` gives the deduced type: maps granular, lists atomic) with ``metadata`` typed as
ObjectMeta.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any

from .kubetypes import ATOMIC, KINDS, MESSAGES

SCALAR, STRUCT, MAP, LIST, UNTYPED = "scalar", "struct", "map", "list", "untyped"
_SCALARS = {"string", "bytes", "bool", "int32", "int64", "double", "float"}
_SCALARS |= {"Time", "MicroTime", "Duration", "Quantity", "IntOrString"}
STRING, NUMERIC, BOOLEAN = "string", "numeric", "boolean"
_SCALAR_OF = {"string": STRING, "bytes": STRING, "[]byte": STRING, "bool": BOOLEAN}
_SCALAR_OF |= dict.fromkeys(("int32", "int64", "double", "float"), NUMERIC)
"""structured-merge-diff's scalar type of a Go field type, as kube-openapi's schemaconv
converts the OpenAPI type; the rest (Quantity, IntOrString, times) left untyped."""
_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
_OBJECT_META = _META + "ObjectMeta"


@dataclass(eq=False)
class FieldType:
    """One node of a schema.

    ``kind``: scalar, struct (declared ``fields``; ``elem`` types undeclared keys, None:
    none allowed), map (every key of type ``elem``), list (``list_type`` atomic/set/map,
    map lists keyed by ``keys`` with ``key_defaults``) or untyped (deduced from the value).
    ``atomic`` structs and maps are replaced whole. ``implicit`` names the struct fields a
    Go value always carries (non-pointer structs as ``{}``, non-omitempty lists and maps as
    null), so that comparing with an empty object does not count them as added.
    """

    kind: str
    scalar: str = ""  # STRING, NUMERIC or BOOLEAN; "": any scalar (untyped)
    atomic: bool = False
    list_type: str = "atomic"
    keys: tuple[str, ...] = ()
    key_defaults: dict[str, Any] = field(default_factory=dict)
    implicit: dict[str, Any] = field(default_factory=dict)
    _fields: dict[str, FieldType] | None = None
    _lazy: Any = None
    elem: FieldType | None = None

    @property
    def fields(self) -> dict[str, FieldType]:
        if self._fields is None:
            self._fields = self._lazy() if self._lazy else {}
        return self._fields

    def child(self, key: str) -> tuple[FieldType, bool]:
        """The type of map key / struct field ``key`` and whether it is a declared field."""
        if self.kind == STRUCT:
            declared = self.fields.get(key)
            if declared is not None:
                return declared, True
        return (self.elem or UNTYPED_TYPE), False


UNTYPED_TYPE = FieldType(UNTYPED)
SCALAR_TYPE = FieldType(SCALAR)
_TYPED_SCALARS = {kind: FieldType(SCALAR, scalar=kind) for kind in (STRING, NUMERIC, BOOLEAN)}


def scalar_type(kind: str) -> FieldType:
    """The scalar type of ``kind`` (STRING, NUMERIC, BOOLEAN; anything else: untyped)."""
    return _TYPED_SCALARS.get(kind, SCALAR_TYPE)


def resolve(node: FieldType, value: Any) -> str:
    """The kind ``node`` takes for ``value``: untyped nodes deduce it (maps granular)."""
    if node.kind != UNTYPED:
        return node.kind
    if isinstance(value, dict):
        return MAP
    if isinstance(value, list):
        return LIST  # atomic: the default list type
    return SCALAR


# --- built-in kinds: from kubetypes -----------------------------------------------------


def builtin_type(api_version: str, kind: str) -> FieldType | None:
    """The type of a built-in kind (None: not in kubetypes)."""
    message = KINDS.get((api_version, kind))
    return _message_type(message, "") if message else None


def _flat(message: str) -> list[Any]:
    out: list[Any] = []
    for f in MESSAGES[message]:
        out.extend(_flat(f.type) if "i" in f.flags else [f])
    return out


@cache
def _message_type(message: str, map_type: str) -> FieldType:
    """A struct's type; ``map_type``: the field's x-kubernetes-map-type (``granular``
    overrides an atomic struct type, as a PersistentVolume's claimRef does)."""
    fields = [f for f in _flat(message) if f.name]
    implicit: dict[str, Any] = {}
    for f in fields:
        if f.type in MESSAGES and "p" not in f.flags:
            implicit[f.name] = {}
        elif f.type.startswith(("[]", "map[]")) and "o" not in f.flags and f.type != "[]byte":
            implicit[f.name] = None
    return FieldType(
        STRUCT,
        atomic=map_type == "atomic" or (message in ATOMIC and map_type != "granular"),
        implicit=implicit,
        _lazy=lambda: {f.name: _expr_type(f.type, dict(f.ext)) for f in fields},
    )


def _expr_type(expr: str, ext: dict[str, str]) -> FieldType:
    if expr.startswith("[]") and expr != "[]byte":
        keys = tuple(k for k in ext.get("x-kubernetes-list-map-keys", "").split(",") if k)
        defaults = {"protocol": "TCP"} if "protocol" in keys else {}
        return FieldType(
            LIST,
            list_type=ext.get("x-kubernetes-list-type", "atomic"),
            keys=keys,
            key_defaults=defaults,
            elem=_expr_type(expr[2:], {}),
        )
    if expr.startswith("map[]"):
        atomic = ext.get("x-kubernetes-map-type") == "atomic"
        return FieldType(MAP, atomic=atomic, elem=_expr_type(expr[5:], {}))
    if expr in _SCALARS or expr == "[]byte":
        return scalar_type(_SCALAR_OF.get(expr, ""))
    if expr in MESSAGES:
        return _message_type(expr, ext.get("x-kubernetes-map-type", ""))
    if expr == "RawExtension":  # owned whole (a ControllerRevision's data: f:data)
        return FieldType(MAP, atomic=True, elem=UNTYPED_TYPE)
    return UNTYPED_TYPE  # JSON, FieldsV1, JSONSchemaProps...


# --- custom resources: from the CRD's structural schema ---------------------------------


def custom_type(schema: dict[str, Any]) -> FieldType:
    """The type of a custom resource whose version has ``schema`` (openAPIV3Schema)."""
    root = schema_type(schema)
    fields = {**root.fields, "apiVersion": scalar_type(STRING), "kind": scalar_type(STRING)}
    fields["metadata"] = _message_type(_OBJECT_META, "")
    return FieldType(STRUCT, elem=root.elem, _fields=fields)


def schema_type(schema: dict[str, Any]) -> FieldType:
    """The type of one structural-schema node (as kube-openapi's schemaconv reads it)."""
    if schema.get("x-kubernetes-int-or-string"):
        return SCALAR_TYPE
    kind = schema.get("type")
    if kind == "array":
        return _array_type(schema)
    properties = schema.get("properties")
    additional = schema.get("additionalProperties")
    preserve = bool(schema.get("x-kubernetes-preserve-unknown-fields"))
    atomic = schema.get("x-kubernetes-map-type") == "atomic"
    if properties or schema.get("x-kubernetes-embedded-resource"):
        elem = UNTYPED_TYPE if preserve else None
        props = dict(properties or {})
        return FieldType(
            STRUCT,
            atomic=atomic,
            elem=elem,
            _lazy=lambda: {k: schema_type(v) for k, v in props.items()},
        )
    if isinstance(additional, dict):
        return FieldType(MAP, atomic=atomic, elem=schema_type(additional))
    if kind == "object":
        return FieldType(MAP, atomic=atomic, elem=UNTYPED_TYPE)
    if kind and not preserve:
        return scalar_type(_SCHEMA_SCALARS.get(kind, ""))
    return UNTYPED_TYPE


_SCHEMA_SCALARS = {"string": STRING, "integer": NUMERIC, "number": NUMERIC, "boolean": BOOLEAN}
"""structured-merge-diff's scalar type of a structural schema's ``type``."""


def _array_type(schema: dict[str, Any]) -> FieldType:
    items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
    keys = tuple(schema.get("x-kubernetes-list-map-keys") or ())
    props = (items or {}).get("properties") or {}
    defaults = {k: props[k]["default"] for k in keys if "default" in (props.get(k) or {})}
    return FieldType(
        LIST,
        list_type=schema.get("x-kubernetes-list-type", "atomic"),
        keys=keys,
        key_defaults=defaults,
        elem=schema_type(items or {}),
    )
