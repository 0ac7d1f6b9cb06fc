"""Kinds of other API groups validated as kube-apiserver does (issue 28): Ingress and
NetworkPolicy, PodDisruptionBudget, HorizontalPodAutoscaler, RBAC bindings, Lease, and
Events of both APIs. Each row: an object (or a change to one) and the 422 it gets,
causes and message byte for byte, or its acceptance."""

from __future__ import annotations

from typing import Any

import pytest

from reconcile_kit.testing.backends import Backend

from .test_validation_core import QUALIFIED, RFC1123_SUB, forb, inv, req_, unsupported
from .validation_table import Cause, create_refused, update_refused

RBAC = "rbac.authorization.k8s.io"
PERCENT = (
    "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or"
    " '93%', regex used for validation is '[0-9]+%')"
)


def ing(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "ing"}, "spec": spec}


def rule(path: dict[str, Any], host: str = "") -> dict[str, Any]:
    item: dict[str, Any] = {"http": {"paths": [path]}}
    return {**item, "host": host} if host else item


BACKEND = {"service": {"name": "web", "port": {"number": 80}}}
GOOD_PATH = {"path": "/", "pathType": "Prefix", "backend": BACKEND}

INGRESS = [
    pytest.param(
        ing(),
        [
            inv(
                "spec",
                "[]networking.IngressRule(nil)",
                "either `defaultBackend` or `rules` must be specified",
            )
        ],
        id="no-rules",
    ),
    pytest.param(
        ing(rules=[rule({"path": "/", "backend": BACKEND})]),
        [req_("spec.rules[0].http.paths[0].pathType", "pathType must be specified")],
        id="path-type-required",
    ),
    pytest.param(
        ing(rules=[rule({"path": "/", "pathType": "Regex", "backend": BACKEND})]),
        [
            unsupported(
                "spec.rules[0].http.paths[0].pathType",
                "Regex",
                "Exact",
                "ImplementationSpecific",
                "Prefix",
            )
        ],
        id="path-type",
    ),
    pytest.param(
        ing(rules=[rule({"path": "api", "pathType": "Prefix", "backend": BACKEND})]),
        [inv("spec.rules[0].http.paths[0].path", '"api"', "must be an absolute path")],
        id="relative-path",
    ),
    pytest.param(
        ing(rules=[rule({"path": "/a//b", "pathType": "Exact", "backend": BACKEND})]),
        [inv("spec.rules[0].http.paths[0].path", '"/a//b"', "must not contain '//'")],
        id="path-sequence",
    ),
    pytest.param(
        ing(rules=[rule({"path": "/", "pathType": "Prefix", "backend": {}})]),
        [
            inv(
                "spec.rules[0].http.paths[0].backend",
                '""',
                "resource or service backend is required",
            )
        ],
        id="backend-required",
    ),
    pytest.param(
        ing(
            rules=[
                rule({"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "web"}}})
            ]
        ),
        [req_("spec.rules[0].http.paths[0].backend", "port name or number is required")],
        id="backend-port-required",
    ),
    pytest.param(
        ing(defaultBackend={"service": {"name": "web", "port": {"number": 70000}}}),
        [
            inv(
                "spec.defaultBackend.service.port.number",
                "70000",
                "must be between 1 and 65535, inclusive",
            )
        ],
        id="backend-port-number",
    ),
    pytest.param(
        ing(rules=[rule(GOOD_PATH, host="10.1.2.3")]),
        [inv("spec.rules[0].host", '"10.1.2.3"', "must be a DNS name, not an IP address")],
        id="host-ip",
    ),
    pytest.param(
        ing(rules=[rule(GOOD_PATH, host="Bad.example.com")]),
        [inv("spec.rules[0].host", '"Bad.example.com"', RFC1123_SUB)],
        id="host",
    ),
    pytest.param(
        ing(rules=[rule(GOOD_PATH, host="*.example.com")]),
        [],
        id="wildcard-host",
    ),
    pytest.param(
        ing(defaultBackend=BACKEND, tls=[{"hosts": ["a.example.com"], "secretName": "Bad_Name"}]),
        [inv("spec.tls[0].secretName", '"Bad_Name"', RFC1123_SUB)],
        id="tls-secret-name",
    ),
    pytest.param(
        {
            "metadata": {"name": "ing", "annotations": {"kubernetes.io/ingress.class": "a"}},
            "spec": {"defaultBackend": BACKEND, "ingressClassName": "b"},
        },
        [
            inv(
                "annotations.kubernetes.io/ingress.class",
                '"a"',
                "must match `ingressClassName` when both are specified",
            )
        ],
        id="class-annotation",
    ),
    pytest.param(
        ing(defaultBackend=BACKEND, ingressClassName="Bad_Class"),
        [inv("spec.ingressClassName", '"Bad_Class"', RFC1123_SUB)],
        id="class-name",
    ),
]


@pytest.mark.parametrize(("body", "causes"), INGRESS)
async def test_ingress_create(backend: Backend, body: dict[str, Any], causes: list[Cause]) -> None:
    await create_refused(backend, "ingresses", body, causes)


def netpol(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "np"}, "spec": {"podSelector": {}, **spec}}


NETWORK_POLICIES = [
    pytest.param(
        netpol(ingress=[{"ports": [{"protocol": "ICMP", "port": 80}]}]),
        [unsupported("spec.ingress[0].ports[0].protocol", "ICMP", "TCP", "UDP", "SCTP")],
        id="protocol",
    ),
    pytest.param(
        netpol(ingress=[{"ports": [{"port": 80, "endPort": 70}]}]),
        [inv("spec.ingress[0].ports[0].endPort", "80", "must be greater than or equal to `port`")],
        id="end-port",
    ),
    pytest.param(
        netpol(egress=[{"to": [{}]}]),
        [req_("spec.egress[0].to[0]", "must specify a peer")],
        id="empty-peer",
    ),
    pytest.param(
        netpol(ingress=[{"from": [{"ipBlock": {"cidr": "10.0.0.0/8"}, "podSelector": {}}]}]),
        [forb("spec.ingress[0].from[0]", "may not specify both ipBlock and another peer")],
        id="ipblock-and-selector",
    ),
    pytest.param(
        netpol(
            ingress=[{"from": [{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["11.0.0.0/16"]}}]}]
        ),
        [
            inv(
                "spec.ingress[0].from[0].ipBlock.except[0]",
                '"11.0.0.0/16"',
                "must be a strict subset of `cidr`",
            )
        ],
        id="ipblock-except",
    ),
    pytest.param(
        netpol(ingress=[{"from": [{"ipBlock": {"cidr": "10.0.0.0"}}]}]),
        [
            inv(
                "spec.ingress[0].from[0].ipBlock.cidr",
                '"10.0.0.0"',
                "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
            )
        ],
        id="ipblock-cidr",
    ),
    pytest.param(
        netpol(policyTypes=["Sideways"]),
        [unsupported("spec.policyTypes[0]", "Sideways", "Ingress", "Egress")],
        id="policy-type",
    ),
    pytest.param(
        netpol(podSelector={"matchExpressions": [{"key": "a", "operator": "Has"}]}),
        [
            inv(
                "spec.podSelector.matchExpressions[0].operator",
                '"Has"',
                "not a valid selector operator",
            )
        ],
        id="selector-operator",
    ),
]


