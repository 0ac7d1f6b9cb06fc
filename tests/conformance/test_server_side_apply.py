"""Server-side apply and managedFields, judged by kube-apiserver (issue 14).

Every test runs on both backends; expected bodies and managedFields were read off the
real kube-apiserver 1.32.5 and must hold on the embedded server too.
"""

from __future__ import annotations

import asyncio
import os
import secrets
from collections.abc import AsyncIterator
from typing import Any

import kr8s.asyncio
import pytest
import pytest_asyncio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reconcile_kit.testing import APIServer, ControlPlane
from reconcile_kit.testing.backends import Backend, selected_backends

from .kube import APPLY, MERGE, ok, req, schema_crd, status_body

GADGET_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "size": {"type": "integer"},
                "replicas": {"type": "integer"},
                "color": {"type": "string"},
                "tags": {
                    "type": "array",
                    "items": {"type": "string"},
                    "x-kubernetes-list-type": "set",
                },
                "ports": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {
                        "type": "object",
                        "required": ["name"],
                        "properties": {
                            "name": {"type": "string"},
                            "port": {"type": "integer"},
                            "protocol": {"type": "string"},
                        },
                    },
                },
                "hosts": {"type": "array", "items": {"type": "string"}},
                "settings": {"type": "object", "additionalProperties": {"type": "string"}},
                "selector": {
                    "type": "object",
                    "x-kubernetes-map-type": "atomic",
                    "additionalProperties": {"type": "string"},
                },
            },
        },
        "status": {
            "type": "object",
            "properties": {
                "replicas": {"type": "integer"},
                "phase": {"type": "string"},
                "conditions": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["type"],
                    "items": {
                        "type": "object",
                        "required": ["type"],
                        "properties": {
                            "type": {"type": "string"},
                            "status": {"type": "string"},
                        },
                    },
                },
            },
        },
    },
}


class Gadgets:
    def __init__(self, group: str, namespace: str) -> None:
        self.group = group
        self.namespace = namespace
        self.api_version = f"{group}/v1"
        self.path = f"/apis/{group}/v1/namespaces/{namespace}/gadgets"

    def doc(self, name: str = "g1", **spec: Any) -> dict[str, Any]:
        return {
            "apiVersion": self.api_version,
            "kind": "Gadget",
            "metadata": {"name": name},
            "spec": spec,
        }

    async def apply(
        self,
        backend: Backend,
        body: dict[str, Any],
        manager: str,
        force: bool = False,
        sub: str = "",
    ) -> Any:
        params = {"fieldManager": manager}
        if force:
            params["force"] = "true"
        name = body["metadata"]["name"]
        return await req(
            backend,
            "PATCH",
            f"{self.path}/{name}" + (f"/{sub}" if sub else ""),
            body,
            content_type=APPLY,
            params=params,
        )


def gadget_crd(group: str) -> dict[str, Any]:
    """The Gadget CRD (status and scale subresources, set/map/atomic lists) in ``group``."""
    scale = {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}
    return schema_crd(group, "Gadget", GADGET_SCHEMA, {"status": {}, "scale": scale})


@pytest_asyncio.fixture
async def gadgets(backend: Backend) -> AsyncIterator[Gadgets]:
    from .kube import install_crd

    group = f"{backend.namespace}.ssa.example.com"
    await install_crd(backend, gadget_crd(group))
    yield Gadgets(group, backend.namespace)
    await req(
        backend,
        "DELETE",
        f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.{group}",
    )


def managed(obj: dict[str, Any]) -> dict[tuple[str, str, str, str], Any]:
    """managedFields by (manager, operation, apiVersion, subresource), without times
    (kube-apiserver leaves out the time of writes through /scale and of an apply that
    changed nothing)."""
    out = {}
    for entry in obj["metadata"].get("managedFields") or []:
        assert entry["fieldsType"] == "FieldsV1", entry
        key = (
            entry["manager"],
            entry["operation"],
            entry["apiVersion"],
            entry.get("subresource", ""),
        )
        out[key] = entry["fieldsV1"]
    return out


