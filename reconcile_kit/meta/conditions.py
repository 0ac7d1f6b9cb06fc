"""metav1.Condition helpers and the kstatus condition conventions.

Conditions live in ``status.conditions`` as a list of metav1.Condition mappings::

    {"type": "Ready", "status": "True", "observedGeneration": 3,
     "lastTransitionTime": "2026-11-21T05:35:31Z", "reason": "Reconciled", "message": ""}

Where the semantics come from:

- Setting, finding and removing follow k8s.io/apimachinery/pkg/api/meta (conditions.go:
  ``SetStatusCondition``, ``FindStatusCondition``, ``RemoveStatusCondition``): a condition is
  replaced whole, and ``lastTransitionTime`` moves only when ``status`` changes. Unlike Flux's
  ``conditions.Set``, a new reason or message alone does not move it, and the list is kept in
  its order (no sorting), so patches stay small.
- Field rules are metav1.Condition's validation markers (k8s.io/apimachinery/pkg/apis/meta/v1
  types.go): the type pattern and 316-character limit, status enum, reason pattern and
  1024-character limit, message limit of 32768 characters, observedGeneration >= 0.
- ``Reconciling`` and ``Stalled`` are kstatus's standard conditions (sigs.k8s.io/cli-utils
  pkg/kstatus README, "Conditions"): "abnormal-true" polarity, so their absence means normal.
  ``mark_reconciling`` and ``mark_stalled`` also drop the other one, as Flux's
  fluxcd/pkg runtime/conditions ``MarkReconciling`` and ``MarkStalled`` do.
- ``summarize`` derives a summary condition in the spirit of fluxcd/pkg runtime/conditions
  ``SetSummary`` (with ``WithConditions`` and ``WithNegativePolarityConditions``).

Every function accepts a kr8s object (mutated through ``obj.raw``) or a plain dict.
"""

from __future__ import annotations

import functools
import re
import typing
from collections.abc import (
    Callable,
    Container,
    Iterable,
    Mapping,
    MutableMapping,
    MutableSequence,
    Sequence,
)
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Final, TypedDict, TypeGuard, TypeVar, Unpack

from .objects import (
    SHARES_PLAIN_VALUES,
    ObjectLike,
    _peek,
    accepts_models,
    describe_object,
    edit_list,
    identity,
    is_model,
    nested_list,
    raw_of,
    set_or_drop,
)
from .time import format_time, now_time
from .validation import DNS1123_SUBDOMAIN_FMT, QUALIFIED_NAME_FMT

__all__ = [
    "FALSE",
    "NEGATIVE_POLARITY",
    "READY",
    "RECONCILING",
    "STALLED",
    "TRUE",
    "UNKNOWN",
    "Reasons",
    "Stamp",
    "conflicting_conditions",
    "declares_conditions",
    "get_condition",
    "is_false",
    "is_true",
    "is_unknown",
    "mark_not_ready",
    "mark_ready",
    "mark_reconciling",
    "mark_stalled",
    "merge_conditions",
    "now",
    "remove_condition",
    "require_conditions",
    "set_condition",
    "summarize",
]

TRUE: Final = "True"
FALSE: Final = "False"
UNKNOWN: Final = "Unknown"

READY: Final = "Ready"
"""The summary condition type (kstatus falls back to it; Flux sets it on every object)."""
RECONCILING: Final = "Reconciling"
"""kstatus: True while the controller works towards the latest spec (abnormal-true)."""
STALLED: Final = "Stalled"
"""kstatus: True when reconciling failed or made insufficient progress (abnormal-true)."""
NEGATIVE_POLARITY: Final = frozenset({RECONCILING, STALLED})
"""Condition types whose True status is the abnormal one (kstatus's standard conditions)."""

MAX_TYPE_LENGTH: Final = 316
MAX_REASON_LENGTH: Final = 1024
MAX_MESSAGE_LENGTH: Final = 32768

Clock = Callable[[], datetime]
"""A zero-argument function returning the current time (``now`` by default)."""