@pytest.mark.parametrize(("body", "causes"), NETWORK_POLICIES)
async def test_network_policy_create(
    backend: Backend, body: dict[str, Any], causes: list[Cause]
) -> None:
    await create_refused(backend, "networkpolicies", body, causes)


def pdb(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "pdb"}, "spec": {"selector": {"matchLabels": {"a": "b"}}, **spec}}


PDBS = [
    pytest.param(
        pdb(minAvailable=1, maxUnavailable=1),
        [
            inv(
                "spec",
                "policy.PodDisruptionBudgetSpec{MinAvailable:(*intstr.IntOrString)(0x),"
                " Selector:(*v1.LabelSelector)(0x), MaxUnavailable:(*intstr.IntOrString)(0x),"
                " UnhealthyPodEvictionPolicy:(*policy.UnhealthyPodEvictionPolicyType)(nil)}",
                "minAvailable and maxUnavailable cannot be both set",
            )
        ],
        id="both",
    ),
    pytest.param(
        pdb(minAvailable="150%"),
        [
            inv(
                "spec.minAvailable",
                'intstr.IntOrString{Type:1, IntVal:0, StrVal:"150%"}',
                "must not be greater than 100%",
            )
        ],
        id="over-100-percent",
    ),
    pytest.param(
        pdb(maxUnavailable="half"),
        [
            inv(
                "spec.maxUnavailable",
                'intstr.IntOrString{Type:1, IntVal:0, StrVal:"half"}',
                PERCENT,
            )
        ],
        id="not-a-percent",
    ),
    pytest.param(
        pdb(minAvailable=-1),
        [inv("spec.minAvailable", "-1", "must be greater than or equal to 0")],
        id="negative",
    ),
    pytest.param(
        pdb(unhealthyPodEvictionPolicy="Never"),
        [unsupported("spec.unhealthyPodEvictionPolicy", "Never", "AlwaysAllow", "IfHealthyBudget")],
        id="eviction-policy",
    ),
    pytest.param(pdb(maxUnavailable="50%"), [], id="percent"),
]


