"""Workload validation as kube-apiserver runs it (issue 28; kubernetes pkg/apis/apps/validation
and pkg/apis/batch/validation, with the registry strategies' immutable selectors): each
refused Deployment, StatefulSet, DaemonSet, ReplicaSet, Job or CronJob, or change, answers
422 with the same causes and message on both backends."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from reconcile_kit.testing.backends import Backend

from .invalid import Cause, causes_of, invalid
from .kube import ok, req

_LABELS = {"app": "x"}
_POD = {"containers": [{"name": "c", "image": "busybox"}]}
_TEMPLATE = {"metadata": {"labels": _LABELS}, "spec": _POD}
_SELECTOR = {"matchLabels": _LABELS}
_OTHER_LABELS_GO = 'map[string]string{"app":"y"}'

KINDS: dict[str, tuple[str, str, str, dict[str, Any]]] = {
    "deployments": (
        "apps/v1",
        "Deployment",
        "apps",
        {"selector": _SELECTOR, "template": _TEMPLATE},
    ),
    "statefulsets": (
        "apps/v1",
        "StatefulSet",
        "apps",
        {"selector": _SELECTOR, "template": _TEMPLATE, "serviceName": "s"},
    ),
    "daemonsets": ("apps/v1", "DaemonSet", "apps", {"selector": _SELECTOR, "template": _TEMPLATE}),
    "replicasets": (
        "apps/v1",
        "ReplicaSet",
        "apps",
        {"selector": _SELECTOR, "template": _TEMPLATE},
    ),
    "jobs": (
        "batch/v1",
        "Job",
        "batch",
        {"template": {"spec": {**_POD, "restartPolicy": "Never"}}},
    ),
    "cronjobs": (
        "batch/v1",
        "CronJob",
        "batch",
        {
            "schedule": "*/5 * * * *",
            "jobTemplate": {"spec": {"template": {"spec": {**_POD, "restartPolicy": "Never"}}}},
        },
    ),
}


def _path(backend: Backend, plural: str) -> str:
    api_version = KINDS[plural][0]
    return f"/apis/{api_version}/namespaces/{backend.namespace}/{plural}"


def _object(plural: str, **spec: Any) -> dict[str, Any]:
    api_version, kind, _, base = KINDS[plural]
    body = copy.deepcopy(base) | spec
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": "w"}, "spec": body}


def _template(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"labels": _LABELS}, "spec": _POD | spec}


_MISMATCH = (
    "FieldValueInvalid",
    "spec.template.metadata.labels",
    f"Invalid value: {_OTHER_LABELS_GO}: `selector` does not match template `labels`",
)
_OTHER_TEMPLATE = {"metadata": {"labels": {"app": "y"}}, "spec": _POD}


def _negative(field: str, value: int = -1) -> Cause:
    return (
        "FieldValueInvalid",
        field,
        f"Invalid value: {value}: must be greater than or equal to 0",
    )


def _always_only(value: str) -> Cause:
    return (
        "FieldValueNotSupported",
        "spec.template.spec.restartPolicy",
        f'Unsupported value: "{value}": supported values: "Always"',
    )


CREATE: list[Any] = [
    pytest.param(
        "deployments", {"replicas": -1}, [_negative("spec.replicas")], id="deployment-replicas"
    ),
    pytest.param(
        "deployments", {"template": _OTHER_TEMPLATE}, [_MISMATCH], id="deployment-selector-mismatch"
    ),
    pytest.param(
        "deployments",
        {"selector": None},
        [
            ("FieldValueRequired", "spec.selector", "Required value"),
            (
                "FieldValueInvalid",
                "spec.template.metadata.labels",
                'Invalid value: map[string]string{"app":"x"}: `selector` does not match'
                " template `labels`",
            ),
        ],
        id="deployment-without-selector",
    ),
    pytest.param(
        "deployments",
        {"selector": {}},
        [
            (
                "FieldValueInvalid",
                "spec.selector",
                "Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil),"
                " MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is"
                " invalid for deployment",
            ),
        ],
        id="deployment-empty-selector",
    ),
    pytest.param(
        "deployments",
        {"template": _template(containers=[])},
        [("FieldValueRequired", "spec.template.spec.containers", "Required value")],
        id="deployment-template-without-containers",
    ),
    pytest.param(
        "deployments",
        {"template": _template(restartPolicy="Never")},
        [_always_only("Never")],
        id="deployment-restart-policy",
    ),
    pytest.param(
        "deployments",
        {"strategy": {"type": "Recreate", "rollingUpdate": {"maxSurge": 1}}},
        [
            (
                "FieldValueForbidden",
                "spec.strategy.rollingUpdate",
                "Forbidden: may not be specified when strategy `type` is 'Recreate'",
            )
        ],
        id="deployment-recreate-with-rolling-update",
    ),
    pytest.param(
        "deployments",
        {"strategy": {"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}}},
        [
            (
                "FieldValueInvalid",
                "spec.strategy.rollingUpdate.maxUnavailable",
                'Invalid value: intstr.IntOrString{Type:0, IntVal:0, StrVal:""}: may not be 0'
                " when `maxSurge` is 0",
            )
        ],
        id="deployment-no-surge-no-unavailable",
    ),
    pytest.param(
        "deployments",
        {"strategy": {"rollingUpdate": {"maxUnavailable": "120%"}}},
        [
            (
                "FieldValueInvalid",
                "spec.strategy.rollingUpdate.maxUnavailable",
                'Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"120%"}: must not'
                " be greater than 100%",
            )
        ],
        id="deployment-unavailable-above-100",
    ),
    pytest.param(
        "deployments",
        {"minReadySeconds": 700},
        [
            (
                "FieldValueInvalid",
                "spec.progressDeadlineSeconds",
                "Invalid value: 600: must be greater than minReadySeconds",
            )
        ],
        id="deployment-progress-deadline",
    ),
    pytest.param(
        "statefulsets", {"replicas": -1}, [_negative("spec.replicas")], id="statefulset-replicas"
    ),
    pytest.param(
        "statefulsets",
        {"template": _OTHER_TEMPLATE},
        [_MISMATCH],
        id="statefulset-selector-mismatch",
    ),
    pytest.param(
        "statefulsets",
        {"podManagementPolicy": "Random"},
        [
            (
                "FieldValueInvalid",
                "spec.podManagementPolicy",
                "Invalid value: \"Random\": must be 'OrderedReady' or 'Parallel'",
            )
        ],
        id="statefulset-pod-management-policy",
    ),
    pytest.param(
        "statefulsets",
        {"template": _template(restartPolicy="OnFailure")},
        [_always_only("OnFailure")],
        id="statefulset-restart-policy",
    ),
    pytest.param(
        "daemonsets", {"template": _OTHER_TEMPLATE}, [_MISMATCH], id="daemonset-selector-mismatch"
    ),
    pytest.param(
        "daemonsets",
        {"updateStrategy": {"type": "Sometimes"}},
        [
            (
                "FieldValueNotSupported",
                "spec.updateStrategy",
                'Unsupported value: apps.DaemonSetUpdateStrategy{Type:"Sometimes",'
                " RollingUpdate:(*apps.RollingUpdateDaemonSet)(nil)}: supported values:"
                ' "RollingUpdate", "OnDelete"',
            )
        ],
        id="daemonset-update-strategy",
    ),
    pytest.param(
        "replicasets", {"replicas": -1}, [_negative("spec.replicas")], id="replicaset-replicas"
    ),
    pytest.param(
        "replicasets", {"template": _OTHER_TEMPLATE}, [_MISMATCH], id="replicaset-selector-mismatch"
    ),
    pytest.param(
        "jobs",
        {"template": {"spec": _POD}},
        [
            (
                "FieldValueRequired",
                "spec.template.spec.restartPolicy",
                'Required value: valid values: "OnFailure", "Never"',
            )
        ],
        id="job-restart-policy-always",
    ),
    pytest.param(
        "jobs",
        {"completions": -1, "parallelism": -2, "backoffLimit": -3},
        [
            _negative("spec.parallelism", -2),
            _negative("spec.completions"),
            _negative("spec.backoffLimit", -3),
        ],
        id="job-negative-counts",
    ),
    pytest.param(
        "jobs",
        {"manualSelector": True},
        [
            ("FieldValueRequired", "spec.selector", "Required value"),
            (
                "FieldValueInvalid",
                "spec.template.metadata.labels",
                "Invalid value: map[string]string(nil): `selector` does not match template"
                " `labels`",
            ),
        ],
        id="job-manual-selector-missing",
    ),
    pytest.param(
        "jobs",
        {
            "manualSelector": True,
            "selector": _SELECTOR,
            "template": {
                "metadata": {"labels": {"app": "y"}},
                "spec": {**_POD, "restartPolicy": "Never"},
            },
        },
        [_MISMATCH],
        id="job-manual-selector-mismatch",
    ),
    pytest.param(
        "cronjobs",
        {"schedule": "every minute"},
        [
            (
                "FieldValueInvalid",
                "spec.schedule",
                'Invalid value: "every minute": expected exactly 5 fields, found 2: [every minute]',
            )
        ],
        id="cronjob-schedule",
    ),
    pytest.param(
        "cronjobs",
        {"timeZone": "Mars/Olympus"},
        [
            (
                "FieldValueInvalid",
                "spec.timeZone",
                'Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus',
            )
        ],
        id="cronjob-time-zone",
    ),
    pytest.param(
        "cronjobs",
        {"concurrencyPolicy": "Sometimes"},
        [
            (
                "FieldValueNotSupported",
                "spec.concurrencyPolicy",
                'Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"',
            )
        ],
        id="cronjob-concurrency-policy",
    ),
    pytest.param(
        "cronjobs",
        {"jobTemplate": {"spec": {"template": {"spec": _POD}}}},
        [
            (
                "FieldValueRequired",
                "spec.jobTemplate.spec.template.spec.restartPolicy",
                'Required value: valid values: "OnFailure", "Never"',
            )
        ],
        id="cronjob-restart-policy",
    ),
]


MORE_CREATE: list[Any] = [
    pytest.param(
        "deployments",
        {
            "template": _template(
                hostNetwork=True,
                containers=[
                    {
                        "name": "c",
                        "image": "busybox",
                        "ports": [{"containerPort": 80}, {"containerPort": 81, "hostPort": 82}],
                    }
                ],
            )
        },
        [
            (
                "FieldValueInvalid",
                "spec.template.spec.containers[0].ports[1].hostPort",
                "Invalid value: 82: must match `containerPort` when `hostNetwork` is true",
            )
        ],
        id="deployment-host-network-port",
    ),
    pytest.param(
        "statefulsets",
        {
            "template": {
                "metadata": {"labels": _LABELS, "annotations": {"bad key!": "v"}},
                "spec": _POD,
            }
        },
        [
            (
                "FieldValueInvalid",
                "spec.template.annotations",
                'Invalid value: "bad key!": name part must consist of alphanumeric characters,'
                " '-', '_' or '.', and must start and end with an alphanumeric character (e.g."
                " 'MyName',  or 'my.name',  or '123-abc', regex used for validation is"
                " '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            )
        ],
        id="statefulset-template-annotation-key",
    ),
    pytest.param(
        "replicasets",
        {"template": _template(ephemeralContainers=[{"name": "e", "image": "busybox"}])},
        [
            (
                "FieldValueForbidden",
                "spec.template.spec.ephemeralContainers",
                "Forbidden: ephemeral containers not allowed in pod template",
            )
        ],
        id="replicaset-template-ephemeral-containers",
    ),
    pytest.param(
        "deployments",
        {"selector": {"matchExpressions": [{"key": "app", "operator": "Near"}]}},
        [
            (
                "FieldValueInvalid",
                "spec.selector.matchExpressions[0].operator",
                'Invalid value: "Near": not a valid selector operator',
            ),
            (
                "FieldValueInvalid",
                "spec.selector",
                "Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil),"
                " MatchExpressions:[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement"
                '{Key:"app", Operator:"Near", Values:[]string(nil)}}}: invalid label selector',
            ),
        ],
        id="deployment-selector-operator",
    ),
    pytest.param(
        "deployments",
        {"strategy": {"type": "Canary"}},
        [
            (
                "FieldValueNotSupported",
                "spec.strategy",
                'Unsupported value: apps.DeploymentStrategy{Type:"Canary",'
                " RollingUpdate:(*apps.RollingUpdateDeployment)(nil)}: supported values:"
                ' "Recreate", "RollingUpdate"',
            )
        ],
        id="deployment-strategy-type",
    ),
    pytest.param(
        "daemonsets",
        {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}},
        [
            (
                "FieldValueInvalid",
                "spec.updateStrategy.rollingUpdate.maxSurge",
                'Invalid value: intstr.IntOrString{Type:0, IntVal:1, StrVal:""}: may not be'
                " set when maxUnavailable is non-zero",
            )
        ],
        id="daemonset-surge-and-unavailable",
    ),
    pytest.param(
        "statefulsets",
        {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": -1}}},
        [_negative("spec.updateStrategy.rollingUpdate.partition")],
        id="statefulset-negative-partition",
    ),
    pytest.param(
        "statefulsets",
        {"persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Keep"}},
        [
            (
                "FieldValueNotSupported",
                "spec.persistentVolumeClaimRetentionPolicy.whenDeleted",
                'Unsupported value: "Keep": supported values: "Retain", "Delete"',
            )
        ],
        id="statefulset-retention-policy",
    ),
    pytest.param(
        "jobs",
        {"podReplacementPolicy": "Never"},
        [
            (
                "FieldValueNotSupported",
                "spec.podReplacementPolicy",
                'Unsupported value: "Never": supported values: "Failed", "TerminatingOrFailed"',
            )
        ],
        id="job-pod-replacement-policy",
    ),
    pytest.param(
        "cronjobs",
        {"schedule": "61 * * * *"},
        [
            (
                "FieldValueInvalid",
                "spec.schedule",
                'Invalid value: "61 * * * *": end of range (61) above maximum (59): 61',
            )
        ],
        id="cronjob-schedule-range",
    ),
    pytest.param(
        "cronjobs",
        {"schedule": "TZ=UTC 0 * * * *"},
        [
            (
                "FieldValueInvalid",
                "spec.schedule",
                'Invalid value: "TZ=UTC 0 * * * *": cannot use TZ or CRON_TZ in schedule, use'
                " timeZone field instead",
            )
        ],
        id="cronjob-tz-in-schedule",
    ),
    pytest.param(
        "cronjobs",
        {"schedule": "@sometimes", "startingDeadlineSeconds": -5},
        [
            (
                "FieldValueInvalid",
                "spec.schedule",
                'Invalid value: "@sometimes": unrecognized descriptor: @sometimes',
            ),
            _negative("spec.startingDeadlineSeconds", -5),
        ],
        id="cronjob-descriptor",
    ),
]


@pytest.mark.parametrize(("plural", "spec", "causes"), CREATE + MORE_CREATE)
async def test_workload_create_refused(
    backend: Backend, plural: str, spec: dict[str, Any], causes: list[Cause]
) -> None:
    _, kind, group, _ = KINDS[plural]
    reply = await req(backend, "POST", _path(backend, plural), _object(plural, **spec))
    assert (reply.status, reply.body) == (422, invalid(kind, group, "w", causes))


_NEW_SELECTOR = {"matchLabels": {"app": "x", "tier": "t"}}
_NEW_TEMPLATE = {"metadata": {"labels": {"app": "x", "tier": "t"}}, "spec": _POD}
_SELECTOR_IMMUTABLE = (
    "FieldValueInvalid",
    "spec.selector",
    'Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"x", "tier":"t"},'
    " MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable",
)
_NEW_MISMATCH = (
    "FieldValueInvalid",
    "spec.template.metadata.labels",
    'Invalid value: map[string]string{"app":"x"}: `selector` does not match template `labels`',
)
_STATEFULSET_FORBIDDEN = (
    "FieldValueForbidden",
    "spec",
    "Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals',"
    " 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and"
    " 'minReadySeconds' are forbidden",
)

UPDATE: list[Any] = [
    pytest.param(
        "deployments",
        {"selector": _NEW_SELECTOR, "template": _NEW_TEMPLATE},
        [_SELECTOR_IMMUTABLE],
        id="deployment-selector",
    ),
    pytest.param(
        "deployments", {"replicas": -1}, [_negative("spec.replicas")], id="deployment-replicas"
    ),
    pytest.param(
        "replicasets",
        {"selector": _NEW_SELECTOR, "template": _NEW_TEMPLATE},
        [_SELECTOR_IMMUTABLE],
        id="replicaset-selector",
    ),
    pytest.param(
        "daemonsets",
        {"selector": _NEW_SELECTOR, "template": _NEW_TEMPLATE},
        [_SELECTOR_IMMUTABLE],
        id="daemonset-selector",
    ),
    pytest.param(
        "statefulsets",
        {"selector": _NEW_SELECTOR, "template": _NEW_TEMPLATE},
        [_STATEFULSET_FORBIDDEN],
        id="statefulset-selector",
    ),
    pytest.param(
        "statefulsets",
        {"serviceName": "other"},
        [_STATEFULSET_FORBIDDEN],
        id="statefulset-service-name",
    ),
    pytest.param(
        "jobs",
        {"completions": 3},
        [("FieldValueInvalid", "spec.completions", "Invalid value: 3: field is immutable")],
        id="job-completions",
    ),
]


UPDATE += [
    pytest.param(
        plural,
        {"selector": _NEW_SELECTOR, "minReadySeconds": -1},
        # The strategy validates the object (ValidateDaemonSet, ValidateReplicaSet) and then
        # the update, which validates the spec again: each spec cause twice, the message once.
        [*spec_causes, *spec_causes, _SELECTOR_IMMUTABLE],
        id=f"{plural}-spec-validated-twice",
    )
    for plural, spec_causes in (
        (
            "daemonsets",
            [_NEW_MISMATCH, _negative("spec.minReadySeconds")],
        ),
        (
            "replicasets",
            [_negative("spec.minReadySeconds"), _NEW_MISMATCH],
        ),
    )
]


@pytest.mark.parametrize(("plural", "spec", "causes"), UPDATE)
async def test_workload_update_refused(
    backend: Backend, plural: str, spec: dict[str, Any], causes: list[Cause]
) -> None:
    _, kind, group, _ = KINDS[plural]
    stored = await ok(backend, "POST", _path(backend, plural), _object(plural))
    changed = copy.deepcopy(stored)
    changed["spec"].update(spec)
    reply = await req(backend, "PUT", f"{_path(backend, plural)}/w", changed)
    assert (reply.status, reply.body) == (422, invalid(kind, group, "w", causes))


_JOB_TEMPLATE_GO = (
    'Invalid value: core.PodTemplateSpec{ObjectMeta:v1.ObjectMeta{Name:""'
    ', GenerateName:"", Namespace:"", SelfLink:"", UID:"", ResourceVersion:""'
    ", Generation:0, CreationTimestamp:time.Date(1, time.January, 1, 0, 0, 0, 0"
    ", time.UTC), DeletionTimestamp:<nil>, DeletionGracePeriodSeconds:(*int64)(nil)"
    ', Labels:map[string]string{"batch.kubernetes.io/controller-uid":"{uid}"'
    ', "batch.kubernetes.io/job-name":"w", "controller-uid":"{uid}", "job-name":"w"}'
    ", Annotations:map[string]string(nil), OwnerReferences:[]v1.OwnerReference(nil)"
    ", Finalizers:[]string(nil), ManagedFields:[]v1.ManagedFieldsEntry(nil)}"
    ", Spec:core.PodSpec{Volumes:[]core.Volume(nil), InitContainers:[]core.Container(nil)"
    ', Containers:[]core.Container{core.Container{Name:"c", Image:"busybox:1.36"'
    ', Command:[]string(nil), Args:[]string(nil), WorkingDir:""'
    ', Ports:[]core.ContainerPort{core.ContainerPort{Name:"", HostPort:0'
    ', ContainerPort:80, Protocol:"TCP", HostIP:""}}, EnvFrom:[]core.EnvFromSource(nil)'
    ", Env:[]core.EnvVar(nil)"
    ", Resources:core.ResourceRequirements{Limits:core.ResourceList{"
    '"cpu":resource.Quantity{i:resource.int64Amount{value:500'
    ', scale:-3}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"500m"'
    ', Format:"DecimalSI"}}, Requests:core.ResourceList(nil)'
    ", Claims:[]core.ResourceClaim(nil)}, ResizePolicy:[]core.ContainerResizePolicy(nil)"
    ", RestartPolicy:(*core.ContainerRestartPolicy)(nil)"
    ", VolumeMounts:[]core.VolumeMount(nil), VolumeDevices:[]core.VolumeDevice(nil)"
    ", LivenessProbe:(*core.Probe)(nil), ReadinessProbe:(*core.Probe)(nil)"
    ", StartupProbe:(*core.Probe)(nil), Lifecycle:(*core.Lifecycle)(nil)"
    ', TerminationMessagePath:"/dev/termination-log", TerminationMessagePolicy:"File"'
    ', ImagePullPolicy:"Always", SecurityContext:(*core.SecurityContext)(nil)'
    ", Stdin:false, StdinOnce:false, TTY:false}}"
    ', EphemeralContainers:[]core.EphemeralContainer(nil), RestartPolicy:"Never"'
    ", TerminationGracePeriodSeconds:(*int64)({address})"
    ', ActiveDeadlineSeconds:(*int64)(nil), DNSPolicy:"ClusterFirst"'
    ', NodeSelector:map[string]string(nil), ServiceAccountName:""'
    ', AutomountServiceAccountToken:(*bool)(nil), NodeName:""'
    ", SecurityContext:(*core.PodSecurityContext)({address})"
    ', ImagePullSecrets:[]core.LocalObjectReference(nil), Hostname:"", Subdomain:""'
    ", SetHostnameAsFQDN:(*bool)(nil), Affinity:(*core.Affinity)(nil)"
    ', SchedulerName:"default-scheduler", Tolerations:[]core.Toleration(nil)'
    ', HostAliases:[]core.HostAlias(nil), PriorityClassName:"", Priority:(*int32)(nil)'
    ", PreemptionPolicy:(*core.PreemptionPolicy)(nil)"
    ", DNSConfig:(*core.PodDNSConfig)(nil), ReadinessGates:[]core.PodReadinessGate(nil)"
    ", RuntimeClassName:(*string)(nil), Overhead:core.ResourceList(nil)"
    ", EnableServiceLinks:(*bool)(nil)"
    ", TopologySpreadConstraints:[]core.TopologySpreadConstraint(nil)"
    ", OS:(*core.PodOS)(nil), SchedulingGates:[]core.PodSchedulingGate(nil)"
    ", ResourceClaims:[]core.PodResourceClaim(nil)"
    ", Resources:(*core.ResourceRequirements)(nil)}}: field is immutable"
)
"""Go's %#v of the internal core.PodTemplateSpec of the Job below (``{address}``: a set
pointer's, which is the process's heap address on kube-apiserver)."""


async def test_job_template_immutable(backend: Backend) -> None:
    """ValidateJobSpecUpdate: the pod template cannot change; the message prints the new
    internal template with Go's ``%#v`` (ports, quantities, defaults; pointers as
    addresses)."""
    container = {
        "name": "c",
        "image": "busybox",
        "ports": [{"containerPort": 80}],
        "resources": {"limits": {"cpu": "500m"}},
    }
    spec = {"template": {"spec": {"containers": [container], "restartPolicy": "Never"}}}
    stored = await ok(backend, "POST", _path(backend, "jobs"), _object("jobs", **spec))
    changed = copy.deepcopy(stored)
    changed["spec"]["template"]["spec"]["containers"][0]["image"] = "busybox:1.36"
    reply = await req(backend, "PUT", f"{_path(backend, 'jobs')}/w", changed)
    assert reply.status == 422
    [(reason, field, message)] = causes_of(reply)
    assert (reason, field) == ("FieldValueInvalid", "spec.template")
    uid = stored["metadata"]["uid"]
    expected = _JOB_TEMPLATE_GO.replace("{uid}", uid)
    assert re.sub(r"\(0x[0-9a-f]+\)", "({address})", message) == expected


async def test_statefulset_allowed_update(backend: Backend) -> None:
    stored = await ok(backend, "POST", _path(backend, "statefulsets"), _object("statefulsets"))
    changed = copy.deepcopy(stored)
    changed["spec"]["replicas"] = 3
    changed["spec"]["template"]["spec"]["containers"][0]["image"] = "busybox:1.36"
    updated = await ok(backend, "PUT", f"{_path(backend, 'statefulsets')}/w", changed)
    assert updated["spec"]["replicas"] == 3


async def test_job_generated_selector(backend: Backend) -> None:
    """A Job without manualSelector gets its generated selector and pod labels; a selector
    of its own is refused as not auto-generated."""
    created = await ok(backend, "POST", _path(backend, "jobs"), _object("jobs"))
    uid = created["metadata"]["uid"]
    assert created["spec"]["selector"] == {
        "matchLabels": {"batch.kubernetes.io/controller-uid": uid}
    }
    own = _object("jobs", selector=_SELECTOR)
    own["metadata"]["name"] = "own"
    own["spec"]["template"]["metadata"] = {"labels": _LABELS}
    reply = await req(backend, "POST", _path(backend, "jobs"), own)
    assert reply.status == 422
    [(reason, field, message)] = causes_of(reply)
    assert (reason, field) == ("FieldValueInvalid", "spec.selector")
    assert message.startswith(
        'Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"x",'
    )
    assert message.endswith("`selector` not auto-generated")


STATUS: list[Any] = [
    pytest.param(
        "deployments",
        {"replicas": 1, "readyReplicas": 2},
        [
            (
                "FieldValueInvalid",
                "status.readyReplicas",
                "Invalid value: 2: cannot be greater than status.replicas",
            )
        ],
        id="deployment-ready-above-replicas",
    ),
    pytest.param(
        "statefulsets",
        {"replicas": 1, "readyReplicas": 1, "availableReplicas": 2},
        [
            (
                "FieldValueInvalid",
                "status.availableReplicas",
                "Invalid value: 2: cannot be greater than status.replicas",
            ),
            (
                "FieldValueInvalid",
                "status.availableReplicas",
                "Invalid value: 2: cannot be greater than status.readyReplicas",
            ),
        ],
        id="statefulset-available-above-ready",
    ),
    pytest.param(
        "replicasets",
        {"replicas": 1, "fullyLabeledReplicas": 2},
        [
            (
                "FieldValueInvalid",
                "status.fullyLabeledReplicas",
                "Invalid value: 2: cannot be greater than status.replicas",
            )
        ],
        id="replicaset-labeled-above-replicas",
    ),
    pytest.param(
        "daemonsets",
        {"numberReady": -1},
        [_negative("status.numberReady")],
        id="daemonset-negative-ready",
    ),
]


@pytest.mark.parametrize(("plural", "status", "causes"), STATUS)
async def test_workload_status_update_refused(
    backend: Backend, plural: str, status: dict[str, Any], causes: list[Cause]
) -> None:
    _, kind, group, _ = KINDS[plural]
    stored = await ok(backend, "POST", _path(backend, plural), _object(plural))
    changed = copy.deepcopy(stored)
    changed["status"] = {**(stored.get("status") or {}), **status}
    reply = await req(backend, "PUT", f"{_path(backend, plural)}/w/status", changed)
    assert (reply.status, reply.body) == (422, invalid(kind, group, "w", causes))


async def test_collision_count_not_decremented(backend: Backend) -> None:
    """ValidateDeploymentStatusUpdate: status.collisionCount never goes down."""
    stored = await ok(backend, "POST", _path(backend, "deployments"), _object("deployments"))
    path = f"{_path(backend, 'deployments')}/w/status"
    raised = await ok(backend, "PUT", path, {**stored, "status": {"collisionCount": 2}})
    reply = await req(backend, "PUT", path, {**raised, "status": {"collisionCount": 1}})
    assert (reply.status, reply.body) == (
        422,
        invalid(
            "Deployment",
            "apps",
            "w",
            [
                (
                    "FieldValueInvalid",
                    "status.collisionCount",
                    "Invalid value: 1: cannot be decremented",
                )
            ],
        ),
    )


async def test_negative_scale_refused(backend: Backend) -> None:
    """ValidateScale: a Scale's replicas are not negative."""
    stored = await ok(backend, "POST", _path(backend, "deployments"), _object("deployments"))
    path = f"{_path(backend, 'deployments')}/w/scale"
    scale = await ok(backend, "GET", path)
    scale["spec"]["replicas"] = -1
    reply = await req(backend, "PUT", path, scale)
    assert stored["spec"]["replicas"] == 1
    assert (reply.status, reply.body) == (
        422,
        invalid("Scale", "autoscaling", "w", [_negative("spec.replicas")]),
    )


