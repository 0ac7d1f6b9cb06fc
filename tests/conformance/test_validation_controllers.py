"""ReplicationControllers and PodTemplates validated and defaulted as kube-apiserver 1.32.5
does (pkg/apis/core/validation ValidateReplicationController, ValidatePodTemplate and their
updates; SetDefaults_ReplicationController). Each row: an object (or a change to one) and
the 422 it gets, causes and message byte for byte, or its acceptance."""

from __future__ import annotations

from typing import Any

import pytest

from reconcile_kit.testing.backends import Backend

from .kube import MERGE, ok
from .test_validation_core import forb, inv, req_, unsupported
from .validation_table import Cause, collection, create_refused, update_refused

POD = {"containers": [{"name": "c", "image": "busybox"}]}
LABEL_VALUE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or"
    " '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or"
    " 'my_value',  or '12345', regex used for validation is"
    " '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
MISMATCH = "`selector` does not match template `labels`"
NONNEGATIVE = "must be greater than or equal to 0"
TOTAL = "cannot be greater than status.replicas"


def template(labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    return {"metadata": {"labels": labels or {"app": "a"}}, "spec": {**POD, **spec}}


def rc(**spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "rc"},
        "spec": {"selector": {"app": "a"}, "template": template(), **spec},
    }


def pt(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "pt"}, "template": {"spec": {**POD, **spec}}}


CREATES = [
    pytest.param("replicationcontrollers", rc(), [], id="rc-valid"),
    pytest.param(
        "replicationcontrollers",
        {"metadata": {"name": "rc"}, "spec": {}},
        [req_("spec.selector"), req_("spec.template")],
        id="rc-empty",
    ),
    pytest.param(
        "replicationcontrollers",
        {"metadata": {"name": "rc"}, "spec": {"template": {"spec": POD}}},
        [req_("spec.selector")],
        id="rc-no-selector-to-default",
    ),
    pytest.param(
        "replicationcontrollers",
        rc(replicas=-1, minReadySeconds=-2),
        [inv("spec.minReadySeconds", "-2", NONNEGATIVE), inv("spec.replicas", "-1", NONNEGATIVE)],
        id="rc-negative",
    ),
    pytest.param(
        "replicationcontrollers",
        rc(selector={"app": "b"}),
        [inv("spec.template.metadata.labels", 'map[string]string{"app":"a"}', MISMATCH)],
        id="rc-selector-mismatch",
    ),
    pytest.param(
        "replicationcontrollers",
        rc(template=template(restartPolicy="Never", activeDeadlineSeconds=5)),
        [
            unsupported("spec.template.spec.restartPolicy", "Never", "Always"),
            forb(
                "spec.template.spec.activeDeadlineSeconds",
                "activeDeadlineSeconds in ReplicationController is not Supported",
            ),
        ],
        id="rc-restart-policy",
    ),
    pytest.param(
        "replicationcontrollers",
        rc(template={"metadata": {"labels": {"app": "a"}}, "spec": {"containers": []}}),
        [req_("spec.template.spec.containers")],
        id="rc-no-containers",
    ),
    pytest.param(
        "replicationcontrollers",
        rc(template=template({"app": "a", "x": "-bad"})),
        [
            inv("metadata.labels", '"-bad"', LABEL_VALUE),  # defaulted from the template
            inv("spec.template.labels", '"-bad"', LABEL_VALUE),
        ],
        id="rc-labels-defaulted-then-validated",
    ),
    pytest.param("podtemplates", pt(), [], id="pt-valid"),
    pytest.param(
        "podtemplates",
        {"metadata": {"name": "pt"}},
        [req_("template.spec.containers")],
        id="pt-empty",
    ),
    pytest.param(
        "podtemplates",
        {
            "metadata": {"name": "pt"},
            "template": {
                "metadata": {"labels": {"a": "-"}},
                "spec": {**POD, "restartPolicy": "Sometimes"},
            },
        },
        [
            inv("template.labels", '"-"', LABEL_VALUE),
            unsupported("template.spec.restartPolicy", "Sometimes", "Always", "OnFailure", "Never"),
        ],
        id="pt-labels-and-restart-policy",
    ),
    pytest.param(
        "podtemplates",
        pt(ephemeralContainers=[{"name": "e", "image": "x"}]),
        [
            forb(
                "template.spec.ephemeralContainers",
                "ephemeral containers not allowed in pod template",
            )
        ],
        id="pt-ephemeral-containers",
    ),
]


@pytest.mark.parametrize(("plural", "body", "causes"), CREATES)
async def test_create(
    backend: Backend, plural: str, body: dict[str, Any], causes: list[Cause]
) -> None:
    await create_refused(backend, plural, body, causes)


