"""Request bodies as JSON bytes, refusing what JSON cannot hold.

orjson writes a float NaN or infinity as ``null`` without raising; sent in a merge patch
that ``null`` deletes the field, in an apply or create it stores a zero value. These
functions find such values and raise instead, naming the field.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import orjson

from .errors import PatchError

__all__ = ["dumps", "non_finite_path"]


def dumps(body: object, *, kind: str | None, namespace: str | None, name: str | None) -> bytes:
    """``body`` as JSON (orjson); the object's kind, namespace and name name it in errors.

    Raises:
        PatchError: ``body`` holds a float NaN or infinity (its field named).
        TypeError: ``body`` holds a value JSON has no form for (orjson's).
    """
    content = orjson.dumps(body)
    if b"null" in content:  # where a NaN or infinity would be: a walk only then
        path = non_finite_path(body)
        if path is not None:
            raise PatchError(
                f"field {path} is NaN or infinite: JSON cannot hold it, and it would be sent"
                " as null (which deletes or zeroes the field)",
                kind=kind,
                namespace=namespace,
                name=name,
            )
    return content


def non_finite_path(value: object, path: str = "") -> str | None:
    """The path (``spec.items[2].weight``) of the first float NaN or infinity in ``value``
    (dicts, lists, tuples, scalars), or None."""
    if isinstance(value, float):
        return None if math.isfinite(value) else path or "<root>"
    if isinstance(value, Mapping):
        for key, item in value.items():
            found = non_finite_path(item, f"{path}.{key}" if path else str(key))
            if found is not None:
                return found
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found = non_finite_path(item, f"{path}[{index}]")
            if found is not None:
                return found
    return None
