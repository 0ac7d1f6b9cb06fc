"""The real kubectl (from PATH) against the embedded API server.

Every kubectl run gets a fresh ``--cache-dir`` (kubectl caches discovery and OpenAPI for
hours) and runs as an asyncio subprocess: the server lives in this event loop, so
nothing here may block it. kubectl runs with its default ``--validate=strict``: the
server serves the OpenAPI v3 documents kubectl reads to learn that it validates fields
itself (see reconcile_kit/testing/apiserver/openapi.py).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import kr8s
import pytest
import yaml

from reconcile_kit.testing import APIServer, eventually

from ..kubehttp import call

KUBECTL = shutil.which("kubectl")
pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not on PATH")

WIDGETS = "/apis/example.com/v1/namespaces/default/widgets"
MERGE = "application/merge-patch+json"

CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {
            "plural": "widgets",
            "singular": "widget",
            "kind": "Widget",
            "shortNames": ["wd"],
        },
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "additionalPrinterColumns": [
                    {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
                    {"name": "Color", "type": "string", "jsonPath": ".spec.color"},
                    {"name": "Ready", "type": "boolean", "jsonPath": ".status.ready"},
                    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
                ],
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "properties": {
                                    "size": {"type": "integer"},
                                    "color": {"type": "string"},
                                    "tags": {"type": "array", "items": {"type": "string"}},
                                },
                            },
                            "status": {
                                "type": "object",
                                "properties": {
                                    "ready": {"type": "boolean"},
                                },
                            },
                        },
                    }
                },
            }
        ],
    },
}


def widget(name: str, size: int = 1, color: str = "red", **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": name, **meta},
        "spec": {"size": size, "color": color},
    }


def deployment(image: str = "nginx:1.25", b_value: str = "2") -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        {
                            "name": "web",
                            "image": image,
                            "env": [{"name": "A", "value": "1"}, {"name": "B", "value": b_value}],
                        },
                        {"name": "side", "image": "busybox"},
                    ]
                },
            },
        },
    }


@dataclass
class Ran:
    """A finished kubectl run."""

    code: int
    out: str
    err: str


class Kubectl:
    """Runs kubectl against one APIServer with a cache dir of its own."""

    def __init__(self, server: APIServer, tmp: Path) -> None:
        self.server = server
        self.tmp = tmp
        self.env = {**os.environ, "KUBECONFIG": server.kubeconfig}
        self.runs = 0

    def argv(self, *args: str) -> list[str]:
        self.runs += 1
        cache = self.tmp / f"kubectl-cache-{self.runs}"
        assert KUBECTL is not None
        return [KUBECTL, "--cache-dir", str(cache), *args]

    async def start(self, *args: str) -> asyncio.subprocess.Process:
        return await asyncio.create_subprocess_exec(
            *self.argv(*args),
            env=self.env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )

    async def __call__(self, *args: str, stdin: str | None = None, timeout: float = 30.0) -> Ran:
        proc = await self.start(*args)
        try:
            out, err = await asyncio.wait_for(
                proc.communicate(stdin.encode() if stdin is not None else None), timeout
            )
        except TimeoutError:
            proc.kill()
            await proc.wait()
            pytest.fail(f"kubectl {' '.join(args)} did not finish in {timeout}s")
        assert proc.returncode is not None
        return Ran(proc.returncode, out.decode(), err.decode())

    async def ok(self, *args: str, stdin: str | None = None) -> str:
        ran = await self(*args, stdin=stdin)
        assert ran.code == 0, f"kubectl {' '.join(args)} failed: {ran.err}"
        return ran.out

    def write(self, name: str, *docs: dict[str, Any]) -> str:
        path = self.tmp / name
        path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
        return str(path)


@pytest.fixture
def kubectl(apiserver: APIServer, tmp_path: Path) -> Kubectl:
    return Kubectl(apiserver, tmp_path)


def stored(apiserver: APIServer, key: str, name: str, namespace: str = "default") -> Any:
    return apiserver.cluster.store.get(key, namespace, name)


def table(text: str) -> list[list[str]]:
    """kubectl's human-readable output split into rows of cells (2+ spaces separate)."""
    return [re.split(r"\s{2,}", line.strip()) for line in text.splitlines() if line.strip()]


