"""Nodes, RuntimeClasses, ControllerRevisions and CSIDrivers validated and defaulted as
kube-apiserver 1.32.5 does (pkg/apis/core/validation ValidateNode and its update;
pkg/apis/node, apps and storage validation), and the client's metadata.generation kept by
the kinds whose strategy leaves it alone. Each row: an object (or a change to one) and the
422 it gets, causes and message byte for byte, or its acceptance."""

from __future__ import annotations

from typing import Any

import pytest

from reconcile_kit.testing.backends import Backend

from .kube import MERGE, ok, req
from .test_validation_core import QUALIFIED, RFC1123_LABEL, inv, req_, unsupported
from .validation_table import (
    Cause,
    check_invalid,
    collection,
    create_refused,
    named,
    update_refused,
)

CIDR = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"
ONE_PER_FAMILY = "may specify no more than one CIDR for each IP family"
EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
NEGATIVE = "must be greater than or equal to 0"
FIXED = 'node updates may not change {} except from "" to valid'


def node(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "n"}, "spec": spec}


def rtc(**fields: Any) -> dict[str, Any]:
    return {"metadata": {"name": "rtc"}, "handler": "runc", **fields}


def csi(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "csi.example.com"}, "spec": spec}


CR = {"metadata": {"name": "cr"}, "revision": 1, "data": {"a": 1}}


def raw(text: str) -> str:
    """A RawExtension of ``text`` as compared (check_invalid reads 0x7b as 0x, taking it
    for a pointer: only the byte count is compared)."""
    data = ", ".join("0x" for _ in text.encode())
    return f"runtime.RawExtension{{Raw:[]uint8{{{data}}}, Object:runtime.Object(nil)}}"


CREATES = [
    pytest.param("nodes", node(podCIDR="10.1.0.0/24", providerID="p"), [], id="node-valid"),
    pytest.param(
        "nodes",
        node(podCIDR="garbage"),
        [inv("spec.podCIDRs[0]", '"garbage"', CIDR)],
        id="node-cidr",
    ),
    pytest.param(
        "nodes",
        node(podCIDRs=["10.1.0.0/24", "garbage"]),
        [
            inv("spec.podCIDRs[1]", '"garbage"', CIDR),
            (
                "InternalError",
                "spec.podCIDRs",
                "Internal error: invalid PodCIDRs. failed to check with dual stack with"
                " error:invalid CIDR[1]: <nil> (invalid CIDR address: garbage)",
            ),
            inv("spec.podCIDRs", '[]string{"10.1.0.0/24", "garbage"}', ONE_PER_FAMILY),
        ],
        id="node-cidrs-dual-stack-check",
    ),
    pytest.param(
        "nodes",
        node(podCIDRs=["10.1.0.0/24", "10.2.0.0/24"]),
        [inv("spec.podCIDRs", '[]string{"10.1.0.0/24", "10.2.0.0/24"}', ONE_PER_FAMILY)],
        id="node-cidrs-one-family",
    ),
    pytest.param("nodes", node(podCIDRs=["10.1.0.0/24", "fd00::/64"]), [], id="node-dual-stack"),
    pytest.param(
        "nodes",
        node(taints=[{"key": "a", "effect": "Bogus"}, {"effect": "NoSchedule", "value": "-x-"}]),
        [
            unsupported("metadata.taints[0].effect", "Bogus", *EFFECTS),
            inv("metadata.taints[1].key", '""', "name part must be non-empty"),
            inv("metadata.taints[1].key", '""', QUALIFIED),
            inv(
                "metadata.taints[1].value",
                '"-x-"',
                "a valid label must be an empty string or consist of alphanumeric characters,"
                " '-', '_' or '.', and must start and end with an alphanumeric character (e.g."
                " 'MyValue',  or 'my_value',  or '12345', regex used for validation is"
                " '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
            ),
        ],
        id="node-taints",
    ),
    pytest.param(
        "nodes",
        node(taints=[{"key": "a", "effect": "NoSchedule"}, {"key": "a", "effect": ""}]),
        [req_("metadata.taints[1].effect")],
        id="node-taint-effect-required",
    ),
    pytest.param(
        "nodes",
        node(
            taints=[
                {"key": "a", "effect": "NoSchedule"},
                {"key": "a", "value": "v", "effect": "NoSchedule"},
            ]
        ),
        [
            (
                "FieldValueDuplicate",
                "metadata.taints[1]",
                'Duplicate value: core.Taint{Key:"a", Value:"v", Effect:"NoSchedule",'
                " TimeAdded:<nil>}: taints must be unique by key and effect pair",
            )
        ],
        id="node-taint-duplicate",
    ),
    pytest.param(
        "nodes",
        {"metadata": {"name": "n"}, "status": {"capacity": {"cpu": "-1"}}},
        # allocatable is defaulted from capacity, then validated too
        [
            inv("status.capacity.cpu", '"-1"', NEGATIVE),
            inv("status.allocatable.cpu", '"-1"', NEGATIVE),
        ],
        id="node-capacity",
    ),
    pytest.param("runtimeclasses", rtc(), [], id="rtc-valid"),
    pytest.param(
        "runtimeclasses",
        rtc(handler="Bad_H"),
        [inv("handler", '"Bad_H"', RFC1123_LABEL)],
        id="rtc-handler",
    ),
    pytest.param(
        "runtimeclasses",
        rtc(
            overhead={"podFixed": {"cpu": "-1"}},
            scheduling={"tolerations": [{"key": "k", "operator": "Bad"}]},
        ),
        [
            inv("overhead.limits[cpu]", '"-1"', NEGATIVE),
            unsupported("scheduling.tolerations.tolerations[0].operator", "Bad", "Equal", "Exists"),
        ],
        id="rtc-overhead-and-scheduling",
    ),
    pytest.param("controllerrevisions", CR, [], id="cr-valid"),
    pytest.param(
        "controllerrevisions",
        {"metadata": {"name": "cr"}, "revision": -1},
        [inv("revision", "-1", NEGATIVE), req_("data", "data is mandatory")],
        id="cr-no-data",
    ),
    pytest.param(
        "controllerrevisions",
        {"metadata": {"name": "cr"}, "data": [1]},
        [req_("data", "data must be a valid JSON object")],
        id="cr-data-not-an-object",
    ),
    pytest.param("csidrivers", csi(), [], id="csi-valid"),
    pytest.param(
        "csidrivers",
        csi(
            fsGroupPolicy="X",
            volumeLifecycleModes=["Y"],
            tokenRequests=[
                {"audience": "a", "expirationSeconds": 5},
                {"audience": "b", "expirationSeconds": 5000000000},
                {"audience": "b"},
            ],
        ),
        [
            unsupported("spec.fsGroupPolicy", "X", "File", "None", "ReadWriteOnceWithFSType"),
            inv(
                "spec.tokenRequests[0].expirationSeconds",
                "5",
                "may not specify a duration less than 10 minutes",
            ),
            inv(
                "spec.tokenRequests[1].expirationSeconds",
                "5000000000",
                "may not specify a duration larger than 2^32 seconds",
            ),
            ("FieldValueDuplicate", "spec.tokenRequests[2].audience", 'Duplicate value: "b"'),
            unsupported("spec.volumeLifecycleModes", "Y", "Persistent", "Ephemeral"),
        ],
        id="csi-spec",
    ),
]


