"""Unknown-field detection for built-in kinds (what decoding into the Go struct drops).

kube-apiserver decodes a built-in object's JSON into its Go type, so fields the type does
not have are lost: with ``fieldValidation=Ignore`` silently, with ``Warn`` (the default)
with a ``Warning: unknown field "spec.foo"`` header, with ``Strict`` (what kubectl sends)
as a 400 ``strict decoding error: unknown field "spec.foo"`` (k8s.io/apiserver
pkg/endpoints/handlers/rest.go, sigs.k8s.io/json strict decoding). Paths are written as
those errors write them: ``spec.template.spec.containers[0].imagee``.

The field names come from :mod:`.kubetypes` (the Go API types as data).
"""

from __future__ import annotations

from typing import Any

from .kubetypes import KINDS, MESSAGES, F

# Types whose JSON form is free (or not an object of fields): never descended into.
_OPAQUE = (
    "Time",
    "MicroTime",
    "Duration",
    "Quantity",
    "IntOrString",
    "RawExtension",
    "FieldsV1",
    "JSON",
    "JSONSchemaPropsOrArray",
    "JSONSchemaPropsOrBool",
    "JSONSchemaPropsOrStringArray",
)
_FIELDS: dict[str, dict[str, F]] = {}


def _fields(message: str) -> dict[str, F]:
    known = _FIELDS.get(message)
    if known is None:
        known = {}
        for f in MESSAGES[message]:
            if "i" in f.flags:
                known.update(_fields(f.type))
            else:
                known[f.name] = f
        _FIELDS[message] = known
    return known


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _value(value: Any, type_expr: str, path: str, unknown: list[str]) -> None:
    if type_expr.startswith("[]"):
        if isinstance(value, list):
            for i, item in enumerate(value):
                _value(item, type_expr[2:], f"{path}[{i}]", unknown)
    elif type_expr.startswith("map[]"):
        if isinstance(value, dict):
            for key, item in value.items():
                _value(item, type_expr[len("map[]") :], _join(path, str(key)), unknown)
    elif type_expr in MESSAGES and isinstance(value, dict):
        _object(value, type_expr, path, unknown)


def _object(obj: dict[str, Any], message: str, path: str, unknown: list[str]) -> None:
    known = _fields(message)
    for key in list(obj):
        f = known.get(key)
        if f is None:
            unknown.append(_join(path, key))
            del obj[key]
        elif f.type not in _OPAQUE:
            _value(obj[key], f.type, _join(path, key), unknown)


def prune_unknown_fields(api_version: str, kind: str, obj: dict[str, Any]) -> list[str] | None:
    """Remove fields the built-in ``kind`` does not have from ``obj`` (in place).

    Returns their paths in document order, or None when ``kind`` is not a built-in kind
    known here (custom resources are pruned by their CRD's structural schema instead).
    """
    message = KINDS.get((api_version, kind))
    if message is None:
        return None
    unknown: list[str] = []
    _object(obj, message, "", unknown)
    return unknown