# metav1.Condition's type pattern is a qualified name without IsQualifiedName's limits.
_TYPE_RE = re.compile(f"({DNS1123_SUBDOMAIN_FMT}/)?({QUALIFIED_NAME_FMT})")
_REASON_RE = re.compile(r"[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?")
_TYPE_RULE = (
    "must be a qualified name: an optional lowercase DNS subdomain and '/', then "
    "alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric (e.g. 'Ready', "
    "'example.com/Synced')"
)
_REASON_RULE = (
    "must be CamelCase: a letter, then letters, digits, '_', ',' or ':', not ending in ',' "
    "or ':' (e.g. 'Reconciled')"
)


class Reasons(StrEnum):
    """Standard condition reasons (CamelCase; members are strings, ``Reasons.RECONCILED ==
    "Reconciled"``, so they compare, log and serialize as their values).

    Sources: ``Progressing`` and ``DependencyNotReady`` are fluxcd/pkg apis/meta reasons;
    ``Succeeded``/``Failed`` shorten Flux's ``ReconciliationSucceeded``/``ReconciliationFailed``;
    ``Reconciling``, ``Reconciled``, ``Validated`` and ``Error`` are the kstatus-compatible
    reasons Go controller packages built on the PatchHelper pattern use; ``Reconciling`` and
    ``Stalled`` double as reasons for the kstatus conditions of the same names.
    ``ValidationFailed`` and ``Deleting`` are this project's, completing those pairs.
    """

    RECONCILING = "Reconciling"
    RECONCILED = "Reconciled"
    PROGRESSING = "Progressing"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    ERROR = "Error"
    VALIDATED = "Validated"
    VALIDATION_FAILED = "ValidationFailed"
    DELETING = "Deleting"
    DEPENDENCY_NOT_READY = "DependencyNotReady"
    STALLED = "Stalled"


def now() -> datetime:
    """The current time in UTC: the default clock (monkeypatch it, or pass ``clock=``)."""
    return datetime.now(UTC)


_DEFAULT_NOW = now


F = TypeVar("F", bound=Callable[..., Any])


@functools.cache
def declares_conditions(cls: type) -> bool:
    """Whether ``cls``, a typed model's class, declares ``status`` as a model (or an
    optional one) with a ``conditions`` field: else its CRD has no ``status.conditions``
    and the server drops any condition written to it (read from pydantic's
    ``model_fields``; pydantic is not imported here)."""
    field = getattr(cls, "model_fields", {}).get("status")
    if field is None:
        return False
    candidates = [field.annotation, *typing.get_args(field.annotation)]
    return any(
        isinstance(each, type) and "conditions" in getattr(each, "model_fields", {})
        for each in candidates
    )


def require_conditions(obj: object) -> None:
    """Check that a condition written to ``obj`` can reach the server: a typed model's
    class must declare ``status.conditions`` (:func:`declares_conditions`), else the server
    would drop the condition without a word. Dicts and kr8s objects always pass.

    Raises:
        TypeError: ``obj`` is a typed model whose class declares no ``status.conditions``;
            the message names the object and the declaration it needs.
    """
    if is_model(obj) and not declares_conditions(type(obj)):
        raise TypeError(
            f"{describe_object(obj)}: {type(obj).__name__} declares no status with a "
            "conditions field, so its CRD has none and the server would drop the "
            "condition: declare `status: MyStatus | None = None` with `conditions: "
            "list[Condition] = Field(default_factory=list)` (reconcile_kit.typed.Condition)"
        )


def _writes_conditions(function: F) -> F:
    """:func:`~reconcile_kit.meta.objects.accepts_models` for a helper that writes a
    condition: a typed model must declare ``status.conditions`` (:func:`require_conditions`),
    as for :mod:`reconcile_kit.typed.conditions`' helpers."""
    on_models = accepts_models(function)

    @functools.wraps(function)
    def wrapper(obj: Any, *args: Any, **kwargs: Any) -> Any:
        require_conditions(obj)
        return on_models(obj, *args, **kwargs)

    return wrapper  # type: ignore[return-value]


# --- reading ---------------------------------------------------------------------------------


@accepts_models
def get_condition(obj: ObjectLike, type: str) -> dict[str, Any] | None:
    """A copy of the condition of ``type`` in ``status.conditions``, or None if absent.

    Like apimachinery's ``meta.FindStatusCondition``: the first entry of that type wins.
    The copy is a plain dict; change conditions with ``set_condition``.
    """
    for condition in _conditions(obj, create=False) or ():
        if isinstance(condition, MutableMapping) and condition.get("type") == type:
            return dict(condition)
    return None