async def test_apply_creates_and_records_only_the_applied_fields(
    backend: Backend, gadgets: Gadgets
) -> None:
    doc = gadgets.doc(size=1, tags=["a"], ports=[{"name": "http", "port": 80}])
    doc["metadata"]["labels"] = {"app": "x"}
    created = await gadgets.apply(backend, doc, "one")
    assert created.status == 201, created.body
    assert managed(created.body) == {
        ("one", "Apply", gadgets.api_version, ""): {
            "f:metadata": {"f:labels": {"f:app": {}}},
            "f:spec": {
                "f:ports": {'k:{"name":"http"}': {".": {}, "f:name": {}, "f:port": {}}},
                "f:size": {},
                "f:tags": {'v:"a"': {}},
            },
        }
    }
    again = await gadgets.apply(backend, doc, "one")
    assert again.status == 200
    assert again.body["metadata"]["resourceVersion"] == created.body["metadata"]["resourceVersion"]


async def test_apply_removes_what_the_manager_dropped(backend: Backend, gadgets: Gadgets) -> None:
    full = gadgets.doc(size=1, color="red", tags=["a", "b"], ports=[{"name": "http", "port": 80}])
    full["metadata"]["labels"] = {"app": "x", "tier": "web"}
    await gadgets.apply(backend, full, "one")
    await ok(
        backend,
        "PATCH",
        f"{gadgets.path}/g1",
        {"spec": {"settings": {"k": "v"}}},
        content_type=MERGE,
        params={"fieldManager": "editor"},
    )
    less = gadgets.doc(size=1, tags=["a"])
    less["metadata"]["labels"] = {"app": "x"}
    reply = await gadgets.apply(backend, less, "one")
    assert reply.status == 200, reply.body
    assert reply.body["metadata"]["labels"] == {"app": "x"}
    assert reply.body["spec"] == {"size": 1, "tags": ["a"], "settings": {"k": "v"}}
    assert managed(reply.body) == {
        ("one", "Apply", gadgets.api_version, ""): {
            "f:metadata": {"f:labels": {"f:app": {}}},
            "f:spec": {"f:size": {}, "f:tags": {'v:"a"': {}}},
        },
        ("editor", "Update", gadgets.api_version, ""): {
            "f:spec": {"f:settings": {".": {}, "f:k": {}}}
        },
    }


async def test_two_managers_share_set_and_map_lists(backend: Backend, gadgets: Gadgets) -> None:
    one = gadgets.doc(tags=["a"], ports=[{"name": "http", "port": 80}], settings={"x": "1"})
    two = gadgets.doc(tags=["b"], ports=[{"name": "https", "port": 443}], settings={"y": "2"})
    await gadgets.apply(backend, one, "one")
    reply = await gadgets.apply(backend, two, "two")
    assert reply.status == 200, reply.body
    spec = reply.body["spec"]
    assert spec["tags"] == ["a", "b"]
    assert spec["ports"] == [{"name": "http", "port": 80}, {"name": "https", "port": 443}]
    assert spec["settings"] == {"x": "1", "y": "2"}
    # a shared item: both own it, and it stays while one of them still applies it
    both = gadgets.doc(tags=["a", "b"])
    await gadgets.apply(backend, both, "two")
    after = await gadgets.apply(backend, gadgets.doc(tags=["a"]), "one")
    assert after.body["spec"]["tags"] == ["a", "b"]
    gone = await gadgets.apply(backend, gadgets.doc(tags=["b"]), "two")
    assert gone.body["spec"]["tags"] == ["a", "b"]
    assert "ports" not in gone.body["spec"] and "settings" not in gone.body["spec"]
    # atomic list and atomic map: a second manager's value replaces them, with a conflict
    await gadgets.apply(backend, gadgets.doc(hosts=["h1"], selector={"a": "1"}), "one")
    clash = await gadgets.apply(backend, gadgets.doc(hosts=["h2"], selector={"b": "2"}), "two")
    assert clash.status == 409
    assert sorted(c["field"] for c in clash.body["details"]["causes"]) == [
        ".spec.hosts",
        ".spec.selector",
    ]


