"""A built-in object as kube-apiserver writes it back: what Go's encoding/json writes for
the decoded struct after the protobuf round trip through etcd (k8s.io/api struct tags, as
tools/gen_kubetypes.py records them in kubetypes: ``o`` omitempty, ``p`` pointer, ``i``
inline).

* A field without ``omitempty`` is always written: a string as ``""``, a number as 0, a
  bool as false, a nil pointer, slice or map as ``null`` (protobuf gives empty slices and
  maps back nil, so an empty one is ``null`` too).
* A struct is never omitted (``omitempty`` does not apply to structs): absent, it is
  ``{}`` with its own fields filled in; a zero ``metav1.Time``/``MicroTime`` is ``null``
  (``spec.template.metadata.creationTimestamp: null``), a zero Duration ``"0s"``, a zero
  Quantity ``"0"``, a zero IntOrString 0.
* An ``omitempty`` field that is empty (``""``, 0, false, null, ``[]``, ``{}``; a pointer
  only when null) is dropped.

:func:`fill_go_zero` applies this in place on a write's object before it is stored, so
reads pay nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from .kubetypes import KINDS, MESSAGES

__all__ = ["fill_go_zero", "go_equal"]

_SCALAR_ZERO: dict[str, Any] = {
    "string": "",
    "bool": False,
    "int32": 0,
    "int64": 0,
    "double": 0,
    "float": 0,
}
_STRUCT_ZERO: dict[str, Any] = {
    "Time": None,
    "MicroTime": None,
    "Duration": "0s",
    "Quantity": "0",
    "IntOrString": 0,
    "RawExtension": None,
    "JSON": None,
    "FieldsV1": None,
}
_SKIPPED_PREFIX = "io.k8s.apiextensions-apiserver."
"""CRDs' own types (JSONSchemaProps marshals itself): left as they are."""

Fill = Callable[[dict[str, Any]], None]


def _empty(value: Any) -> bool:
    return (
        value is None or value == "" or value == 0 or value is False or value == [] or value == {}
    )


def _element_filler(expr: str) -> Callable[[Any], Any] | None:
    """What to do with one element of a slice or map of ``expr`` (None: nothing)."""
    if expr in MESSAGES and not expr.startswith(_SKIPPED_PREFIX):
        fill = _message_filler(expr)

        def element(value: Any) -> Any:
            if value is None:
                value = {}
            if isinstance(value, dict):
                fill(value)
            return value

        return element
    return None


def _container_filler(expr: str) -> Callable[[Any], None] | None:
    """Fill the elements of a present slice (``[]T``) or map (``map[]T``) value."""
    if expr.startswith("[]") and expr != "[]byte":
        item = _element_filler(expr[2:])
        if item is None:
            return None

        def in_list(value: Any) -> None:
            if isinstance(value, list):
                value[:] = [item(v) for v in value]

        return in_list
    if expr.startswith("map[]"):
        element = _element_filler(expr[5:])
        if element is None:
            return None

        def in_map(value: Any) -> None:
            if isinstance(value, dict):
                for key in value:
                    value[key] = element(value[key])

        return in_map
    return None


def _field_filler(name: str, expr: str, flags: str) -> Fill | None:
    """The step for one field of a struct."""
    pointer, omitempty = "p" in flags, "o" in flags
    container = expr.startswith(("[]", "map[]"))
    message = expr in MESSAGES and not expr.startswith(_SKIPPED_PREFIX)
    inner = _message_filler(expr) if message else None
    elements = _container_filler(expr) if container else None
    if message and not pointer:
        assert inner is not None

        def struct(obj: dict[str, Any]) -> None:
            value = obj.get(name)
            if not isinstance(value, dict):
                value = obj[name] = {}
            inner(value)

        return struct
    if expr in _STRUCT_ZERO and not pointer:
        zero = _STRUCT_ZERO[expr]

        def special(obj: dict[str, Any]) -> None:
            if obj.get(name) is None:
                obj[name] = zero

        return special
    if omitempty:

        def omitted(obj: dict[str, Any]) -> None:
            if name not in obj:
                return
            value = obj[name]
            if value is None if pointer else _empty(value):
                del obj[name]
            elif inner is not None and isinstance(value, dict):
                inner(value)
            elif elements is not None:
                elements(value)

        return omitted
    if pointer or container or expr not in _SCALAR_ZERO:

        def nullable(obj: dict[str, Any]) -> None:
            value = obj.get(name)
            if value is None or (container and not value):
                obj[name] = None
            elif inner is not None and isinstance(value, dict):
                inner(value)
            elif elements is not None:
                elements(value)

        return nullable
    zero = _SCALAR_ZERO[expr]

    def scalar(obj: dict[str, Any]) -> None:
        if obj.get(name) is None:
            obj[name] = zero

    return scalar


@cache
def _message_filler(message: str) -> Fill:
    steps: list[Fill] = []

    def fill(obj: dict[str, Any]) -> None:
        for step in steps:
            step(obj)

    # compiled lazily (messages refer to each other, and to themselves)
    def compile_then_fill(obj: dict[str, Any]) -> None:
        if not steps:
            for f in MESSAGES[message]:
                step = (
                    _message_filler(f.type)
                    if "i" in f.flags
                    else _field_filler(f.name, f.type, f.flags)
                )
                if step is not None:
                    steps.append(step)
            steps.append(lambda _: None)  # compiled, even when the message has no steps
        fill(obj)

    return compile_then_fill


def fill_go_zero(api_version: str, kind: str, obj: dict[str, Any]) -> None:
    """``obj`` (a built-in kind's object) as kube-apiserver writes it back, in place;
    objects of kinds not in kubetypes (custom resources) are left alone."""
    message = KINDS.get((api_version, kind))
    if message is not None and not message.startswith(_SKIPPED_PREFIX):
        _message_filler(message)(obj)


def _without_empties(value: Any) -> Any:
    if isinstance(value, dict):
        kept = {k: _without_empties(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v is not None and v != [] and v != {}}
    if isinstance(value, list):
        return [_without_empties(v) for v in value] or None
    return value


def go_equal(left: Any, right: Any) -> bool:
    """apimachinery's Semantic.DeepEqual on JSON values: null, absent and empty slices and
    maps are the same."""
    return bool(left == right or _without_empties(left) == _without_empties(right))
