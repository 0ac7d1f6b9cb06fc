"""The Website example (a CR owning a Deployment and a Service, children by server-side
apply) on both backends: steady state costs no request; a child controlled by another
object is left alone (issue 14)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import yaml
from reconcile_kit.examples import website

from reconcile_kit import Context, Controller
from reconcile_kit.testing import ControlPlane
from reconcile_kit.testing.backends import Backend

from .kube import MERGE, install_crd, ok, req

_METRIC = re.compile(r"^apiserver_request_total\{(?P<labels>[^}]*)\} (?P<value>\S+)$", re.M)


async def requests_served(backend: Backend, resources: set[str]) -> int:
    """How many requests the server has answered for ``resources`` (the embedded request
    log; kube-apiserver's ``apiserver_request_total``), watches and lists aside."""
    if not backend.real:
        return sum(
            1
            for r in backend.embedded.requests
            if r.resource in resources and r.verb not in ("watch", "list")
        )
    plane = backend.server
    assert isinstance(plane, ControlPlane)
    # loopback to the test's own control plane: its admin token, no CA check needed
    async with httpx.AsyncClient(verify=False) as client:
        reply = await client.get(
            f"{plane.url}/metrics", headers={"Authorization": f"Bearer {plane.token}"}
        )
    total = 0
    for match in _METRIC.finditer(reply.text):
        labels = dict(re.findall(r'(\w+)="([^"]*)"', match["labels"]))
        if labels.get("resource") in resources and labels.get("verb") not in ("WATCH", "LIST"):
            total += int(float(match["value"]))
    return total


async def ensure_crd(backend: Backend) -> None:
    found = await req(
        backend,
        "GET",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/websites.examples.reconcile-kit.io",
    )
    if found.status != 200:
        await install_crd(backend, yaml.safe_load(website.CRD_PATH.read_text()))


@asynccontextmanager
async def operator(backend: Backend, runs: list[str]) -> AsyncIterator[Controller]:
    ctrl = website.controller(backend.api, namespace=backend.namespace)

    async def counted(site: Any, ctx: Context) -> None:
        runs.append(site.metadata.name)
        await website.reconcile(site, ctx)

    task = asyncio.create_task(ctrl.run(counted))
    try:
        yield ctrl
    finally:
        await ctrl.shutdown(5)
        await asyncio.wait_for(task, 10)


def site(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "examples.reconcile-kit.io/v1",
        "kind": "Website",
        "metadata": {"name": name},
        "spec": {"image": "nginx:1.27", **spec},
    }


async def test_website_converges_then_sends_nothing(backend: Backend) -> None:
    await ensure_crd(backend)
    ns = backend.namespace
    sites = f"/apis/examples.reconcile-kit.io/v1/namespaces/{ns}/websites"
    runs: list[str] = []
    async with operator(backend, runs) as ctrl:
        await ok(backend, "POST", sites, site("shop", replicas=2, port=8080))

        async def progressing() -> bool:
            body = (await req(backend, "GET", f"{sites}/shop")).body
            conditions = {c["type"]: c for c in (body.get("status") or {}).get("conditions", [])}
            ready = conditions.get("Ready") or {}
            return (
                ready.get("reason") == "Progressing"
                and body["status"].get("observedGeneration") == body["metadata"]["generation"]
            )

        assert await ctrl.wait_reconciled(progressing, 20), "the Website never converged"
        deployment = (
            await req(backend, "GET", f"/apis/apps/v1/namespaces/{ns}/deployments/shop")
        ).body
        container = deployment["spec"]["template"]["spec"]["containers"][0]
        assert (container["image"], container["imagePullPolicy"]) == ("nginx:1.27", "IfNotPresent")
        service = (await req(backend, "GET", f"/api/v1/namespaces/{ns}/services/shop")).body
        assert service["spec"]["ports"][0]["targetPort"] == 8080

        # steady state: a child event (another writer's label on the Service) reconciles
        # the Website, and the reconcile sends nothing
        before = await requests_served(backend, {"deployments", "services", "websites"})
        seen = len(runs)
        await ok(
            backend,
            "PATCH",
            f"/api/v1/namespaces/{ns}/services/shop",
            {"metadata": {"labels": {"team": "web"}}},
            content_type=MERGE,
        )
        assert await ctrl.wait_reconciled(lambda: len(runs) > seen, 10)
        after = await requests_served(backend, {"deployments", "services", "websites"})
        assert after - before == 1, "only the test's own PATCH: the reconcile sent nothing"

        # a field the operator stops setting goes: replicas=0 keeps, port change rewrites
        await ok(backend, "PATCH", f"{sites}/shop", {"spec": {"port": 9090}}, content_type=MERGE)

        async def moved() -> bool:
            body = (await req(backend, "GET", f"/api/v1/namespaces/{ns}/services/shop")).body
            return body["spec"]["ports"][0]["targetPort"] == 9090

        assert await ctrl.wait_reconciled(moved, 10)
        service = (await req(backend, "GET", f"/api/v1/namespaces/{ns}/services/shop")).body
        assert service["metadata"]["labels"]["team"] == "web"  # the other writer's label stays


async def test_child_controlled_elsewhere_is_left_alone(backend: Backend) -> None:
    await ensure_crd(backend)
    ns = backend.namespace
    owner = await ok(
        backend, "POST", f"/api/v1/namespaces/{ns}/configmaps", {"metadata": {"name": "boss"}}
    )
    ref = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "boss",
        "uid": owner["metadata"]["uid"],
        "controller": True,
    }
    taken = await ok(
        backend,
        "POST",
        f"/api/v1/namespaces/{ns}/services",
        {"metadata": {"name": "blog", "ownerReferences": [ref]}, "spec": {"ports": [{"port": 1}]}},
    )
    runs: list[str] = []
    async with operator(backend, runs) as ctrl:
        sites = f"/apis/examples.reconcile-kit.io/v1/namespaces/{ns}/websites"
        await ok(backend, "POST", sites, site("blog"))

        async def stalled() -> bool:
            body = (await req(backend, "GET", f"{sites}/blog")).body
            conditions = {c["type"]: c for c in (body.get("status") or {}).get("conditions", [])}
            return conditions.get("Stalled", {}).get("reason") == website.OWNED_ELSEWHERE

        assert await ctrl.wait_reconciled(stalled, 20)
        body = (await req(backend, "GET", f"{sites}/blog")).body
        message = next(c for c in body["status"]["conditions"] if c["type"] == "Stalled")["message"]
        assert "ConfigMap boss" in message and "Website blog" in message
    service = (await req(backend, "GET", f"/api/v1/namespaces/{ns}/services/blog")).body
    assert service["metadata"]["resourceVersion"] == taken["metadata"]["resourceVersion"]


