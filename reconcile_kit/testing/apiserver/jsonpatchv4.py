"""RFC 6902 JSON patch as kube-apiserver applies it: gopkg.in/evanphx/json-patch.v4
(v4.12.0, patch.go), whose rules differ from the RFC's where a path is missing:

- an object member that is missing reads as null: ``copy`` from it adds null (a
  ConfigMap gets ``b: ""``), ``replace`` of it adds it, ``test`` of it with value null
  passes; ``move`` from it fails (its ``remove`` does);
- ``add``, ``remove``, ``move`` and ``copy`` never address the document itself (``""``),
  ``replace`` of ``""`` replaces the document with an object or array;
- an operation without ``value`` adds or replaces with null;
- a parent that is missing, null or a scalar fails; negative array indices count from the
  end.

A failed operation raises :class:`PatchFailed` (kube-apiserver's 422).
"""

from __future__ import annotations

import copy
import re
from typing import Any

__all__ = ["PatchFailed", "apply"]

_ABSENT: Any = object()
"""An operation's missing ``value`` (a nil lazyNode)."""
_INDEX = re.compile(r"[+-]?[0-9]+")


class PatchFailed(Exception):
    """An operation that does not apply."""


def _decode_key(key: str) -> str:
    """decodePatchKey: strings.NewReplacer("~1", "/", "~0", "~") (one pass)."""
    return re.sub("~[01]", lambda m: "/" if m.group() == "~1" else "~", key)


def _atoi(key: str) -> int:
    if not _INDEX.fullmatch(key):
        raise PatchFailed(f"invalid index {key!r}")
    return int(key)


def _get(container: Any, key: str) -> Any:
    """container.get: None for a missing or null object member."""
    if isinstance(container, dict):
        return container.get(key)
    idx = _atoi(key)
    if idx < 0:
        if idx < -len(container):
            raise PatchFailed(f"Unable to access invalid index: {idx}")
        idx += len(container)
    if idx >= len(container):
        raise PatchFailed(f"Unable to access invalid index: {idx}")
    return container[idx]


def _add(container: Any, key: str, value: Any) -> None:
    if isinstance(container, dict):
        container[key] = value
        return
    if key == "-":
        container.append(value)
        return
    idx = _atoi(key)
    size = len(container) + 1
    if idx >= size:
        raise PatchFailed(f"Unable to access invalid index: {idx}")
    if idx < 0:
        if idx < -size:
            raise PatchFailed(f"Unable to access invalid index: {idx}")
        idx += size
    container.insert(idx, value)


def _remove(container: Any, key: str) -> None:
    if isinstance(container, dict):
        if key not in container:
            raise PatchFailed(f"Unable to remove nonexistent key: {key}")
        del container[key]
        return
    idx = _atoi(key)
    if idx >= len(container):
        raise PatchFailed(f"Unable to access invalid index: {idx}")
    if idx < 0:
        if idx < -len(container):
            raise PatchFailed(f"Unable to access invalid index: {idx}")
        idx += len(container)
    del container[idx]


def _set(container: Any, key: str, value: Any) -> None:
    if isinstance(container, dict):
        container[key] = value
        return
    idx = _atoi(key)
    if idx < 0:
        idx += len(container)
    container[idx] = value


def _find(doc: Any, path: str) -> tuple[Any, str]:
    """findObject: the container of ``path``'s last token (None: it has none) and the
    token. The first token is skipped, whatever it is."""
    split = path.split("/")
    if len(split) < 2:
        return None, ""
    for part in split[1:-1]:
        try:
            doc = _get(doc, _decode_key(part))
        except PatchFailed:
            return None, ""
        if not isinstance(doc, (dict, list)):
            return None, ""
    return doc, _decode_key(split[-1])


def _field(op: dict[str, Any], name: str) -> str:
    value = op.get(name)
    if not isinstance(value, str):
        raise PatchFailed(f"operation missing {name} field")
    return value


def _container(doc: Any, path: str) -> tuple[Any, str]:
    container, key = _find(doc, path)
    if container is None:
        raise PatchFailed(f"doc is missing path: {path}")
    return container, key


def _equal(a: Any, b: Any) -> bool:
    """lazyNode.equal: objects and arrays by members, scalars by their JSON text (so
    ``1`` is not ``1.0`` and ``true`` is not ``1``)."""
    if isinstance(a, dict) or isinstance(b, dict):
        if not (isinstance(a, dict) and isinstance(b, dict)) or a.keys() != b.keys():
            return False
        return all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) or isinstance(b, list):
        if not (isinstance(a, list) and isinstance(b, list)) or len(a) != len(b):
            return False
        return all(_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def _test(doc: Any, op: dict[str, Any], value: Any) -> None:
    path = _field(op, "path")
    if path == "":
        if value is _ABSENT or not _equal(doc, value):
            raise PatchFailed(f"testing value {path} failed")
        return
    container, key = _container(doc, path)
    current = _get(container, key)
    if current is None:
        if value is None:
            return
        raise PatchFailed(f"testing value {path} failed")
    if value is _ABSENT or value is None or not _equal(current, value):
        raise PatchFailed(f"testing value {path} failed")


def _apply_op(doc: Any, op: Any) -> Any:
    """One operation on ``doc`` (changed in place); the document after it."""
    kind = op.get("op") if isinstance(op, dict) else None
    if not isinstance(op, dict) or not isinstance(kind, str):
        raise PatchFailed("Unexpected kind: unknown")
    value = copy.deepcopy(op["value"]) if "value" in op else _ABSENT
    stored = None if value is _ABSENT else value
    if kind == "add":
        container, key = _container(doc, _field(op, "path"))
        _add(container, key, stored)
    elif kind == "remove":
        container, key = _container(doc, _field(op, "path"))
        _remove(container, key)
    elif kind == "replace":
        path = _field(op, "path")
        if path == "":
            if not isinstance(value, (dict, list)):
                raise PatchFailed("replace operation value must be object or array")
            return value
        container, key = _container(doc, path)
        _get(container, key)
        _set(container, key, stored)
    elif kind == "move":
        container, key = _container(doc, _field(op, "from"))
        moved = _get(container, key)
        _remove(container, key)
        container, key = _container(doc, _field(op, "path"))
        _add(container, key, moved)
    elif kind == "test":
        _test(doc, op, value)
    elif kind == "copy":
        container, key = _container(doc, _field(op, "from"))
        copied = copy.deepcopy(_get(container, key))
        container, key = _container(doc, _field(op, "path"))
        _add(container, key, copied)
    else:
        raise PatchFailed(f"Unexpected kind: {kind}")
    return doc


def apply(doc: Any, ops: list[Any]) -> Any:
    """``doc`` (changed in place) after ``ops``; raises :class:`PatchFailed`."""
    for op in ops:
        doc = _apply_op(doc, op)
    return doc
