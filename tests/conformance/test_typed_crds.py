"""Typed resources: generated CRDs on both backends, and model vs API server validation
(issue 16). The CRDs come from pydantic models (tests/typed/models.py) and the typed
examples' checked-in CRDs (examples/*-crd.yaml, generated from their models)."""

from __future__ import annotations

import asyncio
import os
import secrets
from pathlib import Path
from typing import Any

import kr8s.asyncio
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from reconcile_kit.examples import configmap_generator, ippool

from reconcile_kit.testing import APIServer, ControlPlane
from reconcile_kit.testing.backends import Backend, selected_backends
from reconcile_kit.typed import CustomResource

from ..kubehttp import send
from ..typed.models import Gadget
from .kube import MERGE, install_crd, ok, req


def gadget_crd(group: str) -> dict[str, Any]:
    """Gadget's generated CRD moved into ``group`` (one per test: cluster-scoped)."""
    crd = Gadget.crd()
    crd["metadata"]["name"] = f"gadgets.{group}"
    crd["spec"]["group"] = group
    return crd


def gadget(group: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": f"{group}/v1", "kind": "Gadget", "metadata": {"name": name}, "spec": spec}


async def test_generated_crd_is_accepted_and_enforced(backend: Backend) -> None:
    group = f"{backend.namespace}.typed.example.com"
    await install_crd(backend, gadget_crd(group))
    path = f"/apis/{group}/v1/namespaces/{backend.namespace}/gadgets"
    created = await ok(backend, "POST", path, gadget(group, "g", {"image": "nginx"}))
    assert created["spec"] == {
        "image": "nginx",
        "replicas": 1,
        "tier": "frontend",
        "maxSurge": "25%",
        "minSize": 0,
        "maxSize": 5,
    }
    typed = Gadget.model_validate(created)
    assert (typed.spec.replicas, typed.metadata.name) == (1, "g")
    bad = await req(backend, "POST", path, gadget(group, "b", {"image": "x", "replicas": 11}))
    assert bad.status == 422
    assert [c["field"] for c in bad.body["details"]["causes"]] == ["spec.replicas"]
    listed = await ok(backend, "GET", f"/apis/{group}/v1/gadgets")
    assert [i["metadata"]["name"] for i in listed["items"]] == ["g"]
    await ok(
        backend,
        "DELETE",
        f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.{group}",
    )


async def test_generated_cel_rule_is_enforced(backend: Backend) -> None:
    group = f"{backend.namespace}.typed.example.com"
    await install_crd(backend, gadget_crd(group))
    path = f"/apis/{group}/v1/namespaces/{backend.namespace}/gadgets"
    spec = {"image": "x", "minSize": 6, "maxSize": 5}
    refused = await req(backend, "POST", path, gadget(group, "c", spec))
    assert refused.status == 422
    assert "minSize must not exceed maxSize" in refused.body["message"]
    with pytest.raises(ValidationError):
        Gadget.model_validate(gadget(group, "c", {"image": "x", "replicas": -1}))


async def test_model_evaluates_its_cel_rules_as_the_servers_do(backend: Backend) -> None:
    """The model refuses what both servers refuse for its CEL Rule, with the same words,
    and accepts what they accept (issue 29, point 8: ``model_validate`` accepted
    ``minSize > maxSize``, which both servers refuse with 422)."""
    group = f"{backend.namespace}.typed.example.com"
    await install_crd(backend, gadget_crd(group))
    path = f"/apis/{group}/v1/namespaces/{backend.namespace}/gadgets"
    bad = gadget(group, "c", {"image": "x", "minSize": 6, "maxSize": 5})
    bad["metadata"]["namespace"] = backend.namespace
    refused = await req(backend, "POST", path, bad)
    assert refused.status == 422
    (cause,) = refused.body["details"]["causes"]
    with pytest.raises(ValidationError) as caught:
        Gadget.model_validate(bad)
    said = str(caught.value)
    assert f"Gadget {backend.namespace}/c: {cause['field']}: {cause['message']}" in said
    good = gadget(group, "d", {"image": "x", "minSize": 5, "maxSize": 5})
    assert Gadget.model_validate(good).spec.min_size == 5
    assert (await req(backend, "POST", path, good)).status == 201
    # read from the server: not checked again (the server did)
    Gadget.from_raw({**bad, "spec": {**bad["spec"]}})


async def test_typed_create_get_and_patch(backend: Backend) -> None:
    """``await Model(...).create(api)`` creates the object and binds the model, so the
    PatchHelper writes it at once; ``Model.get`` reads it back typed."""
    from reconcile_kit import PatchHelper

    group = f"{backend.namespace}.typed.example.com"

    class Gizmo(Gadget, group=group, version="v1", kind="Gadget", plural="gadgets"):
        """Gadget in this test's group."""

    await install_crd(backend, gadget_crd(group))
    with pytest.raises(ValidationError, match="minSize must not exceed maxSize"):
        Gizmo(metadata={"name": "never"}, spec={"image": "x", "min_size": 9})
    made = await Gizmo(metadata={"name": "made"}, spec={"image": "nginx"}).create(
        backend.api, namespace=backend.namespace
    )
    assert made.metadata.uid and made.metadata.namespace == backend.namespace
    assert made.spec.max_surge == "25%" and made.object is not None
    async with PatchHelper(made):
        made.spec.replicas = 3
    read = await Gizmo.get(backend.api, "made", backend.namespace)
    assert isinstance(read, Gizmo) and read.spec.replicas == 3
    assert read.metadata.resource_version == made.metadata.resource_version


# --- the typed examples' checked-in CRDs ------------------------------------------------------


def example_crd(path: Path, group: str) -> dict[str, Any]:
    """An example's checked-in CRD moved into ``group`` (one per test: cluster-scoped)."""
    crd: dict[str, Any] = yaml.safe_load(path.read_text())
    crd["metadata"]["name"] = f"{crd['spec']['names']['plural']}.{group}"
    crd["spec"]["group"] = group
    return crd


@pytest.mark.parametrize(
    ("example", "model"),
    [
        (configmap_generator, configmap_generator.ConfigMapGenerator),
        (ippool, ippool.IPPool),
    ],
    ids=["configmap_generator", "ippool"],
)
async def test_example_crd_accepts_its_samples(
    backend: Backend, example: Any, model: type[CustomResource]
) -> None:
    """An example's checked-in CRD is accepted; its samples are created, and what the server
    stores (defaults applied) reads back as the model's value of the sample."""
    group = f"{backend.namespace}.examples.example.com"
    crd = example_crd(example.CRD_PATH, group)
    await install_crd(backend, crd)
    path = f"/apis/{group}/v1/namespaces/{backend.namespace}/{model.resource.plural}"
    samples = [
        doc
        for doc in yaml.safe_load_all(example.SAMPLES_PATH.read_text())
        if doc and doc["kind"] == model.resource.kind
    ]
    assert samples
    try:
        for doc in samples:
            created = await ok(backend, "POST", path, {**doc, "apiVersion": f"{group}/v1"})
            typed = model.from_raw(created)
            assert typed.metadata.name == doc["metadata"]["name"]
            assert typed.spec == model.model_validate(doc).spec, created
    finally:
        await ok(
            backend,
            "DELETE",
            f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd['metadata']['name']}",
        )


