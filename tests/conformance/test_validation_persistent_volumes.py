"""PersistentVolumes validated as kube-apiserver 1.32.5 validates them (pkg/apis/core/
validation ValidatePersistentVolume and ValidatePersistentVolumeUpdate): access modes,
capacity, reclaim policy, exactly one volume source, node affinity, storage class, volume
mode, and the source, volume mode and node affinity an update may not change. Each row: an
object (or a change to one) and the 422 it gets, causes and message byte for byte, or its
acceptance."""

from __future__ import annotations

from typing import Any

import pytest

from reconcile_kit.testing.backends import Backend

from .kube import ok
from .test_validation_core import RFC1123_SUB, forb, inv, req_, unsupported
from .validation_table import PREFIX, Cause, collection, create_refused, named, update_refused

ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
ONE_SOURCE = "may not specify more than 1 volume type"
QUANTITY_1 = (
    "resource.Quantity{i:resource.int64Amount{value:1, scale:0}, d:resource.infDecAmount{Dec:"
    '(*inf.Dec)(nil)}, s:"1", Format:"DecimalSI"}'
)
AFFINITY = {
    "required": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "Exists"}]}]}
}


def pv(**spec: Any) -> dict[str, Any]:
    base = {
        "capacity": {"storage": "1Gi"},
        "accessModes": ["ReadWriteOnce"],
        "hostPath": {"path": "/tmp"},
    }
    merged = {k: v for k, v in {**base, **spec}.items() if v is not None}
    return {"metadata": {"name": "pv"}, "spec": merged}


def capacity(rendered: str) -> Cause:
    return (
        "FieldValueNotSupported",
        "spec.capacity",
        f'Unsupported value: {rendered}: supported values: "storage"',
    )


CREATES = [
    pytest.param(pv(), [], id="valid"),
    pytest.param(
        {"metadata": {"name": "pv"}, "spec": {}},
        [
            req_("spec.accessModes"),
            req_("spec.capacity"),
            capacity("core.ResourceList(nil)"),
            req_("spec", "must specify a volume type"),
        ],
        id="empty",
    ),
    pytest.param(
        pv(capacity={"cpu": "1"}),
        [capacity('core.ResourceList{"cpu":' + QUANTITY_1 + "}")],
        id="capacity-not-storage",
    ),
    pytest.param(
        pv(capacity={"storage": "0"}),
        [inv("spec.capacity[storage]", '"0"', "must be greater than zero")],
        id="capacity-zero",
    ),
    pytest.param(
        pv(capacity={"storage": "-1"}),
        [
            inv("spec.capacity[storage]", "-1", "must be a valid resource quantity"),
            inv("spec.capacity[storage]", '"-1"', "must be greater than zero"),
        ],
        id="capacity-negative",
    ),
    pytest.param(
        pv(accessModes=["RWO"]),
        [unsupported("spec.accessModes", "RWO", *ACCESS_MODES)],
        id="access-mode",
    ),
    pytest.param(
        pv(accessModes=["ReadWriteOncePod", "ReadWriteMany"]),
        [forb("spec.accessModes", "may not use ReadWriteOncePod with other access modes")],
        id="read-write-once-pod-mixed",
    ),
    pytest.param(
        pv(nfs={"server": "s", "path": "/p"}, local={"path": "/x"}),
        [forb("spec.nfs", ONE_SOURCE), forb("spec.local", ONE_SOURCE)],
        id="three-sources",
    ),
    pytest.param(
        pv(
            hostPath=None, cinder={"volumeID": "v"}, fc={"wwids": ["w"]}, flexVolume={"driver": "d"}
        ),
        [forb("spec.fc", ONE_SOURCE)],  # flexVolume's branch does not count
        id="flex-volume-never-second",
    ),
    pytest.param(
        pv(persistentVolumeReclaimPolicy="Recycle", hostPath={"path": "/a/.."}),
        [
            inv("spec.hostPath.path", '"/a/.."', "must not contain '..'"),
            forb(
                "spec.persistentVolumeReclaimPolicy",
                "may not be 'recycle' for a hostPath mount of '/'",
            ),
        ],
        id="recycled-root",
    ),
    pytest.param(
        pv(hostPath=None, nfs={"server": ""}),
        [
            req_("spec.nfs.server"),
            req_("spec.nfs.path"),
            inv("spec.nfs.path", '""', "must be an absolute path"),
        ],
        id="nfs",
    ),
    pytest.param(
        pv(hostPath=None, local={"path": "/x"}),
        [req_("spec.nodeAffinity", "Local volume requires node affinity")],
        id="local-without-affinity",
    ),
    pytest.param(
        pv(hostPath=None, csi={"driver": "", "volumeHandle": ""}),
        [
            req_("spec.csi.driver"),
            inv("spec.csi.driver", '""', RFC1123_SUB),
            req_("spec.csi.volumeHandle"),
        ],
        id="csi",
    ),
    pytest.param(
        pv(hostPath=None, csi={"driver": "D_" + "x" * 70, "volumeHandle": "h"}),
        [
            ("FieldValueTooLong", "spec.csi.driver", "Too long: may not be more than 63 bytes"),
            inv("spec.csi.driver", '"D_' + "x" * 70 + '"', RFC1123_SUB),
        ],
        id="csi-driver-name-too-long",
    ),
    pytest.param(
        pv(nodeAffinity={"required": {"nodeSelectorTerms": []}}),
        [
            req_(
                "spec.nodeAffinity.required.nodeSelectorTerms",
                "must have at least one node selector term",
            )
        ],
        id="node-affinity",
    ),
    pytest.param(
        {
            "metadata": {"name": "pv"},
            "spec": {
                "accessModes": ["X"],
                "capacity": {"storage": "1Gi"},
                "persistentVolumeReclaimPolicy": "Keep",
                "storageClassName": "A_B",
                "volumeMode": "Raw",
            },
        },
        [
            unsupported("spec.accessModes", "X", *ACCESS_MODES),
            unsupported(
                "spec.persistentVolumeReclaimPolicy", "Keep", "Delete", "Recycle", "Retain"
            ),
            req_("spec", "must specify a volume type"),
            inv("spec.storageClassName", '"A_B"', RFC1123_SUB),
            unsupported("spec.volumeMode", "Raw", "Block", "Filesystem"),
        ],
        id="in-go-order",
    ),
]


