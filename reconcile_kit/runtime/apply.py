"""Server-side apply of a reconcile's children: the apply body, the ownership check, and
the memory that lets an unchanged intent send nothing.

The body is what the reconcile set (Kubernetes docs, "Server-Side Apply"; as
controller-runtime's ``client.Apply`` and kube-rs's ``Patch::Apply``): identity
(apiVersion, kind, name, namespace) and the fields given, never the server's bookkeeping.

Skipping an apply is the delicate part: java-operator-sdk's SSA matcher compares the
intent with the live object and trips on what the server adds or rewrites (defaults,
``cpu: 1000m`` stored as ``1``, an empty map stored as absent). This matcher remembers,
per child and field manager, a digest of the last intent applied and the resourceVersion
the server answered. An apply is skipped only when the intent's digest is the same and
the controller's cache holds the child either at exactly that resourceVersion (nobody
wrote it since), or at a later one that still *holds* the intent: every value the intent
sets is in the cached child as it is (maps may have more keys: defaults, other writers;
lists must have the same length, item by item; no number, quantity or empty-map
normalisation is attempted). Anything else sends: a no-op apply costs a request but no
new resourceVersion and no watch event, and the resourceVersion it answers is remembered,
so the next identical intent is skipped by the first rule.

The rules, in order (``ctx.apply`` sends unless one skips):

1. the child's kind is not in the controller's cache (not ``owns``-ed or watched), or the
   cache does not hold the child: send;
2. no intent remembered for (child, field manager), or a different digest: send;
3. cached resourceVersion == the one the last apply answered: skip;
4. the cached child holds every value of the intent (above): skip, else send.

Not checked: field *ownership*. The cache drops ``managedFields``, so a child whose values
still match but whose managedFields someone cleared is not re-applied until the intent
changes (values are what rule 4 guarantees). Memory: one 16-byte digest and a
resourceVersion per (child, field manager), dropped when the cache sees the child deleted,
at most ``AppliedIntents.limit`` children.
"""

from __future__ import annotations

import hashlib
import re
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import orjson

from ..client.errors import AlreadyOwnedError, InvalidError, ListItemConflictError
from ..meta.objects import metadata_of

__all__ = [
    "TWO_CONTROLLERS",
    "AppliedIntents",
    "apply_body",
    "check_controller",
    "digest",
    "duplicate_item_error",
    "holds",
    "intent_key",
    "names_controller",
    "refused_second_controller",
    "status_body",
]

_SERVER_FIELDS = (
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "managedFields",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "selfLink",
)

Key = tuple[str, str, str, str, str]
"""(apiVersion, kind, namespace, name, field manager)"""
ChildKey = tuple[str, str, str, str]
"""(API group, kind, namespace, name)"""


