"""The manager's webhook server called by the API server (issue 17): validating and
mutating handlers, CRD conversion between typed versions, self-registration by the
Manager. Each test registers the server's configurations with the backend and sends
ordinary requests to the API server, which calls the webhooks over HTTPS."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

from pydantic import Field

from reconcile_kit import Manager
from reconcile_kit.testing import eventually, install_crds
from reconcile_kit.testing.backends import Backend
from reconcile_kit.typed import CustomResource, KubeModel
from reconcile_kit.webhooks import (
    AdmissionRequest,
    Denied,
    SelfSignedCertificates,
    WebhookServer,
    register,
    unregister,
)

from .kube import MERGE, install_crd, ok, req

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
ADMISSION = "/apis/admissionregistration.k8s.io/v1"


def gadget_models(group: str) -> tuple[type[CustomResource], type[CustomResource]]:
    """Gadget v1 (``spec.size``, stored) and v2 (``spec.replicas``) in ``group``."""

    class SpecV1(KubeModel):
        size: Annotated[int, Field(ge=0)] = 1
        color: str | None = None

    class SpecV2(KubeModel):
        replicas: Annotated[int, Field(ge=0)] = 1
        color: str | None = None

    class GadgetV1(CustomResource, group=group, version="v1", kind="Gadget", storage=True):
        spec: SpecV1

    class GadgetV2(CustomResource, group=group, version="v2", kind="Gadget", storage=False):
        spec: SpecV2

    return GadgetV1, GadgetV2


def server() -> WebhookServer:
    return WebhookServer(
        host="127.0.0.1",
        port=0,
        certificates=SelfSignedCertificates(["127.0.0.1"]),
        register_host="127.0.0.1",
        name="rk-test",
    )


@asynccontextmanager
async def registered(backend: Backend, webhooks: WebhookServer) -> AsyncIterator[None]:
    """Serve ``webhooks`` with configurations named after the test and registered."""
    webhooks.name = backend.unique("rk-webhooks")
    async with webhooks:
        await register(backend.api, webhooks, webhooks.url)
        for model in webhooks.converters.models():
            await storage_swapped(backend, model)
        try:
            yield
        finally:
            await unregister(backend.api, webhooks)


async def storage_swapped(backend: Backend, model: type[CustomResource]) -> None:
    """After a CRD's conversion changes, kube-apiserver rebuilds its storage: requests
    answer 503 "apiserver is shutting down" for a moment. Wait until a LIST of every
    version answers."""
    info = model.resource

    async def served() -> bool:
        for version in ("v1", "v2"):
            path = f"/apis/{info.group}/{version}/namespaces/{backend.namespace}/{info.plural}"
            if (await req(backend, "GET", path)).status != 200:
                return False
        return True

    await eventually(served, 10.0, interval=0.05, what="the CRD's storage rebuilt")


async def install(backend: Backend, model: type[CustomResource]) -> str:
    crd = model.crd()
    await install_crd(backend, crd)
    return f"/apis/{model.resource.group}/v1/namespaces/{backend.namespace}/gadgets"


def renaming_converters(
    webhooks: WebhookServer, v1: type[CustomResource], v2: type[CustomResource]
) -> None:
    """Convert Gadgets between ``v1`` (``spec.size``) and ``v2`` (``spec.replicas``)."""

    @webhooks.converter(v1, v2)
    def up(old: Any) -> Any:
        return v2(metadata=old.metadata, spec={"replicas": old.spec.size})

    @webhooks.converter(v2, v1)
    def down(new: Any) -> Any:
        return v1(metadata=new.metadata, spec={"size": new.spec.replicas})


def gadget(group: str, name: str, version: str = "v1", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{group}/{version}",
        "kind": "Gadget",
        "metadata": {"name": name},
        "spec": spec,
    }


async def test_validating_webhook_denies_and_warns(backend: Backend) -> None:
    group = f"{backend.namespace}.hooks.example.com"
    v1, _ = gadget_models(group)
    path = await install(backend, v1)
    webhooks = server()
    seen: list[AdmissionRequest] = []

    @webhooks.validating(v1, operations=("CREATE", "UPDATE", "DELETE"))
    async def check(obj: Any, request: AdmissionRequest) -> list[str] | None:
        seen.append(request)
        if request.operation == "DELETE":
            return None
        if obj.spec.size > 10:
            raise Denied("spec.size: at most 10", code=422, reason="Invalid")
        return ["spec.size 0 runs nothing"] if obj.spec.size == 0 else None

    async with registered(backend, webhooks):
        refused = await req(backend, "POST", path, gadget(group, "big", size=20))
        assert refused.status == 422, refused.body
        name = f"vgadget.{group}"
        assert refused.body["message"] == (
            f'admission webhook "{name}" denied the request: spec.size: at most 10'
        )
        assert refused.body["reason"] == "Invalid"
        warned = await req(backend, "POST", path, gadget(group, "empty", size=0))
        assert warned.status == 201, warned.body
        assert warned.headers.get("warning") == '299 - "spec.size 0 runs nothing"'
        await ok(backend, "DELETE", f"{path}/empty")
    assert (await req(backend, "GET", f"{path}/big")).status == 404
    assert [r.operation for r in seen] == ["CREATE", "CREATE", "DELETE"]
    created = seen[1]
    assert created.namespace == backend.namespace and created.name == "empty"
    assert created.kind == {"group": group, "version": "v1", "kind": "Gadget"}
    assert created.resource == {"group": group, "version": "v1", "resource": "gadgets"}
    assert created.old_object is None and created.object is not None
    assert created.options is not None and created.options["kind"] == "CreateOptions"
    assert seen[2].object is None and seen[2].old_object is not None


async def test_mutating_webhook_changes_the_stored_object(backend: Backend) -> None:
    group = f"{backend.namespace}.hooks.example.com"
    v1, _ = gadget_models(group)
    path = await install(backend, v1)
    webhooks = server()

    @webhooks.mutating(v1)
    def default_color(obj: Any, request: AdmissionRequest) -> None:
        if obj.spec.color is None:
            obj.spec.color = "blue"
        obj.metadata.labels = {**(obj.metadata.labels or {}), "mutated": request.operation}

    async with registered(backend, webhooks):
        created = await ok(backend, "POST", path, gadget(group, "g1", size=2))
        assert created["spec"] == {"size": 2, "color": "blue"}
        assert created["metadata"]["labels"] == {"mutated": "CREATE"}
        patched = await ok(
            backend, "PATCH", f"{path}/g1", {"spec": {"color": None}}, content_type=MERGE
        )
        assert patched["spec"]["color"] == "blue"
        assert patched["metadata"]["labels"] == {"mutated": "UPDATE"}
    stored = await ok(backend, "GET", f"{path}/g1")
    assert stored["spec"] == {"size": 2, "color": "blue"}


async def test_failing_and_slow_handlers_are_refused_with_a_clear_message(
    backend: Backend,
) -> None:
    group = f"{backend.namespace}.hooks.example.com"
    v1, _ = gadget_models(group)
    path = await install(backend, v1)
    webhooks = server()
    never = asyncio.Event()

    @webhooks.validating(v1, timeout_seconds=2)
    async def check(obj: Any, request: AdmissionRequest) -> None:
        if obj.metadata.name == "slow":
            await never.wait()
        raise RuntimeError("boom")

    async with registered(backend, webhooks):
        failed = await req(backend, "POST", path, gadget(group, "bad"))
        assert failed.status == 500, failed.body
        assert failed.body["message"].endswith(
            f"webhook vgadget.{group} failed on Gadget {backend.namespace}/bad: RuntimeError: boom"
        )
        slow = await req(backend, "POST", path, gadget(group, "slow"))
        assert slow.status == 500, slow.body
        assert "the handler did not answer for Gadget" in slow.body["message"]
        assert "within 1 s" in slow.body["message"]


async def test_conversion_between_typed_versions(backend: Backend) -> None:
    group = f"{backend.namespace}.hooks.example.com"
    v1, v2 = gadget_models(group)
    await install(backend, v1)
    webhooks = server()

    def spec(model: Any, **renamed: Any) -> dict[str, Any]:
        color = {"color": model.spec.color} if model.spec.color is not None else {}
        return {**renamed, **color}

    @webhooks.converter(v1, v2)
    def up(old: Any) -> Any:
        return v2(metadata=old.metadata, spec=spec(old, replicas=old.spec.size))

    @webhooks.converter(v2, v1)
    def down(new: Any) -> Any:
        return v1(metadata=new.metadata, spec=spec(new, size=new.spec.replicas))

    base = f"/apis/{group}/{{}}/namespaces/{backend.namespace}/gadgets"
    async with registered(backend, webhooks):
        crd = await ok(backend, "GET", f"{CRDS}/gadgets.{group}")
        assert crd["spec"]["conversion"]["strategy"] == "Webhook"
        await ok(backend, "POST", base.format("v1"), gadget(group, "old", size=3, color="red"))
        seen = await ok(backend, "GET", base.format("v2") + "/old")
        assert seen["apiVersion"] == f"{group}/v2"
        assert seen["spec"] == {"replicas": 3, "color": "red"}
        await ok(backend, "POST", base.format("v2"), gadget(group, "new", "v2", replicas=5))
        stored = await ok(backend, "GET", base.format("v1") + "/new")
        assert stored["spec"] == {"size": 5}
        listed = await ok(backend, "GET", base.format("v2"))
        assert sorted(i["spec"]["replicas"] for i in listed["items"]) == [3, 5]
    crd = await ok(backend, "GET", f"{CRDS}/gadgets.{group}")
    assert crd["spec"]["conversion"] == {"strategy": "None"}


async def test_manager_serves_registers_and_removes_its_webhooks(backend: Backend) -> None:
    group = f"{backend.namespace}.hooks.example.com"
    v1, _ = gadget_models(group)
    path = await install(backend, v1)
    webhooks = server()
    webhooks.name = backend.unique("rk-manager")

    @webhooks.validating(v1)
    def check(obj: Any, request: AdmissionRequest) -> None:
        raise Denied("no gadgets today")

    manager = Manager(backend.api, webhooks=webhooks, health_port=0, handle_signals=False)
    config = f"{ADMISSION}/validatingwebhookconfigurations/{webhooks.name}-validating"
    running = asyncio.create_task(manager.run())
    try:
        await eventually(manager.ready, 10.0, what="manager ready")
        registered = await ok(backend, "GET", config)
        assert registered["webhooks"][0]["clientConfig"]["url"] == (
            f"{webhooks.url}/validate-{group.replace('.', '-')}-v1-gadget"
        )
        refused = await req(backend, "POST", path, gadget(group, "g"))
        assert refused.status == 403, refused.body
        assert refused.body["message"].endswith("denied the request: no gadgets today")
    finally:
        manager.stop()
        await asyncio.wait_for(running, 30.0)
    assert (await req(backend, "GET", config)).status == 404
    assert not webhooks.serving
    await ok(backend, "POST", path, gadget(group, "g"))


async def test_manager_registers_the_conversion_of_a_crd_its_on_start_hook_installs(
    backend: Backend, caplog: Any
) -> None:
    group = f"{backend.namespace}.hooks.example.com"
    v1, v2 = gadget_models(group)
    webhooks = server()
    webhooks.name = backend.unique("rk-hooked")
    renaming_converters(webhooks, v1, v2)
    manager = Manager(backend.api, webhooks=webhooks, health_port=0, handle_signals=False)

    @manager.on_start
    async def crds(api: Any) -> None:
        await install_crds(api, v1)

    caplog.set_level(logging.INFO)
    running = asyncio.create_task(manager.run())
    try:
        await eventually(lambda: running.done() or manager.ready(), 10.0, what="started")
        assert not running.done(), running.exception()
        crd = await ok(backend, "GET", f"{CRDS}/gadgets.{group}")
        webhook = crd["spec"]["conversion"]["webhook"]
        assert webhook["clientConfig"]["url"] == f"{webhooks.url}/convert"
        await storage_swapped(backend, v1)
        base = f"/apis/{group}/{{}}/namespaces/{backend.namespace}/gadgets"
        await ok(backend, "POST", base.format("v1"), gadget(group, "g", size=3))
        seen = await ok(backend, "GET", base.format("v2") + "/g")
        assert seen["spec"] == {"replicas": 3}
    finally:
        manager.stop()
        await asyncio.wait_for(running, 30.0)
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
    crd = await ok(backend, "GET", f"{CRDS}/gadgets.{group}")
    assert crd["spec"]["conversion"] == {"strategy": "None"}


async def test_unregister_after_the_crd_and_configurations_are_gone(backend: Backend) -> None:
    group = f"{backend.namespace}.hooks.example.com"
    v1, v2 = gadget_models(group)
    await install(backend, v1)
    webhooks = server()
    webhooks.name = backend.unique("rk-gone")
    renaming_converters(webhooks, v1, v2)

    @webhooks.validating(v1)
    def check(obj: Any, request: AdmissionRequest) -> None:
        pass

    crd = f"{CRDS}/gadgets.{group}"
    async with webhooks:
        await register(backend.api, webhooks, webhooks.url)
        await ok(backend, "DELETE", crd)

        async def deleted() -> bool:
            return (await req(backend, "GET", crd)).status == 404

        await eventually(deleted, 10.0, interval=0.05, what="the CRD deleted")
        await unregister(backend.api, webhooks)  # the CRD is gone
        await unregister(backend.api, webhooks)  # and now the configurations too


async def test_conversion_failures_as_the_api_server_reports_them(backend: Backend) -> None:
    group = f"{backend.namespace}.hooks.example.com"
    v1, v2 = gadget_models(group)
    await install(backend, v1)
    webhooks = server()

    @webhooks.converter(v1, v2)
    def up(old: Any) -> Any:
        if old.spec.size == 13:
            raise ValueError("unlucky")
        return v2(metadata=old.metadata, spec={"replicas": old.spec.size})

    @webhooks.converter(v2, v1)
    def down(new: Any) -> Any:
        return v1(metadata=new.metadata, spec={"size": new.spec.replicas})

    base = f"/apis/{group}/{{}}/namespaces/{backend.namespace}/gadgets"
    async with registered(backend, webhooks):
        await ok(backend, "POST", base.format("v1"), gadget(group, "bad", size=13))
        await ok(backend, "POST", base.format("v1"), gadget(group, "good", size=2))
        failed = await req(backend, "GET", base.format("v2") + "/bad")
        listed = await req(backend, "GET", base.format("v2"))
        patched = await req(
            backend,
            "PATCH",
            base.format("v2") + "/good",
            {"spec": {"replicas": 4}},
            content_type=MERGE,
        )
        stored = await ok(backend, "GET", base.format("v1") + "/good")
    why = f"conversion webhook for {group}/v1, Kind=Gadget failed: "
    for reply in (failed, listed):
        assert reply.status == 500, reply.body
        assert reply.body == {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": why + "converter failed: ValueError: unlucky",
            "code": 500,
        }
    assert patched.status == 200, patched.body
    assert patched.body["apiVersion"] == f"{group}/v2"
    assert patched.body["spec"] == {"replicas": 4}
    versions = [entry["apiVersion"] for entry in patched.body["metadata"]["managedFields"]]
    assert versions == [f"{group}/v1", f"{group}/v2"]
    assert stored["spec"] == {"size": 4}
