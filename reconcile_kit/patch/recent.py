"""States decoded from watch events that a write's answer may take instead of being decoded.

A PATCH's answer and the watch event the write causes carry the same object at the same
resourceVersion. When a reflector decodes the event before the writer reads its answer
(its socket was read first: about half of a busy controller's writes, issue 31), the answer
need not be decoded again: while writes of a kind are in flight (:meth:`RecentStates.begin`),
reflectors of that kind note the states they decode (:meth:`RecentStates.note`), and
PatchHelper takes the one its answer names (:meth:`RecentStates.take`), found by the
answer's resourceVersion (read from its bytes) and checked to be the same object (uid, kind
and apiVersion: a resourceVersion names one write of one object in one cluster, as etcd's
revisions do, and a uid names one object in any cluster). A noted state is shared: nothing
may mutate it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..meta.objects import resource_version_in

__all__ = ["RECENT", "RECENT_BYTES", "RECENT_STATES", "RecentStates"]

RECENT_STATES = 64
"""The most noted states held at once (the oldest goes first)."""
RECENT_BYTES = 64 * 1024
"""The largest watch event (JSON bytes) whose state is noted: the bound on what
:data:`RECENT_STATES` holds."""

Obj = dict[str, Any]


class RecentStates:
    """Watch events' states, by resourceVersion, while writes of their kind are in flight."""

    def __init__(self) -> None:
        self._states: dict[str, Obj] = {}
        self._writing: dict[tuple[str, str], int] = {}

    def begin(self, api_version: str, kind: str) -> tuple[str, str]:
        """A write of a ``kind`` object of ``api_version`` starts: the states of that kind
        are noted until its :meth:`end` (given what this returns)."""
        key = (api_version, kind)
        self._writing[key] = self._writing.get(key, 0) + 1
        return key

    def end(self, key: tuple[str, str]) -> None:
        """The write :meth:`begin` returned ``key`` for has its answer."""
        left = self._writing[key] - 1
        if left:
            self._writing[key] = left
            return
        del self._writing[key]
        if not self._writing:
            self._states.clear()

    def wanted(self, api_version: str, kind: str) -> bool:
        """Whether a write of ``kind`` objects of ``api_version`` is in flight."""
        return (api_version, kind) in self._writing

    def note(self, state: Obj) -> None:
        """Note ``state``, an object as a watch event carried it (shared from now on)."""
        rv = (state.get("metadata") or {}).get("resourceVersion")
        if isinstance(rv, str) and rv:
            if len(self._states) >= RECENT_STATES:
                del self._states[next(iter(self._states))]
            self._states[rv] = state

    def take(self, answer: bytes, like: Mapping[str, Any]) -> Obj | None:
        """The noted state ``answer`` (a write's JSON answer) carries, when it is the same
        object as ``like`` (its uid, kind and apiVersion); None: decode ``answer``."""
        if not self._states:
            return None
        rv = resource_version_in(answer)
        state = None if rv is None else self._states.pop(rv, None)
        if state is None:
            return None
        uid = (like.get("metadata") or {}).get("uid")
        same_object = bool(uid) and (state.get("metadata") or {}).get("uid") == uid
        same_form = state.get("kind") == like.get("kind")
        same_form = same_form and state.get("apiVersion") == like.get("apiVersion")
        return state if same_object and same_form else None


RECENT = RecentStates()
"""The process's registry (the reflectors note into it, PatchHelper takes from it)."""