async def get_path(
    kube: kr8s.asyncio.Api, path: str, **params: str
) -> tuple[int, Any, dict[str, str]]:
    """GET a non-resource path (no redirects followed): status, JSON body, headers."""
    base, _, last = path.rpartition("/")
    async with kube.call_api(
        "GET",
        version="",
        base=base,
        url=last,
        params=params,
        raise_for_status=False,
        follow_redirects=False,
    ) as response:
        body = response.json() if response.content else None
        return response.status_code, body, dict(response.headers)


async def install_crd(kubectl: Kubectl) -> None:
    """kubectl apply the CRD, then wait until it is established (as on a cluster)."""
    await kubectl.ok("apply", "-f", kubectl.write("crd.yaml", CRD))
    await kubectl.ok("wait", "--for=condition=Established", "crd/widgets.example.com")


# --- get ---------------------------------------------------------------------------------


async def test_get_all_namespaces_label_selector_and_json(
    apiserver: APIServer, kube: kr8s.asyncio.Api, kubectl: Kubectl
) -> None:
    await call(kube, "POST", "/api/v1/namespaces", {"metadata": {"name": "team-a"}})
    for ns, name, labels in (
        ("default", "one", {"app": "x"}),
        ("team-a", "two", {"app": "x"}),
        ("team-a", "three", {"app": "y"}),
    ):
        status, body = await call(
            kube,
            "POST",
            f"/api/v1/namespaces/{ns}/configmaps",
            {"metadata": {"name": name, "labels": labels}, "data": {"k": "v", "k2": "v2"}},
        )
        assert status == 201, body

    out = await kubectl.ok("get", "configmaps", "-A", "-l", "app=x", "-o", "json")
    listed = json.loads(out)
    assert listed["kind"] == "List"
    assert sorted((i["metadata"]["namespace"], i["metadata"]["name"]) for i in listed["items"]) == [
        ("default", "one"),
        ("team-a", "two"),
    ]
    assert all(i["data"] == {"k": "v", "k2": "v2"} for i in listed["items"])
    lists = apiserver.requests.filter(verb="list", resource="configmaps")
    assert lists[-1].namespace == "" and lists[-1].query["labelSelector"] == "app=x"

    rows = table(await kubectl.ok("get", "configmaps", "-A", "-l", "app in (x,y)"))
    assert rows[0] == ["NAMESPACE", "NAME", "DATA", "AGE"]
    assert sorted(r[:3] for r in rows[1:]) == [
        ["default", "one", "2"],
        ["team-a", "three", "2"],
        ["team-a", "two", "2"],
    ]


async def test_get_prints_server_side_tables(apiserver: APIServer, kubectl: Kubectl) -> None:
    await install_crd(kubectl)
    await kubectl.ok("apply", "-f", kubectl.write("w.yaml", widget("w1", size=3, color="blue")))
    await kubectl.ok("apply", "-f", kubectl.write("d.yaml", deployment()))
    before = len(apiserver.requests)

    rows = table(await kubectl.ok("get", "widgets"))
    assert rows[0] == ["NAME", "SIZE", "COLOR", "READY", "AGE"]
    assert rows[1][:3] == ["w1", "3", "blue"]
    assert rows[1][-1].endswith("s")
    list_request = apiserver.requests[before:][-1]
    assert list_request.verb == "list" and list_request.status == 200

    rows = table(await kubectl.ok("get", "deploy", "-o", "wide"))
    assert rows[0] == [
        "NAME",
        "READY",
        "UP-TO-DATE",
        "AVAILABLE",
        "AGE",
        "CONTAINERS",
        "IMAGES",
        "SELECTOR",
    ]
    assert rows[1][0:2] == ["web", "0/2"]
    assert rows[1][-3:] == ["web,side", "nginx:1.25,busybox", "app=web"]

    rows = table(await kubectl.ok("get", "crd"))
    assert rows[0] == ["NAME", "CREATED AT"]
    assert rows[1][0] == "widgets.example.com"

    rows = table(await kubectl.ok("get", "widgets", "--show-labels", "-L", "team"))
    assert rows[0][-2:] == ["TEAM", "LABELS"]