async def test_conflicts_without_force_and_ownership_moves_with_it(
    backend: Backend, gadgets: Gadgets
) -> None:
    await gadgets.apply(backend, gadgets.doc(size=1, color="red"), "one")
    clash = await gadgets.apply(backend, gadgets.doc(size=2, color="red"), "two")
    assert (clash.status, clash.body) == (
        409,
        status_body(
            409,
            "Conflict",
            'Apply failed with 1 conflict: conflict with "one": .spec.size',
            {
                "causes": [
                    {
                        "reason": "FieldManagerConflict",
                        "message": 'conflict with "one"',
                        "field": ".spec.size",
                    }
                ]
            },
        ),
    )
    forced = await gadgets.apply(backend, gadgets.doc(size=2, color="red"), "two", force=True)
    assert forced.status == 200
    assert managed(forced.body) == {
        ("one", "Apply", gadgets.api_version, ""): {"f:spec": {"f:color": {}}},
        ("two", "Apply", gadgets.api_version, ""): {"f:spec": {"f:color": {}, "f:size": {}}},
    }
    # "one" no longer owns size: dropping it from its configuration leaves it alone
    kept = await gadgets.apply(backend, gadgets.doc(color="red"), "one")
    assert kept.body["spec"] == {"size": 2, "color": "red"}


async def test_update_after_apply(backend: Backend, gadgets: Gadgets) -> None:
    await gadgets.apply(backend, gadgets.doc(size=1, ports=[{"name": "http", "port": 80}]), "one")
    current = await ok(backend, "GET", f"{gadgets.path}/g1")
    current["spec"]["size"] = 3
    current["spec"]["ports"].append({"name": "https", "port": 443, "protocol": "TCP"})
    current["metadata"]["annotations"] = {"note": "x"}
    put = await ok(
        backend, "PUT", f"{gadgets.path}/g1", current, params={"fieldManager": "kubectl"}
    )
    assert managed(put) == {
        ("one", "Apply", gadgets.api_version, ""): {
            "f:spec": {"f:ports": {'k:{"name":"http"}': {".": {}, "f:name": {}, "f:port": {}}}}
        },
        ("kubectl", "Update", gadgets.api_version, ""): {
            "f:metadata": {"f:annotations": {".": {}, "f:note": {}}},
            "f:spec": {
                "f:ports": {
                    'k:{"name":"https"}': {
                        ".": {},
                        "f:name": {},
                        "f:port": {},
                        "f:protocol": {},
                    }
                },
                "f:size": {},
            },
        },
    }
    order = [(e["manager"], e["operation"]) for e in put["metadata"]["managedFields"]]
    assert order == [("one", "Apply"), ("kubectl", "Update")]


async def test_created_by_update_then_applied(backend: Backend) -> None:
    path = f"/api/v1/namespaces/{backend.namespace}/configmaps"
    body = {"metadata": {"name": "c", "labels": {"a": "1"}}, "data": {"x": "1", "y": "2"}}
    created = await ok(backend, "POST", path, body, params={"fieldManager": "maker"})
    assert managed(created) == {
        ("maker", "Update", "v1", ""): {
            "f:data": {".": {}, "f:x": {}, "f:y": {}},
            "f:metadata": {"f:labels": {".": {}, "f:a": {}}},
        }
    }
    doc = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"x": "9"}}
    applied = await req(
        backend, "PATCH", f"{path}/c", doc, content_type=APPLY, params={"fieldManager": "ssa"}
    )
    assert applied.status == 409
    forced = await req(
        backend,
        "PATCH",
        f"{path}/c",
        doc,
        content_type=APPLY,
        params={"fieldManager": "ssa", "force": "true"},
    )
    assert managed(forced.body) == {
        ("ssa", "Apply", "v1", ""): {"f:data": {"f:x": {}}},
        ("maker", "Update", "v1", ""): {
            "f:data": {".": {}, "f:y": {}},
            "f:metadata": {"f:labels": {".": {}, "f:a": {}}},
        },
    }