_START, _END = "2026-01-01T00:00:00Z", "2026-01-01T00:05:00Z"


def _condition(kind: str) -> dict[str, Any]:
    return {"type": kind, "status": "True", "lastTransitionTime": _END}


JOB_STATUS: list[Any] = [
    pytest.param(
        {"conditions": [_condition("Complete")]},
        [
            (
                "FieldValueRequired",
                "status.completionTime",
                "Required value: completionTime is required for Complete jobs",
            ),
            (
                "FieldValueInvalid",
                "status.conditions",
                "Invalid value: cannot set Complete=True condition without the"
                " SuccessCriteriaMet=true condition",
            ),
            (
                "FieldValueRequired",
                "status.startTime",
                "Required value: startTime is required for finished job",
            ),
        ],
        id="complete-without-criteria-and-times",
    ),
    pytest.param(
        {"active": 1, "ready": 2, "completionTime": _END, "startTime": _START},
        [
            (
                "FieldValueInvalid",
                "status.completionTime",
                "Invalid value: 2026-01-01 00:05:00 +0000 UTC: cannot set completionTime when"
                " there is no Complete=True condition",
            ),
            (
                "FieldValueInvalid",
                "status.ready",
                "Invalid value: 2: cannot set more ready pods than active",
            ),
        ],
        id="completion-time-without-complete",
    ),
    pytest.param(
        {
            "conditions": [_condition("Failed")],
            "startTime": _START,
            "failed": -1,
            "uncountedTerminatedPods": {"succeeded": ["a", "a"]},
        },
        [
            (
                "FieldValueInvalid",
                "status.failed",
                "Invalid value: -1: must be greater than or equal to 0",
            ),
            (
                "FieldValueDuplicate",
                "status.uncountedTerminatedPods.succeeded[1]",
                'Duplicate value: "a"',
            ),
            (
                "FieldValueInvalid",
                "status.conditions",
                "Invalid value: cannot set Failed=True condition without the FailureTarget=true"
                " condition",
            ),
            (
                "FieldValueInvalid",
                "status.uncountedTerminatedPods",
                'Invalid value: batch.UncountedTerminatedPods{Succeeded:[]types.UID{"a", "a"},'
                " Failed:[]types.UID(nil)}: uncountedTerminatedPods needs to be empty for"
                " finished job",
            ),
            (
                "FieldValueInvalid",
                "status.failed",
                "Invalid value: -1: cannot decrease the failed counter",
            ),
        ],
        id="failed-without-target",
    ),
]


