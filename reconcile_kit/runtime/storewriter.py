"""The writing side of a reflector's cache: the one object that changes a
:class:`~reconcile_kit.runtime.store.Store`, kept by its
:class:`~reconcile_kit.runtime.reflector.Reflector` (kube-rs ``reflector::store::Writer``).

Only the reflector imports this module (an import contract in pyproject.toml): reconcilers
and the rest of the runtime hold the read-only :class:`~reconcile_kit.runtime.store.Store`
that :attr:`StoreWriter.store` makes.
"""

from __future__ import annotations

import asyncio
import builtins

import orjson

from .store import (
    IndexFunc,
    Key,
    Obj,
    Store,
    key_of,
    namespace_index,
    owner_index,
    resource_version,
)

__all__ = ["DECODED_HINTS", "KEPT_BYTES", "StoreWriter"]

DECODED_HINTS = 1024
"""At most this many decoded states noted (:meth:`StoreWriter.note_decoded`) at once."""
KEPT_BYTES = 1 << 20
"""At most this many bytes of stored JSON whose decoded states are kept for their next
read (:meth:`StoreWriter.keep_decoded`): about three times as much memory decoded."""


def _same_owners(func: IndexFunc, obj: Obj, old: Obj) -> bool:
    """Whether ``func`` is :func:`owner_index` and ``obj`` has ``old``'s owner references
    (then its index values are ``old``'s: nothing to compute)."""
    if func is not owner_index:
        return False
    refs = (obj.get("metadata") or {}).get("ownerReferences")
    return refs == (old.get("metadata") or {}).get("ownerReferences")


