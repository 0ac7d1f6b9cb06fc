"""Helpers around kr8s objects and raw dicts: identity, raw access, ObjectRef."""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import dataclass
from typing import Any, Protocol

from .errors import describe


class KubeObject(Protocol):
    """What reconcile_kit needs of a kr8s APIObject (``raw``, ``kind``, ``version``)."""

    @property
    def raw(self) -> Any: ...


ObjectLike = KubeObject | MutableMapping[str, Any]


def raw_of(obj: ObjectLike) -> MutableMapping[str, Any]:
    """The mutable raw mapping of a kr8s object, or the dict itself."""
    if isinstance(obj, MutableMapping):
        return obj
    raw = obj.raw
    if not isinstance(raw, MutableMapping):
        raise TypeError(f"{type(obj).__name__}.raw is not a mapping")
    return raw


@dataclass(frozen=True, order=True)
class ObjectRef:
    """A key for one object: kind (``Kind`` or ``Kind.group``), namespace ("" if none), name."""

    kind: str
    namespace: str
    name: str

    def __str__(self) -> str:
        return describe(self.kind, self.namespace or None, self.name)


def identity(obj: ObjectLike) -> tuple[str, str | None, str | None]:
    """``(kind, namespace, name)`` of an object for messages (missing parts as None)."""
    raw = raw_of(obj)
    meta = raw.get("metadata") or {}
    return str(raw.get("kind", "?")), meta.get("namespace") or None, meta.get("name")


def describe_object(obj: ObjectLike) -> str:
    """``Kind namespace/name`` of an object."""
    return describe(*identity(obj))
