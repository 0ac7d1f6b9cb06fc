"""VolumeAttachments and CSINodes validated as kube-apiserver 1.32.5 does
(pkg/apis/storage/validation ValidateVolumeAttachment, ValidateVolumeAttachmentV1 and the
update; ValidateCSINode and the update, long node IDs allowed). An update validates the
new object twice, so its causes come twice (the message shows each once). Each row: an
object (or a change to one) and the 422 it gets, causes and message byte for byte, or its
acceptance."""

from __future__ import annotations

from typing import Any

import pytest

from reconcile_kit.testing.backends import Backend

from .kube import MERGE, ok, req
from .test_validation_core import QUALIFIED, RFC1123_SUB, forb, inv, req_, unsupported
from .validation_table import Cause, collection, create_refused, named, update_refused

ONE_SOURCE = "must specify exactly one of inlineVolumeSpec and persistentVolumeName"
INLINE = "may not be specified in the context of inline volumes"
IMMUTABLE = "field is immutable"
TOO_LONG_META = ("FieldValueTooLong", "", "Too long: may not be more than 262144 bytes")
NEGATIVE = "must be greater than or equal to 0"


def attachment(**spec: Any) -> dict[str, Any]:
    base = {"attacher": "csi.example.com", "nodeName": "node-1"}
    return {"metadata": {"name": "va"}, "spec": {**base, **spec}}


PV = {"source": {"persistentVolumeName": "pv-1"}}
INLINE_CSI = {"csi": {"driver": "csi.example.com", "volumeHandle": "h"}}