@pytest.mark.parametrize(("status", "causes"), JOB_STATUS)
async def test_job_status_update_refused(
    backend: Backend, status: dict[str, Any], causes: list[Cause]
) -> None:
    stored = await ok(backend, "POST", _path(backend, "jobs"), _object("jobs", suspend=True))
    changed = {**stored, "status": status}
    reply = await req(backend, "PUT", f"{_path(backend, 'jobs')}/w/status", changed)
    assert (reply.status, reply.body) == (422, invalid("Job", "batch", "w", causes))


async def test_job_completed_as_the_job_controller_does(backend: Backend) -> None:
    """What a test that fakes a Job's completion must write: SuccessCriteriaMet and Complete,
    startTime and completionTime; Complete cannot be taken back, nor succeeded lowered."""
    stored = await ok(backend, "POST", _path(backend, "jobs"), _object("jobs", suspend=True))
    path = f"{_path(backend, 'jobs')}/w/status"
    complete = {
        "conditions": [_condition("SuccessCriteriaMet"), _condition("Complete")],
        "startTime": _START,
        "completionTime": _END,
        "succeeded": 1,
    }
    done = await ok(backend, "PUT", path, {**stored, "status": complete})
    undone = {**done["status"], "conditions": [_condition("SuccessCriteriaMet")], "succeeded": 0}
    reply = await req(backend, "PUT", path, {**done, "status": undone})
    assert (reply.status, reply.body) == (
        422,
        invalid(
            "Job",
            "batch",
            "w",
            [
                (
                    "FieldValueInvalid",
                    "status.completionTime",
                    "Invalid value: 2026-01-01 00:05:00 +0000 UTC: cannot set completionTime"
                    " when there is no Complete=True condition",
                ),
                (
                    "FieldValueInvalid",
                    "status.conditions",
                    "Invalid value: cannot disable the terminal Complete=True condition",
                ),
                (
                    "FieldValueInvalid",
                    "status.succeeded",
                    "Invalid value: 0: cannot decrease the succeeded counter",
                ),
            ],
        ),
    )


