"""Where the embedded server differs from kube-apiserver on purpose.

* Garbage collection and the namespace controller belong to kube-controller-manager, which
  a bare control plane (this one, envtest) does not run. The embedded server can run both
  (``APIServer(garbage_collection=True)``, its default, for demos and for tests of
  controllers that rely on them); the ``backend`` fixture turns them off so both backends
  agree. The first test shows what both do without them; the second is embedded-only.
* CRDs: kube-apiserver establishes a new CRD asynchronously and then answers 429
  "storage is (re)initializing" for a moment before serving its resources; the embedded
  server establishes it after ``crd_establish_delay`` (20 ms by default) and serves it at
  once. Clients must wait for Established (tests/conformance/kube.py install_crd does).
* Watch expiry: kube-apiserver serves watches from its watch cache, whose window does not
  shrink on etcd compaction, so ``ControlPlane.compact()`` expires continue tokens but not
  watches; ``APIServer.compact()`` expires both (tests/conformance/test_watch.py provokes
  the real 410 on a control plane started with ``--watch-cache=false``).
* Server-side apply to a custom resource's ``/scale`` that takes over ``replicas``
  (``force=true``): kube-apiserver 1.32 answers 500 ("failed to convert new object ...
  request to convert CR to an invalid group/version: autoscaling/v1"), a bug; the
  embedded server applies it as it does for a Deployment's ``/scale``.
* Pods get ``serviceAccountName: default`` on the embedded server, as a cluster whose
  ServiceAccount admission plugin runs (kind, managed clusters); the bare control plane
  leaves it out.
* Admission webhooks: kube-apiserver starts calling a new configuration's webhooks once its
  informer has seen it (tests/conformance/test_admission_webhooks.py waits for a marker
  webhook); the embedded server from the create on. ``clientConfig.service`` reaches a
  webhook on the embedded server through ``APIServer(webhook_services=...)``; on the bare
  control plane (no kube-proxy) a Service routes nowhere, so that test is embedded-only.
  The embedded server's own controllers write without admission.
* The request log and fault injection (``APIServer.requests``/``faults``) exist only on the
  embedded server; tests that need them are not part of the conformance suite.
"""

from __future__ import annotations

from typing import Any

from reconcile_kit.testing import APIServer
from reconcile_kit.testing.backends import Backend

from .kube import Widgets, ok, req


def owned(name: str, owner: dict[str, Any]) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "name": owner["metadata"]["name"],
                    "uid": owner["metadata"]["uid"],
                }
            ],
        }
    }


async def test_nothing_collects_dependents_or_finishes_namespaces(backend: Backend) -> None:
    path = f"/api/v1/namespaces/{backend.namespace}/configmaps"
    owner = await ok(backend, "POST", path, {"metadata": {"name": "owner"}})
    await ok(backend, "POST", path, owned("child", owner))
    await ok(backend, "DELETE", f"{path}/owner")
    # Background deletion: the owner is gone, its dependent stays (no garbage collector).
    assert (await req(backend, "GET", f"{path}/owner")).status == 404
    assert (await req(backend, "GET", f"{path}/child")).status == 200
    name = backend.unique("ns")
    await ok(backend, "POST", "/api/v1/namespaces", {"metadata": {"name": name}})
    await ok(backend, "DELETE", f"/api/v1/namespaces/{name}")
    namespace = await ok(backend, "GET", f"/api/v1/namespaces/{name}")
    assert namespace["status"]["phase"] == "Terminating"  # and stays so


async def test_embedded_garbage_collection_when_enabled() -> None:
    """Embedded only (no ``backend``): kube-apiserver has no garbage collector."""
    async with APIServer(garbage_collection=True) as server:
        api = await server.api()
        backend = Backend("embedded", server, api, "default")
        path = "/api/v1/namespaces/default/configmaps"
        owner = await ok(backend, "POST", path, {"metadata": {"name": "owner"}})
        await ok(backend, "POST", path, owned("child", owner))
        await ok(backend, "DELETE", f"{path}/owner")
        await server.settled()
        assert (await req(backend, "GET", f"{path}/child")).status == 404
        await api._session.aclose()


async def test_forced_apply_to_custom_resource_scale(backend: Backend, widgets: Widgets) -> None:
    from .kube import APPLY

    doc = widgets.widget(replicas=2)
    await ok(
        backend,
        "PATCH",
        f"{widgets.path}/w1",
        doc,
        content_type=APPLY,
        params={"fieldManager": "one"},
    )
    scale = {
        "apiVersion": "autoscaling/v1",
        "kind": "Scale",
        "metadata": {"name": "w1"},
        "spec": {"replicas": 5},
    }
    reply = await req(
        backend,
        "PATCH",
        f"{widgets.path}/w1/scale",
        scale,
        content_type=APPLY,
        params={"fieldManager": "scaler", "force": "true"},
    )
    if backend.real:
        assert reply.status == 500, reply.body
        assert "request to convert CR to an invalid group/version" in reply.body["message"]
    else:
        assert (reply.status, reply.body["spec"]["replicas"]) == (200, 5), reply.body


async def test_schema_errors_of_sibling_properties(backend: Backend, widgets: Widgets) -> None:
    """kube-apiserver's OpenAPI validator ranges over a schema's properties map, so the
    causes for sibling properties come in a random order; the embedded server sorts them by
    field path. Both report the same causes."""
    reply = await req(backend, "POST", widgets.path, widgets.widget(size=0, color="green"))
    assert reply.status == 422, reply.body
    fields = [cause["field"] for cause in reply.body["details"]["causes"]]
    assert sorted(fields) == ["spec.color", "spec.size"]
    if not backend.real:
        assert fields == ["spec.color", "spec.size"]