async def test_apply_status_and_scale(backend: Backend, gadgets: Gadgets) -> None:
    await gadgets.apply(backend, gadgets.doc(size=1, replicas=2), "one")
    status = {
        "apiVersion": gadgets.api_version,
        "kind": "Gadget",
        "metadata": {"name": "g1"},
        "status": {"phase": "Up", "conditions": [{"type": "Ready", "status": "True"}]},
    }
    reply = await gadgets.apply(backend, status, "statuser", sub="status")
    assert reply.status == 200, reply.body
    assert reply.body["status"]["phase"] == "Up"
    other = {**status, "status": {"conditions": [{"type": "Synced", "status": "True"}]}}
    merged = await gadgets.apply(backend, other, "syncer", sub="status")
    assert [c["type"] for c in merged.body["status"]["conditions"]] == ["Ready", "Synced"]
    current = await ok(backend, "GET", f"{gadgets.path}/g1")
    assert managed(current) == {
        ("one", "Apply", gadgets.api_version, ""): {"f:spec": {"f:replicas": {}, "f:size": {}}},
        ("statuser", "Apply", gadgets.api_version, "status"): {
            "f:status": {
                "f:conditions": {'k:{"type":"Ready"}': {".": {}, "f:status": {}, "f:type": {}}},
                "f:phase": {},
            }
        },
        ("syncer", "Apply", gadgets.api_version, "status"): {
            "f:status": {
                "f:conditions": {'k:{"type":"Synced"}': {".": {}, "f:status": {}, "f:type": {}}}
            }
        },
    }


def web_deployment(**spec: Any) -> dict[str, Any]:
    """An applied configuration of a Deployment: only what its manager sets."""
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": "nginx:1"}]},
            },
            **spec,
        },
    }


async def apply_deployment(
    backend: Backend, body: dict[str, Any], manager: str, force: bool = False, sub: str = ""
) -> Any:
    params = {"fieldManager": manager, **({"force": "true"} if force else {})}
    path = f"/apis/apps/v1/namespaces/{backend.namespace}/deployments/web"
    return await req(
        backend, "PATCH", path + (f"/{sub}" if sub else ""), body, content_type=APPLY, params=params
    )


async def test_apply_deployment_defaults_are_not_the_appliers(backend: Backend) -> None:
    created = await apply_deployment(backend, web_deployment(replicas=2), "one")
    assert created.status == 201, created.body
    container = created.body["spec"]["template"]["spec"]["containers"][0]
    assert container["imagePullPolicy"] == "IfNotPresent"
    assert managed(created.body) == {
        ("one", "Apply", "apps/v1", ""): {
            "f:spec": {
                "f:replicas": {},
                "f:selector": {},
                "f:template": {
                    "f:metadata": {"f:labels": {"f:app": {}}},
                    "f:spec": {
                        "f:containers": {'k:{"name":"app"}': {".": {}, "f:image": {}, "f:name": {}}}
                    },
                },
            }
        }
    }
    # a second manager adds a container and an env var to the first: merged, not replaced
    sidecar = web_deployment()
    sidecar["spec"]["template"]["spec"]["containers"] = [
        {"name": "app", "env": [{"name": "A", "value": "1"}]},
        {"name": "log", "image": "busybox"},
    ]
    del sidecar["spec"]["selector"]
    merged = await apply_deployment(backend, sidecar, "two")
    assert merged.status == 200, merged.body
    containers = merged.body["spec"]["template"]["spec"]["containers"]
    assert [(c["name"], c.get("image"), c.get("env")) for c in containers] == [
        ("app", "nginx:1", [{"name": "A", "value": "1"}]),
        ("log", "busybox", None),
    ]
    assert merged.body["metadata"]["generation"] == 2
    # the first manager drops replicas: removed, then defaulted again
    dropped = await apply_deployment(backend, web_deployment(), "one")
    assert dropped.body["spec"]["replicas"] == 1


