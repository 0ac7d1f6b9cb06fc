"""Networking, policy and autoscaling kinds: Ingress, NetworkPolicy
(networking.k8s.io/v1), PodDisruptionBudget (policy/v1), HorizontalPodAutoscaler
(autoscaling/v2)."""

from __future__ import annotations

from hypothesis import strategies as st

from .common import dns_label, dns_subdomain, invalid, labels, obj, selector_labels, updates
from .spec import KindSpec, Obj, changes, drop, put, put_drawn

_SERVICE_PORT = st.one_of(
    st.integers(1, 65535).map(lambda n: {"number": n}),
    dns_label(5).map(lambda n: {"name": n}),
)
_BACKEND = st.builds(
    lambda name, port: {"service": {"name": name, "port": port}}, dns_label(), _SERVICE_PORT
)
_PATH = st.fixed_dictionaries(
    {
        "path": st.sampled_from(["/", "/api", "/a/b"]),
        "pathType": st.sampled_from(["Prefix", "Exact", "ImplementationSpecific"]),
        "backend": _BACKEND,
    }
)
_RULE = st.fixed_dictionaries(
    {"http": st.lists(_PATH, min_size=1, max_size=2).map(lambda p: {"paths": p})},
    optional={"host": st.one_of(dns_subdomain(), dns_subdomain().map(lambda h: f"*.{h}"))},
)
_INGRESS_SPEC = st.fixed_dictionaries(
    {"rules": st.lists(_RULE, min_size=1, max_size=2)},
    optional={
        "ingressClassName": dns_label(),
        "defaultBackend": _BACKEND,
        "tls": st.lists(
            st.fixed_dictionaries(
                {"hosts": st.lists(dns_subdomain(), max_size=2)},
                optional={"secretName": dns_label()},
            ),
            max_size=1,
        ),
    },
)

INGRESS = KindSpec(
    "Ingress",
    "networking.k8s.io/v1",
    "ingresses",
    True,
    obj("networking.k8s.io/v1", "Ingress", spec=_INGRESS_SPEC),
    invalid(
        put("spec.rules.0.http.paths.0.pathType", "Bogus"),
        drop("spec.rules.0.http.paths.0.pathType"),
        put("spec.rules.0.http.paths.0.path", "relative"),
        drop("spec.rules.0.http.paths.0.backend"),
        put("spec.rules.0.http.paths.0.backend.service.port", {"number": 0}),
        put("spec.rules.0.http.paths.0.backend.service.port", {"number": 80, "name": "http"}),
        put("spec.rules.0.host", "Bad_Host"),
        put("spec.rules.0.host", "1.2.3.4"),
        put("spec.rules", []),
        put("spec.ingressClassName", "Bad_Class"),
    ),
    updates(
        put_drawn("spec.rules", st.lists(_RULE, min_size=1, max_size=2)),
        put_drawn("spec.ingressClassName", dns_label()),
        changes(drop("spec.tls")),
    ),
)

_PEER = st.one_of(
    labels().map(lambda m: {"podSelector": {"matchLabels": m}}),
    labels().map(lambda m: {"namespaceSelector": {"matchLabels": m}}),
    st.sampled_from(["10.0.0.0/8", "192.168.1.0/24"]).map(lambda c: {"ipBlock": {"cidr": c}}),
)
_NP_PORT = st.fixed_dictionaries(
    {},
    optional={
        "protocol": st.sampled_from(["TCP", "UDP", "SCTP"]),
        "port": st.one_of(st.integers(1, 65535), dns_label(5)),
    },
)
_NP_RULE = st.fixed_dictionaries(
    {},
    optional={"ports": st.lists(_NP_PORT, max_size=2), "from": st.lists(_PEER, max_size=2)},
)


def _network_policy_spec() -> st.SearchStrategy[Obj]:
    return st.fixed_dictionaries(
        {"podSelector": labels().map(lambda m: {"matchLabels": m} if m else {})},
        optional={
            "policyTypes": st.sampled_from([["Ingress"], ["Egress"], ["Ingress", "Egress"]]),
            "ingress": st.lists(_NP_RULE, max_size=2),
            "egress": st.lists(
                _NP_RULE.map(lambda r: {("to" if k == "from" else k): v for k, v in r.items()}),
                max_size=1,
            ),
        },
    )


