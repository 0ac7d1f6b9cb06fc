"""Read your writes: a controller's own writes of its objects, kept until its cache shows
them, as client-go's ``MutationCache`` keeps them for a cached client.

A reconcile right after a write must not plan on a cached copy older than that write (the
watch event of the write may come after the next event of the key). Copies are dropped
once the cache holds that write or a later state.
"""

from __future__ import annotations

import orjson

from ..meta.objects import ObjectRef, metadata_of
from ..patch.snapshot import LazyBox, freeze
from .reflector import DELETED, ReflectorEvent, Transform
from .store import Entry, Obj, Store, resource_version

__all__ = ["OwnWrites", "integer_version", "later_version"]


def _version(obj: Obj) -> int | None:
    """``obj``'s resourceVersion as an integer (None: none, or not an integer)."""
    try:
        return integer_version(obj["metadata"]["resourceVersion"])
    except (KeyError, TypeError):
        return None


def integer_version(rv: object) -> int | None:
    """A resourceVersion as an integer (None: not an integer)."""
    if not isinstance(rv, str | int) or isinstance(rv, bool):
        return None
    try:
        return int(rv)
    except ValueError:
        return None


def _after(version: int | None, obj: Obj) -> bool:
    """Whether ``version`` is later than ``obj``'s resourceVersion, compared as integers as
    client-go's MutationCache does (False when either is not an integer)."""
    return later_version(version, _version(obj))


def later_version(version: int | None, other: int | None) -> bool:
    """Whether resourceVersion ``version`` is later than ``other``, both as integers
    (:func:`integer_version`); False when either is None (not known to be)."""
    return version is not None and other is not None and version > other


class OwnWrites:
    """The states a controller wrote that its cache does not hold yet, by key: each as its
    resourceVersion and a frozen copy (:func:`~reconcile_kit.patch.snapshot.freeze`: plain
    dicts sharing what the reconcile did not change, which nothing mutates), handed as it
    is to a reconcile that comes before the cache shows the write, as a cache read is
    (most writes' watch events come first: a dumps and a loads cost 3% of a reconcile's
    CPU, issue 31). With a transform, or for an object that is no LazyBox tree (a copy of
    which would be a deep one), the JSON bytes, decoded (and transformed) when read: a
    transform may change what it is given.

    Args:
        store: the controller's primary cache.
        transform: the reflector's transform (a kept state looks as a cached one).
    """

    def __init__(self, store: Store, transform: Transform | None) -> None:
        self._store = store
        self._transform = transform
        self._written: dict[ObjectRef, tuple[int, Obj | bytes]] = {}

    def __len__(self) -> int:
        return len(self._written)

    def forget(self, key: ObjectRef) -> None:
        """Forget the kept write of ``key`` (the object left this replica)."""
        self._written.pop(key, None)

    def clear(self) -> None:
        """Forget every kept write (a new run)."""
        self._written.clear()

    def latest(self, key: ObjectRef, cached: Obj | None) -> Obj | None:
        """The cached object of ``key``, or this controller's own later write of it."""
        mine = self._written.get(key)
        if mine is None:
            return cached
        version, kept = mine
        if cached is None or not _after(version, cached):
            del self._written[key]
            return cached
        if not isinstance(kept, bytes):
            return kept
        state: Obj = orjson.loads(kept)
        return self._transform(state) if self._transform is not None else state

    def remember(
        self, key: ObjectRef, written: Obj, built_from: Obj, read: Entry, cached: Obj | None = None
    ) -> bool:
        """Keep ``written`` (an object's state after a reconcile) when the reconcile wrote
        it (its resourceVersion moved on from ``built_from``) and the cache does not hold
        that write yet. ``read``: the cache's entry when the reconcile started (decoded
        again only if the cache changed since). ``cached``: ``written`` as the cache would
        hold it, when the caller has it (:meth:`Reflector.as_cached`), kept as it is (it
        is never mutated). True when it kept ``written``."""
        # read without a LazyBox's wrapping (nothing read here is changed)
        rv = (dict.get(written, "metadata") or {}).get("resourceVersion")
        if rv is None or rv == metadata_of(built_from).get("resourceVersion"):
            return False
        if self._store.holds(key.namespace, key.name, read):
            now = None if read.obj is None else resource_version(read.obj)
        else:  # the cache changed since the read (often: to this very write)
            now = self._store.resource_version(key.namespace, key.name)
        if now is not None and str(now) == rv:
            return False
        version = integer_version(rv)
        if _after(version, built_from) and (
            now is None or later_version(version, integer_version(now))
        ):
            assert version is not None
            self._written[key] = (version, self._keep(written) if cached is None else cached)
            return True
        return False

    def _keep(self, written: Obj) -> Obj | bytes:
        if self._transform is None and isinstance(written, LazyBox):
            return freeze(written)
        # an exact-size copy: orjson's own bytes keep its buffer's capacity (storewriter)
        return bytes(memoryview(orjson.dumps(written)))

    def observe(self, key: ObjectRef, event: ReflectorEvent) -> None:
        """Drop the kept write of ``key`` once the cache holds it or a later state (before
        predicates: a status write that ``generation_changed`` filters out would otherwise
        keep its copy until the key's next reconcile)."""
        mine = self._written.get(key)
        if mine is not None and (event.type == DELETED or not _after(mine[0], event.obj)):
            del self._written[key]