@pytest.mark.parametrize(("plural", "body", "causes"), CREATES)
async def test_create(
    backend: Backend, plural: str, body: dict[str, Any], causes: list[Cause]
) -> None:
    await create_refused(backend, plural, body, causes)


UPDATES = [
    pytest.param(
        "nodes",
        node(podCIDR="10.1.0.0/24", providerID="a"),
        {"spec": {"podCIDR": "10.2.0.0/24", "providerID": "b"}},
        [
            ("FieldValueForbidden", "spec.podCIDRs", f"Forbidden: {FIXED.format('podCIDR')}"),
            ("FieldValueForbidden", "spec.providerID", f"Forbidden: {FIXED.format('providerID')}"),
        ],
        id="node-fixed-once-set",
    ),
    pytest.param(
        "nodes",
        node(),
        {"spec": {"podCIDR": "10.2.0.0/24", "providerID": "b", "unschedulable": True}},
        [],
        id="node-set-from-empty",
    ),
    pytest.param(
        "nodes",
        node(),
        {"spec": {"taints": [{"key": "a", "effect": "Bad"}]}},
        # ValidateNode, then ValidateNodeUpdate: the taints twice
        [unsupported("metadata.taints[0].effect", "Bad", *EFFECTS)] * 2,
        id="node-taints-twice",
    ),
    pytest.param(
        "runtimeclasses",
        rtc(),
        {"handler": "crun"},
        [inv("handler", '"crun"', "field is immutable")],
        id="rtc-handler-immutable",
    ),
    pytest.param(
        "runtimeclasses", rtc(), {"overhead": {"podFixed": {"cpu": "1"}}}, [], id="rtc-overhead"
    ),
    pytest.param(
        "controllerrevisions",
        CR,
        {"data": {"a": 2}},
        [inv("data", raw('{"a":2}'), "field is immutable")],
        id="cr-data-immutable",
    ),
    pytest.param(
        "csidrivers",
        csi(),
        {"spec": {"attachRequired": False, "volumeLifecycleModes": ["Ephemeral"]}},
        [
            inv("spec.attachedRequired", "false", "field is immutable"),
            inv(
                "spec.volumeLifecycleModes",
                '[]storage.VolumeLifecycleMode{"Ephemeral"}',
                "field is immutable",
            ),
        ],
        id="csi-immutable",
    ),
    pytest.param(
        "csidrivers",
        csi(),
        {"spec": {"fsGroupPolicy": "File", "podInfoOnMount": True, "storageCapacity": True}},
        [],
        id="csi-mutable",
    ),
]


