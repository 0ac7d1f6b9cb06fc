"""Core (v1) kinds: Pod, Service, ConfigMap, Secret, ServiceAccount, Namespace, Event,
PersistentVolumeClaim."""

from __future__ import annotations

import base64

from hypothesis import strategies as st

from .common import (
    dns_label,
    invalid,
    label_key,
    label_value,
    labels,
    memory,
    obj,
    pod_spec,
    updates,
)
from .spec import Change, KindSpec, Obj, changes, drop, put, put_drawn

_IMAGES = st.sampled_from(["nginx:1.27", "busybox:1.37", "r/app:v3"])


def _two_containers(obj: Obj) -> None:
    first = obj["spec"]["containers"][0]
    obj["spec"]["containers"].append(dict(first))


def _requests_over_limits(obj: Obj) -> None:
    obj["spec"]["containers"][0]["resources"] = {
        "requests": {"cpu": "2"},
        "limits": {"cpu": "1"},
    }


POD = KindSpec(
    "Pod",
    "v1",
    "pods",
    True,
    obj("v1", "Pod", spec=pod_spec()),
    invalid(
        put("spec.containers", []),
        drop("spec.containers.0.image"),
        put("spec.containers.0.name", "Bad_Name"),
        Change("spec.containers += copy of containers[0]", _two_containers),
        put("spec.containers.0.ports", [{"containerPort": 0}]),
        put("spec.containers.0.ports", [{"containerPort": 70000}]),
        put("spec.containers.0.ports", [{"containerPort": 80, "protocol": "ICMP"}]),
        put("spec.restartPolicy", "Sometimes"),
        put("spec.terminationGracePeriodSeconds", -1),
        put("spec.activeDeadlineSeconds", 0),
        put("spec.dnsPolicy", "Bogus"),
        put("spec.containers.0.imagePullPolicy", "Sometimes"),
        put("spec.containers.0.resources", {"requests": {"cpu": "-1"}}),
        put("spec.containers.0.resources", {"limits": {"bogus": "1"}}),
        Change("spec.containers[0] requests.cpu 2 > limits.cpu 1", _requests_over_limits),
        put("spec.containers.0.env", [{"name": "A=B", "value": "x"}]),
        put("spec.hostname", "Bad_Host"),
        put("spec.nodeSelector", {"bad key!": "v"}),
    ),
    updates(
        put_drawn("spec.containers.0.image", _IMAGES),
        put_drawn("spec.activeDeadlineSeconds", st.integers(1, 600)),
        put_drawn("spec.restartPolicy", st.sampled_from(["Always", "OnFailure", "Never"])),
        put_drawn("spec.containers.0.name", dns_label(4)),
        put_drawn("spec.terminationGracePeriodSeconds", st.integers(0, 60)),
        put_drawn("spec.containers.0.resources", st.just({"requests": {"cpu": "3"}})),
        changes(put("spec.tolerations", [{"key": "k", "operator": "Exists"}])),
    ),
)


def _service_ports() -> st.SearchStrategy[list[Obj]]:
    port = st.fixed_dictionaries(
        {"port": st.integers(1, 65535)},
        optional={
            # a named port is an IANA service name: no "--" (IsValidPortName)
            "targetPort": st.one_of(
                st.integers(1, 65535), dns_label(5).filter(lambda n: "--" not in n)
            ),
            "protocol": st.sampled_from(["TCP", "UDP", "SCTP"]),
        },
    )
    return st.lists(port, min_size=1, max_size=3, unique_by=lambda p: p["port"]).map(_name_ports)


def _name_ports(ports: list[Obj]) -> list[Obj]:
    # More than one port: each needs a name (ValidateService).
    if len(ports) > 1:
        for index, port in enumerate(ports):
            port["name"] = f"p{index}"
    return ports


_SERVICE_SPEC = st.fixed_dictionaries(
    {"ports": _service_ports()},
    optional={
        "selector": st.dictionaries(label_key(), label_value(), max_size=2),
        "type": st.sampled_from(["ClusterIP", "NodePort", "LoadBalancer"]),
        "sessionAffinity": st.sampled_from(["None", "ClientIP"]),
        "publishNotReadyAddresses": st.booleans(),
    },
)


def _duplicate_port(obj: Obj) -> None:
    ports = obj["spec"]["ports"]
    ports.append(dict(ports[0]))


