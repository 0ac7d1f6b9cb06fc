"""The reflector's cache: raw objects by namespace and name, with indexers.

Objects are handed out as plain dicts (as decoded from the API server, after the
reflector's transform), never as kr8s objects: measured on this machine class, a kr8s
object costs ~1.25 ms to build and ~160 KB for a 5.5 KB object. A compact store (the
default for full objects) keeps each object as its JSON bytes (orjson) and decodes it on
every read, as controller-runtime's cache reader deep-copies on every Get and List: a
decoded dict costs about twice its JSON in memory (issue 19: 10.2 of 11.2 KB per 5.8 KB
object were the cached dict), its bytes about once, and a decode ~10-20 µs per 5 KB.
A plain store keeps the dicts themselves, shared: they must not be mutated. Reconcilers
get kr8s objects over them that copy what they change
(:mod:`reconcile_kit.patch.snapshot`).
Indexers follow client-go's cache.Indexer: a function from an object to index values.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable
from typing import Any

import orjson

__all__ = [
    "IndexFunc",
    "Key",
    "Obj",
    "Store",
    "key_of",
    "namespace_index",
    "owner_index",
    "resource_version",
]

Obj = dict[str, Any]
Key = tuple[str, str]
IndexFunc = Callable[[Obj], Iterable[str]]


def namespace_index(obj: Obj) -> Iterable[str]:
    """Index value: the object's namespace ("" when cluster-scoped)."""
    return (obj.get("metadata", {}).get("namespace") or "",)


def owner_index(obj: Obj) -> Iterable[str]:
    """Index values: the uids of the object's owner references."""
    return tuple(r.get("uid", "") for r in obj.get("metadata", {}).get("ownerReferences") or ())


def resource_version(obj: Obj) -> str:
    """The object's ``metadata.resourceVersion`` ("" when it has none)."""
    rv: str = (obj.get("metadata") or {}).get("resourceVersion", "")
    return rv


def key_of(obj: Obj) -> Key:
    meta = obj.get("metadata") or {}
    return (meta.get("namespace") or "", meta.get("name", ""))


class Store:
    """Objects of one kind (and scope) as the reflector last saw them.

    Args:
        indexers: extra ``{name: function}`` indexes beside ``namespace`` and ``owner``.
        compact: keep objects as JSON bytes, decoded on every read (each read returns a
            new dict); otherwise keep the dicts given to :meth:`put` (shared: never mutate
            what a read returns).
    """

    def __init__(
        self, indexers: dict[str, IndexFunc] | None = None, *, compact: bool = False
    ) -> None:
        self.compact = compact
        self._items: dict[Key, Any] = {}  # Obj, or its JSON bytes when compact
        self._indexers: dict[str, IndexFunc] = {"namespace": namespace_index, "owner": owner_index}
        self._indexes: dict[str, dict[str, set[Key]]] = {}
        for name, func in (indexers or {}).items():
            self.add_indexer(name, func)
        for name in self._indexers:
            self._indexes.setdefault(name, {})

    def add_indexer(self, name: str, func: IndexFunc) -> None:
        """Add (or replace) an index and build it over the current objects."""
        self._indexers[name] = func
        index: dict[str, set[Key]] = {}
        for key, stored in self._items.items():
            for value in func(self.decode(stored)):
                index.setdefault(value, set()).add(key)
        self._indexes[name] = index

    def encode(self, obj: Obj) -> Any:
        """What the store keeps of ``obj``: its JSON bytes when compact, else ``obj``."""
        if self.compact:
            # copied: orjson's own bytes keep its output buffer's capacity (16 KiB for a
            # 4.6 KB object, by tracemalloc); the copy is exact for ~0.4 µs
            return bytes(memoryview(orjson.dumps(obj)))
        return obj

    def decode(self, stored: Any) -> Obj:
        """The object from what :meth:`encode` made of it (a new dict when compact)."""
        if self.compact:
            obj: Obj = orjson.loads(stored)
            return obj
        return stored  # type: ignore[no-any-return]

    def get(self, namespace: str | None, name: str) -> Obj | None:
        stored = self._items.get((namespace or "", name))
        return None if stored is None else self.decode(stored)

    def list(self, namespace: str | None = None) -> list[Obj]:
        """Objects (in ``namespace`` if given), ordered by namespace and name."""
        if namespace is None:
            return [self.decode(self._items[k]) for k in sorted(self._items)]
        return self.by_index("namespace", namespace)

    def by_index(self, index: str, value: str) -> builtins.list[Obj]:
        """Objects whose ``index`` function yields ``value``; KeyError for an unknown index."""
        keys = self._indexes[index].get(value, set())
        return [self.decode(self._items[k]) for k in sorted(keys)]

    def keys_by_index(self, index: str, value: str) -> builtins.list[Key]:
        """Keys of the objects whose ``index`` function yields ``value`` (nothing decoded)."""
        return sorted(self._indexes[index].get(value, ()))

    def list_keys(self) -> builtins.list[Key]:
        return sorted(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def put(self, obj: Obj) -> Obj | None:
        """Add or replace ``obj``; returns the previous object."""
        key = key_of(obj)
        return self._put(key, obj, self.encode(obj), self.get(*key))

    def update(self, obj: Obj, encoded: Any = None) -> tuple[bool, Obj | None]:
        """Store ``obj`` unless the stored object has its resourceVersion (a relist's
        unchanged object); returns whether it was stored, and the previous object.
        ``encoded``: ``encode(obj)`` when the caller has it."""
        key = key_of(obj)
        stored = self._items.get(key)
        value = self.encode(obj) if encoded is None else encoded
        if stored is None:
            return True, self._put(key, obj, value, None)
        if self.compact and stored == value:
            return False, None
        old = self.decode(stored)
        if resource_version(old) == resource_version(obj):
            return False, old
        return True, self._put(key, obj, value, old)

    def _put(self, key: Key, obj: Obj, value: Any, old: Obj | None) -> Obj | None:
        """Store ``value`` (``obj`` encoded) at ``key`` in place of ``old``, the decoded
        object stored there (None: nothing)."""
        if old is not None:
            self._unindex(key, old)
        self._items[key] = value
        for name, func in self._indexers.items():
            for index_value in func(obj):
                self._indexes[name].setdefault(index_value, set()).add(key)
        return old

    def remove(self, obj: Obj) -> Obj | None:
        """Remove the object with ``obj``'s namespace/name; returns what was stored."""
        return self.delete(key_of(obj))

    def delete(self, key: Key) -> Obj | None:
        """Remove the object at ``key`` (namespace, name); returns what was stored."""
        stored = self._items.pop(key, None)
        if stored is None:
            return None
        old = self.decode(stored)
        self._unindex(key, old)
        return old

    def _unindex(self, key: Key, obj: Obj) -> None:
        for name, func in self._indexers.items():
            index = self._indexes[name]
            for value in func(obj):
                keys = index.get(value)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del index[value]