@pytest.mark.parametrize(("body", "causes"), PDBS)
async def test_pdb_create(backend: Backend, body: dict[str, Any], causes: list[Cause]) -> None:
    await create_refused(backend, "poddisruptionbudgets", body, causes)


def hpa(**spec: Any) -> dict[str, Any]:
    ref = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
    return {"metadata": {"name": "hpa"}, "spec": {"scaleTargetRef": ref, "maxReplicas": 3, **spec}}


HPAS = [
    pytest.param(
        hpa(minReplicas=0),
        [
            inv("spec.minReplicas", "0", "must be greater than or equal to 1"),
            forb(
                "spec.metrics",
                "must specify at least one Object or External metric to support scaling to zero"
                " replicas",
            ),
        ],
        id="min-replicas",
    ),
    pytest.param(
        hpa(minReplicas=5),
        [inv("spec.maxReplicas", "3", "must be greater than or equal to `minReplicas`")],
        id="max-below-min",
    ),
    pytest.param(
        hpa(maxReplicas=0),
        [
            inv("spec.maxReplicas", "0", "must be greater than 0"),
            inv("spec.maxReplicas", "0", "must be greater than or equal to `minReplicas`"),
        ],
        id="max-zero",
    ),
    pytest.param(
        hpa(scaleTargetRef={"kind": "", "name": "a/b"}),
        [
            req_("spec.scaleTargetRef.kind"),
            inv("spec.scaleTargetRef.name", '"a/b"', "may not contain '/'"),
        ],
        id="target-ref",
    ),
    pytest.param(
        hpa(
            metrics=[
                {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization"}}}
            ]
        ),
        [
            req_(
                "spec.metrics[0].resource.target.averageUtilization",
                "must set either a target raw value or a target utilization",
            )
        ],
        id="resource-target",
    ),
    pytest.param(
        hpa(metrics=[{"type": "Pods"}]),
        [req_("spec.metrics[0].pods", "must populate information for the given metric source")],
        id="pods-source-missing",
    ),
    pytest.param(
        hpa(metrics=[{"type": "Magic"}]),
        [
            unsupported(
                "spec.metrics[0].type",
                "Magic",
                "ContainerResource",
                "External",
                "Object",
                "Pods",
                "Resource",
            ),
            unsupported(
                "spec.metrics[0].type",
                "Magic",
                "ContainerResource",
                "External",
                "Object",
                "Pods",
                "Resource",
            ),
        ],
        id="metric-type",
    ),
    pytest.param(
        hpa(behavior={"scaleUp": {"stabilizationWindowSeconds": 4000}}),
        [
            inv(
                "spec.behavior.scaleUp.stabilizationWindowSeconds",
                "4000",
                "must be less than or equal to 3600",
            )
        ],
        id="stabilization-window",
    ),
    pytest.param(
        hpa(
            behavior={
                "scaleDown": {"policies": [{"type": "Pods", "value": 0, "periodSeconds": 2000}]}
            }
        ),
        [
            inv("spec.behavior.scaleDown.policies[0].value", "0", "must be greater than zero"),
            inv(
                "spec.behavior.scaleDown.policies[0].periodSeconds",
                "2000",
                "must be less than or equal to 1800",
            ),
        ],
        id="scaling-policy",
    ),
]


@pytest.mark.parametrize(("body", "causes"), HPAS)
async def test_hpa_create(backend: Backend, body: dict[str, Any], causes: list[Cause]) -> None:
    await create_refused(backend, "horizontalpodautoscalers", body, causes)


def binding(kind: str = "ClusterRole", name: str = "view") -> dict[str, Any]:
    return {
        "metadata": {"name": "rb"},
        "roleRef": {"apiGroup": RBAC, "kind": kind, "name": name},
        "subjects": [{"kind": "User", "apiGroup": RBAC, "name": "alice"}],
    }


UPDATES = [
    pytest.param(
        "rolebindings",
        binding(),
        {"roleRef": {"name": "edit"}},
        [
            inv(
                "roleRef",
                'rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole",'
                ' Name:"edit"}',
                "cannot change roleRef",
            )
        ],
        id="rolebinding-roleref",
    ),
    pytest.param(
        "clusterrolebindings",
        binding(),
        {"roleRef": {"name": "edit"}},
        [
            inv(
                "roleRef",
                'rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole",'
                ' Name:"edit"}',
                "cannot change roleRef",
            )
        ],
        id="clusterrolebinding-roleref",
    ),
    pytest.param(
        "rolebindings",
        binding(),
        {"subjects": [{"kind": "Group", "apiGroup": RBAC, "name": "devs"}]},
        [],
        id="rolebinding-subjects",
    ),
    pytest.param(
        "rolebindings",
        binding(),
        {"subjects": [{"kind": "Robot", "name": "r"}]},
        [unsupported("subjects[0].kind", "Robot", "ServiceAccount", "User", "Group")] * 2,
        id="rolebinding-validated-twice",
    ),
    pytest.param(
        "horizontalpodautoscalers",
        hpa(),
        {"spec": {"minReplicas": 0}},
        [
            inv("spec.minReplicas", "0", "must be greater than or equal to 1"),
            forb(
                "spec.metrics",
                "must specify at least one Object or External metric to support scaling to zero"
                " replicas",
            ),
        ],
        id="hpa-min-replicas",
    ),
    pytest.param(
        "ingresses",
        ing(defaultBackend=BACKEND),
        {"spec": {"defaultBackend": None}},
        [
            inv(
                "spec",
                "[]networking.IngressRule(nil)",
                "either `defaultBackend` or `rules` must be specified",
            )
        ],
        id="ingress-backend-removed",
    ),
    pytest.param(
        "poddisruptionbudgets",
        pdb(minAvailable=1),
        {"spec": {"minAvailable": "101%"}},
        [
            inv(
                "spec.minAvailable",
                'intstr.IntOrString{Type:1, IntVal:0, StrVal:"101%"}',
                "must not be greater than 100%",
            )
        ],
        id="pdb-min-available",
    ),
    pytest.param(
        "leases",
        {"metadata": {"name": "l"}, "spec": {"holderIdentity": "a"}},
        {"spec": {"leaseTransitions": -1}},
        [inv("spec.leaseTransitions", "-1", "must be greater than or equal to 0")],
        id="lease-transitions",
    ),
]


UPDATES += [
    pytest.param(
        "networkpolicies",
        netpol(),
        {"spec": {"policyTypes": ["Ingress", "Egress", "Ingress"]}},
        [
            inv(
                "spec.policyTypes",
                '[]networking.PolicyType{"Ingress", "Egress", "Ingress"}',
                "may not specify more than two policyTypes",
            )
        ]
        * 2,  # the strategy validates the spec twice on an update
        id="networkpolicy-policy-types",
    ),
    pytest.param(
        "ingresses",
        ing(defaultBackend=BACKEND),
        {"spec": {"tls": [{"hosts": ["*.example.com", "Bad"]}]}},
        [inv("spec.tls[0].hosts[1]", '"Bad"', RFC1123_SUB)],
        id="ingress-tls-host",
    ),
]


@pytest.mark.parametrize(("plural", "body", "patch", "causes"), UPDATES)
async def test_update(
    backend: Backend,
    plural: str,
    body: dict[str, Any],
    patch: dict[str, Any],
    causes: list[Cause],
) -> None:
    await update_refused(backend, plural, body, patch, causes)


LEASES = [
    pytest.param(
        {"spec": {"leaseDurationSeconds": 0}},
        [inv("spec.leaseDurationSeconds", "0", "must be greater than 0")],
        id="duration",
    ),
    pytest.param(
        {"spec": {"leaseTransitions": -2}},
        [inv("spec.leaseTransitions", "-2", "must be greater than or equal to 0")],
        id="transitions",
    ),
    pytest.param(
        {"spec": {"strategy": "Bogus", "preferredHolder": "x"}},
        [],
        id="gated-fields-dropped",
    ),
]


@pytest.mark.parametrize(("body", "causes"), LEASES)
async def test_lease_create(backend: Backend, body: dict[str, Any], causes: list[Cause]) -> None:
    await create_refused(backend, "leases", {"metadata": {"name": "l"}, **body}, causes)


def core_event(**fields: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "ev"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "{ns}"},
        "reason": "Started",
        "message": "hi",
        **fields,
    }


