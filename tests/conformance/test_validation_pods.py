"""Pod validation as kube-apiserver runs it (issue 28; kubernetes pkg/apis/core/validation
ValidatePodCreate, ValidatePodUpdate, ValidatePodStatusUpdate): each refused Pod or change
answers 422 with the same causes (field, reason, message) and message on both backends."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from reconcile_kit.testing.backends import Backend

from .invalid import Cause, causes_of, invalid
from .kube import ok, req

_NEED = '"Required value"'
_SUPPORTED_PROTOCOLS = '"SCTP", "TCP", "UDP"'
_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-',"
    " and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc',"
    " regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)


def pods(backend: Backend) -> str:
    return f"/api/v1/namespaces/{backend.namespace}/pods"


def _pod(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"containers": [{"name": "c", "image": "busybox"}]}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": base | spec}


def _c(**fields: Any) -> list[dict[str, Any]]:
    """The one container ``c`` with ``fields`` set."""
    return [{"name": "c", "image": "busybox", **fields}]


_C0 = "spec.containers[0]"

CREATE: list[Any] = [
    pytest.param(
        {"containers": []},
        [("FieldValueRequired", "spec.containers", "Required value")],
        id="no-containers",
    ),
    pytest.param(
        {"containers": [{"image": "busybox"}]},
        [("FieldValueRequired", f"{_C0}.name", "Required value")],
        id="container-without-name",
    ),
    pytest.param(
        {"containers": [{"name": "Bad_Name", "image": "busybox"}]},
        [("FieldValueInvalid", f"{_C0}.name", f'Invalid value: "Bad_Name": {_LABEL_MSG}')],
        id="container-name-not-a-label",
    ),
    pytest.param(
        {"containers": [{"name": "c", "image": "a"}, {"name": "c", "image": "b"}]},
        [("FieldValueDuplicate", "spec.containers[1].name", 'Duplicate value: "c"')],
        id="duplicate-container-names",
    ),
    pytest.param(
        {"containers": [{"name": "c"}]},
        [("FieldValueRequired", f"{_C0}.image", "Required value")],
        id="container-without-image",
    ),
    pytest.param(
        {"containers": _c(ports=[{"containerPort": 70000}])},
        [
            (
                "FieldValueInvalid",
                f"{_C0}.ports[0].containerPort",
                "Invalid value: 70000: must be between 1 and 65535, inclusive",
            )
        ],
        id="container-port-out-of-range",
    ),
    pytest.param(
        {"containers": _c(ports=[{"containerPort": 80, "protocol": "HTTP"}])},
        [
            (
                "FieldValueNotSupported",
                f"{_C0}.ports[0].protocol",
                f'Unsupported value: "HTTP": supported values: {_SUPPORTED_PROTOCOLS}',
            )
        ],
        id="port-protocol-not-supported",
    ),
    pytest.param(
        {
            "containers": _c(
                ports=[{"containerPort": 80, "name": "web"}, {"containerPort": 81, "name": "web"}]
            )
        },
        [("FieldValueDuplicate", f"{_C0}.ports[1].name", 'Duplicate value: "web"')],
        id="duplicate-port-names",
    ),
    pytest.param(
        {"containers": _c(ports=[{"name": "web"}])},
        [("FieldValueRequired", f"{_C0}.ports[0].containerPort", "Required value")],
        id="port-without-number",
    ),
    pytest.param(
        {"containers": _c(env=[{"name": "A=B", "value": "x"}])},
        [
            (
                "FieldValueInvalid",
                f"{_C0}.env[0].name",
                'Invalid value: "A=B": a valid environment variable name must consist only of'
                " printable ASCII characters other than '='",
            )
        ],
        id="env-name-with-equals",
    ),
    pytest.param(
        {
            "containers": _c(
                env=[
                    {
                        "name": "A",
                        "value": "x",
                        "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}},
                    }
                ]
            )
        },
        [
            (
                "FieldValueInvalid",
                f"{_C0}.env[0].valueFrom",
                'Invalid value: "": may not be specified when `value` is not empty',
            )
        ],
        id="env-value-and-value-from",
    ),
    pytest.param(
        {"containers": _c(env=[{"name": "A", "valueFrom": {}}])},
        [
            (
                "FieldValueInvalid",
                f"{_C0}.env[0].valueFrom",
                'Invalid value: "": must specify one of: `fieldRef`, `resourceFieldRef`,'
                " `configMapKeyRef` or `secretKeyRef`",
            )
        ],
        id="env-value-from-empty",
    ),
    pytest.param(
        {"containers": _c(resources={"requests": {"cpu": "2"}, "limits": {"cpu": "1"}})},
        [
            (
                "FieldValueInvalid",
                f"{_C0}.resources.requests",
                'Invalid value: "2": must be less than or equal to cpu limit of 1',
            )
        ],
        id="requests-above-limits",
    ),
    pytest.param(
        {"containers": _c(resources={"requests": {"memory": "-1"}})},
        [
            (
                "FieldValueInvalid",
                f"{_C0}.resources.requests[memory]",
                'Invalid value: "-1": must be greater than or equal to 0',
            )
        ],
        id="negative-request",
    ),
    pytest.param(
        {"containers": _c(livenessProbe={"periodSeconds": 5})},
        [
            (
                "FieldValueRequired",
                f"{_C0}.livenessProbe",
                "Required value: must specify a handler type",
            )
        ],
        id="probe-without-handler",
    ),
    pytest.param(
        {
            "containers": _c(
                readinessProbe={
                    "exec": {"command": ["true"]},
                    "tcpSocket": {"port": 80},
                    "periodSeconds": -1,
                }
            )
        },
        [
            (
                "FieldValueForbidden",
                f"{_C0}.readinessProbe.tcpSocket",
                "Forbidden: may not specify more than 1 handler type",
            ),
            (
                "FieldValueInvalid",
                f"{_C0}.readinessProbe.periodSeconds",
                "Invalid value: -1: must be greater than or equal to 0",
            ),
        ],
        id="probe-with-two-handlers-negative-period",
    ),
    pytest.param(
        {"containers": _c(volumeMounts=[{"name": "data", "mountPath": "/data"}])},
        [("FieldValueNotFound", f"{_C0}.volumeMounts[0].name", 'Not found: "data"')],
        id="mount-of-missing-volume",
    ),
    pytest.param(
        {
            "containers": _c(volumeMounts=[{"name": "v"}]),
            "volumes": [{"name": "v", "emptyDir": {}}],
        },
        [("FieldValueRequired", f"{_C0}.volumeMounts[0].mountPath", "Required value")],
        id="mount-without-path",
    ),
    pytest.param(
        {"volumes": [{"name": "v", "emptyDir": {}, "configMap": {"name": "x"}}]},
        [
            (
                "FieldValueForbidden",
                "spec.volumes[0].configMap",
                "Forbidden: may not specify more than 1 volume type",
            )
        ],
        id="volume-with-two-sources",
    ),
    pytest.param(
        {"volumes": [{"name": "v", "emptyDir": {}}, {"name": "v", "emptyDir": {}}]},
        [("FieldValueDuplicate", "spec.volumes[1].name", 'Duplicate value: "v"')],
        id="duplicate-volume-names",
    ),
    pytest.param(
        {"volumes": [{"name": "V_1", "emptyDir": {}}]},
        [("FieldValueInvalid", "spec.volumes[0].name", f'Invalid value: "V_1": {_LABEL_MSG}')],
        id="volume-name-not-a-label",
    ),
    pytest.param(
        {"tolerations": [{"key": "k", "operator": "Near"}]},
        [
            (
                "FieldValueNotSupported",
                "spec.tolerations[0].operator",
                'Unsupported value: "Near": supported values: "Equal", "Exists"',
            )
        ],
        id="toleration-operator",
    ),
    pytest.param(
        {"tolerations": [{"operator": "Equal", "value": "v"}]},
        [
            (
                "FieldValueInvalid",
                "spec.tolerations[0].operator",
                'Invalid value: "Equal": operator must be Exists when `key` is empty, which'
                ' means "match all values and all keys"',
            )
        ],
        id="toleration-without-key",
    ),
    pytest.param(
        {"tolerations": [{"key": "k", "effect": "NoSchedule", "tolerationSeconds": 5}]},
        [
            (
                "FieldValueInvalid",
                "spec.tolerations[0].effect",
                "Invalid value: \"NoSchedule\": effect must be 'NoExecute' when"
                " `tolerationSeconds` is set",
            )
        ],
        id="toleration-seconds-without-no-execute",
    ),
    pytest.param(
        {
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "zone", "operator": "Near"}]}
                        ]
                    }
                }
            }
        },
        [
            (
                "FieldValueInvalid",
                "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
                ".nodeSelectorTerms[0].matchExpressions[0].operator",
                'Invalid value: "Near": not a valid selector operator',
            )
        ],
        id="node-affinity-operator",
    ),
    pytest.param(
        {"restartPolicy": "Sometimes"},
        [
            (
                "FieldValueNotSupported",
                "spec.restartPolicy",
                'Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
            )
        ],
        id="restart-policy",
    ),
    pytest.param(
        {"dnsPolicy": "Google"},
        [
            (
                "FieldValueNotSupported",
                "spec.dnsPolicy",
                'Unsupported value: "Google": supported values: "ClusterFirstWithHostNet",'
                ' "ClusterFirst", "Default", "None"',
            )
        ],
        id="dns-policy",
    ),
    pytest.param(
        {"securityContext": {"runAsUser": -1}},
        [
            (
                "FieldValueInvalid",
                "spec.securityContext.runAsUser",
                "Invalid value: -1: must be between 0 and 2147483647, inclusive",
            )
        ],
        id="pod-run-as-user",
    ),
    pytest.param(
        {"activeDeadlineSeconds": 0},
        [
            (
                "FieldValueInvalid",
                "spec.activeDeadlineSeconds",
                "Invalid value: 0: must be between 1 and 2147483647, inclusive",
            )
        ],
        id="active-deadline-zero",
    ),
    pytest.param(
        {"initContainers": [{"name": "c", "image": "busybox"}]},
        [("FieldValueDuplicate", "spec.initContainers[0].name", 'Duplicate value: "c"')],
        id="init-container-named-as-container",
    ),
    pytest.param(
        {"initContainers": [{"name": "i"}]},
        [("FieldValueRequired", "spec.initContainers[0].image", "Required value")],
        id="init-container-without-image",
    ),
    pytest.param(
        {"ephemeralContainers": [{"name": "e", "image": "busybox"}]},
        [("FieldValueForbidden", "spec.ephemeralContainers", "Forbidden: cannot be set on create")],
        id="ephemeral-containers-on-create",
    ),
    pytest.param(
        {
            "ephemeralContainers": [
                {
                    "name": "c",
                    "image": "busybox",
                    "targetContainerName": "x",
                    "ports": [{"containerPort": 80}],
                    "readinessProbe": {"exec": {"command": ["true"]}},
                }
            ]
        },
        [
            ("FieldValueDuplicate", "spec.ephemeralContainers[0].name", 'Duplicate value: "c"'),
            (
                "FieldValueNotFound",
                "spec.ephemeralContainers[0].targetContainerName",
                'Not found: "x"',
            ),
            (
                "FieldValueForbidden",
                "spec.ephemeralContainers[0].ports",
                "Forbidden: cannot be set for an Ephemeral Container",
            ),
            (
                "FieldValueForbidden",
                "spec.ephemeralContainers[0].readinessProbe",
                "Forbidden: cannot be set for an Ephemeral Container",
            ),
            (
                "FieldValueForbidden",
                "spec.ephemeralContainers",
                "Forbidden: cannot be set on create",
            ),
        ],
        id="ephemeral-container-fields",
    ),
]


MORE_CREATE: list[Any] = [
    pytest.param(
        {"hostname": "Host_1", "nodeSelector": {"bad key!": "v"}},
        [
            (
                "FieldValueInvalid",
                "spec.nodeSelector",
                'Invalid value: "bad key!": name part must consist of alphanumeric characters,'
                " '-', '_' or '.', and must start and end with an alphanumeric character (e.g."
                " 'MyName',  or 'my.name',  or '123-abc', regex used for validation is"
                " '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            ),
            ("FieldValueInvalid", "spec.hostname", f'Invalid value: "Host_1": {_LABEL_MSG}'),
        ],
        id="hostname-and-node-selector",
    ),
    pytest.param(
        {"initContainers": [{"name": "i", "image": "busybox", "readinessProbe": {"exec": {}}}]},
        [
            (
                "FieldValueForbidden",
                "spec.initContainers[0].readinessProbe",
                "Forbidden: may not be set for init containers without restartPolicy=Always",
            )
        ],
        id="init-container-probe",
    ),
    pytest.param(
        {"containers": _c(restartPolicy="Always")},
        [
            (
                "FieldValueForbidden",
                f"{_C0}.restartPolicy",
                "Forbidden: may not be set for non-init containers",
            )
        ],
        id="container-restart-policy",
    ),
    pytest.param(
        {
            "containers": _c(
                readinessProbe={"tcpSocket": {"port": 80}, "terminationGracePeriodSeconds": 5}
            )
        },
        [
            (
                "FieldValueInvalid",
                f"{_C0}.readinessProbe.terminationGracePeriodSeconds",
                "Invalid value: 5: must not be set for readinessProbes",
            )
        ],
        id="readiness-probe-grace-period",
    ),
    pytest.param(
        {
            "containers": _c(
                volumeMounts=[{"name": "v", "mountPath": "/d"}, {"name": "v", "mountPath": "/d"}]
            ),
            "volumes": [{"name": "v", "emptyDir": {}}],
        },
        [
            (
                "FieldValueInvalid",
                f"{_C0}.volumeMounts[1].mountPath",
                'Invalid value: "/d": must be unique',
            )
        ],
        id="duplicate-mount-path",
    ),
    pytest.param(
        {"containers": _c(env=[{"value": "x"}])},
        [("FieldValueRequired", f"{_C0}.env[0].name", "Required value")],
        id="env-without-name",
    ),
    pytest.param(
        {
            "affinity": {
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {"labelSelector": {"matchLabels": {"a": "b"}}}
                    ]
                }
            }
        },
        [
            (
                "FieldValueRequired",
                "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
                ".topologyKey",
                "Required value: can not be empty",
            ),
            (
                "FieldValueInvalid",
                "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
                ".topologyKey",
                'Invalid value: "": name part must be non-empty',
            ),
            (
                "FieldValueInvalid",
                "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
                ".topologyKey",
                "Invalid value: \"\": name part must consist of alphanumeric characters, '-',"
                " '_' or '.', and must start and end with an alphanumeric character (e.g."
                " 'MyName',  or 'my.name',  or '123-abc', regex used for validation is"
                " '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            ),
        ],
        id="pod-anti-affinity-without-topology-key",
    ),
    pytest.param(
        {"containers": _c(resources={"requests": {"example.com/gpu": "1"}})},
        [
            (
                "FieldValueRequired",
                f"{_C0}.resources.limits",
                "Required value: Limit must be set for non overcommitable resources",
            )
        ],
        id="extended-resource-without-limit",
    ),
]


DETAILS: list[Any] = [
    pytest.param(
        {
            "volumes": [
                {"name": "s", "secret": {"defaultMode": 1000, "items": [{"key": "k"}]}},
                {"name": "c", "configMap": {"name": "x", "items": [{"key": "k", "path": "/abs"}]}},
                {"name": "p", "persistentVolumeClaim": {}},
                {"name": "h", "hostPath": {"path": "/a/../b", "type": "Pipe"}},
            ]
        },
        [
            ("FieldValueRequired", "spec.volumes[0].secret.secretName", "Required value"),
            (
                "FieldValueInvalid",
                "spec.volumes[0].secret.defaultMode",
                "Invalid value: 1000: must be a number between 0 and 0777 (octal), both inclusive",
            ),
            ("FieldValueRequired", "spec.volumes[0].secret.items[0].path", "Required value"),
            (
                "FieldValueInvalid",
                "spec.volumes[1].configMap.items[0].path",
                'Invalid value: "/abs": must be a relative path',
            ),
            (
                "FieldValueRequired",
                "spec.volumes[2].persistentVolumeClaim.claimName",
                "Required value",
            ),
            (
                "FieldValueInvalid",
                "spec.volumes[3].hostPath.path",
                "Invalid value: \"/a/../b\": must not contain '..'",
            ),
            (
                "FieldValueNotSupported",
                "spec.volumes[3].hostPath.type",
                'Unsupported value: "Pipe": supported values: "", "BlockDevice", "CharDevice",'
                ' "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket"',
            ),
        ],
        id="volume-sources",
    ),
    pytest.param(
        {
            "containers": _c(
                livenessProbe={"httpGet": {"port": "Http_Port", "scheme": "FTP"}},
                startupProbe={"tcpSocket": {"port": 0}, "successThreshold": 2},
                lifecycle={"preStop": {"exec": {}}, "postStart": {"sleep": {"seconds": 60}}},
            )
        },
        [
            (
                "FieldValueInvalid",
                f"{_C0}.lifecycle.postStart.sleep",
                "Invalid value: 60: must be greater than 0 and less than"
                " terminationGracePeriodSeconds (30). Enable"
                " AllowPodLifecycleSleepActionZeroValue feature gate for zero sleep.",
            ),
            ("FieldValueRequired", f"{_C0}.lifecycle.preStop.exec.command", "Required value"),
            (
                "FieldValueInvalid",
                f"{_C0}.livenessProbe.httpGet.port",
                'Invalid value: "Http_Port": must contain only alpha-numeric characters (a-z,'
                " 0-9), and hyphens (-)",
            ),
            (
                "FieldValueNotSupported",
                f"{_C0}.livenessProbe.httpGet.scheme",
                'Unsupported value: "FTP": supported values: "HTTP", "HTTPS"',
            ),
            (
                "FieldValueInvalid",
                f"{_C0}.startupProbe.tcpSocket.port",
                "Invalid value: 0: must be between 1 and 65535, inclusive",
            ),
            (
                "FieldValueInvalid",
                f"{_C0}.startupProbe.successThreshold",
                "Invalid value: 2: must be 1",
            ),
        ],
        id="probe-and-hook-handlers",
    ),
    pytest.param(
        {
            "containers": _c(
                envFrom=[
                    {"prefix": "A=", "configMapRef": {"name": "Bad_Name"}},
                    {"configMapRef": {"name": "a"}, "secretRef": {"name": "b"}},
                    {},
                ]
            ),
            "serviceAccountName": "Robot",
        },
        [
            (
                "FieldValueInvalid",
                f"{_C0}.envFrom[0].prefix",
                'Invalid value: "A=": a valid environment variable name must consist only of'
                " printable ASCII characters other than '='",
            ),
            (
                "FieldValueInvalid",
                f"{_C0}.envFrom[0].configMapRef.name",
                'Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower'
                " case alphanumeric characters, '-' or '.', and must start and end with an"
                " alphanumeric character (e.g. 'example.com', regex used for validation is"
                " '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            ),
            (
                "FieldValueInvalid",
                f"{_C0}.envFrom",
                'Invalid value: "": may not have more than one field specified at a time',
            ),
            (
                "FieldValueInvalid",
                f"{_C0}.envFrom",
                'Invalid value: "": must specify one of: `configMapRef` or `secretRef`',
            ),
            (
                "FieldValueInvalid",
                "spec.serviceAccountName",
                'Invalid value: "Robot": a lowercase RFC 1123 subdomain must consist of lower'
                " case alphanumeric characters, '-' or '.', and must start and end with an"
                " alphanumeric character (e.g. 'example.com', regex used for validation is"
                " '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            ),
        ],
        id="env-from-and-service-account",
    ),
    pytest.param(
        {
            "hostNetwork": True,
            "containers": _c(
                ports=[
                    {"containerPort": 80},
                    {"containerPort": 81, "hostPort": 82},
                    {"containerPort": 82, "hostPort": 82},
                ]
            ),
        },
        [
            (
                "FieldValueDuplicate",
                f"{_C0}.ports[2].hostPort",
                'Duplicate value: "TCP//82"',
            ),
            (
                "FieldValueInvalid",
                f"{_C0}.ports[1].hostPort",
                "Invalid value: 82: must match `containerPort` when `hostNetwork` is true",
            ),
        ],
        id="host-network-ports",
    ),
    pytest.param(
        {"dnsPolicy": "None"},
        [
            (
                "FieldValueRequired",
                "spec.dnsConfig",
                "Required value: must provide `dnsConfig` when `dnsPolicy` is None",
            )
        ],
        id="dns-policy-none-without-config",
    ),
    pytest.param(
        {
            "dnsConfig": {
                "nameservers": ["1.1.1.1", "dns.example", "8.8.8.8", "9.9.9.9"],
                "searches": ["Bad_Domain."],
                "options": [{"value": "2"}],
            },
            "readinessGates": [{"conditionType": "bad gate"}],
            "schedulingGates": [{"name": "g"}, {"name": "g"}],
        },
        [
            (
                "FieldValueInvalid",
                "spec.dnsConfig.nameservers",
                'Invalid value: []string{"1.1.1.1", "dns.example", "8.8.8.8", "9.9.9.9"}: must'
                " not have more than 3 nameservers",
            ),
            (
                "FieldValueInvalid",
                "spec.dnsConfig.nameservers[1]",
                'Invalid value: "dns.example": must be a valid IP address, (e.g. 10.9.8.7 or'
                " 2001:db8::ffff)",
            ),
            (
                "FieldValueInvalid",
                "spec.dnsConfig.searches[0]",
                'Invalid value: "Bad_Domain": a lowercase RFC 1123 subdomain must consist of'
                " lower case alphanumeric characters, '-' or '.', and must start and end with an"
                " alphanumeric character (e.g. 'example.com', regex used for validation is"
                " '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            ),
            (
                "FieldValueRequired",
                "spec.dnsConfig.options[0]",
                "Required value: must not be empty",
            ),
            (
                "FieldValueInvalid",
                "spec.readinessGates[0].conditionType",
                'Invalid value: "bad gate": name part must consist of alphanumeric characters,'
                " '-', '_' or '.', and must start and end with an alphanumeric character (e.g."
                " 'MyName',  or 'my.name',  or '123-abc', regex used for validation is"
                " '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            ),
            ("FieldValueDuplicate", "spec.schedulingGates[1]", 'Duplicate value: "g"'),
        ],
        id="dns-config-and-gates",
    ),
    pytest.param(
        {
            "topologySpreadConstraints": [
                {
                    "maxSkew": 0,
                    "topologyKey": "zone",
                    "whenUnsatisfiable": "ScheduleAnyway",
                    "minDomains": 2,
                },
                {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"},
                {"maxSkew": 1, "whenUnsatisfiable": "Never"},
            ]
        },
        [
            (
                "FieldValueInvalid",
                "spec.topologySpreadConstraints[0].maxSkew",
                "Invalid value: 0: must be greater than zero",
            ),
            (
                "FieldValueDuplicate",
                "spec.topologySpreadConstraints[0].{topologyKey, whenUnsatisfiable}",
                'Duplicate value: "{zone, ScheduleAnyway}"',
            ),
            (
                "FieldValueInvalid",
                "spec.topologySpreadConstraints[0].minDomains",
                "Invalid value: 2: can only use minDomains if whenUnsatisfiable=DoNotSchedule,"
                " not ScheduleAnyway",
            ),
            (
                "FieldValueRequired",
                "spec.topologySpreadConstraints[2].topologyKey",
                "Required value: can not be empty",
            ),
            (
                "FieldValueNotSupported",
                "spec.topologySpreadConstraints[2].whenUnsatisfiable",
                'Unsupported value: "Never": supported values: "DoNotSchedule", "ScheduleAnyway"',
            ),
        ],
        id="topology-spread",
    ),
    pytest.param(
        {
            "containers": _c(volumeMounts=[{"name": "v", "mountPath": "/v", "subPath": "../x"}]),
            "volumes": [{"name": "v", "emptyDir": {"sizeLimit": "-1Gi"}}],
        },
        [
            (
                "FieldValueForbidden",
                "spec.volumes[0].emptyDir.sizeLimit",
                "Forbidden: SizeLimit field must be a valid resource quantity",
            ),
            ("FieldValueNotFound", f"{_C0}.volumeMounts[0].name", 'Not found: "v"'),
            (
                "FieldValueInvalid",
                f"{_C0}.volumeMounts.subPath",
                "Invalid value: \"../x\": must not contain '..'",
            ),
        ],
        id="sub-path-and-size-limit",
    ),
]


@pytest.mark.parametrize(("spec", "causes"), CREATE + MORE_CREATE + DETAILS)
async def test_pod_create_refused(
    backend: Backend, spec: dict[str, Any], causes: list[Cause]
) -> None:
    reply = await req(backend, "POST", pods(backend), _pod(**spec))
    assert (reply.status, reply.body) == (422, invalid("Pod", "", "p", causes))


_FORBIDDEN_UPDATE = (
    "Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
    "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only"
    " additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be"
    " set to 1 if it was previously negative)"
)
_TOLERATION = {"key": "k", "operator": "Exists", "effect": "NoSchedule"}

UPDATE: list[Any] = [
    pytest.param(
        {"containers": _c(command=["sleep", "1"])},
        [("FieldValueForbidden", "spec", _FORBIDDEN_UPDATE)],
        id="container-command",
    ),
    pytest.param(
        {"restartPolicy": "Never"},
        [("FieldValueForbidden", "spec", _FORBIDDEN_UPDATE)],
        id="restart-policy",
    ),
    pytest.param(
        {"containers": [*_c(), {"name": "d", "image": "busybox"}]},
        [
            (
                "FieldValueForbidden",
                "spec.containers",
                "Forbidden: pod updates may not add or remove containers",
            )
        ],
        id="add-container",
    ),
    pytest.param(
        {"tolerations": []},
        [
            (
                "FieldValueForbidden",
                "spec.tolerations",
                "Forbidden: existing toleration can not be modified except its tolerationSeconds",
            )
        ],
        id="remove-tolerations",
    ),
    pytest.param(
        {"activeDeadlineSeconds": 200},
        [
            (
                "FieldValueInvalid",
                "spec.activeDeadlineSeconds",
                "Invalid value: 200: must be less than or equal to previous value",
            )
        ],
        id="raise-active-deadline",
    ),
    pytest.param(
        {"containers": _c(image="")},
        [("FieldValueRequired", f"{_C0}.image", "Required value")] * 2,
        id="clear-image",
    ),
]


def _prefix_match(actual: list[Cause], expected: list[Cause]) -> bool:
    """The causes agree, a cause of the spec rule only up to the Go diff of the two specs
    kube-apiserver appends to its message (see embedded-server-differences)."""
    if len(actual) != len(expected):
        return False
    return all(
        a[:2] == e[:2]
        and (a[2] == e[2] or (e[2] == _FORBIDDEN_UPDATE and a[2].startswith(e[2] + "\n")))
        for a, e in zip(actual, expected, strict=True)
    )


async def _stored_pod(backend: Backend) -> dict[str, Any]:
    body = _pod(tolerations=[_TOLERATION], activeDeadlineSeconds=100)
    return await ok(backend, "POST", pods(backend), body)


def _changed(stored: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    """``stored`` with ``spec`` set; one container's fields change the stored container
    (its defaults kept)."""
    changed = copy.deepcopy(stored)
    for key, value in spec.items():
        if key == "containers" and len(value) == 1:
            changed["spec"]["containers"][0].update(value[0])
        else:
            changed["spec"][key] = value
    return changed


@pytest.mark.parametrize(("spec", "causes"), UPDATE)
async def test_pod_update_refused(
    backend: Backend, spec: dict[str, Any], causes: list[Cause]
) -> None:
    stored = await _stored_pod(backend)
    changed = _changed(stored, spec)
    reply = await req(backend, "PUT", f"{pods(backend)}/p", changed)
    assert reply.status == 422, reply.body
    assert _prefix_match(causes_of(reply), causes), causes_of(reply)
    if all(message != _FORBIDDEN_UPDATE for _, _, message in causes):
        assert reply.body == invalid("Pod", "", "p", causes)
    assert reply.body["message"].startswith('Pod "p" is invalid: ')


@pytest.mark.parametrize(
    "spec",
    [
        pytest.param({"containers": _c(image="busybox:1.36")}, id="image"),
        pytest.param({"activeDeadlineSeconds": 50}, id="lower-active-deadline"),
        pytest.param(
            {"tolerations": [_TOLERATION, {"key": "x", "operator": "Exists"}]},
            id="add-toleration",
        ),
    ],
)
async def test_pod_update_allowed(backend: Backend, spec: dict[str, Any]) -> None:
    stored = await _stored_pod(backend)
    changed = _changed(stored, spec)["spec"]
    updated = (await ok(backend, "PUT", f"{pods(backend)}/p", {**stored, "spec": changed}))["spec"]
    # DefaultTolerationSeconds adds its not-ready tolerations back on every write.
    tolerations = updated.pop("tolerations")
    assert all(t in tolerations for t in changed.pop("tolerations"))
    assert updated == changed


async def test_pod_status_update_refused(backend: Backend) -> None:
    """ValidatePodStatusUpdate: the QoS class is immutable, nodeName is not set through
    status, condition types are qualified names."""
    stored = await _stored_pod(backend)
    changed = copy.deepcopy(stored)
    changed["status"]["qosClass"] = "Guaranteed"
    changed["status"]["conditions"] = [{"type": "bad type", "status": "True"}]
    reply = await req(backend, "PUT", f"{pods(backend)}/p/status", changed)
    assert (reply.status, reply.body) == (
        422,
        invalid(
            "Pod",
            "",
            "p",
            [
                (
                    "FieldValueInvalid",
                    "metadata.conditions[0].Type",
                    'Invalid value: "bad type": name part must consist of alphanumeric'
                    " characters, '-', '_' or '.', and must start and end with an alphanumeric"
                    " character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for"
                    " validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
                ),
                (
                    "FieldValueInvalid",
                    "status.qosClass",
                    'Invalid value: "Guaranteed": field is immutable',
                ),
            ],
        ),
    )


async def test_defaults_validation_relies_on(backend: Backend) -> None:
    """What kube-apiserver defaults before validating: a volume without a source is an
    emptyDir, sources get their defaultMode, probes their timings and HTTP path."""
    probe = {"httpGet": {"port": 80}}
    body = _pod(
        volumes=[{"name": "v"}, {"name": "s", "secret": {"secretName": "x"}}],
        containers=_c(livenessProbe=probe, volumeMounts=[{"name": "v", "mountPath": "/v"}]),
    )
    created = await ok(backend, "POST", pods(backend), body)
    assert created["spec"]["volumes"] == [
        {"name": "v", "emptyDir": {}},
        {"name": "s", "secret": {"secretName": "x", "defaultMode": 420}},
    ]
    assert created["spec"]["containers"][0]["livenessProbe"] == {
        "httpGet": {"port": 80, "path": "/", "scheme": "HTTP"},
        "timeoutSeconds": 1,
        "periodSeconds": 10,
        "successThreshold": 1,
        "failureThreshold": 3,
    }


@pytest.mark.parametrize(
    ("resources", "qos"),
    [
        pytest.param({}, "BestEffort", id="best-effort"),
        pytest.param({"limits": {"cpu": "1"}}, "Burstable", id="burstable"),
        pytest.param({"limits": {"cpu": "1", "memory": "1Gi"}}, "Guaranteed", id="guaranteed"),
    ],
)
async def test_requests_default_to_limits_and_qos_class(
    backend: Backend, resources: dict[str, Any], qos: str
) -> None:
    """SetDefaults_Pod copies limits to missing requests; the QoS class follows (the
    validation of requests against limits sees the defaulted requests)."""
    created = await ok(backend, "POST", pods(backend), _pod(containers=_c(resources=resources)))
    limits = resources.get("limits", {})
    expected = {"limits": limits, "requests": limits} if limits else {}
    assert created["spec"]["containers"][0]["resources"] == expected
    assert created["status"]["qosClass"] == qos


async def test_host_network_ports_default_to_container_ports(backend: Backend) -> None:
    """SetDefaults_Pod: under hostNetwork a port's hostPort is its containerPort."""
    body = _pod(hostNetwork=True, containers=_c(ports=[{"containerPort": 8080}]))
    created = await ok(backend, "POST", pods(backend), body)
    assert created["spec"]["containers"][0]["ports"] == [
        {"containerPort": 8080, "hostPort": 8080, "protocol": "TCP"}
    ]
