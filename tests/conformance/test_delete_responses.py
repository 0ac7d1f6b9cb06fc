"""What a DELETE of one object answers: the deleted object for the kinds whose registry
sets ``ReturnDeletedObject`` (k8s.io/kubernetes pkg/registry/*/storage, 1.32), a Status
for the others (custom resources included); an object its finalizers keep is answered
as marked for deletion, with 202 when ``orphanDependents`` is false."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reconcile_kit.testing.backends import Backend

from .kube import Widgets, ok, req
from .test_openapi_documents import document

POD_TEMPLATE = {"containers": [{"name": "c", "image": "busybox"}]}


def _returning(ns: str, unique: str) -> list[tuple[str, dict[str, Any]]]:
    """A collection path and a valid object of each kind that answers with the object."""
    core, storage = f"/api/v1/namespaces/{ns}", "/apis/storage.k8s.io/v1"
    claim_spec = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    volume_spec = {
        "accessModes": ["ReadWriteOnce"],
        "capacity": {"storage": "1Gi"},
        "hostPath": {"path": "/tmp/v"},
    }
    attachment = {
        "attacher": "csi.example.com",
        "nodeName": "n1",
        "source": {"persistentVolumeName": "pv1"},
    }
    return [
        (f"{core}/persistentvolumeclaims", {"metadata": {"name": "c"}, "spec": claim_spec}),
        ("/api/v1/persistentvolumes", {"metadata": {"name": unique}, "spec": volume_spec}),
        (f"{core}/serviceaccounts", {"metadata": {"name": "sa"}}),
        (f"{core}/resourcequotas", {"metadata": {"name": "q"}, "spec": {"hard": {"pods": "1"}}}),
        (
            f"{core}/podtemplates",
            {"metadata": {"name": "t"}, "template": {"spec": POD_TEMPLATE}},
        ),
        (f"{storage}/storageclasses", {"metadata": {"name": unique}, "provisioner": "x.io/p"}),
        (f"{storage}/csidrivers", {"metadata": {"name": f"{unique}.example.com"}, "spec": {}}),
        (f"{storage}/csinodes", {"metadata": {"name": unique}, "spec": {"drivers": []}}),
        (f"{storage}/volumeattachments", {"metadata": {"name": unique}, "spec": attachment}),
        (f"{core}/services", {"metadata": {"name": "s"}, "spec": {"ports": [{"port": 80}]}}),
    ]


def _status_answering(ns: str, unique: str) -> list[tuple[str, dict[str, Any]]]:
    pod_template = {"metadata": {"labels": {"a": "b"}}, "spec": POD_TEMPLATE}
    deployment = {"selector": {"matchLabels": {"a": "b"}}, "template": pod_template}
    return [
        (f"/api/v1/namespaces/{ns}/configmaps", {"metadata": {"name": "cm"}}),
        (f"/api/v1/namespaces/{ns}/secrets", {"metadata": {"name": "s"}}),
        (
            f"/apis/apps/v1/namespaces/{ns}/deployments",
            {"metadata": {"name": "d"}, "spec": deployment},
        ),
        (f"/apis/coordination.k8s.io/v1/namespaces/{ns}/leases", {"metadata": {"name": "l"}}),
        ("/apis/rbac.authorization.k8s.io/v1/clusterroles", {"metadata": {"name": unique}}),
        (
            "/apis/scheduling.k8s.io/v1/priorityclasses",
            {"metadata": {"name": unique}, "value": 10},
        ),
    ]


def _kind_of(path: str) -> str:
    return path.rpartition("/")[2]


async def test_delete_answers_the_object_for_the_kinds_that_return_it(backend: Backend) -> None:
    """Each kind of ``_returning``: 200 and the object as it was deleted (a PVC or PV the
    protection admission gave a finalizer: as marked for deletion)."""
    for path, body in _returning(backend.namespace, backend.unique("del")):
        created = await ok(backend, "POST", path, body)
        name = created["metadata"]["name"]
        reply = await req(backend, "DELETE", f"{path}/{name}")
        assert reply.status == 200, (path, reply.body)
        assert reply.body["kind"] == created["kind"], (path, reply.body)
        assert reply.body["metadata"]["uid"] == created["metadata"]["uid"]
        assert (reply.body["metadata"].get("finalizers") is None) == (
            reply.body["metadata"].get("deletionTimestamp") is None
        ), (path, reply.body)


async def test_delete_answers_a_status_for_the_other_kinds(
    backend: Backend, widgets: Widgets
) -> None:
    cases = [*_status_answering(backend.namespace, backend.unique("del"))]
    cases.append((widgets.path, widgets.widget()))
    for path, body in cases:
        created = await ok(backend, "POST", path, body)
        name = created["metadata"]["name"]
        reply = await req(backend, "DELETE", f"{path}/{name}")
        assert reply.status == 200, (path, reply.body)
        group = path.split("/")[2] if path.startswith("/apis/") else ""
        details = {"name": name, "kind": _kind_of(path), "uid": created["metadata"]["uid"]}
        if group:
            details["group"] = group
        assert reply.body == {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Success",
            "details": details,
        }, path


async def test_finalizers_answer_the_object_with_200_or_202(backend: Backend) -> None:
    """An object its finalizer keeps: the object marked for deletion, whichever kind; 202
    when the request asked for cascading deletion with ``orphanDependents: false``."""
    ns = backend.namespace
    for path, body in (
        (f"/api/v1/namespaces/{ns}/configmaps", {"metadata": {"name": "cm"}}),
        (f"/api/v1/namespaces/{ns}/serviceaccounts", {"metadata": {"name": "sa"}}),
    ):
        for name, options, code in (
            ("a", None, 200),
            ("b", {"orphanDependents": False}, 202),
            ("c", {"orphanDependents": True}, 200),
        ):
            meta = {"name": f"{body['metadata']['name']}-{name}", "finalizers": ["x.io/f"]}
            created = await ok(backend, "POST", path, {**body, "metadata": meta})
            reply = await req(backend, "DELETE", f"{path}/{meta['name']}", options)
            assert (reply.status, reply.body["kind"]) == (code, created["kind"]), reply.body
            assert reply.body["metadata"]["deletionTimestamp"]


async def test_dry_run_delete_answers_the_object(backend: Backend) -> None:
    path = f"/api/v1/namespaces/{backend.namespace}/serviceaccounts"
    created = await ok(backend, "POST", path, {"metadata": {"name": "sa"}})
    reply = await req(backend, "DELETE", f"{path}/sa", params={"dryRun": "All"})
    assert (reply.status, reply.body["kind"]) == (200, "ServiceAccount")
    assert reply.body["metadata"]["uid"] == created["metadata"]["uid"]
    assert (await req(backend, "GET", f"{path}/sa")).status == 200


RETURNING = {
    "api/v1": {  # a Namespace is answered, but documented as a Status
        "pods",
        "services",
        "serviceaccounts",
        "persistentvolumeclaims",
        "persistentvolumes",
        "resourcequotas",
        "podtemplates",
    },
    "apis/storage.k8s.io/v1": {"storageclasses", "csidrivers", "csinodes", "volumeattachments"},
    "apis/apps/v1": set(),
}


def _delete_schemas(document: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """Each object path's DELETE answers (200 and 202) as the kinds of their schemas."""
    out = {}
    for path, item in document["paths"].items():
        if path.endswith("{name}") and "delete" in item:
            responses = item["delete"]["responses"]
            refs = tuple(
                responses[code]["content"]["application/json"]["schema"]["$ref"].rpartition(".")[2]
                for code in ("200", "202")
            )
            out[path.split("/")[-2]] = refs
    return out


async def test_openapi_delete_answers_follow(backend: Backend, tmp_path: Path) -> None:
    for group_version, returning in RETURNING.items():
        paths = await document(backend, tmp_path, group_version)
        for plural, refs in _delete_schemas(paths).items():
            if plural in returning:
                assert refs[0] == refs[1] != "Status", (plural, refs)
            else:
                assert refs == ("Status", "Status"), (plural, refs)