SERVICE = KindSpec(
    "Service",
    "v1",
    "services",
    True,
    obj("v1", "Service", spec=_SERVICE_SPEC),
    invalid(
        put("spec.ports", []),
        put("spec.ports.0.port", 0),
        put("spec.ports.0.port", 70000),
        put("spec.ports.0.protocol", "ICMP"),
        put("spec.ports.0.targetPort", "Bad_Port_Name"),
        put("spec.ports.0.targetPort", 0),
        Change("spec.ports += copy of ports[0]", _duplicate_port),
        put("spec.type", "Bogus"),
        put("spec.sessionAffinity", "Sometimes"),
        put("spec.clusterIP", "not-an-ip"),
        put("spec.selector", {"bad key!": "v"}),
        put("spec.type", "ExternalName"),
    ),
    updates(
        put_drawn("spec.selector", st.dictionaries(label_key(), label_value(), max_size=2)),
        put_drawn("spec.ports", _service_ports()),
        changes(
            # the kubernetes Service's address: never another's (a random one could be)
            put("spec.clusterIP", "10.0.0.1"),
            put("spec.type", "ClusterIP"),
            put("spec.type", "NodePort"),
            put("spec.sessionAffinity", "ClientIP"),
        ),
    ),
)

_DATA_KEYS = st.from_regex(r"[-._a-zA-Z0-9]{1,12}", fullmatch=True).filter(
    lambda k: k not in (".", "..") and not k.startswith("..")
)


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


CONFIG_MAP = KindSpec(
    "ConfigMap",
    "v1",
    "configmaps",
    True,
    obj(
        "v1",
        "ConfigMap",
        data=st.dictionaries(_DATA_KEYS, st.text(max_size=10), max_size=3),
    ).flatmap(
        lambda o: st.fixed_dictionaries(
            {},
            optional={
                "binaryData": st.dictionaries(
                    _DATA_KEYS.filter(lambda k: k not in o["data"]),
                    st.binary(max_size=6).map(_b64),
                    max_size=2,
                ),
                "immutable": st.booleans(),
            },
        ).map(lambda extra: o | extra)
    ),
    invalid(
        put(("data", "bad key"), "v"),
        put(("data", ".."), "v"),
        put(("data", "k" * 254), "v"),
        Change("binaryData repeats a data key", lambda o: _repeat_key(o)),
    ),
    updates(
        put_drawn("data", st.dictionaries(_DATA_KEYS, st.text(max_size=10), max_size=3)),
        put_drawn("immutable", st.booleans()),
        changes(drop("data"), drop("immutable")),
    ),
)


def _repeat_key(obj: Obj) -> None:
    obj["data"] = {"same": "a"}
    obj["binaryData"] = {"same": _b64(b"b")}


def _secret() -> st.SearchStrategy[Obj]:
    data = st.dictionaries(_DATA_KEYS, st.binary(max_size=8).map(_b64), max_size=3)
    opaque = st.fixed_dictionaries(
        {"type": st.sampled_from(["Opaque", "example.com/custom"]), "data": data},
        optional={"stringData": st.dictionaries(_DATA_KEYS, st.text(max_size=6), max_size=2)},
    )
    basic = st.fixed_dictionaries(
        {
            "type": st.just("kubernetes.io/basic-auth"),
            "stringData": st.fixed_dictionaries(
                {"username": st.text("abcxyz", min_size=1, max_size=5)},
                optional={"password": st.text(max_size=5)},
            ),
        }
    )
    tls = st.just(
        {"type": "kubernetes.io/tls", "data": {"tls.crt": _b64(b"c"), "tls.key": _b64(b"k")}}
    )
    body = st.one_of(opaque, basic, tls)
    extra = st.fixed_dictionaries({}, optional={"immutable": st.booleans()})
    return st.builds(lambda o, b, e: o | b | e, obj("v1", "Secret"), body, extra)


SECRET = KindSpec(
    "Secret",
    "v1",
    "secrets",
    True,
    _secret(),
    invalid(
        put(("data", "bad key"), _b64(b"v")),
        put(("stringData", "bad key"), "v"),
        Change("type basic-auth without username and password", lambda o: _typed(o, "basic")),
        Change("type tls without tls.key", lambda o: _typed(o, "tls")),
        Change("type dockerconfigjson, no key", lambda o: _typed(o, "docker")),
        put("type", ""),
    ),
    updates(
        put_drawn("data", st.dictionaries(_DATA_KEYS, st.binary(max_size=4).map(_b64), max_size=2)),
        put_drawn("type", st.sampled_from(["Opaque", "example.com/other"])),
        put_drawn("immutable", st.booleans()),
    ),
)

_SECRET_TYPES = {
    "basic": "kubernetes.io/basic-auth",
    "tls": "kubernetes.io/tls",
    "docker": "kubernetes.io/dockerconfigjson",
}


def _typed(obj: Obj, which: str) -> None:
    obj["type"] = _SECRET_TYPES[which]
    obj["data"] = {"tls.crt": _b64(b"c")} if which == "tls" else {"other": _b64(b"x")}
    obj.pop("stringData", None)


_REFERENCES = st.lists(st.fixed_dictionaries({"name": dns_label()}), max_size=2)