def v1_event(**fields: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "ev"},
        "eventTime": "2024-01-01T00:00:00.000000Z",
        "reportingController": "example.com/ctl",
        "reportingInstance": "ctl-1",
        "action": "Act",
        "reason": "Why",
        "type": "Normal",
        "regarding": {"kind": "Pod", "name": "p", "namespace": "{ns}"},
        **fields,
    }


EVENTS = [
    pytest.param("events", core_event(), [], id="core-ok"),
    pytest.param(
        "events",
        core_event(involvedObject={"kind": "Pod", "name": "p"}),
        [inv("involvedObject.namespace", '""', "does not match event.namespace")],
        id="core-involved-namespace-missing",
    ),
    pytest.param(
        "events",
        core_event(eventTime="2024-01-01T00:00:00.000000Z"),
        [
            req_("reportingComponent"),
            inv("reportingComponent", '""', "name part must be non-empty"),
            inv("reportingComponent", '""', QUALIFIED),
            req_("reportingInstance"),
            req_("action"),
        ],
        id="core-event-time-needs-reporting",
    ),
    pytest.param(
        "events",
        core_event(
            eventTime="2024-01-01T00:00:00.000000Z",
            reportingComponent="bad name",
            reportingInstance="i",
            action="a" * 129,
        ),
        [
            inv("reportingComponent", '"bad name"', QUALIFIED),
            inv("action", '""', "can have at most 128 characters"),
        ],
        id="core-reporting-fields",
    ),
    pytest.param("events.k8s.io/events", v1_event(), [], id="v1-ok"),
    pytest.param(
        "events.k8s.io/events",
        v1_event(type="Odd"),
        [inv("type", '""', "has invalid value: Odd")],
        id="v1-type",
    ),
    pytest.param(
        "events.k8s.io/events",
        v1_event(
            deprecatedCount=3,
            series={"count": 1, "lastObservedTime": "2024-01-01T00:00:00.000000Z"},
        ),
        [
            inv("series.count", '""', "should be at least 2"),
            inv("count", '""', "needs to be unset"),
        ],
        id="v1-series-and-count",
    ),
    pytest.param(
        "events.k8s.io/events",
        v1_event(eventTime=None),
        [req_("eventTime")],
        id="v1-event-time-required",
    ),
]