async def test_apply_and_update_scale(backend: Backend) -> None:
    await apply_deployment(backend, web_deployment(replicas=2), "one")
    scale = {
        "apiVersion": "autoscaling/v1",
        "kind": "Scale",
        "metadata": {"name": "web"},
        "spec": {"replicas": 5},
    }
    clash = await apply_deployment(backend, scale, "scaler", sub="scale")
    assert clash.status == 409, clash.body
    assert clash.body["message"] == (
        'Apply failed with 1 conflict: conflict with "one": .spec.replicas'
    )
    scaled = await apply_deployment(backend, scale, "scaler", force=True, sub="scale")
    assert (scaled.status, scaled.body["spec"]["replicas"]) == (200, 5), scaled.body
    path = f"/apis/apps/v1/namespaces/{backend.namespace}/deployments/web"
    current = await ok(backend, "GET", path)
    assert current["spec"]["replicas"] == 5
    entries = managed(current)
    assert entries[("scaler", "Apply", "apps/v1", "scale")] == {"f:spec": {"f:replicas": {}}}
    assert "f:replicas" not in entries[("one", "Apply", "apps/v1", "")]["f:spec"]
    await ok(
        backend,
        "PATCH",
        f"{path}/scale",
        {"spec": {"replicas": 6}},
        content_type=MERGE,
        params={"fieldManager": "hpa"},
    )
    current = await ok(backend, "GET", path)
    entries = managed(current)
    assert entries[("hpa", "Update", "apps/v1", "scale")] == {"f:spec": {"f:replicas": {}}}
    assert ("scaler", "Apply", "apps/v1", "scale") not in entries


async def test_apply_name_must_match_the_url(backend: Backend, gadgets: Gadgets) -> None:
    await gadgets.apply(backend, gadgets.doc(size=1), "one")
    doc = gadgets.doc("other", size=2)
    reply = await req(
        backend,
        "PATCH",
        f"{gadgets.path}/g1",
        doc,
        content_type=APPLY,
        params={"fieldManager": "one"},
    )
    assert (reply.status, reply.body) == (
        400,
        status_body(
            400,
            "BadRequest",
            "the name of the object (other) does not match the name on the URL (g1)",
            None,
        ),
    )
    missing = await req(
        backend,
        "PATCH",
        f"{gadgets.path}/nope",
        gadgets.doc("other", size=2),
        content_type=APPLY,
        params={"fieldManager": "one"},
    )
    assert missing.status == 400, missing.body


# --- property: random applies agree with kube-apiserver ---------------------------------

_NAMES = ("p1", "p2", "p3")


