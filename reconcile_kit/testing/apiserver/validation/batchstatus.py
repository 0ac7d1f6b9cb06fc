"""A Job's status updates (kubernetes pkg/apis/batch/validation validateJobStatus and
ValidateJobStatusUpdate, with the options pkg/registry/batch/job getStatusValidationOptions
sets under JobManagedBy, on by default in 1.32): counts, terminal conditions and the times
and counters that go with them; a rule about a field runs when that field changes.

Left out: the format of completedIndexes and failedIndexes and their overlap.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from .. import errors
from . import gorender
from .common import Causes, as_dict, as_list, duplicate, invalid, nonnegative, required, semantic

_F = "status"


def _true(status: dict[str, Any], kind: str) -> bool:
    return any(
        as_dict(c).get("type") == kind and as_dict(c).get("status") == "True"
        for c in as_list(status.get("conditions"))
    )


def _time(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00")) if value else None
    except ValueError:
        return None


def _go_time(value: Any) -> str:
    """metav1.Time as its String() (Go's time.Time.String, in UTC)."""
    parsed = _time(value)
    return parsed.strftime("%Y-%m-%d %H:%M:%S +0000 UTC") if parsed else "null"


def _conditions(detail: str) -> dict[str, str]:
    """field.Invalid(status.conditions, field.OmitValueType{}, detail): no value shown."""
    return errors.cause("FieldValueInvalid", f"{_F}.conditions", f"Invalid value: {detail}")


def _uncounted(status: dict[str, Any]) -> Causes:
    causes: Causes = []
    seen: set[str] = set()
    uncounted = as_dict(status.get("uncountedTerminatedPods"))
    for kind in ("succeeded", "failed"):
        for i, uid in enumerate(as_list(uncounted.get(kind))):
            path = f"{_F}.uncountedTerminatedPods.{kind}[{i}]"
            if not uid:
                causes.append(invalid(path, "", "must not be empty"))
            elif uid in seen:
                causes.append(duplicate(path, str(uid)))
            seen.add(str(uid))
    return causes


def _render_uncounted(value: Any) -> str:
    value = as_dict(value)

    def uids(items: Any) -> str:
        rendered = gorender.strings(items)
        return rendered.replace("[]string", "[]types.UID")

    return (
        f"batch.UncountedTerminatedPods{{Succeeded:{uids(value.get('succeeded'))},"
        f" Failed:{uids(value.get('failed'))}}}"
    )


class _Change:
    """What changed between the stored status and the new one."""

    def __init__(self, new: dict[str, Any], old: dict[str, Any]) -> None:
        self.new, self.old = new, old

    def field(self, key: str) -> bool:
        return bool(semantic(self.new.get(key)) != semantic(self.old.get(key)))

    def condition(self, kind: str) -> bool:
        return _true(self.new, kind) != _true(self.old, kind)

    def finished(self) -> bool:
        return _finished(self.new) != _finished(self.old)


def _finished(status: dict[str, Any]) -> bool:
    return _true(status, "Complete") or _true(status, "Failed")


def _condition_causes(status: dict[str, Any], change: _Change) -> Causes:
    complete, failed = _true(status, "Complete"), _true(status, "Failed")
    target = _true(status, "FailureTarget")
    criteria = _true(status, "SuccessCriteriaMet")
    causes: Causes = []
    if (change.condition("Complete") or change.condition("Failed")) and complete and failed:
        causes.append(_conditions("cannot set Complete=True and Failed=true conditions"))
    if (change.condition("Complete") or change.condition("FailureTarget")) and complete and target:
        causes.append(_conditions("cannot set Complete=True and FailureTarget=true conditions"))
    return (
        causes
        + _time_causes(status, change, complete)
        + [
            _conditions(detail)
            for rule, detail in (
                (
                    (change.condition("Failed") or change.field("failedIndexes"))
                    and failed
                    and not target,
                    "cannot set Failed=True condition without the FailureTarget=true condition",
                ),
                (
                    (change.condition("Complete") or change.condition("SuccessCriteriaMet"))
                    and complete
                    and not criteria,
                    "cannot set Complete=True condition without the SuccessCriteriaMet=true"
                    " condition",
                ),
            )
            if rule
        ]
    )


def _time_causes(status: dict[str, Any], change: _Change, complete: bool) -> Causes:
    completion, start = status.get("completionTime"), status.get("startTime")
    completion_changed = change.field("completionTime")
    causes: Causes = []
    if (change.condition("Complete") or completion_changed) and completion and not complete:
        detail = "cannot set completionTime when there is no Complete=True condition"
        causes.append(invalid(f"{_F}.completionTime", _go_time(completion), detail, rendered=True))
    if (change.condition("Complete") or completion_changed) and not completion and complete:
        detail = "completionTime is required for Complete jobs"
        causes.append(required(f"{_F}.completionTime", detail))
    if change.field("startTime") or completion_changed:
        begun, ended = _time(start), _time(completion)
        if begun and ended and ended < begun:
            detail = "completionTime cannot be set before startTime"
            causes.append(
                invalid(f"{_F}.completionTime", _go_time(completion), detail, rendered=True)
            )
    return causes


def _finished_causes(status: dict[str, Any], spec: dict[str, Any], change: _Change) -> Causes:
    finished = _finished(status)
    active = status.get("active") or 0
    causes: Causes = []
    if (change.finished() or change.field("active")) and active > 0 and finished:
        causes.append(invalid(f"{_F}.active", active, "active>0 is invalid for finished job"))
    start_rule = change.finished() or change.field("startTime")
    if start_rule and finished and not status.get("startTime"):
        detail = "startTime is required for finished job"
        causes.append(required(f"{_F}.startTime", detail))
    uncounted = as_dict(status.get("uncountedTerminatedPods"))
    pending = as_list(uncounted.get("failed")) + as_list(uncounted.get("succeeded"))
    if (change.finished() or change.field("uncountedTerminatedPods")) and finished and pending:
        detail = "uncountedTerminatedPods needs to be empty for finished job"
        rendered = _render_uncounted(uncounted)
        causes.append(invalid(f"{_F}.uncountedTerminatedPods", rendered, detail, rendered=True))
    return causes + _index_causes(status, spec, change) + _pods_causes(status, change, finished)


def _index_causes(status: dict[str, Any], spec: dict[str, Any], change: _Change) -> Causes:
    causes: Causes = []
    completed = str(status.get("completedIndexes") or "")
    if change.field("completedIndexes") and completed and spec.get("completionMode") != "Indexed":
        detail = "cannot set non-empty completedIndexes when non-indexed completion mode"
        causes.append(invalid(f"{_F}.completedIndexes", completed, detail))
    failed = status.get("failedIndexes")
    no_limit = spec.get("backoffLimitPerIndex") is None
    if change.field("failedIndexes") and no_limit and failed is not None:
        detail = "cannot set non-null failedIndexes when backoffLimitPerIndex is null"
        causes.append(invalid(f"{_F}.failedIndexes", str(failed), detail))
    return causes


def _pods_causes(status: dict[str, Any], change: _Change, finished: bool) -> Causes:
    causes: Causes = []
    terminating = status.get("terminating")
    terminating_rule = change.finished() or change.field("terminating")
    if terminating_rule and finished and isinstance(terminating, int) and terminating > 0:
        detail = "terminating>0 is invalid for finished job"
        causes.append(invalid(f"{_F}.terminating", terminating, detail))
    ready, active = status.get("ready"), status.get("active") or 0
    ready_rule = change.field("ready") or change.field("active")
    if ready_rule and isinstance(ready, int) and ready > active:
        detail = "cannot set more ready pods than active"
        causes.append(invalid(f"{_F}.ready", ready, detail))
    return causes


def _criteria_causes(status: dict[str, Any], spec: dict[str, Any]) -> Causes:
    criteria = _true(status, "SuccessCriteriaMet")
    rules = (
        (
            criteria and _true(status, "Failed"),
            "cannot set SuccessCriteriaMet=True and Failed=true conditions",
        ),
        (
            criteria and _true(status, "FailureTarget"),
            "cannot set SuccessCriteriaMet=True and FailureTarget=true conditions",
        ),
        (
            spec.get("successPolicy") is not None and not criteria and _true(status, "Complete"),
            "cannot set Complete=True for Job with SuccessPolicy unless SuccessCriteriaMet=True",
        ),
    )
    return [_conditions(detail) for rule, detail in rules if rule]


def _counts(status: dict[str, Any]) -> Causes:
    causes: Causes = []
    for key in ("active", "succeeded", "failed", "ready", "terminating"):
        causes += nonnegative(f"{_F}.{key}", status.get(key))
    return causes + _uncounted(status)


def _transition_causes(new: dict[str, Any], old: dict[str, Any], spec: dict[str, Any]) -> Causes:
    """ValidateJobStatusUpdate's rules on the change itself."""
    causes = [
        _conditions(f"cannot disable the terminal {kind}=True condition")
        for kind in ("Failed", "Complete", "FailureTarget")
        if _true(old, kind) and not _true(new, kind)
    ]
    for key, always in (
        ("failed", True),
        (
            "succeeded",
            spec.get("completionMode") != "Indexed"
            or spec.get("completions") != spec.get("parallelism"),
        ),
    ):
        now, before = new.get(key) or 0, old.get(key) or 0
        if always and now < before:
            causes.append(invalid(f"{_F}.{key}", now, f"cannot decrease the {key} counter"))
    completion, old_completion = new.get("completionTime"), old.get("completionTime")
    if completion and old_completion and _time(completion) != _time(old_completion):
        detail = "completionTime cannot be mutated"
        causes.append(invalid(f"{_F}.completionTime", _go_time(completion), detail, rendered=True))
    start, old_start = new.get("startTime"), old.get("startTime")
    if old_start and _time(start) != _time(old_start) and not spec.get("suspend"):
        detail = "startTime cannot be removed for unsuspended job"
        causes.append(required(f"{_F}.startTime", detail))
    return causes + _criteria_transition(new, old)


def _criteria_transition(new: dict[str, Any], old: dict[str, Any]) -> Causes:
    causes: Causes = []
    was, now = _true(old, "SuccessCriteriaMet"), _true(new, "SuccessCriteriaMet")
    if was and not now:
        causes.append(_conditions("cannot disable the SuccessCriteriaMet=True condition"))
    if _true(old, "Complete") and not was and now:
        detail = "cannot set SuccessCriteriaMet=True for Job already has Complete=true conditions"
        causes.append(_conditions(detail))
    return causes


def job_status_causes(job: dict[str, Any], old_job: dict[str, Any]) -> Causes:
    """The causes of a Job's /status update."""
    status, old = as_dict(job.get("status")), as_dict(old_job.get("status"))
    spec = as_dict(job.get("spec"))
    change = _Change(status, old)
    causes = _counts(status)
    causes += _condition_causes(status, change)
    causes += _finished_causes(status, spec, change)
    causes += _criteria_causes(status, spec)
    return causes + _transition_causes(status, old, spec)
