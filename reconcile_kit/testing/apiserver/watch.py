"""Watch fan-out: turns store events into per-stream watch events.

Semantics follow kube-apiserver's cacher: events are filtered by namespace and
selectors, an object entering the selection is ADDED, one leaving it is DELETED (carrying
its last matching state), and per stream resourceVersions strictly increase.
"""

from __future__ import annotations

import asyncio
import base64
from dataclasses import dataclass

import orjson

from ...meta.selectors import FieldSelector, LabelSelector
from . import builtinversions
from .fieldlabels import FieldLabels
from .resources import ResourceType
from .store import ADDED, DELETED, MODIFIED, Event, Obj, Store

CLOSE = None
INITIAL_EVENTS_END = b""  # queued after a watch-list's initial events: write its BOOKMARK
INITIAL_EVENTS_END_ANNOTATION = "k8s.io/initial-events-end"
LIST_BLUEPRINT_ANNOTATION = "kubernetes.io/initial-events-list-blueprint"


@dataclass(slots=True)
class Filter:
    """Which objects a list or watch selects."""

    namespace: str | None
    labels: LabelSelector
    fields: FieldSelector
    field_labels: FieldLabels | None = None
    """The kind's own field labels (None: the object's fields)."""

    def matches(self, obj: Obj) -> bool:
        meta = obj["metadata"]
        if self.namespace is not None and meta.get("namespace", "") != self.namespace:
            return False
        if not self.labels.empty() and not self.labels.matches(meta.get("labels") or {}):
            return False
        if self.fields.empty():
            return True
        if self.field_labels is not None:
            return self.fields.matches_set(self.field_labels.values(obj))
        return self.fields.matches(obj)


def encode_event(event: Event, kind: str, rt: ResourceType) -> bytes:
    """One watch line for ``event`` seen as ``kind`` (ADDED/MODIFIED/DELETED) by ``rt``."""
    cache_key = f"{kind}:{rt.api_version}"
    line = event.encoded.get(cache_key)
    if line is None:
        obj = event.obj
        if builtinversions.handles(rt):
            obj = builtinversions.served_form(rt, obj)
        elif obj.get("apiVersion") != rt.api_version:
            obj = {**obj, "apiVersion": rt.api_version}
        line = orjson.dumps({"type": kind, "object": obj}) + b"\n"
        event.encoded[cache_key] = line
    return line


def encode_leaving(event: Event, rt: ResourceType) -> bytes:
    """The DELETED line for an object a MODIFIED event took out of a watch's selection: the
    previous (last matching) object with the event's resourceVersion, as the watch cache's
    ``cacheWatcher.convertToWatchEvent`` sends it."""
    cache_key = f"LEFT:{rt.api_version}"
    line = event.encoded.get(cache_key)
    if line is None:
        assert event.old is not None
        old = event.old
        if builtinversions.handles(rt):
            old = builtinversions.served_form(rt, old)
        obj = {
            **old,
            "apiVersion": rt.api_version,
            "metadata": {**old["metadata"], "resourceVersion": str(event.rv)},
        }
        line = orjson.dumps({"type": DELETED, "object": obj}) + b"\n"
        event.encoded[cache_key] = line
    return line


def encode_bookmark(
    rt: ResourceType, rv: int, initial_events_end: bool = False, metadata: str | None = None
) -> bytes:
    """A BOOKMARK line: an empty ``rt`` object carrying ``rv`` (the watch cache's
    ``newFunc()``; a built-in kind's zero-valued spec/status fields are left out), or an
    empty PartialObjectMetadata of meta.k8s.io/``metadata`` on a metadata watch. The one
    ending a watch-list's initial events is annotated as ``cacheWatcher.convertToWatchEvent``
    and the handlers' ``watchListTransformer`` do: the end marker and an empty list of the
    kind, JSON-encoded and base64-encoded."""
    if metadata is not None:
        kind, api_version, typed = "PartialObjectMetadata", f"meta.k8s.io/{metadata}", True
    else:
        kind, api_version, typed = rt.kind, rt.api_version, rt.builtin
    meta: dict[str, object] = {"resourceVersion": str(rv)}
    if typed:
        meta["creationTimestamp"] = None  # a typed object's zero metav1.Time
    if initial_events_end:
        blueprint = _blueprint(f"{kind}List", api_version, typed)
        meta["annotations"] = {
            INITIAL_EVENTS_END_ANNOTATION: "true",
            LIST_BLUEPRINT_ANNOTATION: base64.b64encode(blueprint).decode(),
        }
    obj = {"kind": kind, "apiVersion": api_version, "metadata": meta}
    return orjson.dumps({"type": "BOOKMARK", "object": obj}) + b"\n"