@pytest.mark.parametrize(("body", "causes"), CREATES)
async def test_create(backend: Backend, body: dict[str, Any], causes: list[Cause]) -> None:
    await create_refused(backend, "persistentvolumes", body, causes)


UPDATES = [
    pytest.param(
        pv(),
        {"spec": {"hostPath": {"path": "/other"}}},
        [
            forb(
                "spec.persistentvolumesource",
                f"spec.persistentvolumesource is immutable after creation{PREFIX}",
            )
        ],
        id="source",
    ),
    pytest.param(
        pv(),
        {"spec": {"volumeMode": "Block"}},
        [inv("volumeMode", '"Block"', "field is immutable")],
        id="volume-mode",
    ),
    pytest.param(
        pv(),
        {"spec": {"accessModes": None}},
        [req_("spec.accessModes")] * 2,  # the strategy validates the object, then the update
        id="validated-twice",
    ),
    pytest.param(
        pv(),
        {
            "spec": {
                "capacity": {"storage": "2Gi"},
                "persistentVolumeReclaimPolicy": "Delete",
                "nodeAffinity": AFFINITY,
            }
        },
        [],
        id="mutable",
    ),
    pytest.param(
        pv(nodeAffinity=AFFINITY),
        {"spec": {"nodeAffinity": {"required": {"nodeSelectorTerms": [{}]}}}},
        [
            inv(
                "nodeAffinity",
                "core.VolumeNodeAffinity{Required:(*core.NodeSelector)(0x)}",
                "field is immutable, except for updating from beta label to GA",
            )
        ],
        id="node-affinity-once-set",
    ),
    pytest.param(
        pv(hostPath=None, csi={"driver": "d", "volumeHandle": "h"}),
        {"spec": {"csi": {"controllerExpandSecretRef": {"name": "s", "namespace": "n"}}}},
        [],
        id="csi-expand-secret-set-once",
    ),
]


@pytest.mark.parametrize(("body", "patch", "causes"), UPDATES)
async def test_update(
    backend: Backend, body: dict[str, Any], patch: dict[str, Any], causes: list[Cause]
) -> None:
    await update_refused(backend, "persistentvolumes", body, patch, causes)


async def test_defaults(backend: Backend) -> None:
    """Retain, Filesystem, the protection finalizer (not recorded in managedFields: the
    StorageObjectInUseProtection admission plugin adds it after the field manager ran)."""
    body = named(backend, "persistentvolumes", pv())
    created = await ok(backend, "POST", collection(backend, "persistentvolumes"), body)
    spec = created["spec"]
    assert (spec["persistentVolumeReclaimPolicy"], spec["volumeMode"]) == ("Retain", "Filesystem")
    assert created["metadata"]["finalizers"] == ["kubernetes.io/pv-protection"]
    fields = created["metadata"]["managedFields"][0]["fieldsV1"]
    assert "f:metadata" not in fields
    assert created["status"]["phase"] == "Pending"


async def test_claim_ref_is_granular_in_managed_fields(backend: Backend) -> None:
    """claimRef is an ObjectReference (atomic elsewhere) marked +structType=granular: its
    writer owns each field."""
    body = named(backend, "persistentvolumes", pv(claimRef={"name": "c", "namespace": "ns"}))
    created = await ok(backend, "POST", collection(backend, "persistentvolumes"), body)
    fields = created["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"]["f:claimRef"]
    assert fields == {".": {}, "f:name": {}, "f:namespace": {}}