def csinode(*drivers: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": "node-1"}, "spec": {"drivers": list(drivers)}}


def driver(name: str = "csi.example.com", **fields: Any) -> dict[str, Any]:
    return {"name": name, "nodeID": "id-1", **fields}


def too_long(field: str, limit: int) -> Cause:
    return ("FieldValueTooLong", field, f"Too long: may not be more than {limit} bytes")


CREATES = [
    pytest.param("volumeattachments", attachment(**PV), [], id="va-valid"),
    pytest.param(
        "volumeattachments",
        attachment(attacher="", nodeName="", **PV),
        [
            req_("spec.attacher"),
            inv("spec.nodeName", '""', RFC1123_SUB),
            req_("spec.attacher"),
            inv("spec.attacher", '""', RFC1123_SUB),
        ],
        id="va-empty-attacher-and-node",
    ),
    pytest.param(
        "volumeattachments",
        attachment(attacher="A_" + "b" * 70, nodeName="Node_1", **PV),
        [
            inv("spec.nodeName", '"Node_1"', RFC1123_SUB),
            too_long("spec.attacher", 63),
            inv("spec.attacher", '"A_' + "b" * 70 + '"', RFC1123_SUB),
        ],
        id="va-bad-attacher-and-node",
    ),
    pytest.param(
        "volumeattachments",
        attachment(source={}),
        [req_("spec.source", ONE_SOURCE)],
        id="va-no-source",
    ),
    pytest.param(
        "volumeattachments",
        attachment(source={"persistentVolumeName": "pv", "inlineVolumeSpec": INLINE_CSI}),
        [forb("spec.source", ONE_SOURCE)],
        id="va-two-sources",
    ),
    pytest.param(
        "volumeattachments",
        attachment(source={"persistentVolumeName": ""}),
        [
            req_("spec.source.persistentVolumeName", "must specify non empty persistentVolumeName"),
            inv("spec.source.persistentVolumeName", '""', RFC1123_SUB),
        ],
        id="va-empty-pv-name",
    ),
    pytest.param(
        "volumeattachments",
        attachment(source={"persistentVolumeName": "PV_1"}),
        [inv("spec.source.persistentVolumeName", '"PV_1"', RFC1123_SUB)],
        id="va-bad-pv-name",
    ),
    pytest.param(
        "volumeattachments",
        attachment(source={"inlineVolumeSpec": {**INLINE_CSI, "accessModes": ["ReadWriteOnce"]}}),
        [],
        id="va-inline-valid",
    ),
    pytest.param(
        "volumeattachments",
        attachment(
            source={
                "inlineVolumeSpec": {
                    "claimRef": {"name": "c"},
                    "capacity": {"storage": "1Gi"},
                    "nfs": {"server": "s", "path": "/p"},
                    "persistentVolumeReclaimPolicy": "Delete",
                    "nodeAffinity": {"required": {"nodeSelectorTerms": []}},
                    "accessModes": ["Sometimes"],
                    "volumeMode": "Both",
                    "storageClassName": "fast",
                }
            }
        ),
        [
            forb("spec.source.inlineVolumeSpec.claimRef", INLINE),
            forb("spec.source.inlineVolumeSpec.capacity", INLINE),
            req_(
                "spec.source.inlineVolumeSpec.csi",
                "has to be specified in the context of inline volumes",
            ),
            unsupported(
                "spec.source.inlineVolumeSpec.accessModes",
                "Sometimes",
                "ReadOnlyMany",
                "ReadWriteMany",
                "ReadWriteOnce",
                "ReadWriteOncePod",
            ),
            forb(
                "spec.source.inlineVolumeSpec.persistentVolumeReclaimPolicy",
                "may only be Retain in the context of inline volumes",
            ),
            forb("spec.source.inlineVolumeSpec.nodeAffinity", INLINE),
            forb("spec.source.inlineVolumeSpec.storageClassName", INLINE),
            forb(
                "spec.source.inlineVolumeSpec.volumeMode",
                "may not specify volumeMode other than Filesystem in the context of inline volumes",
            ),
        ],
        id="va-inline-refused",
    ),
    pytest.param(
        "volumeattachments",
        # status is cleared on create: its errors are not looked at
        {**attachment(**PV), "status": {"attached": True, "attachError": {"message": "x" * 2000}}},
        [],
        id="va-status-dropped-on-create",
    ),
    pytest.param("csinodes", csinode(driver(topologyKeys=["zone"])), [], id="csinode-valid"),
    pytest.param(
        "csinodes",
        csinode(
            driver(""),
            driver("Bad_Name", nodeID=""),
            driver("d.example.com", nodeID="x" * 257, allocatable={"count": -1}),
            driver("d.example.com", topologyKeys=["", "a/b/c", "zone", "zone"]),
        ),
        [
            req_("spec.drivers[0].name"),
            inv("spec.drivers[0].name", '""', RFC1123_SUB),
            inv("spec.drivers[1].name", '"Bad_Name"', RFC1123_SUB),
            req_("spec.drivers[1].nodeID"),
            inv("spec.drivers[2].nodeID", '"' + "x" * 257 + '"', "must be 256 characters or less"),
            inv("spec.drivers[2].allocatable.count", "-1", NEGATIVE),
            ("FieldValueDuplicate", "spec.drivers[3].name", 'Duplicate value: "d.example.com"'),
            req_("spec.drivers[3]"),
            inv("spec.drivers[3]", '""', "name part must be non-empty"),
            inv("spec.drivers[3]", '""', QUALIFIED),
            inv(
                "spec.drivers[3]",
                '"a/b/c"',
                "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and"
                " must start and end with an alphanumeric character (e.g. 'MyName',  or"
                " 'my.name',  or '123-abc', regex used for validation is"
                " '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain"
                " prefix and '/' (e.g. 'example.com/MyName')",
            ),
            ("FieldValueDuplicate", "spec.drivers[3]", 'Duplicate value: "zone"'),
        ],
        id="csinode-drivers",
    ),
]


@pytest.mark.parametrize(("plural", "body", "causes"), CREATES)
async def test_create(
    backend: Backend, plural: str, body: dict[str, Any], causes: list[Cause]
) -> None:
    await create_refused(backend, plural, body, causes)


SPEC_SHOWN = (
    'storage.VolumeAttachmentSpec{Attacher:"csi.example.com", '
    "Source:storage.VolumeAttachmentSource{PersistentVolumeName:(*string)(0x), "
    'InlineVolumeSpec:(*core.PersistentVolumeSpec)(nil)}, NodeName:"node-2"}'
)
DRIVER_SHOWN = (
    'storage.CSINodeDriver{Name:"csi.example.com", NodeID:"id-2", '
    'TopologyKeys:[]string{"zone"}, Allocatable:(*storage.VolumeNodeResources)(nil)}'
)

UPDATES = [
    pytest.param(
        "volumeattachments",
        attachment(**PV),
        {"spec": {"nodeName": "node-2"}},
        [inv("spec", SPEC_SHOWN, IMMUTABLE)],
        id="va-spec-immutable",
    ),
    pytest.param(
        "volumeattachments",
        attachment(**PV),
        {"metadata": {"labels": {"a": "b"}}},
        [],
        id="va-metadata",
    ),
    pytest.param(
        "csinodes",
        csinode(driver(topologyKeys=["zone"])),
        {"spec": {"drivers": [driver(nodeID="id-2", topologyKeys=["zone"])]}},
        [inv("CSINodeDriver", DRIVER_SHOWN, IMMUTABLE)],
        id="csinode-driver-immutable",
    ),
    pytest.param(
        "csinodes",
        csinode(driver()),
        {"spec": {"drivers": [driver(), driver("other.example.com", allocatable={"count": -2})]}},
        [inv("spec.drivers[1].allocatable.count", "-2", NEGATIVE)] * 2,
        id="csinode-added-driver-twice",
    ),
    pytest.param(
        "csinodes",
        csinode(driver()),
        {"spec": {"drivers": [driver("other.example.com")]}},
        [],
        id="csinode-driver-replaced",
    ),
]


@pytest.mark.parametrize(("plural", "body", "patch", "causes"), UPDATES)
async def test_update(
    backend: Backend, plural: str, body: dict[str, Any], patch: dict[str, Any], causes: list[Cause]
) -> None:
    await update_refused(backend, plural, body, patch, causes)


async def test_volume_attachment_status(backend: Backend) -> None:
    """The status is written through /status only, validated twice there; a write to the
    object keeps the stored status."""
    body = named(backend, "volumeattachments", attachment(**PV))
    path = f"{collection(backend, 'volumeattachments')}/{body['metadata']['name']}"
    await ok(backend, "POST", collection(backend, "volumeattachments"), body)
    status = {"status": {"attached": True, "attachmentMetadata": {"k": "v"}}}
    await ok(backend, "PATCH", path, status, content_type=MERGE)
    assert (await ok(backend, "GET", path))["status"] == {"attached": False}
    patched = await ok(backend, "PATCH", f"{path}/status", status, content_type=MERGE)
    assert patched["status"] == status["status"]
    await update_refused_status(backend, path)


async def update_refused_status(backend: Backend, path: str) -> None:
    big = {"status": {"attachmentMetadata": {"k": "v" * (256 * 1024)}}}
    reply = await req(backend, "PATCH", f"{path}/status", big, content_type=MERGE)
    assert reply.status == 422, reply.body
    causes = [
        (c["reason"], c.get("field", ""), c["message"]) for c in reply.body["details"]["causes"]
    ]
    assert causes == [too_long("status.attachmentMetadata", 256 * 1024)] * 2
