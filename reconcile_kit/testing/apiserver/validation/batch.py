"""Validation of batch/v1 kinds (kubernetes pkg/apis/batch/validation with the registry
strategies of pkg/registry/batch): Jobs (generated selector, counts, restart policy, the
template, an Indexed Job's pod hostnames; on update completions (but an Indexed Job's,
with its parallelism), selector and template immutable) and CronJobs (schedule, time zone,
concurrency policy, the job template, a name of at most 52 characters).

The immutable template's message prints the new internal template as Go's ``%#v`` does
(gorender.go_value), but for the heap address of a set pointer and for quantities, which
are parsed from their stored (canonical) text rather than from the request's.

Left out: pod failure and success policies' rules, managedBy, the scheduling directives a
suspended Job may change (Job status rules: batchstatus.py).
"""

from __future__ import annotations

from typing import Any

from ....meta.validation import dns1123_label_errors
from . import gorender, selectors
from .batchstatus import job_status_causes
from .common import (
    Causes,
    Validator,
    Write,
    as_dict,
    immutable,
    invalid,
    nonnegative,
    not_supported,
    required,
    semantic,
)
from .cron import CronError, parse_standard, time_zone_errors
from .podspec import template_causes

_LEGACY_UID, _LEGACY_NAME = "controller-uid", "job-name"
_UID, _NAME = "batch.kubernetes.io/controller-uid", "batch.kubernetes.io/job-name"
_RESTART = ("OnFailure", "Never")
_COUNTS = (
    "parallelism",
    "completions",
    "activeDeadlineSeconds",
    "backoffLimit",
    "ttlSecondsAfterFinished",
    "backoffLimitPerIndex",
    "maxFailedIndexes",
)


def _has_label(labels: dict[str, Any], key: str, value: str) -> Causes:
    """ValidateHasLabel on spec.template.metadata: the label's path, and the whole labels
    map as the invalid value."""
    field = f"spec.template.metadata.labels[{key}]"
    if key not in labels:
        return [required(field, f"must be '{value}'")]
    if labels[key] != value:
        shown = gorender.string_map(labels)
        return [invalid(field, shown, f"must be '{value}'", rendered=True)]
    return []


def generated_selector_causes(job: dict[str, Any]) -> Causes:
    """The Job rules that read its uid (validateGeneratedSelector): what an update that
    sets another uid also gets, between the uid's two "field is immutable" causes."""
    return _generated_selector(job)


def _generated_selector(job: dict[str, Any]) -> Causes:
    """validateGeneratedSelector: without manualSelector, the template carries the
    generated labels and the selector selects exactly them."""
    meta, spec = as_dict(job.get("metadata")), as_dict(job.get("spec"))
    if spec.get("manualSelector") is True or spec.get("selector") is None:
        return []
    uid, name = str(meta.get("uid") or ""), str(meta.get("name") or "")
    causes = [] if uid else [required("metadata.uid")]
    labels = as_dict(as_dict(as_dict(spec.get("template")).get("metadata")).get("labels"))
    for key, value in ((_LEGACY_UID, uid), (_LEGACY_NAME, name), (_UID, uid), (_NAME, name)):
        causes += _has_label(labels, key, value)
    expected = {_UID: uid, _NAME: name, _LEGACY_UID: uid, _LEGACY_NAME: name}
    selector = spec["selector"]
    if selectors.convertible(selector) and not selectors.matches(selector, expected):
        rendered = gorender.label_selector(selector)
        detail = "`selector` not auto-generated"
        causes.append(invalid("spec.selector", rendered, detail, rendered=True))
    return causes


def _restart_policy(template: dict[str, Any], field: str, failure_policy: bool) -> Causes:
    policy = as_dict(template.get("spec")).get("restartPolicy") or ""
    path = f"{field}.spec.restartPolicy"
    if policy in ("Always", ""):
        return [required(path, 'valid values: "OnFailure", "Never"')]
    if policy not in _RESTART:
        return [not_supported(path, policy, _RESTART)]
    if failure_policy and policy != "Never":
        detail = 'only "Never" is supported when podFailurePolicy is specified'
        return [invalid(path, policy, detail)]
    return []


def _job_spec(spec: dict[str, Any], field: str) -> Causes:
    """validateJobSpec: counts non-negative, completion mode, the pod replacement policy,
    the template, its restart policy."""
    causes: Causes = []
    for key in _COUNTS:
        causes += nonnegative(f"{field}.{key}", spec.get(key))
    per_index, max_failed = spec.get("backoffLimitPerIndex"), spec.get("maxFailedIndexes")
    if max_failed is not None and per_index is None:
        detail = "when maxFailedIndexes is specified"
        causes.append(required(f"{field}.backoffLimitPerIndex", detail))
    mode = spec.get("completionMode")
    if mode is not None and mode not in ("NonIndexed", "Indexed"):
        causes.append(not_supported(f"{field}.completionMode", mode, ("NonIndexed", "Indexed")))
    if mode == "Indexed":
        causes += _indexed_limits(spec, field)
    if mode in (None, "NonIndexed"):
        for key, value in (("backoffLimitPerIndex", per_index), ("maxFailedIndexes", max_failed)):
            if value is not None:
                causes.append(invalid(f"{field}.{key}", value, "requires indexed completion mode"))
    replacement = spec.get("podReplacementPolicy")
    if replacement is not None:
        allowed = ("Failed",) if spec.get("podFailurePolicy") else ("Failed", "TerminatingOrFailed")
        if replacement not in allowed:
            causes.append(not_supported(f"{field}.podReplacementPolicy", replacement, allowed))
    template = as_dict(spec.get("template"))
    causes += template_causes(template, f"{field}.template")
    return causes + _restart_policy(
        template, f"{field}.template", spec.get("podFailurePolicy") is not None
    )