# --- create and apply ----------------------------------------------------------------------


async def test_create_configmap_sends_protobuf(apiserver: APIServer, kubectl: Kubectl) -> None:
    out = await kubectl.ok("create", "configmap", "foo", "--from-literal=a=b", "--from-literal=c=d")
    assert out.strip() == "configmap/foo created"
    create = apiserver.requests.filter(verb="create", resource="configmaps")[-1]
    assert create.content_type == "application/vnd.kubernetes.protobuf"
    assert create.query["fieldValidation"] == "Strict"
    obj = stored(apiserver, "/configmaps", "foo")
    assert obj["data"] == {"a": "b", "c": "d"}
    assert obj["metadata"]["uid"] and obj["metadata"]["resourceVersion"] != "0"


async def test_create_generators_decode_protobuf(apiserver: APIServer, kubectl: Kubectl) -> None:
    await kubectl.ok(
        "create", "deployment", "d1", "--image=nginx:1.27", "--replicas=0", "--port=8080"
    )
    await kubectl.ok("create", "secret", "generic", "s1", "--from-literal=pw=hunter2")
    await kubectl.ok("create", "service", "clusterip", "svc1", "--tcp=80:8080")
    await kubectl.ok("create", "namespace", "ns1")
    assert apiserver.requests.count(content_type="application/vnd.kubernetes.protobuf") == 4

    dep = stored(apiserver, "apps/deployments", "d1")
    assert dep["spec"]["replicas"] == 0  # a pointer field: its zero is kept
    container = dep["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "nginx:1.27"
    assert container["ports"] == [{"containerPort": 8080, "protocol": "TCP"}]
    assert dep["spec"]["strategy"]["type"] == "RollingUpdate"
    secret = stored(apiserver, "/secrets", "s1")
    assert secret["data"] == {"pw": "aHVudGVyMg=="} and secret["type"] == "Opaque"
    svc = stored(apiserver, "/services", "svc1")
    assert svc["spec"]["ports"][0]["port"] == 80
    assert svc["spec"]["ports"][0]["targetPort"] == 8080
    assert stored(apiserver, "/namespaces", "ns1", "") is not None


async def test_apply_crd_and_custom_resources_with_default_validation(
    apiserver: APIServer, kubectl: Kubectl
) -> None:
    out = await kubectl.ok("apply", "-f", kubectl.write("crd.yaml", CRD))
    assert (
        out.strip() == "customresourcedefinition.apiextensions.k8s.io/widgets.example.com created"
    )
    path = kubectl.write("widgets.yaml", widget("w1", size=1), widget("w2", size=2))
    out = await kubectl.ok("apply", "-f", path)
    assert out.splitlines() == ["widget.example.com/w1 created", "widget.example.com/w2 created"]
    creates = apiserver.requests.filter(verb="create", resource="widgets")
    assert [c.query["fieldValidation"] for c in creates] == ["Strict", "Strict"]
    assert apiserver.requests.count(path="/openapi/v3") >= 1
    assert apiserver.requests.count(path="/openapi/v3/apis/example.com/v1") >= 1
    assert apiserver.requests.count(path="/openapi/v2") == 0
    w1 = stored(apiserver, "example.com/widgets", "w1")
    assert w1["spec"] == {"size": 1, "color": "red"}
    assert "kubectl.kubernetes.io/last-applied-configuration" in w1["metadata"]["annotations"]

    # Re-applying a change sends a JSON merge patch (custom resources take no strategic merge).
    changed = widget("w1", size=5)
    changed["spec"]["tags"] = ["a", "b"]
    out = await kubectl.ok("apply", "-f", kubectl.write("w1.yaml", changed))
    assert out.strip() == "widget.example.com/w1 configured"
    patch = apiserver.requests.filter(verb="patch", resource="widgets")[-1]
    assert patch.content_type == MERGE
    assert patch.body["spec"] == {"size": 5, "tags": ["a", "b"]}
    w1 = stored(apiserver, "example.com/widgets", "w1")
    assert w1["spec"] == {"size": 5, "color": "red", "tags": ["a", "b"]}
    assert w1["metadata"]["generation"] == 2

    # An unchanged apply sends no PATCH at all.
    patches = apiserver.requests.count(verb="patch")
    out = await kubectl.ok("apply", "-f", kubectl.write("w1.yaml", changed))
    assert out.strip() == "widget.example.com/w1 unchanged"
    assert apiserver.requests.count(verb="patch") == patches

    # Unknown fields are the server's to reject (kubectl sent fieldValidation=Strict).
    bogus = widget("w3")
    bogus["spec"]["bogus"] = True
    ran = await kubectl("apply", "-f", kubectl.write("w3.yaml", bogus))
    assert ran.code == 1
    assert 'unknown field "spec.bogus"' in ran.err
    assert stored(apiserver, "example.com/widgets", "w3") is None


async def test_apply_builtin_computes_strategic_merge_patch_from_openapi(
    apiserver: APIServer, kubectl: Kubectl
) -> None:
    await kubectl.ok("apply", "-f", kubectl.write("d.yaml", deployment()))
    out = await kubectl.ok(
        "apply", "-f", kubectl.write("d2.yaml", deployment("nginx:1.26", b_value="3"))
    )
    assert out.strip() == "deployment.apps/web configured"
    patch = apiserver.requests.filter(verb="patch", resource="deployments")[-1]
    assert patch.content_type == "application/strategic-merge-patch+json"
    pod_spec = patch.body["spec"]["template"]["spec"]
    # Containers merged by name and env by name: the patch names only what changed.
    assert pod_spec["$setElementOrder/containers"] == [{"name": "web"}, {"name": "side"}]
    assert pod_spec["containers"] == [
        {
            "$setElementOrder/env": [{"name": "A"}, {"name": "B"}],
            "env": [{"name": "B", "value": "3"}],
            "image": "nginx:1.26",
            "name": "web",
        }
    ]
    containers = stored(apiserver, "apps/deployments", "web")["spec"]["template"]["spec"][
        "containers"
    ]
    assert [(c["name"], c["image"]) for c in containers] == [
        ("web", "nginx:1.26"),
        ("side", "busybox"),
    ]
    assert containers[0]["env"] == [{"name": "A", "value": "1"}, {"name": "B", "value": "3"}]


async def test_builtin_unknown_fields_rejected_under_strict_validation(
    apiserver: APIServer, kubectl: Kubectl
) -> None:
    doc = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "typo"},
        "datta": {"a": "b"},
    }
    ran = await kubectl("apply", "-f", kubectl.write("typo.yaml", doc))
    assert ran.code == 1
    assert 'strict decoding error: unknown field "datta"' in ran.err
    assert stored(apiserver, "/configmaps", "typo") is None
    # --validate=false asks the server to ignore them: the field is dropped, as decoding
    # into the Go type drops it.
    await kubectl.ok("apply", "--validate=false", "-f", kubectl.write("typo.yaml", doc))
    assert (
        apiserver.requests.filter(verb="create", resource="configmaps")[-1].query["fieldValidation"]
        == "Ignore"
    )
    assert "datta" not in stored(apiserver, "/configmaps", "typo")


