"""Reflector: LIST then WATCH one kind into a :class:`~reconcile_kit.runtime.store.Store`.

Semantics follow client-go's tools/cache Reflector: a paginated LIST, then a WATCH from
the list's resourceVersion with bookmarks and a server-side timeout; when a stream ends
the watch resumes from the last resourceVersion seen (bookmarks included); a 410 Expired
relists and reconciles the store with the new list (objects gone from it become
deletions); errors back off exponentially with jitter (0.8 s doubling to 5 s, reset after
a healthy stream). LIST and WATCH are spoken through ``api.call_api`` because kr8s's own
``watch()`` does no initial list and reconnects in a tight loop on 410.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import logging
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, TypedDict

import httpx
import orjson
from kr8s.asyncio import Api

from ..client.errors import APIError, ExpiredError, NotFoundError
from ..client.request import RequestLocation, Target, send, stream_chunks
from ..meta.objects import metadata_of, resource_version_in
from ..patch.recent import RECENT, RECENT_BYTES
from .resources import ResourceInfo
from .store import Entry, IndexFunc, Key, Obj, key_of, resource_version
from .storewriter import StoreWriter

__all__ = [
    "ADDED",
    "DELETED",
    "EXPECTED_STATES",
    "FIRST_PAGE",
    "GC_FREEZE",
    "METADATA_LIST",
    "METADATA_WATCH",
    "MODIFIED",
    "PAGE_BYTES",
    "REPLACE_CHUNK",
    "Backoff",
    "Handler",
    "Reflector",
    "ReflectorEvent",
    "Transform",
    "WatchError",
    "WatchScope",
    "drop_managed_fields",
]

log = logging.getLogger(__name__)

ADDED, MODIFIED, DELETED = "ADDED", "MODIFIED", "DELETED"
Transform = Callable[[Obj], Obj]

METADATA_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
"""``Accept`` of a metadata-only LIST (client-go's metadata client)."""
METADATA_WATCH = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
"""``Accept`` of a metadata-only WATCH: events carry PartialObjectMetadata."""
REPLACE_CHUNK = 200
"""Objects of a LIST stored and dispatched per event-loop turn (bounded stalls at scale)."""
PAGE_BYTES = 1 << 20
"""The JSON bytes a LIST page aims at: after the first page (at most :data:`FIRST_PAGE`
objects), a reflector asks for as many objects as that page's average size fits in this,
never more than its ``page_size``. The decoded page is a LIST's memory peak, and Python's
allocator keeps the arenas a large page spread over once the cache's own allocations are
interleaved with it: pages of 500 objects of 6 KB left 0.1x the objects' JSON behind
(issue 31)."""
FIRST_PAGE = 100
"""The most objects a LIST's first page asks for (their size is unknown before it)."""
EXPECTED_STATES = 1024
"""At most this many states expected in watch events (:meth:`Reflector.expect`) at once;
one more forgets them all (their events are then decoded)."""
WATCH_IDLE_TIMEOUT = 90.0
"""Seconds a watch may deliver nothing before it is taken for dead and opened again from
its last resourceVersion (no LIST): kube-apiserver sends a bookmark roughly every minute
to a watch that allows them (its cacher's ``bookmarkFrequency``), the embedded server
every second. A connection that stopped delivering without closing (a partition, a
stalled proxy) was noticed only at the watch's own bound, ``timeout_seconds`` + 30 s."""
_STORED_EVENTS = (b'{"type":"MODIFIED","object":{', b'{"type":"ADDED","object":{')
GC_FREEZE: Literal["chunk", "synced", "off"] = "chunk"
"""When a reflector moves what the process holds into the garbage collector's permanent
generation (``gc.freeze()``), so that no later full collection walks it again:
``"chunk"`` (default) at every :data:`REPLACE_CHUNK` turn of storing a LIST and once it is
stored, ``"synced"`` only once it is stored, ``"off"`` never. Without it a full collection
walks every object the process holds, each queued key included: at 100,000 objects a
generation-2 pass held the event loop 110-140 ms during the initial sync (issue 31).
Frozen objects are still freed when their last reference goes; only reference cycles
that were already garbage when frozen stay (until ``gc.unfreeze()``). Process-wide: set
``"off"`` where something else manages the collector."""


def _freeze_heap(moment: Literal["chunk", "synced"]) -> None:
    """``gc.freeze()`` when :data:`GC_FREEZE` asks for it at ``moment``."""
    if GC_FREEZE in ("chunk", moment):
        gc.freeze()


@dataclass(frozen=True, slots=True)
class ReflectorEvent:
    """A change seen by a reflector: ``obj`` is the new state (DELETED: the last known).

    Both states may be shared (with the store, a reconcile's object, read-your-writes: the
    state a write was answered with is its event's ``obj``): read them, never mutate them.
    """

    type: str
    obj: Obj
    old: Obj | None


Handler = Callable[[ReflectorEvent], None]


def drop_managed_fields(obj: Obj) -> Obj:
    """The default transform: drop ``metadata.managedFields`` (rarely read, often large)."""
    obj.get("metadata", {}).pop("managedFields", None)
    return obj


class Backoff:
    """Exponential backoff with jitter, as client-go's reflector (800 ms, x2, jitter 1) but
    capped at 5 s by default instead of 30 s, and (in :class:`Reflector`) started over
    whenever the server answered, even with an error: only a server that does not answer
    makes the delays grow. A reflector that failed a few times in a row (an API server
    restart, then an injected or transient 500) otherwise left its cache, and every change
    it should deliver, 6-12 s behind a server answering again.

    ``next()`` returns a delay in seconds within ``[d, d * (1 + jitter)]`` capped at
    ``maximum``, where ``d`` doubles from ``initial``; ``reset()`` starts over.
    ``answered()`` is the delay after an error the server answered: ``quick`` (jittered)
    for the first since the last ``reset()`` (a transient fault: one injected 500 held a
    rejoining replica's workers for a LIST retried 0.8-1.6 s later), then ``initial``
    (jittered) each time: a server failing every request sees one extra request per run
    of failures, not a retry loop.
    """

    def __init__(
        self,
        initial: float = 0.8,
        maximum: float = 5.0,
        factor: float = 2.0,
        jitter: float = 1.0,
        rng: Callable[[], float] = random.random,
        quick: float = 0.1,
    ) -> None:
        self.initial, self.maximum, self.factor, self.jitter = initial, maximum, factor, jitter
        self.quick = min(quick, initial)
        self._rng = rng
        self._current = initial
        self._answered = 0  # answered errors since the last reset()

    def next(self) -> float:
        """The next delay in seconds (jittered, capped at ``maximum``); grows the base."""
        delay = min(self._current * (1 + self.jitter * self._rng()), self.maximum)
        self._current = min(self._current * self.factor, self.maximum)
        return delay

    def answered(self) -> float:
        """The delay after an error the server answered (it is up: such failures do not
        compound): ``quick`` for the first since :meth:`reset`, else ``initial``, each
        jittered and capped at ``maximum``; the next :meth:`next` starts from ``initial``."""
        self._answered += 1
        self._current = self.initial
        base = self.quick if self._answered == 1 else self.initial
        return min(base * (1 + self.jitter * self._rng()), self.maximum)

    def reset(self) -> None:
        """Back to the ``initial`` delay, and the next answered error is retried quickly
        (a success: a LIST stored, a watch that ended normally)."""
        self._current = self.initial
        self._answered = 0


class WatchError(APIError):
    """A watch stream ended with an ERROR event (its Status code and message)."""


class WatchScope(TypedDict, total=False):
    """What a :class:`Reflector` lists and watches of its kind (its arguments of the same
    names): a namespace, server-side selectors, and the transform of what it stores."""

    namespace: str | None
    label_selector: str | None
    field_selector: str | None
    transform: Transform | None


class Reflector:
    """Keeps ``store`` in line with the API server for one kind and scope.

    Args:
        api: a kr8s asyncio Api.
        info: the kind (see :func:`reconcile_kit.meta.objects.resolve_kind`).
        namespace: watch one namespace (None: all namespaces, or cluster-scoped kinds).
        label_selector: server-side filter (Kubernetes label selector syntax).
        field_selector: server-side filter (Kubernetes field selector syntax).
        transform: applied to every object before it is stored (default: drop managedFields).
        page_size: the most objects a LIST page asks for (``limit``); pages of large
            objects ask for fewer (:data:`PAGE_BYTES`, :data:`FIRST_PAGE`).
        timeout_seconds: the server-side watch timeout; the watch then resumes.
        backoff: the error backoff (default: client-go's).
        indexers: extra store indexes.
        sleep: awaited with the backoff delay in seconds (tests replace it).
        metadata_only: list and watch ``PartialObjectMetadata`` (apiVersion, kind and
            metadata, as client-go's metadata informer): the server leaves spec and status
            out of what it sends; stored objects keep the kind PartialObjectMetadata.
        compact: keep the cached objects as JSON bytes, decoded on every read (see
            :class:`~reconcile_kit.runtime.store.Store`); None (default): compact unless
            ``metadata_only`` (small objects some callers walk often).

    Attributes:
        on_error: plain functions called with every exception a LIST or WATCH failed with
            (before the backoff's wait), as client-go's ``WatchErrorHandler``; an
            :class:`~reconcile_kit.client.errors.APIError` with a ``status`` is one the
            server answered, anything else (a refused or reset connection, a timeout)
            found it unreachable. What they raise is logged and ignored.
    """

    def __init__(
        self,
        api: Api,
        info: ResourceInfo,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        transform: Transform | None = drop_managed_fields,
        page_size: int = 500,
        timeout_seconds: int = 300,
        backoff: Backoff | None = None,
        indexers: dict[str, IndexFunc] | None = None,
        sleep: Callable[[float], Any] = asyncio.sleep,
        metadata_only: bool = False,
        compact: bool | None = None,
    ) -> None:
        self.api = api
        self.metadata_only = metadata_only
        self._sleep = sleep
        self.info = info
        self.namespace = namespace if info.namespaced else None
        self._target = Target(info.ref_kind, self.namespace)
        self.label_selector = label_selector
        self.field_selector = field_selector
        self.backoff = backoff or Backoff()
        self.transform = transform
        self.page_size = page_size
        self.timeout_seconds = timeout_seconds
        compact = not metadata_only if compact is None else compact
        self._writer = StoreWriter(indexers, compact=compact)
        self.store = self._writer.store  # read-only: what everyone else gets
        self.lists = 0
        self.lists_started = 0
        self.watches = 0
        self._relist_wanted = False
        self._relists: list[tuple[int, asyncio.Future[None]]] = []
        self._interruptible: asyncio.Future[Any] | None = None
        self._heard = 0.0  # the loop's time of the open watch's last bytes
        self._listing = False  # dispatching a LIST page (keep_decoded keeps nothing)
        self._watchdog: asyncio.TimerHandle | None = None
        self.idle_rewatches = 0
        """Watches opened again because they delivered nothing for
        :data:`WATCH_IDLE_TIMEOUT` seconds."""
        self._rv = ""
        self._expected: dict[str, Obj] = {}
        self._handlers: list[Handler] = []
        self.on_error: list[Callable[[Exception], None]] = []
        self._task: asyncio.Task[None] | None = None
        self.cluster: str | None = None
        """The cluster this reflector watches, in a multi-cluster manager (named in its
        log lines); None otherwise."""
        self._failing = False
        self.on_failing: list[Callable[[bool], None]] = []
        """Functions called with :attr:`failing`'s new value each time it changes (a
        multi-cluster manager's ``cluster_synced`` gauge follows it without polling)."""

    @property
    def failing(self) -> bool:
        """Whether its last LIST or WATCH failed and none has succeeded since (the server
        does not answer, or refuses): the cache it holds may be stale."""
        return self._failing

    @failing.setter
    def failing(self, value: bool) -> None:
        if value == self._failing:
            return
        self._failing = value
        for callback in self.on_failing:
            try:
                callback(value)
            except Exception:
                log.exception("%s: an on_failing callback failed", self._where)

    @property
    def _where(self) -> str:
        """What its log lines name: the kind, and the cluster when it has one."""
        kind = self.info.ref_kind
        return kind if self.cluster is None else f"{kind} in cluster {self.cluster}"

    # --- observers -------------------------------------------------------------------------

    def subscribe(self, handler: Handler, replay: bool = True) -> Callable[[], None]:
        """Call ``handler`` for every change; with ``replay``, first ADDED for what is cached.

        Returns a function that unsubscribes.
        """
        self._handlers.append(handler)
        if replay:
            for obj in self.store.list():
                event = ReflectorEvent(ADDED, obj, None)
                try:
                    handler(event)
                except Exception:
                    self._handler_failed(event)
        return lambda: self._handlers.remove(handler) if handler in self._handlers else None

    def has_synced(self) -> bool:
        """Whether the first LIST has been stored (client-go HasSynced)."""
        return self.store.has_synced()

    def note_decoded(self, key: Key, read: Entry) -> None:
        """Note that ``read.obj`` is the decoded state ``read`` found at ``key`` and that
        nothing changes it (a reconcile reads it): the key's next event, the watch event
        of the reconcile's write, takes it as the old state instead of decoding the
        stored one again (:meth:`StoreWriter.note_decoded`); :meth:`forget_decoded` when
        the reconcile wrote nothing."""
        if read.obj is not None:
            self._writer.note_decoded(key, read.token, read.obj)

    def forget_decoded(self, key: Key) -> None:
        """Drop :meth:`note_decoded`'s note of ``key``, if it is still held."""
        self._writer.forget_decoded(key)

    def keep_decoded(self, namespace: str | None, name: str, obj: Obj) -> None:
        """Keep ``obj``, the state of ``namespace``/``name`` an ADDED or MODIFIED watch
        event this reflector is dispatching carried, for the next :meth:`read` of it, by
        the reconcile the event queues (:meth:`StoreWriter.keep_decoded`). Not a LIST's:
        keeping the first of thousands of objects listed saved little and left the memory
        they were decoded in spread (RSS growth at 10,000 Widgets 1.089x -> 1.124x the
        JSON)."""
        if not self._listing:
            self._writer.keep_decoded((namespace or "", name), obj)

    def read(self, namespace: str | None, name: str) -> Entry:
        """As :meth:`Store.entry`, except that the object may be the state an event
        carried (:meth:`keep_decoded`), shared: for a reader that never mutates it."""
        obj, token = self._writer.read((namespace or "", name))
        return Entry(obj, token)

    def as_cached(self, state: Obj) -> Obj | None:
        """``state``, an object's state as the server answered a write of it (a dict
        nothing mutates), as this reflector stores it: transformed, sharing what the
        transform keeps. None when it cannot tell: a metadata-only watch, another kind or
        apiVersion than this reflector's, or a transform other than
        :func:`drop_managed_fields` (which may change anything it is given)."""
        if not self._known_form() or state.get("apiVersion") != self.info.api_version:
            return None
        if state.get("kind") != self.info.kind:
            return None
        if self.transform is None:
            return state
        meta = state.get("metadata")
        if not isinstance(meta, dict) or "managedFields" not in meta:
            return state
        meta = dict(meta)
        del meta["managedFields"]
        return {**state, "metadata": meta}

    def expect(self, state: Obj) -> None:
        """Expect ``state`` (from :meth:`as_cached`: a controller's own write) in a watch
        event: the ADDED or MODIFIED event carrying its resourceVersion stores and
        dispatches it instead of decoding its line (most events a controller sees are its
        own writes', and a 6 KB decode cost ~3% of a reconcile's CPU, issue 31). An event
        is recognised by its one ``"resourceVersion":"`` string field (metadata's: a label,
        annotation or field of that name makes two, and the line is decoded:
        :func:`~reconcile_kit.meta.objects.resource_version_in`); a
        resourceVersion names one write of one object, as etcd's revisions do. Forgotten
        at a relist, or all at once beyond :data:`EXPECTED_STATES`."""
        rv = resource_version(state)
        if rv:
            if len(self._expected) >= EXPECTED_STATES:
                self._expected.clear()
            self._expected[rv] = state

    async def wait_synced(self) -> None:
        """Wait (without limit) until the first LIST is stored."""
        await self.store.wait_synced()

    def relist(self) -> asyncio.Future[None]:
        """End the current watch (or error backoff) and LIST again; returns a future done
        once a LIST that started after this call is stored (its differences dispatched,
        objects gone from it as DELETED). A store kept while its watch was down can miss
        changes; a sharded controller that rejoins its ring awaits this before it
        reconciles (objects may have moved to other replicas meanwhile). Needs the
        reflector running (:meth:`start`); the future stays pending while the LIST fails
        (the reflector retries after its backoff): bound the wait with a timeout.
        Cancelling the future does not stop the LIST."""
        wanted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._relists.append((self.lists_started + 1, wanted))
        self._relist_wanted = True
        if self._interruptible is not None:  # a watch, or a backoff's sleep
            self._interruptible.cancel()
        return wanted

    def last_sync_resource_version(self) -> str:
        """The resourceVersion the store is current to (client-go LastSyncResourceVersion)."""
        return self._rv

    # --- lifecycle -------------------------------------------------------------------------

    def start(self) -> asyncio.Task[None]:
        """Run in a background task (idempotent); returns the task."""
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(
                self.run(), name=f"reflector {self.info.ref_kind}"
            )
        return self._task

    async def stop(self) -> None:
        """Stop listing and watching (cancel :meth:`start`'s task and wait for it); the store
        keeps what it holds. Idempotent."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def run(self) -> None:
        """LIST and WATCH until cancelled; never returns otherwise."""
        need_list = True
        while True:
            try:
                if self._relist_wanted:  # relist(): a LIST until one succeeds
                    self._relist_wanted, need_list = False, True
                if need_list:
                    await self._list()
                    need_list = False
                    self.failing = False
                    self.backoff.reset()
                if await self._unless_relisting(self._watch):
                    self.backoff.reset()
            except ExpiredError as err:
                self._report_error(err)
                log.info("%s: resourceVersion %s expired, relisting", self._where, self._rv)
                need_list = True
                self.backoff.reset()  # the server answers again: back off from the start
            except asyncio.CancelledError:
                raise
            except Exception as err:
                self.failing = True
                self._report_error(err)
                # the server answered: it is up, so failures it answers (an injected or
                # transient 500, a 409) do not compound; Retry-After is still honoured
                answered = isinstance(err, APIError) and err.status
                delay = self.backoff.answered() if answered else self.backoff.next()
                if isinstance(err, APIError) and err.retry_after:
                    delay = max(delay, err.retry_after)
                log.warning(
                    "%s: %s failed (%s%s); retrying in %.1f s",
                    self._where,
                    "list" if need_list else "watch",
                    str(err) or repr(err),
                    self._not_served(err),
                    delay,
                )
                await self._unless_relisting(functools.partial(self._sleep, delay))

    def _not_served(self, error: Exception) -> str:
        """What a failed LIST or WATCH adds to its warning: for a 404 (a LIST in a
        namespace that does not exist answers 200, so the resource itself is not served),
        which resource and the usual cause, a CRD not installed yet."""
        if not isinstance(error, NotFoundError):
            return ""
        info = self.info
        served = f"; {info.plural} of {info.api_version} is not served"
        if not info.group:
            return served
        return f"{served}: is the CustomResourceDefinition of {info.kind} installed?"

    def _report_error(self, error: Exception) -> None:
        for handler in list(self.on_error):
            try:
                handler(error)
            except Exception:
                log.exception("%s: an error handler failed", self._where)

    async def _unless_relisting(self, work: Callable[[], Awaitable[Any]]) -> Any:
        """Await ``work()`` (a watch, a backoff's sleep) in a task :meth:`relist` cancels;
        None when it did, or when a LIST is wanted already."""
        if self._relist_wanted:
            return None
        task = self._interruptible = asyncio.ensure_future(work())
        try:
            return await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if not task.cancelled() or (current is not None and current.cancelling()):
                raise  # the reflector is stopping
            return None
        finally:
            self._interruptible = None

    # --- LIST ------------------------------------------------------------------------------

    def _request(self, params: dict[str, str]) -> RequestLocation:
        if self.label_selector:
            params["labelSelector"] = self.label_selector
        if self.field_selector:
            params["fieldSelector"] = self.field_selector
        return {
            "version": self.info.api_version,
            "url": self.info.plural,
            "namespace": self.namespace,
            "params": params,
        }

    async def _list(self) -> None:
        """LIST in pages, each stored and dispatched as it arrives (:meth:`_store_page`),
        then drop what the LIST no longer holds: the peak is one decoded page, and each
        object is decoded once (issue 31: keeping every page's bytes and decoding them
        again cost a decode per object)."""
        seen: set[Key] = set()
        self._expected.clear()  # a relist may skip the events they were expected in
        self.lists_started += 1
        number = self.lists_started
        token, rv, limit = "", "", min(self.page_size, FIRST_PAGE)
        while True:
            params = {"limit": str(limit)}
            if token:
                params["continue"] = token
            reply = await send(
                self.api,
                "GET",
                target=self._target,
                accept=(410,),
                retry=False,  # the reflector's backoff (honouring Retry-After) retries
                headers={"Accept": METADATA_LIST} if self.metadata_only else None,
                **self._request(params),
            )
            if reply.status == 410:
                if not token:
                    raise ExpiredError(reply.text, status=410, reason="Expired")
                token = ""  # the continue token expired: start over (what is stored stays)
                seen.clear()
                continue
            page = reply.json()
            limit = self._next_limit(len(page.get("items") or ()), len(reply.content))
            del reply
            meta = metadata_of(page)
            token, rv = meta.get("continue") or "", meta.get("resourceVersion", "")
            await self._store_page(page.get("items") or [], seen)
            del page
            if not token:
                break
        self.lists += 1
        self._drop_unseen(seen)
        self._rv = rv
        self._writer.mark_synced()
        _freeze_heap("synced")
        for wanted_from, wanted in self._relists:
            if wanted_from <= number and not wanted.done():
                wanted.set_result(None)
        self._relists = [(n, f) for n, f in self._relists if not f.done()]

    def _next_limit(self, objects: int, size: int) -> int:
        """The next LIST page's ``limit`` after a page of ``objects`` in ``size`` bytes:
        as many as fit in :data:`PAGE_BYTES`, between 1 and :attr:`page_size`."""
        if objects == 0:
            return self.page_size
        return max(1, min(self.page_size, objects * PAGE_BYTES // size))

    async def _store_page(self, items: list[Obj], seen: set[Key]) -> None:
        """Store one LIST page's ``items`` and dispatch the differences,
        :data:`REPLACE_CHUNK` objects per event-loop turn: a LIST of 100,000 objects would
        otherwise hold the loop for seconds (issue 19). ``seen`` collects their keys."""
        self._listing = True  # what a LIST dispatches is not kept (keep_decoded)
        try:
            for obj in map(self._prepare, items):
                key = key_of(obj)
                seen.add(key)
                stored, old = self._writer.update(obj, self._writer.encode(obj))
                if stored:
                    self._dispatch(ReflectorEvent(ADDED if old is None else MODIFIED, obj, old))
                if len(seen) % REPLACE_CHUNK == 0:
                    _freeze_heap("chunk")
                    await asyncio.sleep(0)
        finally:
            self._listing = False

    def _drop_unseen(self, seen: set[Key]) -> None:
        """Remove (and dispatch as deleted) what the store holds that a LIST did not."""
        if len(self._writer) > len(seen):  # some are gone (never on the first LIST)
            # unsorted: sorting a million keys held the loop ~0.5 s (issue 31)
            for key in [key for key in self._writer.items if key not in seen]:
                gone = self._writer.delete(key)
                assert gone is not None
                self._dispatch(ReflectorEvent(DELETED, gone, gone))

    def _prepare(self, obj: Obj) -> Obj:
        obj.setdefault("apiVersion", self.info.api_version)
        obj.setdefault("kind", self.info.kind)
        return self.transform(obj) if self.transform is not None else obj

    # --- WATCH -----------------------------------------------------------------------------

    async def _watch(self) -> bool:
        """One watch stream; True when it ended normally (a healthy stream)."""
        params = {
            "watch": "1",
            "resourceVersion": self._rv,
            "allowWatchBookmarks": "true",
            "timeoutSeconds": str(self.timeout_seconds),
        }
        timeout = httpx.Timeout(10.0, read=self.timeout_seconds + 30.0)
        self.watches += 1
        headers = {"Accept": METADATA_WATCH} if self.metadata_only else {}
        loop = asyncio.get_running_loop()
        try:
            async with stream_chunks(
                self.api,
                target=self._target,
                timeout=timeout,
                headers=headers,
                **self._request(params),
            ) as chunks:
                self.failing = False  # answered: the watch is established
                # silence counts from the answer on (a request in flight has its own
                # bounds; a watchdog armed before it could cancel watch after watch on a
                # clock that jumps, as a test's fast-forwarded one does)
                self._heard = loop.time()
                self._arm_watchdog(loop)
                # newline-delimited JSON events; split here rather than through a client's
                # text and line decoders, which cost more than parsing the events
                pending = b""
                async for chunk in chunks:
                    self._heard = loop.time()
                    pending = self._on_lines(pending + chunk if pending else chunk)
                if pending.strip():
                    self._on_line(pending)
        finally:
            if self._watchdog is not None:
                self._watchdog.cancel()
                self._watchdog = None
        return True

    def _arm_watchdog(self, loop: asyncio.AbstractEventLoop) -> None:
        heard = self._heard
        self._watchdog = loop.call_at(heard + WATCH_IDLE_TIMEOUT, self._check_heard, heard)

    def _check_heard(self, heard: float) -> None:
        """The watchdog of the open watch, armed when it last heard at ``heard``: cancels
        it (it is opened again from the last resourceVersion) when it heard nothing
        since, else arms again from when it last did. Judged by what was heard, not by
        the clock: a loop runs a timer up to its clock's resolution early, and a
        fast-forwarded clock would then never reach the deadline (a spin)."""
        loop = asyncio.get_running_loop()
        if self._heard > heard:
            self._arm_watchdog(loop)
            return
        self.idle_rewatches += 1
        log.warning(
            "%s: the watch delivered nothing for %.0f s; opening it again",
            self._where,
            loop.time() - heard,
        )
        if self._interruptible is not None:
            self._interruptible.cancel()

    def _on_lines(self, data: bytes) -> bytes:
        """Handle the complete lines of ``data``; returns what follows the last one. Found
        with ``find`` (memchr): ``bytes.split`` looks at every byte in Python's own loop,
        ~5 instructions each (30,000 per 6 KB event, by callgrind)."""
        start, end = 0, data.find(b"\n")
        while end >= 0:
            line = data[start:end]
            if line.strip():
                self._on_line(line)
            start, end = end + 1, data.find(b"\n", end + 1)
        return data[start:]

    def _on_line(self, line: bytes) -> None:
        if self._expected:
            state = self._expected_in(line)
            if state is not None:
                self._store(state)
                self._rv = resource_version(state)
                return
        event = orjson.loads(line)
        kind, obj = event.get("type"), event.get("object") or {}
        if kind == "ERROR":
            status, message = int(obj.get("code") or 500), str(obj.get("message", ""))
            if status == 410:
                raise ExpiredError(message, status=410, reason="Expired")
            raise WatchError(message, status=status, reason=str(obj.get("reason", "")))
        rv = resource_version(obj)
        if kind == "BOOKMARK":
            self._rv = rv or self._rv
            return
        if kind == MODIFIED and RECENT.wanted(self.info.api_version, self.info.kind):
            self._note_recent(obj, len(line))
        obj = self._prepare(obj)
        if kind == DELETED:
            old = self._writer.remove(obj)
            self._dispatch(ReflectorEvent(DELETED, obj, old))
        elif kind in (ADDED, MODIFIED):
            self._store(obj)
        self._rv = rv or self._rv

    def _note_recent(self, obj: Obj, size: int) -> None:
        """Note ``obj`` (decoded from a MODIFIED event of ``size`` bytes, not yet
        transformed) for a write in flight whose answer it may be
        (:mod:`reconcile_kit.patch.recent`): as it came, whatever this reflector's transform
        leaves of it. Not a metadata-only watch's (another kind), nor with a transform of
        the user's (it may change anything)."""
        if not self._known_form() or size > RECENT_BYTES:
            return
        if self.transform is None:
            RECENT.note(obj)
        elif isinstance(obj.get("metadata"), dict):
            RECENT.note({**obj, "metadata": dict(obj["metadata"])})  # it pops managedFields

    def _known_form(self) -> bool:
        """Whether this reflector's objects are the server's as they are, or without
        managedFields (:func:`drop_managed_fields`): not a metadata-only watch's, nor
        through a transform of the user's, which may change anything it is given."""
        return not self.metadata_only and self.transform in (None, drop_managed_fields)

    def _store(self, obj: Obj) -> None:
        """Store ``obj`` from an ADDED or MODIFIED event and dispatch the change."""
        old = self._writer.put(obj)
        self._dispatch(ReflectorEvent(ADDED if old is None else MODIFIED, obj, old))

    def _expected_in(self, line: bytes) -> Obj | None:
        """The expected state (:meth:`expect`) an ADDED or MODIFIED event ``line``
        carries, found without decoding it; None: not one."""
        if not line.startswith(_STORED_EVENTS):
            return None
        rv = resource_version_in(line)
        return None if rv is None else self._expected.pop(rv, None)

    def _dispatch(self, event: ReflectorEvent) -> None:
        for handler in list(self._handlers):
            try:
                handler(event)
            except Exception:
                self._handler_failed(event)

    def _handler_failed(self, event: ReflectorEvent) -> None:
        """Log the exception a handler of ``event`` raised (handled: the others run)."""
        meta = event.obj.get("metadata", {})
        log.exception(
            "%s %s/%s: event handler failed",
            self.info.ref_kind,
            meta.get("namespace", ""),
            meta.get("name", ""),
        )