_DNS_LABEL = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and"
    " must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex"
    " used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)


@pytest.mark.parametrize(
    ("name", "detail"),
    [("Bad_Name", _DNS_LABEL), ("a.b", "must not contain dots")],
)
async def test_statefulset_name_is_a_dns_label(backend: Backend, name: str, detail: str) -> None:
    """ValidateStatefulSetName: a StatefulSet's name is a DNS label (not a subdomain)."""
    body = _object("statefulsets")
    body["metadata"]["name"] = name
    reply = await req(backend, "POST", _path(backend, "statefulsets"), body)
    cause = ("FieldValueInvalid", "metadata.name", f'Invalid value: "{name}": {detail}')
    assert (reply.status, reply.body) == (422, invalid("StatefulSet", "apps", name, [cause]))


async def test_cronjob_name_of_at_most_52_characters(backend: Backend) -> None:
    """ValidateCronJobCreate: a CronJob's name leaves room for the Job's 11-character
    suffix; 52 characters pass, and an update does not check the name again."""
    long_name = "n" * 53
    body = _object("cronjobs")
    body["metadata"]["name"] = long_name
    reply = await req(backend, "POST", _path(backend, "cronjobs"), body)
    cause = (
        "FieldValueInvalid",
        "metadata.name",
        f'Invalid value: "{long_name}": must be no more than 52 characters',
    )
    assert (reply.status, reply.body) == (422, invalid("CronJob", "batch", long_name, [cause]))
    body["metadata"]["name"] = "n" * 52
    stored = await ok(backend, "POST", _path(backend, "cronjobs"), body)
    stored["spec"]["suspend"] = True
    await ok(backend, "PUT", f"{_path(backend, 'cronjobs')}/{'n' * 52}", stored)


