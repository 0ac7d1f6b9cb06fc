"""StorageClasses, PriorityClasses and IngressClasses validated as kube-apiserver 1.32.5
validates them (pkg/apis/storage, scheduling and networking validation): required and
enumerated fields, reserved names and values, and the fields an update may not change.
Each row: an object (or a change to one) and the 422 it gets, causes and message byte for
byte, or its acceptance."""

from __future__ import annotations

from typing import Any

import pytest

from reconcile_kit.testing.backends import Backend

from .kube import MERGE, ok, req
from .test_validation_core import QUALIFIED, RFC1123_SUB, forb, inv, req_, unsupported
from .validation_table import Cause, check_invalid, create_refused, update_refused

HTTP_PATH = "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+"
DOMAIN_PATH = 'must be a domain-prefixed path (such as "acme.io/foo")'


def sc(**fields: Any) -> dict[str, Any]:
    return {"metadata": {"name": "sc"}, "provisioner": "example.com/disk", **fields}


def pc(**fields: Any) -> dict[str, Any]:
    return {"metadata": {"name": "pc"}, "value": 10, **fields}


def ic(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "ic"}, "spec": {"controller": "example.com/ingress", **spec}}


CREATES = [
    pytest.param(
        "storageclasses", {"metadata": {"name": "sc"}}, [req_("provisioner")], id="sc-provisioner"
    ),
    pytest.param(
        "storageclasses",
        sc(provisioner="Example.com/Disk!"),
        [inv("provisioner", '"example.com/disk!"', QUALIFIED)],
        id="sc-provisioner-lowered-and-qualified",
    ),
    pytest.param(
        "storageclasses",
        sc(reclaimPolicy="Recycle"),
        [unsupported("reclaimPolicy", "Recycle", "Delete", "Retain")],
        id="sc-reclaim-policy",
    ),
    pytest.param(
        "storageclasses",
        sc(volumeBindingMode="Later"),
        [unsupported("volumeBindingMode", "Later", "Immediate", "WaitForFirstConsumer")],
        id="sc-binding-mode",
    ),
    pytest.param(
        "storageclasses",
        sc(parameters={"": "x"}),
        [inv("parameters", '""', "field can not be empty.")],
        id="sc-empty-parameter",
    ),
    pytest.param(
        "storageclasses",
        sc(reclaimPolicy="Retain", volumeBindingMode="WaitForFirstConsumer", parameters={"a": "b"}),
        [],
        id="sc-valid",
    ),
    pytest.param("priorityclasses", pc(), [], id="pc-valid"),
    pytest.param(
        "priorityclasses",
        pc(value=1000000001),
        [forb("value", "maximum allowed value of a user defined priority is 1000000000")],
        id="pc-value-too-high",
    ),
    pytest.param(
        "priorityclasses",
        pc(preemptionPolicy="Always"),
        [unsupported("preemptionPolicy", "Always", "PreemptLowerPriority", "Never")],
        id="pc-preemption-policy",
    ),
    pytest.param(
        "priorityclasses",
        pc(preemptionPolicy=""),
        [req_("preemptionPolicy")],
        id="pc-empty-preemption-policy",
    ),
    pytest.param(
        "ingressclasses",
        {"metadata": {"name": "ic"}, "spec": {}},
        [req_("spec.controller")],
        id="ic-controller",
    ),
    pytest.param(
        "ingressclasses",
        ic(controller="nginx"),
        [inv("spec.controller", '"nginx"', DOMAIN_PATH)],
        id="ic-no-domain",
    ),
    pytest.param(
        "ingressclasses",
        ic(controller="Bad_Host/x"),
        [inv("spec.controller", '"Bad_Host"', RFC1123_SUB)],
        id="ic-bad-domain",
    ),
    pytest.param(
        "ingressclasses",
        ic(controller="example.com/a b"),
        [
            inv(
                "spec.controller",
                '"a b"',
                f"Invalid path (regex used for validation is '{HTTP_PATH}')",
            )
        ],
        id="ic-bad-path",
    ),
    pytest.param(
        "ingressclasses",
        ic(parameters={"name": "p"}),
        [req_("spec.parameters.kind", "kind is required")],
        id="ic-parameters-kind",
    ),
    pytest.param(
        "ingressclasses",
        ic(parameters={"kind": "K", "name": "p", "scope": "Global"}),
        [unsupported("spec.parameters.scope", "Global", "Cluster", "Namespace")],
        id="ic-parameters-scope",
    ),
    pytest.param(
        "ingressclasses",
        ic(parameters={"kind": "K", "name": "p", "scope": "Namespace"}),
        [req_("spec.parameters.namespace", "`parameters.scope` is set to 'Namespace'")],
        id="ic-parameters-namespace",
    ),
    pytest.param(
        "ingressclasses",
        ic(parameters={"kind": "K", "name": "p", "scope": "Cluster", "namespace": "x"}),
        [forb("spec.parameters.namespace", "`parameters.scope` is set to 'Cluster'")],
        id="ic-parameters-cluster-namespace",
    ),
]


