"""Object storage of the embedded API server: current state, resourceVersions, history.

One cluster-wide resourceVersion counter (as etcd's revision); every change is kept in
a bounded history so watches can resume from a resourceVersion and paginated lists can
be served from a consistent snapshot. Objects handed out are shared: callers copy
before mutating.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

Obj = dict[str, Any]
ADDED, MODIFIED, DELETED = "ADDED", "MODIFIED", "DELETED"


@dataclass(slots=True)
class Event:
    """One change: ``obj`` is the new state (for DELETED, the last state at the deletion's RV)."""

    rv: int
    key: str
    type: str
    obj: Obj
    old: Obj | None
    encoded: dict[str, bytes] = field(default_factory=dict)


class Persistence(Protocol):
    def put(self, key: str, obj: Obj, rv: int) -> None: ...
    def delete(self, key: str, namespace: str, name: str, rv: int) -> None: ...
    def load(self) -> tuple[int, list[tuple[str, Obj]]]: ...
    def close(self) -> None: ...


def _ns_name(obj: Obj) -> tuple[str, str]:
    meta = obj["metadata"]
    return (meta.get("namespace") or "", meta["name"])


def with_rv(obj: Obj, rv: int) -> Obj:
    """A shallow copy of ``obj`` whose metadata.resourceVersion is ``rv``."""
    return {**obj, "metadata": {**obj["metadata"], "resourceVersion": str(rv)}}


class Store:
    """In-memory objects keyed by storage key, namespace and name, with a change history.

    Args:
        history_size: how many events are kept for watch resumption; older ones are
            compacted away (a watch from before them gets 410 Expired).
        persistence: optional write-through backend (SQLite for ``data_dir``).
    """

    def __init__(self, history_size: int = 100_000, persistence: Persistence | None = None) -> None:
        self.rv = 0
        self.compacted_rv = 0
        self._objects: dict[str, dict[tuple[str, str], Obj]] = {}
        self._sorted: dict[str, list[tuple[str, str]]] = {}
        """Sorted (namespace, name) keys per storage key, rebuilt after a create/delete."""
        self._history: deque[Event] = deque()
        self._history_size = history_size
        self._listeners: list[Callable[[Event], None]] = []
        self._persistence = persistence
        self._read_defaulted: set[tuple[str, str, str]] = set()
        """(key, namespace, name) of objects created with defaults of reads (:meth:`create`)."""
        if persistence is not None:
            self.rv, rows = persistence.load()
            for key, obj in rows:
                self._objects.setdefault(key, {})[_ns_name(obj)] = obj
            self.compacted_rv = self.rv

    def subscribe(self, listener: Callable[[Event], None]) -> Callable[[], None]:
        """Call ``listener`` synchronously for every event; returns an unsubscribe function."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def get(self, key: str, namespace: str, name: str) -> Obj | None:
        return self._objects.get(key, {}).get((namespace, name))

    def items(self, key: str, namespace: str | None = None) -> list[Obj]:
        """Objects of ``key`` (in ``namespace`` if given), ordered by namespace then name."""
        objs = self._objects.get(key, {})
        keys = sorted(k for k in objs if namespace is None or k[0] == namespace)
        return [objs[k] for k in keys]

    def sorted_keys(self, key: str) -> list[tuple[str, str]]:
        """The (namespace, name) keys of ``key``'s objects, sorted (cached between the
        creates and deletes that change them: a paginated LIST reads it once per page)."""
        keys = self._sorted.get(key)
        if keys is None:
            keys = self._sorted[key] = sorted(self._objects.get(key, {}))
        return keys

    def get_by_key(self, key: str, ident: tuple[str, str]) -> Obj | None:
        return self._objects.get(key, {}).get(ident)

    def changes_since(self, key: str, rv: int) -> dict[tuple[str, str], Obj | None]:
        """For each object of ``key`` written after ``rv``: its state at ``rv`` (None: it
        did not exist yet). O(history since rv), no copy of the objects."""
        out: dict[tuple[str, str], Obj | None] = {}
        for event in reversed(self._history):
            if event.rv <= rv:
                break
            if event.key == key:
                out[_ns_name(event.obj)] = None if event.type == ADDED else event.old
        return out

    def storage_keys(self) -> list[str]:
        return list(self._objects)

    def count(self, key: str) -> int:
        return len(self._objects.get(key, {}))

    def create(self, key: str, obj: Obj, *, read_defaulted: bool = False) -> Obj:
        """Store a new object with the next resourceVersion; emits ADDED.
        ``read_defaulted``: ``obj`` holds defaults kube-apiserver adds when it reads the
        object, which its stored copy lacks until the next write (``strategy.read_defaults``):
        that write is never a no-op (not kept across a restart on a data directory)."""
        self.rv += 1
        stored = with_rv(obj, self.rv)
        ident = _ns_name(stored)
        self._objects.setdefault(key, {})[ident] = stored
        self._sorted.pop(key, None)
        if read_defaulted:
            self._read_defaulted.add((key, *ident))
        self._record(Event(self.rv, key, ADDED, stored, None), stored)
        return stored

    def update(self, key: str, obj: Obj) -> Obj:
        """Replace the stored object; an unchanged object is a no-op (no RV bump, no event)
        unless its stored copy lacked defaults of reads (:meth:`create`)."""
        ident = _ns_name(obj)
        old = self._objects[key][ident]
        candidate = with_rv(obj, int(old["metadata"]["resourceVersion"]))
        if self._read_defaulted and (key, *ident) in self._read_defaulted:
            self._read_defaulted.discard((key, *ident))
        elif candidate == old:
            return old
        self.rv += 1
        stored = with_rv(obj, self.rv)
        self._objects[key][_ns_name(stored)] = stored
        self._record(Event(self.rv, key, MODIFIED, stored, old), stored)
        return stored

    def delete(self, key: str, namespace: str, name: str) -> Obj:
        """Remove an object; the DELETED event carries its last state at the deletion's RV."""
        old = self._objects[key].pop((namespace, name))
        self._read_defaulted.discard((key, namespace, name))
        self._sorted.pop(key, None)
        self.rv += 1
        gone = with_rv(old, self.rv)
        self._record(Event(self.rv, key, DELETED, gone, old), None, (namespace, name))
        return gone

    def _record(self, event: Event, stored: Obj | None, ident: tuple[str, str] = ("", "")) -> None:
        if self._persistence is not None:
            if stored is not None:
                self._persistence.put(event.key, stored, event.rv)
            else:
                self._persistence.delete(event.key, ident[0], ident[1], event.rv)
        self._history.append(event)
        while len(self._history) > self._history_size:
            self.compacted_rv = self._history.popleft().rv
        for listener in list(self._listeners):
            listener(event)

    def compact(self) -> None:
        """Forget all history: watches and continue tokens from before now get 410."""
        self._history.clear()
        self.compacted_rv = self.rv

    def too_old(self, rv: int) -> bool:
        """Whether changes after ``rv`` are no longer all in the history."""
        return rv < self.compacted_rv

    def events_after(self, rv: int) -> Iterator[Event]:
        """Events with a resourceVersion greater than ``rv``, oldest first."""
        for event in self._history:
            if event.rv > rv:
                yield event

    def state_at(self, key: str, rv: int) -> dict[tuple[str, str], Obj]:
        """The objects of ``key`` as they were at ``rv`` (rewinding the history)."""
        state = dict(self._objects.get(key, {}))
        for event in reversed(self._history):
            if event.rv <= rv:
                break
            if event.key != key:
                continue
            ident = _ns_name(event.obj)
            if event.type == ADDED:
                state.pop(ident, None)
            elif event.old is not None:
                state[ident] = event.old
        return state

    def close(self) -> None:
        if self._persistence is not None:
            self._persistence.close()