SERVICE_ACCOUNT = KindSpec(
    "ServiceAccount",
    "v1",
    "serviceaccounts",
    True,
    st.builds(
        lambda o, e: o | e,
        obj("v1", "ServiceAccount"),
        st.fixed_dictionaries(
            {},
            optional={
                "secrets": _REFERENCES,
                "imagePullSecrets": _REFERENCES,
                "automountServiceAccountToken": st.booleans(),
            },
        ),
    ),
    invalid(put("metadata.name", "a..b"), put("metadata.namespace", "Other_NS")),
    updates(
        put_drawn("secrets", _REFERENCES),
        put_drawn("automountServiceAccountToken", st.booleans()),
    ),
)

NAMESPACE = KindSpec(
    "Namespace",
    "v1",
    "namespaces",
    False,
    obj("v1", "Namespace").flatmap(
        lambda o: st.fixed_dictionaries(
            {}, optional={"spec": st.just({"finalizers": ["kubernetes", "example.com/f"]})}
        ).map(lambda extra: o | extra)
    ),
    invalid(
        put("metadata.name", "a.b"),
        put("spec.finalizers", ["Bad Finalizer"]),
        put("spec.finalizers", ["bogus"]),
    ),
    updates(
        put_drawn("spec.finalizers", st.sampled_from([[], ["kubernetes"], ["example.com/x"]])),
        changes(put("status.phase", "Terminating")),
    ),
)

_TIME = "2025-01-02T03:04:05Z"


def _event() -> st.SearchStrategy[Obj]:
    involved = st.fixed_dictionaries(
        {
            "kind": st.sampled_from(["Pod", "ConfigMap"]),
            "name": dns_label(),
            "namespace": st.just("{ns}"),
            "apiVersion": st.just("v1"),
        },
        optional={"uid": st.just("0000-uid"), "fieldPath": st.just("spec.containers{a}")},
    )
    body = st.fixed_dictionaries(
        {"involvedObject": involved, "reason": st.sampled_from(["Started", "Killing", "Why"])},
        optional={
            "message": st.text(max_size=20),
            "type": st.sampled_from(["Normal", "Warning"]),
            "count": st.integers(1, 10),
            "source": st.fixed_dictionaries({"component": st.sampled_from(["kubelet", "me"])}),
            "firstTimestamp": st.just(_TIME),
            "lastTimestamp": st.just(_TIME),
        },
    )
    return st.builds(lambda o, b: o | b, obj("v1", "Event"), body)


EVENT = KindSpec(
    "Event",
    "v1",
    "events",
    True,
    _event(),
    invalid(
        put("involvedObject.namespace", "elsewhere"),
        put("type", "Bogus"),
        put("reportingComponent", "me"),
        put("eventTime", "2025-01-02T03:04:05.000000Z"),
        put("action", "a" * 200),
        put("count", -1),
    ),
    updates(
        put_drawn("count", st.integers(1, 100)),
        put_drawn("message", st.text(max_size=10)),
        changes(put("involvedObject.name", "other"), put("reason", "Other")),
    ),
)

_ACCESS_MODES = ["ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany"]


def _pvc_spec() -> st.SearchStrategy[Obj]:
    return st.fixed_dictionaries(
        {
            "accessModes": st.one_of(
                st.lists(st.sampled_from(_ACCESS_MODES), min_size=1, max_size=3, unique=True),
                st.just(["ReadWriteOncePod"]),
            ),
            "resources": memory().map(lambda q: {"requests": {"storage": q}}),
        },
        optional={
            "storageClassName": dns_label(),
            "volumeMode": st.sampled_from(["Filesystem", "Block"]),
            "selector": labels(1).map(lambda m: {"matchLabels": m}),
        },
    )


PVC = KindSpec(
    "PersistentVolumeClaim",
    "v1",
    "persistentvolumeclaims",
    True,
    obj("v1", "PersistentVolumeClaim", spec=_pvc_spec()),
    invalid(
        put("spec.accessModes", []),
        put("spec.accessModes", ["Bogus"]),
        put("spec.accessModes", ["ReadWriteOncePod", "ReadWriteOnce"]),
        drop("spec.resources"),
        put("spec.resources.requests.storage", "-1Gi"),
        put("spec.resources.requests.storage", "0"),
        put("spec.volumeMode", "Bogus"),
        put("spec.storageClassName", "Bad_Class"),
    ),
    updates(
        put_drawn("spec.resources.requests.storage", memory()),
        put_drawn("spec.storageClassName", dns_label()),
        changes(put("spec.accessModes", ["ReadWriteMany"]), put("spec.volumeName", "pv-1")),
    ),
)

KINDS: tuple[KindSpec, ...] = (
    POD,
    SERVICE,
    CONFIG_MAP,
    SECRET,
    SERVICE_ACCOUNT,
    NAMESPACE,
    EVENT,
    PVC,
)