# --- patch ---------------------------------------------------------------------------------


async def test_patch_merge_and_json(apiserver: APIServer, kubectl: Kubectl) -> None:
    await install_crd(kubectl)
    await kubectl.ok("apply", "-f", kubectl.write("w.yaml", widget("w1", size=1)))

    out = await kubectl.ok(
        "patch", "widget", "w1", "--type", "merge", "-p", '{"spec":{"size":4,"color":null}}'
    )
    assert out.strip() == "widget.example.com/w1 patched"
    assert stored(apiserver, "example.com/widgets", "w1")["spec"] == {"size": 4}
    assert apiserver.requests.filter(verb="patch")[-1].content_type == MERGE

    out = await kubectl.ok(
        "patch",
        "wd",
        "w1",
        "--type",
        "json",
        "-p",
        '[{"op":"test","path":"/spec/size","value":4},'
        '{"op":"add","path":"/spec/tags","value":["x"]}]',
    )
    assert out.strip() == "widget.example.com/w1 patched"
    assert stored(apiserver, "example.com/widgets", "w1")["spec"] == {"size": 4, "tags": ["x"]}
    assert apiserver.requests.filter(verb="patch")[-1].content_type == "application/json-patch+json"

    ran = await kubectl(
        "patch",
        "wd",
        "w1",
        "--type",
        "json",
        "-p",
        '[{"op":"test","path":"/spec/size","value":99}]',
    )
    assert ran.code == 1
    assert apiserver.requests.filter(verb="patch")[-1].status == 422
    assert stored(apiserver, "example.com/widgets", "w1")["spec"]["size"] == 4