def _blueprint(list_kind: str, api_version: str, typed: bool) -> bytes:
    """An empty list as kube-apiserver's JSON encoder writes it: a typed list (nil items),
    or an UnstructuredList for custom resources."""
    body: dict[str, object]
    if typed:
        body = {"kind": list_kind, "apiVersion": api_version, "metadata": {}, "items": None}
    else:
        body = {"apiVersion": api_version, "items": [], "kind": list_kind}
    return orjson.dumps(body) + b"\n"


class Watcher:
    """One open watch stream: a queue of encoded lines (``CLOSE`` ends the stream,
    ``INITIAL_EVENTS_END`` stands for the BOOKMARK at ``initial_rv``)."""

    def __init__(self, rt: ResourceType, selection: Filter) -> None:
        self.rt = rt
        self.selection = selection
        self.queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.last_rv = 0
        self.initial_rv = 0

    def offer(self, event: Event) -> None:
        kind = self._transition(event)
        if kind is not None:
            self.last_rv = event.rv
            if kind == DELETED and event.type == MODIFIED:
                self.queue.put_nowait(encode_leaving(event, self.rt))
            else:
                self.queue.put_nowait(encode_event(event, kind, self.rt))

    def _transition(self, event: Event) -> str | None:
        now = self.selection.matches(event.obj)
        if event.type == ADDED:
            return ADDED if now else None
        if event.type == DELETED:
            return DELETED if now else None
        before = event.old is not None and self.selection.matches(event.old)
        if before and now:
            return MODIFIED
        if now:
            return ADDED
        return DELETED if before else None

    def close(self) -> None:
        self.queue.put_nowait(CLOSE)


class WatchHub:
    """Routes every store event to the open watchers of its resource."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._watchers: dict[str, set[Watcher]] = {}
        store.subscribe(self._dispatch)

    def _dispatch(self, event: Event) -> None:
        for watcher in list(self._watchers.get(event.key, ())):
            watcher.offer(event)

    def open(
        self, rt: ResourceType, selection: Filter, since: int | None, end_marker: bool = False
    ) -> Watcher:
        """Open a stream; ``since=None`` sends synthetic ADDED for current state first
        (then ``INITIAL_EVENTS_END`` if ``end_marker``).

        Replay and registration happen without yielding to the event loop, so no event
        is lost or duplicated between the initial state and the live stream.
        """
        watcher = Watcher(rt, selection)
        if since is None:
            for obj in self._store.items(rt.storage_key, selection.namespace):
                if selection.matches(obj):
                    rv = int(obj["metadata"]["resourceVersion"])
                    synthetic = Event(rv, rt.storage_key, ADDED, obj, None)
                    watcher.queue.put_nowait(encode_event(synthetic, ADDED, rt))
            watcher.last_rv = watcher.initial_rv = self._store.rv
            if end_marker:
                watcher.queue.put_nowait(INITIAL_EVENTS_END)
        else:
            watcher.last_rv = since
            for event in self._store.events_after(since):
                if event.key == rt.storage_key:
                    watcher.offer(event)
            watcher.last_rv = max(watcher.last_rv, since)
        self._watchers.setdefault(rt.storage_key, set()).add(watcher)
        return watcher

    async def wait_for(self, rv: int, timeout: float) -> bool:
        """Wait until the store reaches ``rv`` (the watch cache's ``waitUntilFreshAndBlock``);
        False when ``timeout`` seconds pass first."""
        if self._store.rv >= rv:
            return True
        reached = asyncio.Event()

        def check(event: Event) -> None:
            if event.rv >= rv:
                reached.set()

        unsubscribe = self._store.subscribe(check)
        try:
            await asyncio.wait_for(reached.wait(), timeout)
        except TimeoutError:
            return False
        finally:
            unsubscribe()
        return True

    def release(self, watcher: Watcher) -> None:
        self._watchers.get(watcher.rt.storage_key, set()).discard(watcher)

    def close_all(self) -> int:
        """End every open stream (as an apiserver restart would); returns how many."""
        count = 0
        for watchers in self._watchers.values():
            for watcher in list(watchers):
                watcher.close()
                count += 1
        return count

    def close_key(self, storage_key: str) -> None:
        for watcher in list(self._watchers.get(storage_key, ())):
            watcher.close()

    @property
    def open_count(self) -> int:
        return sum(len(w) for w in self._watchers.values())
