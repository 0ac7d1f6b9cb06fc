"""Field selectors of the built-in kinds with field labels of their own: which labels each
kind's conversion accepts (a Pod's ``spec.host`` alias, none but its own for Nodes and
Namespaces) and the values it matches (numbers and booleans as text, defaults included,
an Event's ``source`` falling back to its reporting component); kube-apiserver's
pkg/apis/*/conversion.go and pkg/registry/*/strategy.go ``ToSelectableFields``."""

from __future__ import annotations

from typing import Any

from reconcile_kit.testing.backends import Backend

from .kube import MERGE, ok, req

CONTAINERS = {"containers": [{"name": "c", "image": "x"}]}


async def names(backend: Backend, path: str, selector: str) -> list[str] | tuple[int, str]:
    """The selected objects' names, or the refusal's status and message."""
    reply = await req(backend, "GET", path, params={"fieldSelector": selector})
    if reply.status != 200:
        return reply.status, reply.body["message"]
    return sorted(item["metadata"]["name"] for item in reply.body["items"])


async def test_pod_field_labels(backend: Backend) -> None:
    pods = f"/api/v1/namespaces/{backend.namespace}/pods"
    spec = {**CONTAINERS, "nodeName": "n1", "hostNetwork": True}
    await ok(backend, "POST", pods, {"metadata": {"name": "p1"}, "spec": spec})
    await ok(backend, "POST", pods, {"metadata": {"name": "p2"}, "spec": CONTAINERS})
    status = {"status": {"podIP": "10.0.0.1", "podIPs": [{"ip": "10.0.0.1"}]}}
    await ok(backend, "PATCH", f"{pods}/p2/status", status, content_type=MERGE)
    expected: dict[str, Any] = {
        "spec.host=n1": ["p1"],  # converted to spec.nodeName
        "spec.hostNetwork=false": ["p2"],  # unset reads "false"
        "spec.hostNetwork=true": ["p1"],
        "status.podIP=10.0.0.1": ["p2"],
        "status.podIPs=10.0.0.1": [],  # accepted, but not in the field set: always ""
        "status.podIPs=": ["p1", "p2"],
        "spec.nodeName=,spec.hostNetwork!=true": ["p2"],
        "spec.containers=x": (400, "field label not supported: spec.containers"),
    }
    for selector, want in expected.items():
        assert await names(backend, pods, selector) == want, selector


async def test_event_source_and_events_v1_labels(backend: Backend) -> None:
    events = f"/api/v1/namespaces/{backend.namespace}/events"
    involved = {"kind": "Pod", "name": "p", "namespace": backend.namespace, "apiVersion": "v1"}
    common = {"involvedObject": involved, "reason": "R", "type": "Normal"}
    kubelet = {"metadata": {"name": "e1"}, **common, "source": {"component": "kubelet"}}
    await ok(backend, "POST", events, kubelet)
    reported = {"reportingComponent": "ctl", "reportingInstance": "i"}
    await ok(backend, "POST", events, {"metadata": {"name": "e2"}, **common, **reported})
    expected: dict[str, Any] = {
        "source=kubelet": ["e1"],
        "source=ctl": ["e2"],  # no source.component: the reporting component
        "source=": [],
        "reportingComponent=": ["e1"],
        "involvedObject.apiVersion=v1": ["e1", "e2"],
        "source.component=kubelet": (400, "field label not supported: source.component"),
    }
    for selector, want in expected.items():
        assert await names(backend, events, selector) == want, selector
    v1 = f"/apis/events.k8s.io/v1/namespaces/{backend.namespace}/events"
    event = {
        "metadata": {"name": "e3"},
        "eventTime": "2024-01-01T00:00:00.000000Z",
        "action": "A",
        "reason": "R",
        "type": "Normal",
        "regarding": {**involved, "fieldPath": "spec"},
        "reportingController": "ctl",
        "reportingInstance": "i",
    }
    await ok(backend, "POST", v1, event)
    for selector in (
        "regarding.apiVersion=v1",
        "regarding.fieldPath=spec",
        "regarding.resourceVersion=",
        "reportingController=ctl",
    ):
        assert "e3" in await names(backend, v1, selector), selector
    assert await names(backend, v1, "source=ctl") == (400, "field label not supported: source")


async def test_cluster_scoped_field_labels(backend: Backend) -> None:
    """Nodes, Namespaces and CertificateSigningRequests refuse ``metadata.namespace``."""
    prefix = backend.unique("n")
    try:
        await _nodes_select_by_unschedulable(backend, prefix)
    finally:  # cluster-scoped: they would outlive the test on the shared real backend
        for suffix in ("a", "b"):
            await req(backend, "DELETE", f"/api/v1/nodes/{prefix}-{suffix}")
    refused = (400, "field label not supported: metadata.namespace")
    for path in (
        "/api/v1/nodes",
        "/api/v1/namespaces",
        "/apis/certificates.k8s.io/v1/certificatesigningrequests",
    ):
        assert await names(backend, path, "metadata.namespace=x") == refused, path
    assert await names(backend, "/api/v1/nodes", "spec.podCIDR=x") == (
        400,
        "field label not supported: spec.podCIDR",
    )
    csrs = "/apis/certificates.k8s.io/v1/certificatesigningrequests"
    assert await names(backend, csrs, f"spec.signerName={prefix}") == []


async def _nodes_select_by_unschedulable(backend: Backend, prefix: str) -> None:
    await ok(backend, "POST", "/api/v1/nodes", {"metadata": {"name": f"{prefix}-a"}})
    cordoned = {"metadata": {"name": f"{prefix}-b"}, "spec": {"unschedulable": True}}
    await ok(backend, "POST", "/api/v1/nodes", cordoned)
    for value, want in (("false", f"{prefix}-a"), ("true", f"{prefix}-b")):
        found = await names(backend, "/api/v1/nodes", f"spec.unschedulable={value}")
        assert isinstance(found, list)
        assert [name for name in found if name.startswith(prefix)] == [want]


async def test_counts_select_as_text_with_zero_for_unset(backend: Backend) -> None:
    namespace = backend.namespace
    jobs = f"/apis/batch/v1/namespaces/{namespace}/jobs"
    template = {"spec": {"restartPolicy": "Never", **CONTAINERS}}
    await ok(backend, "POST", jobs, {"metadata": {"name": "j"}, "spec": {"template": template}})
    assert await names(backend, jobs, "status.successful=0") == ["j"]  # status.succeeded
    assert await names(backend, jobs, "status.successful=") == []
    controllers = f"/api/v1/namespaces/{namespace}/replicationcontrollers"
    pod = {"metadata": {"labels": {"a": "b"}}, "spec": CONTAINERS}
    spec = {"replicas": 0, "selector": {"a": "b"}, "template": pod}
    await ok(backend, "POST", controllers, {"metadata": {"name": "rc"}, "spec": spec})
    assert await names(backend, controllers, "status.replicas=0") == ["rc"]