def apply_body(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The applied configuration of ``raw`` for the main resource: no server fields, no
    status (a copy; ``raw`` is not changed)."""
    body: dict[str, Any] = orjson.loads(orjson.dumps(dict(raw)))
    meta = body.setdefault("metadata", {})
    for key in _SERVER_FIELDS:
        meta.pop(key, None)
    body.pop("status", None)
    return body


def status_body(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The applied configuration of ``raw``'s status: identity and ``status`` only."""
    meta = metadata_of(raw)
    identity = {k: meta[k] for k in ("name", "namespace") if meta.get(k)}
    body = {"apiVersion": raw.get("apiVersion"), "kind": raw.get("kind"), "metadata": identity}
    body["status"] = orjson.loads(orjson.dumps(dict(raw.get("status") or {})))
    return body


def _controller(raw: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    refs = metadata_of(raw).get("ownerReferences") or ()
    return next((r for r in refs if r.get("controller")), None)


def check_controller(desired: Mapping[str, Any], current: Mapping[str, Any] | None) -> None:
    """Raise AlreadyOwnedError when ``desired`` names a controller and ``current`` (the
    child as cached or served) is controlled by another object (another uid)."""
    mine, theirs = _controller(desired), _controller(current)
    if mine is None or theirs is None or mine.get("uid") == theirs.get("uid"):
        return
    meta = metadata_of(desired)
    raise AlreadyOwnedError(
        f"controlled by {theirs.get('kind')} {theirs.get('name')} (uid {theirs.get('uid')});"
        f" not applied for {mine.get('kind')} {mine.get('name')} (uid {mine.get('uid')})",
        kind=desired.get("kind"),
        namespace=meta.get("namespace"),
        name=meta.get("name"),
    )


TWO_CONTROLLERS = "Only one reference can have Controller set to true"
_FOUND = re.compile(r'Found "true" in references for (?P<refs>.+?)\.?$')


def refused_second_controller(desired: Mapping[str, Any], server_message: str) -> AlreadyOwnedError:
    """The AlreadyOwnedError for the server's 422 "Only one reference can have Controller
    set to true" to an apply of ``desired``: the other controller as the server names it
    (kube-apiserver: ``Kind/name``; the reference list it also prints is left out)."""
    mine = _controller(desired) or {}
    meta = metadata_of(desired)
    found = _FOUND.search(server_message)
    named = found["refs"] if found else server_message
    return AlreadyOwnedError(
        f"controlled by another object (the server found controller references for"
        f" {named}); not applied for {mine.get('kind')} {mine.get('name')}"
        f" (uid {mine.get('uid')})",
        kind=desired.get("kind"),
        namespace=meta.get("namespace"),
        name=meta.get("name"),
    )


def names_controller(desired: Mapping[str, Any]) -> bool:
    """Whether ``desired`` carries a controller reference (set_controller_reference)."""
    return _controller(desired) is not None


def digest(body: dict[str, Any]) -> bytes:
    """A 16-byte digest of an applied configuration (keys sorted)."""
    return hashlib.blake2b(orjson.dumps(body, option=orjson.OPT_SORT_KEYS), digest_size=16).digest()


class AppliedIntents:
    """What each child was last applied with, per field manager: a digest of the intent
    and the resourceVersion the server answered (no copy of the child).

    Bounded twice: an entry goes when its child is deleted (:meth:`forget_object`, called
    by the controller on every DELETED event of a kind it watches, relists included), and
    at most ``limit`` children are remembered (the least recently applied go first). A
    forgotten child is applied once more, nothing worse.
    """

    def __init__(self, limit: int = 65_536) -> None:
        self.limit = limit
        self._entries: OrderedDict[ChildKey, dict[str, tuple[bytes, str]]] = OrderedDict()

    def __len__(self) -> int:
        """How many (child, field manager) intents are remembered."""
        return sum(len(managers) for managers in self._entries.values())

    def unchanged(
        self,
        key: Key,
        body_digest: bytes,
        cached: Mapping[str, Any] | None,
        body: Mapping[str, Any] | None = None,
    ) -> bool:
        """Whether applying ``body`` again can be skipped: same intent as last time, and
        the cache holds the child at the resourceVersion that apply returned, or at a
        later one that still holds every value of ``body`` (see the module docstring)."""
        entry = self._entries.get(_child(key), {}).get(key[4])
        if entry is None or cached is None or entry[0] != body_digest:
            return False
        version = str(metadata_of(cached).get("resourceVersion") or "")
        if entry[1] and version == entry[1]:
            return True
        if body is None or not holds(_content(body), cached):
            return False
        self._entries[_child(key)][key[4]] = (body_digest, version)  # holds: no more checks
        return True

    def remember(self, key: Key, body_digest: bytes, answer: Mapping[str, Any]) -> None:
        """Record an apply the server answered with ``answer`` (the child after it)."""
        version = str(metadata_of(answer).get("resourceVersion") or "")
        child = _child(key)
        self._entries.setdefault(child, {})[key[4]] = (body_digest, version)
        self._entries.move_to_end(child)
        while len(self._entries) > self.limit:
            self._entries.popitem(last=False)

    def forget(self, key: Key) -> None:
        """Drop one (child, field manager) intent."""
        managers = self._entries.get(_child(key))
        if managers is not None:
            managers.pop(key[4], None)
            if not managers:
                del self._entries[_child(key)]

    def forget_object(self, raw: Mapping[str, Any]) -> None:
        """Drop every intent remembered for the object ``raw`` (a deleted child, any
        field manager; matched by API group, kind, namespace and name)."""
        self._entries.pop(_child(intent_key(raw, "")), None)

    def clear(self) -> None:
        """Drop everything (a controller that stops forgets what it applied)."""
        self._entries.clear()


def _child(key: Key) -> ChildKey:
    """The child part of ``key``: API group (no version), kind, namespace, name."""
    group = key[0].rpartition("/")[0]
    return (group, key[1], key[2], key[3])


def _content(body: Mapping[str, Any]) -> dict[str, Any]:
    """``body`` without its identity (apiVersion, kind, name, namespace)."""
    out = {k: v for k, v in body.items() if k not in ("apiVersion", "kind", "metadata")}
    meta = {k: v for k, v in metadata_of(body).items() if k not in ("name", "namespace")}
    if meta:
        out["metadata"] = meta
    return out


def holds(want: object, have: object) -> bool:
    """Whether ``have`` (a cached object) holds every value ``want`` sets: maps may have
    more keys, lists the same length item by item, scalars equal (a bool is no number)."""
    if isinstance(want, Mapping):
        return isinstance(have, Mapping) and all(
            k in have and holds(v, have[k]) for k, v in want.items()
        )
    if isinstance(want, list):
        return (
            isinstance(have, list)
            and len(want) == len(have)
            and all(holds(a, b) for a, b in zip(want, have, strict=True))
        )
    if isinstance(want, bool) or isinstance(have, bool):
        return want is have
    return bool(want == have)


def intent_key(raw: Mapping[str, Any], manager: str) -> Key:
    """The intents key of an applied configuration and its field manager."""
    meta = metadata_of(raw)
    return (
        str(raw.get("apiVersion", "")),
        str(raw.get("kind", "")),
        str(meta.get("namespace") or ""),
        str(meta.get("name", "")),
        manager,
    )


_DUPLICATE_FIELD = re.compile(
    r"^(?P<list>[A-Za-z0-9_.]+)\[(?P<index>\d+)\]\.(?P<leaf>[A-Za-z0-9_]+)$"
)
_DUPLICATE_VALUE = re.compile(r"^Duplicate value: (?P<value>.+)$")


def duplicate_item_error(
    desired: Mapping[str, Any], live: Mapping[str, Any] | None, error: InvalidError, manager: str
) -> ListItemConflictError | None:
    """The ListItemConflictError for a 422 ``FieldValueDuplicate`` refusing an apply of
    ``desired`` when ``live`` (the child as it is now) holds another item with that value
    owned by other field managers: names the field, the value, that item's key and its
    owners. None when the refusal is something else (the caller raises ``error``)."""
    if live is None:
        return None
    for cause in error.causes:
        if cause.get("reason") != "FieldValueDuplicate":
            continue
        field, value = str(cause.get("field") or ""), _duplicate_value(cause)
        where = _DUPLICATE_FIELD.match(field)
        if where is None or value is _NOTHING:
            continue
        list_path, leaf = where["list"].split("."), where["leaf"]
        items = _at(live, list_path)
        others = [i for i in items if isinstance(i, Mapping) and i.get(leaf) == value]
        if not others:
            continue
        key, owners = _owners(live, list_path, others[0], manager)
        applied = next(
            (i for i in _at(desired, list_path) if isinstance(i, Mapping) and i.get(leaf) == value),
            {},
        )
        mine = {k: applied[k] for k in key if k in applied} or dict(applied)
        theirs = {k: others[0][k] for k in key if k in others[0]} or dict(others[0])
        meta = metadata_of(desired)
        who = ", ".join(owners) if owners else "no field manager"
        message = (
            f"{field}: Duplicate value {orjson.dumps(value).decode()}: the applied item "
            f"{_show(mine)} and the item {_show(theirs)} owned by {who} both have "
            f"{where['list']}[].{leaf} {orjson.dumps(value).decode()} (a list key was changed "
            f"by another manager); change that item back or remove it, then the apply passes "
            f"(server: {error.server_message})"
        )
        return ListItemConflictError(
            message,
            field=field,
            value=value,
            item=theirs,
            owners=owners,
            status=error.status,
            reason=error.reason,
            causes=error.causes,
            method=error.method,
            path=error.path,
            kind=desired.get("kind"),
            namespace=meta.get("namespace"),
            name=meta.get("name"),
        )
    return None


_NOTHING = object()


def _duplicate_value(cause: Mapping[str, Any]) -> Any:
    found = _DUPLICATE_VALUE.match(str(cause.get("message") or ""))
    if found is None:
        return _NOTHING
    try:
        return orjson.loads(found["value"])
    except orjson.JSONDecodeError:
        return found["value"]


def _at(obj: Mapping[str, Any], path: list[str]) -> list[Any]:
    node: Any = obj
    for name in path:
        node = node.get(name) if isinstance(node, Mapping) else None
    return node if isinstance(node, list) else []


def _owners(
    live: Mapping[str, Any], list_path: list[str], item: Mapping[str, Any], manager: str
) -> tuple[list[str], list[str]]:
    """The key fields of ``item`` (from the ``k:{...}`` entries of managedFields) and the
    managers other than ``manager`` owning it, as ``manager (Operation)``."""
    key: list[str] = []
    owners: list[str] = []
    for entry in metadata_of(live).get("managedFields") or []:
        node: Any = entry.get("fieldsV1") or {}
        for name in list_path:
            node = node.get(f"f:{name}") if isinstance(node, Mapping) else None
        if not isinstance(node, Mapping):
            continue
        for element in node:
            if not element.startswith("k:"):
                continue
            try:
                fields = orjson.loads(element[2:])
            except orjson.JSONDecodeError:
                continue
            if isinstance(fields, dict) and all(item.get(k) == v for k, v in fields.items()):
                key = key or list(fields)
                if entry.get("manager") != manager:
                    owners.append(f"{entry.get('manager')} ({entry.get('operation')})")
    return key, owners


def _show(fields: Mapping[str, Any]) -> str:
    return "{" + ", ".join(f"{k}: {orjson.dumps(v).decode()}" for k, v in fields.items()) + "}"
