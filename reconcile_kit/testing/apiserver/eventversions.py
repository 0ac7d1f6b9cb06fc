"""Events' two groups: kube-apiserver stores core/v1 Events and events.k8s.io/v1 Events
once (one etcd prefix, ``/registry/events``, as core/v1) and serves each through the
other, converting field by field through the internal core Event as k8s.io/kubernetes
pkg/apis/events/v1 conversion.go does: ``regarding`` is ``involvedObject``, ``note``
``message``, ``reportingController`` core/v1's ``reportingComponent``,
``deprecatedSource``/``deprecatedFirstTimestamp``/``deprecatedLastTimestamp``/
``deprecatedCount`` ``source``/``firstTimestamp``/``lastTimestamp``/``count``; the
other fields (``eventTime``, ``series``, ``action``, ``reason``, ``related``, ``type``,
``reportingInstance``) keep their names. Objects are stored as core/v1;
:func:`served_form` and :func:`storage_form` convert.
"""

from __future__ import annotations

import copy

from .gozero import fill_go_zero
from .resources import ResourceType
from .store import Obj

GROUP = "events.k8s.io"
PLURAL = "events"
CORE = "v1"
EVENTS_V1 = "events.k8s.io/v1"

_CORE_FIELDS = (  # core/v1 Event's fields in its Go struct's order, then events.k8s.io/v1's name
    ("involvedObject", "regarding"),
    ("reason", "reason"),
    ("message", "note"),
    ("source", "deprecatedSource"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"),
    ("type", "type"),
    ("eventTime", "eventTime"),
    ("series", "series"),
    ("action", "action"),
    ("related", "related"),
    ("reportingComponent", "reportingController"),
    ("reportingInstance", "reportingInstance"),
)
_EVENTS_V1_ORDER = (  # events.k8s.io/v1 Event's fields in its Go struct's order
    "eventTime",
    "series",
    "reportingController",
    "reportingInstance",
    "action",
    "reason",
    "regarding",
    "related",
    "note",
    "type",
    "deprecatedSource",
    "deprecatedFirstTimestamp",
    "deprecatedLastTimestamp",
    "deprecatedCount",
)
_TO_EVENTS_V1 = dict(_CORE_FIELDS)
_TO_CORE = {new: old for old, new in _CORE_FIELDS}


def handles(rt: ResourceType) -> bool:
    """Whether ``rt`` is one of the Event's two groups."""
    return rt.builtin and rt.plural == PLURAL and rt.group in ("", GROUP)


def converts(rt: ResourceType) -> bool:
    """Whether ``rt`` serves Events in a version they are not stored in."""
    return handles(rt) and rt.group == GROUP


def served_form(rt: ResourceType, obj: Obj) -> Obj:
    """An Event (stored, or in either group's version) as ``rt`` serves it."""
    if obj.get("apiVersion") == rt.api_version:
        return obj
    return to_events_v1(obj) if rt.group == GROUP else to_core(obj)


def storage_form(obj: Obj) -> Obj:
    """An Event in either group's version as stored (core/v1)."""
    return obj if obj.get("apiVersion") == CORE else to_core(obj)


def _converted(obj: Obj, api_version: str, names: dict[str, str], order: tuple[str, ...]) -> Obj:
    """``obj``'s fields renamed by ``names`` into ``order``, as Go's encoding/json writes
    the converted object."""
    renamed = {names.get(key, key): copy.deepcopy(value) for key, value in obj.items()}
    out: Obj = {
        "kind": obj.get("kind") or "Event",
        "apiVersion": api_version,
        "metadata": renamed.get("metadata") or {},
    }
    for key in order:
        if key in renamed:
            out[key] = renamed[key]
    fill_go_zero(api_version, "Event", out)
    return out


def to_events_v1(obj: Obj) -> Obj:
    """Convert_core_Event_To_v1_Event (a core/v1 Event through the internal one)."""
    return _converted(obj, EVENTS_V1, _TO_EVENTS_V1, _EVENTS_V1_ORDER)


def to_core(obj: Obj) -> Obj:
    """Convert_v1_Event_To_core_Event, then the internal Event as core/v1 encodes it."""
    return _converted(obj, CORE, _TO_CORE, tuple(old for old, _ in _CORE_FIELDS))