@accepts_models
def is_true(obj: ObjectLike, type: str) -> bool:
    """Whether the condition of ``type`` is present with status "True"."""
    return _status_of(obj, type) == TRUE


@accepts_models
def is_false(obj: ObjectLike, type: str) -> bool:
    """Whether the condition of ``type`` is present with status "False"."""
    return _status_of(obj, type) == FALSE


@accepts_models
def is_unknown(obj: ObjectLike, type: str) -> bool:
    """Whether the condition of ``type`` is missing or neither "True" nor "False"."""
    return _status_of(obj, type) not in (TRUE, FALSE)


# --- writing ---------------------------------------------------------------------------------


@_writes_conditions
def set_condition(
    obj: ObjectLike,
    type: str,
    status: str | bool,
    reason: str,
    message: str = "",
    *,
    observed_generation: int | None = None,
    clock: Clock | None = None,
) -> bool:
    """Set the condition of ``type`` in ``status.conditions``; True if anything changed.

    Follows apimachinery's ``meta.SetStatusCondition``: an existing condition of that type is
    replaced in place (``observedGeneration`` is dropped when None is given), a new one is
    appended; ``lastTransitionTime`` is kept while the status stays the same and set to
    ``clock()`` (RFC 3339 UTC, whole seconds) when the status changes or the condition is new.
    ``status`` and ``status.conditions`` are created as needed.

    Args:
        obj: a kr8s object, a dict or a typed model.
        type: the condition type, e.g. "Ready" or "example.com/Synced".
        status: "True", "False", "Unknown", or a bool (True -> "True", False -> "False").
        reason: CamelCase reason, e.g. ``Reasons.RECONCILED``.
        message: human-readable details.
        observed_generation: the ``metadata.generation`` this condition reflects (>= 0).
        clock: returns the current time; defaults to this module's ``now``.

    Raises:
        ValueError: a field breaks metav1.Condition's rules; the message names the field,
            the value and the object.
        TypeError: ``status`` or ``status.conditions`` of ``obj`` has the wrong shape.
    """
    value = _check_status(obj, status)
    _validate(obj, type, reason, message, observed_generation)
    raw = raw_of(obj)
    present = _read_conditions(obj, raw)  # read as it is: most calls change nothing
    index = _index(present, type)
    existing = present[index] if index is not None else None
    stamp = _transition_time(existing, value, clock)
    new = _condition(type, value, reason, message, observed_generation, stamp)
    if existing is not None and dict(existing) == new:
        return False
    if not present and _peek(raw, "status") is None:
        _set_new(raw, "status", {"conditions": [new]})
        return True
    conditions = _conditions(obj, create=True)
    assert conditions is not None
    if index is None:
        conditions.append(new)
    else:
        conditions[index] = new
    return True


@accepts_models
def remove_condition(obj: ObjectLike, type: str) -> bool:
    """Remove every condition of ``type``; True if one was there.

    As apimachinery's ``meta.RemoveStatusCondition``. When no condition remains,
    ``status.conditions`` is deleted (a merge patch then sends ``null``, which removes it).
    """
    conditions = _conditions(obj, create=False)
    if not conditions or _index(conditions, type) is None:
        return False
    kept = [c for c in conditions if not (isinstance(c, MutableMapping) and c.get("type") == type)]
    set_or_drop(raw_of(obj)["status"], "conditions", kept)
    return True


class Stamp(TypedDict, total=False):
    """The optional keywords of the ``mark_*`` helpers, as :func:`set_condition`'s."""

    observed_generation: int | None
    """The ``metadata.generation`` the condition reflects (>= 0)."""
    clock: Clock | None
    """Returns the current time; defaults to this module's ``now``."""


# --- kstatus ---------------------------------------------------------------------------------


