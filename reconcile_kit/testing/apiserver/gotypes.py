"""The type errors Go's encoding/json saves while decoding a built-in object into its Go
struct, as kube-apiserver's decoder (sigs.k8s.io/json, case-sensitive) meets them.

A value of the wrong JSON type (a string where an int32 is declared, a number where a
string is, an object where a list is, a fraction or an out-of-range number for an integer)
is skipped and the first such error is kept: ``json: cannot unmarshal string into Go
struct field ServicePort.spec.ports.port of type int32`` (the innermost struct, the JSON
field path without indices or map keys, the Go type as reflect prints it). ``[]byte``
fields take base64 (``illegal base64 data at input byte N``). Unknown fields are left to
the field validation; types with their own UnmarshalJSON are checked as they check
themselves (times and durations want a string, an IntOrString an int32 when it is not a
string); quantities are left to quantity.py. A number is quoted as Python writes it
(kube-apiserver quotes the request's own text: ``1e2`` here reads ``100.0``).
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from .gotypenames import FIELDS, UNDERLYING
from .kubetypes import MESSAGES, F
from .secrets import base64_error

__all__ = ["type_error"]

_SCALARS = {"string": "string", "bool": "bool", "int32": "int32", "int64": "int64"}
_SCALARS |= {"double": "float64", "float": "float32", "bytes": "[]uint8"}
_INT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}
_STRING_OWN = {"Time", "MicroTime", "Duration"}  # UnmarshalJSON into a string
_UNCHECKED = {"Quantity", "RawExtension", "FieldsV1", "JSON"}


class _Saved(Exception):
    """The first error the decoder saves (it stops the walk)."""


def type_error(message: str, obj: dict[str, Any]) -> str | None:
    """The first error Go's decoder saves storing ``obj`` in ``message`` (an OpenAPI
    name of kubetypes.py), None when it decodes."""
    try:
        _struct(obj, message, ())
    except _Saved as saved:
        return str(saved)
    return None


def _go_name(type_expr: str) -> str:
    """reflect's name of a kubetypes type expression without a named type."""
    if type_expr.startswith("[]"):
        return "[]" + _go_name(type_expr[2:])
    if type_expr.startswith("map[]"):
        return "map[string]" + _go_name(type_expr[5:])
    if type_expr in _SCALARS:
        return _SCALARS[type_expr]
    return ".".join(type_expr.rsplit(".", 2)[-2:])


@cache
def _elem(go_name: str) -> str:
    """The element type of a slice or map type's reflect name (named types resolved)."""
    go_name = UNDERLYING.get(go_name, go_name)
    if go_name.startswith("[]"):
        return go_name[2:]
    depth = 0
    for index, char in enumerate(go_name):
        depth += {"[": 1, "]": -1}.get(char, 0)
        if char == "]" and depth == 0:
            return go_name[index + 1 :]
    return go_name


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _fail(value: Any, go_name: str, struct: str, path: tuple[str, ...]) -> _Saved:
    what = _json_kind(value)
    return _Saved(
        f"json: cannot unmarshal {what} into Go struct field {struct}.{'.'.join(path)}"
        f" of type {go_name}"
    )


@cache
def _fields(message: str) -> dict[str, F]:
    """A struct's fields by JSON name, inlined structs' fields included."""
    found: dict[str, F] = {}
    for f in MESSAGES.get(message, ()):
        if f.name:
            found[f.name] = f
        elif f.type in MESSAGES:
            found |= _fields(f.type)
    return found


def _struct(value: dict[str, Any], message: str, path: tuple[str, ...]) -> None:
    """Each known field in the document's order; the error names this struct (an inlined
    struct's fields are this struct's, as for encoding/json)."""
    fields = _fields(message)
    name = message.rsplit(".", 1)[1]
    for key, item in value.items():
        f = fields.get(key)
        if f is None or item is None:
            continue
        _value(item, f.type, _field_go_name(message, key, f.type), name, (*path, key))


@cache
def _field_go_name(message: str, key: str, type_expr: str) -> str:
    """reflect's name of field ``key``'s type (declared in ``message`` or a struct it
    inlines)."""
    owner = (*_owners(message, key), message)[0]
    return FIELDS.get((owner, key)) or _go_name(type_expr)


@cache
def _owners(message: str, key: str) -> tuple[str, ...]:
    """The message declaring ``key``: ``message`` or one of its inlined structs."""
    for f in MESSAGES.get(message, ()):
        if f.name == key:
            return (message,)
        if not f.name and f.type in MESSAGES:
            inner = _owners(f.type, key)
            if inner:
                return inner
    return ()


def _value(value: Any, type_expr: str, go_name: str, struct: str, path: tuple[str, ...]) -> None:
    if value is None or type_expr in _UNCHECKED:
        return
    if type_expr in _STRING_OWN:
        if not isinstance(value, str):
            raise _fail(value, "string", struct, path)
        return
    if type_expr == "IntOrString":
        if not isinstance(value, str):
            _scalar(value, "int32", "int32", struct, path)
        return
    if type_expr.startswith("[]") or type_expr.startswith("map[]"):
        _collection(value, type_expr, go_name, struct, path)
        return
    if type_expr in _SCALARS:
        _scalar(value, type_expr, go_name, struct, path)
        return
    if type_expr in MESSAGES:
        if not isinstance(value, dict):
            raise _fail(value, go_name, struct, path)
        _struct(value, type_expr, path)


def _collection(
    value: Any, type_expr: str, go_name: str, struct: str, path: tuple[str, ...]
) -> None:
    is_list = type_expr.startswith("[]")
    if not isinstance(value, list if is_list else dict):
        raise _fail(value, go_name, struct, path)
    elem_type = type_expr[2:] if is_list else type_expr[5:]
    items = value if isinstance(value, list) else value.values()
    if elem_type == "string" and all(type(item) is str for item in items):
        return  # the common case (labels, data, args): nothing to report
    elem_go = _elem(go_name)
    for item in items:
        _value(item, elem_type, elem_go, struct, path)


def _scalar(value: Any, type_expr: str, go_name: str, struct: str, path: tuple[str, ...]) -> None:
    if type_expr in ("string", "bytes"):
        if not isinstance(value, str):
            raise _fail(value, go_name, struct, path)
        at = base64_error(value) if type_expr == "bytes" else None
        if at is not None:
            raise _Saved(f"illegal base64 data at input byte {at}")
        return
    if type_expr == "bool" or isinstance(value, bool) or not isinstance(value, (int, float)):
        if not isinstance(value, bool) or type_expr != "bool":
            raise _fail(value, go_name, struct, path)
        return
    if type_expr not in _INT_RANGES:
        return
    low, high = _INT_RANGES[type_expr]
    if isinstance(value, float) or not low <= value <= high:
        raise _Saved(
            f"json: cannot unmarshal number {json.dumps(value)} into Go struct field"
            f" {struct}.{'.'.join(path)} of type {go_name}"
        )
