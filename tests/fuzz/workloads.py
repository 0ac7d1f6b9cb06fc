"""Workload kinds: Deployment, StatefulSet, DaemonSet, ReplicaSet (apps/v1), Job and
CronJob (batch/v1). Selectors match their template's labels."""

from __future__ import annotations

from hypothesis import strategies as st

from .common import dns_label, invalid, memory, metadata, pod_template, selector_labels, updates
from .spec import Change, KindSpec, Obj, changes, drop, put, put_drawn

_IMAGES = st.sampled_from(["nginx:1.27", "busybox:1.37"])
_INT_OR_PERCENT = st.one_of(st.integers(0, 3), st.sampled_from(["25%", "50%", "0%", "100%"]))


def _workload(
    api_version: str, kind: str, spec: st.SearchStrategy[Obj], restart: tuple[str, ...]
) -> st.SearchStrategy[Obj]:
    """An object whose spec has ``selector.matchLabels`` and a ``template`` labelled so."""

    def build(sel: dict[str, str]) -> st.SearchStrategy[Obj]:
        return st.builds(
            lambda meta, template, extra: {
                "apiVersion": api_version,
                "kind": kind,
                "metadata": meta,
                "spec": {"selector": {"matchLabels": sel}, "template": template, **extra},
            },
            metadata(),
            pod_template(sel, restart),
            spec,
        )

    return selector_labels().flatmap(build)


def _mismatch(obj: Obj) -> None:
    obj["spec"]["selector"] = {"matchLabels": {"other": "x"}}


def _surge_zero(obj: Obj) -> None:
    obj["spec"]["strategy"] = {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0},
    }


SELECTOR_INVALID: tuple[Change, ...] = (
    Change("spec.selector matches no template label", _mismatch),
    put("spec.selector", {}),
    put("spec.selector", {"matchExpressions": [{"key": "a", "operator": "Bogus"}]}),
    put("spec.selector", {"matchExpressions": [{"key": "a", "operator": "In"}]}),
    drop("spec.template.spec.containers"),
    put("spec.template.spec.containers.0.ports", [{"containerPort": -1}]),
    put("spec.template.metadata.labels", {"bad key!": "v"}),
)
"""Invalid selectors and templates, for every kind with ``selector`` and ``template``."""

TEMPLATE_UPDATES: st.SearchStrategy[Change] = st.one_of(
    put_drawn("spec.template.spec.containers.0.image", _IMAGES),
    changes(put("spec.selector.matchLabels", {"changed": "yes"})),
)

_DEPLOYMENT_SPEC = st.fixed_dictionaries(
    {},
    optional={
        "replicas": st.integers(0, 5),
        "minReadySeconds": st.integers(0, 30),
        "revisionHistoryLimit": st.integers(0, 10),
        "progressDeadlineSeconds": st.integers(31, 600),
        "paused": st.booleans(),
        "strategy": st.one_of(
            st.just({"type": "Recreate"}),
            st.fixed_dictionaries(
                {"type": st.just("RollingUpdate")},
                optional={
                    "rollingUpdate": st.fixed_dictionaries(
                        {"maxSurge": st.sampled_from([1, "25%", 2])},
                        optional={"maxUnavailable": _INT_OR_PERCENT},
                    )
                },
            ),
        ),
    },
)

DEPLOYMENT = KindSpec(
    "Deployment",
    "apps/v1",
    "deployments",
    True,
    _workload("apps/v1", "Deployment", _DEPLOYMENT_SPEC, ("Always",)),
    invalid(
        *SELECTOR_INVALID,
        put("spec.replicas", -1),
        put("spec.minReadySeconds", -1),
        put("spec.revisionHistoryLimit", -1),
        put("spec.progressDeadlineSeconds", 0),
        put("spec.strategy", {"type": "Bogus"}),
        put("spec.strategy", {"type": "Recreate", "rollingUpdate": {"maxSurge": 1}}),
        put("spec.strategy", {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "200x"}}),
        put(
            "spec.strategy", {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "150%"}}
        ),
        Change("spec.strategy maxSurge 0 and maxUnavailable 0", _surge_zero),
        put("spec.template.spec.restartPolicy", "Never"),
    ),
    updates(
        TEMPLATE_UPDATES,
        put_drawn("spec.replicas", st.integers(0, 9)),
        put_drawn("spec.paused", st.booleans()),
        changes(put("spec.strategy", {"type": "Recreate"})),
    ),
)