_INDEXED_MAX = 100_000
"""maxParallelismForIndexedJob, maxFailedIndexesForIndexedJob and completionsSoftLimit."""
_HIGH_COMPLETIONS_MAX = 10_000
"""parallelismLimitForHighCompletions and maxFailedIndexesLimitForHighCompletions."""


def _indexed_limits(spec: dict[str, Any], field: str) -> Causes:
    """validateJobSpec's rules for an Indexed Job: completions required, the limits of
    parallelism and maxFailedIndexes (lower above 100,000 completions with a backoff limit
    per index)."""
    completions, parallelism = spec.get("completions"), spec.get("parallelism")
    max_failed = spec.get("maxFailedIndexes")
    causes: Causes = []
    if completions is None:
        causes.append(required(f"{field}.completions", "when completion mode is Indexed"))
    if isinstance(parallelism, int) and parallelism > _INDEXED_MAX:
        detail = f"must be less than or equal to {_INDEXED_MAX} when completion mode is Indexed"
        causes.append(invalid(f"{field}.parallelism", parallelism, detail))
    if isinstance(completions, int) and isinstance(max_failed, int) and max_failed > completions:
        detail = "must be less than or equal to completions"
        causes.append(invalid(f"{field}.maxFailedIndexes", max_failed, detail))
    if isinstance(max_failed, int) and max_failed > _INDEXED_MAX:
        detail = f"must be less than or equal to {_INDEXED_MAX}"
        causes.append(invalid(f"{field}.maxFailedIndexes", max_failed, detail))
    high = isinstance(completions, int) and completions > _INDEXED_MAX
    if high and spec.get("backoffLimitPerIndex") is not None:
        above = f"when completions are above {_INDEXED_MAX} and used with backoff limit per index"
        if max_failed is None:
            detail = f"must be specified when completions is above {_INDEXED_MAX}"
            causes.append(required(f"{field}.maxFailedIndexes", detail))
        if isinstance(parallelism, int) and parallelism > _HIGH_COMPLETIONS_MAX:
            detail = f"must be less than or equal to {_HIGH_COMPLETIONS_MAX} {above}"
            causes.append(invalid(f"{field}.parallelism", parallelism, detail))
        if isinstance(max_failed, int) and max_failed > _HIGH_COMPLETIONS_MAX:
            detail = f"must be less than or equal to {_HIGH_COMPLETIONS_MAX} {above}"
            causes.append(invalid(f"{field}.maxFailedIndexes", max_failed, detail))
    return causes


def _selector(spec: dict[str, Any]) -> Causes:
    """ValidateJobSpec's selector: present, valid, and selecting the template."""
    selector = spec.get("selector")
    if selector is None:
        causes = [required("spec.selector")]
    else:
        causes = selectors.selector_causes(selector, "spec.selector")
    if selectors.convertible(selector):
        template = as_dict(spec.get("template"))
        labels = as_dict(template.get("metadata")).get("labels")
        if not selectors.matches(selector, labels):
            detail = "`selector` does not match template `labels`"
            rendered = gorender.string_map(labels)
            field = "spec.template.metadata.labels"
            causes.append(invalid(field, rendered, detail, rendered=True))
    return causes


def _job(job: dict[str, Any]) -> Causes:
    """ValidateJob (after the metadata)."""
    spec = as_dict(job.get("spec"))
    causes = _generated_selector(job) + _job_spec(spec, "spec") + _selector(spec)
    return causes + _indexed_hostname(job)


def _indexed_hostname(job: dict[str, Any]) -> Causes:
    """ValidateJob: an Indexed Job's last pod hostname (``<name>-<completions-1>``) must be
    a DNS label."""
    spec, name = as_dict(job.get("spec")), str(as_dict(job.get("metadata")).get("name") or "")
    completions = spec.get("completions")
    if spec.get("completionMode") != "Indexed" or not isinstance(completions, int):
        return []
    hostname = f"{name}-{completions - 1}"
    if completions <= 0 or not dns1123_label_errors(hostname):
        return []
    detail = f"will not able to create pod with invalid DNS label: {hostname}"
    return [invalid("metadata.name", name, detail)]


def _completions_update(spec: dict[str, Any], old: dict[str, Any]) -> Causes:
    """validateCompletions: immutable, but for an Indexed Job, whose completions change
    with its parallelism (elastic Indexed Jobs)."""
    completions = spec.get("completions")
    if spec.get("completionMode") != "Indexed":
        shown = "null" if completions is None else str(completions)
        return immutable("spec.completions", completions, old.get("completions"), shown)
    if completions is None or completions == old.get("completions"):
        return []
    if completions != spec.get("parallelism"):
        detail = "can only be modified in tandem with spec.parallelism"
        return [invalid("spec.completions", completions, detail)]
    return []