@st.composite
def _configs(draw: st.DrawFn) -> dict[str, Any]:
    """An applied configuration of a Gadget's spec and labels (any field may be absent)."""
    spec: dict[str, Any] = {}
    if draw(st.booleans()):
        spec["size"] = draw(st.sampled_from([1, 2]))
    if draw(st.booleans()):
        spec["color"] = draw(st.sampled_from(["red", "blue"]))
    if draw(st.booleans()):
        spec["tags"] = draw(st.lists(st.sampled_from(["x", "y", "z"]), unique=True, max_size=3))
    if draw(st.booleans()):
        names = draw(st.lists(st.sampled_from(_NAMES), unique=True, max_size=3))
        spec["ports"] = [
            {"name": n, "port": draw(st.sampled_from([80, 81]))}
            | ({"protocol": "UDP"} if draw(st.booleans()) else {})
            for n in names
        ]
    if draw(st.booleans()):
        keys = draw(st.lists(st.sampled_from(["k1", "k2"]), unique=True, max_size=2))
        spec["settings"] = {k: draw(st.sampled_from(["1", "2"])) for k in keys}
    if draw(st.booleans()):
        spec["hosts"] = draw(st.lists(st.sampled_from(["h1", "h2"]), max_size=2))
    if draw(st.booleans()):
        spec["selector"] = {draw(st.sampled_from(["a", "b"])): "1"}
    labels = draw(st.dictionaries(st.sampled_from(["l1", "l2"]), st.sampled_from(["1", "2"])))
    return {"spec": spec, "labels": labels}


_STEPS = st.lists(
    st.tuples(st.sampled_from(["one", "two", "editor"]), _configs(), st.booleans()),
    min_size=2,
    max_size=6,
)


async def _run_steps(api: Any, path: str, api_version: str, steps: list[Any]) -> list[Any]:
    """Send the steps (apply, or a merge patch for ``editor``); what each answered."""
    from ..kubehttp import send

    seen: list[Any] = []
    for manager, config, force in steps:
        doc = {
            "apiVersion": api_version,
            "kind": "Gadget",
            "metadata": {"name": "g", "labels": config["labels"]},
            "spec": config["spec"],
        }
        if manager == "editor":
            body = {"metadata": {"labels": config["labels"]}, "spec": config["spec"]}
            args = (MERGE, {"fieldManager": manager})
        else:
            body = doc
            args = (APPLY, {"fieldManager": manager, **({"force": "true"} if force else {})})
        status, reply, _ = await send(api, "PATCH", f"{path}/g", body, args[0], args[1], None)
        if status == 404:
            status, reply, _ = await send(api, "POST", path, doc, "application/json", args[1], None)
        seen.append(_observed(status, reply))
    return seen


def _observed(status: int, body: Any) -> Any:
    if status >= 300:
        causes = sorted(
            (c.get("message"), c.get("field")) for c in body.get("details", {}).get("causes", [])
        )
        return (status, body.get("reason"), causes)
    meta = body["metadata"]
    timed = sorted(bool(e.get("time")) for e in meta.get("managedFields") or [])
    return (status, body.get("spec"), meta.get("labels"), managed(body), timed)


def test_random_applies_agree_with_kube_apiserver(request: pytest.FixtureRequest) -> None:
    """Random applies (and merge patches) by several managers give, after every step, the
    same answer, object and managedFields on the embedded server as on kube-apiserver."""
    if "real" not in selected_backends(request.config):
        pytest.skip("compares with kube-apiserver: run with --backend real or both")
    plane: ControlPlane = request.getfixturevalue("control_plane")
    group = f"p{secrets.token_hex(3)}.ssa.example.com"
    counter = iter(range(10_000))

    async def compare(steps: list[Any]) -> None:
        namespace = f"ssa-{next(counter)}-{secrets.token_hex(2)}"
        async with APIServer(garbage_collection=False) as embedded:
            results = []
            for server in (embedded, plane):
                api = await kr8s.asyncio.Api(kubeconfig=server.kubeconfig, bypass_factory=True)
                try:
                    backend = Backend("real", server, api, namespace)
                    await _ensure_gadgets(backend, group)
                    path = f"/apis/{group}/v1/namespaces/{namespace}/gadgets"
                    results.append(await _run_steps(api, path, f"{group}/v1", steps))
                finally:
                    await api._session.aclose()  # type: ignore[union-attr]
            assert results[0] == results[1], steps

    @settings(
        max_examples=int(os.environ.get("RECONCILE_KIT_SSA_EXAMPLES", "25")),
        deadline=None,
        suppress_health_check=list(HealthCheck),
        database=None,
    )
    @given(_STEPS)
    def check(steps: list[Any]) -> None:
        asyncio.run(compare(steps))

    check()


