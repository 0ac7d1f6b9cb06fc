"""``metadata.managedFields`` and server-side apply, as kube-apiserver's field manager.

Each writer (the ``fieldManager`` query parameter, else the User-Agent's product name) owns
a field set per operation (Apply, Update), API version (Update only) and subresource.
Sources: sigs.k8s.io/structured-merge-diff ``merge.Updater`` (Update, Apply, prune,
conflicts) and k8s.io/apiserver ``pkg/endpoints/handlers/fieldmanager`` (the manager chain:
strip of server metadata, times, no tracking for objects that lost their managedFields,
``before-first-apply``, reset fields of the main resource and ``/status``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from ...meta.time import now_time
from . import errors
from .fieldsets import Path, PathSet, decode, dotted, encode, go_json
from .fieldtypes import UNTYPED_TYPE, FieldType, builtin_type, custom_type
from .resources import ResourceType
from .store import Obj
from .structured import (
    MISSING,
    StructuredError,
    compare,
    config_errors,
    ensure_named_fields,
    merge,
    remove_items,
    to_field_set,
)

_STRIP = PathSet(
    [("f:apiVersion",), ("f:kind",), ("f:metadata",)]
    + [
        ("f:metadata", f"f:{name}")
        for name in (
            "name",
            "namespace",
            "creationTimestamp",
            "selfLink",
            "uid",
            "clusterName",
            "generation",
            "managedFields",
            "resourceVersion",
        )
    ]
)
BEFORE_FIRST_APPLY = "before-first-apply"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
KUBECTL = "kubectl"  # the one manager whose applies keep LAST_APPLIED in step


class _Conflicts(Exception):
    """The fields an apply without force would take from other managers."""

    def __init__(self, taken: list[tuple[Entry, Path]]) -> None:
        super().__init__(len(taken))
        self.taken = taken


def manager_name(field_manager: str | None, user_agent: str) -> str:
    """The manager a write is recorded under (client-go: the binary name from User-Agent)."""
    if field_manager:
        return field_manager
    return user_agent.split("/", 1)[0].strip() or "unknown"


@dataclass
class Entry:
    """One managedFields entry: who, how, and the paths owned."""

    manager: str
    operation: str
    api_version: str
    subresource: str = ""
    time: str | None = None
    paths: set[Path] = field(default_factory=set)

    @property
    def key(self) -> tuple[str, str, str, str]:
        # Apply entries are not per version (BuildManagerIdentifier).
        version = self.api_version if self.operation == "Update" else ""
        return (self.manager, self.operation, version, self.subresource)

    def shown(self) -> str:
        """The manager as conflict messages print it (``"kubectl" using v1``)."""
        text = f'"{self.manager}"'
        if self.subresource:
            text += f' with subresource "{self.subresource}"'
        if self.operation == "Update":
            text += f" using {self.api_version}"
        return text


Managers = dict[tuple[str, str, str, str], Entry]


def decode_managers(obj: Obj | None) -> Managers:
    """The entries of ``obj.metadata.managedFields`` by manager key."""
    out: Managers = {}
    for raw in ((obj or {}).get("metadata") or {}).get("managedFields") or []:
        entry = Entry(
            raw.get("manager", ""),
            raw.get("operation", ""),
            raw.get("apiVersion", ""),
            raw.get("subresource", ""),
            raw.get("time"),
            decode(raw.get("fieldsV1")),
        )
        out[entry.key] = entry
    return out


UNTRACKED = frozenset({("certificates.k8s.io", "certificatesigningrequests")})
"""Kinds whose objects kube-apiserver 1.32.5 answers without managedFields on every write
(observed on the real backend: tests/conformance/test_certificates.py)."""


def live_or_new_managers(live: Obj | None, new: Obj, subresource: str) -> Managers | None:
    """The managers an Update starts from (k8s.io/apiserver ``decodeLiveOrNew``): the
    request's own managedFields when it sets them (``[]`` resets them), else the live
    ones; a subresource write always the live ones. None: an existing object without
    managedFields, which kube-apiserver does not start tracking on Update."""
    raw = (new.get("metadata") or {}).get("managedFields")
    if subresource or raw is None:
        managers = decode_managers(live)
    elif raw in ([], [{}]):
        managers = {}
    else:
        managers = decode_managers(new) or decode_managers(live)
    if live is not None and not managers:
        return None
    return managers


def encode_managers(managers: Managers) -> list[dict[str, Any]]:
    """managedFields entries, ordered as kube-apiserver sorts them (operation, time,
    manager, apiVersion, subresource)."""
    entries = sorted(
        managers.values(),
        key=lambda e: (e.operation, e.time or "", e.manager, e.api_version, e.subresource),
    )
    out = []
    for e in entries:
        raw: dict[str, Any] = {"manager": e.manager, "operation": e.operation}
        raw["apiVersion"] = e.api_version
        if e.time:
            raw["time"] = e.time
        raw["fieldsType"] = "FieldsV1"
        raw["fieldsV1"] = encode(e.paths)
        if e.subresource:
            raw["subresource"] = e.subresource
        out.append(raw)
    return out


def keep_unchanged_times(new: Obj, old: Obj) -> None:
    """Give ``new`` ``old``'s managedFields when they differ in times only and the rest of
    the two objects is equal, so that a write that changes nothing once stored (an apply of
    ``cpu: 1000m`` over a stored ``1``) is a no-op: no new resourceVersion, no event. As
    kube-apiserver's ``IgnoreManagedFieldsTimestampsTransformer`` (its field manager sets
    the time of an apply whose merged object differs in form only)."""
    new_meta, old_meta = new.get("metadata") or {}, old.get("metadata") or {}
    mine, theirs = new_meta.get("managedFields"), old_meta.get("managedFields")
    if mine == theirs or not isinstance(mine, list) or not isinstance(theirs, list):
        return
    if len(mine) != len(theirs) or any(
        _timeless(a) != _timeless(b) for a, b in zip(mine, theirs, strict=True)
    ):
        return
    if _without_managers(new) == _without_managers(old):
        new_meta["managedFields"] = theirs


def _timeless(entry: Any) -> Any:
    return {k: v for k, v in entry.items() if k != "time"} if isinstance(entry, dict) else entry


def _without_managers(obj: Obj) -> Obj:
    meta = {
        k: v
        for k, v in (obj.get("metadata") or {}).items()
        if k not in ("managedFields", "resourceVersion")
    }
    return {**obj, "metadata": meta}


def group_of(rt: ResourceType) -> str | None:
    """The group a write's :class:`Write` keeps entries of: a built-in kind's (its version
    converter converts within the group), None (all) for custom resources."""
    return rt.group if rt.builtin else None


def object_type(rt: ResourceType) -> FieldType:
    """The schema type of ``rt``'s objects (custom: the CRD schema; else kubetypes)."""
    if rt.schema is not None:
        return custom_type(rt.schema)
    return builtin_type(rt.api_version, rt.kind) or UNTYPED_TYPE