def _job_update(spec: dict[str, Any], old: dict[str, Any]) -> Causes:
    """ValidateJobSpecUpdate's immutable fields (the spec rules run again first)."""
    causes = _job_spec(spec, "spec") + _selector(spec) + _completions_update(spec, old)
    rendered = gorender.label_selector(spec.get("selector"))
    causes += immutable(
        "spec.selector", semantic(spec.get("selector")), semantic(old.get("selector")), rendered
    )
    template, old_template = semantic(spec.get("template")), semantic(old.get("template"))
    # Go prints the whole internal PodTemplateSpec, set pointers as their (random) address.
    rendered = gorender.go_value(spec.get("template"), "core.PodTemplateSpec")
    causes += immutable("spec.template", template, old_template, rendered)
    for key in (
        "completionMode",
        "podFailurePolicy",
        "backoffLimitPerIndex",
        "managedBy",
        "successPolicy",
    ):
        value = spec.get(key)
        shown = f'"{value}"' if isinstance(value, str) else "null" if value is None else "{...}"
        causes += immutable(f"spec.{key}", semantic(value), semantic(old.get(key)), shown)
    return causes


def _job_write(write: Write) -> Causes:
    if write.subresource == "status" and write.old is not None:
        return job_status_causes(write.obj, write.old)
    if write.subresource:
        return []
    causes = _job(write.obj)
    if write.old is None:
        return causes
    spec, old = as_dict(write.obj.get("spec")), as_dict(write.old.get("spec"))
    return causes + _job_update(spec, old)


def _schedule(spec: dict[str, Any], old: dict[str, Any] | None) -> Causes:
    schedule = str(spec.get("schedule") or "")
    if not schedule:
        return [required("spec.schedule")]
    causes: Causes = []
    try:
        parse_standard(schedule)
    except CronError as error:
        causes.append(invalid("spec.schedule", schedule, str(error)))
    allow_tz = old is not None and "TZ" in str(old.get("schedule") or "")
    if allow_tz and "TZ" in schedule and spec.get("timeZone") is not None:
        detail = "cannot use both timeZone field and TZ or CRON_TZ in schedule"
        causes.append(invalid("spec.schedule", schedule, detail))
    elif not allow_tz and "TZ" in schedule:
        detail = "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"
        causes.append(invalid("spec.schedule", schedule, detail))
    return causes


def _job_template(template: dict[str, Any]) -> Causes:
    """ValidateJobTemplateSpec: the job spec; the selector is generated, never set."""
    field = "spec.jobTemplate.spec"
    spec = as_dict(template.get("spec"))
    causes = _job_spec(spec, field)
    if spec.get("selector") is not None:
        rendered = gorender.label_selector(spec["selector"])
        detail = "`selector` will be auto-generated"
        causes.append(invalid(f"{field}.selector", rendered, detail, rendered=True))
    if spec.get("manualSelector") is True:
        causes.append(not_supported(f"{field}.manualSelector", True, ("nil", "false")))
    return causes


def _cronjob(spec: dict[str, Any], old: dict[str, Any] | None) -> Causes:
    """validateCronJobSpec."""
    causes = _schedule(spec, old)
    causes += nonnegative("spec.startingDeadlineSeconds", spec.get("startingDeadlineSeconds"))
    zone = spec.get("timeZone")
    if zone is not None and (old is None or old.get("timeZone") != zone):
        causes += [invalid("spec.timeZone", str(zone), m) for m in time_zone_errors(str(zone))]
    policy = spec.get("concurrencyPolicy") or ""
    supported = ("Allow", "Forbid", "Replace")
    if not policy:
        causes.append(required("spec.concurrencyPolicy"))
    elif policy not in supported:
        causes.append(not_supported("spec.concurrencyPolicy", policy, supported))
    causes += _job_template(as_dict(spec.get("jobTemplate")))
    for key in ("successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
        causes += nonnegative(f"spec.{key}", spec.get(key))
    return causes


_CRONJOB_NAME_LIMIT = 52  # a Job's name is the CronJob's and an 11-character suffix


def _cronjob_write(write: Write) -> Causes:
    if write.subresource:
        return []
    old = None if write.old is None else as_dict(write.old.get("spec"))
    causes = _cronjob(as_dict(write.obj.get("spec")), old)
    name = str(as_dict(write.obj.get("metadata")).get("name") or "")
    if write.old is None and len(name) > _CRONJOB_NAME_LIMIT:
        # ValidateCronJobCreate only: an update does not check the name again.
        detail = f"must be no more than {_CRONJOB_NAME_LIMIT} characters"
        causes.append(invalid("metadata.name", name, detail))
    return causes


VALIDATORS: dict[tuple[str, str], Validator] = {
    ("batch", "jobs"): _job_write,
    ("batch", "cronjobs"): _cronjob_write,
}
