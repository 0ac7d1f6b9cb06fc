"""ctx.apply's no-request matcher over the wire, on both backends (issue 14): an unchanged
intent sends nothing, a child another writer changed is applied again, a value the server
rewrites (``cpu: 1000m`` stored as ``1``) costs one no-op apply and no new
resourceVersion, and a deleted child's intent is forgotten.

Requests are counted as in ``test_website.py``: the embedded server's request log, or
kube-apiserver's ``apiserver_request_total`` (the only Deployment writer is the test or
the controller: the real backend has no kube-controller-manager)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from kr8s.asyncio.objects import ConfigMap, Deployment

from reconcile_kit import Context, Controller, ObjectRef, set_controller_reference
from reconcile_kit.testing import eventually
from reconcile_kit.testing.backends import Backend

from .kube import MERGE, ok, req
from .test_website import requests_served

DEPLOYMENTS = {"deployments"}


def desired(parent: ConfigMap) -> dict[str, Any]:
    """The Deployment the parent ConfigMap asks for (image and cpu request)."""
    data = parent.raw.get("data") or {}
    labels = {"app": parent.name}
    container = {
        "name": "app",
        "image": data.get("image", "nginx:1.27"),
        "resources": {"requests": {"cpu": data.get("cpu", "100m")}},
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": parent.name, "namespace": parent.namespace},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [container]}},
        },
    }


@asynccontextmanager
async def operator(backend: Backend, runs: list[int]) -> AsyncIterator[Controller]:
    """A controller of ConfigMaps labelled ``matcher=parent`` owning one Deployment each
    (none while the parent says ``paused: "true"``)."""
    ctrl = Controller(
        ConfigMap,
        api=backend.api,
        namespace=backend.namespace,
        label_selector="matcher=parent",
        name="matcher",
    ).owns(Deployment)

    async def reconcile(parent: ConfigMap, ctx: Context) -> None:
        try:
            if (parent.raw.get("data") or {}).get("paused") != "true":
                child = Deployment(desired(parent), api=ctx.api)
                set_controller_reference(parent, child)
                await ctx.apply(child)
        finally:
            runs.append(1)

    task = asyncio.create_task(ctrl.run(reconcile))
    try:
        yield ctrl
    finally:
        await ctrl.shutdown(5)
        await asyncio.wait_for(task, 10)


class Scene:
    """The test's parent ConfigMap and child Deployment paths, and its helpers."""

    def __init__(self, backend: Backend, ctrl: Controller, runs: list[int]) -> None:
        ns = backend.namespace
        self.backend, self.ctrl, self.runs = backend, ctrl, runs
        self.parent = f"/api/v1/namespaces/{ns}/configmaps/web"
        self.child = f"/apis/apps/v1/namespaces/{ns}/deployments/web"
        self.gets = 0  # the test's own GETs of the Deployment (not the controller's)

    async def live(self) -> dict[str, Any]:
        self.gets += 1
        reply = await req(self.backend, "GET", self.child)
        return dict(reply.body) if reply.status == 200 else {}

    async def settled(self) -> None:
        """Wait until the cache holds the live Deployment (or neither has it) and no
        reconcile is pending."""
        reflector = self.ctrl.sources[0].reflector  # the owned Deployments' cache
        assert reflector is not None
        store = reflector.store
        key = ObjectRef("ConfigMap", self.backend.namespace, "web")

        async def caught_up() -> bool:
            live = await self.live()
            cached = store.get(self.backend.namespace, "web") or {}
            version = cached.get("metadata", {}).get("resourceVersion")
            return version == live.get("metadata", {}).get("resourceVersion")  # or both gone

        def idle() -> bool:
            return len(self.ctrl.queue) == 0 and not self.ctrl.queue.is_processing(key)

        await eventually(caught_up, 10.0, interval=0.01, what="cache holds the Deployment")
        await eventually(idle, 10.0, what="no reconcile pending")

    async def served(self) -> int:
        """Requests on Deployments so far, the test's own GETs aside."""
        return await requests_served(self.backend, DEPLOYMENTS) - self.gets

    async def cost_of(self, write: Any) -> int:
        """Requests on Deployments that ``write()`` and the reconciles it causes cost."""
        await self.settled()
        before, seen = await self.served(), len(self.runs)
        await write()
        assert await self.ctrl.wait_reconciled(lambda: len(self.runs) > seen, 10)
        await self.settled()
        return await self.served() - before

    async def touch_parent(self, **data: str) -> None:
        body = {"metadata": {"annotations": {"touched": str(len(self.runs))}}, "data": data}
        await ok(self.backend, "PATCH", self.parent, body, content_type=MERGE)

    async def patch_child(self, body: dict[str, Any]) -> None:
        await ok(self.backend, "PATCH", self.child, body, content_type=MERGE)