async def _ensure_gadgets(backend: Backend, group: str) -> None:
    """The Gadget CRD in ``group`` (created once per server) and the backend's namespace."""
    from .kube import install_crd

    namespaces = "/api/v1/namespaces"
    await req(backend, "POST", namespaces, {"metadata": {"name": backend.namespace}})
    found = await req(
        backend, "GET", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.{group}"
    )
    if found.status == 200:
        return
    await install_crd(backend, gadget_crd(group))


async def test_service_ports_and_owner_references_merge_by_key(backend: Backend) -> None:
    path = f"/api/v1/namespaces/{backend.namespace}/services/web"

    def service(ports: list[Any], owner: str) -> dict[str, Any]:
        ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": owner, "uid": f"uid-{owner}"}
        return {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "web", "ownerReferences": [ref]},
            "spec": {"ports": ports},
        }

    one = await req(
        backend,
        "PATCH",
        path,
        service([{"name": "http", "port": 80}], "a"),
        content_type=APPLY,
        params={"fieldManager": "one"},
    )
    assert one.status == 201, one.body
    assert managed(one.body)[("one", "Apply", "v1", "")] == {
        "f:metadata": {"f:ownerReferences": {'k:{"uid":"uid-a"}': {}}},
        "f:spec": {
            "f:ports": {'k:{"port":80,"protocol":"TCP"}': {".": {}, "f:name": {}, "f:port": {}}}
        },
    }
    two = await req(
        backend,
        "PATCH",
        path,
        service([{"name": "https", "port": 443, "protocol": "TCP"}], "b"),
        content_type=APPLY,
        params={"fieldManager": "two"},
    )
    assert two.status == 200, two.body
    assert [p["port"] for p in two.body["spec"]["ports"]] == [80, 443]
    assert [r["uid"] for r in two.body["metadata"]["ownerReferences"]] == ["uid-a", "uid-b"]


async def test_duplicate_list_items(backend: Backend, gadgets: Gadgets) -> None:
    spec = {
        "tags": ["a", "a", "a"],
        "ports": [{"name": "h"}, {"name": "h"}, {"name": "x"}, {"name": "x", "port": 1}],
    }
    created = await req(backend, "POST", gadgets.path, gadgets.doc("g0", **spec))
    assert created.status == 422, created.body
    # kube-apiserver walks the object's maps in Go's random order
    assert sorted((c["field"], c["message"]) for c in created.body["details"]["causes"]) == [
        ("spec.ports[1]", 'Duplicate value: map[string]interface {}{"name":"h"}'),
        ("spec.ports[3]", 'Duplicate value: map[string]interface {}{"name":"x"}'),
        ("spec.tags[1]", 'Duplicate value: "a"'),
    ]
    applied = await gadgets.apply(backend, gadgets.doc("g1", **spec), "one")
    head = f"failed to create typed patch object (/g1; {gadgets.group}/v1, Kind=Gadget): errors:"
    message = applied.body.pop("message")
    assert (applied.status, applied.body) == (
        500,
        {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "code": 500},
    )
    first, *rest = message.split("\n")
    assert first == head
    # in the order Go's map iteration gives
    assert sorted(rest) == [
        '  .spec.ports: duplicate entries for key [name="h"]',
        '  .spec.ports: duplicate entries for key [name="x"]',
        '  .spec.tags: duplicate entries for key [="a"]',
        '  .spec.tags: duplicate entries for key [="a"]',
    ]
    keyless = await gadgets.apply(backend, gadgets.doc("g2", ports=[{"port": 1}]), "one")
    assert keyless.status == 500
    assert keyless.body["message"].endswith(
        ": .spec.ports: element 0: associative list with keys has an element that omits key"
        ' field "name" (and doesn\'t have default value)'
    )