def _fill(value: Any, ns: str) -> Any:
    if isinstance(value, dict):
        return {k: _fill(v, ns) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, ns) for v in value]
    if isinstance(value, tuple):
        return tuple(_fill(v, ns) for v in value)
    return value.replace("{ns}", ns) if isinstance(value, str) else value


@pytest.mark.parametrize(("plural", "body", "causes"), EVENTS)
async def test_event_create(
    backend: Backend, plural: str, body: dict[str, Any], causes: list[Cause]
) -> None:
    body = _fill({k: v for k, v in body.items() if v is not None}, backend.namespace)
    await create_refused(backend, plural, body, _fill(causes, backend.namespace))


EVENT_UPDATES = [
    pytest.param("events", core_event(), {"message": "changed"}, [], id="core-message"),
    pytest.param(
        "events.k8s.io/events",
        v1_event(note="hi"),
        {"note": "changed", "reportingInstance": "other"},
        [
            inv("message", '"changed"', "field is immutable"),
            inv("reportingInstance", '"other"', "field is immutable"),
        ],
        id="v1-immutable",
    ),
    pytest.param(
        "events.k8s.io/events",
        v1_event(),
        {"series": {"count": 1, "lastObservedTime": "2024-01-01T00:00:01.000000Z"}},
        [inv("series.count", '""', "should be at least 2")],
        id="v1-series",
    ),
]