async def test_a_list_key_changed_by_another_manager_is_stalled_once(backend: Backend) -> None:
    """Someone edits the Service's port (80 -> 8080: a list-map key): every later apply
    of port 80 is refused with 422 "Duplicate value" (the name repeats). The Website
    reports Stalled naming the field and the other item's owner, once, and the key is not
    retried (issue 29, point 10: it failed and was retried forever, saying nothing)."""
    await ensure_crd(backend)
    ns = backend.namespace
    sites = f"/apis/examples.reconcile-kit.io/v1/namespaces/{ns}/websites"
    service_path = f"/api/v1/namespaces/{ns}/services/db"
    runs: list[str] = []
    async with operator(backend, runs) as ctrl:
        await ok(backend, "POST", sites, site("db", port=5432))

        async def progressing() -> bool:
            body = (await req(backend, "GET", f"{sites}/db")).body
            conditions = {c["type"]: c for c in (body.get("status") or {}).get("conditions", [])}
            return (conditions.get("Ready") or {}).get("reason") == "Progressing"

        assert await ctrl.wait_reconciled(progressing, 20)
        edit = [{"op": "replace", "path": "/spec/ports/0/port", "value": 8080}]
        await ok(
            backend,
            "PATCH",
            service_path,
            edit,
            content_type="application/json-patch+json",
            params={"fieldManager": "kubectl-edit"},
        )

        async def stalled() -> dict[str, Any] | None:
            body = (await req(backend, "GET", f"{sites}/db")).body
            conditions = {c["type"]: c for c in (body.get("status") or {}).get("conditions", [])}
            found = conditions.get("Stalled") or {}
            return found if found.get("reason") == website.CHILD_CONFLICT else None

        assert await ctrl.wait_reconciled(stalled, 20)
        condition = await stalled()
        assert condition is not None
        message = condition["message"]
        assert "Service" in message and "/db" in message
        assert "spec.ports[1].name" in message and '"http"' in message
        assert "kubectl-edit (Update)" in message and '{port: 8080, protocol: "TCP"}' in message
        assert ctrl.stats.errors == 0  # reported, not raised: no retry, no backoff loop
        # a child event reconciles again: the same refusal, nothing new to write
        generation = (await req(backend, "GET", f"{sites}/db")).body["metadata"]
        seen = len(runs)
        await ok(
            backend,
            "PATCH",
            service_path,
            {"metadata": {"labels": {"team": "db"}}},
            content_type=MERGE,
        )
        assert await ctrl.wait_reconciled(lambda: len(runs) > seen, 10)
        after = (await req(backend, "GET", f"{sites}/db")).body
        assert after["metadata"]["resourceVersion"] == generation["resourceVersion"]
        assert ctrl.stats.errors == 0