async def test_patch_status_subresource(apiserver: APIServer, kubectl: Kubectl) -> None:
    await install_crd(kubectl)
    await kubectl.ok("apply", "-f", kubectl.write("w.yaml", widget("w1", size=1)))
    generation = stored(apiserver, "example.com/widgets", "w1")["metadata"]["generation"]

    out = await kubectl.ok(
        "patch",
        "widget",
        "w1",
        "--subresource",
        "status",
        "--type",
        "merge",
        "-p",
        '{"status":{"ready":true},"spec":{"size":9}}',
    )
    assert out.strip() == "widget.example.com/w1 patched"
    request = apiserver.requests.filter(verb="patch", resource="widgets")[-1]
    assert request.subresource == "status" and request.status == 200
    obj = stored(apiserver, "example.com/widgets", "w1")
    assert obj["status"] == {"ready": True}
    assert obj["spec"]["size"] == 1  # spec changes sent to /status are ignored
    assert obj["metadata"]["generation"] == generation
    rows = table(await kubectl.ok("get", "wd", "w1"))
    assert rows[1][:4] == ["w1", "1", "red", "true"]


# --- delete --------------------------------------------------------------------------------


async def test_delete_waits_for_finalizer(
    apiserver: APIServer, kube: kr8s.asyncio.Api, kubectl: Kubectl
) -> None:
    await install_crd(kubectl)
    await kubectl.ok(
        "apply", "-f", kubectl.write("w.yaml", widget("w1", finalizers=["example.com/cleanup"]))
    )

    proc = await kubectl.start("delete", "widget", "w1", "--timeout=60s")
    try:
        await eventually(
            lambda: bool(
                (stored(apiserver, "example.com/widgets", "w1") or {})
                .get("metadata", {})
                .get("deletionTimestamp")
            ),
            20,
        )
        # kubectl now waits by watching the object; it has not exited.
        await eventually(lambda: apiserver.open_watches > 0, 20)
        assert proc.returncode is None
        delete = apiserver.requests.filter(verb="delete", resource="widgets")[-1]
        assert delete.status == 200 and delete.body["propagationPolicy"] == "Background"

        status, body = await call(
            kube, "PATCH", f"{WIDGETS}/w1", {"metadata": {"finalizers": None}}, MERGE
        )
        assert status == 200, body
        out, err = await asyncio.wait_for(proc.communicate(), 30)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 0, err.decode()
    assert out.decode().strip() == 'widget.example.com "w1" deleted'
    assert stored(apiserver, "example.com/widgets", "w1") is None


async def test_delete_without_finalizer(apiserver: APIServer, kubectl: Kubectl) -> None:
    await kubectl.ok("create", "configmap", "gone", "--from-literal=a=b")
    out = await kubectl.ok("delete", "configmap", "gone")
    assert out.strip() == 'configmap "gone" deleted'
    assert stored(apiserver, "/configmaps", "gone") is None


# --- watch ---------------------------------------------------------------------------------


async def _line(stream: asyncio.StreamReader, timeout: float = 20) -> str:
    line = await asyncio.wait_for(stream.readline(), timeout)
    assert line, "kubectl closed its output"
    return line.decode().rstrip("\n")