@_writes_conditions
def mark_reconciling(
    obj: ObjectLike, reason: str, message: str = "", **stamp: Unpack[Stamp]
) -> bool:
    """Set ``Reconciling=True`` and remove ``Stalled``; True if anything changed.

    kstatus: Reconciling (abnormal-true) means the controller is working on the latest
    changes. Removing Stalled follows Flux's ``conditions.MarkReconciling``.

    Raises:
        ValueError: as :func:`set_condition`.
    """
    return _mark(obj, RECONCILING, TRUE, reason, message, stamp, (STALLED,))


@_writes_conditions
def mark_stalled(obj: ObjectLike, reason: str, message: str = "", **stamp: Unpack[Stamp]) -> bool:
    """Set ``Stalled=True`` and remove ``Reconciling``; True if anything changed.

    kstatus: Stalled (abnormal-true) means reconciling hit an error or made insufficient
    progress; kstatus then reports the object Failed. Removing Reconciling follows Flux's
    ``conditions.MarkStalled``.

    Raises:
        ValueError: as :func:`set_condition`.
    """
    return _mark(obj, STALLED, TRUE, reason, message, stamp, (RECONCILING,))


@_writes_conditions
def mark_ready(
    obj: ObjectLike,
    reason: str = Reasons.RECONCILED,
    message: str = "",
    **stamp: Unpack[Stamp],
) -> bool:
    """Set ``Ready=True`` and remove ``Reconciling`` and ``Stalled``; True if anything changed.

    With neither abnormal-true condition present kstatus reports the object Current.

    Raises:
        ValueError: as :func:`set_condition`.
    """
    return _mark(obj, READY, TRUE, reason, message, stamp, (RECONCILING, STALLED))


@_writes_conditions
def mark_not_ready(
    obj: ObjectLike,
    reason: str,
    message: str = "",
    **stamp: Unpack[Stamp],
) -> bool:
    """Set ``Ready=False``; True if anything changed. Reconciling/Stalled are left alone.

    Raises:
        ValueError: as :func:`set_condition`.
    """
    return _mark(obj, READY, FALSE, reason, message, stamp, ())


@_writes_conditions
def summarize(
    obj: ObjectLike,
    *,
    from_types: Iterable[str],
    type: str = READY,
    observed_generation: int | None = None,
    negative_polarity: Iterable[str] = NEGATIVE_POLARITY,
    clock: Clock | None = None,
) -> dict[str, Any]:
    """Derive the ``type`` condition (Ready) from ``from_types``, set it, and return it.

    In the spirit of Flux's ``conditions.SetSummary``, looking at ``from_types`` in order:

    1. the first abnormal one -- a ``negative_polarity`` type (Reconciling, Stalled) that is
       True, or any other type that is False -- makes the summary False with its reason and
       message;
    2. otherwise the first undetermined one -- status Unknown, or a missing positive-polarity
       condition -- makes it Unknown (its reason and message; a missing condition gives reason
       ``Progressing`` and "waiting for condition <type>");
    3. otherwise it is True with reason ``Reconciled`` and an empty message.

    A missing negative-polarity condition counts as normal: kstatus's abnormal-true
    conditions are absent when all is well (and ``mark_ready`` removes them).

    Args:
        obj: a kr8s object, a dict or a typed model.
        from_types: condition types to summarize, in priority order (not a plain string,
            not empty, not containing ``type``).
        type: the summary condition type.
        observed_generation: passed to ``set_condition``.
        negative_polarity: the abnormal-true types among ``from_types``.
        clock: passed to ``set_condition``.

    Returns:
        A copy of the summary condition as set on ``obj``.

    Raises:
        TypeError: ``from_types`` is a string.
        ValueError: ``from_types`` is empty or contains ``type``; or as ``set_condition``.
    """
    types = _summary_sources(from_types, type)
    status, reason, message = _summary(obj, types, frozenset(negative_polarity))
    stamp: Stamp = {"observed_generation": observed_generation, "clock": clock}
    _mark(obj, type, status, reason, message, stamp, ())
    summary = get_condition(obj, type)
    assert summary is not None
    return summary


# --- internals -------------------------------------------------------------------------------


def _mark(
    obj: ObjectLike,
    type: str,
    status: str,
    reason: str,
    message: str,
    stamp: Stamp,
    drop: tuple[str, ...],
) -> bool:
    changed = set_condition(obj, type, status, reason, message, **stamp)
    removed = [remove_condition(obj, t) for t in drop]
    return changed or any(removed)


