"""core/v1 kinds validated as kube-apiserver does (issue 28): Services, ConfigMaps,
Secrets, Namespaces, PersistentVolumeClaims, Events. Each row: an object (or a change to
one) and the 422 it gets, causes and message byte for byte, or its acceptance."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from reconcile_kit.testing.backends import Backend

from .kube import MERGE, ok, req
from .validation_table import PREFIX, Cause, create_refused, update_refused

RFC1123_SUB = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or"
    " '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex"
    " used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
RFC1123_LABEL = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and"
    " must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex"
    " used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
CONFIG_KEY = (
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g."
    " 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is"
    " '[-._a-zA-Z0-9]+')"
)
QUALIFIED = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and"
    " end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex"
    " used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
PORT_RANGE = "must be between 1 and 65535, inclusive"
NODE_PORT_RANGE = "provided port is not in the valid range. The range of valid ports is 30000-32767"


def svc(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "s"}, "spec": {"ports": [{"port": 80}], **spec}}


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def req_(field: str, detail: str = "") -> Cause:
    return (
        "FieldValueRequired",
        field,
        f"Required value: {detail}" if detail else "Required value",
    )


def inv(field: str, value: str, detail: str) -> Cause:
    return ("FieldValueInvalid", field, f"Invalid value: {value}: {detail}")


def forb(field: str, detail: str) -> Cause:
    return ("FieldValueForbidden", field, f"Forbidden: {detail}")


def unsupported(field: str, value: str, *allowed: str) -> Cause:
    shown = ", ".join(f'"{a}"' for a in allowed)
    return (
        "FieldValueNotSupported",
        field,
        f'Unsupported value: "{value}": supported values: {shown}',
    )


SERVICE_CREATES = [
    pytest.param(
        svc(clusterIP="abc", type="Magic"),
        [
            inv(
                "spec.clusterIPs[0]",
                '"abc"',
                "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
            )
        ],
        id="cluster-ip-checked-first",
    ),
    pytest.param(
        svc(clusterIP="10.0.0.240", clusterIPs=["10.0.0.241"]),
        [inv("spec.clusterIPs", '[]string{"10.0.0.241"}', "first value must match `clusterIP`")],
        id="cluster-ips-match",
    ),
    pytest.param(
        svc(ipFamilies=["IPv5"]),
        [unsupported("spec.ipFamilies[0]", "IPv5", "IPv4", "IPv6")],
        id="ip-family",
    ),
    pytest.param(
        {"metadata": {"name": "s"}, "spec": {"selector": {"app": "a"}}},
        [req_("spec.ports")],
        id="no-ports",
    ),
    pytest.param(
        {"metadata": {"name": "s"}, "spec": {"clusterIP": "None"}}, [], id="headless-no-ports"
    ),
    pytest.param(
        {"metadata": {"name": "s"}, "spec": {"type": "ExternalName", "externalName": "a.b"}},
        [],
        id="externalname-no-ports",
    ),
    pytest.param(
        {"metadata": {"name": "s"}, "spec": {"type": "ExternalName"}},
        [req_("spec.externalName")],
        id="externalname-required",
    ),
    pytest.param(
        {"metadata": {"name": "s"}, "spec": {"type": "ExternalName", "externalName": "Bad_Name"}},
        [inv("spec.externalName", '"Bad_Name"', RFC1123_SUB)],
        id="externalname-invalid",
    ),
    pytest.param(
        svc(ports=[{"port": 70000}]),
        [
            inv("spec.ports[0].port", "70000", PORT_RANGE),
            inv("spec.ports[0].targetPort", "70000", PORT_RANGE),
        ],
        id="port-range",
    ),
    pytest.param(
        svc(ports=[{"port": 80, "protocol": "FOO"}]),
        [unsupported("spec.ports[0].protocol", "FOO", "SCTP", "TCP", "UDP")],
        id="protocol",
    ),
    pytest.param(
        svc(ports=[{"port": 80, "targetPort": 70000}]),
        [inv("spec.ports[0].targetPort", "70000", PORT_RANGE)],
        id="target-port-number",
    ),
    pytest.param(
        svc(ports=[{"port": 80, "targetPort": "Bad--"}]),
        [
            inv(
                "spec.ports[0].targetPort",
                '"Bad--"',
                "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
            ),
            inv("spec.ports[0].targetPort", '"Bad--"', "must not contain consecutive hyphens"),
            inv("spec.ports[0].targetPort", '"Bad--"', "must not begin or end with a hyphen"),
        ],
        id="target-port-name",
    ),
    pytest.param(
        svc(ports=[{"port": 80, "name": "Http"}]),
        [inv("spec.ports[0].name", '"Http"', RFC1123_LABEL)],
        id="port-name",
    ),
    pytest.param(
        svc(ports=[{"port": 80, "name": "a"}, {"port": 81}]),
        [req_("spec.ports[1].name")],
        id="port-name-required",
    ),
    pytest.param(
        svc(ports=[{"port": 80, "name": "a"}, {"port": 80, "name": "b"}]),
        [
            (
                "FieldValueDuplicate",
                "spec.ports[1]",
                'Duplicate value: core.ServicePort{Name:"", Protocol:"TCP",'
                " AppProtocol:(*string)(nil), Port:80, TargetPort:intstr.IntOrString{Type:0,"
                ' IntVal:0, StrVal:""}, NodePort:0}',
            )
        ],
        id="duplicate-port",
    ),
    pytest.param(
        svc(type="Balanced"),
        [
            unsupported(
                "spec.type", "Balanced", "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"
            )
        ],
        id="type",
    ),
    pytest.param(
        svc(sessionAffinity="Sticky"),
        [unsupported("spec.sessionAffinity", "Sticky", "ClientIP", "None")],
        id="session-affinity",
    ),
    pytest.param(
        svc(sessionAffinity="ClientIP", sessionAffinityConfig={"clientIP": {"timeoutSeconds": 0}}),
        [
            inv(
                "spec.sessionAffinityConfig.clientIP.timeoutSeconds",
                "0",
                "must be greater than 0 and less than 86400",
            )
        ],
        id="affinity-timeout",
    ),
    pytest.param(
        svc(selector={"bad key": "v"}),
        [inv("spec.selector", '"bad key"', QUALIFIED)],
        id="selector",
    ),
    pytest.param(
        svc(type="NodePort", clusterIP="None"),
        [inv("spec.clusterIPs[0]", '"None"', "may not be set to 'None' for NodePort services")],
        id="nodeport-headless",
    ),
    pytest.param(
        svc(ports=[{"port": 80, "nodePort": 30080}]),
        [forb("spec.ports[0].nodePort", "may not be used when `type` is 'ClusterIP'")],
        id="nodeport-on-clusterip",
    ),
    pytest.param(
        svc(type="LoadBalancer", ports=[{"port": 10250}]),
        [
            inv(
                "spec.ports[0]",
                "10250",
                "may not expose port 10250 externally since it is used by kubelet",
            )
        ],
        id="kubelet-port",
    ),
    pytest.param(
        svc(externalIPs=["abc"]),
        [
            inv(
                "spec.externalIPs[0]",
                '"abc"',
                "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
            )
        ],
        id="external-ip",
    ),
    pytest.param(
        svc(externalTrafficPolicy="Local"),
        [
            inv(
                "spec.externalTrafficPolicy",
                '"Local"',
                "may only be set for externally-accessible services",
            )
        ],
        id="external-traffic-policy",
    ),
    pytest.param(
        svc(loadBalancerSourceRanges=["10.0.0.0/8"]),
        [forb("spec.LoadBalancerSourceRanges", "may only be used when `type` is 'LoadBalancer'")],
        id="source-ranges",
    ),
    pytest.param(
        svc(type="NodePort", ports=[{"port": 80, "nodePort": 80}]),
        [inv("spec.ports[0].nodePort", "80", NODE_PORT_RANGE)],
        id="node-port-out-of-range",
    ),
    pytest.param(
        svc(
            type="LoadBalancer",
            ports=[
                {"name": "a", "port": 80, "nodePort": 30001},
                {"name": "b", "port": 81, "nodePort": 40000},
            ],
        ),
        [inv("spec.ports[1].nodePort", "40000", NODE_PORT_RANGE)],
        id="second-node-port-out-of-range",
    ),
]


@pytest.mark.parametrize(("body", "causes"), SERVICE_CREATES)
async def test_service_create(backend: Backend, body: dict[str, Any], causes: list[Cause]) -> None:
    await create_refused(backend, "services", body, causes)


SERVICE_UPDATES = [
    pytest.param(
        svc(),
        {"spec": {"clusterIP": "10.0.0.250"}},
        [inv("spec.clusterIPs[0]", '[]string{"10.0.0.250"}', "may not change once set")],
        id="cluster-ip-immutable",
    ),
    pytest.param(
        svc(),
        {"spec": {"clusterIPs": ["10.0.0.250"]}},
        [inv("spec.clusterIPs", '[]string{"10.0.0.250"}', "first value must match `clusterIP`")],
        id="cluster-ips-immutable",
    ),
    pytest.param(svc(), {"spec": {"ports": None}}, [req_("spec.ports")], id="ports-removed"),
    pytest.param(
        svc(),
        {"spec": {"type": "Magic"}},
        [
            unsupported(
                "spec.type", "Magic", "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"
            )
        ],
        id="type",
    ),
    pytest.param(
        svc(), {"spec": {"clusterIP": None, "clusterIPs": None}}, [], id="allocations-kept"
    ),
    pytest.param(svc(), {"metadata": {"labels": {"a": "b"}}}, [], id="labels-only"),
    pytest.param(svc(), {"spec": {"type": "NodePort"}}, [], id="to-nodeport"),
    pytest.param(
        svc(type="NodePort"),
        {"spec": {"ports": [{"port": 80, "nodePort": 20000}]}},
        [inv("spec.ports[0].nodePort", "20000", NODE_PORT_RANGE)],
        id="node-port-out-of-range",
    ),
    pytest.param(svc(type="NodePort"), {"spec": {"type": "ClusterIP"}}, [], id="from-nodeport"),
    pytest.param(
        svc(),
        {"spec": {"type": "ExternalName", "externalName": "example.com"}},
        [],
        id="to-externalname",
    ),
    pytest.param(
        svc(type="ExternalName", externalName="example.com"),
        {"spec": {"type": "ClusterIP", "externalName": None}},
        [],
        id="from-externalname",
    ),
]


@pytest.mark.parametrize(("body", "patch", "causes"), SERVICE_UPDATES)
async def test_service_update(
    backend: Backend, body: dict[str, Any], patch: dict[str, Any], causes: list[Cause]
) -> None:
    await update_refused(backend, "services", body, patch, causes)


def cm(**fields: Any) -> dict[str, Any]:
    return {"metadata": {"name": "cm"}, **fields}


OWNER = {"kind": "ConfigMap", "name": "x", "uid": "1"}
CONFIG_CREATES = [
    pytest.param(
        "configmaps",
        {"metadata": {"name": "cm", "ownerReferences": [OWNER]}},
        [inv("metadata.ownerReferences.apiVersion", '""', "version must not be empty")],
        id="owner-without-api-version",
    ),
    pytest.param(
        "configmaps",
        {"metadata": {"name": "cm", "ownerReferences": [{**OWNER, "apiVersion": "a/b/c"}]}},
        [inv("metadata.ownerReferences.apiVersion", '"a/b/c"', "version must not be empty")],
        id="owner-api-version-with-two-slashes",
    ),
    pytest.param(
        "configmaps",
        {"metadata": {"name": "cm", "ownerReferences": [{**OWNER, "apiVersion": "apps/"}]}},
        [inv("metadata.ownerReferences.apiVersion", '"apps/"', "version must not be empty")],
        id="owner-api-version-without-version",
    ),
    pytest.param(
        "configmaps",
        cm(data={"bad key!": "v"}),
        [inv("data[bad key!]", '"bad key!"', CONFIG_KEY)],
        id="configmap-data-key",
    ),
    pytest.param(
        "configmaps",
        cm(binaryData={"..x": b64("v")}),
        [inv("binaryData[..x]", '"..x"', "must not start with '..'")],
        id="configmap-binary-key",
    ),
    pytest.param(
        "configmaps",
        cm(data={".": "v"}),
        [inv("data[.]", '"."', "must not be '.'")],
        id="configmap-dot-key",
    ),
    pytest.param(
        "configmaps",
        cm(data={"k": "v"}, binaryData={"k": b64("v")}),
        [inv("data[k]", '"k"', "duplicate of key present in binaryData")],
        id="configmap-both-maps",
    ),
    pytest.param(
        "configmaps",
        cm(data={"a": "x" * (1024 * 1024), "b": "y"}),
        [("FieldValueTooLong", "[]", "Too long: may not be more than 1048576 bytes")],
        id="configmap-size",
    ),
    pytest.param(
        "secrets",
        cm(data={"bad key!": b64("v")}),
        [inv("data[bad key!]", '"bad key!"', CONFIG_KEY)],
        id="secret-data-key",
    ),
    pytest.param(
        "secrets",
        cm(data={"a": b64("x" * (1024 * 1024)), "b": b64("y")}),
        [("FieldValueTooLong", "data", "Too long: may not be more than 1048576 bytes")],
        id="secret-size",
    ),
    pytest.param(
        "secrets",
        cm(type="kubernetes.io/tls", data={"tls.crt": b64("c")}),
        [req_("data[tls.key]")],
        id="secret-tls",
    ),
    pytest.param(
        "secrets",
        cm(type="kubernetes.io/basic-auth"),
        [req_("data[username]"), req_("data[password]")],
        id="secret-basic-auth",
    ),
    pytest.param(
        "secrets",
        cm(type="kubernetes.io/service-account-token"),
        [req_("metadata.annotations[kubernetes.io/service-account.name]")],
        id="secret-sa-token",
    ),
    pytest.param(
        "secrets",
        cm(type="kubernetes.io/dockerconfigjson", data={".dockerconfigjson": b64("xyz")}),
        [
            inv(
                "data[.dockerconfigjson]",
                '"<secret contents redacted>"',
                "invalid character 'x' looking for beginning of value",
            )
        ],
        id="secret-docker-json",
    ),
    pytest.param(
        "secrets",
        cm(type="example.com/custom", data={"any": b64("v")}),
        [],
        id="secret-custom-type",
    ),
    pytest.param(
        "namespaces",
        {"metadata": {"name": "ns"}, "spec": {"finalizers": ["custom"]}},
        [
            inv(
                "spec.finalizers",
                '"custom"',
                "name is neither a standard finalizer name nor is it fully qualified",
            )
        ],
        id="namespace-finalizer",
    ),
    pytest.param(
        "namespaces",
        {"metadata": {"name": "ns"}, "spec": {"finalizers": ["example.com/x"]}},
        [],
        id="namespace-qualified-finalizer",
    ),
    pytest.param(
        "serviceaccounts",
        {"metadata": {"name": "sa"}, "automountServiceAccountToken": False},
        [],
        id="serviceaccount",
    ),
]


@pytest.mark.parametrize(("plural", "body", "causes"), CONFIG_CREATES)
async def test_data_kinds_create(
    backend: Backend, plural: str, body: dict[str, Any], causes: list[Cause]
) -> None:
    await create_refused(backend, plural, body, causes)


IMMUTABLE = "field is immutable when `immutable` is set"
CONFIG_UPDATES = [
    pytest.param(
        "configmaps",
        cm(data={"a": "1"}),
        {"data": {"bad key!": "v"}},
        [inv("data[bad key!]", '"bad key!"', CONFIG_KEY)],
        id="configmap-key",
    ),
    pytest.param(
        "configmaps",
        cm(data={"a": "1"}, immutable=True),
        {"data": {"a": "2"}},
        [forb("data", IMMUTABLE)],
        id="configmap-immutable",
    ),
    pytest.param(
        "secrets",
        cm(data={"a": b64("1")}),
        {"type": "kubernetes.io/basic-auth"},
        [
            inv("type", '"kubernetes.io/basic-auth"', "field is immutable"),
            req_("data[username]"),
            req_("data[password]"),
        ],
        id="secret-type",
    ),
]


@pytest.mark.parametrize(("plural", "body", "patch", "causes"), CONFIG_UPDATES)
async def test_data_kinds_update(
    backend: Backend,
    plural: str,
    body: dict[str, Any],
    patch: dict[str, Any],
    causes: list[Cause],
) -> None:
    await update_refused(backend, plural, body, patch, causes)


def pvc(**spec: Any) -> dict[str, Any]:
    base = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    return {"metadata": {"name": "pvc"}, "spec": {**base, **spec}}


PVC_CREATES = [
    pytest.param(
        pvc(accessModes=[]),
        [req_("spec.accessModes", "at least 1 access mode is required")],
        id="access-modes-required",
    ),
    pytest.param(
        pvc(accessModes=["ReadWriteSometimes"]),
        [
            unsupported(
                "spec.accessModes",
                "ReadWriteSometimes",
                "ReadOnlyMany",
                "ReadWriteMany",
                "ReadWriteOnce",
                "ReadWriteOncePod",
            )
        ],
        id="access-mode-value",
    ),
    pytest.param(
        pvc(accessModes=["ReadWriteOncePod", "ReadWriteOnce"]),
        [forb("spec.accessModes", "may not use ReadWriteOncePod with other access modes")],
        id="access-mode-rwop",
    ),
    pytest.param(
        pvc(resources={"requests": {}}),
        [req_("spec.resources[storage]")],
        id="storage-required",
    ),
    pytest.param(
        pvc(resources={"requests": {"storage": "0"}}),
        [inv("spec.resources[storage]", '"0"', "must be greater than zero")],
        id="storage-zero",
    ),
    pytest.param(
        pvc(storageClassName="Bad_Class"),
        [inv("spec.storageClassName", '"Bad_Class"', RFC1123_SUB)],
        id="storage-class",
    ),
    pytest.param(
        pvc(volumeMode="Raw"),
        [unsupported("spec.volumeMode", "Raw", "Block", "Filesystem")],
        id="volume-mode",
    ),
    pytest.param(
        pvc(selector={"matchLabels": {"bad key": "v"}}),
        [inv("spec.selector.matchLabels", '"bad key"', QUALIFIED)],
        id="selector",
    ),
    pytest.param(
        pvc(dataSource={"kind": "PersistentVolumeClaim"}),
        # NormalizeDataSources copied the source into dataSourceRef first
        [req_("spec.dataSource.name"), req_("spec.dataSourceRef.name")],
        id="data-source-name",
    ),
    pytest.param(
        pvc(dataSourceRef={"kind": "Thing", "name": "x"}),
        [
            inv(
                "spec.dataSource",
                '"Thing"',
                "must be 'PersistentVolumeClaim' when referencing the default apiGroup",
            ),
            inv(
                "spec.dataSourceRef",
                '"Thing"',
                "must be 'PersistentVolumeClaim' when referencing the default apiGroup",
            ),
        ],
        id="data-source-ref-kind",
    ),
    pytest.param(
        pvc(
            dataSource={"kind": "PersistentVolumeClaim", "name": "a"},
            dataSourceRef={"kind": "PersistentVolumeClaim", "name": "b"},
        ),
        [
            inv(
                "spec",
                'field.Path{name:"dataSource", index:"", parent:(*field.Path)(0x)}',
                "must match dataSourceRef",
            )
        ],
        id="data-sources-differ",
    ),
    pytest.param(
        pvc(dataSource={"apiGroup": "example.com", "kind": "Thing", "name": "x"}),
        [],  # dropped: only claims and VolumeSnapshots may be given as dataSource
        id="data-source-dropped",
    ),
]


@pytest.mark.parametrize(("body", "causes"), PVC_CREATES)
async def test_pvc_create(backend: Backend, body: dict[str, Any], causes: list[Cause]) -> None:
    await create_refused(backend, "persistentvolumeclaims", body, causes)


async def test_pvc_data_sources_normalized(backend: Backend) -> None:
    """A claim's dataSource and dataSourceRef are filled from each other on create; a
    dataSource other than a claim or VolumeSnapshot is dropped; the writer owns only what
    it sent."""
    path = f"/api/v1/namespaces/{backend.namespace}/persistentvolumeclaims"
    ref = {"apiGroup": "example.com", "kind": "Thing", "name": "t"}
    created = await ok(backend, "POST", path, pvc(dataSourceRef=ref))
    assert created["spec"]["dataSource"] == ref
    fields = created["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"]
    assert "f:dataSource" not in fields and "f:dataSourceRef" in fields
    body = {**pvc(dataSource={"kind": "ConfigMap", "name": "c"}), "metadata": {"name": "p2"}}
    created = await ok(backend, "POST", path, body)
    assert "dataSource" not in created["spec"] and "dataSourceRef" not in created["spec"]


async def test_pvc_status_capacity(backend: Backend) -> None:
    status = {"status": {"capacity": {"storage": "-1"}}}
    await update_refused(
        backend,
        "persistentvolumeclaims",
        pvc(),
        status,
        [inv("status.capacity[storage]", "-1", "must be a valid resource quantity")],
        subresource="status",
    )


SPEC_IMMUTABLE = forb(
    "spec",
    "spec is immutable after creation except resources.requests and volumeAttributesClassName"
    " for bound claims" + PREFIX,
)
PVC_UPDATES = [
    pytest.param(
        {"spec": {"resources": {"requests": {"storage": "2Gi"}}}},
        [SPEC_IMMUTABLE],
        id="unbound-storage-grows",
    ),
    pytest.param(
        {"spec": {"volumeMode": "Block"}},
        [SPEC_IMMUTABLE, inv("volumeMode", '"Block"', "field is immutable")],
        id="volume-mode-immutable",
    ),
    pytest.param({"metadata": {"labels": {"a": "b"}}}, [], id="labels-only"),
    pytest.param(
        {"spec": {"accessModes": ["Sometimes"]}},
        [
            unsupported(
                "spec.accessModes",
                "Sometimes",
                "ReadOnlyMany",
                "ReadWriteMany",
                "ReadWriteOnce",
                "ReadWriteOncePod",
            )
        ]
        * 2  # the strategy validates the claim twice on an update
        + [SPEC_IMMUTABLE],
        id="validated-twice",
    ),
]


@pytest.mark.parametrize(("patch", "causes"), PVC_UPDATES)
async def test_pvc_update(backend: Backend, patch: dict[str, Any], causes: list[Cause]) -> None:
    await update_refused(backend, "persistentvolumeclaims", pvc(), patch, causes)


@pytest.mark.parametrize(
    ("spec", "policy", "families"),
    [
        pytest.param(
            {"clusterIP": "None"}, "RequireDualStack", ["IPv4", "IPv6"], id="headless-selectorless"
        ),
        pytest.param(
            {"clusterIP": "None", "selector": {"a": "b"}}, "SingleStack", ["IPv4"], id="headless"
        ),
        pytest.param({"ports": [{"port": 80}]}, "SingleStack", ["IPv4"], id="cluster-ip"),
    ],
)
async def test_service_ip_family_defaults(
    backend: Backend, spec: dict[str, Any], policy: str, families: list[str]
) -> None:
    """What the allocator sets on a created Service (alloc.go initIPFamilyFields)."""
    path = f"/api/v1/namespaces/{backend.namespace}/services"
    created = await ok(backend, "POST", path, {"metadata": {"name": "s"}, "spec": spec})
    got = created["spec"]
    assert (got["ipFamilyPolicy"], got["ipFamilies"], got["internalTrafficPolicy"]) == (
        policy,
        families,
        "Cluster",
    )
    assert len(got["clusterIPs"]) == 1
    assert got["clusterIPs"][0] == got["clusterIP"]


@pytest.mark.parametrize(
    ("expandable", "size", "status", "message"),
    [
        pytest.param(
            None,
            "2Gi",
            403,
            'persistentvolumeclaims "pvc" is forbidden: only dynamically provisioned pvc can be'
            " resized and the storageclass that provisions the pvc must support resize",
            id="no-class",
        ),
        pytest.param(False, "2Gi", 403, None, id="class-not-expandable"),
        pytest.param(True, "2Gi", 200, None, id="class-expandable"),
        pytest.param(
            True,
            "512Mi",
            422,
            'PersistentVolumeClaim "pvc" is invalid: spec.resources.requests.storage:'
            " Forbidden: field can not be less than status.capacity",
            id="below-capacity",
        ),
    ],
)
async def test_bound_claim_resize(
    backend: Backend, expandable: bool | None, size: str, status: int, message: str | None
) -> None:
    """A bound claim's storage request may change (validation); growing it also needs a
    StorageClass that allows expansion (the PersistentVolumeClaimResize admission plugin)."""
    body = pvc()
    if expandable is not None:
        name = f"{backend.namespace}-sc"
        storage_class = {
            "metadata": {"name": name},
            "provisioner": "example.com/none",
            "allowVolumeExpansion": expandable,
        }
        await ok(backend, "POST", "/apis/storage.k8s.io/v1/storageclasses", storage_class)
        body["spec"]["storageClassName"] = name
    path = f"/api/v1/namespaces/{backend.namespace}/persistentvolumeclaims"
    await ok(backend, "POST", path, body)
    bound = {"status": {"phase": "Bound", "capacity": {"storage": "1Gi"}}}
    await ok(backend, "PATCH", f"{path}/pvc/status", bound, content_type=MERGE)
    grow = {"spec": {"resources": {"requests": {"storage": size}}}}
    reply = await req(backend, "PATCH", f"{path}/pvc", grow, content_type=MERGE)
    assert reply.status == status, reply.body
    if message is not None:
        assert reply.body["message"] == message
    if expandable is not None:
        await req(backend, "DELETE", f"/apis/storage.k8s.io/v1/storageclasses/{name}")