async def test_apply_sends_only_what_changed(backend: Backend) -> None:
    runs: list[int] = []
    parent = {"metadata": {"name": "web", "labels": {"matcher": "parent"}}}
    async with operator(backend, runs) as ctrl:
        scene = Scene(backend, ctrl, runs)
        await ok(backend, "POST", f"/api/v1/namespaces/{backend.namespace}/configmaps", parent)
        # the first reconcile, before settled(): with neither the parent's event nor the
        # Deployment seen yet, the cache and the server agree (both without it) and the
        # queue is idle (seen on kube-apiserver in CI)
        assert await ctrl.wait_reconciled(lambda: len(runs) > 0, 10)
        await scene.settled()
        assert len(ctrl.intents) == 1

        # unchanged intent, unchanged child: nothing sent
        assert await scene.cost_of(scene.touch_parent) == 0

        # another writer changes a field the intent sets: one apply puts it back
        image = {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "x"}]}}}}
        assert await scene.cost_of(lambda: scene.patch_child(image)) == 2  # its PATCH + apply
        container = (await scene.live())["spec"]["template"]["spec"]["containers"][0]
        assert container["image"] == "nginx:1.27"

        # another writer's field the intent does not set: the child still holds the intent
        label = {"metadata": {"labels": {"team": "web"}}}
        assert await scene.cost_of(lambda: scene.patch_child(label)) == 1  # its PATCH only

        # a deleted child's intent is forgotten; the next reconcile creates it again, after
        # a GET (the cache does not hold the child, and the apply names a controller: who
        # controls it now? an apply would take it from another controller silently)
        assert await scene.cost_of(lambda: scene.touch_parent(paused="true")) == 0
        await ok(backend, "DELETE", scene.child)
        await eventually(lambda: len(ctrl.intents) == 0, 10.0, what="intent forgotten")
        assert await scene.cost_of(lambda: scene.touch_parent(paused="false")) == 2
        assert len(ctrl.intents) == 1


async def test_a_value_the_server_rewrites_costs_one_no_op_apply(backend: Backend) -> None:
    runs: list[int] = []
    parent = {"metadata": {"name": "web", "labels": {"matcher": "parent"}}}
    async with operator(backend, runs) as ctrl:
        scene = Scene(backend, ctrl, runs)
        await ok(backend, "POST", f"/api/v1/namespaces/{backend.namespace}/configmaps", parent)
        # the first reconcile first: settled() cannot tell "not seen yet" from "idle" (both
        # without the child), and that reconcile's apply counted in the touch's cost once
        # on kube-apiserver in CI
        assert await ctrl.wait_reconciled(lambda: len(runs) > 0, 10)
        # a new intent whose value the server rewrites (1000m -> 1)
        assert await scene.cost_of(lambda: scene.touch_parent(cpu="1000m")) == 1
        container = (await scene.live())["spec"]["template"]["spec"]["containers"][0]
        assert container["resources"]["requests"]["cpu"] == "1"
        assert await scene.cost_of(scene.touch_parent) == 0  # same resourceVersion: skipped
        # after another writer's label the cached "1" does not hold "1000m": one no-op
        # apply (no new resourceVersion), remembered, so the next reconcile sends nothing
        label = {"metadata": {"labels": {"team": "shop"}}}
        version = await _version_after(scene, lambda: scene.patch_child(label))
        assert (await scene.live())["metadata"]["resourceVersion"] == version
        assert await scene.cost_of(scene.touch_parent) == 0


async def _version_after(scene: Scene, write: Any) -> str:
    """The child's resourceVersion right after ``write()``, checking that ``write()`` and
    the reconcile it causes cost two requests (the write and one no-op apply)."""
    versions: list[str] = []

    async def written() -> None:
        await write()
        versions.append((await scene.live())["metadata"]["resourceVersion"])

    assert await scene.cost_of(written) == 2
    return versions[0]