UPDATES = [
    pytest.param(
        "replicationcontrollers",
        {"spec": {"selector": {"app": "b"}, "template": {"metadata": {"labels": {"app": "b"}}}}},
        [],
        id="rc-selector-is-mutable",
    ),
    pytest.param(
        "replicationcontrollers",
        {"spec": {"selector": {"app": "b"}}},
        # the strategy validates the object, then the update: each cause twice
        [inv("spec.template.metadata.labels", 'map[string]string{"app":"a"}', MISMATCH)] * 2,
        id="rc-selector-mismatch",
    ),
    pytest.param(
        "replicationcontrollers",
        {"spec": {"replicas": -3}},
        [inv("spec.replicas", "-3", NONNEGATIVE)] * 2,
        id="rc-negative-replicas",
    ),
    pytest.param(
        "podtemplates",
        {"template": {"spec": {"containers": None}}},
        [req_("template.spec.containers")],
        id="pt-no-containers",
    ),
]


@pytest.mark.parametrize(("plural", "patch", "causes"), UPDATES)
async def test_update(
    backend: Backend, plural: str, patch: dict[str, Any], causes: list[Cause]
) -> None:
    body = rc() if plural == "replicationcontrollers" else pt()
    await update_refused(backend, plural, body, patch, causes)


STATUS_UPDATES = [
    pytest.param(
        {
            "replicas": -1,
            "fullyLabeledReplicas": 2,
            "readyReplicas": -1,
            "availableReplicas": 3,
            "observedGeneration": -1,
        },
        [
            inv("status.replicas", "-1", NONNEGATIVE),
            inv("status.readyReplicas", "-1", NONNEGATIVE),
            inv("status.observedGeneration", "-1", NONNEGATIVE),
            inv("status.fullyLabeledReplicas", "2", TOTAL),
            inv("status.availableReplicas", "3", TOTAL),
            inv("status.availableReplicas", "3", "cannot be greater than readyReplicas"),
        ],
        id="negative",
    ),
    pytest.param(
        {"replicas": 1, "readyReplicas": 1, "availableReplicas": 2},
        [
            inv("status.availableReplicas", "2", TOTAL),
            inv("status.availableReplicas", "2", "cannot be greater than readyReplicas"),
        ],
        id="above-total",
    ),
    pytest.param({"replicas": 2, "readyReplicas": 1}, [], id="valid"),
]


@pytest.mark.parametrize(("status", "causes"), STATUS_UPDATES)
async def test_rc_status_update(
    backend: Backend, status: dict[str, Any], causes: list[Cause]
) -> None:
    await update_refused(
        backend, "replicationcontrollers", rc(), {"status": status}, causes, subresource="status"
    )


async def test_rc_defaults(backend: Backend) -> None:
    """SetDefaults_ReplicationController: selector and labels from the template, one
    replica, the pod template's defaults."""
    body = {"metadata": {"name": "rc"}, "spec": {"template": template()}}
    created = await ok(backend, "POST", collection(backend, "replicationcontrollers"), body)
    assert created["metadata"]["labels"] == {"app": "a"}
    spec = created["spec"]
    assert (spec["selector"], spec["replicas"]) == ({"app": "a"}, 1)
    assert spec["template"]["spec"]["restartPolicy"] == "Always"
    assert spec["template"]["spec"]["containers"][0]["terminationMessagePath"] == (
        "/dev/termination-log"
    )
    assert created["metadata"]["generation"] == 1


async def test_pod_template_defaults_and_generation(backend: Backend) -> None:
    """A PodTemplate's template gets the pod defaults; its generation starts at 1 and
    moves when the template changes, not the metadata."""
    path = collection(backend, "podtemplates")
    created = await ok(backend, "POST", path, pt())
    spec = created["template"]["spec"]
    assert (spec["dnsPolicy"], spec["terminationGracePeriodSeconds"]) == ("ClusterFirst", 30)
    assert spec["containers"][0]["imagePullPolicy"] == "Always"
    assert created["metadata"]["generation"] == 1
    labelled = {"metadata": {"labels": {"x": "y"}}}
    patched = await ok(backend, "PATCH", f"{path}/pt", labelled, content_type=MERGE)
    assert patched["metadata"]["generation"] == 1
    image = {"template": {"spec": {"containers": [{"name": "c", "image": "nginx"}]}}}
    patched = await ok(backend, "PATCH", f"{path}/pt", image, content_type=MERGE)
    assert patched["metadata"]["generation"] == 2