def _summary_sources(from_types: Iterable[str], target: str) -> list[str]:
    if isinstance(from_types, str):
        raise TypeError("from_types must be an iterable of condition types, not a string")
    types = list(from_types)
    if not types:
        raise ValueError("from_types must name at least one condition type")
    if target in types:
        raise ValueError(f"from_types must not contain the summary type {target!r}")
    return types


def _summary(obj: ObjectLike, types: list[str], negative: frozenset[str]) -> tuple[str, str, str]:
    found = [(t, get_condition(obj, t)) for t in types]
    for t, condition in found:
        if condition is not None and condition.get("status") == (TRUE if t in negative else FALSE):
            return FALSE, *_explanation(condition, Reasons.FAILED)
    for t, condition in found:
        if condition is None and t not in negative:
            return UNKNOWN, Reasons.PROGRESSING, f"waiting for condition {t}"
        if condition is not None and condition.get("status") not in (TRUE, FALSE):
            return UNKNOWN, *_explanation(condition, Reasons.PROGRESSING)
    return TRUE, Reasons.RECONCILED, ""


def _explanation(condition: dict[str, Any], fallback: str) -> tuple[str, str]:
    """A source condition's reason (``fallback`` if it is not valid) and message."""
    reason, message = condition.get("reason"), condition.get("message")
    return (reason if _is_reason(reason) else fallback), str(message or "")[:MAX_MESSAGE_LENGTH]


def _is_reason(value: object) -> TypeGuard[str]:
    if not isinstance(value, str) or len(value) > MAX_REASON_LENGTH:
        return False
    return _REASON_RE.fullmatch(value) is not None


def _status_of(obj: ObjectLike, type: str) -> object:
    condition = get_condition(obj, type)
    return condition.get("status") if condition is not None else None


def _conditions(obj: ObjectLike, *, create: bool) -> MutableSequence[Any] | None:
    return nested_list(obj, "status", "conditions", create=create)


def _set_new(raw: Any, key: str, value: dict[str, Any]) -> None:
    """``raw[key] = value`` for a ``value`` just made here: a dict or a LazyBox (which
    wraps a copy when it is read: :data:`SHARES_PLAIN_VALUES`) takes it as it is, anything
    else as it takes values."""
    if type(raw) is dict or getattr(type(raw), SHARES_PLAIN_VALUES, False):
        dict.__setitem__(raw, key, value)
    else:
        raw[key] = value


def _read_conditions(obj: ObjectLike, raw: Mapping[str, Any]) -> Sequence[Any]:
    """``status.conditions`` of ``raw`` as stored, for reading (empty when absent).

    Raises:
        TypeError: ``status`` or ``status.conditions`` has the wrong type.
    """
    status = _peek(raw, "status")
    if status is None:
        return ()
    if not isinstance(status, MutableMapping):
        raise TypeError(f"{describe_object(obj)}: status is not a mapping")
    conditions = _peek(status, "conditions")
    if conditions is None:
        return ()
    if not isinstance(conditions, MutableSequence):
        raise TypeError(f"{describe_object(obj)}: status.conditions is not a list")
    found: Sequence[Any] = conditions
    return found


def _index(conditions: Sequence[Any], type: str) -> int | None:
    for i, condition in enumerate(conditions):
        if isinstance(condition, MutableMapping) and condition.get("type") == type:
            return i
    return None


def _transition_time(existing: Any, status: str, clock: Clock | None) -> str:
    if existing is not None and existing.get("status") == status:
        kept = existing.get("lastTransitionTime")
        if kept:
            return str(kept)
    if clock is None and now is _DEFAULT_NOW:
        return now_time()
    return format_time((clock or now)())


def _condition(
    type: str, status: str, reason: str, message: str, generation: int | None, stamp: str
) -> dict[str, Any]:
    condition: dict[str, Any] = {"type": _plain(type), "status": status}
    if generation is not None:
        condition["observedGeneration"] = generation
    condition.update(lastTransitionTime=stamp, reason=_plain(reason), message=_plain(message))
    return condition