class StoreWriter:
    """Objects of one kind (and scope) as the reflector last saw them: the writer.

    Args:
        indexers: extra ``{name: function}`` indexes beside ``namespace`` and ``owner``.
        compact: keep objects as JSON bytes, decoded on every read (each read returns a
            new dict); otherwise keep the dicts given to :meth:`put` (shared: never mutate
            what a read returns).

    Attributes:
        store: the read-only :class:`~reconcile_kit.runtime.store.Store` over these
            objects, what everything but the reflector gets.
        items: the objects by key (namespace, name): dicts, or JSON bytes when compact.
        indexes: ``{index: {value: keys}}``.
        synced: set once the first LIST is stored (:meth:`mark_synced`).
    """

    def __init__(
        self, indexers: dict[str, IndexFunc] | None = None, *, compact: bool = False
    ) -> None:
        self.compact = compact
        self.items: dict[Key, Obj | bytes] = {}  # Obj, or its JSON bytes when compact
        self._indexers: dict[str, IndexFunc] = {"namespace": namespace_index, "owner": owner_index}
        self.indexes: dict[str, dict[str, set[Key]]] = {}
        self.synced = asyncio.Event()
        self.store = Store(self)
        self._decoded: dict[Key, tuple[object, Obj]] = {}
        self._kept: dict[Key, tuple[bytes, Obj]] = {}
        self._kept_bytes = 0
        for name, func in (indexers or {}).items():
            self.add_indexer(name, func)
        for name in self._indexers:
            self.indexes.setdefault(name, {})

    def add_indexer(self, name: str, func: IndexFunc) -> None:
        """Add (or replace) an index and build it over the current objects."""
        self._indexers[name] = func
        index: dict[str, set[Key]] = {}
        for key, stored in self.items.items():
            for value in func(self.decode(stored)):
                index.setdefault(value, set()).add(key)
        self.indexes[name] = index

    def encode(self, obj: Obj) -> Obj | bytes:
        """What the store keeps of ``obj``: its JSON bytes when compact, else ``obj``."""
        if self.compact:
            # copied: orjson's own bytes keep its output buffer's capacity (16 KiB for a
            # 4.6 KB object, by tracemalloc); the copy is exact for ~0.4 µs
            return bytes(memoryview(orjson.dumps(obj)))
        return obj

    def decode(self, stored: Obj | bytes) -> Obj:
        """The object from what :meth:`encode` made of it (a new dict when compact)."""
        if isinstance(stored, bytes):  # compact
            obj: Obj = orjson.loads(stored)
            return obj
        return stored

    def mark_synced(self) -> None:
        """Record that the first LIST is stored (:meth:`Store.wait_synced` returns)."""
        self.synced.set()

    def list_keys(self) -> builtins.list[Key]:
        """Every key (namespace, name), sorted."""
        return sorted(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def note_decoded(self, key: Key, stored: object, obj: Obj) -> None:
        """Note that ``obj`` is the decoded form of ``stored``, the value kept at ``key``
        (a reconcile read it and changes nothing in it): the key's next change, the
        watch event of the reconcile's write even when it comes before the reconcile
        ends, takes it as its old state instead of decoding ``stored`` again. Kept until
        then or :meth:`forget_decoded`, at most :data:`DECODED_HINTS` at once."""
        if self.compact and len(self._decoded) < DECODED_HINTS and self.items.get(key) is stored:
            self._decoded[key] = (stored, obj)

    def forget_decoded(self, key: Key) -> None:
        """Drop the note of ``key`` (:meth:`note_decoded`), if any: the reconcile that read
        it wrote nothing."""
        if self._decoded:
            self._decoded.pop(key, None)

    def keep_decoded(self, key: Key, obj: Obj) -> None:
        """Keep ``obj``, the decoded form of what was just stored at ``key`` (the state an
        event carried; nothing mutates it), for the key's next :meth:`read`: a reconcile
        queued by that event reads it without decoding the stored bytes again. Dropped
        at that read or at the key's next change; at most :data:`KEPT_BYTES` of stored
        JSON kept at once (later states are not kept while full)."""
        stored = self.items.get(key)
        if type(stored) is not bytes or key in self._kept:
            return
        size = len(stored)
        if self._kept_bytes + size <= KEPT_BYTES:
            self._kept[key] = (stored, obj)
            self._kept_bytes += size

    def read(self, key: Key) -> tuple[Obj | None, object]:
        """The object stored at ``key`` (None: nothing) and the stored value (the token
        of :meth:`Store.entry`): the state kept by :meth:`keep_decoded` when it is still
        the one stored, else a fresh decode. What a kept state is, is shared: never
        mutate it (a controller builds a LazyBox over it)."""
        stored = self.items.get(key)
        kept = self._take_kept(key) if self._kept else None
        if stored is None:
            return None, None
        if kept is not None and kept[0] is stored:
            return kept[1], stored
        return self.decode(stored), stored

    def _take_kept(self, key: Key) -> tuple[bytes, Obj] | None:
        kept = self._kept.pop(key, None)
        if kept is not None:
            self._kept_bytes -= len(kept[0])
        return kept

    def _old(self, key: Key) -> Obj | None:
        """The decoded object stored at ``key`` (None: nothing), from a hint if it holds."""
        stored = self.items.get(key)
        hint = self._decoded.pop(key, None) if self._decoded else None
        kept = self._take_kept(key) if self._kept else None
        if stored is None:
            return None
        if hint is not None and hint[0] is stored:
            return hint[1]
        if kept is not None and kept[0] is stored:
            return kept[1]
        return self.decode(stored)

    def put(self, obj: Obj) -> Obj | None:
        """Add or replace ``obj``; returns the previous object."""
        key = key_of(obj)
        return self._put(key, obj, self.encode(obj), self._old(key))

    def update(self, obj: Obj, encoded: Obj | bytes | None = None) -> tuple[bool, Obj | None]:
        """Store ``obj`` unless the stored object has its resourceVersion (a relist's
        unchanged object); returns whether it was stored, and the previous object.
        ``encoded``: ``encode(obj)`` when the caller has it."""
        key = key_of(obj)
        stored = self.items.get(key)
        value = self.encode(obj) if encoded is None else encoded
        if stored is None:
            return True, self._put(key, obj, value, None)
        if self.compact and stored == value:
            return False, None
        old = self._old(key)
        assert old is not None
        if resource_version(old) == resource_version(obj):
            return False, old
        return True, self._put(key, obj, value, old)

    def _put(self, key: Key, obj: Obj, value: Obj | bytes, old: Obj | None) -> Obj | None:
        """Store ``value`` (``obj`` encoded) at ``key`` in place of ``old``, the decoded
        object stored there (None: nothing)."""
        self.items[key] = value
        for name, func in self._indexers.items():
            if old is not None and (func is namespace_index or _same_owners(func, obj, old)):
                continue  # the key holds the namespace; most updates keep their owners
            values = tuple(func(obj))
            before = () if old is None else tuple(func(old))
            if values != before:  # most updates keep every index value: nothing to do
                self._reindex(self.indexes[name], key, before, values)
        return old

    @staticmethod
    def _reindex(
        index: dict[str, set[Key]], key: Key, before: tuple[str, ...], values: tuple[str, ...]
    ) -> None:
        """Move ``key`` in ``index`` from the values ``before`` to ``values``."""
        for value in before:
            if value not in values:
                keys = index.get(value)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del index[value]
        for value in values:
            keys = index.get(value)
            if keys is None:
                index[value] = {key}
            else:
                keys.add(key)

    def remove(self, obj: Obj) -> Obj | None:
        """Remove the object with ``obj``'s namespace/name; returns what was stored."""
        return self.delete(key_of(obj))

    def delete(self, key: Key) -> Obj | None:
        """Remove the object at ``key`` (namespace, name); returns what was stored."""
        old = self._old(key)
        if old is None:
            return None
        del self.items[key]
        self._unindex(key, old)
        return old

    def _unindex(self, key: Key, obj: Obj) -> None:
        for name, func in self._indexers.items():
            index = self.indexes[name]
            for value in func(obj):
                keys = index.get(value)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del index[value]