NETWORK_POLICY = KindSpec(
    "NetworkPolicy",
    "networking.k8s.io/v1",
    "networkpolicies",
    True,
    obj("networking.k8s.io/v1", "NetworkPolicy", spec=_network_policy_spec()),
    invalid(
        put("spec.policyTypes", ["Bogus"]),
        put("spec.ingress", [{"from": [{"ipBlock": {"cidr": "x"}}]}]),
        put(
            "spec.ingress",
            [{"from": [{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["192.168.0.0/16"]}}]}],
        ),
        put("spec.ingress", [{"ports": [{"port": 0}]}]),
        put("spec.ingress", [{"ports": [{"protocol": "ICMP"}]}]),
        put("spec.ingress", [{"ports": [{"port": 80, "endPort": 70}]}]),
        put("spec.podSelector", {"matchLabels": {"bad key!": "v"}}),
        put("spec.ingress", [{"from": [{}]}]),
    ),
    updates(put_drawn("spec", _network_policy_spec())),
)

_PERCENT_OR_INT = st.one_of(st.integers(0, 5), st.sampled_from(["10%", "50%", "100%"]))


def _pdb_spec() -> st.SearchStrategy[Obj]:
    return st.builds(
        lambda sel, which, value, policy: {
            "selector": {"matchLabels": sel},
            which: value,
            **({"unhealthyPodEvictionPolicy": policy} if policy else {}),
        },
        selector_labels(),
        st.sampled_from(["minAvailable", "maxUnavailable"]),
        _PERCENT_OR_INT,
        st.sampled_from(["", "IfHealthyBudget", "AlwaysAllow"]),
    )


PDB = KindSpec(
    "PodDisruptionBudget",
    "policy/v1",
    "poddisruptionbudgets",
    True,
    obj("policy/v1", "PodDisruptionBudget", spec=_pdb_spec()),
    invalid(
        put("spec.minAvailable", -1),
        put("spec.maxUnavailable", "150%"),
        put("spec.minAvailable", "ten"),
        put("spec.unhealthyPodEvictionPolicy", "Bogus"),
        put("spec.selector", {"matchExpressions": [{"key": "a", "operator": "Bogus"}]}),
        put("spec.selector.matchLabels", {"bad key!": "v"}),
    ),
    updates(put_drawn("spec", _pdb_spec())),
)

_METRIC = st.one_of(
    st.integers(1, 100).map(
        lambda n: {
            "type": "Resource",
            "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": n}},
        }
    ),
    st.sampled_from(["100Mi", "1Gi", "500M"]).map(
        lambda q: {
            "type": "Resource",
            "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": q}},
        }
    ),
)


def _hpa_spec() -> st.SearchStrategy[Obj]:
    return st.builds(
        lambda name, low, extra, metrics, behavior: {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
            "minReplicas": low,
            "maxReplicas": low + extra,
            **({"metrics": metrics} if metrics else {}),
            **({"behavior": behavior} if behavior else {}),
        },
        dns_label(),
        st.integers(1, 5),
        st.integers(0, 5),
        st.lists(_METRIC, max_size=2),
        st.one_of(
            st.just({}),
            st.integers(0, 3600).map(lambda w: {"scaleDown": {"stabilizationWindowSeconds": w}}),
        ),
    )


HPA = KindSpec(
    "HorizontalPodAutoscaler",
    "autoscaling/v2",
    "horizontalpodautoscalers",
    True,
    obj("autoscaling/v2", "HorizontalPodAutoscaler", spec=_hpa_spec()),
    invalid(
        put("spec.minReplicas", 0),
        put("spec.maxReplicas", 0),
        drop("spec.scaleTargetRef.kind"),
        put("spec.scaleTargetRef.name", "Bad/Name"),
        put("spec.metrics", [{"type": "Bogus"}]),
        put("spec.metrics", [{"type": "Resource"}]),
        put(
            "spec.metrics",
            [
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "target": {"type": "Utilization", "averageUtilization": 0},
                    },
                }
            ],
        ),
        put("spec.behavior", {"scaleUp": {"stabilizationWindowSeconds": -1}}),
    ),
    updates(
        put_drawn("spec.maxReplicas", st.integers(5, 20)),
        put_drawn("spec.metrics", st.lists(_METRIC, max_size=1)),
        changes(put("spec.scaleTargetRef.kind", "StatefulSet")),
    ),
)

KINDS: tuple[KindSpec, ...] = (INGRESS, NETWORK_POLICY, PDB, HPA)
