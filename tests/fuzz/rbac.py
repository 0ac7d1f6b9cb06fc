"""RBAC kinds (rbac.authorization.k8s.io/v1: Role, ClusterRole, RoleBinding,
ClusterRoleBinding) and Lease (coordination.k8s.io/v1)."""

from __future__ import annotations

from hypothesis import strategies as st

from .common import dns_label, invalid, labels, obj, updates
from .spec import KindSpec, Obj, changes, drop, put, put_drawn

RBAC = "rbac.authorization.k8s.io/v1"
_VERBS = ["get", "list", "watch", "create", "update", "patch", "delete", "*"]
_RESOURCE_RULE = st.fixed_dictionaries(
    {
        "verbs": st.lists(st.sampled_from(_VERBS), min_size=1, max_size=3, unique=True),
        "apiGroups": st.lists(
            st.sampled_from(["", "apps", "example.com", "*"]), min_size=1, max_size=2, unique=True
        ),
        "resources": st.lists(
            st.sampled_from(["pods", "deployments", "pods/status", "*"]),
            min_size=1,
            max_size=2,
            unique=True,
        ),
    },
    optional={"resourceNames": st.lists(dns_label(), max_size=2)},
)
_URL_RULE = st.fixed_dictionaries(
    {
        "verbs": st.lists(st.sampled_from(["get", "post"]), min_size=1, max_size=2, unique=True),
        "nonResourceURLs": st.lists(
            st.sampled_from(["/healthz", "/metrics", "/api/*"]), min_size=1, max_size=2, unique=True
        ),
    }
)

ROLE = KindSpec(
    "Role",
    RBAC,
    "roles",
    True,
    obj(RBAC, "Role", rules=st.lists(_RESOURCE_RULE, max_size=3)),
    invalid(
        put("rules", [{"verbs": [], "apiGroups": [""], "resources": ["pods"]}]),
        put("rules", [{"verbs": ["get"], "resources": ["pods"]}]),
        put("rules", [{"verbs": ["get"], "apiGroups": [""]}]),
        put("rules", [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]),
    ),
    updates(put_drawn("rules", st.lists(_RESOURCE_RULE, max_size=2))),
)

_AGGREGATION = labels(1).map(lambda m: {"clusterRoleSelectors": [{"matchLabels": m}]})

CLUSTER_ROLE = KindSpec(
    "ClusterRole",
    RBAC,
    "clusterroles",
    False,
    st.builds(
        lambda o, rules, agg: o | {"rules": rules} | ({"aggregationRule": agg} if agg else {}),
        obj(RBAC, "ClusterRole"),
        st.lists(st.one_of(_RESOURCE_RULE, _URL_RULE), max_size=3),
        st.one_of(st.just({}), _AGGREGATION),
    ),
    invalid(
        put("rules", [{"verbs": [], "nonResourceURLs": ["/x"]}]),
        put("rules", [{"verbs": ["get"], "nonResourceURLs": ["/x"], "resources": ["pods"]}]),
        put("rules", [{"verbs": ["get"], "nonResourceURLs": ["no-slash"]}]),
        put("aggregationRule", {"clusterRoleSelectors": []}),
        put("aggregationRule", {"clusterRoleSelectors": [{"matchLabels": {"bad key!": "v"}}]}),
    ),
    updates(
        put_drawn("rules", st.lists(st.one_of(_RESOURCE_RULE, _URL_RULE), max_size=2)),
        changes(drop("aggregationRule")),
    ),
)

_SUBJECT = st.one_of(
    dns_label().map(lambda n: {"kind": "User", "name": n, "apiGroup": "rbac.authorization.k8s.io"}),
    dns_label().map(
        lambda n: {"kind": "Group", "name": n, "apiGroup": "rbac.authorization.k8s.io"}
    ),
    dns_label().map(lambda n: {"kind": "ServiceAccount", "name": n, "namespace": "default"}),
)


def _binding(kind: str, role_kinds: tuple[str, ...]) -> st.SearchStrategy[Obj]:
    ref = st.builds(
        lambda k, n: {"apiGroup": "rbac.authorization.k8s.io", "kind": k, "name": n},
        st.sampled_from(role_kinds),
        dns_label(),
    )
    return obj(RBAC, kind, roleRef=ref, subjects=st.lists(_SUBJECT, max_size=3))


_BINDING_INVALID = (
    put("roleRef.kind", "Bogus"),
    put("roleRef.apiGroup", "example.com"),
    put("roleRef.name", ""),
    drop("roleRef"),
    put("subjects", [{"kind": "Bogus", "name": "x"}]),
    put("subjects", [{"kind": "ServiceAccount", "name": "x"}]),
    put("subjects", [{"kind": "User", "name": ""}]),
    put("subjects", [{"kind": "ServiceAccount", "name": "Bad_Name", "namespace": "default"}]),
    put("subjects", [{"kind": "User", "name": "u", "apiGroup": "example.com"}]),
)

_BINDING_UPDATES = (
    put_drawn("subjects", st.lists(_SUBJECT, max_size=2)),
    put_drawn("roleRef.name", dns_label()),
    changes(put("roleRef.kind", "ClusterRole")),
)

ROLE_BINDING = KindSpec(
    "RoleBinding",
    RBAC,
    "rolebindings",
    True,
    _binding("RoleBinding", ("Role", "ClusterRole")),
    invalid(*_BINDING_INVALID),
    updates(*_BINDING_UPDATES),
)

CLUSTER_ROLE_BINDING = KindSpec(
    "ClusterRoleBinding",
    RBAC,
    "clusterrolebindings",
    False,
    _binding("ClusterRoleBinding", ("ClusterRole",)),
    invalid(*_BINDING_INVALID, put("roleRef.kind", "Role")),
    updates(*_BINDING_UPDATES),
)

_MICRO_TIMES = st.sampled_from(["2025-01-02T03:04:05.000000Z", "2025-01-02T03:04:05.123456Z"])

LEASE = KindSpec(
    "Lease",
    "coordination.k8s.io/v1",
    "leases",
    True,
    obj(
        "coordination.k8s.io/v1",
        "Lease",
        spec=st.fixed_dictionaries(
            {},
            optional={
                "holderIdentity": dns_label(),
                "leaseDurationSeconds": st.integers(1, 60),
                "acquireTime": _MICRO_TIMES,
                "renewTime": _MICRO_TIMES,
                "leaseTransitions": st.integers(0, 9),
            },
        ),
    ),
    invalid(
        put("spec.leaseDurationSeconds", 0),
        put("spec.leaseDurationSeconds", -1),
        put("spec.leaseTransitions", -1),
        put("spec.preferredHolder", "someone"),
        put("spec.strategy", "Bogus"),
        put("spec.renewTime", "2025-01-02T03:04:05Z"),
    ),
    updates(
        put_drawn("spec.holderIdentity", dns_label()),
        put_drawn("spec.renewTime", _MICRO_TIMES),
        put_drawn("spec.leaseTransitions", st.integers(0, 99)),
    ),
)

KINDS: tuple[KindSpec, ...] = (ROLE, CLUSTER_ROLE, ROLE_BINDING, CLUSTER_ROLE_BINDING, LEASE)