def _causes(reply: Any) -> list[str]:
    return sorted(c.get("field", "") for c in reply.body["details"]["causes"])


async def test_ippool_crd_keeps_the_hand_written_validation(backend: Backend) -> None:
    """The generated IPPool CRD validates as the hand-written one did (required spec.cidr
    of the CIDR pattern, allocations needing pod and namespace, metav1.Condition's rules),
    and the model refuses the same objects; allocations are a map, so merge patches add
    and remove single entries."""
    group = f"{backend.namespace}.examples.example.com"
    crd = example_crd(ippool.CRD_PATH, group)
    await install_crd(backend, crd)
    ns = backend.namespace
    path = f"/apis/{group}/v1/namespaces/{ns}/ippools"

    def pool(name: str, **fields: Any) -> dict[str, Any]:
        return {"apiVersion": f"{group}/v1", "kind": "IPPool", "metadata": {"name": name}, **fields}

    try:
        created = await ok(backend, "POST", path, pool("lab", spec={"cidr": "10.20.0.0/29"}))
        assert created["spec"] == {"cidr": "10.20.0.0/29", "releaseTerminating": False}
        for name, doc, fields in [
            ("nomask", pool("nomask", spec={"cidr": "10.20.0.0"}), ["spec.cidr"]),
            ("word", pool("word", spec={"cidr": "lab/24"}), ["spec.cidr"]),
            ("nocidr", pool("nocidr", spec={}), ["spec.cidr"]),
            ("nospec", pool("nospec"), ["spec"]),
        ]:
            refused = await req(backend, "POST", path, doc)
            assert (refused.status, _causes(refused)) == (422, fields), (name, refused.body)
            with pytest.raises(ValidationError):
                ippool.IPPool.model_validate(doc)
        # a host address is a valid shape: the reconcile reports it (InvalidCIDR)
        await ok(backend, "POST", path, pool("host", spec={"cidr": "10.20.0.1/24"}))

        status = f"{path}/lab/status"

        async def patch_status(body: dict[str, Any]) -> Any:
            return await req(backend, "PATCH", status, {"status": body}, content_type=MERGE)

        def held(pod: str) -> dict[str, str]:
            return {"pod": pod, "namespace": ns}

        assert (await patch_status({"allocations": {"10.20.0.1": held("a")}})).status == 200
        both = await patch_status({"allocations": {"10.20.0.2": held("b")}})
        assert both.body["status"]["allocations"] == {
            "10.20.0.1": held("a"),
            "10.20.0.2": held("b"),
        }
        one = await patch_status({"allocations": {"10.20.0.1": None}})
        typed = ippool.IPPool.from_raw(one.body)
        assert typed.status is not None
        assert typed.status.allocations == {"10.20.0.2": ippool.Allocation(pod="b", namespace=ns)}
        gone = await patch_status({"allocations": None})
        assert gone.status == 200 and "allocations" not in (gone.body.get("status") or {})

        refused = await patch_status({"allocations": {"10.20.0.3": {"pod": "c"}}})
        assert refused.status == 422, refused.body
        with pytest.raises(ValidationError):
            ippool.IPPoolStatus.model_validate({"allocations": {"10.20.0.3": {"pod": "c"}}})

        ready = {
            "type": "Ready",
            "status": "True",
            "reason": "Reconciled",
            "message": "0 of 6 addresses allocated",
            "lastTransitionTime": "2026-01-02T03:04:05Z",
            "observedGeneration": 1,
        }
        accepted = await patch_status({"conditions": [ready]})
        assert accepted.status == 200, accepted.body
        typed = ippool.IPPool.from_raw(accepted.body)
        assert typed.status is not None and typed.status.conditions[0].reason == "Reconciled"
        for change in (
            {"reason": ""},
            {"reason": "not a reason"},
            {"type": "not a type!"},
            {"lastTransitionTime": None},
            {"message": None},
        ):
            condition = {k: v for k, v in {**ready, **change}.items() if v is not None}
            refused = await patch_status({"conditions": [condition]})
            assert refused.status == 422, (change, refused.body)
            with pytest.raises(ValidationError):
                ippool.IPPoolStatus.model_validate({"conditions": [condition]})
    finally:
        await ok(
            backend,
            "DELETE",
            f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd['metadata']['name']}",
        )


