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

Reading and writing are separate objects, as kube-rs's ``reflector::Store`` and
``reflector::store::Writer``: a :class:`Store` (what reconcilers, predicates and the
manager get) reads, looks up indexes and waits for the first LIST; only the
:class:`~reconcile_kit.runtime.storewriter.StoreWriter` its reflector keeps changes it
(an import contract in pyproject.toml keeps that module the reflector's).
"""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple, Protocol

from ..meta.objects import resource_version_in

__all__ = [
    "Entry",
    "IndexFunc",
    "Key",
    "Obj",
    "Store",
    "StoreWriterState",
    "key_of",
    "namespace_index",
    "owner_index",
    "resource_version",
]

Obj = dict[str, Any]
Key = tuple[str, str]
IndexFunc = Callable[[Obj], Iterable[str]]


class Entry(NamedTuple):
    """An object read from a :class:`Store` (None: absent) and an opaque token of the state
    read, for :meth:`Store.holds`."""

    obj: Obj | None
    token: object


def namespace_index(obj: Obj) -> Iterable[str]:
    """Index value: the object's namespace ("" when cluster-scoped)."""
    return (obj.get("metadata", {}).get("namespace") or "",)


def owner_index(obj: Obj) -> Iterable[str]:
    """Index values: the uids of the object's owner references."""
    refs = obj.get("metadata", {}).get("ownerReferences")
    return tuple(r.get("uid", "") for r in refs) if refs else ()


def resource_version(obj: Obj) -> str:
    """The object's ``metadata.resourceVersion`` ("" when it has none)."""
    rv: str = (obj.get("metadata") or {}).get("resourceVersion", "")  # metadata_of, inline
    return rv


def key_of(obj: Obj) -> Key:
    """The store key of ``obj``: (namespace, or "" when cluster-scoped; name)."""
    meta = obj.get("metadata") or {}  # metadata_of, inline: a key is taken per event
    return (meta.get("namespace") or "", meta.get("name", ""))


class StoreWriterState(Protocol):
    """What a :class:`Store` reads of its writer's state (shared, not copied)."""

    items: dict[Key, Obj | bytes]
    indexes: dict[str, dict[str, set[Key]]]
    synced: asyncio.Event
    compact: bool

    def decode(self, stored: Obj | bytes) -> Obj:
        """The object from what the writer stored."""
        ...


class Store:
    """Read-only view of one reflector's objects (one kind and scope): reads, index
    lookups and a wait for the first LIST; no writes (those go through the reflector's
    :class:`~reconcile_kit.runtime.storewriter.StoreWriter`, which makes this view).

    Objects are plain dicts: with a compact store each read decodes a new dict; otherwise
    the dicts are the store's own, shared by every reader: never mutate them.
    """

    __slots__ = ("_decode", "_indexes", "_items", "_synced", "compact")

    def __init__(self, writer: StoreWriterState) -> None:
        self._items, self._indexes = writer.items, writer.indexes
        self._decode, self._synced, self.compact = writer.decode, writer.synced, writer.compact

    def get(self, namespace: str | None, name: str) -> Obj | None:
        """The object ``namespace``/``name`` ("" or None: cluster-scoped), or None."""
        stored = self._items.get((namespace or "", name))
        return None if stored is None else self._decode(stored)

    def entry(self, namespace: str | None, name: str) -> Entry:
        """As :meth:`get`, with a token of the state read: :meth:`holds` tells later, without
        decoding, whether the store still holds that very state."""
        stored = self._items.get((namespace or "", name))
        return Entry(None if stored is None else self._decode(stored), stored)

    def resource_version(self, namespace: str | None, name: str) -> str | None:
        """The resourceVersion of the object ``namespace``/``name`` ("": it has none), or
        None when the store holds no such object; decoded only when its bytes cannot
        tell (:func:`resource_version_in`)."""
        stored = self._items.get((namespace or "", name))
        if stored is None:
            return None
        if isinstance(stored, bytes):
            rv = resource_version_in(stored)
            if rv is not None:
                return rv
        return resource_version(self._decode(stored))

    def holds(self, namespace: str | None, name: str, entry: Entry) -> bool:
        """Whether the state ``entry`` read is still the one stored (an identity check: a
        replaced state, even an equal one, is another)."""
        return self._items.get((namespace or "", name)) is entry.token

    def list(self, namespace: str | None = None) -> list[Obj]:
        """Objects (in ``namespace`` if given), ordered by namespace and name."""
        if namespace is None:
            return [self._decode(self._items[k]) for k in sorted(self._items)]
        return self.by_index("namespace", namespace)

    def by_index(self, index: str, value: str) -> builtins.list[Obj]:
        """Objects whose ``index`` function yields ``value``, ordered by key.

        Raises:
            KeyError: ``index`` is not an index of this store.
        """
        keys = self._indexes[index].get(value, set())
        return [self._decode(self._items[k]) for k in sorted(keys)]

    def keys_by_index(self, index: str, value: str) -> builtins.list[Key]:
        """Keys of the objects whose ``index`` function yields ``value`` (nothing decoded).

        Raises:
            KeyError: ``index`` is not an index of this store.
        """
        return sorted(self._indexes[index].get(value, ()))

    def list_keys(self) -> builtins.list[Key]:
        """Every key (namespace, name), sorted."""
        return sorted(self._items)

    def has_synced(self) -> bool:
        """Whether the reflector's first LIST is in the store (client-go ``HasSynced``)."""
        return self._synced.is_set()

    async def wait_synced(self, timeout: float | None = None) -> None:
        """Wait until the reflector's first LIST is in the store (kube-rs
        ``Store::wait_until_ready``).

        Args:
            timeout: seconds to wait at most (None: no limit).

        Raises:
            TimeoutError: ``timeout`` passed first.
        """
        async with asyncio.timeout(timeout):
            await self._synced.wait()

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._items