_VOLUME_CLAIM = st.builds(
    lambda name, size: {
        "metadata": {"name": name},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}},
    },
    dns_label(4),
    memory(),
)

_STATEFUL_SPEC = st.fixed_dictionaries(
    {},
    optional={
        "replicas": st.integers(0, 5),
        "serviceName": dns_label(),
        "podManagementPolicy": st.sampled_from(["OrderedReady", "Parallel"]),
        "updateStrategy": st.one_of(
            st.just({"type": "OnDelete"}),
            st.integers(0, 3).map(
                lambda p: {"type": "RollingUpdate", "rollingUpdate": {"partition": p}}
            ),
        ),
        "volumeClaimTemplates": st.lists(_VOLUME_CLAIM, max_size=1),
        "minReadySeconds": st.integers(0, 30),
        "persistentVolumeClaimRetentionPolicy": st.fixed_dictionaries(
            {},
            optional={
                "whenDeleted": st.sampled_from(["Retain", "Delete"]),
                "whenScaled": st.sampled_from(["Retain", "Delete"]),
            },
        ),
    },
)

STATEFUL_SET = KindSpec(
    "StatefulSet",
    "apps/v1",
    "statefulsets",
    True,
    _workload("apps/v1", "StatefulSet", _STATEFUL_SPEC, ("Always",)),
    invalid(
        *SELECTOR_INVALID,
        put("spec.replicas", -1),
        put("spec.podManagementPolicy", "Bogus"),
        put("spec.updateStrategy", {"type": "Bogus"}),
        put("spec.updateStrategy", {"type": "RollingUpdate", "rollingUpdate": {"partition": -1}}),
        put("spec.persistentVolumeClaimRetentionPolicy", {"whenDeleted": "Bogus"}),
        put("spec.ordinals", {"start": -1}),
        put("spec.template.spec.restartPolicy", "OnFailure"),
    ),
    updates(
        TEMPLATE_UPDATES,
        put_drawn("spec.replicas", st.integers(0, 9)),
        changes(
            put("spec.podManagementPolicy", "Parallel"),
            put("spec.serviceName", "changed"),
            put("spec.updateStrategy", {"type": "OnDelete"}),
            put("spec.volumeClaimTemplates", []),
        ),
    ),
)

_DAEMON_SPEC = st.fixed_dictionaries(
    {},
    optional={
        "minReadySeconds": st.integers(0, 30),
        "revisionHistoryLimit": st.integers(0, 10),
        "updateStrategy": st.one_of(
            st.just({"type": "OnDelete"}),
            st.sampled_from([1, "10%"]).map(
                lambda m: {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": m}}
            ),
        ),
    },
)

DAEMON_SET = KindSpec(
    "DaemonSet",
    "apps/v1",
    "daemonsets",
    True,
    _workload("apps/v1", "DaemonSet", _DAEMON_SPEC, ("Always",)),
    invalid(
        *SELECTOR_INVALID,
        put("spec.updateStrategy", {"type": "Bogus"}),
        put(
            "spec.updateStrategy",
            {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 0}},
        ),
        put("spec.minReadySeconds", -1),
        put("spec.template.spec.restartPolicy", "OnFailure"),
    ),
    updates(
        TEMPLATE_UPDATES,
        put_drawn("spec.minReadySeconds", st.integers(0, 9)),
        changes(put("spec.updateStrategy", {"type": "OnDelete"})),
    ),
)

REPLICA_SET = KindSpec(
    "ReplicaSet",
    "apps/v1",
    "replicasets",
    True,
    _workload(
        "apps/v1",
        "ReplicaSet",
        st.fixed_dictionaries(
            {}, optional={"replicas": st.integers(0, 5), "minReadySeconds": st.integers(0, 30)}
        ),
        ("Always",),
    ),
    invalid(
        *SELECTOR_INVALID,
        put("spec.replicas", -1),
        put("spec.minReadySeconds", -1),
        put("spec.template.spec.restartPolicy", "Never"),
    ),
    updates(TEMPLATE_UPDATES, put_drawn("spec.replicas", st.integers(0, 9))),
)