def _plain(text: str) -> str:
    """``text`` as a plain ``str``: a member of a str enum (``Reasons.RECONCILED``) left in
    the object's JSON made YAML dumps of it (kr8s's ``to_yaml()``) write
    ``!!python/object/apply:...Reasons`` and ``yaml.safe_dump`` refuse it."""
    return text if type(text) is str else str.__str__(text)


# --- validation ------------------------------------------------------------------------------


def _check_status(obj: ObjectLike, status: str | bool) -> str:
    if isinstance(status, bool):
        return TRUE if status else FALSE
    if status in (TRUE, FALSE, UNKNOWN):
        return status
    raise _invalid(obj, "status", status, 'must be "True", "False" or "Unknown" (or a bool)')


_VALID_PAIRS = 1024
_VALID: set[tuple[str, str]] = set()
"""(type, reason) pairs found valid, up to :data:`_VALID_PAIRS`: not matched again."""


def _validate(
    obj: ObjectLike, type: str, reason: str, message: str, generation: int | None
) -> None:
    if (type, reason) not in _VALID:  # a controller sets a few pairs, over and over
        _check_pattern(obj, "type", type, _TYPE_RE, MAX_TYPE_LENGTH, _TYPE_RULE)
        _check_pattern(obj, "reason", reason, _REASON_RE, MAX_REASON_LENGTH, _REASON_RULE)
        if len(_VALID) < _VALID_PAIRS:
            _VALID.add((type, reason))
    if not isinstance(message, str):
        raise _invalid(obj, "message", message, "must be a string")
    if len(message) > MAX_MESSAGE_LENGTH:
        raise _invalid(obj, "message", message, f"must be at most {MAX_MESSAGE_LENGTH} characters")
    if generation is not None and (
        isinstance(generation, bool) or not isinstance(generation, int) or generation < 0
    ):
        raise _invalid(obj, "observedGeneration", generation, "must be an integer >= 0")


def _check_pattern(
    obj: ObjectLike, field: str, value: Any, pattern: re.Pattern[str], limit: int, rule: str
) -> None:
    if not isinstance(value, str):
        raise _invalid(obj, field, value, "must be a string")
    if len(value) > limit:
        raise _invalid(obj, field, value, f"must be at most {limit} characters")
    if not pattern.fullmatch(value):
        raise _invalid(obj, field, value, rule)


def _invalid(obj: ObjectLike, field: str, value: Any, problem: str) -> ValueError:
    shown = repr(value)
    if len(shown) > 80:
        shown = f"{shown[:60]}... ({len(shown)} characters)"
    return ValueError(f"{_where(obj)}condition {field} {shown}: {problem}")


def _where(obj: ObjectLike) -> str:
    kind, _, name = identity(obj)
    return f"{describe_object(obj)}: " if name or kind != "?" else ""


# --- three-way merge of condition lists ------------------------------------------------


def conflicting_conditions(
    snapshot: list[dict[str, Any]],
    local: list[dict[str, Any]],
    server: list[dict[str, Any]],
    owned: Container[str],
) -> list[str]:
    """Condition types this writer changed (``snapshot`` -> ``local``) that another writer
    also changed to a different value on the ``server`` meanwhile, leaving out ``owned``
    types (whose local value wins), as Cluster API's conditions patch decides conflicts."""
    snap = {c.get("type"): c for c in snapshot}
    mine = {c.get("type"): c for c in local}
    theirs = {c.get("type"): c for c in server}
    conflicts = []
    for ctype in [*mine, *(t for t in snap if t not in mine)]:
        if mine.get(ctype) == snap.get(ctype):
            continue
        server_changed = theirs.get(ctype) != snap.get(ctype)
        if server_changed and theirs.get(ctype) != mine.get(ctype) and ctype not in owned:
            conflicts.append(str(ctype))
    return conflicts


def merge_conditions(
    server: list[dict[str, Any]], snapshot: list[dict[str, Any]], local: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The ``server``'s conditions with this writer's edits (``snapshot`` -> ``local``)
    applied per condition type; check :func:`conflicting_conditions` first."""
    return edit_list(server, snapshot, local, _condition_type)


def _condition_type(item: Any) -> Any:
    return item.get("type") if isinstance(item, dict) else item
