"""PatchHelper: snapshot an object, let the reconciler mutate it, send minimal patches.

The pattern is Cluster API's ``patch.Helper`` (sigs.k8s.io/cluster-api util/patch) for
kr8s objects: one RFC 7386 merge patch for everything outside ``status`` and one for the
``/status`` subresource, nothing when nothing changed.

Lists are replaced whole by merge patches, so a concurrent writer's change to a list can
be lost. Where that does damage, the write is guarded:

- ``metadata.finalizers`` and ``metadata.ownerReferences``: the patch carries the
  resourceVersion of the copy this reconcile edited (a precondition). On 409 the helper
  GETs the latest object, re-applies this reconcile's additions and removals to the
  server's lists and retries. A precondition was chosen over JSON-patch ``test`` ops so
  that the same guard covers the rest of the patch, which is re-based on the latest copy
  too, and because a 409 names a concurrent write unambiguously (a failed ``test`` is a
  422 like any invalid patch).
- ``status.conditions``: merged per condition type, three-way, onto the latest copy of the
  object (as Cluster API's conditions patch), written with a resourceVersion precondition.
  The first attempt uses the newest copy the helper already holds (the main patch's answer,
  else the snapshot): the precondition proves it is the latest, so no GET is needed when
  nobody else wrote. On 409 the helper GETs the object, merges again and retries.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, MutableMapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, cast

import jsonpatch
import orjson
from kr8s.asyncio import Api
from kr8s.asyncio.objects import APIObject

from ..client import discovery
from ..client.contenttypes import JSON_PATCH, MERGE_PATCH
from ..client.encoding import dumps
from ..client.errors import (
    ConditionConflictError,
    ConflictError,
    InvalidError,
    PatchError,
)
from ..client.kr8s_internals import current_raw
from ..client.redaction import redact_pair, redact_patch
from ..client.request import Reply, Target, is_safe_to_repeat, send
from ..meta.conditions import conflicting_conditions, merge_conditions
from ..meta.objects import _peek, describe_object, edit_list, metadata_of, set_or_drop
from .mergepatch import apply_merge_patch, create_merge_patch
from .recent import RECENT
from .snapshot import LazyBox, freeze
from .typed import TypedTarget, is_typed

if TYPE_CHECKING:
    from ..typed.resource import CustomResource

__all__ = ["PatchHelper"]

log = logging.getLogger(__name__)

MAX_CONFLICT_RETRIES = 5
JSONDict = dict[str, Any]
_GUARDED_META = ("finalizers", "ownerReferences")


def _refuse_mapping(obj: object, helper: str) -> None:
    """Refuse a dict where ``helper`` patches an object through its API client.

    Raises:
        TypeError: ``obj`` is a mapping (a cached dict from ``ctx.get``, a document): names
            it and what to pass instead.
    """
    if isinstance(obj, Mapping):
        named = describe_object(cast("MutableMapping[str, Any]", obj))
        raise TypeError(
            f"{named}: {helper} takes a kr8s object or a typed model, not a "
            f"{type(obj).__name__}: it patches through the object's API client, which a "
            "dict has not. Pass the object the reconcile got, ctx.get(name, kind=Model) of a "
            "typed kind, or a kr8s object built with api=ctx.api; ctx.apply and "
            "ctx.create_or_patch take dicts"
        )


class PatchHelper:
    """Snapshot ``obj`` now; :meth:`patch` later sends only what the reconciler changed.

    Args:
        obj: a ``kr8s.asyncio`` APIObject of any kind, built-in or custom, or a typed
            resource (a :class:`~reconcile_kit.typed.CustomResource`: its fields read or
            set are diffed, and the server's answer is written back into it).
        optimistic_lock: put ``metadata.resourceVersion`` in the main patch and the status
            patch (status then skips the three-way condition merge: it must apply to the copy
            that was read); a 409 raises :class:`~reconcile_kit.client.errors.ConflictError` and is
            not retried.
        owned_conditions: condition types this controller owns: its value wins when it and
            another writer both changed the condition since the snapshot.
        force_overwrite_conditions: every condition is treated as owned.
        observed_generation: set ``status.observedGeneration`` from ``metadata.generation``.
        patch_on_error: as a context manager, patch also when the block raises (the
            exception still propagates; a patch failure is added to it as a note).

    Raises (from :meth:`patch`, and so from the ``async with`` exit), by the one rule of
    docs/errors.md:
        PatchError: found before sending, naming the object and field: a changed
            kind/apiVersion/name/namespace, a value that is not JSON-serializable.
        ConditionConflictError: a condition this reconcile and another writer both
            changed, that the helper may not overwrite.
        APIError: the server refused the patch: the subclass for its status
            (NotFoundError for a 404 on an object that is not being deleted,
            ConflictError for a 409 with ``optimistic_lock``, InvalidError,
            ForbiddenError...); never a PatchError.

    Raises (when built):
        TypeError: ``obj`` is a dict (``ctx.get`` without a model class gives one): it has
            no API client to patch through; names it and what to pass instead.
    """

    def __init__(
        self,
        obj: APIObject | CustomResource,
        *,
        optimistic_lock: bool = False,
        owned_conditions: Iterable[str] = (),
        force_overwrite_conditions: bool = False,
        observed_generation: bool = False,
        patch_on_error: bool = True,
    ) -> None:
        _refuse_mapping(obj, "PatchHelper")
        self.obj: TypedTarget | APIObject = TypedTarget(obj) if is_typed(obj) else obj
        self.optimistic_lock = optimistic_lock
        self.owned_conditions = frozenset(owned_conditions)
        self.force_overwrite_conditions = force_overwrite_conditions
        self.observed_generation = observed_generation
        self.patch_on_error = patch_on_error
        self._location: tuple[str, str | None, Target] | None = None
        # the statuses that answer rather than raise: 404 when the object may be gone
        # (_gone_is_fine of the state patch() sends)
        self._accept: tuple[int, ...] = ()
        self._snapshot = self._take_snapshot()

    # --- context manager -------------------------------------------------------------------

    async def __aenter__(self) -> PatchHelper:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is not None and (not self.patch_on_error or not isinstance(exc, Exception)):
            return  # cancellation and interpreter exits do not patch
        try:
            await self.patch()
        except Exception as err:
            if exc is None:
                raise
            exc.add_note(f"PatchHelper could not patch {self._describe()}: {err}")

    # --- inspection ------------------------------------------------------------------------

    def has_changes(self) -> bool:
        """Whether the object differs from the snapshot."""
        if self._untouched():
            return False
        if self._snapshot.unchanged(self._state(), self._dump):
            return False
        patch, _ = create_merge_patch(self._snapshot.document(), self._state())
        return bool(patch)

    def changes(self) -> str:
        """A human-readable description of what changed since the snapshot (deepdiff). A
        Secret's ``data``/``stringData`` values are not shown: which keys were added,
        removed or changed is (:func:`~reconcile_kit.client.redaction.redact_pair`)."""
        from deepdiff import DeepDiff

        now = orjson.loads(self._dump())
        before, after = redact_pair(self._snapshot.document(), now)
        diff = DeepDiff(before, after, verbose_level=2)
        text: str = diff.pretty()
        return text

    # --- patching --------------------------------------------------------------------------

    async def patch(self) -> None:
        """Send the changes: at most one PATCH to the object and one to ``/status``.

        Afterwards the object holds the server's latest state and becomes the new snapshot.
        """
        if self._untouched() and (not self.observed_generation or self._generation_observed()):
            return
        # the live object is the "after" side: diffing against it saves a decode (read once:
        # kr8s's ``raw`` property re-stamps kind and apiVersion on every access)
        after = self._state()
        if self.observed_generation:
            self._set_observed_generation(after)
        if self._snapshot.unchanged(after, self._dump):
            return
        self._accept = (404,) if _gone_is_fine(after) else ()
        before = self._snapshot.document()
        self._check_identity(before, after)
        # before and after are dicts (the snapshot's document, a raw mapping): read with
        # dict.get, which does not wrap a LazyBox's shared values
        split = dict.get(before, "status") != dict.get(after, "status")
        split = split and await self._status_is_separate()
        state = await self._patch_main(before, after, split)
        if split:
            if self.observed_generation and state is not None:
                self._set_observed_generation(after, state)
            expected = (state or before)["metadata"].get("resourceVersion")
            state = await self._patch_status(before, after, expected, state) or state
        if state is not None and self._adopt(state, after):
            self._snapshot = _Snapshot.of_document(state)
        else:
            self._snapshot = self._take_snapshot()

    async def _patch_main(self, before: JSONDict, after: JSONDict, split: bool) -> JSONDict | None:
        main_before, main_after = _without_status(before, split), _without_status(after, split)
        if main_before == main_after:
            return None
        guarded = _guarded_changes(main_before, main_after)
        if self.optimistic_lock:
            patch = self._build(main_before, main_after, before["metadata"].get("resourceVersion"))
            try:
                return await self._send(patch)
            except ConflictError as error:
                raise self._error(
                    ConflictError, "the object was modified since it was read (optimistic lock)"
                ) from error
        if not guarded:
            return await self._send(self._build(main_before, main_after, None))
        return await self._guarded_write(main_before, main_after, "", first_base=main_before)

    async def _patch_status(
        self,
        before: JSONDict,
        after: JSONDict,
        expected_rv: str | None,
        current: JSONDict | None = None,
    ) -> JSONDict | None:
        status_before = {"status": dict.get(before, "status") or {}}
        status_after = {"status": dict.get(after, "status") or {}}
        if status_before == status_after:
            return None
        if self.optimistic_lock:  # the whole status write must apply to what was read
            try:
                return await self._send(
                    self._build(status_before, status_after, expected_rv), "status"
                )
            except ConflictError as error:
                raise self._error(
                    ConflictError, "the object was modified since it was read (optimistic lock)"
                ) from error
        if _conditions(status_before) == _conditions(status_after):
            return await self._send(self._build(status_before, status_after, None), "status")
        # based on the latest copy this helper holds (the main patch's answer, else the
        # snapshot) at its resourceVersion: a GET only when that turns out to be stale
        base = status_before if current is None else {"status": current.get("status") or {}}
        return await self._guarded_write(
            status_before, status_after, "status", first_base=base, first_rv=expected_rv
        )

    async def _guarded_write(
        self,
        before: JSONDict,
        after: JSONDict,
        subresource: str,
        first_base: JSONDict | None,
        first_rv: str | None = None,
    ) -> JSONDict | None:
        """Write with a resourceVersion precondition, re-basing onto the latest copy on 409.

        The first attempt is based on ``first_base`` at ``first_rv`` (default: the
        snapshot's) when given: the precondition proves it is the latest copy, and a 409
        (it was not) leads to a GET and a re-based retry. Without it, a GET comes first.
        """
        base = first_base
        rv = first_rv if first_rv is not None else self._snapshot_rv()
        for _attempt in range(MAX_CONFLICT_RETRIES + 1):
            if base is None:
                fresh = await self._get()
                if fresh is None:
                    return None
                rv = fresh["metadata"].get("resourceVersion")
                base = _restrict(fresh, before)
            target = self._rebase(base, before, after)
            if target == base:
                return None
            try:
                return await self._send(self._build(base, target, rv), subresource)
            except ConflictError:
                log.debug(
                    "%s: conflict on %s, re-reading", self._describe(), subresource or "patch"
                )
                base = None
        raise self._error(ConflictError, f"still conflicting after {MAX_CONFLICT_RETRIES} retries")

    def _rebase(self, base: JSONDict, before: JSONDict, after: JSONDict) -> JSONDict:
        """This reconcile's changes (before -> after) applied onto ``base``: ``after``
        itself when ``base`` is ``before`` (the first attempt of a write based on the
        snapshot)."""
        if base is before:
            return after
        patch, _ = create_merge_patch(before, after)
        result: JSONDict = apply_merge_patch(base, patch)
        meta_b, meta_a = metadata_of(before), metadata_of(after)
        for field in _GUARDED_META:
            if meta_b.get(field) != meta_a.get(field):
                merged = edit_list(
                    metadata_of(base).get(field) or [],
                    meta_b.get(field) or [],
                    meta_a.get(field) or [],
                    _ref_key,
                )
                result["metadata"] = meta = dict(metadata_of(result))
                set_or_drop(meta, field, merged)
        local_b, local_a = _conditions(before), _conditions(after)
        if local_b != local_a:
            merged = self._merge_conditions(local_b, local_a, _conditions(base))
            result["status"] = status = dict(result.get("status") or {})
            set_or_drop(status, "conditions", merged)
        return result

    def _merge_conditions(
        self, snapshot: list[JSONDict], local: list[JSONDict], server: list[JSONDict]
    ) -> list[JSONDict]:
        """Three-way merge per condition type (see :mod:`reconcile_kit.meta.conditions`)."""
        if not self.force_overwrite_conditions:
            conflicts = conflicting_conditions(snapshot, local, server, self.owned_conditions)
            if conflicts:
                raise self._error(
                    ConditionConflictError,
                    f"status.conditions[type={conflicts[0]}] was changed by another "
                    "writer since it was read; own it with owned_conditions",
                )
        return merge_conditions(server, snapshot, local)

    # --- requests --------------------------------------------------------------------------

    def _build(self, before: JSONDict, after: JSONDict, rv: str | None) -> tuple[str, Any]:
        patch, exact = create_merge_patch(before, after)
        if not exact:  # a null value: RFC 7386 cannot express it, RFC 6902 can
            ops = jsonpatch.make_patch(before, after).patch
            if rv is not None:
                ops.insert(0, {"op": "test", "path": "/metadata/resourceVersion", "value": rv})
            return JSON_PATCH, ops
        if rv is not None:
            patch.setdefault("metadata", {})["resourceVersion"] = rv
        return MERGE_PATCH, patch

    def _url(self, subresource: str = "") -> str:
        url = self._where()[0]
        return f"{url}/{subresource}" if subresource else url

    def _namespace(self) -> str | None:
        return self._where()[1]

    def _where(self) -> tuple[str, str | None, Target]:
        """The object's URL (under its version), namespace and Target, read once: a patch
        that would change the name or namespace is refused before sending
        (:meth:`_check_identity`)."""
        if self._location is None:
            # unbound: the ValueError naming the object, before kr8s's RuntimeError (its
            # namespace default reads the api)
            self._client()
            obj, doc = self.obj, self._snapshot.document()
            meta = metadata_of(doc)
            name, namespace = meta.get("name"), None
            if obj.namespaced:  # kr8s's default: the api's namespace
                namespace = meta.get("namespace") or obj.namespace
            if not name:
                name = obj.name  # kr8s names what is wrong (a generateName, no name)
            target = Target(doc.get("kind") or getattr(obj, "kind", None), namespace, name)
            self._location = (f"{obj.endpoint}/{name}", namespace, target)
        return self._location

    async def _send(self, request: tuple[str, Any], subresource: str = "") -> JSONDict | None:
        """PATCH the object (or ``subresource``); its new state, or None when it is gone
        and that is expected. A failed JSON-patch ``test`` precondition is a ConflictError,
        as a failed resourceVersion precondition is."""
        content_type, body = request
        url, namespace, target = self._where()
        try:
            content = dumps(body, kind=target.kind, namespace=target.namespace, name=target.name)
        except TypeError as err:
            raise self._unserializable(err) from err
        if log.isEnabledFor(logging.DEBUG):
            kind = self._snapshot.document().get("kind")
            shown = redact_patch(body, kind)
            where = f"{self._describe()}{'/' + subresource if subresource else ''}"
            log.debug("%s: PATCH %s %s", where, content_type, orjson.dumps(shown).decode())
        writing = RECENT.begin(self.obj.version, target.kind or "")
        try:
            reply = await send(
                self._client(),
                "PATCH",
                version=self.obj.version,
                url=f"{url}/{subresource}" if subresource else url,
                namespace=namespace,
                body=content,
                content_type=content_type,
                target=target,
                accept=self._accept,
                retry=is_safe_to_repeat("PATCH", content_type, body),
            )
            return self._answer(reply)
        except InvalidError as error:
            if not _failed_test(content_type, body, error):
                raise
            raise self._error(ConflictError, "a test precondition failed") from error
        finally:
            RECENT.end(writing)

    async def _get(self) -> JSONDict | None:
        reply = await send(
            self._client(),
            "GET",
            version=self.obj.version,
            url=self._url(),
            namespace=self._namespace(),
            target=self._target(),
            accept=self._accept,
        )
        return self._answer(reply)

    def _answer(self, reply: Reply) -> JSONDict | None:
        if reply.status == 404:  # accepted only when gone is fine (see _accept)
            return None
        # the state of the write's watch event, when a reflector decoded it already
        seen = RECENT.take(reply.content, self._snapshot.document())
        body: JSONDict = reply.json() if seen is None else seen
        return body

    def _target(self) -> Target:
        return self._where()[2]

    async def _status_is_separate(self) -> bool:
        return await discovery.has_status_subresource(
            self._client(), self.obj.version, self.obj.endpoint
        )

    def _client(self) -> Api:
        """The object's API client.

        Raises:
            ValueError: the object is bound to none (a typed model built in code and never
                created or read, a kr8s asyncio object built without ``api=`` and never
                awaited): names the object and how to bind it, where kr8s's RuntimeError
                asks whether it was awaited (a model cannot be).
        """
        try:
            api: Api = self.obj.api
        except RuntimeError as error:
            if isinstance(self.obj, TypedTarget):
                model = type(self.obj.model).__name__
                how = (
                    f"use a {model} read by a controller or by {model}.get(api, ...), or "
                    f"create(api) it first"
                )
            else:
                how = "build it with api=... or await it (kr8s binds the default api)"
            raise ValueError(
                f"{self._describe()}: PatchHelper cannot send a patch: the object is bound to "
                f"no API client; {how}"
            ) from error
        return api

    # --- helpers ---------------------------------------------------------------------------

    def _adopt(self, state: JSONDict, raw: Any) -> bool:
        """Make the object, whose raw mapping is ``raw``, hold the server's ``state``; True
        when it now holds exactly ``state``'s values (then ``state`` is its snapshot). A
        LazyBox shares the answer's top-level values (they are never mutated: a read wraps a
        copy); a plain Box gets only the fields that differ, as it converts what is
        assigned (~1 ms per 5 KB)."""
        if isinstance(self.obj, TypedTarget):
            self.obj.commit(state)  # its raw is a copy: the model takes the answer
        if isinstance(raw, LazyBox):
            raw.hold(state)  # sharing every value costs less than comparing
            # the state is its snapshot unless a read of kr8s's raw would stamp another
            # kind or apiVersion on it (its class's); a typed object snapshots its model
            obj: Any = self.obj
            return (
                not isinstance(obj, TypedTarget)
                and dict.get(state, "kind") == getattr(obj, "kind", None)
                and dict.get(state, "apiVersion") == getattr(obj, "version", None)
            )
        for key in [k for k in dict.keys(raw) if k not in state]:
            del raw[key]
        for key, value in state.items():
            if dict.get(raw, key) != value:
                raw[key] = value
        return False

    def _state(self) -> Any:
        """The object's raw mapping (as ``obj.raw``; a kr8s object's without the update
        its property makes on every read, see :func:`current_raw`)."""
        raw = current_raw(self.obj)
        return self.obj.raw if raw is None else raw

    def _take_snapshot(self) -> _Snapshot:
        if isinstance(self.obj, TypedTarget):
            pristine = self.obj.pristine()
            if pristine is not None:
                return _Snapshot.of_json(pristine)
        return _Snapshot(self._state(), self._dump)

    def _untouched(self) -> bool:
        """A typed object tracked since it was read (``typed.tracking``), still as read and
        snapshotted then: unchanged without serializing it."""
        if not isinstance(self.obj, TypedTarget):
            return False
        pristine = self.obj.pristine()
        return pristine is not None and pristine is self._snapshot.data

    def _generation_observed(self) -> bool:
        doc = self._snapshot.document()
        status = doc.get("status") or {}
        generation = metadata_of(doc).get("generation")
        return generation is None or status.get("observedGeneration") == generation

    def _dump(self, raw: Any = None) -> bytes:
        raw = self._state() if raw is None else raw
        try:
            return orjson.dumps(raw)
        except TypeError as err:
            raise self._unserializable(err) from err

    def _unserializable(self, err: TypeError) -> PatchError:
        path = _unserializable_path(self.obj.raw, "") or "?"
        error = self._error(PatchError, f"field {path} is not JSON-serializable: {err}")
        assert isinstance(error, PatchError)
        return error

    def _snapshot_rv(self) -> str | None:
        rv: str | None = self._snapshot.document().get("metadata", {}).get("resourceVersion")
        return rv

    def _set_observed_generation(
        self, target: Any, source: Mapping[str, Any] | None = None
    ) -> None:
        generation = metadata_of(source or target).get("generation")
        if generation is not None:
            status = target.get("status")
            if status is None:
                target["status"] = status = {}
            status["observedGeneration"] = generation

    def _check_identity(self, before: JSONDict, after: JSONDict) -> None:
        if _shares_identity(before, after):
            return
        known = _identity(before)
        if known is not None and known == _identity(after):
            return
        meta_b, meta_a = _peek(before, "metadata") or {}, _peek(after, "metadata") or {}
        for field, old, new in (
            ("kind", _peek(before, "kind"), _peek(after, "kind")),
            ("apiVersion", _peek(before, "apiVersion"), _peek(after, "apiVersion")),
            ("metadata.name", _peek(meta_b, "name"), _peek(meta_a, "name")),
            ("metadata.namespace", _peek(meta_b, "namespace"), _peek(meta_a, "namespace")),
        ):
            if old != new:
                raise self._error(
                    PatchError, f"{field} changed from {old!r} to {new!r}; a patch cannot change it"
                )

    def _describe(self) -> str:
        raw = self._snapshot.document() if hasattr(self, "_snapshot") else {}
        meta = metadata_of(raw)
        where = (
            f"{meta.get('namespace')}/{meta.get('name')}"
            if meta.get("namespace")
            else (meta.get("name"))
        )
        return f"{raw.get('kind', '?')} {where}"

    def _error(self, cls: type[PatchError] | type[ConflictError], message: str) -> Exception:
        """``cls`` naming the object as read (its snapshot: a change of its name or
        namespace is what the error may be about)."""
        raw = self._snapshot.document() if hasattr(self, "_snapshot") else self.obj.raw
        meta = metadata_of(raw)
        return cls(
            message,
            kind=str(raw.get("kind", "?")),
            namespace=meta.get("namespace"),
            name=meta.get("name"),
        )


class _Snapshot:
    """The object's state when the helper took it, never mutated.

    A LazyBox tree (objects the controller builds) is frozen in time proportional to the
    part the reconciler has read, sharing the rest; comparing it with the live tree stops at
    shared subtrees. Any other Box tree is kept as JSON bytes, compared as bytes.
    """

    def __init__(self, raw: Any, dump: Callable[[Any], bytes]) -> None:
        self._doc: JSONDict | None = None
        self._data: bytes | None = None
        if isinstance(raw, LazyBox):
            self._doc = freeze(raw)
        else:
            self._data = dump(raw)

    @classmethod
    def of_json(cls, data: bytes) -> _Snapshot:
        """A snapshot of a document already serialized (``data``: its JSON bytes)."""
        return cls._holding(None, data)

    @classmethod
    def of_document(cls, doc: JSONDict) -> _Snapshot:
        """A snapshot that is ``doc`` (which nothing mutates afterwards)."""
        return cls._holding(doc, None)

    @classmethod
    def _holding(cls, doc: JSONDict | None, data: bytes | None) -> _Snapshot:
        snapshot = cls.__new__(cls)
        snapshot._doc, snapshot._data = doc, data
        return snapshot

    @property
    def data(self) -> bytes | None:
        """The JSON bytes kept, if the snapshot is kept as bytes."""
        return self._data

    def unchanged(self, raw: Any, dump: Callable[[Any], bytes]) -> bool:
        if self._data is None:
            return bool(self._doc == raw)
        return dump(raw) == self._data

    def document(self) -> JSONDict:
        """The snapshot as a JSON document (read-only: it may share the cache's values)."""
        if self._doc is None:
            assert self._data is not None
            self._doc = orjson.loads(self._data)
        return self._doc


def _failed_test(content_type: str, body: Any, error: InvalidError) -> bool:
    """Whether a 422 answers a JSON patch's leading ``test`` failing: kube-apiserver then
    names no cause and says only "the server rejected our request due to an error in our
    request" (apimachinery's NewGenericServerResponse), while an invalid result names its
    fields."""
    starts_with_test = isinstance(body, list) and bool(body) and body[0].get("op") == "test"
    return (
        content_type == JSON_PATCH
        and starts_with_test
        and not error.causes
        and (
            "testing value failed" in error.server_message
            or "rejected our request" in error.server_message
        )
    )


def _shares_identity(before: JSONDict, after: Any) -> bool:
    """Whether ``after`` holds ``before``'s very metadata, kind and apiVersion (a LazyBox
    whose metadata was not even read since): the same identity, nothing to compare."""
    get = dict.get
    meta = get(before, "metadata")
    return (
        meta is not None
        and get(after, "metadata") is meta
        and get(after, "kind") is get(before, "kind")
        and get(after, "apiVersion") is get(before, "apiVersion")
    )


def _identity(doc: Any) -> tuple[Any, ...] | None:
    """What a patch may not change of ``doc`` (kind, apiVersion, name, namespace), read as
    ``peek`` does; None when ``doc`` or its metadata is no dict (compared field by field
    then)."""
    get = dict.get
    meta = get(doc, "metadata") if isinstance(doc, dict) else None
    if not isinstance(meta, dict):
        return None
    return get(doc, "kind"), get(doc, "apiVersion"), get(meta, "name"), get(meta, "namespace")


def _gone_is_fine(state: Any) -> bool:
    """A 404 is expected once an object being deleted has no finalizers (Cluster API)."""
    meta = _peek(state, "metadata") or {}
    return bool(_peek(meta, "deletionTimestamp")) and not _peek(meta, "finalizers")


def _without_status(doc: JSONDict, split: bool) -> JSONDict:
    if not split:
        return doc
    # dict's own copy and pop: the stored values, not wrapped (see lazybox)
    main = dict(dict.items(doc))
    main.pop("status", None)
    return main


def _restrict(fresh: JSONDict, like: JSONDict) -> JSONDict:
    """``fresh`` limited to the top-level fields ``like`` covers (main part or status part)."""
    if set(like) == {"status"}:
        return {"status": fresh.get("status") or {}}
    return {k: v for k, v in fresh.items() if k in like or k != "status"}


def _conditions(doc: JSONDict) -> list[JSONDict]:
    """``status.conditions`` of ``doc`` (empty when absent), read as ``_peek`` does."""
    status = dict.get(doc, "status") or {}
    conditions: list[JSONDict] = _peek(status, "conditions") or []
    return conditions


def _guarded_changes(before: JSONDict, after: JSONDict) -> bool:
    meta_b, meta_a = _peek(before, "metadata") or {}, _peek(after, "metadata") or {}
    if any(_peek(meta_b, f) != _peek(meta_a, f) for f in _GUARDED_META):
        return True
    return "status" in after and _conditions(before) != _conditions(after)


def _ref_key(item: Any) -> Any:
    return item.get("uid") if isinstance(item, dict) else item


def _unserializable_path(value: Any, path: str) -> str | None:
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"{path}.{key!r}".lstrip(".")
            found = _unserializable_path(item, f"{path}.{key}" if path else key)
            if found:
                return found
        return None
    if isinstance(value, list | tuple):
        for i, item in enumerate(value):
            found = _unserializable_path(item, f"{path}[{i}]")
            if found:
                return found
        return None
    if value is None or isinstance(value, str | int | float | bool):
        return None
    return path or "<root>"