def _job_spec() -> st.SearchStrategy[Obj]:
    return st.builds(
        lambda template, extra: {"template": template, **extra},
        selector_labels().flatmap(lambda sel: pod_template(sel, ("OnFailure", "Never"))),
        st.fixed_dictionaries(
            {},
            optional={
                "parallelism": st.integers(0, 4),
                "completions": st.integers(1, 5),
                "backoffLimit": st.integers(0, 6),
                "activeDeadlineSeconds": st.integers(1, 600),
                "ttlSecondsAfterFinished": st.integers(0, 600),
                "suspend": st.booleans(),
            },
        ),
    ).map(_job_mode)


def _job_mode(spec: Obj) -> Obj:
    # Indexed completion needs completions (ValidateJobSpec): only then is it drawn.
    if "completions" in spec and spec["completions"] % 2 == 0:
        spec["completionMode"] = "Indexed"
    return spec


JOB = KindSpec(
    "Job",
    "batch/v1",
    "jobs",
    True,
    st.builds(
        lambda meta, spec: {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": meta,
            "spec": spec,
        },
        metadata(),
        _job_spec(),
    ),
    invalid(
        put("spec.template.spec.restartPolicy", "Always"),
        put("spec.parallelism", -1),
        put("spec.completions", -1),
        put("spec.backoffLimit", -1),
        put("spec.activeDeadlineSeconds", 0),
        put("spec.ttlSecondsAfterFinished", -1),
        put("spec.completionMode", "Bogus"),
        Change("spec.completionMode Indexed without completions", lambda o: _indexed(o)),
        put("spec.manualSelector", True),
        drop("spec.template.spec.containers"),
    ),
    updates(
        put_drawn("spec.parallelism", st.integers(0, 9)),
        put_drawn("spec.completions", st.integers(1, 9)),
        put_drawn("spec.template.spec.containers.0.image", _IMAGES),
        put_drawn("spec.activeDeadlineSeconds", st.integers(1, 99)),
        put_drawn("spec.suspend", st.booleans()),
        changes(put("spec.backoffLimit", 1), put("spec.selector.matchLabels", {"x": "y"})),
    ),
)


def _indexed(obj: Obj) -> None:
    obj["spec"]["completionMode"] = "Indexed"
    obj["spec"].pop("completions", None)


_SCHEDULES = st.sampled_from(["*/5 * * * *", "0 0 * * *", "@hourly", "30 2 * * 1-5", "@daily"])

_CRON_SPEC = st.builds(
    lambda schedule, job, extra: {"schedule": schedule, "jobTemplate": {"spec": job}, **extra},
    _SCHEDULES,
    _job_spec(),
    st.fixed_dictionaries(
        {},
        optional={
            "concurrencyPolicy": st.sampled_from(["Allow", "Forbid", "Replace"]),
            "suspend": st.booleans(),
            "successfulJobsHistoryLimit": st.integers(0, 5),
            "failedJobsHistoryLimit": st.integers(0, 5),
            "startingDeadlineSeconds": st.integers(10, 600),
            "timeZone": st.sampled_from(["Etc/UTC", "Europe/Paris"]),
        },
    ),
)

CRON_JOB = KindSpec(
    "CronJob",
    "batch/v1",
    "cronjobs",
    True,
    st.builds(
        lambda meta, spec: {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "metadata": meta,
            "spec": spec,
        },
        metadata(),
        _CRON_SPEC,
    ),
    invalid(
        put("spec.schedule", "not a cron"),
        put("spec.schedule", "TZ=UTC * * * * *"),
        drop("spec.schedule"),
        put("spec.concurrencyPolicy", "Bogus"),
        put("spec.successfulJobsHistoryLimit", -1),
        put("spec.startingDeadlineSeconds", -1),
        put("spec.timeZone", "Mars/Base"),
        put("metadata.name", "n" * 53),
        put("spec.jobTemplate.spec.template.spec.restartPolicy", "Always"),
    ),
    updates(
        put_drawn("spec.schedule", _SCHEDULES),
        put_drawn("spec.suspend", st.booleans()),
        put_drawn("spec.jobTemplate.spec.template.spec.containers.0.image", _IMAGES),
        changes(put("spec.timeZone", "Asia/Tokyo")),
    ),
)

KINDS: tuple[KindSpec, ...] = (
    DEPLOYMENT,
    STATEFUL_SET,
    DAEMON_SET,
    REPLICA_SET,
    JOB,
    CRON_JOB,
)