def ignored_paths(rt: ResourceType, subresource: str, obj: Obj) -> PathSet:
    """Reset fields: what a write to the main resource or ``subresource`` may not set."""
    if subresource == "status":
        keep = {"status", "metadata", "apiVersion", "kind"}
        return PathSet([(f"f:{k}",) for k in obj if k not in keep] + [("f:spec",)])
    if subresource == "" and rt.status:
        return PathSet([("f:status",)])
    return PathSet()


def _filtered(paths: set[Path], ignored: PathSet) -> set[Path]:
    if not ignored.members:
        return paths
    return {p for p in paths if not any(p[:i] in ignored for i in range(1, len(p) + 1))}


def _strip(managers: Managers) -> None:
    for key in list(managers):
        managers[key].paths -= _STRIP.members
        if not managers[key].paths:
            del managers[key]


@dataclass
class Write:
    """One write's context: the kind's schema, who writes, and what it may not set."""

    type: FieldType
    manager: str
    api_version: str
    subresource: str
    ignored: PathSet
    group: str | None = None
    """Entries recorded through another group's version are dropped (None: none are)."""

    def entry(self, operation: str) -> Entry:
        return Entry(self.manager, operation, self.api_version, self.subresource)

    def now(self) -> str | None:
        """The time of a write; none for /scale (kube-apiserver's ScaleHandler drops it)."""
        return None if self.subresource == "scale" else now_time()

    # --- Update (create, update, patch) --------------------------------------------------

    def update(self, live: Obj | None, new: Obj, managers: Managers) -> Managers:
        """Managers after an Update from ``live`` (None: a create) to ``new``."""
        self._drop_other_groups(managers)
        current = self.entry("Update")
        current.paths = self._update(live if live is not None else {}, new, managers)
        if current.paths:
            previous = managers.get(current.key)
            if previous is not None:
                current.paths |= previous.paths
            current.time = self.now()
            managers[current.key] = current
        _strip(managers)
        return managers

    def _drop_other_groups(self, managers: Managers) -> None:
        """structured-merge-diff drops the entries its version converter cannot convert the
        object for (IsMissingVersionError, reconcileManagedFieldsWithSchemaChanges): those
        recorded through another group (an Event's core/v1 entries on a write through
        events.k8s.io/v1, and back)."""
        if self.group is None:
            return
        for key, entry in list(managers.items()):
            if entry.api_version.rpartition("/")[0] != self.group:
                del managers[key]

    def _update(
        self,
        live: Obj,
        new: Obj,
        managers: Managers,
        applier: tuple[str, str, str, str] | None = None,
        force: bool = True,
    ) -> set[Path]:
        """structured-merge-diff ``Updater.update``: the managers other than ``applier``
        lose the fields that changed (a 409 instead, unless ``force``) or went away;
        returns the changed paths."""
        diff = compare(live, new, self.type)
        diff.exclude(self.ignored)
        changed = diff.modified | diff.added
        conflicts: list[tuple[Entry, Path]] = []
        for key, entry in list(managers.items()):
            if key == applier:
                continue
            taken = entry.paths & changed
            conflicts += [(entry, p) for p in sorted(taken)]
            entry.paths -= taken | diff.removed
            if not entry.paths:
                del managers[key]
        if conflicts and not force:
            raise _Conflicts(conflicts)
        return _filtered(changed, self.ignored)

    # --- Apply ---------------------------------------------------------------------------

    def apply(
        self, live: Obj | None, config: Obj, managers: Managers, force: bool
    ) -> tuple[Any, Managers]:
        """``config`` applied onto ``live`` (None: a create): the merged object, or MISSING
        when the object does not change, and the managers after it.

        Conflicts (409 without ``force``) that ``kubectl`` meets on fields still holding
        what the object's :data:`LAST_APPLIED` annotation says are forced, so a client-side
        ``kubectl apply`` can move to ``--server-side`` (managedfields
        ``lastAppliedManager``). ``managers`` is changed (an apply changes its entries'
        paths)."""
        # only kubectl's apply to an object may be tried again, from the managers as given
        again = _copied(managers) if self.manager == KUBECTL and live is not None else None
        try:
            return self._apply(live, config, managers, force)
        except _Conflicts as conflicts:
            taken = conflicts.taken
            if again is not None and live is not None:
                allowed = self._as_last_applied(live)
                taken = [(entry, path) for entry, path in taken if path not in allowed]
                if not taken:
                    return self._apply(live, config, again, True)
            shown = sorted((entry.shown(), dotted(path)) for entry, path in taken)
            raise errors.apply_conflict(shown) from None

    def _as_last_applied(self, live: Obj) -> set[Path]:
        """The paths of ``live``'s :data:`LAST_APPLIED` configuration that still hold its
        values (allowedConflictsFromLastApplied); none when it has no readable one of
        this version."""
        text = ((live.get("metadata") or {}).get("annotations") or {}).get(LAST_APPLIED)
        try:
            last = json.loads(text) if isinstance(text, str) and text else None
            if not isinstance(last, dict) or last.get("apiVersion") != self.api_version:
                return set()
            changed = compare(last, live, self.type)
            fields = to_field_set(last, self.type)
        except (ValueError, StructuredError):
            return set()
        return fields - changed.modified - changed.added - changed.removed

    def _apply(
        self, live: Obj | None, config: Obj, managers: Managers, force: bool
    ) -> tuple[Any, Managers]:
        self._check_config(config)
        live_view: Obj = live if live is not None else {}
        if live is not None and not managers:
            live_view, managers = live, self._before_first_apply(live)
        self._drop_other_groups(managers)
        try:
            merged = merge(live_view, config, self.type)
            applied = _filtered(to_field_set(config, self.type), self.ignored)
        except StructuredError as err:
            raise errors.bad_request(str(err)) from None
        mine = self.entry("Apply")
        last = managers.get(mine.key)
        mine.paths = applied
        mine.time = last.time if last is not None else None
        managers[mine.key] = mine
        if last is not None and last.paths:
            merged = self._prune(merged, managers, last.paths)
        self._update(live_view, merged, managers, mine.key, force)
        unchanged = merged == live_view
        if not unchanged:  # an apply that changes nothing keeps its time (even none)
            mine.time = self.now()
        _strip(managers)
        return (MISSING if unchanged else merged), managers

    def _check_config(self, config: Obj) -> None:
        """A 500 as kube-apiserver's for a configuration its typed conversion refuses."""
        problems = config_errors(config, self.type)
        if not problems:
            return
        meta = config.get("metadata") or {}
        group, _, version = str(config.get("apiVersion", "")).rpartition("/")
        where = f"{meta.get('namespace', '')}/{meta.get('name', '')}; {group}/{version},"
        where += f" Kind={config.get('kind', '')}"
        text = problems[0] if len(problems) == 1 else "\n  ".join(["errors:", *problems])
        raise errors.unknown(500, f"failed to create typed patch object ({where}): {text}")

    def _before_first_apply(self, live: Obj) -> Managers:
        """An object without managedFields: its fields go to ``before-first-apply``."""
        managers: Managers = {}
        saved = self.manager
        self.manager = BEFORE_FIRST_APPLY
        try:
            return self.update(None, live, managers)
        finally:
            self.manager = saved

    def _prune(self, merged: Any, managers: Managers, last: set[Path]) -> Any:
        """Remove what the applier set last time, no longer sets, and nobody else owns
        (structured-merge-diff ``prune`` with addBackOwnedItems and addBackDanglingItems)."""
        t = self.type
        last_named = ensure_named_fields(last, t)
        pruned = remove_items(merged, PathSet(last_named), t) or {}
        merged_set = ensure_named_fields(to_field_set(merged, t), t)
        owned: set[Path] = set()
        for entry in managers.values():
            owned |= entry.paths
        pruned_set = ensure_named_fields(to_field_set(pruned, t), t)
        keep = pruned_set | ensure_named_fields(owned, t)
        pruned = remove_items(merged, PathSet(merged_set - keep), t) or {}
        pruned_set = ensure_named_fields(to_field_set(pruned, t), t)
        return remove_items(merged, PathSet((merged_set - pruned_set) & last_named), t) or {}


def _copied(managers: Managers) -> Managers:
    """``managers`` with entries of their own (an apply changes its entries' paths)."""
    return {key: replace(entry, paths=set(entry.paths)) for key, entry in managers.items()}


def sync_last_applied(manager: str | None, obj: Obj, config: Obj) -> Obj:
    """``obj`` after an apply of ``config`` by ``manager``: when that is ``kubectl`` and
    ``obj`` has a :data:`LAST_APPLIED` annotation, the annotation becomes ``config``
    without it, as Go's encoding/json writes it (managedfields ``lastAppliedUpdater``:
    a later client-side ``kubectl apply`` diffs against what was applied last)."""
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    if manager != KUBECTL or not annotations.get(LAST_APPLIED):
        return obj
    applied = dict(config)
    meta = config.get("metadata")
    if isinstance(meta, dict) and isinstance(meta.get("annotations"), dict):
        kept = {k: v for k, v in meta["annotations"].items() if k != LAST_APPLIED}
        applied["metadata"] = {**meta, "annotations": kept}
    synced = {**annotations, LAST_APPLIED: go_json(applied) + "\n"}
    return {**obj, "metadata": {**obj["metadata"], "annotations": synced}}
