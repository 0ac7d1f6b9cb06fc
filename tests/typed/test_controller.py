"""Typed controllers over the wire: Controller(Model), PatchHelper on typed objects, typed
condition helpers, invalid objects reported and skipped (embedded server)."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import kr8s.asyncio
import pytest
from pydantic import ValidationError

from reconcile_kit import Context, Controller, InvalidObjectError, PatchHelper
from reconcile_kit.runtime.config import ControllerConfig
from reconcile_kit.runtime.sources import ReflectorPool
from reconcile_kit.testing import APIServer, eventually
from reconcile_kit.typed import conditions

from ..kubehttp import call
from .models import Gadget, GadgetStatus

GADGETS = "/apis/typed.example.com/v1/namespaces/default/gadgets"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


async def install(kube: kr8s.asyncio.Api, loose: bool = False) -> None:
    """Gadget's generated CRD (``loose``: without the replicas maximum, so that objects the
    model refuses can exist, as after a schema change)."""
    crd = copy.deepcopy(Gadget.crd())
    if loose:
        spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
        del spec["properties"]["replicas"]["maximum"]
    status, body = await call(kube, "POST", CRDS, crd)
    assert status == 201, body

    async def served() -> bool:
        return (await call(kube, "GET", GADGETS))[0] == 200

    await eventually(served, 10, what="gadgets served")


def gadget(name: str, replicas: int) -> dict[str, Any]:
    return {
        "apiVersion": "typed.example.com/v1",
        "kind": "Gadget",
        "metadata": {"name": name},
        "spec": {"image": "nginx", "replicas": replicas},
    }


async def reconcile(obj: Gadget, ctx: Context) -> None:
    assert isinstance(obj, Gadget) and isinstance(obj.spec.replicas, int)
    async with PatchHelper(obj, owned_conditions=("Ready",)):
        if obj.status is None:
            obj.status = GadgetStatus()
        obj.status.ready_replicas = obj.spec.replicas
        conditions.mark_ready(obj, "Reconciled", f"{obj.spec.replicas} ready")


def writes(apiserver: APIServer) -> list[tuple[str, str, str]]:
    return [
        (r.verb, r.name, r.subresource)
        for r in apiserver.requests.writes()
        if r.resource == "gadgets"
    ]


async def test_typed_reconcile_writes_status_once_then_nothing(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    await install(kube)
    ctrl = Controller(
        Gadget,
        api=kube,
        namespace="default",
        config=ControllerConfig(pool=ReflectorPool()),
        resync=0.05,
    )
    task = asyncio.create_task(ctrl.run(reconcile))
    try:
        await call(kube, "POST", GADGETS, gadget("g1", 2))

        async def ready() -> bool:
            body = (await call(kube, "GET", f"{GADGETS}/g1"))[1]
            return (body.get("status") or {}).get("readyReplicas") == 2

        assert await ctrl.wait_reconciled(ready, 10)
        assert writes(apiserver) == [("create", "", ""), ("patch", "g1", "status")]
        body = (await call(kube, "GET", f"{GADGETS}/g1"))[1]
        assert [c["type"] for c in body["status"]["conditions"]] == ["Ready"]
        # resyncs reconcile it again: nothing to send
        seen = ctrl.stats.reconciles
        assert await ctrl.wait_reconciled(lambda: ctrl.stats.reconciles >= seen + 3, 10)
        assert writes(apiserver) == [("create", "", ""), ("patch", "g1", "status")]
        # a spec change: one status patch
        status, _ = await call(
            kube,
            "PATCH",
            f"{GADGETS}/g1",
            {"spec": {"replicas": 3}},
            "application/merge-patch+json",
        )
        assert status == 200

        async def three() -> bool:
            body = (await call(kube, "GET", f"{GADGETS}/g1"))[1]
            return (body.get("status") or {}).get("readyReplicas") == 3

        assert await ctrl.wait_reconciled(three, 10)
        assert writes(apiserver)[2:] == [("patch", "g1", ""), ("patch", "g1", "status")]
    finally:
        await ctrl.shutdown(5)
        await task


async def test_invalid_objects_are_reported_and_skipped(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    await install(kube, loose=True)
    invalid: list[InvalidObjectError] = []

    async def on_invalid(obj: Any, error: InvalidObjectError, ctx: Context) -> None:
        invalid.append(error)

    reconciled: list[str] = []

    async def counting(obj: Gadget, ctx: Context) -> None:
        reconciled.append(obj.metadata.name or "")

    ctrl = Controller(
        Gadget,
        api=kube,
        namespace="default",
        config=ControllerConfig(pool=ReflectorPool()),
        on_invalid=on_invalid,
    )
    task = asyncio.create_task(ctrl.run(counting))
    try:
        await call(kube, "POST", GADGETS, gadget("bad", 100))
        await call(kube, "POST", GADGETS, gadget("good", 1))
        assert await ctrl.wait_reconciled(lambda: "good" in reconciled and bool(invalid), 10)
        assert reconciled == ["good"]
        error = invalid[0]
        assert (error.kind, error.namespace, error.name) == ("Gadget", "default", "bad")
        assert error.problems[0].startswith("spec.replicas: Input should be less than or equal")
        assert ctrl.stats.results.get("invalid") == 1

        async def event_recorded() -> bool:
            status, events = await call(
                kube, "GET", "/apis/events.k8s.io/v1/namespaces/default/events"
            )
            return any(e.get("reason") == "InvalidObject" for e in events.get("items", []))

        assert ctrl.recorder is not None
        await ctrl.recorder.flush()
        await eventually(event_recorded, 10, what="an InvalidObject Event")
    finally:
        await ctrl.shutdown(5)
        await task


async def test_an_object_read_that_does_not_fit_names_itself_and_the_field(
    kube: kr8s.asyncio.Api,
) -> None:
    """``Gadget.get`` of an object the model refuses (a field constraint, not a CEL rule):
    pydantic's ValidationError said "1 validation error for Gadget" and never which one;
    its title names kind, namespace and name as a CEL rule's message does, and pydantic's
    details (field, message, type, input) are kept."""
    await install(kube, loose=True)
    status, body = await call(kube, "POST", GADGETS, gadget("big", 100))
    assert status == 201, body
    with pytest.raises(ValidationError) as caught:
        await Gadget.get(kube, "big", "default")
    said = str(caught.value)
    assert said.startswith("1 validation error for Gadget default/big\nspec.replicas\n"), said
    assert "Input should be less than or equal to 10" in said and "input_value=100" in said
    (problem,) = caught.value.errors()
    assert (problem["type"], problem["loc"], problem["input"]) == (
        "less_than_equal",
        ("spec", "replicas"),
        100,
    )
    with pytest.raises(ValidationError) as caught:
        Gadget.model_validate({"metadata": {"namespace": "ns"}, "spec": {}})
    assert str(caught.value).startswith("1 validation error for Gadget in namespace ns\n")


async def test_unchanged_object_gets_the_same_model_and_costs_no_validation(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    await install(kube)
    seen: list[Gadget] = []

    async def recording(obj: Gadget, ctx: Context) -> None:
        seen.append(obj)
        await reconcile(obj, ctx)

    ctrl = Controller(
        Gadget,
        api=kube,
        namespace="default",
        config=ControllerConfig(pool=ReflectorPool()),
        resync=0.05,
    )
    task = asyncio.create_task(ctrl.run(recording))
    try:
        await call(kube, "POST", GADGETS, gadget("g1", 2))
        assert await ctrl.wait_reconciled(lambda: len(seen) >= 6, 10)
        validations = ctrl.models.validations
        start = len(seen)
        assert await ctrl.wait_reconciled(lambda: len(seen) >= start + 4, 10)
        assert ctrl.models.validations == validations  # resyncs: no validation
        assert all(model is seen[-1] for model in seen[start:])
        assert writes(apiserver) == [("create", "", ""), ("patch", "g1", "status")]
        # another writer changes the object: a new model for the new state
        await call(
            kube,
            "PATCH",
            f"{GADGETS}/g1",
            {"spec": {"replicas": 3}},
            "application/merge-patch+json",
        )
        assert await ctrl.wait_reconciled(lambda: seen[-1].spec.replicas == 3, 10)
        assert seen[-1] is not seen[start]
    finally:
        await ctrl.shutdown(5)
        await task


async def test_a_model_changed_but_not_written_is_never_handed_out_again(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    await install(kube)
    seen: list[tuple[int, list[str]]] = []

    async def careless(obj: Gadget, ctx: Context) -> None:
        seen.append((obj.spec.replicas, list(obj.spec.tags)))
        if len(seen) == 1:
            obj.spec.tags.append("leaked")  # changed in place, never written
            obj.spec.replicas = 9
            raise RuntimeError("failed after changing the model")
        if len(seen) == 2:
            obj.spec.tags.append("leaked again")  # changed, no error, not written either

    ctrl = Controller(
        Gadget,
        api=kube,
        namespace="default",
        config=ControllerConfig(pool=ReflectorPool()),
        resync=0.05,
    )
    task = asyncio.create_task(ctrl.run(careless))
    try:
        body = gadget("g1", 2)
        body["spec"]["tags"] = ["a"]
        await call(kube, "POST", GADGETS, body)
        assert await ctrl.wait_reconciled(lambda: len(seen) >= 4, 10)
        assert seen[:4] == [(2, ["a"])] * 4
        assert ctrl.models.validations == 3  # the two changed models were dropped
        assert writes(apiserver) == [("create", "", "")]
    finally:
        await ctrl.shutdown(5)
        await task