@pytest.mark.parametrize(("plural", "body", "patch", "causes"), EVENT_UPDATES)
async def test_event_update(
    backend: Backend,
    plural: str,
    body: dict[str, Any],
    patch: dict[str, Any],
    causes: list[Cause],
) -> None:
    await update_refused(backend, plural, _fill(body, backend.namespace), patch, causes)


def lb_service(kind: str = "LoadBalancer") -> dict[str, Any]:
    return {"metadata": {"name": "s"}, "spec": {"type": kind, "ports": [{"port": 80}]}}


STATUS_UPDATES = [
    pytest.param(
        "services",
        lb_service("ClusterIP"),
        {"status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}},
        [
            forb(
                "status.loadBalancer.ingress",
                "may only be used when `spec.type` is 'LoadBalancer'",
            )
        ],
        id="service-not-load-balancer",
    ),
    pytest.param(
        "services",
        lb_service(),
        {"status": {"loadBalancer": {"ingress": [{"ip": "1.2.3"}, {"hostname": "1.2.3.4"}]}}},
        [
            inv(
                "status.loadBalancer.ingress[0].ip",
                '"1.2.3"',
                "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
            ),
            inv(
                "status.loadBalancer.ingress[1].hostname",
                '"1.2.3.4"',
                "must be a DNS name, not an IP address",
            ),
        ],
        id="service-ingress-points",
    ),
    pytest.param(
        "services",
        lb_service(),
        {"status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}},
        [],
        id="service-ip-mode-defaulted",
    ),
    pytest.param(
        "ingresses",
        ing(defaultBackend=BACKEND),
        {"status": {"loadBalancer": {"ingress": [{"ip": "x"}]}}},
        [
            inv(
                "status.loadBalancer.ingress[0].ip",
                '"x"',
                "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
            )
        ],
        id="ingress-ip",
    ),
    pytest.param(
        "horizontalpodautoscalers",
        hpa(),
        {"status": {"desiredReplicas": -1}},
        [inv("status.desiredReplicas", "-1", "must be greater than or equal to 0")],
        id="hpa-desired",
    ),
    pytest.param(
        "poddisruptionbudgets",
        pdb(minAvailable=1),
        {
            "status": {
                "expectedPods": -1,
                "conditions": [{"type": "Ready", "status": "Maybe", "reason": "no way"}],
            }
        },
        [
            unsupported("status.conditions[0].status", "Maybe", "False", "True", "Unknown"),
            req_("status.conditions[0].lastTransitionTime", "must be set"),
            inv(
                "status.conditions[0].reason",
                '"no way"',
                "a condition reason must start with alphabetic character, optionally followed by"
                " a string of alphanumeric characters or '_,:', and must end with an"
                " alphanumeric character or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', "
                " or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used for validation is"
                " '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')",
            ),
            inv("status.expectedPods", "-1", "must be greater than or equal to 0"),
        ],
        id="pdb-status",
    ),
]


@pytest.mark.parametrize(("plural", "body", "patch", "causes"), STATUS_UPDATES)
async def test_status_update(
    backend: Backend,
    plural: str,
    body: dict[str, Any],
    patch: dict[str, Any],
    causes: list[Cause],
) -> None:
    await update_refused(backend, plural, body, patch, causes, subresource="status")
