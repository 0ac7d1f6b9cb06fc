"""Typed resources: generated CRDs on both backends, and model vs API server validation
(issue 16). The CRDs come from pydantic models (tests/typed/models.py)."""

from __future__ import annotations

import asyncio
import os
import secrets
from typing import Any

import kr8s.asyncio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from reconcile_kit.testing import APIServer, ControlPlane
from reconcile_kit.testing.backends import Backend, selected_backends

from ..kubehttp import send
from ..typed.models import Gadget
from .kube import install_crd, ok, req


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