@pytest.mark.parametrize(("plural", "body", "causes"), CREATES)
async def test_create(
    backend: Backend, plural: str, body: dict[str, Any], causes: list[Cause]
) -> None:
    await create_refused(backend, plural, body, causes)


UPDATES = [
    pytest.param(
        "storageclasses",
        sc(),
        {"provisioner": "example.com/other", "reclaimPolicy": "Retain", "parameters": {"a": "b"}},
        [
            forb("parameters", "updates to parameters are forbidden."),
            forb("provisioner", "updates to provisioner are forbidden."),
            forb("reclaimPolicy", "updates to reclaimPolicy are forbidden."),
        ],
        id="sc-immutable",
    ),
    pytest.param(
        "storageclasses",
        sc(),
        {"volumeBindingMode": "WaitForFirstConsumer"},
        [inv("volumeBindingMode", '"WaitForFirstConsumer"', "field is immutable")],
        id="sc-binding-mode-immutable",
    ),
    pytest.param(
        "storageclasses",
        sc(),
        {"allowVolumeExpansion": True, "mountOptions": ["ro"]},
        [],
        id="sc-mutable",
    ),
    pytest.param(
        "priorityclasses",
        pc(),
        {"value": 11},
        [forb("value", "may not be changed in an update.")],
        id="pc-value",
    ),
    pytest.param(
        "priorityclasses",
        pc(),
        {"preemptionPolicy": "Never"},
        [inv("preemptionPolicy", '"Never"', "field is immutable")],
        id="pc-preemption-policy",
    ),
    pytest.param(
        "priorityclasses", pc(), {"description": "d", "globalDefault": False}, [], id="pc-mutable"
    ),
    pytest.param(
        "ingressclasses",
        ic(),
        {"spec": {"controller": "example.com/other"}},
        [inv("spec.controller", '"example.com/other"', "field is immutable")],
        id="ic-controller",
    ),
    pytest.param(
        "ingressclasses",
        ic(),
        {"spec": {"parameters": {"kind": "K", "name": "p"}}},
        [],
        id="ic-parameters-defaulted-scope",
    ),
]


@pytest.mark.parametrize(("plural", "body", "patch", "causes"), UPDATES)
async def test_update(
    backend: Backend, plural: str, body: dict[str, Any], patch: dict[str, Any], causes: list[Cause]
) -> None:
    await update_refused(backend, plural, body, patch, causes)


async def test_system_priority_class_names(backend: Backend) -> None:
    path = "/apis/scheduling.k8s.io/v1/priorityclasses"
    name = backend.unique("system")
    reply = await req(backend, "POST", path, {"metadata": {"name": name}, "value": 10})
    why = (
        "priority class names with 'system-' prefix are reserved for system use only. error:"
        f" {name} is not a known system priority class"
    )
    check_invalid("priorityclasses", name, reply, [forb("metadata.name", why)])


async def test_priority_class_generation_is_not_bumped(backend: Backend) -> None:
    """The PriorityClass strategy sets generation 1 on create and never changes it."""
    path = "/apis/scheduling.k8s.io/v1/priorityclasses"
    name = backend.unique("pc")
    await ok(backend, "POST", path, {"metadata": {"name": name}, "value": 1})
    patched = await ok(backend, "PATCH", f"{path}/{name}", {"description": "x"}, content_type=MERGE)
    assert patched["metadata"]["generation"] == 1


async def test_ingress_class_parameters_default_to_cluster_scope(backend: Backend) -> None:
    path = "/apis/networking.k8s.io/v1/ingressclasses"
    name = backend.unique("ic")
    body = {
        "metadata": {"name": name},
        "spec": {"controller": "a.io/b", "parameters": {"kind": "K", "name": "p"}},
    }
    created = await ok(backend, "POST", path, body)
    assert created["spec"]["parameters"] == {"kind": "K", "name": "p", "scope": "Cluster"}
