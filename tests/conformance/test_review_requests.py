"""The create-only reviews (authentication.k8s.io and authorization.k8s.io) as kube-apiserver
1.32 routes and decodes them: only a POST to the collection has a route (an object's path is
404, another method on the collection 405); the body is decoded as any create's (its kind,
the URL's namespace) and the answer carries the writer's managedFields; a
LocalSubjectAccessReview is namespaced and its body's namespace must be the URL's."""

from __future__ import annotations

from typing import Any

import pytest

from reconcile_kit.testing.backends import Backend

from .kube import req, status_body

AZ = "/apis/authorization.k8s.io/v1"
NOT_FOUND = status_body(404, "NotFound", "the server could not find the requested resource", {})
NOT_ALLOWED = status_body(
    405, "MethodNotAllowed", "the server does not allow this method on the requested resource", {}
)


def local_review(ns: str, **metadata: Any) -> dict[str, Any]:
    return {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "LocalSubjectAccessReview",
        "metadata": metadata,
        "spec": {
            "user": "bob",
            "resourceAttributes": {"verb": "get", "resource": "pods", "namespace": ns},
        },
    }


async def test_local_subject_access_review_takes_the_namespace_of_its_url(backend: Backend) -> None:
    ns = backend.namespace
    path = f"{AZ}/namespaces/{ns}/localsubjectaccessreviews"
    reply = await req(backend, "POST", path, local_review(ns))
    assert reply.status == 201, reply.body
    assert reply.body["metadata"]["namespace"] == ns
    assert reply.body["status"] == {"allowed": False}
    [entry] = reply.body["metadata"]["managedFields"]
    assert (entry["operation"], entry["apiVersion"]) == ("Update", "authorization.k8s.io/v1")
    assert entry["fieldsV1"] == {
        "f:spec": {
            "f:resourceAttributes": {".": {}, "f:namespace": {}, "f:resource": {}, "f:verb": {}},
            "f:user": {},
        }
    }
    reply = await req(backend, "POST", path, local_review(ns, namespace="other"))
    assert reply.body == status_body(
        400,
        "BadRequest",
        "the namespace of the provided object does not match the namespace sent on the request",
        None,
    )
    reply = await req(backend, "POST", f"{AZ}/localsubjectaccessreviews", local_review(ns))
    assert (reply.status, reply.body) == (404, NOT_FOUND)


@pytest.mark.parametrize(
    ("method", "suffix", "expected"),
    [
        ("GET", "", NOT_ALLOWED),
        ("DELETE", "", NOT_ALLOWED),
        ("GET", "/x", NOT_FOUND),
        ("PUT", "/x", NOT_FOUND),
        ("DELETE", "/x", NOT_FOUND),
    ],
)
async def test_only_a_post_to_the_collection_has_a_route(
    backend: Backend, method: str, suffix: str, expected: dict[str, Any]
) -> None:
    for path in (
        f"{AZ}/subjectaccessreviews",
        f"{AZ}/namespaces/{backend.namespace}/localsubjectaccessreviews",
        "/apis/authentication.k8s.io/v1/tokenreviews",
    ):
        reply = await req(backend, method, path + suffix, {} if method == "PUT" else None)
        assert (reply.status, reply.body) == (expected["code"], expected), path


async def test_a_body_of_another_kind_is_not_decoded(backend: Backend) -> None:
    body = {**local_review(backend.namespace), "kind": "Pod"}
    reply = await req(
        backend, "POST", f"{AZ}/namespaces/{backend.namespace}/localsubjectaccessreviews", body
    )
    assert reply.body == status_body(
        400,
        "BadRequest",
        'Pod in version "v1" cannot be handled as a LocalSubjectAccessReview: no kind "Pod" is'
        ' registered for version "authorization.k8s.io/v1" in scheme'
        ' "pkg/runtime/scheme.go:100"',
        None,
    )


async def test_rules_review_answers_with_its_status_only(backend: Backend) -> None:
    body = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectRulesReview",
        "spec": {"namespace": backend.namespace},
    }
    reply = await req(backend, "POST", f"{AZ}/selfsubjectrulesreviews", body)
    assert reply.status == 201, reply.body
    assert (reply.body["metadata"], reply.body["spec"]) == ({"creationTimestamp": None}, {})