# --- property: the model accepts exactly what kube-apiserver accepts --------------------

# values on and around each constraint of GadgetSpec, most of them valid
_SPECS = st.fixed_dictionaries(
    {"image": st.sampled_from(["nginx", "", "a" * 40, "a" * 41])},
    optional={
        "replicas": st.sampled_from([-1, 0, 1, 10, 11]),
        "ratio": st.sampled_from([0, 1e-9, 0.5, 0.999, 1, None]),
        "tier": st.sampled_from(["frontend", "backend", "middle"]),
        "ports": st.lists(
            st.fixed_dictionaries(
                {
                    "name": st.sampled_from(["a", "b", "web-1", "A", "x" * 15, "x" * 16]),
                    "containerPort": st.sampled_from([0, 1, 8080, 65535, 65536]),
                },
                optional={"protocol": st.sampled_from(["TCP", "UDP", "SCTP"])},
            ),
            max_size=5,
        ),
        "tags": st.lists(st.sampled_from(["x", "y", "z"]), max_size=3),
        "selector": st.dictionaries(st.sampled_from(["a", "b"]), st.sampled_from(["1", "2"])),
        "maxSurge": st.sampled_from([0, 3, "25%"]),
        "extra": st.dictionaries(st.sampled_from(["k", "l"]), st.integers(0, 3)),
    },
)


def _model_accepts(doc: dict[str, Any]) -> bool:
    try:
        Gadget.model_validate(doc)
    except ValidationError:
        return False
    return True


def test_model_accepts_what_kube_apiserver_accepts(request: pytest.FixtureRequest) -> None:
    """Random specs around each constraint: the model accepts one if and only if the
    embedded server and kube-apiserver accept it with the generated CRD, and the object
    they store (defaults applied) reads back as the model's value."""
    if "real" not in selected_backends(request.config):
        pytest.skip("compares with kube-apiserver: run with --backend real or both")
    plane: ControlPlane = request.getfixturevalue("control_plane")
    group = f"p{secrets.token_hex(3)}.typed.example.com"
    namespace = f"typed-{secrets.token_hex(3)}"
    counter = iter(range(100_000))

    async def check(spec: dict[str, Any]) -> None:
        name = f"g{next(counter)}"
        doc = gadget(group, name, spec)
        expected = _model_accepts(doc)
        async with APIServer(garbage_collection=False) as embedded:
            for server in (embedded, plane):
                api = await kr8s.asyncio.Api(kubeconfig=server.kubeconfig, bypass_factory=True)
                try:
                    backend = Backend("real", server, api, namespace)
                    await _ensure(backend, group)
                    path = f"/apis/{group}/v1/namespaces/{namespace}/gadgets"
                    status, body, _ = await send(
                        api, "POST", path, doc, "application/json", None, None
                    )
                    assert (status == 201) == expected, (server.url, spec, status, body)
                    if expected:
                        stored = Gadget.model_validate(body)
                        assert stored.spec == Gadget.model_validate(doc).spec, body
                finally:
                    await api._session.aclose()  # type: ignore[union-attr]

    @settings(
        max_examples=int(os.environ.get("RECONCILE_KIT_TYPED_EXAMPLES", "40")),
        deadline=None,
        suppress_health_check=list(HealthCheck),
        database=None,
    )
    @given(_SPECS)
    def run(spec: dict[str, Any]) -> None:
        asyncio.run(check(spec))

    run()


async def _ensure(backend: Backend, group: str) -> None:
    """The namespace and the Gadget CRD in ``group`` on this server (created once)."""
    await req(backend, "POST", "/api/v1/namespaces", {"metadata": {"name": backend.namespace}})
    found = await req(
        backend, "GET", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.{group}"
    )
    if found.status != 200:
        await install_crd(backend, gadget_crd(group))