async def test_get_watch_with_request_timeout(
    apiserver: APIServer, kube: kr8s.asyncio.Api, kubectl: Kubectl
) -> None:
    await install_crd(kubectl)
    await kubectl.ok("apply", "-f", kubectl.write("w.yaml", widget("w1", size=1)))

    proc = await kubectl.start(
        "get", "widgets", "-w", "--request-timeout=4s", "--output-watch-events"
    )
    assert proc.stdout is not None
    try:
        header = table(await _line(proc.stdout))[0]
        assert header == ["EVENT", "NAME", "SIZE", "COLOR", "READY", "AGE"]
        first = table(await _line(proc.stdout))[0]
        assert first[:4] == ["ADDED", "w1", "1", "red"]
        await eventually(lambda: apiserver.open_watches > 0, 20)
        watch = apiserver.requests.filter(verb="watch", resource="widgets")[-1]
        assert watch.query["timeout"] == "4s"

        status, _ = await call(kube, "PATCH", f"{WIDGETS}/w1", {"spec": {"size": 7}}, MERGE)
        assert status == 200
        changed = table(await _line(proc.stdout))[0]
        assert changed[:4] == ["MODIFIED", "w1", "7", "red"]
        status, _ = await call(kube, "DELETE", f"{WIDGETS}/w1")
        assert status == 200
        deleted = table(await _line(proc.stdout))[0]
        assert deleted[:2] == ["DELETED", "w1"]
        # The request timeout ends the watch; kubectl exits cleanly and prints no header again.
        rest, _ = await asyncio.wait_for(proc.communicate(), 30)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 0
    assert rest.decode().strip() == ""


# --- OpenAPI -------------------------------------------------------------------------------


async def test_openapi_v3_documents_are_content_addressed(
    apiserver: APIServer, kube: kr8s.asyncio.Api, kubectl: Kubectl
) -> None:
    status, index, _ = await get_path(kube, "/openapi/v3")
    assert status == 200
    url = index["paths"]["api/v1"]["serverRelativeURL"]
    path, _, digest = url.partition("?hash=")
    assert path == "/openapi/v3/api/v1" and len(digest) == 128
    status, doc, headers = await get_path(kube, path, hash=digest)
    assert status == 200
    assert headers["cache-control"] == "public, immutable"
    patch = doc["paths"]["/api/v1/namespaces/{namespace}/configmaps/{name}"]["patch"]
    assert patch["x-kubernetes-group-version-kind"] == {
        "group": "",
        "kind": "ConfigMap",
        "version": "v1",
    }
    assert "fieldValidation" in [p["name"] for p in patch["parameters"]]
    assert "application/strategic-merge-patch+json" in patch["requestBody"]["content"]
    containers = doc["components"]["schemas"]["io.k8s.api.core.v1.PodSpec"]["properties"][
        "containers"
    ]
    assert containers["x-kubernetes-patch-merge-key"] == "name"
    assert containers["x-kubernetes-patch-strategy"] == "merge"

    # A CRD adds its group/version; kubectl explain reads the schema derived from it.
    await install_crd(kubectl)
    _, index, _ = await get_path(kube, "/openapi/v3")
    cr_url = index["paths"]["apis/example.com/v1"]["serverRelativeURL"]
    cr_path, _, cr_digest = cr_url.partition("?hash=")
    status, cr_doc, _ = await get_path(kube, cr_path, hash=cr_digest)
    assert status == 200
    cr_patch = cr_doc["paths"]["/apis/example.com/v1/namespaces/{namespace}/widgets/{name}"][
        "patch"
    ]
    assert "application/strategic-merge-patch+json" not in cr_patch["requestBody"]["content"]
    assert cr_doc["components"]["schemas"]["com.example.v1.Widget"][
        "x-kubernetes-group-version-kind"
    ] == [{"group": "example.com", "kind": "Widget", "version": "v1"}]
    out = await kubectl.ok("explain", "widgets.spec")
    assert "size\t<integer>" in out and "color\t<string>" in out

    # A changed CRD changes the document's hash; the old URL redirects to the new one.
    crd = json.loads(json.dumps(CRD))
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"][
        "weight"
    ] = {"type": "number"}
    await kubectl.ok("apply", "-f", kubectl.write("crd2.yaml", crd))
    _, index, _ = await get_path(kube, "/openapi/v3")
    new_url = index["paths"]["apis/example.com/v1"]["serverRelativeURL"]
    assert new_url != cr_url
    status, _, headers = await get_path(kube, cr_path, hash=cr_digest)
    assert status == 301 and headers["location"] == new_url
    out = await kubectl.ok("explain", "widgets.spec")
    assert "weight\t<number>" in out