@pytest.mark.parametrize(("plural", "body", "patch", "causes"), UPDATES)
async def test_update(
    backend: Backend, plural: str, body: dict[str, Any], patch: dict[str, Any], causes: list[Cause]
) -> None:
    await update_refused(backend, plural, body, patch, causes)


async def test_controller_revision_put(backend: Backend) -> None:
    """A PUT that leaves the data alone may change the revision (kube-apiserver refuses
    every merge, strategic or JSON patch of a ControllerRevision: it compares the data's
    raw bytes, which a patch re-encodes; the embedded server compares values)."""
    path = collection(backend, "controllerrevisions")
    await ok(backend, "POST", path, CR)
    updated = await ok(backend, "PUT", f"{path}/cr", {**CR, "revision": 3})
    assert (updated["revision"], updated["data"]) == (3, {"a": 1})
    assert updated["metadata"]["managedFields"][0]["fieldsV1"]["f:data"] == {}


async def test_node_defaults(backend: Backend) -> None:
    """podCIDR becomes podCIDRs' first (and wins), allocatable defaults to capacity, also
    on a /status write."""
    body = named(backend, "nodes", node(podCIDR="10.1.0.0/24", podCIDRs=["10.2.0.0/24"]))
    name = body["metadata"]["name"]
    body["status"] = {"capacity": {"cpu": "2"}}
    created = await ok(backend, "POST", collection(backend, "nodes"), body)
    assert created["spec"]["podCIDRs"] == ["10.1.0.0/24"]
    assert created["status"]["allocatable"] == {"cpu": "2"}
    status = {"status": {"capacity": {"cpu": "4"}, "allocatable": None}}
    path = f"{collection(backend, 'nodes')}/{name}/status"
    patched = await ok(backend, "PATCH", path, status, content_type=MERGE)
    assert patched["status"]["allocatable"] == {"cpu": "4"}


async def test_csi_driver_defaults_and_generation(backend: Backend) -> None:
    """SetDefaults_CSIDriver; no generation on create, bumped when the spec changes."""
    body = named(backend, "csidrivers", csi(volumeLifecycleModes=[]))
    created = await ok(backend, "POST", collection(backend, "csidrivers"), body)
    assert created["spec"] == {
        "attachRequired": True,
        "podInfoOnMount": False,
        "storageCapacity": False,
        "fsGroupPolicy": "ReadWriteOnceWithFSType",
        "volumeLifecycleModes": ["Persistent"],
        "requiresRepublish": False,
        "seLinuxMount": False,
    }
    assert "generation" not in created["metadata"]
    path = f"{collection(backend, 'csidrivers')}/{body['metadata']['name']}"
    patched = await ok(
        backend, "PATCH", path, {"spec": {"podInfoOnMount": True}}, content_type=MERGE
    )
    assert patched["metadata"]["generation"] == 1


async def test_a_client_generation_is_kept_where_no_strategy_sets_it(backend: Backend) -> None:
    """A ConfigMap (its strategy has no generation rule) stores the generation its create
    sent and keeps it on updates; a negative one is refused by ValidateObjectMeta; a
    Deployment's strategy sets 1."""
    path = collection(backend, "configmaps")
    created = await ok(backend, "POST", path, {"metadata": {"name": "g", "generation": 5}})
    assert created["metadata"]["generation"] == 5
    patch = {"metadata": {"generation": 7}, "data": {"a": "b"}}
    patched = await ok(backend, "PATCH", f"{path}/g", patch, content_type=MERGE)
    assert patched["metadata"]["generation"] == 5
    reply = await req(backend, "POST", path, {"metadata": {"name": "h", "generation": -1}})
    check_invalid("configmaps", "h", reply, [inv("metadata.generation", "-1", NEGATIVE)])
    deployment = {
        "metadata": {"name": "d", "generation": 5},
        "spec": {
            "selector": {"matchLabels": {"app": "a"}},
            "template": {
                "metadata": {"labels": {"app": "a"}},
                "spec": {"containers": [{"name": "c", "image": "busybox"}]},
            },
        },
    }
    base = f"/apis/apps/v1/namespaces/{backend.namespace}/deployments"
    assert (await ok(backend, "POST", base, deployment))["metadata"]["generation"] == 1


async def test_service_account_secret_references_keep_only_names(backend: Backend) -> None:
    """cleanSecretReferences: each secret reference keeps only its name."""
    path = collection(backend, "serviceaccounts")
    body = {
        "metadata": {"name": "sa"},
        "secrets": [{"name": "s", "kind": "Secret", "namespace": "x"}],
    }
    created = await ok(backend, "POST", path, body)
    assert created["secrets"] == [{"name": "s"}]
    fields = created["metadata"]["managedFields"][0]["fieldsV1"]
    assert fields["f:secrets"] == {".": {}, 'k:{"name":"s"}': {}}
    patched = await ok(
        backend, "PATCH", f"{path}/sa", {"secrets": [{"kind": "X"}]}, content_type=MERGE
    )
    assert patched["secrets"] == [{}]
