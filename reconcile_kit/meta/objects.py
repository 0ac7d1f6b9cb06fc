"""Helpers around kr8s objects and raw dicts: identity, raw access, ObjectRef."""

from __future__ import annotations

from collections.abc import Callable, MutableMapping, MutableSequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..client.errors import describe

__all__ = [
    "KubeObject",
    "ObjectRef",
    "describe_object",
    "edit_list",
    "identity",
    "nested_list",
    "raw_of",
]


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


def nested_list(
    obj: ObjectLike, parent: str, field: str, *, create: bool
) -> MutableSequence[Any] | None:
    """``raw[parent][field]`` as the mutable list it is (``metadata.finalizers``,
    ``status.conditions``...); None when absent, unless ``create`` makes it (and the parent
    map). Raises TypeError naming the object and field when either has the wrong type."""
    raw = raw_of(obj)
    if raw.get(parent) is None:
        if not create:
            return None
        raw[parent] = {}
    container = raw[parent]
    if not isinstance(container, MutableMapping):
        raise TypeError(f"{describe_object(obj)}: {parent} is not a mapping")
    if container.get(field) is None:
        if not create:
            return None
        container[field] = []
    value = container[field]
    if not isinstance(value, MutableSequence):
        raise TypeError(f"{describe_object(obj)}: {parent}.{field} is not a list")
    return value


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


def edit_list(
    server: list[Any], before: list[Any], after: list[Any], key: Callable[[Any], Any]
) -> list[Any]:
    """``server`` with one writer's edits (``before`` -> ``after``) applied, items matched by
    ``key``: items it removed go, items it added or changed are put in (in place where the
    server has them, at the end otherwise); everything else the server holds stays.

    The three-way list merge behind guarded writes of finalizers, owner references (by uid)
    and conditions (by type) when another writer changed the list meanwhile."""
    wanted = {key(i): i for i in after}
    removed = {key(i) for i in before} - set(wanted)
    changed = {k: v for k, v in wanted.items() if v not in before}
    result = [changed.pop(key(i), i) for i in server if key(i) not in removed]
    present = {key(i) for i in result}
    result += [i for i in after if key(i) not in present and key(i) in changed]
    return result