@pytest.mark.parametrize(("name", "completions"), [("a.b", 2), ("x" * 62, 10), ("x" * 62, 1)])
async def test_indexed_job_pod_hostname(backend: Backend, name: str, completions: int) -> None:
    """ValidateJob: the last pod of an Indexed Job is named ``<name>-<completions-1>``,
    which must be a DNS label."""
    body = _object("jobs", completionMode="Indexed", completions=completions)
    body["metadata"]["name"] = name
    reply = await req(backend, "POST", _path(backend, "jobs"), body)
    hostname = f"{name}-{completions - 1}"
    cause = (
        "FieldValueInvalid",
        "metadata.name",
        f'Invalid value: "{name}": will not able to create pod with invalid DNS label: {hostname}',
    )
    assert (reply.status, reply.body) == (422, invalid("Job", "batch", name, [cause]))


@pytest.mark.parametrize("template_labels", [None, {"a": "b"}])
async def test_job_labels_taken_from_its_template(
    backend: Backend, template_labels: dict[str, str] | None
) -> None:
    """SetDefaults_Job gives a Job without labels its template's label map when the
    template has one, which the strategy then fills with the generated labels: they are
    validated as the Job's (a name too long for a label value fails twice more); a template
    without labels gets a new map, and the Job takes it only when read back."""
    name = "x" * 64
    body = _object("jobs")
    body["metadata"]["name"] = name
    if template_labels is not None:
        body["spec"]["template"]["metadata"] = {"labels": template_labels}
    reply = await req(backend, "POST", _path(backend, "jobs"), body)
    too_long = f'Invalid value: "{name}": must be no more than 63 characters'
    template = [("FieldValueInvalid", "spec.template.labels", too_long)] * 2
    own = [("FieldValueInvalid", "metadata.labels", too_long)] * 2
    causes = template if template_labels is None else own + template
    assert (reply.status, reply.body) == (422, invalid("Job", "batch", name, causes))
    body["metadata"]["name"] = "short"
    stored = await ok(backend, "POST", _path(backend, "jobs"), body)
    assert stored["metadata"]["labels"] == stored["spec"]["template"]["metadata"]["labels"]
    if template_labels is None:  # the labels were not in the object written
        assert "f:metadata" not in stored["metadata"]["managedFields"][0]["fieldsV1"]


