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
new resourceVersion and no watch event.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import orjson

from ..client.errors import AlreadyOwnedError

__all__ = [
    "AppliedIntents",
    "apply_body",
    "check_controller",
    "digest",
    "holds",
    "key_of",
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
    meta = raw.get("metadata") or {}
    identity = {k: meta[k] for k in ("name", "namespace") if meta.get(k)}
    body = {"apiVersion": raw.get("apiVersion"), "kind": raw.get("kind"), "metadata": identity}
    body["status"] = orjson.loads(orjson.dumps(dict(raw.get("status") or {})))
    return body


def _controller(raw: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    refs = ((raw or {}).get("metadata") or {}).get("ownerReferences") or ()
    return next((r for r in refs if r.get("controller")), None)


def check_controller(desired: Mapping[str, Any], current: Mapping[str, Any] | None) -> None:
    """Raise AlreadyOwnedError when ``desired`` names a controller and ``current`` (the
    child as cached or served) is controlled by another object (another uid)."""
    mine, theirs = _controller(desired), _controller(current)
    if mine is None or theirs is None or mine.get("uid") == theirs.get("uid"):
        return
    meta = desired.get("metadata") or {}
    raise AlreadyOwnedError(
        f"controlled by {theirs.get('kind')} {theirs.get('name')} (uid {theirs.get('uid')});"
        f" not applied for {mine.get('kind')} {mine.get('name')} (uid {mine.get('uid')})",
        kind=desired.get("kind"),
        namespace=meta.get("namespace"),
        name=meta.get("name"),
    )


def digest(body: dict[str, Any]) -> bytes:
    """A 16-byte digest of an applied configuration (keys sorted)."""
    return hashlib.blake2b(orjson.dumps(body, option=orjson.OPT_SORT_KEYS), digest_size=16).digest()


class AppliedIntents:
    """What each child was last applied with: ``{(apiVersion, kind, namespace, name,
    manager): (digest, resourceVersion)}``, at most ``limit`` entries (the least recently
    applied go first; a forgotten child is applied once more, nothing worse)."""

    def __init__(self, limit: int = 65_536) -> None:
        self.limit = limit
        self._entries: OrderedDict[Key, tuple[bytes, str]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

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
        entry = self._entries.get(key)
        if entry is None or cached is None or entry[0] != body_digest:
            return False
        version = (cached.get("metadata") or {}).get("resourceVersion")
        if entry[1] and version == entry[1]:
            return True
        if body is None or not holds(_content(body), cached):
            return False
        self._entries[key] = (body_digest, str(version or ""))
        return True

    def remember(self, key: Key, body_digest: bytes, answer: dict[str, Any]) -> None:
        """Record an apply the server answered with ``answer`` (the child after it)."""
        version = (answer.get("metadata") or {}).get("resourceVersion") or ""
        self._entries[key] = (body_digest, version)
        self._entries.move_to_end(key)
        while len(self._entries) > self.limit:
            self._entries.popitem(last=False)

    def forget(self, key: Key) -> None:
        self._entries.pop(key, None)


def _content(body: Mapping[str, Any]) -> dict[str, Any]:
    """``body`` without its identity (apiVersion, kind, name, namespace)."""
    out = {k: v for k, v in body.items() if k not in ("apiVersion", "kind", "metadata")}
    meta = {k: v for k, v in (body.get("metadata") or {}).items() if k not in ("name", "namespace")}
    if meta:
        out["metadata"] = meta
    return out


def holds(want: Any, have: Any) -> bool:
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


def key_of(raw: Mapping[str, Any], manager: str) -> Key:
    """The intents key of an applied configuration and its field manager."""
    meta = raw.get("metadata") or {}
    return (
        str(raw.get("apiVersion", "")),
        str(raw.get("kind", "")),
        str(meta.get("namespace") or ""),
        str(meta.get("name", "")),
        manager,
    )