async def test_job_update_keeps_the_selector_sent(backend: Backend) -> None:
    """The job strategy generates the selector on create only (PrepareForCreate): an update
    replacing it is validated as sent (not auto-generated, matching no pod, immutable)."""
    stored = await ok(backend, "POST", _path(backend, "jobs"), _object("jobs"))
    changed = copy.deepcopy(stored)
    changed["spec"]["selector"] = {"matchLabels": {"x": "y"}}
    reply = await req(backend, "PUT", f"{_path(backend, 'jobs')}/w", changed)
    selector = (
        'v1.LabelSelector{MatchLabels:map[string]string{"x":"y"},'
        " MatchExpressions:[]v1.LabelSelectorRequirement(nil)}"
    )
    uid = stored["metadata"]["uid"]
    labels = (
        f'map[string]string{{"batch.kubernetes.io/controller-uid":"{uid}",'
        f' "batch.kubernetes.io/job-name":"w", "controller-uid":"{uid}", "job-name":"w"}}'
    )
    mismatch = f"Invalid value: {labels}: `selector` does not match template `labels`"
    causes = [
        (
            "FieldValueInvalid",
            "spec.selector",
            f"Invalid value: {selector}: `selector` not auto-generated",
        ),
        ("FieldValueInvalid", "spec.template.metadata.labels", mismatch),
        ("FieldValueInvalid", "spec.template.metadata.labels", mismatch),
        ("FieldValueInvalid", "spec.selector", f"Invalid value: {selector}: field is immutable"),
    ]
    assert (reply.status, reply.body) == (422, invalid("Job", "batch", "w", causes))


async def test_indexed_job_completions_change_with_parallelism(backend: Backend) -> None:
    """validateCompletions: an Indexed Job's completions may change, together with its
    parallelism (elastic Indexed Jobs); a non-Indexed Job's are immutable."""
    spec = {"completionMode": "Indexed", "completions": 4, "parallelism": 0, "suspend": True}
    stored = await ok(backend, "POST", _path(backend, "jobs"), _object("jobs", **spec))
    changed = copy.deepcopy(stored)
    changed["spec"]["completions"] = 6
    reply = await req(backend, "PUT", f"{_path(backend, 'jobs')}/w", changed)
    detail = "Invalid value: 6: can only be modified in tandem with spec.parallelism"
    cause = ("FieldValueInvalid", "spec.completions", detail)
    assert (reply.status, reply.body) == (422, invalid("Job", "batch", "w", [cause]))
    changed["spec"]["parallelism"] = 6
    updated = await ok(backend, "PUT", f"{_path(backend, 'jobs')}/w", changed)
    assert (updated["spec"]["completions"], updated["spec"]["parallelism"]) == (6, 6)
